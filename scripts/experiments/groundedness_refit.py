#!/usr/bin/env python3
"""groundedness on twice the rows: a second support question, and the combination refitted.

Collect, per labelled row, each statement's best-passage P(yes) (request, one passage, the
statement, the question; as judges/support.py asks) for two questions:

    A  "Is the statement supported by the passages above?"       (shipped)
    C  "Does the passage above say what the statement says?"

Rows: the dev rows named by one or more id files (lines with "id", "source", "half", as in
groundedness_support.py's units files; the earlier units file's rows and the further rows
of `docs/runs/issue13-r6-groundedness-more-ids.jsonl`), and every row of the plain sets
given with --plain. Both questions share the request + passage + statement prefix, so C
costs its own question's tokens.

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/groundedness_refit.py \
        --ids docs/runs/issue13-groundedness-units.jsonl \
        --ids docs/runs/issue13-r6-groundedness-more-ids.jsonl \
        --plain tests/data/plain/groundedness.jsonl \
        --plain tests/data/plain-holdout/groundedness.jsonl \
        --plain tests/data/plain-holdout-2/groundedness.jsonl \
        --plain tests/data/plain-holdout-3/groundedness.jsonl --out units.jsonl
    .venv/bin/python scripts/experiments/groundedness_refit.py --analyse units.jsonl

`--analyse` reports, per question, leave-one-source-out balanced accuracy by source group
(mean+min+n, as shipped), then fits the shipped combination on every row of the sources it
may be fitted on (not the plain-holdout sets, whose READMEs keep them for reporting) and
reports it, and the shipped weights, on every group. Labels are read only to score.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts" / "experiments"))

from groundedness_support import (  # noqa: E402
    analyse,
    auc,
    balanced,
    balanced_ci,
    best_threshold,
    derive,
    features,
    fit_logistic,
    open_backend,
    predict,
    source_name,
)
from groundedness_together import key_missing, set_path  # noqa: E402

from localjudge.judges.response import statements  # noqa: E402
from localjudge.judges.support import claim_requests  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402

QUESTIONS = {
    "A": "Is the statement supported by the passages above? Answer yes or no.",
    "C": "Does the passage above say what the statement says? Answer yes or no.",
}
FEATURES = ("mean_logit", "min_logit", "log_statements")
REPORT_ONLY = "plain-holdout"  # sources starting so are never fitted on
# The combination and threshold shipped before this refit (issue 13, first round).
BEFORE = {"intercept": -0.9664, "mean": 0.9993, "min": 1.4896, "log_statements": -0.3049}
BEFORE_THRESHOLD = 0.6283


def _before(logistic: Any, logit: Any, u: dict[str, Any]) -> float:
    z = [logit(p) for _, p in u["pp_stmt_q1_evidence"]]
    weights = {k: v for k, v in BEFORE.items() if k != "intercept"}
    x = {"mean": sum(z) / len(z), "min": min(z), "log_statements": math.log(len(z))}
    return float(logistic(BEFORE["intercept"], weights)(x))


def rows(ids: Sequence[Path], plain: Sequence[Path]) -> Iterator[tuple[str, int, Any, str]]:
    for path in ids:
        for line in path.read_text().splitlines():
            u = json.loads(line)
            if u["source"].startswith("plain"):
                continue  # the plain sets come whole from --plain
            i = int(u["id"].rsplit(":", 1)[1])
            yield u["id"], i, json.loads(set_path(u["id"]).read_text().splitlines()[i]), u["half"]
    for p in plain:
        for i, line in enumerate(p.read_text().splitlines()):
            half = "fit" if i % 2 == 0 else "report"
            yield f"{p.parent.name}/{p.name}:{i}", i, json.loads(line), half


def collect(
    ids: Sequence[Path], plain: Sequence[Path], out_path: Path, questions: dict[str, str]
) -> None:
    done = set()
    if out_path.exists():
        done = {json.loads(x)["id"] for x in out_path.read_text().splitlines() if x}
    backend = open_backend(None, 2)
    with out_path.open("a", encoding="utf-8") as out:
        for uid, i, item, half in rows(ids, plain):
            if uid in done:
                continue
            row = {k: v for k, v in item.items() if k not in ("labels", "source")}
            record = validate_row(i + 1, row)
            assert isinstance(record, Record), record
            chunks = len(record.retrieved_context or ())
            stmts = statements(record)
            # the judge's own requests (statements outer, passages inner), once per question
            reqs = [
                r
                for text in questions.values()
                for r in claim_requests(record, "statement", stmts, text)
            ]
            keys = [
                (name, si) for name in questions for si in range(len(stmts)) for _ in range(chunks)
            ]
            t0 = time.perf_counter()
            verdicts = backend.judge(reqs)
            best = {name: [0.0] * len(stmts) for name in questions}
            for (name, si), v in zip(keys, verdicts, strict=True):
                best[name][si] = max(best[name][si], v.probabilities.get("yes", 0.0))
            unit = {
                "id": uid,
                "source": source_name(item),
                "half": half,
                "label": 1 if item["labels"]["groundedness"] == "yes" else 0,
                "passages": chunks,
                "statements": stmts,
                "best": best,
                "seconds": round(time.perf_counter() - t0, 2),
            }
            out.write(json.dumps(unit) + "\n")
            out.flush()
            print(uid, unit["seconds"], file=sys.stderr)


def as_units(units: Sequence[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """groundedness_support.py's unit shape, the statements' evidence from question `name`."""
    return [
        derive(
            {
                **{k: u[k] for k in ("id", "source", "half", "label")},
                "pp_stmt_q1_evidence": [[0, p] for p in u["best"][name]],
            }
        )
        for u in units
    ]


def report(units_path: Path) -> None:
    import tempfile

    import numpy as np

    from localjudge.judges.support import Logistic, logit

    units = [json.loads(x) for x in units_path.read_text().splitlines() if x]
    groups = sorted({u["source"].split()[0] for u in units})
    print(
        f"{len(units)} rows: "
        + ", ".join(f"{g} {sum(u['source'].split()[0] == g for u in units)}" for g in groups)
    )
    names = list(units[0]["best"])
    print("\nleave one source out (mean+min+n; not the report-only sets), by group:")
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "units.jsonl"
            fitted = [u for u in as_units(units, name) if not u["source"].startswith(REPORT_ONLY)]
            path.write_text("".join(json.dumps(u) + "\n" for u in fitted))
            r = analyse(path, {"m": FEATURES})["m"]
        cells = [
            f"{g} {x['loso']:.2f} {x['loso_ci95']} {x['loso_auc']:.2f}"
            for g, x in r["groups"].items()
        ]
        mean = np.mean([x["loso"] for x in r["groups"].values()])
        print(f"  {name}: " + " | ".join(cells) + f" | mean over groups {mean:.3f}")
    a = as_units(units, "A")
    fit = [u for u in a if not u["source"].startswith(REPORT_ONLY)]
    x = np.array([features(u, FEATURES) for u in fit])
    y = np.array([u["label"] for u in fit], dtype=float)
    w = fit_logistic(x, y)
    t = best_threshold(y, predict(w, x))
    print(
        f"\nrefit on {len(fit)} rows (question A): intercept {w[0]:.4f}, mean {w[1]:.4f}, "
        f"min {w[2]:.4f}, log_statements {w[3]:.4f}; threshold {t:.4f}"
    )
    print("balanced accuracy [95%] and AUC per group, shipped model -> refit:")
    for g in groups:
        sel = [u for u in a if u["source"].split()[0] == g]
        ys = np.array([u["label"] for u in sel])
        old = np.array([_before(Logistic, logit, u) for u in sel])
        new = predict(w, np.array([features(u, FEATURES) for u in sel]))
        po, pn = (old >= BEFORE_THRESHOLD).astype(int), (new >= t).astype(int)
        print(
            f"  {g} ({len(sel)}): {balanced(ys, po):.3f} {balanced_ci(ys, po)} AUC "
            f"{auc(ys, old):.2f} -> {balanced(ys, pn):.3f} {balanced_ci(ys, pn)} AUC "
            f"{auc(ys, new):.2f}"
        )
    per_question(units, names)


def per_question(units: Sequence[dict[str, Any]], names: Sequence[str]) -> None:
    """Each question's combination fitted on every row it may be fitted on, reported per
    group, with the report-only sets also pooled; the shipped model and threshold (on
    question A) first."""
    import numpy as np

    from localjudge.judges.response import grounded_p
    from localjudge.models.catalogue import default_model_id, load_catalogue

    def group(u: dict[str, Any]) -> str:
        return str(u["source"].split()[0])

    groups = sorted({group(u) for u in units})
    pooled = REPORT_ONLY + " (pooled)"
    print(f"\nper group, balanced accuracy / AUC; '{pooled}' is every report-only row:")
    shipped_t = load_catalogue()[default_model_id()].thresholds["groundedness"]
    rows: list[tuple[str, Any, Any]] = []
    for name in ["shipped", *names]:
        us = as_units(units, "A" if name == "shipped" else name)
        if name == "shipped":
            score = np.array(
                [
                    grounded_p([p for _, p in u["pp_stmt_q1_evidence"]], key_missing(u["id"]))
                    for u in us
                ]
            )
            t = shipped_t
        else:
            x = np.array([features(u, FEATURES) for u in us])
            fit = np.array([not u["source"].startswith(REPORT_ONLY) for u in us])
            y = np.array([u["label"] for u in us], dtype=float)
            w = fit_logistic(x[fit], y[fit])
            t = best_threshold(y[fit], predict(w, x[fit]))
            score = predict(w, x)
        rows.append((name, score, t))
    y = np.array([u["label"] for u in units])
    for g in [*groups, pooled]:
        sel = np.array(
            [u["source"].startswith(REPORT_ONLY) if g == pooled else group(u) == g for u in units]
        )
        cells = [
            f"{name} {balanced(y[sel], (s[sel] >= t).astype(int)):.2f}/{auc(y[sel], s[sel]):.2f}"
            for name, s, t in rows
        ]
        print(f"  {g} ({int(sel.sum())}): " + " | ".join(cells))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", type=Path, action="append", default=[])
    parser.add_argument("--plain", type=Path, action="append", default=[])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--analyse", type=Path)
    parser.add_argument(
        "--question",
        action="append",
        default=[],
        metavar="NAME=TEXT",
        help="a question to ask (repeatable; default: A and C above; A should be one of them)",
    )
    args = parser.parse_args(argv)
    if args.analyse:
        report(args.analyse)
        return 0
    if not args.out:
        parser.error("--out is needed to collect")
    questions = dict(q.split("=", 1) for q in args.question) or QUESTIONS
    collect(args.ids, args.plain, args.out, questions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
