"""``convex-linear``: exact, certified convex ERM for bounded linear predictors.

The convex class of Algorithm 3, the regularization learner, of Block, Bun, Desai, Shetty, Wu,
"Oracle-Efficient Differentially Private Learning with Public Data" (Theorems 3 and 7):
F = {x -> <w, x> : ||w||_inf <= 1} on inputs with ||x||_1 <= 1, loss l(v, y) = |v - y| / 2 with
y in {-1, +1}.
Two problems, both behind :mod:`oraclepriv.convex_oracle`:

* regularized ERM, a convex QP in (w, t):  min 1/2 sum t_i + eta_sum w' S w,  t_i >= |<w,X_i> - y_i|,
  -1 <= w <= 1, S = Z'Z / m. Solved by scipy SLSQP, then CERTIFIED by a Lagrangian lower bound:
  for any s in [-1,1]^n and any w0, by |r| >= s r and convexity of w'Sw,
      F(w) >= -s'y/2 - eta_sum w0'S w0 - || X's/2 + 2 eta_sum S w0 ||_1      for all feasible w;
  s is chosen by an LP (HiGHS via scipy.optimize.linprog) maximising this bound. At the exact
  optimum the bound is tight (KKT), so the certified gap is the solver's true suboptimality, and
  ``certified`` means gap <= opt_tol (the learner folds opt_tol into its stability radius). The gap
  is proved, not estimated: the bound is lowered, and the objective raised, by bounds on their own
  float64 rounding errors (:func:`_rounding_allowance`).
* Perturb's least squares  min ||Z w - u||^2,  -1 <= w <= 1: bounded-variable least squares
  (scipy.optimize.lsq_linear, BVLS active set), then CERTIFIED by a Lagrangian lower bound, not by
  the solver's status: for any lam in R^m, ||r||^2 >= 2 lam'r - ||lam||^2 (from ||r - lam||^2 >= 0),
  so with r = Z w - u and the minimum of 2 (Z'lam)'w over the box,
      ||Z w - u||^2 >= -||lam||^2 - 2 lam'u - 2 ||Z'lam||_1      for all feasible w;
  lam is the residual Z w0 - u at the BVLS answer w0. At an exact KKT point the bound equals the
  objective (objective - bound = 2 sum_j (|g_j| + g_j w0_j), g = Z'lam, which is 0 when every free
  coordinate has g_j = 0 and every coordinate at a bound has the sign of g_j the bound needs). The
  bound is lowered by a bound on its own float64 rounding error (:func:`least_squares_bound`; about
  1e-15 of ||lam||^2 + 2 |lam|'|u| + 2 sum_ij |Z_ij lam_i|, so calls with very large targets, where
  that sum nears 1e9, stay uncertified at the default opt_tol = 1e-6), and ``certified`` means
  objective - bound <= opt_tol, as for regularized ERM. BVLS's own status is recorded as
  ``solver_status`` and proves nothing.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from scipy.optimize import linprog, lsq_linear, minimize

__all__ = ["ConvexLinearBackend", "CLASS_NAME", "least_squares_bound"]

CLASS_NAME = "linear"
#: HiGHS tolerances for the LP that picks the Lagrangian bound's multipliers
BOUND_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def _highs_qp(X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float) -> np.ndarray:
    """w of  min 1/2 sum t + eta_sum w'Sw  s.t. t >= |Xw - y|, -1 <= w <= 1, solved by HiGHS' QP solver."""
    import scipy.sparse as sp
    from oraclepriv.solvers.highs import import_highspy

    highspy = import_highspy()
    n, d = X.shape
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = d + n, 2 * n
    lp.col_cost_ = np.r_[np.zeros(d), 0.5 * np.ones(n)]
    lp.col_lower_ = np.r_[-np.ones(d), np.zeros(n)]
    lp.col_upper_ = np.r_[np.ones(d), np.full(n, inf)]
    lp.row_lower_ = np.r_[-y, y]  # t - Xw >= -y and t + Xw >= y
    lp.row_upper_ = np.full(2 * n, inf)
    A = sp.csc_matrix(np.block([[-X, np.eye(n)], [X, np.eye(n)]]))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = d + n, 2 * n
    hessian = np.zeros((d + n, d + n))
    hessian[:d, :d] = 2.0 * eta_sum * S  # HiGHS minimises 1/2 x'Qx + c'x
    lower = sp.csc_matrix(np.tril(hessian))
    Q = highspy.HighsHessian()
    Q.dim_, Q.format_ = d + n, highspy.HessianFormat.kTriangular
    Q.start_, Q.index_, Q.value_ = lower.indptr, lower.indices, lower.data
    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    solver.passModel(lp)
    solver.passHessian(Q)
    solver.run()
    return np.clip(np.asarray(solver.getSolution().col_value)[:d], -1.0, 1.0)


def least_squares_bound(w0: np.ndarray, Z: np.ndarray, u: np.ndarray) -> float:
    """A proved lower bound on  min ||Z w - u||^2  over -1 <= w <= 1 (module docstring), from the
    multiplier lam = Z w0 - u; any w0 gives a valid bound, an optimal w0 a tight one.

    Any lam gives a valid bound, so the rounding of lam itself is harmless; only the evaluation of
    -||lam||^2 - 2 lam'u - 2 ||Z'lam||_1 is rounded. Each product is rounded once (relative error
    <= u = 2^-53, plus at most 2^-1074 absolute if it underflows) and every sum is a correctly
    rounded ``math.fsum`` (one more relative u on its value), so the computed value is within
    4 u M of the exact one, M = ||lam||^2 + 2 |lam|'|u| + 2 sum_ij |Z_ij lam_i|. The bound is the
    value minus 8 u M (the factor 2 covers the rounding of M's own sums) minus the underflow terms.
    A NaN or infinite value gives -inf.
    """
    Z = np.asarray(Z, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64)
    lam = Z @ np.asarray(w0, dtype=np.float64) - u
    m, d = Z.shape
    squares, cross, columns = lam * lam, lam * u, Z * lam[:, None]
    a = math.fsum(squares)
    b = math.fsum(cross)
    c = math.fsum(abs(math.fsum(column)) for column in columns.T)
    value = math.fsum((-a, -2.0 * b, -2.0 * c))
    magnitude = a + 2.0 * float(np.abs(cross).sum()) + 2.0 * float(np.abs(columns).sum())
    slack = 8.0 * 2.0**-53 * magnitude + 4.0 * m * (d + 2) * 2.0**-1074
    bound = value - slack
    return bound if math.isfinite(bound) else -math.inf


def _rounding_allowance(magnitude: float, n: int, d: int) -> float:
    """A bound on the float64 rounding error of a value built from products and sums over at most
    n + 2d + 4 terms per chain, given the sum ``magnitude`` of the absolute values of every product.

    Standard error analysis (Higham, *Accuracy and Stability of Numerical Algorithms*, section 3.1): a
    sum or dot product of k terms computed in any order is within gamma_k = k u / (1 - k u) times the sum
    of its terms' absolute values, u = 2^-53; nested sums compose to gamma of the chain length. The factor
    2 covers the rounding of ``magnitude`` itself; the absolute term covers products that underflow.
    Used by the regularized-ERM certificate, whose gap feeds Algorithm 3's stability radius: the gap must
    be proved, not estimated."""
    k = n + 2 * d + 4
    unit = 2.0**-53
    gamma = k * unit / (1.0 - k * unit)
    return 2.0 * gamma * magnitude + 4.0 * (n * d + d * d + n) * 2.0**-1074


class ConvexLinearBackend:
    """Exact, certified solver for the bounded linear class (module docstring).

    Search only: the protocol layer (``oraclepriv.convex_oracle``) builds the result and records
    the call. Not a registered 0-1 backend: it solves the convex problems of the regularization
    and Perturb learners.

    Parameters
    ----------
    opt_tol : float, default 1e-6
        A regularized-ERM answer is ``certified`` when its gap to the Lagrangian lower bound is at
        most ``opt_tol`` (the learner folds it into its stability radius).

    Attributes
    ----------
    backend : str
        The name recorded in the results.

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (Algorithm 3; Theorems 3 and 7).
    .. [2] D. Kraft, "A software package for sequential quadratic programming", DFVLR-FB 88-28,
       1988 (SLSQP, via scipy.optimize.minimize).
    .. [3] P. B. Stark, R. L. Parker, "Bounded-variable least-squares: an algorithm and
       applications", Computational Statistics 10, 1995 (BVLS, via scipy.optimize.lsq_linear).
    """

    backend = "scipy-slsqp+highs-dual"

    def __init__(self, opt_tol: float = 1e-6) -> None:
        self.opt_tol = opt_tol

    @staticmethod
    def objective(w: np.ndarray, X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float) -> float:
        return float(0.5 * np.abs(X @ w - y).sum() + eta_sum * (w @ S @ w))

    @staticmethod
    def objective_error(w: np.ndarray, X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float) -> float:
        """A bound on the float64 rounding error of :meth:`objective` at w (see :func:`_rounding_allowance`)."""
        n, d = X.shape
        magnitude = 0.5 * float((np.abs(X) @ np.abs(w)).sum() + np.abs(y).sum()) + eta_sum * float(
            np.abs(w) @ np.abs(S) @ np.abs(w)
        )
        return _rounding_allowance(magnitude, n, d)

    @staticmethod
    def lower_bound(w0: np.ndarray, X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float) -> float:
        """max_s of the Lagrangian bound at w0 (LP over s in [-1,1]^n, then re-evaluated in float64 and
        lowered by a bound on that evaluation's rounding error, :func:`_rounding_allowance`)."""
        n, d = X.shape
        g0 = 2.0 * eta_sum * (S @ w0)
        # variables (s_1..s_n, e_1..e_d): maximise -y's/2 - sum e  s.t.  e >= +-(X's/2 + g0)
        c = np.concatenate([0.5 * y, np.ones(d)])
        A = np.block([[0.5 * X.T, -np.eye(d)], [-0.5 * X.T, -np.eye(d)]])
        b = np.concatenate([-g0, g0])
        bounds = [(-1.0, 1.0)] * n + [(0, None)] * d
        # tight tolerances: at HiGHS' defaults (1e-7) the bound itself was up to 1e-6 loose
        res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs", options=BOUND_LP_OPTIONS)
        s = np.clip(res.x[:n], -1.0, 1.0) if res.x is not None else np.zeros(n)
        return ConvexLinearBackend.lagrangian_bound(s, w0, X, y, S, eta_sum)

    @staticmethod
    def lagrangian_bound(
        s: np.ndarray, w0: np.ndarray, X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float
    ) -> float:
        """-s'y/2 - eta_sum w0'S w0 - ||X's/2 + 2 eta_sum S w0||_1 for s in [-1, 1]^n (module docstring),
        evaluated in float64 and lowered by a bound on the evaluation's rounding error: a proved lower
        bound on the regularized objective over the box."""
        n, d = X.shape
        g0 = 2.0 * eta_sum * (S @ w0)
        value = float(-0.5 * (y @ s) - eta_sum * (w0 @ S @ w0) - np.abs(0.5 * (X.T @ s) + g0).sum())
        # the magnitudes of every product summed above (g0's error enters through ||X's/2 + g0||_1)
        magnitude = (
            0.5 * float(np.abs(y) @ np.abs(s))
            + eta_sum * float(np.abs(w0) @ np.abs(S) @ np.abs(w0))
            + 0.5 * float((np.abs(X.T) @ np.abs(s)).sum())
            + 2.0 * eta_sum * float((np.abs(S) @ np.abs(w0)).sum())
        )
        bound = value - _rounding_allowance(magnitude, n, d)
        return bound if math.isfinite(bound) else -math.inf

    def solve_regularized(
        self, X: np.ndarray, y: np.ndarray, Z: np.ndarray, eta_sum: float
    ) -> tuple[np.ndarray, dict[str, Any]]:
        start = time.perf_counter()
        n, d = X.shape
        S = Z.T @ Z / Z.shape[0]

        def fun(v):
            w, t = v[:d], v[d:]
            return 0.5 * t.sum() + eta_sum * (w @ S @ w)

        def jac(v):
            return np.concatenate([2.0 * eta_sum * (S @ v[:d]), 0.5 * np.ones(n)])

        A = np.block([[-X, np.eye(n)], [X, np.eye(n)]])  # t - r >= 0 and t + r >= 0, r = Xw - y
        shift = np.concatenate([y, -y])
        constraints = {"type": "ineq", "fun": lambda v: A @ v + shift, "jac": lambda v: A}
        w_start = np.zeros(d)
        v0 = np.concatenate([w_start, np.abs(X @ w_start - y) + 1e-3])
        res = minimize(
            fun,
            v0,
            jac=jac,
            method="SLSQP",
            constraints=[constraints],
            bounds=[(-1.0, 1.0)] * d + [(0, None)] * n,
            options={"maxiter": 500, "ftol": 1e-12},
        )
        w = np.clip(res.x[:d], -1.0, 1.0)
        objective = self.objective(w, X, y, S, eta_sum)
        bound = self.lower_bound(w, X, y, S, eta_sum)
        solver = "slsqp"
        if objective - bound > self.opt_tol:  # SLSQP stopped short (2 in 1200 random instances): HiGHS' QP solver
            w_qp = _highs_qp(X, y, S, eta_sum)
            objective_qp = self.objective(w_qp, X, y, S, eta_sum)
            if objective_qp < objective:
                w, objective, solver = w_qp, objective_qp, "highs-qp"
                bound = max(bound, self.lower_bound(w, X, y, S, eta_sum))
        # the certified gap covers the rounding of both numbers: F(w) <= objective + its error bound
        gap = max(0.0, objective + self.objective_error(w, X, y, S, eta_sum) - bound)
        certified = bool(gap <= self.opt_tol)
        info = {
            "hypothesis_class": CLASS_NAME,
            "backend": self.backend,
            "n": n + Z.shape[0],
            "d": d,
            "signed_weights": False,
            # "optimal" only when proved: SLSQP's own success flag proves nothing
            "status": "optimal" if certified else ("feasible" if math.isfinite(objective) else "error"),
            "certified": certified,
            "objective": objective,
            "bound": bound,
            "gap": gap,
            "nodes": int(res.nit),
            "seconds": time.perf_counter() - start,
            "solver": solver,
        }
        return w, info

    def solve_least_squares(self, Z: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
        """BVLS, then the Lagrangian lower bound of :func:`least_squares_bound` at its answer:
        ``certified`` iff objective - bound <= opt_tol (the solver's own status is only recorded)."""
        start = time.perf_counter()
        res = lsq_linear(Z, u, bounds=(-1.0, 1.0), method="bvls")
        w = np.clip(res.x, -1.0, 1.0)
        objective = float(np.sum((Z @ w - u) ** 2))
        bound = least_squares_bound(w, Z, u) if math.isfinite(objective) else -math.inf
        gap = max(0.0, objective - bound) if math.isfinite(objective) else math.inf
        certified = bool(gap <= self.opt_tol)
        info = {
            "hypothesis_class": CLASS_NAME,
            "backend": "scipy-bvls",
            "n": Z.shape[0],
            "d": Z.shape[1],
            "signed_weights": False,
            "status": "optimal" if certified else ("feasible" if math.isfinite(objective) else "error"),
            "certified": certified,
            "objective": objective,
            "bound": bound,
            "gap": gap,
            "nodes": int(res.nit),
            "seconds": time.perf_counter() - start,
            "solver_status": int(res.status),
        }
        return w, info
