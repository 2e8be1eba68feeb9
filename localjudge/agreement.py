"""Agreement between a judge and human labels: pure NumPy, formulas below.

A *unit* is one labelled verdict: a row, or a chunk for chunk judges. y is the human label
(1 yes, 0 no), `pred` the judge's verdict (1 yes, 0 no), `score` its P(yes). With the
counts tp (y=1, pred=1), fn (y=1, pred=0), tn (y=0, pred=0), fp (y=0, pred=1), n = their sum:

- accuracy = (tp + tn) / n
- balanced accuracy = (tp / (tp + fn) + tn / (tn + fp)) / 2
- Cohen's kappa = (p_o - p_e) / (1 - p_e), p_o = accuracy,
  p_e = ((tp + fp)(tp + fn) + (tn + fn)(tn + fp)) / n²
- false-yes rate = fp / (tn + fp): the share of human-"no" units the judge rated yes
- false-no rate = fn / (tp + fn): the share of human-"yes" units the judge rated no
- ROC AUC of the score (Mann-Whitney): the share of (yes, no) unit pairs in which the
  yes unit has the higher score, ties counted half.

A metric whose denominator is 0 (no unit of a class, or p_e = 1) is None, never a number.
Intervals are 95% percentile bootstrap intervals with a fixed seed, from 10 units up
(scoring.MIN_ROWS_FOR_INTERVAL); units can be resampled in groups (the chunks of one row
stay together). A *rule* turns a score into a verdict: yes iff score >= threshold, and,
with an unsure band [low, high), unsure iff low <= score < high; agreement is then
measured on the decided units and `coverage` is their share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from localjudge import scoring

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Values = Sequence[float] | FloatArray

METRICS = (
    "accuracy",
    "balanced_accuracy",
    "kappa",
    "auc",
    "false_yes_rate",
    "false_no_rate",
)


@dataclass(frozen=True)
class Estimate:
    """A point value and its 95% bootstrap interval (None where undefined or too few units)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "ci95": [self.low, self.high]}


@dataclass(frozen=True)
class Rule:
    """A decision rule on P(yes): yes iff p >= threshold; unsure iff low <= p < high."""

    threshold: float
    band: tuple[float, float] | None = None

    def decide(self, p: FloatArray) -> tuple[FloatArray, BoolArray]:
        """(verdicts 1/0, decided mask) for the scores `p`."""
        pred = (p >= self.threshold).astype(np.float64)
        if self.band is None:
            return pred, np.ones(p.shape, dtype=bool)
        low, high = self.band
        return pred, ~((p >= low) & (p < high))


def _arr(values: Values) -> FloatArray:
    return np.asarray(values, dtype=np.float64)


