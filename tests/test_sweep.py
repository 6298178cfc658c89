"""The ``sweep`` oracle (thresholds, stumps) against the independent brute force.

Exactness is the product: the re-scored objective must equal the brute-force optimum (within the
result's own tolerance) and the answer must be certified. Thresholds must sit strictly between
distinct training values (or at +-inf) whenever a float exists there, so re-scoring is unambiguous.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from brute_force import brute_stump, brute_threshold
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import instances, labels, points, signed_weights, wild_floats_column

from oraclepriv import Stump, Threshold, make_oracle

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

STUMP = make_oracle("stump")
THRESHOLD = make_oracle("threshold")


def assert_cut_between(column: np.ndarray, t: float, sign: int) -> None:
    """t is +-inf, or strictly between two consecutive distinct values of ``column``, or — only if
    no float lies strictly between them — the endpoint that keeps the cut on the right side."""
    if math.isinf(t):
        return
    values = np.unique(column)
    below, above = values[values < t], values[values > t]
    if t not in values:
        assert below.size and above.size, f"finite threshold {t!r} outside the data range {values}"
        return
    if sign == 1:  # h = 1 iff x >= t: t is the upper value of the pair it separates
        assert below.size, f"threshold {t!r} (sign +1) equals the smallest value: should be -inf"
        lower = below.max()
        assert np.nextafter(lower, np.inf) == t, (
            f"threshold {t!r} sits on a training value, but floats exist in ({lower!r}, {t!r})"
        )
    else:  # h = 1 iff x <= t: t is the lower value of the pair
        assert above.size, f"threshold {t!r} (sign -1) equals the largest value: should be +inf"
        upper = above.min()
        assert np.nextafter(t, np.inf) == upper, (
            f"threshold {t!r} sits on a training value, but floats exist in ({t!r}, {upper!r})"
        )


def check_stump(X: np.ndarray, y: np.ndarray, w: np.ndarray):
    res = STUMP.solve(X, y, w)
    expected = brute_stump(X, y, w)
    assert isinstance(res.hypothesis, Stump)
    assert res.backend == "sweep" and res.status == "optimal"
    assert abs(res.objective - expected) <= res.tolerance, (res.objective, expected, res.hypothesis)
    assert res.certified, (res.objective, res.bound, res.tolerance)
    # the objective is the hypothesis's own re-scoring on the signed problem
    assert res.objective == res.hypothesis.loss(X, y, w)
    h = res.hypothesis
    assert 0 <= h.feature < X.shape[1]
    assert_cut_between(X[:, h.feature], h.threshold, h.sign)
    return res


def check_threshold(x: np.ndarray, y: np.ndarray, w: np.ndarray):
    res = THRESHOLD.solve(x, y, w)
    expected = brute_threshold(x, y, w)
    assert isinstance(res.hypothesis, Threshold)
    assert abs(res.objective - expected) <= res.tolerance, (res.objective, expected, res.hypothesis)
    assert res.certified, (res.objective, res.bound, res.tolerance)
    assert_cut_between(np.ravel(x), res.hypothesis.threshold, 1)
    return res


# ---------------------------------------------------------------- property tests


@settings(max_examples=150, **SETTINGS)
@given(st.integers(1, 3).flatmap(lambda d: instances(points(d, 1, 8))))
def test_stump_matches_brute_force(instance):
    check_stump(*instance)


@settings(max_examples=80, **SETTINGS)
@given(instances(points(1, 1, 8)))
def test_threshold_matches_brute_force(instance):
    X, y, w = instance
    check_threshold(X, y, w)
    check_threshold(X[:, 0], y, w)  # 1-D input is accepted as one feature


@st.composite
def wild_instance(draw):
    x = draw(wild_floats_column())
    return x, draw(labels(len(x))), draw(signed_weights(len(x)))


@settings(max_examples=80, **SETTINGS)
@given(wild_instance())
def test_threshold_and_stump_on_extreme_floats(instance):
    """Subnormal, huge (|x| ~ 1e308: the midpoint must not overflow) and adjacent floats."""
    x, y, w = instance
    check_threshold(x, y, w)
    check_stump(x[:, None], y, w)


# ---------------------------------------------------------------- degenerate cases, by hand

# (X column(s), y, w, stump optimum, threshold optimum or None when d > 1)
HAND_CASES = {
    # duplicates: h(x)=1 iff x<=1.5 errs on idx 1, 2 (1 + 1); thresholds can only do all-ones (3)
    "duplicates": ([[1.0], [1.0], [2.0], [2.0]], [1, 0, 1, 0], [3.0, 1.0, 1.0, 2.0], 2.0, 3.0),
    # all points equal: all-zeros costs 1 - 3 = -2, all-ones costs 2 + 0.5
    "all-equal": ([[5.0]] * 4, [1, 0, 1, 0], [1.0, 2.0, -3.0, 0.5], -2.0, -2.0),
    "one-point-negative": ([[3.0]], [1], [-2.0], -2.0, -2.0),
    "one-point-positive": ([[3.0]], [0], [2.0], 0.0, 0.0),
    "labels-all-one": ([[1.0], [2.0], [3.0]], [1, 1, 1], [1.0, 2.0, 3.0], 0.0, 0.0),
    # the -2 at x=2 cannot be isolated: x <= 2.5 costs 1 - 2; thresholds (suffixes) do no better than 0
    "labels-all-zero-signed": ([[1.0], [2.0], [3.0]], [0, 0, 0], [1.0, -2.0, 3.0], -1.0, 0.0),
    "zero-weights": ([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]], [0, 1, 0], [0.0, 0.0, 0.0], 0.0, None),
    # all negative: the best stump gets everything wrong (x <= 2.5 predicts 1 on the 0s)
    "all-negative": ([[1.0], [2.0], [3.0], [4.0]], [0, 0, 1, 1], [-1.0, -1.0, -1.0, -1.0], -4.0, -2.0),
    # erring on idx 3 alone ([1,1,0,1]) is no stump; all-ones errs on idx 2 and 3: 1 - 5
    "two-features-signed": (
        [[0.0, 1.0], [0.0, 2.0], [1.0, 3.0], [1.0, 4.0]],
        [1, 1, 0, 0],
        [1.0, 1.0, 1.0, -5.0],
        -4.0,
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(HAND_CASES))
def test_degenerate_cases_by_hand(name):
    X, y, w, stump_opt, threshold_opt = HAND_CASES[name]
    X, y, w = np.asarray(X, dtype=float), np.asarray(y), np.asarray(w, dtype=float)
    assert brute_stump(X, y, w) == stump_opt  # the reference itself, checked by hand
    res = check_stump(X, y, w)
    assert res.objective == pytest.approx(stump_opt, abs=1e-12)
    if threshold_opt is not None:
        assert brute_threshold(X[:, 0], y, w) == threshold_opt
        res = check_threshold(X, y, w)
        assert res.objective == pytest.approx(threshold_opt, abs=1e-12)


def test_all_points_equal_gives_infinite_threshold():
    X = np.full((4, 2), 7.0)
    y = np.array([1, 0, 1, 1])
    w = np.array([1.0, -2.0, 0.5, 0.0])
    res = check_stump(X, y, w)
    assert math.isinf(res.hypothesis.threshold)
    assert res.objective == pytest.approx(-2.0)  # all ones errs only on idx 1 (-2)
    np.testing.assert_array_equal(res.hypothesis.predict(X), np.ones(4, dtype=np.int8))
    res = check_threshold(X[:, :1], y, w)
    assert res.hypothesis.threshold == -math.inf


def test_adjacent_floats_threshold_keeps_labeling():
    """No float lies between a and nextafter(a): the threshold must be an endpoint on the right side."""
    a = 1.0
    b = float(np.nextafter(a, 2.0))
    x = np.array([a, b])
    res = check_threshold(x, np.array([0, 1]), np.array([1.0, 1.0]))
    assert res.objective == 0.0 and res.hypothesis.threshold == b
    res = check_stump(x[:, None], np.array([1, 0]), np.array([1.0, 1.0]))
    assert res.objective == 0.0 and res.hypothesis.sign == -1 and res.hypothesis.threshold == a


def test_huge_values_midpoint_does_not_overflow():
    x = np.array([-1.7e308, 1.7e308])
    res = check_threshold(x, np.array([0, 1]), np.array([1.0, 1.0]))
    assert res.objective == 0.0 and math.isfinite(res.hypothesis.threshold)
