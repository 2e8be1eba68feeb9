"""localjudge.agreement: every metric against hand-worked arrays, the threshold and band
fits, cross-validation and leave one source out."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from localjudge import agreement
from localjudge.agreement import Rule

# tp 3, fn 1, tn 4, fp 2
Y = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
PRED = [1, 1, 1, 0, 0, 0, 0, 0, 1, 1]


def test_confusion_metrics_by_hand() -> None:
    assert agreement.balanced_accuracy(Y, PRED) == pytest.approx((3 / 4 + 4 / 6) / 2)
    # p_o = 0.7; p_e = ((tp+fp)(tp+fn) + (tn+fn)(tn+fp)) / n² = (5·4 + 5·6) / 100
    pe = (5 * 4 + 5 * 6) / 100
    assert agreement.cohen_kappa(Y, PRED) == pytest.approx((0.7 - pe) / (1 - pe))
    assert agreement.false_yes_rate(Y, PRED) == pytest.approx(2 / 6)  # fp / (tn + fp)
    assert agreement.false_no_rate(Y, PRED) == pytest.approx(1 / 4)  # fn / (tp + fn)


def test_undefined_metrics_are_none_not_numbers() -> None:
    assert agreement.balanced_accuracy([1, 1], [1, 0]) is None  # no human-no unit
    assert agreement.false_yes_rate([1, 1], [1, 0]) is None
    assert agreement.false_no_rate([1, 1], [1, 0]) == 0.5
    assert agreement.cohen_kappa([1, 1], [1, 1]) is None  # p_e = 1
    assert agreement.roc_auc([1, 1], [0.2, 0.9]) is None
    assert agreement.balanced_accuracy([], []) is None


def test_roc_auc_by_hand_counts_ties_half() -> None:
    # yes {0.9, 0.4}, no {0.4, 0.1}: pairs 0.9>0.4, 0.9>0.1, 0.4=0.4 (half), 0.4>0.1
    assert agreement.roc_auc([1, 1, 0, 0], [0.9, 0.4, 0.4, 0.1]) == pytest.approx(3.5 / 4)


@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])),
        min_size=2,
        max_size=30,
    )
)
def test_roc_auc_is_the_share_of_correctly_ordered_pairs(pairs: list[tuple[int, float]]) -> None:
    y = [p[0] for p in pairs]
    s = [p[1] for p in pairs]
    pos = [b for a, b in pairs if a == 1]
    neg = [b for a, b in pairs if a == 0]
    if not pos or not neg:
        assert agreement.roc_auc(y, s) is None
        return
    counted = [1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)]
    assert agreement.roc_auc(y, s) == pytest.approx(sum(counted) / len(counted))


def test_agreement_reports_intervals_from_ten_units_and_coverage() -> None:
    scores = [0.9, 0.8, 0.7, 0.3, 0.2, 0.1, 0.1, 0.2, 0.6, 0.55]
    out = agreement.agreement(Y, PRED, scores)
    assert out["n"] == out["decided"] == 10
    assert out["balanced_accuracy"]["value"] == pytest.approx((3 / 4 + 4 / 6) / 2)
    low, high = out["balanced_accuracy"]["ci95"]
    assert low is not None and high is not None
    assert low <= out["balanced_accuracy"]["value"] <= high
    assert out["auc"]["value"] == pytest.approx(22 / 24)
    assert out["coverage"]["value"] == 1.0
    # The same call gives the same intervals (fixed seed).
    assert agreement.agreement(Y, PRED, scores) == out
    # Below ten units: values, no intervals.
    small = agreement.agreement(Y[:6], PRED[:6], scores[:6])
    assert small["accuracy"]["value"] == pytest.approx(5 / 6)
    assert small["accuracy"]["ci95"] == [None, None]


def test_agreement_on_decided_units_only() -> None:
    # The two wrong verdicts (index 3 and 8) are left undecided.
    decided = [True, True, True, False, True, True, True, True, False, True]
    out = agreement.agreement(Y, PRED, None, decided=decided)
    assert out["decided"] == 8 and out["coverage"]["value"] == pytest.approx(0.8)
    assert out["balanced_accuracy"]["value"] == pytest.approx((1.0 + 4 / 5) / 2)
    assert out["auc"]["value"] is None


def test_grouped_bootstrap_keeps_a_group_together() -> None:
    # Two groups, each a yes and a no: every resample holds both classes.
    y, pred = [1, 0, 1, 0] * 3, [1, 0, 0, 1] * 3
    groups = [0, 0, 1, 1] * 3
    out = agreement.agreement(y, pred, None, groups=groups)
    assert out["balanced_accuracy"]["ci95"][0] is not None
    assert out["balanced_accuracy"]["value"] == pytest.approx(0.5)


def test_rule_decides_yes_no_and_unsure() -> None:
    p = np.array([0.2, 0.45, 0.5, 0.59, 0.6, 0.9])
    pred, decided = Rule(0.5, (0.4, 0.6)).decide(p)
    assert pred.tolist() == [0, 0, 1, 1, 1, 1]
    assert decided.tolist() == [True, False, False, False, True, True]
    assert Rule(0.5).decide(p)[1].all()


def test_fit_threshold_maximises_balanced_accuracy_nearest_half() -> None:
    y = [1, 1, 1, 0, 0, 0]
    assert agreement.fit_threshold(y, [0.3, 0.35, 0.9, 0.05, 0.1, 0.2]) == pytest.approx(0.25)
    assert agreement.fit_threshold([1, 0], [0.8, 0.2]) == 0.5  # separated at 0.5 already
    # 0.65 and 0.3 both give 5/6 balanced accuracy; 0.65 is nearer 0.5.
    p = [0.9, 0.7, 0.4, 0.2, 0.6, 0.1]
    assert agreement.fit_threshold(y, p) == pytest.approx(0.65)
    assert agreement.fit_threshold([1, 1], [0.3, 0.4]) is None


def test_fit_band_keeps_most_units_decided_at_the_target() -> None:
    y = [1, 1, 1, 0, 0, 0]
    p = [0.9, 0.7, 0.4, 0.2, 0.6, 0.1]
    # At 0.65, 0.4 (yes) is wrong; at 0.5, 0.6 (no) too. Leaving 0.4 and 0.6 unsure
    # decides the other four right: [0.3, 0.65).
    assert agreement.fit_band(y, p, 0.65, 0.9) == pytest.approx((0.3, 0.65))
    assert agreement.fit_band(y, p, 0.65, 0.8) == (0.65, 0.65)  # 5/6 already: no band
    assert agreement.fit_band([1, 0], [0.4, 0.6], 0.5, 0.9) is None  # both wrong


def test_stratified_folds_spread_both_classes() -> None:
    y = np.array([1.0] * 6 + [0.0] * 9)
    fold = agreement.stratified_folds(y, None, 3, seed=1)
    for k in range(3):
        assert y[fold == k].sum() == 2 and (fold == k).sum() == 5
    grouped = agreement.stratified_folds(np.array([1.0, 0.0, 1.0, 0.0]), [7, 7, 9, 9], 2, seed=1)
    assert grouped[0] == grouped[1] and grouped[2] == grouped[3]


def test_cross_validation_decides_each_fold_by_the_others() -> None:
    y = [1, 1, 1, 0, 0, 0] * 2
    p = [0.9, 0.7, 0.4, 0.2, 0.6, 0.1] * 2
    seen: list[int] = []

    def fit(yy: np.ndarray, pp: np.ndarray) -> Rule | None:
        seen.append(len(yy))
        return Rule(0.5)

    out = agreement.cross_validate(y, p, fit, folds=3)
    assert out is not None and out["folds"] == 3 and seen == [8, 8, 8]
    # A fixed 0.5 rule: the pooled out-of-fold verdicts are its verdicts on every unit.
    assert out["balanced_accuracy"]["value"] == pytest.approx(
        agreement.balanced_accuracy(y, [1.0 if x >= 0.5 else 0.0 for x in p])
    )
    assert agreement.cross_validate([1, 0, 0], [0.9, 0.1, 0.2], fit) is None  # one yes
    # Against itself as the baseline, a rule gains nothing.
    same = agreement.cross_validate(y, p, fit, folds=3, baseline=[x >= 0.5 for x in p])
    assert same is not None and same["gain"]["value"] == 0.0


def test_leave_one_source_out_fits_on_the_other_sources() -> None:
    # Source a separates at 0.25, source b at 0.75.
    y = [1, 0, 1, 0, 1, 0, 1, 0]
    p = [0.3, 0.2, 0.35, 0.1, 0.8, 0.7, 0.9, 0.6]
    sources = ["a", "a", "a", "a", "b", "b", "b", "b"]
    out = agreement.leave_one_source_out(y, p, sources)
    assert out["sources"]["a"]["threshold"] == pytest.approx(0.75)  # fitted on b
    assert out["sources"]["b"]["threshold"] == pytest.approx(0.25)  # fitted on a
    # b's threshold calls every unit of a no; a's calls every unit of b yes.
    assert out["sources"]["a"]["balanced_accuracy"]["value"] == 0.5
    assert out["sources"]["b"]["false_yes_rate"]["value"] == 1.0
    assert out["pooled"]["n"] == 8
    assert agreement.leave_one_source_out(y, p, ["a"] * 8) == {}


@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.sampled_from([0.05, 0.3, 0.5, 0.62, 0.7, 0.95])),
        min_size=2,
        max_size=25,
    )
)
def test_fit_threshold_is_as_good_as_any_split(pairs: list[tuple[int, float]]) -> None:
    y = [float(a) for a, _ in pairs]
    p = [b for _, b in pairs]
    t = agreement.fit_threshold(y, p)
    if t is None:
        assert len(set(y)) == 1
        return
    # 0.5 and every split of the scores with units on both sides, by brute force
    cuts = [0.5, *(c for c in p if c > min(p))]

    def bal(c: float) -> float:
        value = agreement.balanced_accuracy(y, [1.0 if x >= c else 0.0 for x in p])
        assert value is not None
        return value

    assert bal(t) == pytest.approx(max(bal(c) for c in cuts))


def test_paired_difference_of_balanced_accuracy() -> None:
    y = Y * 2
    better = Y * 2  # every verdict right
    out = agreement.difference(y, better, PRED * 2)
    assert out["value"] == pytest.approx(1 - (3 / 4 + 4 / 6) / 2)
    low, high = out["ci95"]
    assert low is not None and high is not None and 0 < low <= out["value"] <= high
    assert agreement.difference([1, 1], [1, 0], [0, 0])["value"] is None
