#!/usr/bin/env python3
"""Leave one source out with every plain set a source of its own (issue 13, tenth round).

Two questions, on units already collected (no model is run here):

1. Would a combination fitted on every plain set, not only the first, transfer better?
   For each source held out (every SummEdits domain, EVOUNA half, BEGIN, FaithBench and
   every plain set), the combination and its threshold are fitted on the other sources,
   either only the dev sources and the first plain set (as the shipped combination was) or
   every other source. The shipped combination and threshold are shown beside.
2. groundedness only (`--contra`): does a per-statement question that asks for a
   contradiction, asked after the same prefix (request, one passage, the statement), add to
   the support question? Each question of the units file (collected by
   `groundedness_refit.py --question NAME=TEXT`, the maximum over passages per statement)
   enters as the maximum or the mean over statements of its logit, or as support minus it
   per statement (mean and minimum over statements).

    .venv/bin/python scripts/experiments/plain_sources.py groundedness GROUNDEDNESS_UNITS \
        [--dev docs/runs/issue13-r10-groundedness-questions-units.jsonl] [--contra CONTRA_UNITS]
    .venv/bin/python scripts/experiments/plain_sources.py row CORRECTNESS_UNITS \
        --features shipped+answer_recall --shipped correctness

GROUNDEDNESS_UNITS are `groundedness_refit.py` units (question A); with `--dev`, that
file's dev rows (question A) are added. Row units are `response_signals.py` units. Each
cell is balanced accuracy / ROC AUC on the held-out source or group.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
from groundedness_together import key_missing  # noqa: E402

from localjudge.judges.response import CORRECTNESS_MODEL, grounded_p  # noqa: E402
from localjudge.judges.support import Logistic, logit  # noqa: E402
from localjudge.models.catalogue import default_model_id, load_catalogue  # noqa: E402

SUPPORT = ("mean_logit", "min_logit", "log_statements")
# The shipped form since issue 13's twelfth round: SUPPORT and whether a number or name of
# the response is in no passage (0 or 1).
WITH_KEY = (*SUPPORT, "key_missing")
SHIPPED_ROW_MODELS = {"correctness": CORRECTNESS_MODEL}
# groundedness's extra features from a contradiction question named Q, taken as they are.
CONTRA = ("max", "mean", "dmin", "dmean")


def group(u: dict[str, Any]) -> str:
    return str(u["source"].split()[0])


def groundedness_units(path: Path, dev: Path | None, contra: Path | None) -> list[dict[str, Any]]:
    raw = [json.loads(x) for x in path.read_text().splitlines() if x]
    if dev is not None:
        raw += [
            u
            for u in (json.loads(x) for x in dev.read_text().splitlines() if x)
            if not u["source"].startswith("plain")
        ]
    by_id = {u["id"]: u for u in raw}
    if contra is not None:
        crows = [json.loads(x) for x in contra.read_text().splitlines() if x]
        by_id = {c["id"]: {**by_id[c["id"]], "contra": c} for c in crows if c["id"] in by_id}
    units = []
    for u in by_id.values():
        za = [logit(p) for p in u["best"]["A"]]
        key = key_missing(u["id"])
        out = {
            **{k: u[k] for k in ("id", "source", "half", "label")},
            "mean_logit": sum(za) / len(za),
            "min_logit": min(za),
            "log_statements": math.log(len(za)),
            "key_missing": 1.0 if key else 0.0,
            "shipped_p": grounded_p(u["best"]["A"], key),
        }
        if "contra" in u:
            assert u["contra"]["statements"] == u["statements"], u["id"]
            for q, ps in u["contra"]["best"].items():  # each contradiction question
                zx = [logit(p) for p in ps]
                d = [a - x for a, x in zip(za, zx, strict=True)]
                out |= {f"max{q}": max(zx), f"mean{q}": sum(zx) / len(zx), f"dmin{q}": min(d)}
                out[f"dmean{q}"] = sum(d) / len(d)
        units.append(out)
    return units


def held_out(
    units: Sequence[dict[str, Any]], feats: Sequence[str], may_fit: Callable[[str], bool]
) -> tuple[Any, Any]:
    """Per source held out: fit on the other sources whose group may be fitted on."""
    x = np.array([gs.features(u, feats) for u in units], dtype=float)
    y = np.array([u["label"] for u in units], dtype=float)
    pred, score = np.zeros(len(units), dtype=int), np.zeros(len(units))
    for s in sorted({u["source"] for u in units}):
        test = np.array([u["source"] == s for u in units])
        train = ~test & np.array([may_fit(group(u)) for u in units])
        w = gs.fit_logistic(x[train], y[train])
        t = gs.best_threshold(y[train], gs.predict(w, x[train]))
        score[test] = gs.predict(w, x[test])
        pred[test] = score[test] >= t
    return pred, score


def show(name: str, units: Sequence[dict[str, Any]], pred: Any, score: Any) -> None:
    y = np.array([u["label"] for u in units])
    groups = sorted({group(u) for u in units}, key=lambda g: (g.startswith("plain"), len(g), g))
    cells, plain = [], []
    for g in groups:
        sel = np.array([group(u) == g for u in units])
        b = gs.balanced(y[sel], pred[sel])
        cells.append(f"{g} {b:.2f}/{gs.auc(y[sel], score[sel]):.2f}")
        if g.startswith("plain"):
            plain.append(b)
    print(f"{name}:\n  " + " | ".join(cells))
    p = np.array([group(u).startswith("plain") for u in units])
    if p.any():
        false_no = int(((pred[p] == 0) & (y[p] == 1)).sum())
        false_yes = int(((pred[p] == 1) & (y[p] == 0)).sum())
        print(
            f"  plain sets: mean {np.mean(plain):.3f}, lowest {min(plain):.2f}, pooled AUC "
            f"{gs.auc(y[p], score[p]):.3f}, false no {false_no}/{int((y[p] == 1).sum())}, "
            f"false yes {false_yes}/{int((y[p] == 0).sum())}"
        )


def compare(units: Sequence[dict[str, Any]], feature_sets: dict[str, Sequence[str]]) -> None:
    def first_plain_only(g: str) -> bool:
        return not g.startswith("plain-holdout")

    has_plain = any(group(u).startswith("plain") for u in units)
    fitted_on = "dev + first plain set" if has_plain else "the other dev sources"
    for label, feats in feature_sets.items():
        show(
            f"{label}, fitted on {fitted_on}",
            units,
            *held_out(units, feats, first_plain_only),
        )
        if any(group(u).startswith("plain-holdout") for u in units):
            show(f"{label}, fitted on every other source", units, *held_out(units, feats, bool))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("groundedness", "row"))
    parser.add_argument("units", type=Path)
    parser.add_argument("--dev", type=Path, help="groundedness: add this file's dev rows")
    parser.add_argument("--contra", type=Path, help="groundedness: contradiction units")
    parser.add_argument("--features", help="row: the combination's signals, a+b")
    parser.add_argument("--shipped", choices=sorted(SHIPPED_ROW_MODELS), help="row: judge")
    args = parser.parse_args(argv)
    thresholds = load_catalogue()[default_model_id()].thresholds
    if args.kind == "groundedness":
        units = groundedness_units(args.units, args.dev, args.contra)
        questions: list[str] = []
        if args.contra is not None:  # only the rows that have every question
            first = json.loads(args.contra.read_text().splitlines()[0])
            questions = list(first["best"])
            units = [u for u in units if f"max{questions[0]}" in u]
            for q in questions:
                for f in CONTRA:
                    gs.LINEAR[f"{f}{q}"] = 0.0
        score = np.array([u["shipped_p"] for u in units])
        show("shipped", units, (score >= thresholds["groundedness"]).astype(int), score)
        sets: dict[str, Sequence[str]] = {"support": SUPPORT, "support + key_missing": WITH_KEY}
        for q in questions:
            sets |= {f"support + {f}{q}": (*SUPPORT, f"{f}{q}") for f in CONTRA[:2]}
            sets[f"support minus {q}"] = (f"dmean{q}", f"dmin{q}", "log_statements")
        compare(units, sets)
        y = np.array([u["label"] for u in units])
        for q in questions:  # alone: a lower P(contradiction) should mean grounded
            cells = []
            for g in sorted({group(u) for u in units}):
                sel = np.array([group(u) == g for u in units])
                aucs = [
                    gs.auc(y[sel], -np.array([u[f"{f}{q}"] for u in units])[sel])
                    for f in CONTRA[:2]
                ]
                cells.append(f"{g} max {aucs[0]:.2f}, mean {aucs[1]:.2f}")
            print(f"{q} alone, ROC AUC for grounded: " + " | ".join(cells))
        return 0
    if not args.features or not args.shipped:
        parser.error("row needs --features and --shipped")
    units = [json.loads(x) for x in args.units.read_text().splitlines() if x]
    model: Logistic = SHIPPED_ROW_MODELS[args.shipped]
    feats = args.features.split("+")
    # The fitted weights take the features in order; a rule's weight after them
    # (correctness's between_answers) takes its value from the units when they carry it.
    names = list(model.weights)[: len(feats)]
    rules = list(model.weights)[len(feats) :]
    score = np.array(
        [
            model(
                {
                    **{
                        n: u[f] if f in gs.LINEAR else logit(u[f])
                        for n, f in zip(names, feats, strict=True)
                    },
                    **{n: float(u.get(n, 0.0)) for n in rules},
                }
            )
            for u in units
        ]
    )
    show("shipped", units, (score >= thresholds[args.shipped]).astype(int), score)
    compare(units, {args.features: feats})
    return 0


if __name__ == "__main__":
    sys.exit(main())
