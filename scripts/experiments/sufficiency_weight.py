#!/usr/bin/env python3
"""Choose context_sufficiency's blend weight from a run of the model's question alone.

Reads per-row units of context_sufficiency written by `scripts/agreement.py --units` when
the judge's P(yes) was the model's alone (docs/runs/agreement-1.5b-150rows-3judges-units.jsonl),
computes each row's answer recall exactly as the judge does (localjudge/judges/lexical.py),
and scores P = w * recall + (1 - w) * model P(yes) (model alone for yes/no answers) for each
weight: ROC AUC on the fit half (even rows), the threshold fitted there, and the report half
(odd rows) at that threshold, as scripts/agreement.py does. No model is run.

    .venv/bin/python scripts/experiments/sufficiency_weight.py UNITS.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import agreement  # noqa: E402

from localjudge.judges.lexical import answer_recall  # noqa: E402

WEIGHTS = (0.0, 0.25, 0.5, 0.75, 0.9, 1.0)


def recalls(items: Sequence[dict[str, Any]]) -> list[float | None]:
    return [
        answer_recall(
            item.get("expected_response") or "",
            [c.get("content") or "" for c in item.get("retrieved_context") or ()],
        )[0]
        for item in items
    ]


def table(units: Sequence[dict[str, Any]], recall: Sequence[float | None]) -> list[dict[str, Any]]:
    y = np.array([u["label"] for u in units], dtype=np.float64)
    fit = np.array([u["half"] == "fit" for u in units])
    out = []
    for w in WEIGHTS:
        p = np.array(
            [
                u["p_yes"] if r is None else w * r + (1.0 - w) * u["p_yes"]
                for u, r in zip(units, recall, strict=True)
            ]
        )
        result = agreement.evaluate_judge(
            [{**u, "p_yes": float(p[k])} for k, u in enumerate(units)]
        )
        out.append(
            {
                "weight": w,
                "fit_half_auc": agreement.roc_auc(y[fit], p[fit]),
                "threshold": result["threshold"],
                "report_half_fitted": result["report_half_fitted"],
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("units", type=Path, help="agreement.py --units file (model P alone)")
    args = parser.parse_args(argv)
    lines = args.units.read_text(encoding="utf-8").splitlines()
    units = [u for u in map(json.loads, lines) if u["judge"] == "context_sufficiency"]
    units.sort(key=lambda u: u["row"])
    items = agreement.load("context_sufficiency", None)
    recall = recalls([items[u["row"]] for u in units])
    print("| w | fit-half ROC AUC | threshold | report half: balanced acc. / kappa / ROC AUC |")
    print("|---:|---:|---:|---|")
    for r in table(units, recall):
        rep = r["report_half_fitted"]
        print(
            f"| {r['weight']} | {r['fit_half_auc']:.4f} | {r['threshold']:.3f} | "
            f"{rep['balanced_accuracy']['value']:.2f} / {rep['kappa']['value']:.2f} / "
            f"{rep['auc']['value']:.2f} |"
        )
    known = [(u, r) for u, r in zip(units, recall, strict=True) if r is not None]
    y = np.array([u["label"] for u, _ in known], dtype=np.float64)
    print(
        f"\nanswer recall alone, rows with content words ({len(known)}): ROC AUC "
        f"{agreement.roc_auc(y, np.array([r for _, r in known]))!s:.6}; model alone on "
        f"them {agreement.roc_auc(y, np.array([u['p_yes'] for u, _ in known]))!s:.6}; "
        f"yes/no answers: {len(units) - len(known)} rows"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
