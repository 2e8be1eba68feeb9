#!/usr/bin/env python3
"""groundedness before and after `key_missing`, on every dev row (issue 13, twelfth round).

The combination with `key_missing` was first fitted on 160 dev rows (the units of
`docs/runs/issue13-r10-groundedness-questions-units.jsonl`) and the first plain set. The
dev files hold 310 rows. From one `localjudge eval` run per file, this reports per
source, on the rows outside those 160 and on all rows, the shipped combination ("after":
at 23bfb2f the first fit; since 18d4b4c the refit on every dev row, for which no dev row
is unseen) and the one before it (the same statements' P(yes), the earlier weights and
threshold, no key term), as balanced accuracy [95% interval] and ROC AUC:

    flock /tmp/cpu.lock .venv/bin/localjudge eval ../shared/benchmarks/groundedness.jsonl \
        --judges groundedness --no-rationale --out OUT1
    (the same for groundedness_summedits.jsonl into OUT2)
    .venv/bin/python scripts/experiments/key_missing_rows.py \
        ../shared/benchmarks/groundedness.jsonl=OUT1 \
        ../shared/benchmarks/groundedness_summedits.jsonl=OUT2 \
        --fitted docs/runs/issue13-r10-groundedness-questions-units.jsonl

Labels are read only to score.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
from groundedness_dev_refit import from_eval  # noqa: E402
from groundedness_together import key_missing  # noqa: E402

from localjudge.judges.response import grounded_p  # noqa: E402
from localjudge.judges.support import Logistic, logit  # noqa: E402
from localjudge.models.catalogue import default_model_id, load_catalogue  # noqa: E402

# The combination and threshold shipped before the twelfth round.
BEFORE = Logistic(-0.5014, {"mean": 1.0387, "min": 0.5885, "log_statements": -0.4765})
BEFORE_THRESHOLD = 0.573


def before_p(best: Sequence[float]) -> float:
    z = [logit(p) for p in best]
    return BEFORE({"mean": sum(z) / len(z), "min": min(z), "log_statements": np.log(len(z))})


def rows(pairs: Sequence[str], fitted: set[str]) -> list[dict[str, Any]]:
    out = []
    for u in from_eval(pairs):
        best = u["best"]["A"]
        out.append(
            {
                "group": u["source"].split()[0],
                "label": u["label"],
                "before": before_p(best),
                "after": grounded_p(best, key_missing(u["id"])),
                "shipped": u["rating"] == "yes",
                "fitted": u["id"] in fitted,
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="DATA=OUT: a labelled file and its eval --out")
    parser.add_argument("--fitted", type=Path, required=True, help="units of the fitted rows")
    args = parser.parse_args(argv)
    fitted = {json.loads(x)["id"] for x in args.fitted.read_text().splitlines() if x}
    units = rows(args.runs, fitted)
    after_t = load_catalogue()[default_model_id()].thresholds["groundedness"]
    # Whether the run's own ratings are the recomputed ones (they are when the run used the
    # shipped combination; the figures below are recomputed either way).
    same = sum(u["shipped"] == (u["after"] >= after_t) for u in units)
    print(f"{same} of {len(units)} rows: the run's rating is the shipped combination's")
    for group in sorted({u["group"] for u in units}):
        for which, keep in (("never fitted", False), ("all rows", None)):
            us = [u for u in units if u["group"] == group and (keep is None or u["fitted"] == keep)]
            if not us:
                continue
            y = np.array([u["label"] for u in us])
            cells = []
            for name, t in (("before", BEFORE_THRESHOLD), ("after", after_t)):
                s = np.array([u[name] for u in us])
                pred = (s >= t).astype(int)
                lo, hi = gs.balanced_ci(y, pred)
                cells.append(
                    f"{name} {gs.balanced(y, pred):.2f} [{lo:.2f},{hi:.2f}] AUC {gs.auc(y, s):.2f}"
                )
            print(
                f"{group}, {which} ({len(us)} rows, {int(y.sum())} grounded): " + " | ".join(cells)
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
