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

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import correctness_recall as cr  # noqa: E402
import groundedness_support as gs  # noqa: E402

from localjudge.judges.response import CORRECTNESS_MODEL, expected_recall  # noqa: E402
from localjudge.judges.support import logit  # noqa: E402


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--run", action="append", required=True, help="DATA=RUN")
    args = ap.parse_args(argv)
    units = cr.load(args.run)
    y = np.array([u["label"] for u in units])
    sources = [u["source"] for u in units]
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
    print(f"{len(units)} units, {len(set(sources))} sources; threshold {cr.THRESHOLD}\n")
    print("| names only | EVOUNA NQ | EVOUNA TQ | plain sets, mean (lowest) | false yes / no |")
    print("|---|---|---|---|---|")
    for v, s in table.items():
        pred = (s >= cr.THRESHOLD).astype(int)
        by = cr.per_source(units, pred)
        fy, fn = int(((pred == 1) & (y == 0)).sum()), int(((pred == 0) & (y == 1)).sum())
        low = min(x for src, x in by.items() if src not in cr.DEV_SOURCES)
        cells = ["yes" if v else "no", *(f"{by[d]:.3f}" for d in cr.DEV_SOURCES)]
        print(
            "| "
            + " | ".join([*cells, f"{cr.mean_plain(by):.3f} ({low:.2f})", f"{fy} / {fn}"])
            + " |"
        )
    chosen = {}
    for src in sorted(set(sources)):
        rest = [i for i, s in enumerate(sources) if s != src]

        def rank(v: bool, rest: list[int] = rest) -> tuple[float, int]:
            pred = (table[v] >= cr.THRESHOLD).astype(int)
            return (round(gs.source_balanced(y, pred, sources, rest), 9), -int(v))

        chosen[src] = max((False, True), key=rank)
    after = np.array([table[chosen[s]][i] for i, s in enumerate(sources)])
    before = cr.per_source(units, (table[False] >= cr.THRESHOLD).astype(int))
    by = cr.per_source(units, (after >= cr.THRESHOLD).astype(int))
    print("\nleave one source out (chosen on the other sources; ties: as shipped):")
    for s in sorted(set(sources)):
        print(f"  {s}: {before[s]:.2f} -> {by[s]:.2f}  (names only: {chosen[s]})")
    print(f"  plain mean {cr.mean_plain(before):.3f} -> {cr.mean_plain(by):.3f}")
    print("\nrows whose verdict the LOSO choice turns:")
    for i, right in gs.turned(y, table[False], after, cr.THRESHOLD):
        r = units[i]["record"]
        said = f"{r.response!r} for {r.expected_text()!r}"
        print(f"  {sources[i]} {units[i]['id']}: ({right}) {said}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
