"""Scores and aggregates, in NumPy, with SPEC §3's formulas and explicit empty cases.

v is a row's verdict vector: 1 for yes, 0 for no, positions i = 0..n-1 in retrieval order.
Every function here is pure; each formula lives in exactly one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

BOOTSTRAP_SEED = 20241121
BOOTSTRAP_RESAMPLES = 2000
MIN_ROWS_FOR_INTERVAL = 10

FloatArray = npt.NDArray[np.float64]


def _vector(v: Sequence[int] | Sequence[float] | FloatArray) -> FloatArray:
    arr = np.asarray(v, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError("a verdict vector must be one-dimensional")
    return arr


def precision(v: Sequence[int] | FloatArray) -> float | None:
    """Chunk precision: Σv / n. None when there are no chunks (n = 0)."""
    arr = _vector(v)
    if arr.size == 0:
        return None
    return float(arr.sum() / arr.size)


def context_position(v: Sequence[int] | FloatArray, scale: float = 1.0) -> float:
    """Mastra's position-weighted score.

    w_i = 1/(i+1); score = scale · Σ w_i·v_i / Σ w_i, the denominator summing over every
    position; 0 when nothing is relevant (or there are no chunks).
    Example: v = [0, 1, 1, 0] gives (1/2 + 1/3) / (1 + 1/2 + 1/3 + 1/4) = 0.40.
    """
    arr = _vector(v)
    if arr.size == 0 or not arr.any():
        return 0.0
    w = 1.0 / np.arange(1, arr.size + 1, dtype=np.float64)
    return float(scale * np.dot(w, arr) / w.sum())


def context_precision(v: Sequence[int] | FloatArray) -> float:
    """Average precision: Σ_k P@k·v_k / Σv with P@k = Σ_{j≤k} v_j / k.

    0 when nothing is relevant (or there are no chunks).
    """
    arr = _vector(v)
    total = arr.sum()
    if arr.size == 0 or total == 0:
        return 0.0
    p_at_k = np.cumsum(arr) / np.arange(1, arr.size + 1, dtype=np.float64)
    return float(np.dot(p_at_k, arr) / total)


def document_recall(expected: Iterable[str], retrieved: Iterable[str]) -> float | None:
    """|E ∩ R| / |E| over distinct doc_uris; None when E is empty."""
    e = set(expected)
    if not e:
        return None
    return len(e & set(retrieved)) / len(e)


def answer_relevancy(
    n_yes: int, n_unsure: int, n: int, uncertainty_weight: float = 0.3, scale: float = 1.0
) -> float:
    """Mastra's answer relevancy: scale · (n_yes + w·n_unsure) / n; 0 when n = 0."""
    if n == 0:
        return 0.0
    return float(scale * (n_yes + uncertainty_weight * n_unsure) / n)


@dataclass(frozen=True)
class Aggregate:
    """A mean over the rows that have a value, its count, and a 95% bootstrap interval."""

    value: float | None
    count: int
    ci_low: float | None
    ci_high: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "value": self.value,
            "count": self.count,
            "ci95_low": self.ci_low,
            "ci95_high": self.ci_high,
        }


def bootstrap_interval(
    values: Sequence[float] | FloatArray,
    *,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean, with a fixed seed (reproducible)."""
    arr = _vector(values)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(resamples, arr.size))
    means = arr[idx].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def aggregate(values: Iterable[float | None]) -> Aggregate:
    """Mean of the non-None values; interval only when there are at least 10 of them."""
    present = [float(x) for x in values if x is not None]
    if not present:
        return Aggregate(None, 0, None, None)
    arr = np.asarray(present, dtype=np.float64)
    mean = float(arr.mean())
    if arr.size >= MIN_ROWS_FOR_INTERVAL:
        low, high = bootstrap_interval(arr)
        return Aggregate(mean, int(arr.size), low, high)
    return Aggregate(mean, int(arr.size), None, None)


def rating_percentage(ratings: Iterable[str | None]) -> Aggregate:
    """Share of "yes" among rows rated yes or no; None and "unsure" ratings are left out."""
    return aggregate({"yes": 1.0, "no": 0.0}.get(r) if r is not None else None for r in ratings)
