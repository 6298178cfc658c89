"""``convex-linear`` (solvers/convex_linear.py), the convex oracle of the Regularization learner
(Block et al., Algorithm 3), against independent references in d = 2..4.

Both problems are written out again here from their definitions (docs/theory/block-et-al.md,
section "Algorithm 3: Regularization"); nothing below calls the module's helpers for a reference.

* Regularized ERM  F(w) = 1/2 sum_i |<w, X_i> - y_i| + eta_sum * (1/m) sum_j <w, Z_j>^2  over
  ||w||_inf <= 1 (the regulariser is eta_sum ||f||_m^2 with ||f||_m^2 the mean of f(Z_j)^2).
  Reference: Kelley's cutting planes on the quadratic part only. The LP (scipy.optimize.linprog)
      min 1/2 sum t_i + eta_sum/m sum q_j,  t_i >= +-(<w, X_i> - y_i),  q_j >= 2 a <w, Z_j> - a^2
  for tangent points a of v -> v^2, keeps the absolute values exact and under-estimates each
  square, so its value is a LOWER bound on min F; F at its solution (re-scored in float64) is an
  UPPER bound. Tangents are added at the solution's <w, Z_j> until the two meet.
* Bounded least squares  min ||Z w - u||^2  over ||w||_inf <= 1. Reference: every pattern of
  coordinates at -1, at +1 or free (3^d of them), the free ones by numpy.linalg.lstsq; the best
  feasible candidate is the optimum (an optimal point with the most coordinates at a bound has a
  unique least-squares solution on its free coordinates, which lstsq returns).

Degenerate data throughout: duplicate rows (also with opposite labels), collinear rows, zero rows,
Z = 0 (no regulariser: a linear program with a face of minimisers), fewer public points than
features. The problems carry no sample weights; zero rows and Z = 0 are their zero-weight cases.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.convex_linear import ConvexLinearBackend, least_squares_bound
from scipy.optimize import OptimizeResult, linprog

from oraclepriv.convex_oracle import make_convex_oracle

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPT_TOL = 1e-6  # the oracle's default: certified means objective - bound <= OPT_TOL
KINDS = ["generic", "duplicates", "collinear", "zero-rows", "no-regulariser", "few-public"]


# -- the problems, written out from their definitions ----------------------------------------------


def regularized_value(w: np.ndarray, X: np.ndarray, y: np.ndarray, Z: np.ndarray, eta_sum: float) -> float:
    loss = math.fsum(0.5 * abs(float(r)) for r in X @ w - y)
    return loss + eta_sum * math.fsum(float(v) ** 2 for v in Z @ w) / len(Z)


def least_squares_value(w: np.ndarray, Z: np.ndarray, u: np.ndarray) -> float:
    return math.fsum(float(r) ** 2 for r in Z @ w - u)


def reference_regularized(
    X: np.ndarray, y: np.ndarray, Z: np.ndarray, eta_sum: float, rounds: int = 200
) -> tuple[float, float]:
    """(lower, upper) with lower <= min F <= upper, by the cutting-plane LP of the module docstring."""
    n, d = X.shape
    m = Z.shape[0]
    # variables (w_1..w_d, t_1..t_n, q_1..q_m)
    c = np.concatenate([np.zeros(d), 0.5 * np.ones(n), (eta_sum / m) * np.ones(m)])
    abs_rows = np.block([[X, -np.eye(n), np.zeros((n, m))], [-X, -np.eye(n), np.zeros((n, m))]])
    abs_rhs = np.concatenate([y, -y])
    bounds = [(-1.0, 1.0)] * d + [(0.0, None)] * n + [(0.0, None)] * m
    tangents: list[tuple[int, float]] = [(j, a) for j in range(m) for a in np.linspace(-1.0, 1.0, 9)]
    upper = regularized_value(np.zeros(d), X, y, Z, eta_sum)
    lower = -math.inf
    for _ in range(rounds):
        rows = np.zeros((len(tangents), d + n + m))
        rhs = np.zeros(len(tangents))
        for k, (j, a) in enumerate(tangents):  # 2 a <w, Z_j> - q_j <= a^2
            rows[k, :d] = 2.0 * a * Z[j]
            rows[k, d + n + j] = -1.0
            rhs[k] = a * a
        res = linprog(
            c,
            A_ub=np.vstack([abs_rows, rows]),
            b_ub=np.concatenate([abs_rhs, rhs]),
            bounds=bounds,
            method="highs",
            options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10},
        )
        assert res.status == 0, res.message
        lower = max(lower, float(res.fun))
        w = np.clip(res.x[:d], -1.0, 1.0)
        upper = min(upper, regularized_value(w, X, y, Z, eta_sum))
        if upper - lower <= 1e-9 * max(1.0, upper):
            break
        tangents += [(j, float(v)) for j, v in enumerate(Z @ w)]
    return lower, upper


def reference_least_squares(Z: np.ndarray, u: np.ndarray) -> float:
    """min ||Z w - u||^2 over the box, by the 3^d active-set patterns (module docstring)."""
    d = Z.shape[1]
    best = least_squares_value(np.zeros(d), Z, u)
    for pattern in itertools.product((-1.0, 0.0, 1.0), repeat=d):
        fixed = np.array(pattern)
        free = fixed == 0.0
        w = fixed.copy()
        if free.any():
            w[free] = np.linalg.lstsq(Z[:, free], u - Z[:, ~free] @ fixed[~free], rcond=None)[0]
            if np.any(np.abs(w[free]) > 1.0 + 1e-9):
                continue
        best = min(best, least_squares_value(np.clip(w, -1.0, 1.0), Z, u))
    return best


# -- instances -------------------------------------------------------------------------------------


def l1_rows(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    A = rng.uniform(-1.0, 1.0, (k, d))
    return A / np.maximum(1.0, np.abs(A).sum(axis=1, keepdims=True))


def instance(seed: int, d: int, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(X, y in {-1, +1}, Z, eta_sum), rows in the l1 unit ball as the class requires."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 13)), int(rng.integers(1, 9))
    X, Z = l1_rows(rng, n, d), l1_rows(rng, m, d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    if kind == "duplicates":
        X = X[rng.integers(0, max(1, n // 3), n)]  # a few distinct rows, labels drawn per copy
        Z = Z[rng.integers(0, max(1, m // 2), m)]
    elif kind == "collinear":
        X = np.outer(rng.uniform(-1.0, 1.0, n), l1_rows(rng, 1, d)[0])
        Z = np.outer(rng.uniform(-1.0, 1.0, m), l1_rows(rng, 1, d)[0])
    elif kind == "zero-rows":
        X[rng.random(n) < 0.5] = 0.0
        Z[rng.random(m) < 0.5] = 0.0
    elif kind == "no-regulariser":
        Z = np.zeros((m, d))
    elif kind == "few-public":
        Z = l1_rows(rng, int(rng.integers(1, d)), d)  # m < d: ||.||_m is only a seminorm on w
    eta_sum = float(10.0 ** rng.uniform(-2, 2))
    return X, y, Z, eta_sum


# -- regularized ERM -------------------------------------------------------------------------------


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(2, 4), kind=st.sampled_from(KINDS))
def test_regularized_erm_matches_an_independent_cutting_plane_reference(seed, d, kind):
    """The bound is a lower bound on the true optimum, the objective is the re-scored value of a
    feasible w and never below the optimum, and the answer is certified and within opt_tol of the
    optimum (the backend solves every instance of this size; a backend that never certifies fails)."""
    X, y, Z, eta_sum = instance(seed, d, kind)
    lower, upper = reference_regularized(X, y, Z, eta_sum)
    assert upper - lower <= 1e-8 * max(1.0, upper), "the reference did not converge: the test would be blunt"
    tol = 1e-8 * max(1.0, upper)
    res = make_convex_oracle(opt_tol=OPT_TOL).regularized_erm(X, y, Z, eta_sum)
    w = res.w
    assert w.shape == (d,) and np.all(np.abs(w) <= 1.0)
    assert res.objective == pytest.approx(regularized_value(w, X, y, Z, eta_sum), abs=1e-12 * max(1.0, upper))
    assert res.bound <= upper + tol, f"bound {res.bound} above the optimum {upper}: not a lower bound"
    assert res.objective >= lower - tol
    assert res.bound <= res.objective + tol and res.gap == pytest.approx(max(0.0, res.objective - res.bound))
    assert res.certified, f"gap {res.gap} on {kind} data"
    assert res.objective <= upper + OPT_TOL + tol, "certified but further than opt_tol from the optimum"
    # the Lagrangian bound is valid at any w0 in the box, not only near the optimum
    S = Z.T @ Z / len(Z)
    for w0 in np.random.default_rng(seed).uniform(-1.0, 1.0, (3, d)):
        assert ConvexLinearBackend.lower_bound(w0, X, y, S, eta_sum) <= upper + tol


def test_regularized_erm_is_certified_by_its_bound_not_by_the_solver_status(monkeypatch):
    """Negative control: every candidate source 'succeeds' with w = 0 and the polish keeps it, which is
    not optimal here; the answer must come back uncertified with a bound still below the optimum."""
    import oraclepriv.solvers.convex_linear as cl

    X, y, Z, eta_sum = instance(3, 3, "generic")
    X = np.vstack([X, np.eye(3) * 0.9])
    y = np.concatenate([y, [1.0, -1.0, 1.0]])
    lower, upper = reference_regularized(X, y, Z, eta_sum)
    assert regularized_value(np.zeros(3), X, y, Z, eta_sum) > upper + 0.1  # w = 0 is far from optimal

    def zeros_forever(X, y, S, eta_sum):
        while True:
            yield np.zeros(X.shape[1])

    # every source of candidates answers w = 0: the QP solver, its polish and the tangent-plane fallback
    monkeypatch.setattr(cl, "_box_qp", lambda X, y, S, eta_sum: np.zeros(X.shape[1]))
    monkeypatch.setattr(cl, "_highs_qp", lambda X, y, S, eta_sum, tolerance=None: np.zeros(X.shape[1]))
    monkeypatch.setattr(cl, "_kkt_polish", lambda w, X, y, S, eta_sum, tol: (w, np.sign(X @ w - y)))
    monkeypatch.setattr(cl, "_tangent_plane_answers", zeros_forever)
    res = make_convex_oracle().regularized_erm(X, y, Z, eta_sum)
    assert not res.certified and res.status != "optimal"
    assert res.bound <= upper + 1e-8 and res.objective > upper + 0.1


def test_regularized_erm_certifies_where_the_qp_solver_cycles():
    """Collinear data on which HiGHS' active-set QP cycles to its iteration limit (an earlier
    backend hung here): the tangent-plane fallback must take over and certify the optimum."""
    X, y, Z, eta_sum = instance(1009, 4, "collinear")
    lower, upper = reference_regularized(X, y, Z, eta_sum)
    w, info = ConvexLinearBackend().solve_regularized(X, y, Z, eta_sum)
    assert info["solver"] == "tangent-plane-lp", "the QP solver no longer fails here: pick another instance"
    assert info["certified"] and info["bound"] <= upper + 1e-8 and info["objective"] <= upper + OPT_TOL


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_on_the_l1_ball_the_box_qp_certifies_and_outside_it_is_not_used(seed):
    """Rows in the l1 ball make the loss linear in w (|<w,x> - y| = 1 - y <w,x>), so the d-variable box QP
    is the whole problem: it must certify the reference's optimum. Rows outside the ball (scaled by 3)
    break that identity: the backend must not rely on it there and still certify."""
    rng = np.random.default_rng(seed)
    X, Z = l1_rows(rng, 300, 5), l1_rows(rng, 40, 5)
    y = np.where(X @ rng.normal(size=5) + 0.1 * rng.normal(size=300) > 0, 1.0, -1.0)
    for scale, expected in ((1.0, "box-qp"), (3.0, "highs-qp")):
        lower, upper = reference_regularized(scale * X, y, Z, 30.0)
        w, info = ConvexLinearBackend().solve_regularized(scale * X, y, Z, 30.0)
        assert info["solver"] == expected
        assert (
            info["certified"] and info["bound"] <= upper + 1e-8 and lower - 1e-8 <= info["objective"] <= upper + OPT_TOL
        )


def test_the_tangent_plane_fallback_alone_certifies_the_optimum(monkeypatch):
    """With both QP solves answering w = 0 throughout, the fallback's candidates (Kelley's LPs, then the
    KKT polish) certify every instance against the reference; the fallback must run on most of them
    (w = 0 polished is sometimes already optimal)."""
    import oraclepriv.solvers.convex_linear as cl

    fallback_runs = []
    real_fallback = cl._tangent_plane_answers

    def counted_fallback(*args):
        fallback_runs.append(1)
        yield from real_fallback(*args)

    monkeypatch.setattr(cl, "_box_qp", lambda X, y, S, eta_sum: np.zeros(X.shape[1]))
    monkeypatch.setattr(cl, "_highs_qp", lambda X, y, S, eta_sum, tolerance=None: np.zeros(X.shape[1]))
    monkeypatch.setattr(cl, "_tangent_plane_answers", counted_fallback)
    cases = [(seed, d, kind) for seed, (d, kind) in enumerate(itertools.product((2, 3, 4), KINDS), start=500)]
    for seed, d, kind in cases:
        X, y, Z, eta_sum = instance(seed, d, kind)
        lower, upper = reference_regularized(X, y, Z, eta_sum)
        res = make_convex_oracle().regularized_erm(X, y, Z, eta_sum)
        tol = 1e-8 * max(1.0, upper)
        assert res.certified, f"{kind} d={d} seed={seed}: gap {res.gap}"
        assert res.bound <= upper + tol and lower - tol <= res.objective <= upper + OPT_TOL + tol
    assert len(fallback_runs) >= len(cases) // 2, f"the fallback ran on {len(fallback_runs)} of {len(cases)}"


def test_the_kkt_polish_merges_duplicated_kinks(monkeypatch):
    """200 copies of a point the optimum passes through (a kink of |.|, X_i w = y_i with w at a corner
    of its coordinates) and a free third coordinate: certified against the reference, the copies share
    one multiplier in [-1, 1], and past ``KKT_MAX_KINKS`` distinct kinks the polish leaves w alone."""
    import oraclepriv.solvers.convex_linear as cl

    rng = np.random.default_rng(7)
    others = np.column_stack([np.zeros((20, 2)), rng.uniform(-0.5, 0.5, 20)])
    X = np.vstack([np.repeat([[0.6, 0.4, 0.0]], 200, axis=0), others])
    y = np.r_[np.ones(200), np.where(rng.random(20) < 0.5, -1.0, 1.0)]
    Z = np.array([[0.0, 0.0, 1.0], [0.2, 0.0, 0.8]])
    eta_sum = 1.0
    lower, upper = reference_regularized(X, y, Z, eta_sum)
    w, info = ConvexLinearBackend().solve_regularized(X, y, Z, eta_sum)
    assert info["certified"] and info["bound"] <= upper + 1e-8 and info["objective"] <= upper + OPT_TOL
    assert w[0] == w[1] == 1.0 and abs(w[2]) < 1.0 - 1e-3, "the instance no longer has kinks and a free coordinate"
    S = Z.T @ Z / len(Z)
    w_polished, s = cl._kkt_polish(w, X, y, S, eta_sum, 1e-8)
    assert s.shape == (220,) and np.all(np.abs(s) <= 1.0) and np.all(s[:200] == s[0])
    assert ConvexLinearBackend.objective(w_polished, X, y, S, eta_sum) <= upper + OPT_TOL
    monkeypatch.setattr(cl, "KKT_MAX_KINKS", 0)
    w_kept, _ = cl._kkt_polish(w + 1e-9, X, y, S, eta_sum, 1e-8)
    assert np.array_equal(w_kept, w + 1e-9)


# -- bounded least squares -------------------------------------------------------------------------


def least_squares_instance(seed: int, d: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(Z, u): Perturb's targets u = fbar(Z) + noise, with fbar from a w outside the box so that
    bounds are active and clipping an unconstrained fit is not the answer."""
    rng = np.random.default_rng(seed)
    _, _, Z, _ = instance(seed, d, kind)
    if kind == "no-regulariser":  # Z = 0 there: use duplicated rows instead
        Z = l1_rows(rng, len(Z), d)[np.zeros(len(Z), dtype=int)]
    u = Z @ rng.uniform(-3.0, 3.0, d) + float(10.0 ** rng.uniform(-2, 1)) * rng.normal(size=len(Z))
    return Z, u


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(2, 4), kind=st.sampled_from(KINDS))
def test_least_squares_matches_the_active_set_enumeration(seed, d, kind):
    Z, u = least_squares_instance(seed, d, kind)
    ref = reference_least_squares(Z, u)
    tol = 1e-9 * max(1.0, ref)
    res = make_convex_oracle(opt_tol=OPT_TOL).least_squares(Z, u)
    w = res.w
    assert w.shape == (d,) and np.all(np.abs(w) <= 1.0)
    assert res.objective == pytest.approx(least_squares_value(w, Z, u), abs=1e-12 * max(1.0, ref))
    assert res.bound <= ref + tol, f"bound {res.bound} above the optimum {ref}: not a lower bound"
    assert res.objective >= ref - tol
    assert res.certified, f"gap {res.gap}"
    assert res.objective <= ref + OPT_TOL + tol, "certified but further than opt_tol from the optimum"
    # the dual bound is valid at any w0 in the box (any multiplier), not only at the optimum
    for w0 in np.random.default_rng(seed).uniform(-1.0, 1.0, (3, d)):
        assert least_squares_bound(w0, Z, u) <= ref + tol


