#!/usr/bin/env python3
"""correctness: a term of its own for a one-value request whose answer is found (issue 13,
twenty-first round), measured, not adopted.

A terse right value whose answer recall is complete can still fall under the threshold on
the model's P(same) ("Nineteen thirty." for "It was built in 1930.": recall 1.0, P(same)
0.41, the judge's P 0.50 at 0.5746). Would a term W * answer_recall, added to the shipped
logistic model's logit only where the request asks for one value
(`lexical.asks_one_value(request, how_often=True)`), rate better, W chosen on every source
but one (EVOUNA NQ, EVOUNA TQ, each plain set), in turn?

Reads the same `localjudge eval` runs as correctness_recall.py (DATA=RUN pairs; no model
is run):

    .venv/bin/python scripts/experiments/correctness_value_bonus.py --run DATA=RUN ...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import correctness_recall as cr  # noqa: E402

from localjudge.judges import lexical  # noqa: E402
from localjudge.judges.response import (
    CORRECTNESS_MODEL,  # noqa: E402
    correctness_signals,  # noqa: E402
)
from localjudge.judges.support import logit  # noqa: E402

BONUSES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def main(argv: Sequence[str] | None = None) -> int:
    units = cr.runs_from(argv, __doc__)
    base = []
    term = []
    for u in units:
        signals = {"same": logit(u["same"]), **correctness_signals(u["record"])}
        base.append(logit(CORRECTNESS_MODEL(signals)))
        one = lexical.asks_one_value(u["record"].request or "", how_often=True)
        term.append(signals["answer_recall"] if one else 0.0)
    z, t = np.array(base), np.array(term)
    table = {w: 1.0 / (1.0 + np.exp(-(z + w * t))) for w in BONUSES}
    cr.report(units, table, 0.0, "W", lambda w: f"W {w:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
