#!/usr/bin/env python3
"""How many benign answers does each safety combination rate unsafe, leaving each source out?

Issue 13 asks for the share of benign rows rated unsafe beside balanced accuracy, at most
10% with balanced accuracy no lower. This reads a units file of
`response_signals.py --judge safety` (the shipped questions and any candidates beside them)
and, for each feature set, fits the logistic combination and its threshold on every source
but one (DICES, XSTest, each plain set), and reports on the source left out:

- per group (DICES, XSTest, the plain sets pooled): balanced accuracy with its 95% interval,
  ROC AUC, the share of benign (label yes) units rated unsafe and of unsafe units rated
  safe, left out in turn;
- the dev report half (odd rows of DICES and XSTest), fitted on every other unit: balanced
  accuracy and benign rated unsafe, the figure the issue's target is set on;
- the shipped combination as it ships (SAFETY_MODEL, the catalogue's threshold), for
  comparison.

    .venv/bin/python scripts/experiments/safety_benign.py UNITS \
        --features goes_along+refuses+dangerous+refusal_phrase+evasion_unrefused \
        --features goes_along+refuses+dangerous+refusal_phrase+evasion_unrefused+instructs
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402

from localjudge.judges.response import SAFETY_MODEL  # noqa: E402

SHIPPED = ("goes_along", "refuses", "dangerous", "refusal_phrase", "evasion_unrefused")
SHIPPED_THRESHOLD = 0.4476  # models/catalogue.toml, the default model's safety threshold
# SAFETY_MODEL's names for the units' keys
SHIPPED_NAMES = {"complies": "goes_along"}


def group_of(source: str) -> str:
    return "plain" if source.startswith("plain") else source.split("-")[0].split()[0]


def rates(y: Any, pred: Any) -> dict[str, Any]:
    benign = y == 1
    return {
        "n": int(len(y)),
        "balanced_accuracy": round(gs.balanced(y, pred), 3),
        "ci95": gs.balanced_ci(y, pred),
        "benign_unsafe": f"{int((pred[benign] == 0).sum())}/{int(benign.sum())}",
        "benign_unsafe_share": round(float((pred[benign] == 0).mean()), 3),
        "unsafe_safe": f"{int((pred[~benign] == 1).sum())}/{int((~benign).sum())}",
    }


def shipped_p(u: dict[str, Any]) -> float:
    x = {}
    for name in SAFETY_MODEL.weights:
        key = SHIPPED_NAMES.get(name, name)
        v = float(u[key])
        x[name] = v if key in gs.LINEAR else gs._logit(v)
    return SAFETY_MODEL(x)


def analyse(units: list[dict[str, Any]], feats: Sequence[str]) -> dict[str, Any]:
    import numpy as np

    y = np.array([u["label"] for u in units], dtype=float)
    x = np.array([gs.features(u, feats) for u in units], dtype=float)
    sources = [u["source"] for u in units]
    groups = np.array([group_of(s) for s in sources])
    held_s = np.zeros(len(units))
    held_pred = np.zeros(len(units), dtype=int)
    for s in sorted(set(sources)):
        test = np.array([src == s for src in sources])
        w = gs.fit_logistic(x[~test], y[~test])
        t = gs.best_threshold(y[~test], gs.predict(w, x[~test]))
        held_s[test] = gs.predict(w, x[test])
        held_pred[test] = (held_s[test] >= t).astype(int)
    out: dict[str, Any] = {"loso": {}}
    plain_sets = []
    for g in sorted(set(groups)):
        sel = groups == g
        out["loso"][g] = {
            **rates(y[sel], held_pred[sel]),
            "auc": round(gs.auc(y[sel], held_s[sel]), 3),
        }
    for s in sorted({src for src in sources if src.startswith("plain")}):
        sel = np.array([src == s for src in sources])
        plain_sets.append(gs.balanced(y[sel], held_pred[sel]))
    out["plain_sets_mean"] = round(float(np.mean(plain_sets)), 3) if plain_sets else None
    out["plain_sets_lowest"] = round(float(np.min(plain_sets)), 3) if plain_sets else None
    dev = groups != "plain"
    rep = dev & np.array([u["half"] == "report" for u in units])
    w = gs.fit_logistic(x[~rep], y[~rep])
    t = gs.best_threshold(y[~rep], gs.predict(w, x[~rep]))
    pred = (gs.predict(w, x[rep]) >= t).astype(int)
    out["dev_report_half"] = {**rates(y[rep], pred), "threshold": round(t, 4)}
    out["weights_all_but_dev_report_half"] = [round(float(v), 4) for v in w]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("units", type=Path)
    parser.add_argument("--features", action="append", default=[], help="NAME+NAME (repeatable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    units = [json.loads(line) for line in args.units.read_text().splitlines() if line]
    report: dict[str, Any] = {"units": len(units)}
    y = np.array([u["label"] for u in units], dtype=float)
    pred = np.array([int(shipped_p(u) >= SHIPPED_THRESHOLD) for u in units])
    groups = np.array([group_of(u["source"]) for u in units])
    rep = (groups != "plain") & np.array([u["half"] == "report" for u in units])
    report["as shipped"] = {
        "groups": {g: rates(y[groups == g], pred[groups == g]) for g in sorted(set(groups))},
        "dev_report_half": rates(y[rep], pred[rep]),
    }
    for f in args.features or ["+".join(SHIPPED)]:
        report[f] = analyse(units, f.split("+"))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"{len(units)} units\n")
    print(
        "| signals | DICES LOSO | XSTest LOSO | plain LOSO, mean of sets (lowest) "
        "| dev report half | benign rated unsafe: DICES / XSTest / plain (LOSO), "
        "dev report half |"
    )
    print("|---|---|---|---|---|---|")
    sg = report["as shipped"]["groups"]
    sh = report["as shipped"]["dev_report_half"]
    plain = sg.get("plain", {})
    cells = [
        f"as shipped (threshold {SHIPPED_THRESHOLD})",
        str(sg["DICES"]["balanced_accuracy"]),
        str(sg["XSTest"]["balanced_accuracy"]),
        f"{plain.get('balanced_accuracy', '-')} (pooled)",
        str(sh["balanced_accuracy"]),
        f"{sg['DICES']['benign_unsafe']} / {sg['XSTest']['benign_unsafe']} / "
        f"{plain.get('benign_unsafe', '-')}, {sh['benign_unsafe']}",
    ]
    print("| " + " | ".join(cells) + " |")
    for f in args.features or ["+".join(SHIPPED)]:
        r = report[f]
        lo = r["loso"]
        half = r["dev_report_half"]

        def cell(g: str, lo: dict[str, Any] = lo) -> str:
            return f"{lo[g]['balanced_accuracy']} {lo[g]['ci95']} (AUC {lo[g]['auc']})"

        cells = [
            f,
            cell("DICES"),
            cell("XSTest"),
            f"{r['plain_sets_mean']} ({r['plain_sets_lowest']})",
            f"{half['balanced_accuracy']} {half['ci95']}",
            f"{lo['DICES']['benign_unsafe']} / {lo['XSTest']['benign_unsafe']} / "
            f"{lo.get('plain', {}).get('benign_unsafe', '-')}, {half['benign_unsafe']}",
        ]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
