"""Hypothesis classes: closed-boundary predict semantics, re-scoring, dict round trip, bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oraclepriv import Halfspace, Stump, Threshold, hypothesis_from_dict
from oraclepriv.hypotheses import weighted_zero_one_loss

# ---------------------------------------------------------------- predict at the boundary


def test_threshold_is_closed():
    h = Threshold(2.0)
    x = np.array([np.nextafter(2.0, 0.0), 2.0, np.nextafter(2.0, 3.0)])
    np.testing.assert_array_equal(h.predict(x), [0, 1, 1])
    np.testing.assert_array_equal(h.predict(x[:, None]), [0, 1, 1])
    assert h.predict(x).dtype == np.int8


def test_threshold_infinite():
    x = np.array([-1e308, 0.0, 1e308])
    np.testing.assert_array_equal(Threshold(-math.inf).predict(x), [1, 1, 1])
    np.testing.assert_array_equal(Threshold(math.inf).predict(x), [0, 0, 0])


def test_threshold_rejects_more_than_one_feature():
    with pytest.raises(ValueError, match=r"one feature.*\(3, 2\)"):
        Threshold(0.0).predict(np.zeros((3, 2)))


@pytest.mark.parametrize("sign, expected", [(1, [0, 1, 1]), (-1, [1, 1, 0])])
def test_stump_is_closed_for_both_signs(sign, expected):
    """h(x) = 1 iff sign * (x_j - t) >= 0: x_j == t predicts 1 for either sign."""
    X = np.array([[9.0, 0.5], [9.0, 1.5], [9.0, 2.5]])
    h = Stump(1, 1.5, sign)
    np.testing.assert_array_equal(h.predict(X), expected)
    assert h.predict(X).dtype == np.int8


@pytest.mark.parametrize("sign", [1, -1])
def test_stump_infinite_thresholds(sign):
    X = np.array([[-1e308], [0.0], [1e308]])
    # sign +1: x >= -inf everywhere, x >= +inf nowhere; sign -1 the other way round
    np.testing.assert_array_equal(Stump(0, -math.inf, sign).predict(X), [1, 1, 1] if sign == 1 else [0, 0, 0])
    np.testing.assert_array_equal(Stump(0, math.inf, sign).predict(X), [0, 0, 0] if sign == 1 else [1, 1, 1])


def test_stump_missing_feature():
    with pytest.raises(ValueError, match="no feature 2"):
        Stump(2, 0.0, 1).predict(np.zeros((3, 2)))


def test_halfspace_is_closed():
    """w.x + b == 0 exactly (representable arithmetic) predicts 1."""
    h = Halfspace((1.0, -1.0), 0.0)
    X = np.array([[2.0, 2.0], [2.0, 2.5], [2.5, 2.0]])
    np.testing.assert_array_equal(h.decision_function(X), [0.0, -0.5, 0.5])
    np.testing.assert_array_equal(h.predict(X), [1, 0, 1])
    h = Halfspace((0.5, 0.25), -1.0)  # 0.5 * 1 + 0.25 * 2 - 1 == 0
    np.testing.assert_array_equal(h.predict(np.array([[1.0, 2.0], [1.0, 1.75]])), [1, 0])


def test_halfspace_constants():
    X = np.array([[1.0, -3.0], [0.0, 0.0]])
    np.testing.assert_array_equal(Halfspace((0.0, 0.0), 0.0).predict(X), [1, 1])  # closed: 0 >= 0
    np.testing.assert_array_equal(Halfspace((0.0, 0.0), -1e-300).predict(X), [0, 0])


def test_halfspace_one_dimensional_input_and_shape_errors():
    h = Halfspace((2.0,), -1.0)
    np.testing.assert_array_equal(h.predict(np.array([0.0, 0.5, 1.0])), [0, 1, 1])
    with pytest.raises(ValueError, match=r"shape \(n, 1\).*\(2, 2\)"):
        h.predict(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        Halfspace((1.0, 1.0), 0.0).predict(np.zeros(3))


# ---------------------------------------------------------------- re-scoring


def test_loss_is_signed_weighted_zero_one():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, 1, 0])
    h = Threshold(1.5)  # predicts 0, 0, 1, 1: wrong on idx 1 and 3
    assert h.loss(X, y, np.array([5.0, -2.0, 7.0, 0.25])) == -1.75
    assert h.loss(X, y) == 2.0  # default weights are ones
    assert weighted_zero_one_loss(np.array([1, 0]), np.array([1, 1]), np.array([3.0, -4.0])) == -4.0


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(0, 1), st.integers(-5, 5)),
        min_size=1,
        max_size=10,
    ),
    st.integers(-2, 2),
    st.integers(-2, 2),
    st.integers(-3, 3),
)
def test_halfspace_loss_matches_definition(rows, w0, w1, b):
    X = np.array([[r[0], r[1]] for r in rows], dtype=float)
    y = np.array([r[2] for r in rows])
    w = np.array([r[3] for r in rows], dtype=float)
    h = Halfspace((w0, w1), b)
    expected = sum(wi for xi, yi, wi in zip(X, y, w) if int(w0 * xi[0] + w1 * xi[1] + b >= 0) != yi)
    assert h.loss(X, y, w) == expected


# ---------------------------------------------------------------- dict round trip

ROUND_TRIP = [
    Threshold(0.5),
    Threshold(-math.inf),
    Threshold(math.inf),
    Threshold(-0.0),
    Stump(0, 1.25, 1),
    Stump(3, -math.inf, -1),
    Stump(1, math.inf, 1),
    Stump(2, 5e-324, -1),
    Halfspace((1.0, -2.5, 1e-300), 3.0),
    Halfspace((0.0,), -1.0),
]


@pytest.mark.parametrize("h", ROUND_TRIP, ids=repr)
def test_dict_round_trip(h):
    data = h.to_dict()
    back = hypothesis_from_dict(data)
    assert back == h and type(back) is type(h)
    # through JSON text (Python's json writes +-inf as Infinity and reads it back)
    back = hypothesis_from_dict(json.loads(json.dumps(data)))
    assert back == h
    X = np.array([[-1.0, 0.0, 2.0, 0.0], [1.25, 0.5, -3.0, 1.0], [7.0, 7.0, 7.0, 7.0]])
    X = X[:, : (h.dim if isinstance(h, Halfspace) else X.shape[1])]
    if isinstance(h, Threshold):
        X = X[:, :1]
    np.testing.assert_array_equal(back.predict(X), h.predict(X))


@pytest.mark.parametrize("text, expected", [("inf", math.inf), ("-inf", -math.inf), ("Infinity", math.inf)])
def test_from_dict_accepts_infinity_as_string(text, expected):
    """Ledgers and JSON writers that refuse bare Infinity tokens serialize inf as a string."""
    assert hypothesis_from_dict({"hypothesis_class": "threshold", "threshold": text}) == Threshold(expected)
    assert hypothesis_from_dict({"hypothesis_class": "stump", "feature": 0, "threshold": text, "sign": -1}) == Stump(
        0, expected, -1
    )


def test_from_dict_unknown_type_names_it():
    with pytest.raises(ValueError, match=r"'circle'"):
        hypothesis_from_dict({"hypothesis_class": "circle", "r": 1.0})


# ---------------------------------------------------------------- bad constructor input


@pytest.mark.parametrize("sign", [0, 2, -2])
def test_stump_bad_sign(sign):
    with pytest.raises(ValueError, match=rf"sign.*{sign}"):
        Stump(0, 0.0, sign)


def test_stump_bad_feature():
    with pytest.raises(ValueError, match=r"feature.*-1"):
        Stump(-1, 0.0, 1)
    with pytest.raises(ValueError, match=r"feature.*1\.5"):
        Stump(1.5, 0.0, 1)


def test_nan_thresholds_are_rejected():
    """A NaN threshold would silently predict all zeros (x >= nan is False)."""
    with pytest.raises(ValueError, match=r"threshold.*nan"):
        Threshold(math.nan)
    with pytest.raises(ValueError, match=r"threshold.*nan"):
        Stump(0, math.nan, 1)
    with pytest.raises(ValueError, match=r"threshold.*nan"):
        hypothesis_from_dict({"hypothesis_class": "threshold", "threshold": "nan"})


@pytest.mark.parametrize(
    "w, b, bad",
    [
        ((math.nan, 1.0), 0.0, "nan"),
        ((1.0, math.inf), 0.0, "inf"),
        ((1.0, 0.0), -math.inf, "-inf"),
        ((1.0,), math.nan, "nan"),
    ],
)
def test_halfspace_rejects_non_finite(w, b, bad):
    with pytest.raises(ValueError, match=rf"finite.*{bad}"):
        Halfspace(w, b)


def test_halfspace_normalises_w():
    h = Halfspace(np.array([[1, 2]]), 3)
    assert h.w == (1.0, 2.0) and h.b == 3.0 and h.dim == 2
    assert Halfspace([1, 2], 3) == h  # list and array inputs compare equal


def test_round_trip_of_every_released_hypothesis_type():
    """The learners' outputs (LinearPredictor of Alg. 3, PPM's polytope complement) round-trip too."""
    from oraclepriv.hypotheses import LinearPredictor
    from oraclepriv.learners import PPMHalfspaces

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] > 0).astype(int)
    ppm = PPMHalfspaces(epsilon=1.0, random_state=0).fit(X, y, (y == 0) & (rng.random(30) < 0.8))
    for h in (LinearPredictor((0.5, -0.25)), ppm.hypothesis_):
        back = hypothesis_from_dict(json.loads(json.dumps(h.to_dict())))
        assert np.array_equal(back.predict(X), h.predict(X))
        assert back.to_dict() == h.to_dict()
