#!/usr/bin/env python3
"""correctness: should the expected answer's words that the request already states be left
out of answer recall? (issue 13, eleventh round.) "Name the three types of muscle tissue."
expects "Skeletal, smooth and cardiac muscle."; "Smooth, cardiac and skeletal." misses
only "muscle", which the request says. Scored offline on units collected by
response_signals.py (the shipped question's P(yes), "shipped"), no model:

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/response_signals.py \
        --judge correctness --set ../shared/benchmarks/correctness.jsonl \
        --set tests/data/plain/correctness.jsonl ... --only shipped --units U
    .venv/bin/python scripts/experiments/request_words.py U

The variant leaves out of each accepted answer's content words those found in the
request, unless that leaves none (a choice question, "Is Paris or Lyon the capital?",
keeps every word). Measured and not adopted in the thirteenth round; adopted in the
sixteenth (answer_recall's `given`), since when "shipped" is the variant and "kept" is
recall with the request's words kept, as before. Prints balanced accuracy per source at
the default threshold with the shipped combination (CORRECTNESS_MODEL, not refitted) and
the rows whose rating changes.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from localjudge.judges import lexical as lx  # noqa: E402
from localjudge.judges.response import (  # noqa: E402
    CORRECTNESS_MODEL,
    correctness_signals,
    expected_recall,
)
from localjudge.judges.support import logit  # noqa: E402
from localjudge.models.catalogue import default_model_id, load_catalogue  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402


def kept(record: Record) -> float:
    """expected_recall's answer_recall with the request's words kept (as before the
    sixteenth round)."""
    expected = record.expected_text() or ""
    answer, (reply, _) = lx.answer_word(expected), lx.reply_word(record.response or "")
    if answer is not None and reply is not None:
        return 1.0 if reply == answer else 0.0
    recall, _ = lx.best_answer_recall(expected, [record.response or ""], hedged=True)
    return 1.0 if recall is None else recall


def load(unit_id: str) -> Record:
    path, row = unit_id.rsplit(":", 1)
    base = REPO.parent / "shared" if path.startswith("benchmarks/") else REPO / "tests" / "data"
    obj = json.loads((base / path).read_text().splitlines()[int(row)])
    return validate_row(
        int(row) + 1, {k: v for k, v in obj.items() if k not in ("labels", "source")}
    )  # type: ignore[return-value]


def main(paths: list[str]) -> int:
    t = load_catalogue()[default_model_id()].thresholds["correctness"]
    counts: dict[str, dict[str, list[int]]] = defaultdict(
        lambda: {"kept": [0, 0, 0, 0], "shipped": [0, 0, 0, 0]}
    )
    for path in paths:
        for line in Path(path).read_text().splitlines():
            u = json.loads(line)
            record = load(u["id"])
            recalls = {"kept": kept(record), "shipped": expected_recall(record)["answer_recall"]}
            between = correctness_signals(record)["between_answers"]
            ps = {
                k: CORRECTNESS_MODEL(
                    {"same": logit(u["shipped"]), "answer_recall": r, "between_answers": between}
                )
                for k, r in recalls.items()
            }
            for k, p in ps.items():
                c = counts[u["source"]][k]
                if u["label"] == 1:
                    c[0] += p >= t
                    c[1] += 1
                else:
                    c[2] += p < t
                    c[3] += 1
            if (ps["kept"] >= t) != (ps["shipped"] >= t):
                print(
                    f"turns: {u['source']} label {u['label']} recall {recalls['kept']:.2f} -> "
                    f"{recalls['shipped']:.2f}, P {ps['kept']:.2f} -> {ps['shipped']:.2f}: "
                    f"{record.request[:70]!r}"
                )

    def ba(c: list[int]) -> float:
        return (c[0] / max(c[1], 1) + c[2] / max(c[3], 1)) / 2

    plain: dict[str, list[float]] = {"kept": [], "shipped": []}
    for source, by in sorted(counts.items()):
        print(f"{source:20s} kept {ba(by['kept']):.3f}  shipped {ba(by['shipped']):.3f}")
        if not source.startswith("EVOUNA"):
            for k in plain:
                plain[k].append(ba(by[k]))
    for k, v in plain.items():
        print(f"plain sets, mean of {len(v)}: {k} {sum(v) / len(v):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
