#!/usr/bin/env python3
"""groundedness's threshold with every plain set a source (issue 13, seventeenth round).

On the 30 seen plain groundedness files the shipped judge (threshold 0.5447, fitted on the
dev rows and the first plain set) makes 63 false noes and 10 false yeses in 422 rows: the
faithful short answers sit just under it. Is the threshold, fitted across many more
sources, lower, and does a lower one hold on the sources it was not fitted on? This script
reads `localjudge eval` runs (DATA=RUN pairs; P(grounded) from each row's rating and
probability, so no model is run) and, per source (BEGIN, FaithBench, each SummEdits domain,
each plain set), reports balanced accuracy at the shipped threshold, at a threshold fitted
on every other source (leave one source out), and the thresholds themselves. Two
weightings: every source alike, or the dev sources and the plain sets as two halves of
equal weight (the plain sets outnumber the dev sources three to one).

    flock /tmp/cpu.lock .venv/bin/localjudge eval DATA --judges groundedness \
        --no-rationale --out RUN
    .venv/bin/python scripts/experiments/groundedness_threshold.py --run DATA=RUN ...

Labels are read only to fit and score.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import groundedness_support as gs  # noqa: E402

from localjudge.models.catalogue import default_model_id, load_catalogue  # noqa: E402

PREFIX = "response/llm_judged/groundedness/"
Rows = dict[str, tuple[np.ndarray, np.ndarray]]  # source -> (labels, P(grounded))


def load(pairs: Sequence[str]) -> Rows:
    by: dict[str, tuple[list[int], list[float]]] = {}
    for pair in pairs:
        data, run = pair.split("=", 1)
        items = [json.loads(x) for x in Path(data).read_text().splitlines() if x.strip()]
        for line in Path(run, "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            rating, prob = r.get(PREFIX + "rating"), r.get(PREFIX + "probability")
            if rating is None or prob is None:
                continue
            item = items[r["line"] - 1]
            ys, ps = by.setdefault(gs.source_name(item), ([], []))
            ys.append(1 if item["labels"]["groundedness"] == "yes" else 0)
            ps.append(prob if rating == "yes" else 1.0 - prob)
    return {s: (np.array(y), np.array(p)) for s, (y, p) in by.items()}


def balanced(y: np.ndarray, p: np.ndarray, t: float) -> float:
    return float(gs.balanced(y, (p >= t).astype(int)))


def plain(source: str) -> bool:
    return source.startswith("plain")


def objective(rows: Rows, sources: Sequence[str], t: float, halves: bool) -> float:
    """Mean balanced accuracy over `sources`, or the mean of the dev and plain halves'."""
    if not halves:
        return float(np.mean([balanced(*rows[s], t) for s in sources]))
    parts = [[s for s in sources if plain(s) == side] for side in (False, True)]
    return float(
        np.mean([np.mean([balanced(*rows[s], t) for s in part]) for part in parts if part])
    )


GRID = np.round(np.arange(0.30, 0.76, 0.005), 4)


def fit(rows: Rows, sources: Sequence[str], halves: bool) -> float:
    scores = [objective(rows, sources, float(t), halves) for t in GRID]
    return float(GRID[int(np.argmax(scores))])  # the lowest of ties


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", action="append", required=True, help="DATA=RUN of an eval run")
    args = parser.parse_args(argv)
    rows = load(args.run)
    shipped = load_catalogue()[default_model_id()].thresholds["groundedness"]
    sources = sorted(rows, key=lambda s: (plain(s), s))
    has_dev = any(not plain(s) for s in sources)
    for halves in (False, True) if has_dev else (False,):
        name = "dev and plain halves alike" if halves else "every source alike"
        print(f"## weighting: {name}; fitted on every source: {fit(rows, sources, halves)}")
        print("| source | rows | shipped | held out | threshold fitted on the others |")
        print("|---|---|---|---|---|")
        held: dict[str, float] = {}
        for s in sources:
            t = fit(rows, [o for o in sources if o != s], halves)
            held[s] = balanced(*rows[s], t)
            y = rows[s][0]
            print(f"| {s} | {len(y)} | {balanced(*rows[s], shipped):.2f} | {held[s]:.2f} | {t} |")
        for side, label in ((False, "dev sources"), (True, "plain sets")):
            part = [s for s in sources if plain(s) == side]
            if not part:
                continue
            before = np.mean([balanced(*rows[s], shipped) for s in part])
            after = np.mean([held[s] for s in part])
            print(f"{label}: mean {before:.3f} at {shipped} -> {after:.3f} held out")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