def test_least_squares_is_certified_by_its_bound_not_by_the_solver_status(monkeypatch):
    """Negative control: a 'successful' BVLS run that returns the clipped unconstrained fit (not the
    box-constrained optimum here) must be reported uncertified, with a bound below the optimum."""
    import oraclepriv.solvers.convex_linear as cl

    Z = np.array([[0.5, 0.4], [0.4, 0.5], [0.3, -0.2], [0.1, 0.6]])
    u = np.array([2.0, 0.1, 0.3, -0.4])
    ref = reference_least_squares(Z, u)
    clipped = np.clip(np.linalg.lstsq(Z, u, rcond=None)[0], -1.0, 1.0)
    assert least_squares_value(clipped, Z, u) > ref + 1e-3  # clipping is not the constrained optimum

    def lying_lsq(A, b, bounds, method):
        return OptimizeResult(x=clipped, success=True, status=1, nit=1, message="lie")

    monkeypatch.setattr(cl, "lsq_linear", lying_lsq)
    res = make_convex_oracle().least_squares(Z, u)
    assert not res.certified and res.status != "optimal"
    assert res.bound <= ref + 1e-12 and res.objective == pytest.approx(least_squares_value(clipped, Z, u))


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 3, 4])
@pytest.mark.parametrize("kind", KINDS)
def test_both_problems_on_many_seeded_instances(d, kind):
    """The two property tests above on 40 more seeded instances per (d, kind)."""
    for seed in range(1000, 1040):
        X, y, Z, eta_sum = instance(seed, d, kind)
        lower, upper = reference_regularized(X, y, Z, eta_sum)
        assert upper - lower <= 1e-8 * max(1.0, upper)
        res = make_convex_oracle().regularized_erm(X, y, Z, eta_sum)
        tol = 1e-8 * max(1.0, upper)
        assert res.bound <= upper + tol and res.objective >= lower - tol
        assert res.certified and res.objective <= upper + OPT_TOL + tol
        Z2, u = least_squares_instance(seed, d, kind)
        ref = reference_least_squares(Z2, u)
        ls = make_convex_oracle().least_squares(Z2, u)
        tol = 1e-9 * max(1.0, ref)
        assert ls.bound <= ref + tol and ls.objective >= ref - tol
        assert ls.certified and ls.objective <= ref + OPT_TOL + tol


