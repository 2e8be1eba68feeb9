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

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import correctness_recall as cr  # noqa: E402
import groundedness_support as gs  # noqa: E402

from localjudge.judges import lexical  # noqa: E402
from localjudge.judges.response import (
    CORRECTNESS_MODEL,  # noqa: E402
    correctness_signals,  # noqa: E402
)
from localjudge.judges.support import logit  # noqa: E402

BONUSES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--run", action="append", required=True, help="DATA=RUN")
    args = ap.parse_args(argv)
    units = cr.load(args.run)
    y = np.array([u["label"] for u in units])
    sources = [u["source"] for u in units]
    base = []
    term = []
    for u in units:
        signals = {"same": logit(u["same"]), **correctness_signals(u["record"])}
        base.append(logit(CORRECTNESS_MODEL(signals)))
        one = lexical.asks_one_value(u["record"].request or "", how_often=True)
        term.append(signals["answer_recall"] if one else 0.0)
    z, t = np.array(base), np.array(term)
    table = {w: 1.0 / (1.0 + np.exp(-(z + w * t))) for w in BONUSES}
    print(f"{len(units)} units, {len(set(sources))} sources; threshold {cr.THRESHOLD}\n")
    print("| W | EVOUNA NQ | EVOUNA TQ | plain sets, mean | false yes / false no |")
    print("|---|---|---|---|---|")
    for w, s in table.items():
        pred = (s >= cr.THRESHOLD).astype(int)
        by = cr.per_source(units, pred)
        fy, fn = int(((pred == 1) & (y == 0)).sum()), int(((pred == 0) & (y == 1)).sum())
        cells = [f"{w:g}", *(f"{by[d]:.3f}" for d in cr.DEV_SOURCES), f"{cr.mean_plain(by):.3f}"]
        print("| " + " | ".join([*cells, f"{fy} / {fn}"]) + " |")
    chosen = {}
    for src in sorted(set(sources)):
        rest = [i for i, s in enumerate(sources) if s != src]

        def rank(w: float, rest: list[int] = rest) -> tuple[float, float]:
            pred = (table[w] >= cr.THRESHOLD).astype(int)
            return (round(gs.source_balanced(y, pred, sources, rest), 9), -w)

        chosen[src] = max(BONUSES, key=rank)
    after = np.array([table[chosen[s]][i] for i, s in enumerate(sources)])
    before = cr.per_source(units, (table[0.0] >= cr.THRESHOLD).astype(int))
    by = cr.per_source(units, (after >= cr.THRESHOLD).astype(int))
    print("\nleave one source out (W chosen on the other sources):")
    for s in sorted(set(sources)):
        print(f"  {s}: {before[s]:.2f} -> {by[s]:.2f}  (W {chosen[s]:g})")
    print(f"  plain mean {cr.mean_plain(before):.3f} -> {cr.mean_plain(by):.3f}")
    print("\nrows whose verdict the LOSO choice turns:")
    for i, right in gs.turned(y, table[0.0], after, cr.THRESHOLD):
        r = units[i]["record"]
        print(
            f"  {sources[i]} {units[i]['id']}: ({right}) {r.response!r} for {r.expected_text()!r}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
