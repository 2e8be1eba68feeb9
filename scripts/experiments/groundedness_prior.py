#!/usr/bin/env python3
"""Does the passage raise the model's P(supported), or does the statement alone? (issue 13,
twenty-third round)

The tenth round found that the model "says yes more to a passage the statement is about,
whatever the question", and BEGIN's near-verbatim replies get P(supported) 0.3-0.5. This
script measures a per-statement control in the spirit of contextual calibration (Zhao et
al., "Calibrate Before Use", 2021): the same prompt as the shipped judge's (request, one
passage, the statement, the question) with the passage's text replaced by a content-free
one (`NULL_PASSAGE`). The lift, logit(best-passage P) - logit(P with the null passage), says
how much the evidence itself moved the model. The null prompt shares the request with the
judge's prompts, so it costs the null passage's and the statement's tokens once per
statement.

Collect (one `backend.judge` call per row; units are appended, a killed run resumes):

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/groundedness_prior.py collect \
        --set ../shared/benchmarks/groundedness.jsonl --set tests/data/plain/groundedness.jsonl \
        --units docs/runs/issue13-r25-groundedness-prior-units.jsonl

Analyse (leave one source out, as plain_sources.py does; labels read only to score and fit):

    .venv/bin/python scripts/experiments/groundedness_prior.py analyse UNITS
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402

from localjudge.engine.base import VerdictRequest  # noqa: E402
from localjudge.judges.base import (  # noqa: E402
    YES_NO,
    JudgeOptions,
    fence,
    make_prompt,
    question,
    request_part,
)
from localjudge.judges.lexical import missing_key_terms  # noqa: E402
from localjudge.judges.response import GROUNDEDNESS_Q, groundedness, statements  # noqa: E402
from localjudge.judges.support import logit  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402

NULL_PASSAGES = {"na": "N/A", "empty": ""}


def null_requests(record: Record, texts: Sequence[str]) -> dict[str, list[VerdictRequest]]:
    head = request_part(record)
    return {
        name: [
            VerdictRequest(
                prompt=make_prompt(
                    [
                        head,
                        fence("passage", content, 'id="1"'),
                        fence("statement", t),
                        question(GROUNDEDNESS_Q),
                    ]
                ),
                labels=YES_NO,
            )
            for t in texts
        ]
        for name, content in NULL_PASSAGES.items()
    }


def collect(
    sets: Sequence[Path],
    units: Path,
    per_source: int | None,
    threads: int,
    sources: Sequence[str] = (),
) -> None:
    done = set()
    if units.exists():
        done = {json.loads(x)["id"] for x in units.read_text().splitlines() if x}
    backend = gs.open_backend(None, threads)
    with units.open("a", encoding="utf-8") as out:
        for path in sets:
            items = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
            taken: dict[str, int] = {}
            for i, item in enumerate(items):
                uid = f"{path.parent.name}/{path.name}:{i}"
                source = gs.source_name(item)
                taken[source] = taken.get(source, 0) + 1
                if sources and not any(source.startswith(s) for s in sources):
                    continue
                if uid in done or (per_source is not None and taken[source] > per_source):
                    continue
                row = {k: v for k, v in item.items() if k not in ("labels", "source")}
                record = validate_row(i + 1, row)
                texts = statements(record)
                shipped = groundedness.requests(record, JudgeOptions(rationale=False))
                nulls = null_requests(record, texts)
                reqs = [*shipped, *(r for rs in nulls.values() for r in rs)]
                before = backend.stats.evaluated_tokens
                t0 = time.perf_counter()
                verdicts = backend.judge(reqs)
                ps = [v.probabilities.get("yes") for v in verdicts]
                n_pass = len(shipped) // len(texts)
                pp = [ps[k * n_pass : (k + 1) * n_pass] for k in range(len(texts))]
                rest = ps[len(shipped) :]
                null = {
                    name: rest[j * len(texts) : (j + 1) * len(texts)]
                    for j, name in enumerate(NULL_PASSAGES)
                }
                chunks = [c.content or "" for c in record.retrieved_context or ()]
                missing = missing_key_terms(record.response or "", chunks)[1]
                unit = {
                    "id": uid,
                    "source": source,
                    "half": "fit" if i % 2 == 0 else "report",
                    "label": 1 if item["labels"]["groundedness"] == "yes" else 0,
                    "statements": texts,
                    "pp": pp,
                    "null": null,
                    "key_missing": 1.0 if missing else 0.0,
                    "evaluated_tokens": backend.stats.evaluated_tokens - before,
                    "seconds": round(time.perf_counter() - t0, 3),
                }
                out.write(json.dumps(unit) + "\n")
                out.flush()
                print(f"{uid} {unit['seconds']:.1f}s", file=sys.stderr)


def derive(u: dict[str, Any], null: str) -> dict[str, Any]:
    best = [logit(max(p)) for p in u["pp"]]
    prior = [logit(p) for p in u["null"][null]]
    lift = [b - q for b, q in zip(best, prior, strict=True)]
    return {
        **u,
        "mean_logit": sum(best) / len(best),
        "min_logit": min(best),
        "log_statements": math.log(len(best)),
        "lift_mean": sum(lift) / len(lift),
        "lift_min": min(lift),
        "prior_mean": sum(prior) / len(prior),
    }


def group(u: dict[str, Any]) -> str:
    s = str(u["source"])
    return s.split()[0] if s.startswith("plain") else s


def dev_group(u: dict[str, Any]) -> str:
    g = group(u)
    return "SummEdits" if g.startswith("SummEdits") else g


def analyse(path: Path, feature_sets: Sequence[str], null: str) -> None:
    for name in ("mean_logit", "min_logit", "log_statements", "key_missing"):
        gs.LINEAR.setdefault(name, 0.0)
    for name in ("lift_mean", "lift_min", "prior_mean"):
        gs.LINEAR[name] = 0.0
    units = [derive(json.loads(x), null) for x in path.read_text().splitlines() if x]
    y = np.array([u["label"] for u in units], dtype=float)
    sources = sorted({group(u) for u in units})
    print(f"{len(units)} units; null passage {null!r}")
    for feats_s in feature_sets:
        feats = feats_s.split("+")
        x = np.array([gs.features(u, feats) for u in units], dtype=float)
        pred, score = np.zeros(len(units), dtype=int), np.zeros(len(units))
        for s in sources:
            test = np.array([group(u) == s for u in units])
            w = gs.fit_logistic(x[~test], y[~test])
            t = gs.best_threshold(y[~test], gs.predict(w, x[~test]))
            score[test] = gs.predict(w, x[test])
            pred[test] = score[test] >= t
        cells, plain = [], []
        for g in ("BEGIN", "FaithBench", "SummEdits"):
            sel = np.array([dev_group(u) == g for u in units])
            if sel.any():
                cells.append(
                    f"{g} {gs.balanced(y[sel], pred[sel]):.3f}/{gs.auc(y[sel], score[sel]):.3f}"
                )
        for s in sources:
            if s.startswith("plain"):
                sel = np.array([group(u) == s for u in units])
                plain.append(gs.balanced(y[sel], pred[sel]))
        p = np.array([group(u).startswith("plain") for u in units])
        tail = ""
        if p.any():
            tail = (
                f" | plain mean {np.mean(plain):.3f} (lowest {min(plain):.2f}, {len(plain)} "
                f"sets), pooled AUC {gs.auc(y[p], score[p]):.3f}, false no "
                f"{int(((pred[p] == 0) & (y[p] == 1)).sum())}/{int((y[p] == 1).sum())}, "
                f"false yes {int(((pred[p] == 1) & (y[p] == 0)).sum())}/{int((y[p] == 0).sum())}"
            )
        w_all = gs.fit_logistic(x, y)
        print(f"{feats_s}: " + " | ".join(cells) + tail)
        print("   fitted on all: " + ", ".join(f"{v:+.3f}" for v in w_all))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--set", type=Path, action="append", required=True)
    c.add_argument("--units", type=Path, required=True)
    c.add_argument("--per-source", type=int)
    c.add_argument("--threads", type=int, default=2)
    c.add_argument("--source", action="append", default=[], help="only sources starting so")
    a = sub.add_parser("analyse")
    a.add_argument("units", type=Path)
    a.add_argument("--null", choices=tuple(NULL_PASSAGES), default="na")
    a.add_argument(
        "--features",
        action="append",
        default=None,
        help="a+b+...: signals of one combination (default: the shipped form and variants)",
    )
    args = parser.parse_args(argv)
    if args.cmd == "collect":
        collect(args.set, args.units, args.per_source, args.threads, args.source)
    else:
        analyse(
            args.units,
            args.features
            or [
                "mean_logit+min_logit+log_statements+key_missing",
                "mean_logit+min_logit+log_statements+key_missing+prior_mean",
                "lift_mean+lift_min+log_statements+key_missing",
                "mean_logit+min_logit+lift_mean+lift_min+log_statements+key_missing",
            ],
            args.null,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
