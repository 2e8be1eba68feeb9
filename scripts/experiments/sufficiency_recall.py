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
from localjudge.judges.retrieval import sufficiency_p  # noqa: E402

PREFIX = "retrieval/llm_judged/context_sufficiency/"
THRESHOLD = 0.7158  # the default model's (models/catalogue.toml)
WEIGHTS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
DEV = REPO.parent / "shared" / "benchmarks" / "context_sufficiency.jsonl"
DEV_UNITS = REPO / "docs" / "runs" / "issue13-r9-sufficiency-units.jsonl"
plain_values = lexical._values
Variant = tuple[float, bool, bool]  # key weight, names count as key terms, request's words out


def with_names(text: str) -> Callable[[Sequence[tuple[str, str]]], list[bool]]:
    """lexical._values, with `text`'s capitalised names (key_terms) as key terms too."""
    names = {t for t in lexical.key_terms(text) if not t[0].isdigit()}

    def values(words: Sequence[tuple[str, str]]) -> list[bool]:
        return [v or w in names for v, (w, _) in zip(plain_values(words), words, strict=True)]

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
    weight, names, given = variant
    try:
        out = []
        for u in units:
            lexical._values = with_names(u["expected"]) if names else plain_values  # type: ignore[assignment]
            asked = u["request"] if given else None
            rec, _ = lexical.best_answer_recall(
                u["expected"], u["chunks"], given=asked, key_weight=weight
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
    args = ap.parse_args(argv)
    units = load(args.run)
    y = np.array([u["label"] for u in units])
    sources = sorted({u["source"] for u in units})
    variants = [(w, n, g) for g in (False, True) for n in (False, True) for w in WEIGHTS]
    variants = [v for v in variants if v[0] != 1.0 or not v[1]]  # weight 1: names moot
    table = {v: scores(units, v) for v in variants}
    shipped: Variant = (1.0, False, False)

    source_of = [u["source"] for u in units]

    def objective(idx: list[int], v: Variant) -> float:
        return gs.source_balanced(y, (table[v] >= THRESHOLD).astype(int), source_of, idx)

    print(f"{len(units)} units, {len(sources)} sources; threshold {THRESHOLD}\n")
    print(
        "| request's words out | names key | key weight | HotpotQA | plain sets, mean (lowest) "
        "| false yes / false no | pooled AUC |"
    )
    print("|---|---|---|---|---|---|---|")
    for v in variants:
        pred = (table[v] >= THRESHOLD).astype(int)
        by = per_source(units, pred)
        fy = int(((pred == 1) & (y == 0)).sum())
        fn = int(((pred == 0) & (y == 1)).sum())
        low = min(x for s, x in by.items() if s != "HotpotQA")
        cells = ["yes" if v[2] else "no", "yes" if v[1] else "no", f"{v[0]:g}"]
        cells += [f"{by['HotpotQA']:.3f}", f"{mean_plain(by):.3f} ({low:.2f})"]
        cells += [f"{fy} / {fn}", f"{gs.auc(y, table[v]):.3f}"]
        print("| " + " | ".join(cells) + " |")
    # leave one source out: the variant chosen on the other sources (ties: the smaller
    # weight, names not counted, the request's words kept), at the shipped threshold
    pred = np.zeros(len(units), dtype=int)
    chosen: dict[str, Variant] = {}
    for src in sources:
        rest = [i for i, u in enumerate(units) if u["source"] != src]
        best = max(variants, key=lambda v: (round(objective(rest, v), 9), -v[0], -v[1], -v[2]))
        chosen[src] = best
        for i, u in enumerate(units):
            if u["source"] == src:
                pred[i] = int(table[best][i] >= THRESHOLD)
    by = per_source(units, pred)
    before = per_source(units, (table[shipped] >= THRESHOLD).astype(int))
    print("\nleave one source out (the variant chosen on the other sources):")
    for s in sources:
        w, n, g = chosen[s]
        why = f"weight {w:g}, names {'in' if n else 'out'}, request's words {'out' if g else 'in'}"
        print(f"  {s}: {before[s]:.2f} -> {by[s]:.2f}  ({why})")
    print(f"  plain mean {mean_plain(before):.3f} -> {mean_plain(by):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
