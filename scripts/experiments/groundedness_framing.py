#!/usr/bin/env python3
"""groundedness: should a statement that only makes sense as an answer be framed as one?

Issue 13, seventeenth round. Faithful short answers sit under the threshold: "Harold
Marfleet, the village blacksmith." (the passage: "founded in 1926 by the village
blacksmith, Harold Marfleet") has P(supported) 0.57, a list item "A trowel" 0.76, "Thursday
nights, in the back bar of the Cross Keys." 0.46. Alone, such a statement claims nothing a
passage could state; as the answer to the request it does. This script collects, per
labelled row and per statement (the judge's own statements, quantities aligned as the judge
aligns them), the best-passage P(yes) of groundedness's question for each framing in
FRAMINGS ("{s}" is the statement, "{request}" the request, whitespace collapsed):

    flock /tmp/cpu.lock .venv/bin/localjudge eval tests/data/SET/groundedness.jsonl \
        --judges groundedness --no-rationale --out RUNS/SET      (each set: the shipped P)
    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/groundedness_framing.py \
        --set tests/data/plain/groundedness.jsonl ... --units U
    .venv/bin/python scripts/experiments/groundedness_framing.py --analyse U --base RUNS

Only rows with a statement `selected` picks are asked; the others take the shipped P from
the eval runs (`--base`; `docs/runs/issue13-r19-groundedness-framing-units.jsonl` has them
filled in, so it needs no `--base`). The first pass asked every bare answer and list item
(`selected(..., lists=True)`) of plain sets 1-23 and the first nine rows of `plain-lists`;
the rest, only responses of one bare answer.

`--analyse` rates every row with the shipped combination (response.grounded_p, the
catalogue threshold) once with the shipped statements and once with each framing put in
for the statements a rule picks (RULES), or the higher of the framing's and the shipped P,
and prints balanced accuracy per source and the rows that turn. Labels
are read only to score.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
import numpy as np  # noqa: E402

from localjudge.engine.base import VerdictRequest  # noqa: E402
from localjudge.judges.answer_relevancy import _BULLET  # noqa: E402
from localjudge.judges.lexical import missing_key_terms, reply_word  # noqa: E402
from localjudge.judges.response import GROUNDEDNESS_Q, grounded_p, statements  # noqa: E402
from localjudge.judges.support import claim_requests  # noqa: E402
from localjudge.models.catalogue import default_model_id, load_catalogue  # noqa: E402
from localjudge.records import Record  # noqa: E402

FRAMINGS = {
    "shipped": "{s}",
    "qa": "The answer to the request above is: {s}",
}


# Which statements the collection asks framed: "bare" (a response of one bare answer),
# "lists" (every bare answer and list item: the first pass; list items came out worse
# framed, so later passes leave them) or "polar" (a first statement that starts with a yes
# or a no in so many words: "Yes, flood damage is covered."). Set by --select.
SELECT = "bare"


def polar(text: str) -> bool:
    word, explicit = reply_word(text)
    return word is not None and explicit


def selected(record: Record) -> list[bool]:
    texts = statements(record)
    if SELECT == "polar":
        return [i == 0 and polar(t) for i, t in enumerate(texts)]
    if SELECT == "bare":
        return [len(texts) == 1 and fragment(texts[0])]
    items = list_items(record.response or "", len(texts))
    return [fragment(t) or item for t, item in zip(texts, items, strict=True)]


def row_requests(record: Record) -> tuple[list[VerdictRequest], list[tuple[str, int, int]]]:
    """Every framing of each selected statement against each passage; nothing for a row
    without one (its shipped P is the judge's own, from an eval run: --base)."""
    chunks = range(len(record.retrieved_context or ()))
    picked = selected(record)
    reqs: list[VerdictRequest] = []
    keys: list[tuple[str, int, int]] = []
    if not any(picked):
        return reqs, keys
    for si, s in enumerate(statements(record)):
        for name, frame in FRAMINGS.items():
            if name != "shipped" and not picked[si]:
                continue
            # the judge's own prompts (support.claim_requests), one per passage
            reqs += claim_requests(record, "statement", [frame.format(s=s)], GROUNDEDNESS_Q)
            keys += [(name, si, pi) for pi in chunks]
    return reqs, keys


def signals(
    record: Record, keys: Sequence[tuple[str, int, int]], ps: Sequence[float | None]
) -> dict[str, Any]:
    texts = statements(record)
    best: dict[str, list[float | None]] = {}
    for name in FRAMINGS:
        per: list[float | None] = []
        for si in range(len(texts)):
            got = [p for (n, s, _), p in zip(keys, ps, strict=True) if n == name and s == si]
            per.append(None if not got or None in got else max(p for p in got if p is not None))
        best[name] = per
    chunks = [c.content or "" for c in record.retrieved_context or ()]
    return {
        "request_id": record.request_id,
        "statements": texts,
        "list_item": list_items(record.response or "", len(texts)),
        "fragment": [fragment(t) for t in texts],
        "polar": [i == 0 and polar(t) for i, t in enumerate(texts)],
        "best": best if keys else {},
        "key_missing": bool(missing_key_terms(record.response or "", chunks)[1]),
    }


def list_items(response: str, n: int) -> list[bool]:
    """Per statement, whether it comes from a bulleted line (when the lines' statements can
    be lined up with the judge's; otherwise all False)."""
    from localjudge.judges.answer_relevancy import split_statements

    out: list[bool] = []
    for raw in response.splitlines():
        if raw.strip():
            out += [bool(_BULLET.match(raw))] * len(split_statements(raw))
    return out if len(out) == n else [False] * n


# A finite verb or a copula the statement could make a claim with: an auxiliary or modal, a
# contraction, or a word ending as most English past tenses and third-person verbs do.
_VERBISH = re.compile(
    r"\b(?:is|are|was|were|be|been|being|am|has|have|had|do|does|did|can|could|will|would|"
    r"shall|should|may|might|must|need|needs|get|gets|got|go|goes|went|take|takes|took|"
    r"make|makes|made|keep|keeps|kept|give|gives|gave|let|lets|put|puts|come|comes|came|"
    r"run|runs|ran|sell|sells|sold|pay|pays|paid|cost|costs|open|opens|close|closes|"
    r"start|starts|bring|brings|brought|leave|leaves|left|meet|meets|met)\b|"
    r"\w(?:'s|'re|'ll|'d|'ve|n't)\b|\w{2,}ed\b",
    re.IGNORECASE,
)


_SUBJECT = re.compile(r"\b(?:it|they|he|she|you|we|i|there|this|that|these|those)\b", re.IGNORECASE)


def fragment(text: str) -> bool:
    """Whether the statement reads as a bare answer (no verb-like word and no pronoun that
    could be its subject): "Harold Marfleet, the village blacksmith.", "A trowel"."""
    return not _VERBISH.search(text) and not _SUBJECT.search(text)


Rule = Callable[[dict[str, Any], int], bool]
RULES: dict[str, Rule] = {
    "polar replies": lambda u, i: i == 0 and u.get("polar", [False])[0],
    "bare answers": lambda u, i: u["fragment"][i],
    "list items": lambda u, i: u["list_item"][i],
    "bare answers + list items": lambda u, i: u["fragment"][i] or u["list_item"][i],
    "single-statement bare answers": lambda u, i: len(u["statements"]) == 1 and u["fragment"][i],
}
PREFIX = "response/llm_judged/groundedness/"


def analyse(path: Path, base: Path | None) -> None:
    """Rows without a selected statement take their shipped P from the eval runs under
    `base` (one folder per set, named as the set's folder) unless the units have it."""
    units = [json.loads(x) for x in path.read_text().splitlines() if x]
    for u in units:
        if not u["best"]:
            if base is None:
                raise SystemExit(f"{u['id']}: no shipped P in the units; give --base")
            run = base / u["id"].split("/", 1)[0] / "results.jsonl"
            rows = (json.loads(x) for x in run.read_text().splitlines() if x)
            got = next(r for r in rows if r["request_id"] == u["request_id"])
            u["best"] = {"shipped": got[PREFIX + "statement_p_supported"]}
    threshold = load_catalogue()[default_model_id()].thresholds["groundedness"]
    variants: list[tuple[str, str, Rule | None, bool]] = [("shipped", "shipped", None, False)]
    variants += [
        (f"{f}{how}: {r}", f, rule, how == " (max with shipped)")
        for f in FRAMINGS
        if f != "shipped"
        for how in ("", " (max with shipped)")
        for r, rule in RULES.items()
    ]
    sources = sorted({u["source"] for u in units})
    print(f"threshold {threshold}; rows {len(units)}")
    for label, framing, rule, best_of in variants:
        cells, turned, means = [], [0, 0], []
        for s in sources:
            y, pred = [], []
            for u in (u for u in units if u["source"] == s):
                shipped = u["best"]["shipped"]
                # A statement not collected under the framing keeps its shipped P.
                framed = u["best"].get(framing) or [None] * len(shipped)
                ps = [
                    (max(framed[i], shipped[i]) if best_of else framed[i])
                    if rule is not None and rule(u, i) and framed[i] is not None
                    else shipped[i]
                    for i in range(len(shipped))
                ]
                if None in ps or None in shipped:
                    continue
                old = grounded_p(shipped, u["key_missing"]) >= threshold
                new = grounded_p(ps, u["key_missing"]) >= threshold
                if old != new:
                    turned[int(new == bool(u["label"]))] += 1
                    print(f"    {u['request_id']} label {u['label']} -> {int(new)}")
                y.append(u["label"])
                pred.append(int(new))
            b = gs.balanced(np.array(y), np.array(pred))
            means.append(b)
            cells.append(f"{s} {b:.2f}")
        print(
            f"{label}: turned right {turned[1]}, wrong {turned[0]}; mean {np.mean(means):.3f}"
            + "\n  "
            + " | ".join(cells)
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", default=[])
    parser.add_argument("--units", type=Path)
    parser.add_argument("--model", default=None)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--analyse", type=Path)
    parser.add_argument("--select", choices=("bare", "lists", "polar"), default="bare")
    parser.add_argument("--base", type=Path, help="with --analyse: the eval runs' folder")
    args = parser.parse_args(argv)
    if args.analyse:
        analyse(args.analyse, args.base)
        return 0
    global SELECT
    SELECT = args.select
    gs.collect(
        args.set, args.units, args.model, args.threads, "groundedness", row_requests, signals
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
