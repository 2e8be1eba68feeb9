"""Every formula of SPEC §3 against hand-worked arrays, with the empty cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from localjudge import scoring


def test_context_position_spec_example() -> None:
    # (1/2 + 1/3) / (1 + 1/2 + 1/3 + 1/4) = (5/6) / (25/12) = 0.4
    assert scoring.context_position([0, 1, 1, 0]) == pytest.approx(0.40)


@pytest.mark.parametrize(
    ("v", "expected"),
    [
        ([1], 1.0),
        ([0], 0.0),
        ([], 0.0),
        ([0, 0, 0], 0.0),
        ([1, 1, 1], 1.0),
        ([1, 0], 1 / 1.5),
        ([0, 1], 0.5 / 1.5),
        ([0, 0, 1], (1 / 3) / (1 + 1 / 2 + 1 / 3)),
    ],
)
def test_context_position_hand_worked(v: list[int], expected: float) -> None:
    assert scoring.context_position(v) == pytest.approx(expected)


def test_context_position_scale() -> None:
    assert scoring.context_position([0, 1, 1, 0], scale=10) == pytest.approx(4.0)


@pytest.mark.parametrize(
    ("v", "expected"),
    [
        ([1, 0, 1], (1 / 1 + 2 / 3) / 2),  # P@1 = 1, P@3 = 2/3
        ([0, 1, 1, 0], (1 / 2 + 2 / 3) / 2),
        ([0, 0, 0], 0.0),
        ([], 0.0),
        ([1, 1], 1.0),
        ([0, 0, 1], 1 / 3),
    ],
)
def test_context_precision_hand_worked(v: list[int], expected: float) -> None:
    assert scoring.context_precision(v) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("v", "expected"), [([1, 0, 1, 0], 0.5), ([1], 1.0), ([0, 0], 0.0), ([], None)]
)
def test_precision(v: list[int], expected: float | None) -> None:
    assert scoring.precision(v) == expected


def test_document_recall() -> None:
    assert scoring.document_recall(["a", "b"], ["b", "c", "b"]) == 0.5
    assert scoring.document_recall(["a", "a"], ["a"]) == 1.0  # distinct uris
    assert scoring.document_recall([], ["a"]) is None
    assert scoring.document_recall(["a"], []) == 0.0


def test_answer_relevancy() -> None:
    assert scoring.answer_relevancy(2, 1, 4) == pytest.approx((2 + 0.3) / 4)
    assert scoring.answer_relevancy(0, 2, 2, uncertainty_weight=0.5) == pytest.approx(0.5)
    assert scoring.answer_relevancy(0, 0, 0) == 0.0


def test_aggregate_counts_and_interval() -> None:
    few = scoring.aggregate([1.0, 0.0, None, 0.5])
    assert few.value == pytest.approx(0.5)
    assert few.count == 3
    assert few.ci_low is None and few.ci_high is None

    values = [float(x) for x in [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1, 0]]
    many = scoring.aggregate(values)
    assert many.count == 12
    assert many.value == pytest.approx(np.mean(values))
    assert many.ci_low is not None and many.ci_high is not None and many.value is not None
    assert many.ci_low <= many.value <= many.ci_high
    # Fixed seed: the same values give the same interval.
    again = scoring.aggregate(values)
    assert (again.ci_low, again.ci_high) == (many.ci_low, many.ci_high)


def test_aggregate_empty() -> None:
    empty = scoring.aggregate([None, None])
    assert empty.value is None and empty.count == 0


def test_rating_percentage() -> None:
    agg = scoring.rating_percentage(["yes", "no", None, "yes"])
    assert agg.value == pytest.approx(2 / 3)
    assert agg.count == 3


def test_bootstrap_interval_constant() -> None:
    low, high = scoring.bootstrap_interval([0.7] * 20)
    assert math.isclose(low, 0.7) and math.isclose(high, 0.7)
