#!/usr/bin/env python3
"""context_sufficiency's shipped blend against logistic combinations, leaving one source out,
with every plain set a source of its own.

Reads units written by response_signals.py for context_sufficiency (the P(yes) of
candidate questions: `shipped`, `stmt_words`, `qa`), recomputes each row's answer recall
with this checkout's lexical code exactly as the judge does (`best_answer_recall`; None for
a yes/no answer, when the model alone decides), and prints a markdown table of balanced
accuracy per held-out source:

    blend@T       the shipped rule, 0.5 * recall + 0.5 * shipped P, at the catalogue's
                  threshold T (nothing fitted)
    blend LOSO    the same score, its threshold fitted on the other sources
    a+b+...       a logistic model over the questions' logits (and recall as a share),
                  fitted with its threshold on the other sources

No model is run:

    .venv/bin/python scripts/experiments/response_signals.py --judge context_sufficiency \
        --set ../shared/benchmarks/context_sufficiency.jsonl --set tests/data/plain/... \
        --only shipped --only stmt_words --only qa --units U
    .venv/bin/python scripts/experiments/sufficiency_loso.py U
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

from localjudge.judges.lexical import best_answer_recall  # noqa: E402
from localjudge.models.catalogue import default_model_id, load_catalogue  # noqa: E402
from localjudge.records import Record, validate_row  # noqa: E402

COMBINATIONS: dict[str, tuple[str, ...]] = {
    "shipped": ("shipped",),
    "stmt_words": ("stmt_words",),
    "qa": ("qa",),
    "shipped+recall": ("shipped", "recall"),
    "stmt_words+recall": ("stmt_words", "recall"),
    "qa+recall": ("qa", "recall"),
    "shipped+stmt_words": ("shipped", "stmt_words"),
    "shipped+qa": ("shipped", "qa"),
    "shipped+stmt_words+recall": ("shipped", "stmt_words", "recall"),
    "shipped+qa+recall": ("shipped", "qa", "recall"),
}


def _record(unit_id: str, shared: Path) -> Record:
    name, row = unit_id.rsplit(":", 1)
    folder, file = name.split("/")
    base = shared if folder == "benchmarks" else REPO / "tests" / "data" / folder
    item = json.loads((base / file).read_text(encoding="utf-8").splitlines()[int(row)])
    record = validate_row(
        int(row) + 1, {k: v for k, v in item.items() if k not in ("labels", "source")}
    )
    assert isinstance(record, Record), record
    return record


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def table(units: list[dict[str, Any]], threshold: float) -> str:
    groups = sorted({u["group"] for u in units})
    plain = [g for g in groups if g.startswith("plain")]
    others = [g for g in groups if g not in plain]
    y = np.array([u["label"] for u in units], dtype=float)
    blend = np.array([u["blend"] for u in units])
    masks = {g: np.array([u["group"] == g for u in units]) for g in groups}

    def held_out(score_of: Any) -> dict[str, float]:
        out = {}
        for g in groups:
            s, t = score_of(~masks[g])
            out[g] = gs.balanced(y[masks[g]], (s[masks[g]] >= t).astype(int))
        return out

    rows = {
        f"blend@{threshold} (shipped)": held_out(lambda train: (blend, threshold)),
        "blend, threshold LOSO": held_out(
            lambda train: (blend, gs.best_threshold(y[train], blend[train]))
        ),
    }
    for name, feats in COMBINATIONS.items():
        x = np.array(
            [[u[f] if f == "recall" else _logit(u[f]) for f in feats] for u in units], dtype=float
        )

        def fitted(train: Any, x: Any = x) -> tuple[Any, float]:
            s = gs.predict(gs.fit_logistic(x[train], y[train]), x)
            return s, gs.best_threshold(y[train], s[train])

        rows[name] = held_out(fitted)
    head = (
        "| signals | "
        + " | ".join(others)
        + " | plain sets, mean | plain, lowest | "
        + " | ".join(plain)
        + " |"
    )
    lines = [head, "|---|" + "---|" * (len(groups) + 2)]
    for name, per in rows.items():
        cells = [f"{per[g]:.2f}" for g in others]
        cells += [f"{np.mean([per[g] for g in plain]):.3f}", f"{min(per[g] for g in plain):.2f}"]
        cells += [f"{per[g]:.2f}" for g in plain]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    counts = ", ".join(f"{g} {int(masks[g].sum())}" for g in groups)
    return "\n".join(lines) + f"\n\nUnits per source: {counts}.\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("units", type=Path)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "benchmarks")
    args = parser.parse_args(argv)
    threshold = load_catalogue()[default_model_id()].thresholds["context_sufficiency"]
    units = []
    for line in args.units.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        u = json.loads(line)
        record = _record(u["id"], args.shared)
        chunks = [c.content or "" for c in record.retrieved_context or ()]
        recall, _ = best_answer_recall(record.expected_text() or "", chunks)
        u["recall"] = 1.0 if recall is None else recall
        u["blend"] = u["shipped"] if recall is None else 0.5 * recall + 0.5 * u["shipped"]
        u["group"] = gs.source_name({"source": u["source"]})
        units.append(u)
    print(table(units, threshold))
    return 0


if __name__ == "__main__":
    sys.exit(main())
