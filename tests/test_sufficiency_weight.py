"""scripts/experiments/sufficiency_weight.py: the blend it scores is the judge's."""

from __future__ import annotations

from typing import Any

import pytest

from localjudge.api import judge_row
from localjudge.engine.fake import FakeBackend
from localjudge.judges import JudgeOptions, select
from localjudge.records import validate_row
from tests.conftest import load_script

sufficiency_weight = load_script("experiments/sufficiency_weight")

ITEMS = [
    {
        "request": "Who built it?",
        "expected_response": "Gustave Eiffel",
        "retrieved_context": [{"content": "Eiffel's company built the tower."}],
    },
    {
        "request": "Is it taller than 300 m?",
        "expected_response": "yes",
        "retrieved_context": [{"content": "The tower is 330 m tall."}],
    },
]


@pytest.mark.parametrize("item", ITEMS)
def test_the_scored_blend_is_the_judges(item: dict[str, object]) -> None:
    (recall,) = sufficiency_weight.recalls([item])
    unit: dict[str, Any] = {"row": 0, "half": "fit", "source": "s", "label": 1, "p_yes": 0.6}
    weight = 0.5
    ours = unit["p_yes"] if recall is None else weight * recall + (1 - weight) * unit["p_yes"]
    fake = FakeBackend([("yes", 0.6)])
    row = judge_row(
        validate_row(1, item), select(["context_sufficiency"]), fake, JudgeOptions(rationale=False)
    )
    prefix = "retrieval/llm_judged/context_sufficiency"
    p = row[f"{prefix}/probability"]
    judged = p if row[f"{prefix}/rating"] == "yes" else 1 - p
    assert judged == pytest.approx(ours)
    assert row[f"{prefix}/answer_recall"] == recall


def test_weight_zero_is_the_model_alone() -> None:
    units = [
        {"row": i, "half": "fit" if i % 2 == 0 else "report", "source": "s", "label": i % 4 // 2}
        | {"p_yes": 0.2 + 0.1 * i}
        for i in range(8)
    ]
    rows = sufficiency_weight.table(units, [0.0] * 8)
    by_weight = {r["weight"]: r for r in rows}
    # A recall of 0 everywhere only rescales the model's P: the ranking is unchanged.
    assert by_weight[0.0]["fit_half_auc"] == by_weight[0.5]["fit_half_auc"]
    assert [r["weight"] for r in rows] == list(sufficiency_weight.WEIGHTS)
