#!/usr/bin/env python3
"""correctness: answer recall that weighs the expected answer's values more than its other
words (issue 13, nineteenth round), as context_sufficiency's does since the eighteenth.

On the seen plain sets most of correctness's false noes are right answers given tersely
beside an expected answer that wraps its value in other words: "Twelve, if my maths is
right." for "The answer is 12." (recall 0.5), "6,076 feet, or thereabouts." for "1,852
metres, by international agreement." (0.33), "They have lived to a hundred, or beyond." for
"A person aged 100 or over." (0.33). Would answer recall with each value (`lexical._values`:
a quantity, date, clock time, price, share or number in digits) counting K words
(`response.expected_recall(record, key_weight=K)`) rate better, K chosen on every source
but one (EVOUNA NQ, EVOUNA TQ, each plain set), in turn?

With --one-value (issue 13, twentieth round), each weight is also tried with only the
expected answer's values looked for where the request asks for one value and nothing else
(`lexical.asks_one_value`: "In what year was the team set up?" against "The team was set
up in 1947 by local shepherds, according to its website." looks for "1947"), and the
variant is chosen among all of them the same way (answer: weight 10 with the one-value
reading in every fold, shipped as `ANSWER_KEY_WEIGHT` and `ONE_VALUE`, the defaults of
`--shipped` and `--shipped-reading`; note that the runs' recall is recomputed, so "as run"
is the only column of the code they were made with).

With --any-value (issue 13, twenty-first round), the one-value reading is also tried
taking one of the expected answer's values found as the answer found (`any_value`): an
answer that explains its value names others beside it ("There are 1,440 minutes in a day:
24 hours of 60 minutes each." for "How many minutes make up a whole day?" finds a quarter
of its values in "1,440." and all of its answer).

The model's P(same) is read from `localjudge eval` runs (DATA=RUN pairs, the field
`p_same`), so no model is run; the judge's P is rebuilt with the shipped logistic model
(`CORRECTNESS_MODEL`) around each recall and rated at the shipped threshold ("as run": the
P the runs recorded, with the code they were made with):

    flock /tmp/cpu.lock .venv/bin/localjudge eval DATA --judges correctness \
        --no-rationale --out RUN
    .venv/bin/python scripts/experiments/correctness_recall.py --run DATA=RUN ...

Labels are read only to fit and score. The dev file's rows are sourced by their `source`
field (EVOUNA NQ or TQ), a plain file's by its folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))

import groundedness_support as gs  # noqa: E402

from localjudge.judges.response import (  # noqa: E402
    ANSWER_KEY_WEIGHT,
    ANY_VALUE,
    CORRECTNESS_MODEL,
    FREQUENCY_VALUES,
    ONE_VALUE,
    correctness_signals,
    expected_recall,
)
from localjudge.judges.support import logit  # noqa: E402
from localjudge.records import validate_row  # noqa: E402

PREFIX = "response/llm_judged/correctness/"
THRESHOLD = 0.5746  # the default model's (models/catalogue.toml)
WEIGHTS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
DEV_SOURCES = ("EVOUNA NQ", "EVOUNA TQ")
Variant = tuple[float, int, bool]  # key weight, one-value reading, frequencies as values


def _source(data: Path, row: dict[str, Any]) -> str:
    given = str(row.get("source") or "")
    dev = next((s for s in DEV_SOURCES if given.startswith(s)), None)
    return dev or data.parent.name


def load(pairs: Sequence[str]) -> list[dict[str, Any]]:
    units = []
    for pair in pairs:
        data, run = (Path(p) for p in pair.split("=", 1))
        rows = [json.loads(x) for x in data.read_text().splitlines() if x.strip()]
        for line in Path(run, "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r.get(PREFIX + "p_same") is None:
                continue
            row = rows[r["line"] - 1]
            fields = {k: v for k, v in row.items() if k not in ("labels", "source")}
            record = validate_row(r["line"], fields)
            units.append(
                {
                    "source": _source(data, row),
                    "id": row.get("request_id") or f"{data.parent.name}:{r['line']}",
                    "label": 1 if row["labels"]["correctness"] == "yes" else 0,
                    "same": r[PREFIX + "p_same"],
                    "ran": r[PREFIX + "probability"]
                    if r[PREFIX + "rating"] == "yes"
                    else 1.0 - r[PREFIX + "probability"],
                    "between": correctness_signals(record)["between_answers"],
                    "record": record,
                }
            )
    return units


def scores(
    units: list[dict[str, Any]],
    weight: float,
    surnames: bool = True,
    one_value: bool = False,
    any_value: bool = False,
    frequencies: bool = False,
) -> np.ndarray:
    return np.array(
        [
            CORRECTNESS_MODEL(
                {
                    "same": logit(u["same"]),
                    **expected_recall(
                        u["record"],
                        key_weight=weight,
                        surnames=surnames,
                        one_value=one_value,
                        any_value=any_value,
                        frequencies=frequencies,
                    ),
                    "between_answers": u["between"],
                }
            )
            for u in units
        ]
    )


def per_source(units: list[dict[str, Any]], pred: np.ndarray) -> dict[str, float]:
    y = np.array([u["label"] for u in units])
    out = {}
    for s in sorted({u["source"] for u in units}):
        idx = [i for i, u in enumerate(units) if u["source"] == s]
        out[s] = gs.balanced(y[idx], pred[idx])
    return out


def mean_plain(by: dict[str, float]) -> float:
    plain = [v for s, v in by.items() if s not in DEV_SOURCES]
    return float(np.mean(plain)) if plain else float("nan")


def runs_from(argv: Sequence[str] | None, doc: str | None) -> list[dict[str, Any]]:
    """The units of the DATA=RUN pairs given as --run (the command line of the correctness
    experiments that read these runs)."""
    ap = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    ap.add_argument("--run", action="append", required=True, help="DATA=RUN")
    return load(ap.parse_args(argv).run)


def report(
    units: list[dict[str, Any]],
    table: dict[Any, np.ndarray],
    shipped: Any,
    column: str,
    describe: Callable[[Any], str],
) -> None:
    """Print each variant's figures (EVOUNA NQ and TQ, the plain sets' mean and lowest,
    false yes and no; `column` heads the variant's own), then leave_one_out."""
    y = np.array([u["label"] for u in units])
    sources = {u["source"] for u in units}
    print(f"{len(units)} units, {len(sources)} sources; threshold {THRESHOLD}\n")
    print(f"| {column} | EVOUNA NQ | EVOUNA TQ | plain sets, mean (lowest) | false yes / no |")
    print("|---|---|---|---|---|")
    for v, s in table.items():
        pred = (s >= THRESHOLD).astype(int)
        by = per_source(units, pred)
        fy, fn = int(((pred == 1) & (y == 0)).sum()), int(((pred == 0) & (y == 1)).sum())
        low = min(x for src, x in by.items() if src not in DEV_SOURCES)
        cells = [describe(v), *(f"{by[d]:.3f}" for d in DEV_SOURCES)]
        cells += [f"{mean_plain(by):.3f} ({low:.2f})", f"{fy} / {fn}"]
        print("| " + " | ".join(cells) + " |")
    leave_one_out(units, table, shipped, describe)


