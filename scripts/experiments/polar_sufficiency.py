#!/usr/bin/env python3
"""context_sufficiency on expected answers that start with a yes or a no and go on
(issue 13, tenth round): the blend, against the model's own verdict put on the blend's
scale (judges/retrieval.py, POLAR_SHIFT), on units collected by response_signals.py:

    flock /tmp/cpu.lock .venv/bin/python scripts/experiments/response_signals.py \
        --judge context_sufficiency --set tests/data/plain/context_sufficiency.jsonl ... \
        --only shipped --only same_answer --only right --units U
    .venv/bin/python scripts/experiments/polar_sufficiency.py U [U ...]

Per units file: balanced accuracy at the default threshold on its rows whose expected
answer starts with a yes or a no and goes on (as the judge tells them), for the shipped
blend, the model's verdict alone on the blend's scale ("model"), the larger of the two
("larger", as shipped), and each candidate question in place of the shipped one; then
every row of the file per source, blend against "larger". Recall here is
`lexical.answer_recall` (as collected), not the judge's best over " / " alternatives.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import groundedness_support as gs  # noqa: E402

from localjudge.judges.lexical import answer_word  # noqa: E402
from localjudge.judges.retrieval import ANSWER_WEIGHT, polar_p  # noqa: E402
from localjudge.models.catalogue import default_model_id, load_catalogue  # noqa: E402

Rule = Callable[[dict[str, Any]], float]


def expected(uid: str) -> str:
    e = gs.unit_row(uid).get("expected_response") or ""
    return " / ".join(e) if isinstance(e, list) else str(e)


def blend(u: dict[str, Any], key: str = "shipped") -> float:
    if u["recall"] is None:
        return float(u[key])
    return float(ANSWER_WEIGHT * u["recall"] + (1 - ANSWER_WEIGHT) * u[key])


def rules(keys: Sequence[str]) -> dict[str, Rule]:
    out: dict[str, Rule] = {
        "blend (before)": blend,
        "model": lambda u: polar_p(u["shipped"]) if u["polar"] else blend(u),
        "larger (shipped)": lambda u: (
            max(blend(u), polar_p(u["shipped"])) if u["polar"] else blend(u)
        ),
    }
    for k in keys:
        out[f"larger, {k}"] = _larger(k)
    return out


def _larger(key: str) -> Rule:
    """ "larger" with candidate question `key` in place of the shipped one."""

    def rule(u: dict[str, Any]) -> float:
        return max(blend(u, key), polar_p(u[key])) if u["polar"] else blend(u)

    return rule


def main(argv: Sequence[str] | None = None) -> int:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    t = load_catalogue()[default_model_id()].thresholds["context_sufficiency"]
    for path in paths:
        units = [json.loads(x) for x in path.read_text().splitlines() if x]
        for u in units:
            u["polar"] = u["recall"] is not None and answer_word(expected(u["id"])) is not None
        keys = [k for k in ("same_answer", "right") if k in units[0]]
        polar = [u for u in units if u["polar"]]
        y = np.array([u["label"] for u in polar])
        print(f"{path}: {len(polar)} rows start with a yes or a no and go on ({int(y.sum())} yes)")
        for name, rule in rules(keys).items():
            s = np.array([rule(u) for u in polar])
            p = (s >= t).astype(int)
            print(
                f"  {name}: {gs.balanced(y, p):.3f} {gs.balanced_ci(y, p)}, "
                f"AUC {gs.auc(y, s):.3f}, "
                f"false yes {int(((p == 1) & (y == 0)).sum())}/{int((y == 0).sum())}, "
                f"false no {int(((p == 0) & (y == 1)).sum())}/{int((y == 1).sum())}"
            )
        sources = sorted({u["source"].split()[0] for u in units}, key=lambda g: (len(g), g))
        if len(sources) > 1:
            for name in ("blend (before)", "larger (shipped)"):
                rule = rules(keys)[name]
                cells = []
                for src in sources:
                    sel = [u for u in units if u["source"].split()[0] == src]
                    ys = np.array([u["label"] for u in sel])
                    ps = np.array([rule(u) >= t for u in sel]).astype(int)
                    cells.append(gs.balanced(ys, ps))
                shown = " ".join(f"{c:.2f}" for c in cells)
                print(f"  every row, {name}, per source: {shown} (mean {np.mean(cells):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
