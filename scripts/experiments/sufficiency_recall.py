#!/usr/bin/env python3
"""context_sufficiency: answer recall that weighs the expected answer's values and names
more than its other words (issue 13, eighteenth round).

On the seen plain sets the judge's false noes are mostly sufficient rows whose expected
answer says its time, price or date as the passages give it and one other word in other
words ("They wind up at twenty past four." against "13:30 to 16:20", "It shuts at half past
three.", "Each team pays £33."), and many false yeses have every word but a value or a
name ("£10.50, and they can chip puppies from 8 weeks old ..." against passages with no
price). Would recall over the answer's words, with its key terms (numbers, quantities,
dates, times, prices, shares, and perhaps names: `lexical._values`) weighing K times
a plain word (`best_answer_recall(..., key_weight=K)`), rank and rate better, K fitted on
every source but one (HotpotQA, each plain set)? Also measured: the request's words left
out of recall (as correctness does), alone and with the weight.

Two readings of "key term": values only (quantities, dates, clock times, prices, shares,
numbers in digits) or values and capitalised names (`lexical.key_terms`'s names, which
leave out a sentence's first word: "Burwash Mine" weighs "Mine", not "Burwash").

The model's P(yes) is read from `localjudge eval` runs (DATA=RUN pairs, the field
`model_p_yes`) and, for HotpotQA's 150 dev rows, from the ninth round's units
(`docs/runs/issue13-r9-sufficiency-units.jsonl`: the same prompts, the same P to 1e-6 on
the rows rerun this round), so no model is run; the judge's P is rebuilt with the shipped
blend and polar rule (`retrieval.sufficiency_p`) around each recall:

    flock /tmp/cpu.lock .venv/bin/localjudge eval DATA --judges context_sufficiency \
        --no-rationale --out RUN
    .venv/bin/python scripts/experiments/sufficiency_recall.py --run DATA=RUN ...

With --one-value (issue 13, twenty-first round), the readings correctness uses are tried
too, with the request read (so its words are out): where the request asks for one value,
only the expected answer's values are looked for, or one of them of the kind asked for,
how often being a value ("How long does the engine run?" against "It runs for 36 hours,
from 8 am on Saturday to 8 pm on Sunday." looks for "36 hours").

Labels are read only to fit and score.
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

from localjudge.judges import lexical  # noqa: E402
from localjudge.judges.retrieval import KEY_WEIGHT, sufficiency_p  # noqa: E402

PREFIX = "retrieval/llm_judged/context_sufficiency/"
THRESHOLD = 0.7158  # the default model's (models/catalogue.toml)
WEIGHTS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
DEV = REPO.parent / "shared" / "benchmarks" / "context_sufficiency.jsonl"
DEV_UNITS = REPO / "docs" / "runs" / "issue13-r9-sufficiency-units.jsonl"
plain_values = lexical._values
# key weight, names count as key terms, request's words out, one-value reading (0 none, 1
# only the answer's values looked for where one is asked, 2 one of them of the kind asked
# found; with how often a value in both: lexical.answer_recall's one_value, any_value,
# frequencies)
Variant = tuple[float, bool, bool, int]


def with_names(text: str) -> Callable[[Sequence[tuple[str, str]]], list[bool]]:
    """lexical._values, with `text`'s capitalised names (key_terms) as key terms too."""
    names = {t for t in lexical.key_terms(text) if not t[0].isdigit()}

    def values(words: Sequence[tuple[str, str]], frequencies: bool = False) -> list[bool]:
        found = plain_values(words, frequencies)
        return [v or w in names for v, (w, _) in zip(found, words, strict=True)]

    return values


def _unit(source: str, item: dict[str, Any], model_p: float) -> dict[str, Any]:
    exp = item.get("expected_response")
    request = item["request"]
    return {
        "source": source,
        "label": 1 if item["labels"]["context_sufficiency"] == "yes" else 0,
        "model_p": model_p,
        "expected": exp if isinstance(exp, str) else (exp[0] if exp else ""),
        "request": request if isinstance(request, str) else json.dumps(request),
        "chunks": [c.get("content") or "" for c in item.get("retrieved_context") or ()],
    }