def leave_one_out(
    units: list[dict[str, Any]],
    table: dict[Any, np.ndarray],
    shipped: Any,
    describe: Callable[[Any], str],
) -> None:
    """Print each source's figure before (the `shipped` variant of `table`) and with the
    variant chosen on every other source (ties: the shipped one, then the first in
    `table`), the plain mean, and the rows the choice turns (the correctness experiments
    that add one reading to the shipped judge)."""
    y = np.array([u["label"] for u in units])
    sources = [u["source"] for u in units]
    order = list(table)
    chosen = {}
    for src in sorted(set(sources)):
        rest = [i for i, s in enumerate(sources) if s != src]

        def rank(v: Any, rest: list[int] = rest) -> tuple[float, bool, int]:
            pred = (table[v] >= THRESHOLD).astype(int)
            score = round(gs.source_balanced(y, pred, sources, rest), 9)
            return (score, v == shipped, -order.index(v))

        chosen[src] = max(order, key=rank)
    after = np.array([table[chosen[s]][i] for i, s in enumerate(sources)])
    before = per_source(units, (table[shipped] >= THRESHOLD).astype(int))
    by = per_source(units, (after >= THRESHOLD).astype(int))
    print("\nleave one source out (chosen on the other sources; ties: as shipped):")
    for s in sorted(set(sources)):
        print(f"  {s}: {before[s]:.2f} -> {by[s]:.2f}  ({describe(chosen[s])})")
    print(f"  plain mean {mean_plain(before):.3f} -> {mean_plain(by):.3f}")
    print("\nrows whose verdict the LOSO choice turns:")
    for i, right in gs.turned(y, table[shipped], after, THRESHOLD):
        r = units[i]["record"]
        said = f"{r.response!r} for {r.expected_text()!r}"
        print(f"  {sources[i]} {units[i]['id']}: ({right}) {said}")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--run", action="append", required=True, help="DATA=RUN")
    ap.add_argument(
        "--shipped", type=float, default=ANSWER_KEY_WEIGHT, help="the weight shipped now"
    )
    ap.add_argument(
        "--shipped-reading",
        type=int,
        default=2 if ANY_VALUE else int(ONE_VALUE),
        choices=(0, 1, 2),
        help="the one-value reading shipped now: 0 none, 1 every value, 2 any value",
    )
    ap.add_argument(
        "--shipped-frequencies",
        type=int,
        default=int(FREQUENCY_VALUES),
        choices=(0, 1),
        help="whether frequencies are values in what is shipped now",
    )
    ap.add_argument("--rows", action="store_true", help="list the rows a weight turns")
    ap.add_argument(
        "--no-surnames", action="store_true", help="look for a name's given names as before"
    )
    ap.add_argument(
        "--one-value",
        action="store_true",
        help="also try each weight with only the answer's values looked for where the request "
        "asks for one value (lexical.asks_one_value)",
    )
    ap.add_argument(
        "--any-value",
        action="store_true",
        help="also try each weight with the one-value reading taking one of the answer's "
        "values found as the answer found (expected_recall's any_value)",
    )
    ap.add_argument(
        "--frequencies",
        action="store_true",
        help="also try each variant with how often a value and 'how often' a one-value ask "
        "(expected_recall's frequencies)",
    )
    args = ap.parse_args(argv)
    units = load(args.run)
    y = np.array([u["label"] for u in units])
    sources = sorted({u["source"] for u in units})
    # (weight, one-value reading: 0 none, 1 every value, 2 any value, frequencies as values)
    readings = [0, *([1] if args.one_value else []), *([2] if args.any_value else [])]
    variants = [
        (w, r, f)
        for f in ((False, True) if args.frequencies else (False,))
        for r in readings
        for w in WEIGHTS
    ]
    table = {
        v: scores(units, v[0], not args.no_surnames, v[1] > 0, v[1] > 1, v[2]) for v in variants
    }
    ran = np.array([u["ran"] for u in units])  # the P of the code the runs were made with

    def name(v: Variant) -> str:
        reading = ("", ", one value", ", any value")[v[1]]
        return f"{v[0]:g}{reading}" + (", frequencies" if v[2] else "")

    source_of = [u["source"] for u in units]

    def objective(idx: list[int], w: Variant) -> float:
        return gs.source_balanced(y, (table[w] >= THRESHOLD).astype(int), source_of, idx)

    print(f"{len(units)} units, {len(sources)} sources; threshold {THRESHOLD}\n")
    print(
        "| key weight | EVOUNA NQ | EVOUNA TQ | plain sets, mean (lowest) "
        "| false yes / false no | pooled AUC |"
    )
    print("|---|---|---|---|---|---|")
    for w, s in [("as run", ran), *((name(v), x) for v, x in table.items())]:
        pred = (s >= THRESHOLD).astype(int)
        by = per_source(units, pred)
        fy = int(((pred == 1) & (y == 0)).sum())
        fn = int(((pred == 0) & (y == 1)).sum())
        low = min((x for src, x in by.items() if src not in DEV_SOURCES), default=float("nan"))
        cells = [str(w), *(f"{by.get(d, float('nan')):.3f}" for d in DEV_SOURCES)]
        cells += [f"{mean_plain(by):.3f} ({low:.2f})", f"{fy} / {fn}", f"{gs.auc(y, s):.3f}"]
        print("| " + " | ".join(cells) + " |")
    # leave one source out: the weight chosen on the other sources (ties: the smaller)
    shipped = (args.shipped, args.shipped_reading, bool(args.shipped_frequencies))
    pred = np.zeros(len(units), dtype=int)
    chosen: dict[str, Variant] = {}
    for src in sources:
        rest = [i for i, u in enumerate(units) if u["source"] != src]

        # ties: the variant that changes least of what is shipped, then the plainer one
        # (frequencies as before, the lesser one-value reading), then the smaller weight
        def rank(v: Variant, rest: list[int] = rest) -> tuple[float, int, int, int, float]:
            changes = sum(a != b for a, b in zip(v, shipped, strict=True))
            return (round(objective(rest, v), 9), -changes, -v[2], -v[1], -v[0])

        best = max(variants, key=rank)
        chosen[src] = best
        for i, u in enumerate(units):
            if u["source"] == src:
                pred[i] = int(table[best][i] >= THRESHOLD)
    by = per_source(units, pred)
    before = per_source(units, (table[shipped] >= THRESHOLD).astype(int))
    print(
        f"\nleave one source out (the variant chosen on the other sources; before: "
        f"{name(shipped)}):"
    )
    for s in sources:
        print(f"  {s}: {before[s]:.2f} -> {by[s]:.2f}  (weight {name(chosen[s])})")
    print(f"  plain mean {mean_plain(before):.3f} -> {mean_plain(by):.3f}")
    if args.rows:
        print("\nrows whose verdict a weight's LOSO choice turns:")
        base = table[shipped]
        after = np.array([table[chosen[u["source"]]][i] for i, u in enumerate(units)])
        for i, right in gs.turned(y, base, after, THRESHOLD):
            u, r = units[i], units[i]["record"]
            print(
                f"  {u['source']} {u['id']}: {base[i]:.2f} -> {after[i]:.2f} ({right}) "
                f"{r.response!r} for {r.expected_text()!r}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
