"""The ``enumerate`` halfspace oracle (d = 1, 2, 3) against the LP brute force over all labelings.

Exactness: the re-scored objective equals ``brute_halfspace`` (within the result's tolerance) and
the answer is certified. On integer grids — where the labeling always allows it, since every
labeling a closed halfspace induces on finitely many points is also induced strictly — the
returned halfspace must keep every training point clearly off its boundary:

    min_i |w.x_i + b| > 1e-9 * (|w|_1 * max|x| + |b|).

On near-degenerate decimal data (0.1-spaced grids: collinear in decimal, not in float64) the LP
reference is only an upper bound, so those tests check soundness instead: no crash, the bound
never exceeds an achieved loss, certified answers are at least as good as the reference.
``-m slow`` runs the same properties with many more examples.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_halfspace, halfspace_realizable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import decimal_points, instances, points, real_points

from oraclepriv import Halfspace, make_oracle
from oraclepriv.oracle import default_backend

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
MAX_N = 7

ORACLE = make_oracle("halfspace", backend="enumerate")


def assert_off_boundary(h: Halfspace, X: np.ndarray) -> None:
    margins = np.abs(h.decision_function(X))
    scale = np.abs(np.asarray(h.w)).sum() * np.abs(X).max() + abs(h.b)
    assert margins.min() > 1e-9 * scale, f"training point on the boundary: {h}, min |w.x+b| = {margins.min()!r}"


def assert_sound(res, X: np.ndarray, y: np.ndarray, w: np.ndarray, expected: float) -> None:
    """Checks that hold whatever the data: the reported objective is achieved (it is the returned
    hypothesis's own re-scoring), so a "proved" lower bound above it, or above the brute-force
    loss (achieved by an LP-verified halfspace), is refuted."""
    tol = res.tolerance
    assert res.objective == res.hypothesis.loss(X, y, w)
    assert res.bound <= res.objective + tol, f"bound {res.bound!r} above an achieved objective {res.objective!r}"
    assert res.bound <= expected + tol, f"bound {res.bound!r} above the brute-force loss {expected!r}"
    if res.certified:
        assert res.objective <= expected + tol, (res.objective, expected)


def check(X: np.ndarray, y: np.ndarray, w: np.ndarray, grid: bool):
    res = ORACLE.solve(X, y, w)
    expected = brute_halfspace(X, y, w)
    h = res.hypothesis
    assert isinstance(h, Halfspace) and h.dim == X.shape[1]
    assert res.backend == "enumerate" and res.status == "optimal"
    assert_sound(res, X, y, w, expected)
    assert res.certified, (res.objective, res.bound, res.tolerance, res.details)
    if res.objective < expected - res.tolerance:
        # better than the LP reference: only possible off the integer grid, where a labeling
        # realised by a float64 halfspace (the returned one witnesses it) can be too thin for the
        # LP's tolerances (margin-1 scaling needs a huge w). The reference, not the oracle, missed it.
        assert not grid, (res.objective, expected, h)
        assert not halfspace_realizable(X, h.predict(X))
    else:
        assert abs(res.objective - expected) <= res.tolerance, (res.objective, expected, h)
    if grid:
        assert_off_boundary(h, X)
    return res


def tagged(d: int, min_n: int = 1) -> st.SearchStrategy:
    """(True, instance) on integer points (grid, collinear/coplanar, all equal), or (False, instance)
    on generic real points."""
    return st.one_of(
        st.tuples(st.just(True), instances(points(d, min_n, MAX_N, grid_only=True))),
        st.tuples(st.just(False), instances(real_points(d, min_n, MAX_N))),
    )


@settings(max_examples=100, **SETTINGS)
@given(tagged(1))
def test_enumerate_d1_matches_brute_force(case):
    grid, (X, y, w) = case
    check(X, y, w, grid)


@settings(max_examples=100, **SETTINGS)
@given(tagged(2, min_n=2))  # n = 1 is covered in d = 1 and by the hand cases
def test_enumerate_d2_matches_brute_force(case):
    grid, (X, y, w) = case
    check(X, y, w, grid)


@settings(max_examples=80, **SETTINGS)
@given(tagged(3, min_n=2))
def test_enumerate_d3_matches_brute_force(case):
    grid, (X, y, w) = case
    check(X, y, w, grid)


# ---------------------------------------------------------------- degenerate cases, by hand

XOR = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])

# (X, y, w, optimum checked by hand)
HAND_CASES = {
    "one-point-negative-weight": ([[1.0, 2.0]], [1], [-3.0], -3.0),
    "one-point": ([[1.0, 2.0, 3.0]], [0], [3.0], 0.0),
    "all-equal-conflicting": ([[2.0, 2.0]] * 3, [1, 0, 1], [1.0, 5.0, 1.0], 2.0),
    "all-equal-signed": ([[0.0, 0.0, 0.0]] * 3, [1, 0, 1], [1.0, -5.0, 1.0], -5.0),
    # XOR: no line splits the diagonals; best drops the cheapest point
    "xor": (XOR, [1, 1, 0, 0], [3.0, 3.0, 2.0, 1.0], 1.0),
    # XOR with signed weights: erring on both w < 0 points ([1,1,1,1] labeling) is a constant
    "xor-signed": (XOR, [1, 1, 0, 0], [3.0, 3.0, -2.0, -1.0], -3.0),
    # collinear in the plane: the middle point cannot be isolated
    "collinear-middle": ([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], [0, 1, 0], [1.0, 5.0, 1.0], 1.0),
    # coplanar in 3-D (z = 0) XOR: 3-D halfspaces restricted to the plane are 2-D halfspaces
    "coplanar-xor": (np.hstack([XOR, np.zeros((4, 1))]), [1, 1, 0, 0], [3.0, 3.0, 2.0, 1.0], 1.0),
    # lifted off the plane, XOR becomes separable in 3-D
    "lifted-xor": (np.hstack([XOR, [[0.0], [0.0], [1.0], [1.0]]]), [1, 1, 0, 0], [3.0, 3.0, 2.0, 1.0], 0.0),
    "zero-weights": ([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]], [0, 1, 0], [0.0, 0.0, 0.0], 0.0),
    "constant-labels": ([[0.0], [1.0], [3.0], [1.0]], [1, 1, 1, 1], [1.0, 2.0, 3.0, 4.0], 0.0),
    "duplicates-1d": ([[0.0], [1.0], [1.0], [2.0]], [0, 1, 0, 1], [1.0, 2.0, 1.5, 1.0], 1.5),
}


@pytest.mark.parametrize("name", sorted(HAND_CASES))
def test_degenerate_cases_by_hand(name):
    X, y, w, optimum = HAND_CASES[name]
    X, y, w = np.asarray(X, dtype=float), np.asarray(y), np.asarray(w, dtype=float)
    assert brute_halfspace(X, y, w) == optimum  # the reference itself, checked by hand
    res = check(X, y, w, grid=True)
    assert res.objective == pytest.approx(optimum, abs=1e-12)


def test_brute_force_realizability_reference():
    """The LP reference: XOR is not realisable, any 2 distinct points are, conflicting duplicates are not."""
    assert not halfspace_realizable(XOR, np.array([1, 1, 0, 0]))
    assert halfspace_realizable(XOR, np.array([1, 0, 1, 0]))
    assert halfspace_realizable(np.array([[0.0, 0.0], [1e-3, 0.0]]), np.array([1, 0]))
    assert not halfspace_realizable(np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([1, 0]))
    assert halfspace_realizable(np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([0, 0]))
    collinear = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    assert not halfspace_realizable(collinear, np.array([0, 1, 0]))
    assert halfspace_realizable(collinear, np.array([0, 0, 1]))


def test_default_backend_by_dimension():
    assert default_backend("halfspace", 10, 1) == "enumerate"
    # the measured crossovers: docs/solvers/direction-bb.md
    assert default_backend("halfspace", 10, 2) == default_backend("halfspace", 5000, 6) == "portfolio"
    assert default_backend("halfspace", 10, 7) == default_backend("halfspace", 10, 8) == "portfolio"
    assert default_backend("halfspace", 10, 9) == "scip-bc"
    res = make_oracle("halfspace").solve(XOR, [1, 1, 0, 0], [3.0, 3.0, 2.0, 1.0])
    assert res.backend == "portfolio" and res.objective == 1.0 and res.certified


def test_enumerate_rejects_d4():
    with pytest.raises(ValueError, match=r"enumerate.*d=4"):
        ORACLE.solve(np.zeros((3, 4)), [0, 1, 0])


# ---------------------------------------------------------------- near-degenerate decimal data

# Collinear in decimal, not in float64 (orientation determinant ~ -4e-17): the middle point
# can be cut off exactly, by a halfspace with |w| ~ 1e16 -- too thin for LP tolerances.
DECIMAL_COLLINEAR = {
    "slope-minus-third": [[-0.8, -0.5], [0.1, -0.8], [0.7, -1.0]],
    "slope-three": [[0.1, 0.3], [0.2, 0.6], [0.7, 2.1]],
    "one-ulp-off": [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0 + 2.0**-50]],
}


@pytest.mark.parametrize("lift", [False, True], ids=["d2", "d3"])
@pytest.mark.parametrize("name", sorted(DECIMAL_COLLINEAR))
def test_nearly_collinear_points_give_a_sound_answer(name, lift):
    """The oracle must answer (certified, or honestly uncertified), never crash, never over-claim."""
    X = np.asarray(DECIMAL_COLLINEAR[name])
    if lift:
        X = np.hstack([X, np.zeros((3, 1))])
    y, w = np.array([1, 0, 1]), np.ones(3)
    res = ORACLE.solve(X, y, w)
    assert_sound(res, X, y, w, brute_halfspace(X, y, w))


@settings(max_examples=60, **SETTINGS)
@given(st.integers(2, 3).flatmap(lambda d: instances(decimal_points(d, 3, MAX_N))))
def test_decimal_grid_answers_are_sound(instance):
    """On decimal data the LP reference is only an upper bound; the oracle must not crash, its
    bound must not exceed any achieved loss, and a certified answer must be at least as good."""
    X, y, w = instance
    res = ORACLE.solve(X, y, w)
    assert_sound(res, X, y, w, brute_halfspace(X, y, w))


# ---------------------------------------------------------------- thorough runs (-m slow)


@pytest.mark.slow
@pytest.mark.parametrize("d, examples", [(1, 1000), (2, 2000), (3, 1500)])
def test_enumerate_matches_brute_force_thorough(d, examples):
    """The property tests above with ~10-25x the examples (a few minutes on 2 cores)."""

    @settings(max_examples=examples, **SETTINGS)
    @given(tagged(d, min_n=1 if d == 1 else 2))
    def run(case):
        grid, (X, y, w) = case
        check(X, y, w, grid)

    run()


@pytest.mark.slow
def test_decimal_grid_answers_are_sound_thorough():
    @settings(max_examples=2000, **SETTINGS)
    @given(st.integers(2, 3).flatmap(lambda d: instances(decimal_points(d, 3, MAX_N))))
    def run(instance):
        X, y, w = instance
        res = ORACLE.solve(X, y, w)
        assert_sound(res, X, y, w, brute_halfspace(X, y, w))

    run()


def test_status_agrees_with_certificate_for_negligible_weights():
    """Regression (found by hypothesis): a representative off by a weight far below the certification
    tolerance is optimal, so the status must say "optimal", not "error"."""
    X = np.array([[0, 0], [0, -1], [1, 0], [0, 0], [2, 1]], dtype=float)
    res = ORACLE.solve(X, [0, 1, 0, 0, 0], [1, -8.29e-88, -8.29e-88, 0, 1])
    assert res.certified and res.status == "optimal"
