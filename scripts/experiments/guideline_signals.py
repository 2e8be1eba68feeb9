#!/usr/bin/env python3
"""Which prompt makes guideline_adherence hold on plain cases?

On tests/data/plain-guidelines/ the shipped judge (every guideline in one list after the
request and response, one question) ranked the rows worse than chance. This script
collects, per labelled row, the P(yes) of candidate layouts so that
groundedness_support.py's analysis can compare them:

    whole          the shipped prompt: request, response, the passages when the row has
                   them, every guideline, "Does the response follow every guideline listed
                   above?"
    whole_nopass   the same without the passages (the judge before this change)
    follow         each guideline on its own after the request, response and passages,
                   "Does the response follow the guideline above?"; the row's signal is the
                   least-followed guideline's P (follow_min) and the mean (follow_mean)
    breaks         each guideline on its own, "Does the response break the guideline
                   above?"; signal: the most-broken guideline's P(no) (breaks_min)
    follow_nopass  follow without the passages
    asks           each guideline turned into a question about the response (InFoBench's
                   decomposed yes/no questions): "Do not give dosages" -> "Does the
                   response give dosages?" (its "no" is the guideline followed), "Answer
                   politely" -> "Does the response answer politely?"; a guideline that is
                   not a plain imperative gets FOLLOW_Q; signal: the least-followed
                   guideline's P (asks_min)

    .venv/bin/python scripts/experiments/guideline_signals.py \
        --set tests/data/plain-guidelines/guideline_adherence.jsonl --units U
    .venv/bin/python scripts/experiments/groundedness_support.py --analyse U \
        --features whole --features follow_min ...
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402

from localjudge.engine.base import Part, VerdictRequest  # noqa: E402
from localjudge.judges.base import (  # noqa: E402
    YES_NO,
    fence,
    make_prompt,
    passages,
    question,
    request_part,
    response_part,
)
from localjudge.judges.response import GUIDELINES_Q  # noqa: E402
from localjudge.records import Record  # noqa: E402

FOLLOW_Q = "Does the response follow the guideline above? Answer yes or no."
BREAKS_Q = "Does the response break the guideline above? Answer yes or no."


_PROHIBITION = re.compile(r"^(?:please\s+)?(?:do not|don't|never|avoid)\s+(?P<rest>.+)$", re.I)
_NOT_IMPERATIVE = re.compile(r"^(?:if|when|unless|the|a|an|all|every|each|it|you|your)\b", re.I)


def as_question(guideline: str) -> tuple[str, bool]:
    """The guideline as a yes/no question about the response, and whether the question
    asks for the breach (a prohibition: the model's "no" is the guideline followed)."""
    text = " ".join(guideline.split()).rstrip(".!")
    m = _PROHIBITION.match(text)
    if m is not None:
        rest = m["rest"]
        if rest.lower().startswith("using "):
            rest = "use " + rest[6:]
        return f"Does the response {rest}? Answer yes or no.", True
    if _NOT_IMPERATIVE.match(text) or not text:
        return FOLLOW_Q, False
    return f"Does the response {text[0].lower()}{text[1:]}? Answer yes or no.", False


def _listed(record: Record) -> Part:
    return fence("guidelines", "\n".join(f"- {g}" for g in record.guidelines or ()))


def row_requests(record: Record) -> tuple[list[VerdictRequest], list[str]]:
    head = [request_part(record), response_part(record)]
    shown = [*head, *passages(record)]
    prompts: list[tuple[str, list[Part]]] = [
        ("whole", [*shown, _listed(record), question(GUIDELINES_Q)]),
        ("whole_nopass", [*head, _listed(record), question(GUIDELINES_Q)]),
    ]
    for g in record.guidelines or ():
        one = fence("guideline", g)
        prompts += [
            ("follow", [*shown, one, question(FOLLOW_Q)]),
            ("breaks", [*shown, one, question(BREAKS_Q)]),
            ("follow_nopass", [*head, one, question(FOLLOW_Q)]),
        ]
        text, negated = as_question(g)
        if text == FOLLOW_Q:
            prompts.append(("asks_pos", [*shown, one, question(text)]))
        else:
            prompts.append(("asks_neg" if negated else "asks_pos", [*shown, question(text)]))
    return [VerdictRequest(make_prompt(p), YES_NO) for _, p in prompts], [k for k, _ in prompts]


def signals(record: Record, keys: Sequence[str], ps: Sequence[float | None]) -> dict[str, Any]:
    by: dict[str, list[float]] = {}
    asks: list[float] = []
    for key, p in zip(keys, ps, strict=True):
        if p is not None:
            by.setdefault(key, []).append(p)
            if key.startswith("asks_"):
                asks.append(1.0 - p if key == "asks_neg" else p)
    return {
        "whole": by["whole"][0],
        "whole_nopass": by["whole_nopass"][0],
        "follow_min": min(by["follow"]),
        "follow_mean": sum(by["follow"]) / len(by["follow"]),
        "breaks_min": 1.0 - max(by["breaks"]),
        "follow_nopass_min": min(by["follow_nopass"]),
        "follow_each": by["follow"],
        "breaks_each": by["breaks"],
        "has_passages": 1.0 if record.retrieved_context else 0.0,
        "asks_min": min(asks),
        "asks_each": asks,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", default=[], required=True)
    parser.add_argument("--units", type=Path, required=True)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    gs.collect(
        args.set, args.units, args.model, args.threads, "guideline_adherence", row_requests, signals
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
