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
from localjudge.records import Record  # noqa: E402

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


def row_requests(record: Record) -> tuple[list[VerdictRequest], list[Any]]:
    """The shipped judge's requests, then one per statement for each null passage; the keys
    are the statements (the shipped requests are statements x passages)."""
    texts = statements(record)
    shipped = groundedness.requests(record, JudgeOptions(rationale=False))
    nulls = null_requests(record, texts)
    return [*shipped, *(r for rs in nulls.values() for r in rs)], texts


def row_signals(record: Record, texts: Sequence[Any], ps: Sequence[float | None]) -> dict[str, Any]:
    """Per statement the shipped P over passages (`pp`) and the P with each null passage
    (`null`), and whether a number or name of the response is missing (`key_missing`)."""
    n_null = len(NULL_PASSAGES) * len(texts)
    shipped, rest = ps[: len(ps) - n_null], ps[len(ps) - n_null :]
    n_pass = len(shipped) // len(texts)
    chunks = [c.content or "" for c in record.retrieved_context or ()]
    missing = missing_key_terms(record.response or "", chunks)[1]
    return {
        "statements": list(texts),
        "pp": [shipped[k * n_pass : (k + 1) * n_pass] for k in range(len(texts))],
        "null": {
            name: rest[j * len(texts) : (j + 1) * len(texts)]
            for j, name in enumerate(NULL_PASSAGES)
        },
        "key_missing": 1.0 if missing else 0.0,
    }


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
        gs.collect(
            args.set,
            args.units,
            None,
            args.threads,
            requests_of=row_requests,
            signals_of=row_signals,
            per_source=args.per_source,
            sources=args.source,
        )
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
