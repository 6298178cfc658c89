"""Every exact halfspace backend on data typed by hand, against a brute force in rational arithmetic.

The instances (tests/degenerate_instances.py) have decimal coordinates, points on common decimal lines
and planes (collinear in decimal, almost collinear in float64, so the optimal labeling's margin can be
far below float64 resolution), integer grids, duplicated points with conflicting labels and signed
weights of very different sizes. The reference (``brute_halfspace_rational``) decides realisability by
affine circuits in exact arithmetic, sharing no code with the package. Every backend must certify the
true optimum, and its halfspace must realise it under the exact prediction.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import pytest
from brute_force import brute_halfspace_rational
from degenerate_instances import KINDS, degenerate_instance
from optional_backends import BRANCH_AND_CUT
from oraclepriv.solvers.combinatorial.exact_halfspace import max_margin_exact, realize_labeling
from oraclepriv.solvers.combinatorial.max_margin import max_margin_halfspace

from oraclepriv import make_oracle
from oraclepriv.exact_affine import affine_nonnegative, exact_affine_value
from oraclepriv.hypotheses import Halfspace, hypothesis_from_dict

#: backends exact on any float64 data; cpsat is exact on dyadic grids only (tested on the grid kind)
EXACT = ["enumerate", "direction-bb", "portfolio", "highs", *BRANCH_AND_CUT]
EXACT_SLOW = [*EXACT, "scip", "pyomo"]


@functools.cache
def _instance(kind: str, d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    X, y, w = degenerate_instance(kind, d, seed, max_n=12 if d == 2 else 9)
    return X, y, w, brute_halfspace_rational(X, y, w)


def _check(backend: str, kind: str, d: int, seed: int) -> None:
    X, y, w, optimum = _instance(kind, d, seed)
    res = make_oracle("halfspace", backend=backend, time_limit=60).solve(X, y, w)
    case = f"{backend} on {kind} d={d} seed={seed}: X={X.tolist()} y={y.tolist()} w={w.tolist()}"
    assert res.certified, f"not certified ({res.status}, objective {res.objective}, bound {res.bound}): {case}"
    assert res.objective == pytest.approx(optimum, abs=res.tolerance), case
    assert res.hypothesis.loss(X, y, w) == pytest.approx(optimum, abs=res.tolerance), case


@pytest.mark.parametrize("backend", EXACT)
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_exact_backends_certify_the_rational_optimum_on_hand_typed_data(backend, kind, d):
    _check(backend, kind, d, seed=0)


#: (backend, kind) pairs of the thorough run: every exact backend on every kind; cpsat, exact on dyadic grid
#: data only (elsewhere a discretised heuristic), on the grid kind
THOROUGH = [(backend, kind) for backend in EXACT_SLOW for kind in KINDS] + [("cpsat", "grid")]


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize(("backend", "kind"), THOROUGH)
def test_thorough_property_run_on_hand_typed_data(backend, kind, d):
    """84 seeds x 6 kinds x 2 dimensions = 1008 instances per backend (cpsat: 168 on its exact grid kind)."""
    for seed in range(84):
        _check(backend, kind, d, seed)


# -- an instance of the kind in the bug report: eight unit-weight points and three of weight 100, three
# of them on the decimal line through (0.2, 0.3), (0.5, 0.4), (0.8, 0.5), one point repeated with the
# other label
HAND_TYPED_X = np.array(
    [
        [0.2, 0.3],
        [0.5, 0.4],
        [0.8, 0.5],
        [0.2, 0.2],
        [0.9, 0.2],
        [0.5, 0.8],
        [0.7, 0.6],
        [0.8, 0.5],
        [0.6, 0.8],
        [0.7, 0.6],
        [0.9, 0.2],
    ]
)
HAND_TYPED_Y = np.array([0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1], dtype=np.int8)
HAND_TYPED_W = np.array([100.0, 100.0, 1.0, 100.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])


def test_the_hand_typed_instance_needs_more_than_float64():
    """The optimum (3) puts (0.5, 0.4) alone above the line through (0.2, 0.3) and (0.8, 0.5), with a
    margin far below float64 resolution: every float64 max-margin LP answer, evaluated in float64, gets
    the labeling wrong (the old code answered status "error" with objective 103); the exact one is right."""
    optimum = brute_halfspace_rational(HAND_TYPED_X, HAND_TYPED_Y, HAND_TYPED_W)
    assert optimum == 3.0
    res = make_oracle("halfspace", backend="enumerate").solve(HAND_TYPED_X, HAND_TYPED_Y, HAND_TYPED_W)
    assert res.certified and res.objective == optimum
    target = res.hypothesis.predict(HAND_TYPED_X) == 1
    for h, _ in max_margin_halfspace(HAND_TYPED_X, target):
        assert not np.array_equal(h.decision_function(HAND_TYPED_X) >= 0, target)
    assert res.hypothesis.exact is not None


@pytest.mark.parametrize("backend", EXACT)
def test_every_exact_backend_certifies_the_hand_typed_instance(backend):
    optimum = brute_halfspace_rational(HAND_TYPED_X, HAND_TYPED_Y, HAND_TYPED_W)
    res = make_oracle("halfspace", backend=backend, time_limit=60).solve(HAND_TYPED_X, HAND_TYPED_Y, HAND_TYPED_W)
    assert res.certified, (res.status, res.objective, res.bound)
    assert res.objective == optimum


# -- the exact prediction and the exact LP, against plain rational arithmetic


def test_exact_prediction_matches_rational_evaluation_near_the_hyperplane():
    rng = np.random.default_rng(0)
    for _ in range(200):
        d = int(rng.integers(1, 5))
        X = np.round(rng.uniform(-1, 1, (30, d)), int(rng.integers(1, 3)))
        # a hyperplane through two data points (in float64 terms): many rows within rounding error
        coefficients = [Fraction(int(v)) for v in rng.integers(-5, 6, d)]
        b = -sum(c * Fraction(float(x)) for c, x in zip(coefficients, X[0]))
        h = Halfspace.from_exact(coefficients, b)
        got = h.predict(X) == 1
        want = [exact_affine_value(x, (*coefficients, b)) >= 0 for x in X]
        assert got.tolist() == want
        assert got[0]  # on the hyperplane: closed side


def test_exact_prediction_of_float_coefficients_is_the_sign_of_the_real_value():
    X = np.array([[0.1, 0.2], [0.3, 0.0], [1e308, -1e308], [5e-324, 0.0]])
    w, b = np.array([3.0, 1.0]), -0.5
    got = affine_nonnegative(X, w, b)
    want = [Fraction(3) * Fraction(x0) + Fraction(x1) - Fraction(1, 2) >= 0 for x0, x1 in X]
    assert got.tolist() == want  # fl(0.3 + 0.2 - 0.5) = 0 in float64, but 3*0.1 + 0.2 - 0.5 > 0 exactly


def test_exact_halfspaces_round_trip_through_dicts_and_json():
    h = Halfspace.from_exact([Fraction(1, 3), Fraction(-2, 7)], Fraction(10**40 + 1, 10**40))
    assert h.exact is not None
    back = hypothesis_from_dict(h.to_dict())
    assert back == h
    X = np.random.default_rng(1).normal(size=(50, 2))
    assert np.array_equal(back.predict(X), h.predict(X))
    floats = Halfspace.from_exact([Fraction(1, 2), 3], Fraction(-1, 4))
    assert floats.exact is None and floats.w == (0.5, 3.0) and floats.b == -0.25


def test_max_margin_exact_agrees_with_a_float_lp_on_random_problems():
    from scipy.optimize import linprog

    rng = np.random.default_rng(2)
    for _ in range(40):
        n, d = int(rng.integers(2, 9)), int(rng.integers(1, 4))
        X = np.round(rng.normal(size=(n, d)), 2)
        signs = rng.choice([1, -1], n)
        w, b, t = max_margin_exact([[Fraction(v) for v in row] for row in X], signs.tolist())
        assert all(-1 <= c <= 1 for c in w) and 0 <= t <= 1
        for row, s in zip(X, signs):  # exactly feasible
            assert s * (sum(c * Fraction(v) for c, v in zip(w, row)) + b) >= t
        A = np.hstack([-signs[:, None] * X, -signs[:, None], np.ones((n, 1))])
        ref = linprog(
            np.r_[np.zeros(d + 1), -1.0], A_ub=A, b_ub=np.zeros(n), bounds=[(-1, 1)] * d + [(None, None), (None, 1)]
        )
        assert float(t) == pytest.approx(-ref.fun, abs=1e-9)


def test_realize_labeling_proves_non_separable_labelings():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert realize_labeling(X, np.array([True, False, False, True])) is None  # XOR
    h = realize_labeling(X, np.array([True, True, False, False]))
    assert h is not None and h.predict(X).tolist() == [1, 1, 0, 0]


# -- verify on a hand-typed instance: eight private decimal points, three public points on the decimal
# line through three private ones; the costs c_D(L) of labelings that cross that line need exact answers


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["enumerate", "portfolio"])
def test_verify_instance_on_hand_typed_decimal_points_ends_verified(tmp_path, backend):
    from typer.testing import CliRunner

    from oraclepriv.cli import app

    private = tmp_path / "private.csv"
    private.write_text(
        "x0,x1,y\n0.2,0.3,1\n0.5,0.4,0\n0.8,0.5,1\n0.1,0.9,1\n0.7,0.1,0\n0.4,0.8,1\n0.9,0.9,1\n0.6,0.2,0\n"
    )
    public = tmp_path / "public.csv"
    public.write_text("x0,x1\n0.35,0.35\n0.65,0.45\n1.1,0.6\n")
    args = ["verify", "instance", str(private), "--public", str(public), "--algorithm", "rrspm"]
    args += ["--hypothesis-class", "halfspace", "--epsilon", "1", "--backend", backend]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "VERIFIED" in result.output