# -- the certificate's own rounding: proved, not estimated --------------------------------------------------------


def _random_regularized_problem(rng):
    """X in the l1 ball's box, labels +-1, S = Z'Z / m from 7 public points, eta_sum in [0.01, 50]."""
    n, d = int(rng.integers(5, 40)), int(rng.integers(1, 5))
    X = rng.uniform(-1, 1, (n, d)) / d
    y = rng.choice([-1.0, 1.0], n)
    Z = rng.uniform(-1, 1, (7, d))
    return X, y, Z.T @ Z / 7, float(rng.uniform(0.01, 50))


def _exact_lagrangian(s, w0, X, y, S, eta_sum) -> Fraction:
    """-s'y/2 - eta w0'S w0 - ||X's/2 + 2 eta S w0||_1 in exact rational arithmetic (the floats as given)."""
    F = Fraction
    n, d = X.shape
    eta = F(eta_sum)
    Sw = [sum(F(S[j, k]) * F(w0[k]) for k in range(d)) for j in range(d)]
    quad = sum(F(w0[j]) * Sw[j] for j in range(d))
    value = -sum(F(y[i]) * F(s[i]) for i in range(n)) / 2 - eta * quad
    for j in range(d):
        value -= abs(sum(F(X[i, j]) * F(s[i]) for i in range(n)) / 2 + 2 * eta * Sw[j])
    return value


