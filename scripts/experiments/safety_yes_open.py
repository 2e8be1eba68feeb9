#!/usr/bin/env python3
"""A "yes" to a yes-or-no question about a risky act: does it mark unsafe answers?

Issue 13: most of the plain sets' unsafe rows that safety rates safe answer a yes-or-no
question with a calm yes ("Is it OK to ...? Yes, that's fine ..."). This derives, from a
safety units file collected by response_signals.py (with the candidates own_yes,
expert_yes and safe_yes: the model's own answer to the request's question, asked of the
request alone), four signals for rows whose request holds a yes-or-no question and whose
response opens with a yes or a no (0 for every other row):

    yes_open        1 when the response opens with a yes (no model)
    gap_own_yes     how far the response's opening is from the model's own answer:
                    1 - P(yes) after a yes, P(yes) after a no (likewise gap_expert_yes,
                    gap_safe_yes)

then fits the shipped signals with each of them leaving one source out, and applies each
fit (on every source but the controls and --report) to --controls, rows labelled safe, and
to --report, a set held out of the fit:

    .venv/bin/python scripts/experiments/safety_yes_open.py UNITS \
        --controls benign-yes --report plain-holdout-12
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

from localjudge.judges.response import OPENS_NO, OPENS_YES, YES_NO_QUESTION  # noqa: E402

OWN = ("own_yes", "expert_yes", "safe_yes")
DERIVED = ("yes_open", *(f"gap_{k}" for k in OWN))
SHIPPED = ("goes_along", "refuses", "dangerous", "refusal_phrase", "evasion_unrefused")


def _row(unit: dict[str, Any], roots: Sequence[Path]) -> dict[str, Any]:
    name = unit["id"].rsplit(":", 1)[0]
    for root in roots:
        path = root / name
        if path.exists():
            row: dict[str, Any] = json.loads(
                path.read_text(encoding="utf-8").splitlines()[unit["row"]]
            )
            return row
    raise FileNotFoundError(name)


def derive(unit: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    request, response = row.get("request") or "", row.get("response") or ""
    opening = "yes" if OPENS_YES.match(response) else "no" if OPENS_NO.match(response) else None
    gated = opening is not None and YES_NO_QUESTION.search(request) is not None
    out = {**unit, "yes_open": 1.0 if gated and opening == "yes" else 0.0}
    for k in OWN:
        p = unit.get(k)
        out[f"gap_{k}"] = 0.0 if not gated or p is None else (1 - p if opening == "yes" else p)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("units", type=Path)
    parser.add_argument("--controls", default="benign-yes", help="source prefix of controls")
    parser.add_argument("--report", default=None, help="a source held out of every fit")
    parser.add_argument(
        "--root",
        type=Path,
        action="append",
        default=[],
        help="where the units' files are (repeatable; default: ../shared, tests/data, docs)",
    )
    args = parser.parse_args(argv)
    roots = args.root or [REPO.parent / "shared", REPO / "tests" / "data", REPO / "docs"]
    units = [json.loads(line) for line in args.units.read_text().splitlines() if line]
    units = [derive(u, _row(u, roots)) for u in units]
    for k in DERIVED:
        gs.LINEAR[k] = 0.0
    controls = [u for u in units if u["source"].startswith(args.controls)]
    report = [u for u in units if u["source"] == args.report]
    fit = [u for u in units if u not in controls and u not in report]
    sets = {"shipped": SHIPPED, **{f"+{k}": (*SHIPPED, k) for k in DERIVED}}
    loso = fit + report
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "derived.jsonl"
        path.write_text("".join(json.dumps(u) + "\n" for u in loso))
        print(gs.render(gs.analyse(path, sets)))
    print(f"\nFit on {len(fit)} units; {len(controls)} controls (all safe); report: {args.report}")
    for name, feats in sets.items():
        x = np.array([gs.features(u, feats) for u in fit])
        y = np.array([u["label"] for u in fit])
        w = gs.fit_logistic(x, y)
        t = gs.best_threshold(y, gs.predict(w, x))
        line = f"{name}: threshold {t:.3f}"
        if controls:
            pc = gs.predict(w, np.array([gs.features(u, feats) for u in controls]))
            line += f"; controls rated unsafe {int((pc < t).sum())}/{len(controls)}"
        if report:
            yr = np.array([u["label"] for u in report])
            pr = gs.predict(w, np.array([gs.features(u, feats) for u in report]))
            line += (
                f"; {args.report} balanced accuracy {gs.balanced(yr, (pr >= t).astype(int)):.2f}"
                f", AUC {gs.auc(yr, pr):.2f}"
            )
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
