"""Scores and aggregates, in NumPy, with SPEC §3's formulas and explicit empty cases.

v is a row's verdict vector: 1 for yes, 0 for no, positions i = 0..n-1 in retrieval order.
Every function here is pure; each formula lives in exactly one place.
"""

from __future__ import annotations

import math
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
    """Percentile bootstrap 95% interval of the mean, with a fixed seed (reproducible).
    See `histogram_bootstrap` for how it is drawn."""
    distinct, counts = np.unique(_vector(values), return_counts=True)
    return histogram_bootstrap(distinct, counts, seed=seed, resamples=resamples)


# Resamples drawn at once: bounds the (resamples x distinct values) count matrix.
_RESAMPLE_CHUNK = 64


def histogram_bootstrap(
    distinct: FloatArray,
    counts: npt.NDArray[np.int64],
    *,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean of n = Σcounts values, given as their
    distinct values (ascending) and how often each occurs.

    Resampling n rows with replacement draws each distinct value a Multinomial(n, counts/n)
    number of times, so each resample is drawn as those counts: the same distribution as
    resampling the rows themselves (exact, not an approximation), in memory proportional to
    the number of distinct values rather than rows x resamples, and independent of the
    rows' order.
    """
    n = int(counts.sum())
    pvals = counts / n
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, _RESAMPLE_CHUNK):
        size = min(_RESAMPLE_CHUNK, resamples - start)
        drawn = rng.multinomial(n, pvals, size=size)
        means[start : start + size] = (drawn @ distinct) / n
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


# The most distinct values a MeanAccumulator keeps exactly (see its docstring).
MAX_DISTINCT = 1 << 16


class MeanAccumulator:
    """A mean over a stream of values with its count and bootstrap interval, in memory
    bounded by the number of distinct values, not rows.

    The mean is exact (the correctly rounded sum, then divided by the count). The interval
    is drawn from the values' histogram (`histogram_bootstrap`). Every aggregate of the
    built-in judges takes few distinct values (yes/no, or ratios of small counts); should
    a stream have more than MAX_DISTINCT, the histogram is coarsened to a grid whose step
    doubles as needed (starting at 2^-20), which moves the interval by at most half a step.
    """

    def __init__(self) -> None:
        self.count = 0
        self._partials: list[float] = []
        self._histogram: dict[float, int] = {}
        self._step = 0.0

    def add(self, x: float) -> None:
        self.count += 1
        _add_exact(self._partials, x)
        key = round(x / self._step) * self._step if self._step else x
        self._histogram[key] = self._histogram.get(key, 0) + 1
        if len(self._histogram) > MAX_DISTINCT:
            self._coarsen()

    def _coarsen(self) -> None:
        while len(self._histogram) > MAX_DISTINCT:
            self._step = self._step * 2 if self._step else 2.0**-20
            coarse: dict[float, int] = {}
            for value, c in self._histogram.items():
                key = round(value / self._step) * self._step
                coarse[key] = coarse.get(key, 0) + c
            self._histogram = coarse

    def result(self) -> Aggregate:
        """The mean, its count, and (from MIN_ROWS_FOR_INTERVAL values up) its interval."""
        if not self.count:
            return Aggregate(None, 0, None, None)
        mean = math.fsum(self._partials) / self.count
        if self.count < MIN_ROWS_FOR_INTERVAL:
            return Aggregate(mean, self.count, None, None)
        distinct = np.array(sorted(self._histogram), dtype=np.float64)
        counts = np.array([self._histogram[v] for v in distinct.tolist()], dtype=np.int64)
        low, high = histogram_bootstrap(distinct, counts)
        return Aggregate(mean, self.count, low, high)


def _add_exact(partials: list[float], x: float) -> None:
    """Add x to a sum kept exactly as non-overlapping partials (Shewchuk's algorithm, the
    one behind math.fsum), so the stream's sum is exact whatever its length."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo:
            partials[i] = lo
            i += 1
        x = hi
    partials[i:] = [x]


def aggregate(values: Iterable[float | None]) -> Aggregate:
    """Mean of the non-None values; interval only when there are at least 10 of them."""
    acc = MeanAccumulator()
    for x in values:
        if x is not None:
            acc.add(float(x))
    return acc.result()


def rating_value(rating: str | None) -> float | None:
    """A rating as a value to average: 1 for "yes", 0 for "no"; None for no rating and for
    "unsure" (a row inside a calibration's unsure band is counted apart, not averaged)."""
    return {"yes": 1.0, "no": 0.0}.get(rating) if rating is not None else None


def rating_percentage(ratings: Iterable[str | None]) -> Aggregate:
    """Share of "yes" among rows rated yes or no; None and "unsure" ratings are left out."""
    return aggregate(rating_value(r) for r in ratings)