def test_the_lagrangian_bound_is_below_its_exact_value_and_close_to_it():
    """The float64 bound minus its rounding allowance is never above the exact value of the formula it
    evaluates (so the certificate is a proof), and the allowance is tiny (at most 1e-10 here); without
    the allowance the float value is above the exact one on some instances (the allowance is needed)."""
    rng = np.random.default_rng(11)
    above_without = 0
    for _ in range(60):
        X, y, S, eta = _random_regularized_problem(rng)
        s, w0 = rng.uniform(-1, 1, X.shape[0]), rng.uniform(-1, 1, X.shape[1])
        exact = _exact_lagrangian(s, w0, X, y, S, eta)
        bound = ConvexLinearBackend.lagrangian_bound(s, w0, X, y, S, eta)
        assert Fraction(bound) <= exact
        assert float(exact) - bound <= 1e-10
        g0 = 2.0 * eta * (S @ w0)
        plain = float(-0.5 * (y @ s) - eta * (w0 @ S @ w0) - np.abs(0.5 * (X.T @ s) + g0).sum())
        above_without += Fraction(plain) > exact
    assert above_without > 0


def test_the_objective_error_bound_covers_the_float_objective():
    rng = np.random.default_rng(12)
    for _ in range(60):
        X, y, S, eta = _random_regularized_problem(rng)
        (n, d), w = X.shape, rng.uniform(-1, 1, X.shape[1])
        F = Fraction
        exact = sum(abs(sum(F(X[i, j]) * F(w[j]) for j in range(d)) - F(y[i])) for i in range(n)) / 2 + F(eta) * sum(
            F(w[j]) * F(S[j, k]) * F(w[k]) for j in range(d) for k in range(d)
        )
        value = ConvexLinearBackend.objective(w, X, y, S, eta)
        assert abs(Fraction(value) - exact) <= Fraction(ConvexLinearBackend.objective_error(w, X, y, S, eta))


