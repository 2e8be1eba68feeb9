#!/usr/bin/env python3
"""groundedness refitted on every dev row, with and without `key_missing` (issue 13, twelfth
round).

Units: every row of the two dev files, each statement's best-passage P(yes) read from one
`localjudge eval` run per file (`statement_p_supported`), and the plain sets' units
(`groundedness_refit.py`, question A). `key_missing` is computed here from each row, as the
judge computes it. The combination is fitted on the dev rows and the first plain set (the
plain-holdout sets only report), leaving each source out in turn (every SummEdits domain,
BEGIN, FaithBench, every plain set), and once on all of them: the weights and threshold to
ship.

    flock /tmp/cpu.lock .venv/bin/localjudge eval ../shared/benchmarks/groundedness.jsonl \
        --judges groundedness --no-rationale --out OUT1   (and groundedness_summedits.jsonl)
    .venv/bin/python scripts/experiments/groundedness_dev_refit.py \
        --eval ../shared/benchmarks/groundedness.jsonl=OUT1 \
        --eval ../shared/benchmarks/groundedness_summedits.jsonl=OUT2 \
        --write-units docs/runs/issue13-r14-groundedness-dev-units.jsonl \
        --plain docs/runs/issue13-r14-groundedness-plain-units.jsonl
    .venv/bin/python scripts/experiments/groundedness_dev_refit.py \
        --units docs/runs/issue13-r14-groundedness-dev-units.jsonl \
        --plain docs/runs/issue13-r14-groundedness-plain-units.jsonl

Labels are read only to score and fit.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402
import plain_sources as ps  # noqa: E402
from groundedness_together import key_missing  # noqa: E402

from localjudge.judges.support import logit  # noqa: E402

PREFIX = "response/llm_judged/groundedness"


def from_eval(pairs: Sequence[str]) -> list[dict[str, Any]]:
    """Units from `localjudge eval` runs (DATA=OUT): each dev row's statements' best P, its
    source and label, and the run's own rating."""
    units = []
    for pair in pairs:
        data, run = pair.split("=", 1)
        items = [json.loads(x) for x in Path(data).read_text().splitlines() if x.strip()]
        for line in Path(run, "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            best = r.get(f"{PREFIX}/statement_p_supported") or []
            if r.get("error") or r.get(f"{PREFIX}/error_message") or not best or None in best:
                continue
            n = r["line"] - 1
            item = items[n]
            units.append(
                {
                    "id": f"benchmarks/{Path(data).name}:{n}",
                    "source": gs.source_name(item),
                    "label": 1 if item["labels"]["groundedness"] == "yes" else 0,
                    "best": {"A": best},
                    "rating": r[f"{PREFIX}/rating"],
                }
            )
    return units


def derived(raw: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for u in raw:
        z = [logit(min(max(p, 1e-6), 1 - 1e-6)) for p in u["best"]["A"]]
        out.append(
            {
                **{k: u[k] for k in ("id", "source", "label")},
                "mean_logit": sum(z) / len(z),
                "min_logit": min(z),
                "log_statements": math.log(len(z)),
                "key_missing": 1.0 if key_missing(u["id"]) else 0.0,
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eval", action="append", default=[], help="DATA=OUT of an eval run")
    parser.add_argument("--units", type=Path, help="dev units written by --write-units")
    parser.add_argument("--write-units", type=Path)
    parser.add_argument("--plain", type=Path, required=True, help="plain sets' units")
    args = parser.parse_args(argv)
    raw = from_eval(args.eval)
    if args.units:
        raw += [json.loads(x) for x in args.units.read_text().splitlines() if x]
    if args.write_units:
        args.write_units.write_text("".join(json.dumps(u) + "\n" for u in raw))
    raw += [json.loads(x) for x in args.plain.read_text().splitlines() if x]
    units = derived(raw)

    def may_fit(g: str) -> bool:
        return not g.startswith("plain-holdout")

    for name, feats in (("support", ps.SUPPORT), ("support + key_missing", ps.WITH_KEY)):
        ps.show(
            f"{name}, held out, fitted on dev + first plain set",
            units,
            *ps.held_out(units, feats, may_fit),
        )
        ps.show(
            f"{name}, held out, fitted on every other source",
            units,
            *ps.held_out(units, feats, bool),
        )
        fit = [u for u in units if may_fit(ps.group(u))]
        x = np.array([gs.features(u, feats) for u in fit])
        y = np.array([u["label"] for u in fit])
        w = gs.fit_logistic(x, y)
        t = gs.best_threshold(y, gs.predict(w, x))
        print(
            f"  fitted on all {len(fit)} dev + first plain set rows: intercept {w[0]:.4f}, "
            + ", ".join(f"{f} {v:.4f}" for f, v in zip(feats, w[1:], strict=True))
            + f"; threshold {t:.4f}"
        )
        score = gs.predict(w, np.array([gs.features(u, feats) for u in units]))
        ps.show(
            f"{name}, that fit on every row (in sample for the fitted ones)",
            units,
            (score >= t).astype(int),
            score,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
