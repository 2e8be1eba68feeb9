#!/usr/bin/env python3
"""Which signals tell sufficient from insufficient passages, across sources?

Issue 13: context_sufficiency blends the model's P(yes) with answer recall, the share of
the expected answer's words found in the passages word for word, so "100 °C" against
"100 degrees Celsius" is rated insufficient. This script collects per labelled row:

    model_p      P(yes) of the shipped question: every passage, the expected answer,
                 "Do the passages contain the expected answer?"
    pass_{q}     P(yes): every passage, then the expected answer, question q
    pp_{q}       max over passages of P(yes): one passage, then the expected answer
    recall       answer recall (the shipped lexical part; None for yes/no answers)
    key_missing  share of the expected answer's numbers and names not in the passages

Every prompt starts with the request, as the shipped judges' do. Units are appended as they
are computed; `--analyse` fits the combinations leaving one source out (see
groundedness_support.py, whose analysis this reuses).

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/sufficiency_support.py \
        --set ../shared/benchmarks/context_sufficiency.jsonl --units units.jsonl
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402

from localjudge.engine.base import VerdictRequest  # noqa: E402
from localjudge.judges.base import (  # noqa: E402
    YES_NO,
    expected_part,
    make_prompt,
    passage_part,
    question,
    request_part,
)
from localjudge.judges.lexical import answer_recall, missing_key_terms  # noqa: E402
from localjudge.judges.retrieval import SUFFICIENCY_Q  # noqa: E402
from localjudge.records import Record  # noqa: E402

QUESTIONS = {
    "q1": (
        "Do the passages above give the expected answer to the request, in these or other "
        "words? Answer yes or no."
    ),
}


def row_requests(record: Record) -> tuple[list[VerdictRequest], list[tuple[str, int]]]:
    chunks = list(record.retrieved_context or ())
    parts = [passage_part(i, c) for i, c in enumerate(chunks)]
    head, exp = request_part(record), expected_part(record)
    reqs = [VerdictRequest(make_prompt([head, *parts, exp, question(SUFFICIENCY_Q)]), YES_NO)]
    keys = [("model_p", -1)]
    for q, text in QUESTIONS.items():
        reqs.append(VerdictRequest(make_prompt([head, *parts, exp, question(text)]), YES_NO))
        keys.append((f"pass_{q}", -1))
        if len(parts) > 1:
            for pi, part in enumerate(parts):
                reqs.append(VerdictRequest(make_prompt([head, part, exp, question(text)]), YES_NO))
                keys.append((f"pp_{q}", pi))
    return reqs, keys


def signals(
    record: Record, keys: Sequence[tuple[str, int]], ps: Sequence[float | None]
) -> dict[str, Any]:
    got = dict.fromkeys((k for k, _ in keys), None)
    out: dict[str, Any] = {}
    for (name, pi), p in zip(keys, ps, strict=True):
        if name.startswith("pp_"):
            prev = out.get(name)
            if p is not None and (prev is None or p > prev[0]):
                out[name] = (p, pi)
        else:
            got[name] = p
    for k, v in got.items():
        if not k.startswith("pp_"):
            out[k] = v
    for q in QUESTIONS:
        best = out.get(f"pp_{q}")
        out[f"pp_{q}"] = best[0] if best else out[f"pass_{q}"]
        out[f"pp_{q}_passage"] = best[1] if best else 0
    texts = [c.content or "" for c in record.retrieved_context or ()]
    expected = record.expected_text() or ""
    out["recall"] = answer_recall(expected, texts)[0]
    out["key_missing"] = missing_key_terms(expected, texts)[0]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", default=[])
    parser.add_argument("--units", type=Path, required=True)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--per-source", type=int, help="only the first N rows of each source")
    args = parser.parse_args(argv)
    gs.collect(
        args.set,
        args.units,
        args.model,
        args.threads,
        "context_sufficiency",
        row_requests,
        signals,
        args.per_source,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