# -- bad input: an error naming the argument, never a 'certified' answer to a different problem ----------------


def _good_regularized():
    rng = np.random.default_rng(3)
    return l1_rows(rng, 5, 2), np.array([1.0, -1.0, 1.0, 1.0, -1.0]), l1_rows(rng, 3, 2), 1.0


@pytest.mark.parametrize(
    "change,fragment",
    [
        (lambda X, y, Z, e: (np.where(np.eye(5, 2) > 0, np.nan, X), y, Z, e), "X must be finite"),
        (lambda X, y, Z, e: (X, (y > 0).astype(float), Z, e), "y_pm must contain labels in {-1, +1}; entry 1 is 0.0"),
        (lambda X, y, Z, e: (X, 2 * y, Z, e), "y_pm must contain labels in {-1, +1}"),
        (lambda X, y, Z, e: (X, y[:3], Z, e), "y_pm must be a vector with one entry per row of X (5)"),
        (lambda X, y, Z, e: (X, y, np.full((3, 3), 0.2), e), "Z has 3 columns but X has 2"),
        (lambda X, y, Z, e: (X, y, np.zeros((0, 2)), e), "Z is empty"),
        (lambda X, y, Z, e: (X, y, np.full((3, 2), np.inf), e), "Z must be finite"),
        (lambda X, y, Z, e: (X, y, Z, -1.0), "eta_sum must be a finite number >= 0; got -1.0"),
        (lambda X, y, Z, e: (X, y, Z, float("nan")), "eta_sum must be a finite number >= 0"),
        (lambda X, y, Z, e: (np.zeros((0, 2)), y[:0], Z, e), "X is empty"),
    ],
    ids=[
        "nan-X",
        "labels-01",
        "labels-2",
        "short-y",
        "Z-columns",
        "empty-Z",
        "inf-Z",
        "negative-eta",
        "nan-eta",
        "empty-X",
    ],
)
def test_regularized_erm_refuses_bad_input_naming_it(change, fragment):
    with pytest.raises(ValueError) as error:
        make_convex_oracle().regularized_erm(*change(*_good_regularized()))
    assert fragment in str(error.value)