def _div(a: FloatArray, b: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def confusion_metrics(
    y: FloatArray, pred: FloatArray, weights: FloatArray
) -> dict[str, FloatArray]:
    """Every metric but AUC for each row of `weights` (shape (B, n): how often each unit
    counts, as in a bootstrap resample); NaN where undefined."""
    tp = weights @ (y * pred)
    fn = weights @ (y * (1 - pred))
    tn = weights @ ((1 - y) * (1 - pred))
    fp = weights @ ((1 - y) * pred)
    n = tp + fn + tn + fp
    tpr, tnr = _div(tp, tp + fn), _div(tn, tn + fp)
    accuracy = _div(tp + tn, n)
    pe = _div((tp + fp) * (tp + fn) + (tn + fn) * (tn + fp), n * n)
    kappa = _div(accuracy - pe, np.where(np.isnan(pe), 0.0, 1.0 - pe))
    return {
        "accuracy": accuracy,
        "balanced_accuracy": (tpr + tnr) / 2,
        "kappa": kappa,
        "false_yes_rate": 1.0 - tnr,
        "false_no_rate": 1.0 - tpr,
    }


def weighted_auc(y: FloatArray, score: FloatArray, weights: FloatArray) -> FloatArray:
    """ROC AUC (ties half) for each row of `weights` (B, n); NaN without both classes.

    Units with equal scores are pooled: AUC = Σ_k P_k (N_<k + N_k / 2) / (ΣP ΣN), with P_k
    and N_k the weight of yes and no units at the k-th distinct score, N_<k that below it.
    """
    if score.size == 0:
        return np.full(weights.shape[0], np.nan)
    order = np.argsort(score, kind="stable")
    ordered = score[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    pos = np.add.reduceat((weights * y)[:, order], starts, axis=1)
    neg = np.add.reduceat((weights * (1 - y))[:, order], starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    pairs = pos.sum(axis=1) * neg.sum(axis=1)
    return _div((pos * (below + neg / 2)).sum(axis=1), pairs)


def _point(y: FloatArray, pred: FloatArray, score: FloatArray | None) -> dict[str, float | None]:
    ones = np.ones((1, y.size))
    out = {k: v[0] for k, v in confusion_metrics(y, pred, ones).items()}
    out["auc"] = weighted_auc(y, score, ones)[0] if score is not None else np.nan
    return {k: None if np.isnan(v) else float(v) for k, v in out.items()}


def balanced_accuracy(y: Values, pred: Values) -> float | None:
    return _point(_arr(y), _arr(pred), None)["balanced_accuracy"]


def cohen_kappa(y: Values, pred: Values) -> float | None:
    return _point(_arr(y), _arr(pred), None)["kappa"]


def false_yes_rate(y: Values, pred: Values) -> float | None:
    """fp / (tn + fp): the share of human-"no" units the judge rated yes."""
    return _point(_arr(y), _arr(pred), None)["false_yes_rate"]


def false_no_rate(y: Values, pred: Values) -> float | None:
    """fn / (tp + fn): the share of human-"yes" units the judge rated no."""
    return _point(_arr(y), _arr(pred), None)["false_no_rate"]


def roc_auc(y: Values, score: Values) -> float | None:
    s = _arr(score)
    return _point(_arr(y), np.zeros(s.size), s)["auc"]


# Resamples drawn at a time: bounds memory at BATCH x units weights.
BATCH = 250


def _resamples(
    n: int, groups: Sequence[int] | None, seed: int, resamples: int
) -> Iterator[FloatArray]:
    """Bootstrap weights in batches of (≤ BATCH, n): how often each unit is drawn, whole
    groups at a time (units of one group are drawn together)."""
    if groups is None:
        group = np.arange(n)
    else:
        _, group = np.unique(np.asarray(groups), return_inverse=True)
    n_groups = int(group.max()) + 1 if n else 0
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, BATCH):
        size = min(BATCH, resamples - start)
        draws = rng.integers(0, n_groups, size=(size, n_groups))
        counts = np.zeros((size, n_groups))
        np.add.at(counts, (np.arange(size)[:, None], draws), 1.0)
        yield counts[:, group]


def _bootstrap(
    n: int,
    groups: Sequence[int] | None,
    seed: int,
    resamples: int,
    statistics: Callable[[FloatArray], dict[str, FloatArray]],
) -> dict[str, FloatArray]:
    """`statistics` (a dict of per-resample arrays) over every bootstrap resample."""
    batches = [statistics(w) for w in _resamples(n, groups, seed, resamples)]
    return {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}


def _interval(samples: FloatArray) -> tuple[float | None, float | None]:
    kept = samples[~np.isnan(samples)]
    if kept.size == 0:
        return None, None
    low, high = np.percentile(kept, [2.5, 97.5])
    return float(low), float(high)


def agreement(
    y: Values,
    pred: Values,
    score: Values | None = None,
    *,
    decided: Sequence[bool] | BoolArray | None = None,
    groups: Sequence[int] | None = None,
    seed: int = scoring.BOOTSTRAP_SEED,
    resamples: int = scoring.BOOTSTRAP_RESAMPLES,
) -> dict[str, Any]:
    """n, coverage and every metric of METRICS with its interval, on the decided units.

    `decided` (default: all) marks the units the rule did not rate unsure; the metrics are
    those of the decided units, `coverage` = decided / n. AUC ranks every unit's score
    (a band does not change a ranking). Returns a JSON-ready dict: {"n", "decided",
    "coverage": Estimate, metric: Estimate, ...} (Estimates as dicts).
    """
    ya, pa = _arr(y), _arr(pred)
    sa = None if score is None else _arr(score)
    dm = np.ones(ya.size, dtype=bool) if decided is None else np.asarray(decided, dtype=bool)
    out: dict[str, Any] = {"n": int(ya.size), "decided": int(dm.sum())}
    point = _point(ya[dm], pa[dm], None)
    point["auc"] = _point(ya, pa, sa)["auc"] if sa is not None else None
    point["coverage"] = float(dm.mean()) if ya.size else None
    if ya.size < scoring.MIN_ROWS_FOR_INTERVAL:
        ests = {k: Estimate(v) for k, v in point.items()}
    else:

        def statistics(w: FloatArray) -> dict[str, FloatArray]:
            out = confusion_metrics(ya, pa, w * dm)
            if sa is not None:
                out["auc"] = weighted_auc(ya, sa, w)
            out["coverage"] = _div(w @ dm.astype(np.float64), w.sum(axis=1))
            return out

        samples = _bootstrap(ya.size, groups, seed, resamples, statistics)
        ests = {
            k: Estimate(v, *(_interval(samples[k]) if v is not None else (None, None)))
            for k, v in point.items()
        }
    out["coverage"] = ests.pop("coverage").as_dict()
    out.update({k: ests[k].as_dict() for k in METRICS})
    return out


def at_rule(
    y: Values,
    score: Values,
    rule: Rule,
    groups: Sequence[int] | None = None,
) -> dict[str, Any]:
    """`agreement` of the verdicts `rule` gives the scores."""
    s = _arr(score)
    pred, decided = rule.decide(s)
    return agreement(y, pred, s, decided=decided, groups=groups)


def _candidates(p: FloatArray) -> FloatArray:
    """0.5 and the midpoints between consecutive distinct scores, to 7 decimals (scores
    are reported to 6, so a rounded midpoint still lies strictly between its two)."""
    values = np.unique(p)
    return np.concatenate([[0.5], np.round((values[:-1] + values[1:]) / 2, 7)])


def fit_threshold(y: Values, p: Values) -> float | None:
    """The threshold on P(yes) that maximises balanced accuracy on (y, p).

    Candidates are 0.5 and the midpoints between consecutive distinct scores; among equally
    good ones the nearest to 0.5 (the least fitted) wins. None without both classes.
    """
    ya, pa = _arr(y), _arr(p)
    if not (ya == 1).any() or not (ya == 0).any():
        return None
    values, group = np.unique(pa, return_inverse=True)
    # yes at or above distinct value k: suffix sums of each class's count per value
    pos_above = np.cumsum(np.bincount(group, weights=ya)[::-1])[::-1]
    neg_above = np.cumsum(np.bincount(group, weights=1 - ya)[::-1])[::-1]
    pos_above, neg_above = np.r_[pos_above, 0.0], np.r_[neg_above, 0.0]
    cands = _candidates(pa)
    # candidate 0 is 0.5; candidate k >= 1 lies between distinct values k-1 and k
    first = np.r_[np.searchsorted(values, 0.5, side="left"), np.arange(1, values.size)]
    tpr = pos_above[first] / ya.sum()
    tnr = 1.0 - neg_above[first] / (1 - ya).sum()
    bal = np.round((tpr + tnr) / 2, 12)
    best = np.flatnonzero(bal == bal.max())
    return float(cands[best[np.argmin(np.abs(cands[best] - 0.5))]])


# At most this many band edges are tried on each side of the threshold.
MAX_EDGES = 80


def fit_band(
    y: Values,
    p: Values,
    threshold: float,
    target: float,
) -> tuple[float, float] | None:
    """The unsure band [low, high) around `threshold` that keeps the most units decided
    while balanced accuracy on the decided units reaches `target` (both classes must stay
    among them); among equally wide coverage, the narrowest. Edges are midpoints between
    consecutive distinct scores. (threshold, threshold), a band that holds nothing, when
    the threshold alone reaches the target; None when no band reaches it.
    """
    ya, pa = _arr(y), _arr(p)
    cands = _candidates(pa)[1:]
    lows = np.concatenate([[threshold], np.sort(cands[cands < threshold])[::-1]])
    highs = np.concatenate([[threshold], np.sort(cands[cands > threshold])])
    lows, highs = lows[: MAX_EDGES + 1], highs[: MAX_EDGES + 1]
    pred = (pa >= threshold).astype(np.float64)
    # decided[i, j, u]: unit u decided with low = lows[i], high = highs[j]
    decided = (pa[None, None, :] < lows[:, None, None]) | (
        pa[None, None, :] >= highs[None, :, None]
    )
    w = decided.reshape(-1, pa.size).astype(np.float64)
    bal = np.round(confusion_metrics(ya, pred, w)["balanced_accuracy"], 12)
    coverage = w.mean(axis=1)
    width = (highs[None, :] - lows[:, None]).reshape(-1)
    ok = np.nan_to_num(bal, nan=-1.0) >= target
    if not ok.any():
        return None
    if ok[0]:
        return threshold, threshold
    order = np.lexsort((width, -coverage))
    best = next(int(i) for i in order if ok[i])
    i, j = divmod(best, highs.size)
    return float(lows[i]), float(highs[j])


Fitter = Callable[[FloatArray, FloatArray], Rule | None]


def stratified_folds(
    y: FloatArray, groups: Sequence[int] | None, folds: int, seed: int
) -> npt.NDArray[np.int64]:
    """A fold number per unit: groups (default: each unit) are shuffled with a fixed seed
    within their majority label and dealt out in turn, so each fold has both classes."""
    group = np.arange(y.size) if groups is None else np.unique(groups, return_inverse=True)[1]
    n_groups = int(group.max()) + 1 if y.size else 0
    share = np.bincount(group, weights=y, minlength=n_groups) / np.bincount(
        group, minlength=n_groups
    )
    rng = np.random.default_rng(seed)
    fold_of_group = np.zeros(n_groups, dtype=np.int64)
    start = 0
    for majority in (1, 0):
        members = np.flatnonzero((share >= 0.5) == bool(majority))
        rng.shuffle(members)
        fold_of_group[members] = (start + np.arange(members.size)) % folds
        start += members.size
    return fold_of_group[group]


def cross_validate(
    y: Values,
    p: Values,
    fit: Fitter,
    *,
    folds: int = 5,
    groups: Sequence[int] | None = None,
    seed: int = scoring.BOOTSTRAP_SEED,
    baseline: Values | None = None,
) -> dict[str, Any] | None:
    """`agreement` of out-of-fold verdicts: each fold (stratified_folds) is decided by the
    rule `fit` makes on the other folds. With `baseline` verdicts, "gain" is the balanced
    accuracy of the out-of-fold verdicts minus the baseline's (`difference`). The number of
    folds is cut to what the rarer class allows; None below 2 folds or when a fold's rule
    cannot be fitted."""
    ya, pa = _arr(y), _arr(p)
    folds = min(folds, int(min((ya == 1).sum(), (ya == 0).sum())))
    if folds < 2:
        return None
    fold = stratified_folds(ya, groups, folds, seed)
    pred = np.zeros(ya.size)
    decided = np.ones(ya.size, dtype=bool)
    for k in range(folds):
        held = fold == k
        rule = fit(ya[~held], pa[~held])
        if rule is None:
            return None
        pred[held], decided[held] = rule.decide(pa[held])
    out = {"folds": folds, **agreement(ya, pred, pa, decided=decided, groups=groups)}
    if baseline is not None:
        out["gain"] = difference(ya, pred, baseline, groups=groups)
    return out


def difference(
    y: Values,
    pred_a: Values,
    pred_b: Values,
    *,
    groups: Sequence[int] | None = None,
    seed: int = scoring.BOOTSTRAP_SEED,
    resamples: int = scoring.BOOTSTRAP_RESAMPLES,
) -> dict[str, Any]:
    """Balanced accuracy of verdicts a minus that of verdicts b on the same units, with a
    paired bootstrap interval (both scored on each resample), from 10 units up."""
    ya, a, b = _arr(y), _arr(pred_a), _arr(pred_b)
    ones = np.ones((1, ya.size))
    point = (
        confusion_metrics(ya, a, ones)["balanced_accuracy"]
        - confusion_metrics(ya, b, ones)["balanced_accuracy"]
    )[0]
    if np.isnan(point):
        return Estimate(None).as_dict()
    if ya.size < scoring.MIN_ROWS_FOR_INTERVAL:
        return Estimate(float(point)).as_dict()

    def statistics(w: FloatArray) -> dict[str, FloatArray]:
        bal_a = confusion_metrics(ya, a, w)["balanced_accuracy"]
        return {"difference": bal_a - confusion_metrics(ya, b, w)["balanced_accuracy"]}

    samples = _bootstrap(ya.size, groups, seed, resamples, statistics)["difference"]
    return Estimate(float(point), *_interval(samples)).as_dict()


def leave_one_source_out(
    y: Values,
    p: Values,
    sources: Sequence[str],
    groups: Sequence[int] | None = None,
) -> dict[str, Any]:
    """For each source: the threshold fitted (fit_threshold) on every other source and the
    agreement it gives on this one; "pooled": the agreement of all those held-out verdicts
    together. Empty with fewer than two sources."""
    ya, pa = _arr(y), _arr(p)
    src = np.asarray(sources, dtype=object)
    names = sorted(set(sources))
    if len(names) < 2:
        return {}
    per: dict[str, Any] = {}
    pred = np.full(ya.size, np.nan)
    for name in names:
        held = src == name
        threshold = fit_threshold(ya[~held], pa[~held])
        if threshold is None:
            per[name] = {"threshold": None, "n": int(held.sum())}
            continue
        pred[held] = (pa[held] >= threshold).astype(np.float64)
        sub = None if groups is None else [g for g, h in zip(groups, held, strict=True) if h]
        per[name] = {
            "threshold": threshold,
            **agreement(ya[held], pred[held], pa[held], groups=sub),
        }
    done = ~np.isnan(pred)
    pooled_groups = None if groups is None else [g for g, d in zip(groups, done, strict=True) if d]
    pooled = agreement(ya[done], pred[done], pa[done], groups=pooled_groups)
    return {"sources": per, "pooled": pooled}