def load(pairs: Sequence[str]) -> list[dict[str, Any]]:
    items = [json.loads(x) for x in DEV.read_text().splitlines() if x.strip()]
    units = [
        _unit("HotpotQA", items[u["row"]], u["shipped"])
        for u in map(json.loads, DEV_UNITS.read_text().splitlines())
        if not u["source"].startswith("plain")
    ]
    for pair in pairs:
        data, run = pair.split("=", 1)
        rows = [json.loads(x) for x in Path(data).read_text().splitlines() if x.strip()]
        for line in Path(run, "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r.get(PREFIX + "model_p_yes") is not None:
                item = rows[r["line"] - 1]
                units.append(_unit(Path(data).parent.name, item, r[PREFIX + "model_p_yes"]))
    return units


def scores(units: list[dict[str, Any]], variant: Variant) -> np.ndarray:
    weight, names, given, reading = variant
    try:
        out = []
        for u in units:
            lexical._values = with_names(u["expected"]) if names else plain_values  # type: ignore[assignment]
            asked = u["request"] if given else None
            rec, _ = lexical.best_answer_recall(
                u["expected"],
                u["chunks"],
                given=asked,
                key_weight=weight,
                one_value=reading > 0,
                any_value=reading > 1,
                frequencies=reading > 0,
            )
            polar = rec is not None and lexical.answer_word(u["expected"]) is not None
            out.append(sufficiency_p(u["model_p"], rec, polar))
    finally:
        lexical._values = plain_values
    return np.array(out)


def per_source(units: list[dict[str, Any]], pred: np.ndarray) -> dict[str, float]:
    y = np.array([u["label"] for u in units])
    out = {}
    for s in sorted({u["source"] for u in units}):
        idx = [i for i, u in enumerate(units) if u["source"] == s]
        out[s] = gs.balanced(y[idx], pred[idx])
    return out


def mean_plain(by: dict[str, float]) -> float:
    return float(np.mean([v for s, v in by.items() if s != "HotpotQA"]))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--run", action="append", required=True, help="DATA=RUN")
    ap.add_argument(
        "--one-value",
        action="store_true",
        help="also try the one-value readings correctness uses (issue 13, twenty-first round)",
    )
    ap.add_argument("--rows", action="store_true", help="list the rows the LOSO choice turns")
    args = ap.parse_args(argv)
    units = load(args.run)
    y = np.array([u["label"] for u in units])
    sources = sorted({u["source"] for u in units})
    variants: list[Variant] = [
        (w, n, g, 0) for g in (False, True) for n in (False, True) for w in WEIGHTS
    ]
    if args.one_value:  # the request is read: its words are out too
        variants += [(w, n, True, r) for r in (1, 2) for n in (False, True) for w in WEIGHTS]
    variants = [v for v in variants if v[0] != 1.0 or not v[1]]  # weight 1: names moot
    table = {v: scores(units, v) for v in variants}
    shipped: Variant = (KEY_WEIGHT, False, False, 0)

    source_of = [u["source"] for u in units]

    def objective(idx: list[int], v: Variant) -> float:
        return gs.source_balanced(y, (table[v] >= THRESHOLD).astype(int), source_of, idx)

    print(f"{len(units)} units, {len(sources)} sources; threshold {THRESHOLD}\n")
    print(
        "| request's words out | names key | key weight | one value | HotpotQA "
        "| plain sets, mean (lowest) | false yes / false no | pooled AUC |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for v in variants:
        pred = (table[v] >= THRESHOLD).astype(int)
        by = per_source(units, pred)
        fy = int(((pred == 1) & (y == 0)).sum())
        fn = int(((pred == 0) & (y == 1)).sum())
        low = min(x for s, x in by.items() if s != "HotpotQA")
        cells = ["yes" if v[2] else "no", "yes" if v[1] else "no", f"{v[0]:g}"]
        cells += [("no", "every value", "any value")[v[3]]]
        cells += [f"{by['HotpotQA']:.3f}", f"{mean_plain(by):.3f} ({low:.2f})"]
        cells += [f"{fy} / {fn}", f"{gs.auc(y, table[v]):.3f}"]
        print("| " + " | ".join(cells) + " |")
    # leave one source out: the variant chosen on the other sources (ties: the one that
    # changes least of what is shipped, then the smaller weight, names not counted, the
    # request's words kept, no one-value reading), at the shipped threshold
    pred = np.zeros(len(units), dtype=int)
    chosen: dict[str, Variant] = {}
    for src in sources:
        rest = [i for i, u in enumerate(units) if u["source"] != src]

        def rank(v: Variant, rest: list[int] = rest) -> tuple[float, ...]:
            changes = sum(a != b for a, b in zip(v, shipped, strict=True))
            return (round(objective(rest, v), 9), -changes, -v[0], -v[1], -v[2], -v[3])

        best = max(variants, key=rank)
        chosen[src] = best
        for i, u in enumerate(units):
            if u["source"] == src:
                pred[i] = int(table[best][i] >= THRESHOLD)
    by = per_source(units, pred)
    before = per_source(units, (table[shipped] >= THRESHOLD).astype(int))
    print("\nleave one source out (the variant chosen on the other sources):")
    for s in sources:
        w, n, g, r = chosen[s]
        why = f"weight {w:g}, names {'in' if n else 'out'}, request's words {'out' if g else 'in'}"
        why += ("", ", one value", ", any value")[r]
        print(f"  {s}: {before[s]:.2f} -> {by[s]:.2f}  ({why})")
    print(f"  plain mean {mean_plain(before):.3f} -> {mean_plain(by):.3f}")
    if args.rows:
        print("\nrows whose verdict the LOSO choice turns:")
        base = table[shipped]
        after = np.array([table[chosen[u["source"]]][i] for i, u in enumerate(units)])
        for i, right in gs.turned(y, base, after, THRESHOLD):
            u = units[i]
            print(
                f"  {u['source']}: {base[i]:.2f} -> {after[i]:.2f} ({right}) "
                f"{u['expected']!r} for {u['request']!r}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