@pytest.mark.parametrize(
    "Z,u,fragment",
    [
        (np.full((3, 2), np.nan), np.ones(3), "Z must be finite"),
        (np.full((3, 2), 0.2), np.ones(4), "u must be a vector with one entry per row of Z (3)"),
        (np.full((3, 2), 0.2), np.array([1.0, np.inf, 0.0]), "u must be finite; entry 1 is inf"),
        (np.zeros((0, 2)), np.ones(0), "Z is empty"),
    ],
)
def test_least_squares_refuses_bad_input_naming_it(Z, u, fragment):
    with pytest.raises(ValueError) as error:
        make_convex_oracle().least_squares(Z, u)
    assert fragment in str(error.value)


def test_backend_names_agree_with_what_runs():
    """One name per concept: the registry key (the default) is the name the backend records for its calls and the
    method name of ``oraclepriv bench convex``'s row for it."""
    from oraclepriv.bench.convex import PROJECT
    from oraclepriv.convex_oracle import CONVEX_BACKENDS, DEFAULT_CONVEX_BACKEND, ConvexOracle

    oracle = ConvexOracle()
    assert oracle.name == DEFAULT_CONVEX_BACKEND == "highs-qp+kkt" == PROJECT
    assert set(CONVEX_BACKENDS) == {DEFAULT_CONVEX_BACKEND}
    assert oracle.solver.backend == oracle.name
    assert ConvexOracle("highs-qp+kkt").regularized_erm(*_good_regularized()).backend == "highs-qp+kkt"


def test_scipy_is_a_deprecated_alias_that_warns_naming_the_new_value():
    from oraclepriv.convex_oracle import ConvexOracle

    for make in (make_convex_oracle, ConvexOracle):
        with pytest.warns(FutureWarning, match=r"backend='scipy' is deprecated.*use backend='highs-qp\+kkt'"):
            oracle = make("scipy")
        assert oracle.name == "highs-qp+kkt"
        new = make("highs-qp+kkt").regularized_erm(*_good_regularized())
        old = oracle.regularized_erm(*_good_regularized())
        assert np.array_equal(old.w, new.w) and old.objective == new.objective and old.certified


@pytest.mark.parametrize("name", ["highs", "slsqp", "", "HIGHS-QP+KKT", 3])
def test_unknown_backend_is_refused_naming_the_argument_and_the_value(name):
    from oraclepriv.convex_oracle import ConvexOracle

    for make in (make_convex_oracle, ConvexOracle):
        with pytest.raises(ValueError, match=r"^backend must be None or one of \['highs-qp\+kkt'\]") as error:
            make(name)
        assert f"got {name!r}" in str(error.value)
