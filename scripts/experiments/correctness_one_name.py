#!/usr/bin/env python3
"""correctness: a "Who ...?" request's answer read by its names (issue 13, twenty-first
round).

A right surname whose expected answer says more ("Brunton, for years now." for "Ian Brunton
has been coxswain since 2009.") finds a twelfth of the expected answer in answer recall (the
year counts ten words) and is rated incorrect, as a terse value was before the one-value
reading. Would recall over the expected answer's names only (`_NAME_RUN`), where the
request asks who and nothing else (`lexical.asks_one_name`), rate better, chosen on every
source but one (EVOUNA NQ, EVOUNA TQ, each plain set), in turn? Answer (docs/agreement.md,
issue 13's twenty-first round): 44 of 45 folds choose it, and no source loses, but the
seen sets hold one such row (plain mean 0.927 -> 0.927 held out); `plain-who`, written for
it, 0.50 -> 0.75 held out. Shipped as `ONE_NAME`.

Reads the same `localjudge eval` runs as correctness_recall.py (DATA=RUN pairs; no model
is run):

    .venv/bin/python scripts/experiments/correctness_one_name.py --run DATA=RUN ...
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import correctness_recall as cr  # noqa: E402

from localjudge.judges.response import CORRECTNESS_MODEL, expected_recall  # noqa: E402
from localjudge.judges.support import logit  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    units = cr.runs_from(argv, __doc__)
    table = {}
    for one_name in (False, True):
        table[one_name] = np.array(
            [
                CORRECTNESS_MODEL(
                    {
                        "same": logit(u["same"]),
                        **expected_recall(u["record"], one_name=one_name),
                        "between_answers": u["between"],
                    }
                )
                for u in units
            ]
        )
    cr.report(units, table, False, "names only", lambda v: f"names only: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
