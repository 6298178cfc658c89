"""``convex-linear``: exact, certified convex ERM for bounded linear predictors.

The convex class of Algorithm 3, the regularization learner, of Block, Bun, Desai, Shetty, Wu,
"Oracle-Efficient Differentially Private Learning with Public Data" (Theorems 3 and 7):
F = {x -> <w, x> : ||w||_inf <= 1} on inputs with ||x||_1 <= 1, loss l(v, y) = |v - y| / 2 with
y in {-1, +1}.
Two problems, both behind :mod:`oraclepriv.convex_oracle`:

* regularized ERM, a convex QP in (w, t):  min 1/2 sum t_i + eta_sum w' S w,  t_i >= |<w,X_i> - y_i|,
  -1 <= w <= 1, S = Z'Z / m. On the class's domain (rows in the l1 ball) the loss is linear in w and the
  problem is a d-variable box QP (:func:`_box_qp`); that, else the epigraph QP, solved by HiGHS' QP solver
  (or, where its active-set method cycles on degenerate data, Kelley's tangent-plane LPs,
  :func:`_tangent_plane_answers`), polished on its active set (the KKT system, :func:`_kkt_polish`;
  docs/convex-oracle.md), then CERTIFIED by a Lagrangian lower bound:
  for any s in [-1,1]^n and any w0, by |r| >= s r and convexity of w'Sw,
      F(w) >= -s'y/2 - eta_sum w0'S w0 - || X's/2 + 2 eta_sum S w0 ||_1      for all feasible w;
  s is the polished answer's KKT multipliers or, when those fall short, chosen by an LP (HiGHS via
  scipy.optimize.linprog) maximising this bound. At the exact
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

import itertools
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy.optimize import linprog, lsq_linear

__all__ = ["ConvexLinearBackend", "CLASS_NAME", "least_squares_bound"]

CLASS_NAME = "linear"
#: HiGHS tolerances for the LP that picks the Lagrangian bound's multipliers
BOUND_LP_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def _run_highs_qp(
    cost: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    A: Any,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    hessian: np.ndarray,
    tolerance: float | None,
) -> np.ndarray | None:
    """x of  min 1/2 x'Hx + cost'x  s.t. row_lower <= A x <= row_upper, lower <= x <= upper by HiGHS' QP
    solver (a primal active-set method), where H is ``hessian`` on the first k variables and 0 elsewhere;
    A is a scipy sparse matrix. ``tolerance``: HiGHS' primal and dual feasibility tolerances (None: its
    defaults). None when the answer is missing or not finite."""
    import scipy.sparse as sp
    from oraclepriv.solvers.mip.highs import import_highspy

    highspy = import_highspy()
    num_col, num_row = len(cost), len(row_lower)
    inf = highspy.kHighsInf
    model = highspy.HighsLp()
    model.num_col_, model.num_row_ = num_col, num_row
    model.col_cost_, model.col_lower_, model.col_upper_ = cost, lower, np.where(np.isinf(upper), inf, upper)
    model.row_lower_, model.row_upper_ = row_lower, np.where(np.isinf(row_upper), inf, row_upper)
    A = sp.csc_matrix(A)
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_, model.a_matrix_.index_, model.a_matrix_.value_ = A.indptr, A.indices, A.data
    model.a_matrix_.num_col_, model.a_matrix_.num_row_ = num_col, num_row
    triangle = sp.csc_matrix(np.tril(hessian))
    Q = highspy.HighsHessian()
    Q.dim_, Q.format_ = num_col, highspy.HessianFormat.kTriangular
    Q.start_ = np.r_[triangle.indptr, np.full(num_col - hessian.shape[0], triangle.indptr[-1])]
    Q.index_, Q.value_ = triangle.indices, triangle.data
    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    # the active-set QP can cycle on degenerate data (collinear rows, a rank-1 S): bounded, and the
    # caller falls back to :func:`_tangent_plane_answers` when no answer certifies
    solver.setOptionValue("qp_iteration_limit", QP_ITERATION_LIMIT)
    if tolerance is not None:
        solver.setOptionValue("primal_feasibility_tolerance", tolerance)
        solver.setOptionValue("dual_feasibility_tolerance", tolerance)
    solver.passModel(model)
    solver.passHessian(Q)
    solver.run()
    x = np.asarray(solver.getSolution().col_value)
    return x if x.shape == (num_col,) and np.all(np.isfinite(x)) else None


def _highs_qp(
    X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float, tolerance: float | None = None
) -> np.ndarray:
    """w of the epigraph QP  min 1/2 sum t + eta_sum w'Sw  s.t. t >= |Xw - y|, -1 <= w <= 1 (d + n
    variables, 2n sparse rows), by HiGHS' QP solver; w = 0 when it fails."""
    import scipy.sparse as sp

    n, d = X.shape
    identity = sp.identity(n, format="csr")
    x = _run_highs_qp(
        cost=np.r_[np.zeros(d), 0.5 * np.ones(n)],
        lower=np.r_[-np.ones(d), np.zeros(n)],
        upper=np.r_[np.ones(d), np.full(n, np.inf)],
        A=sp.bmat([[sp.csr_matrix(-X), identity], [sp.csr_matrix(X), identity]]),
        row_lower=np.r_[-y, y],  # t - Xw >= -y and t + Xw >= y
        row_upper=np.full(2 * n, np.inf),
        hessian=2.0 * eta_sum * S,  # HiGHS minimises 1/2 x'Qx + c'x; t has no block
        tolerance=tolerance,
    )
    return np.clip(x[:d], -1.0, 1.0) if x is not None else np.zeros(d)


def _box_qp(X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float) -> np.ndarray:
    """w of  min -1/2 (X'y)'w + eta_sum w'Sw  over -1 <= w <= 1 (d variables, no rows), by HiGHS' QP solver.

    On the class's domain this IS the regularized problem: with ||X_i||_1 <= 1 and ||w||_inf <= 1,
    |<w, X_i>| <= 1, so y_i <w, X_i> <= 1 and |<w, X_i> - y_i| = 1 - y_i <w, X_i> (y_i in {-1, +1}); the
    loss is linear in w and F(w) = n/2 - 1/2 (X'y)'w + eta_sum w'Sw. The n points enter through one
    product X'y, so the solve costs O(nd) plus a d-variable QP. Only a candidate: the caller certifies it
    on the original objective. w = 0 when the solver fails."""
    import scipy.sparse as sp

    d = X.shape[1]
    x = _run_highs_qp(
        cost=-0.5 * (X.T @ y),
        lower=-np.ones(d),
        upper=np.ones(d),
        A=sp.csc_matrix((0, d)),
        row_lower=np.zeros(0),
        row_upper=np.zeros(0),
        hessian=2.0 * eta_sum * S,
        tolerance=None,
    )
    return np.clip(x, -1.0, 1.0) if x is not None else np.zeros(d)


#: residuals and box distances at most this far from 0 count as active in the KKT polish
KKT_ACTIVE_TOLERANCES = (1e-10, 1e-8, 1e-6)
#: the polish solves a dense system over the free coordinates and the distinct kinks; more kinks skip it
KKT_MAX_KINKS = 2000
#: rows with l1 norm up to 1 + this get the box-QP candidate (a candidate only: rounding cannot mislead it)
L1_BALL_SLACK = 1e-9
#: HiGHS' active-set QP iterations before it counts as failed (it cycles on some degenerate data)
QP_ITERATION_LIMIT = 100_000
#: the fallback's tangent-plane LPs: at most this many, polished and checked every TANGENT_CHECK_EVERY-th;
#: it stops when a check improves neither the best objective nor the bound (a gap at the rounding floor)
TANGENT_ROUNDS = 300
TANGENT_CHECK_EVERY = 10


def _kkt_polish(
    w: np.ndarray, X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float, tol: float
) -> tuple[np.ndarray, np.ndarray]:
    """Re-solve the optimality conditions of the regularized problem on the active set that w shows;
    returns (w, s) with s in [-1, 1]^n the multipliers of the |.| terms.

    A QP solver stops at its feasibility tolerances, whose effect on the objective grows with n, while
    ``certified`` needs an absolute gap below ``opt_tol`` (docs/convex-oracle.md). At the optimum, with
    K = {i : X_i w = y_i} (the kinks of |.|), s_i = sign(X_i w - y_i) off K, and the coordinates at +-1 fixed, the free
    coordinates F and the kink multipliers s_K in [-1, 1] solve the linear system
        2 eta_sum (S w)_F + 1/2 (X' s)_F = 0,    X_K w = y_K,
    so the system read off a near-optimal w (active within ``tol``) gives the optimum to float64
    accuracy when the active set is right, and s is then the multiplier at which the Lagrangian bound
    (module docstring) is tight. Both are only candidates: the caller keeps the w with the lowest
    re-scored objective and certifies it by the bound at this s, and by the LP's s when that falls short.

    Duplicated kink points share one multiplier (one row, weighted by its count); with more than
    ``KKT_MAX_KINKS`` distinct kinks (massively degenerate data) the polish is skipped and w returned."""
    r = X @ w - y
    kinks = np.abs(r) <= tol
    signs = np.sign(r)
    fixed = np.where(w >= 1.0 - tol, 1.0, np.where(w <= -1.0 + tol, -1.0, 0.0))
    free = fixed == 0.0
    if not free.any():
        return fixed, signs
    kink_rows, kink_of_point, counts = np.unique(
        np.column_stack([X[kinks], y[kinks]]), axis=0, return_inverse=True, return_counts=True
    )
    if len(kink_rows) > KKT_MAX_KINKS:
        return w, signs
    XK, yK = kink_rows[:, :-1], kink_rows[:, -1]
    nf, nk = int(free.sum()), len(kink_rows)
    system = np.block(
        [
            [2.0 * eta_sum * S[np.ix_(free, free)], 0.5 * (counts[:, None] * XK[:, free]).T],
            [XK[:, free], np.zeros((nk, nk))],
        ]
    )
    rhs = np.r_[
        -0.5 * (signs[~kinks] @ X[~kinks][:, free]) - 2.0 * eta_sum * (S[np.ix_(free, ~free)] @ fixed[~free]),
        yK - XK[:, ~free] @ fixed[~free],
    ]
    solution = np.linalg.lstsq(system, rhs, rcond=None)[0]
    if not np.all(np.isfinite(solution)):
        return w, signs
    out = fixed.copy()
    out[free] = solution[:nf]
    signs[kinks] = np.clip(solution[nf:], -1.0, 1.0)[np.ravel(kink_of_point)]
    return np.clip(out, -1.0, 1.0), signs


def _tangent_plane_answers(X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float) -> Iterator[np.ndarray]:
    """The fallback when the QP solver fails: an LP over (w, t, u, q) with u = L w, S = L'L (eigenvalues),
    min 1/2 sum t + eta_sum sum q,  t >= |Xw - y|,  q_j >= 2 a u_j - a^2 at the points a met so far
    (tangent planes of u_j^2: Kelley's cutting-plane method on a separable quadratic), solved by HiGHS'
    simplex; yields each LP's w and adds the tangents at its u. The answers are candidates for
    :func:`_kkt_polish`, which needs the active set, not the exact optimum."""
    import scipy.sparse as sp

    n, d = X.shape
    eigenvalues, vectors = np.linalg.eigh(S)
    positive = eigenvalues > 1e-14 * max(1.0, float(eigenvalues.max()))
    L = np.sqrt(eigenvalues[positive])[:, None] * vectors[:, positive].T
    r = L.shape[0]
    cost = np.r_[np.zeros(d), 0.5 * np.ones(n), np.zeros(r), eta_sum * np.ones(r)]
    identity = sp.identity(n, format="csr")
    empty = sp.csr_matrix((n, 2 * r))
    rows = [sp.bmat([[sp.csr_matrix(X), -identity, empty], [sp.csr_matrix(-X), -identity, empty]], format="csr")]
    rhs = [np.r_[y, -y]]  # Xw - t <= y,  -Xw - t <= -y
    A_eq = sp.hstack([sp.csr_matrix(L), sp.csr_matrix((r, n)), -sp.identity(r), sp.csr_matrix((r, r))], format="csr")
    bounds = [(-1.0, 1.0)] * d + [(0.0, None)] * n + [(None, None)] * r + [(0.0, None)] * r

    def tangents(a: np.ndarray) -> None:  # 2 a_j u_j - q_j <= a_j^2
        rows.append(sp.hstack([sp.csr_matrix((r, d + n)), sp.diags(2.0 * a), -sp.identity(r)], format="csr"))
        rhs.append(a * a)

    for a in (np.zeros(r), np.ones(r), -np.ones(r)):
        tangents(a)
    while True:
        res = linprog(
            cost,
            A_ub=sp.vstack(rows, format="csr"),
            b_ub=np.concatenate(rhs),
            A_eq=A_eq,
            b_eq=np.zeros(r),
            bounds=bounds,
            method="highs",
        )
        if res.x is None:
            return
        yield np.clip(res.x[:d], -1.0, 1.0)
        tangents(res.x[d + n : d + n + r])


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
    """A bound on the float64 rounding error of the regularized objective or its Lagrangian bound as
    :class:`ConvexLinearBackend` evaluates them, given the sum ``magnitude`` of the absolute values of
    every product they add up.

    Standard error analysis (Higham, *Accuracy and Stability of Numerical Algorithms*, section 3.1): a
    sum or dot product of k terms computed in any order is within gamma_k = k u / (1 - k u) times the sum
    of its terms' absolute values, u = 2^-53, and nested operations compose to gamma of the chain length.
    Every sum over the n points is a correctly rounded ``math.fsum`` (one rounding, whatever n), so the
    longest chain is 2d + 6 operations (a d-term product S w, a d-term w'(S w), the scaling by eta_sum,
    the fsums), and the allowance does not grow with n. The factor 2 covers the rounding of
    ``magnitude`` itself (a float sum over at most n d terms, relative error below 1/2 while n d u < 1/4);
    the absolute term covers products that underflow. Used by the regularized-ERM certificate, whose gap
    feeds Algorithm 3's stability radius: the gap must be proved, not estimated."""
    k = 2 * d + 6
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
    box_qp : bool, default True
        Try the d-variable box QP first when every row lies in the l1 ball (:func:`_box_qp`); False
        starts from the epigraph QP (benchmarks measure what the reduction buys).

    Attributes
    ----------
    backend : str
        The name recorded in the results.
    requires : tuple of str
        The packages it solves with (the registry's ``is_installed`` checks them without importing).

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (Algorithm 3; Theorems 3 and 7).
    .. [2] Q. Huangfu, J. A. J. Hall, "Parallelizing the dual revised simplex method", Mathematical
       Programming Computation 10, 2018 (HiGHS; its QP solver is a primal active-set method).
    .. [3] P. B. Stark, R. L. Parker, "Bounded-variable least-squares: an algorithm and
       applications", Computational Statistics 10, 1995 (BVLS, via scipy.optimize.lsq_linear).
    """

    backend = "highs-qp+kkt"
    requires = ("highspy", "scipy")  # the QPs in highspy, the Lagrangian bound in scipy.optimize.linprog

    def __init__(self, opt_tol: float = 1e-6, box_qp: bool = True) -> None:
        self.opt_tol = opt_tol
        self.box_qp = box_qp

    @staticmethod
    def objective(w: np.ndarray, X: np.ndarray, y: np.ndarray, S: np.ndarray, eta_sum: float) -> float:
        """F(w) = 1/2 sum |<w, X_i> - y_i| + eta_sum w'S w in float64, the sum over the points correctly
        rounded (``math.fsum``; :func:`_rounding_allowance`)."""
        return math.fsum((0.5 * math.fsum(np.abs(X @ w - y)), eta_sum * float(w @ S @ w)))

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
        # the sums over the n points correctly rounded (math.fsum), so the rounding does not grow with n
        Xs = np.array([math.fsum(column) for column in (X * s[:, None]).T])
        value = math.fsum((-0.5 * math.fsum(y * s), -eta_sum * float(w0 @ S @ w0), -math.fsum(np.abs(0.5 * Xs + g0))))
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
        """Candidates, each polished by :func:`_kkt_polish`, until one certifies: on the class's domain
        (rows in the l1 ball) the d-variable box QP it reduces to (:func:`_box_qp`), then HiGHS' QP on the
        epigraph form (default, then tight tolerances), then the tangent-plane LPs of
        :func:`_tangent_plane_answers`. The candidate with the lowest re-scored objective is certified by the
        Lagrangian bound at its KKT multipliers, and if that falls short by the LP's (:meth:`lower_bound`)."""
        start = time.perf_counter()
        n, d = X.shape
        S = Z.T @ Z / Z.shape[0]
        best: list[Any] = [math.inf, np.zeros(d)]  # objective, w
        bound = -math.inf

        def offer(w_candidate: np.ndarray) -> float:
            """Polish the candidate, keep the best, return the certified gap of the best so far."""
            nonlocal bound
            polished = [_kkt_polish(w_candidate, X, y, S, eta_sum, tol) for tol in KKT_ACTIVE_TOLERANCES]
            values = [self.objective(w_c, X, y, S, eta_sum) for w_c, _ in polished]
            for value, w_c in [(self.objective(w_candidate, X, y, S, eta_sum), w_candidate)] + [
                (value, w_c) for value, (w_c, _) in zip(values, polished)
            ]:
                if math.isfinite(value) and value < best[0]:
                    best[:] = [value, w_c]
            # any (s, w0) gives a valid bound: the multipliers of the best polished point, even when a
            # rounding-level tie left the unpolished candidate the best
            w_p, s_p = polished[int(np.argmin(values))]
            bound = max(bound, self.lagrangian_bound(s_p, w_p, X, y, S, eta_sum))
            error = self.objective_error(best[1], X, y, S, eta_sum)
            if best[0] + error - bound > self.opt_tol:
                bound = max(bound, self.lower_bound(best[1], X, y, S, eta_sum))
            return best[0] + error - bound

        sources: list[tuple[str, Callable[[], np.ndarray]]] = []
        if self.box_qp and (n == 0 or float(np.abs(X).sum(axis=1).max()) <= 1.0 + L1_BALL_SLACK):
            sources.append(("box-qp", lambda: _box_qp(X, y, S, eta_sum)))
        sources += [
            ("highs-qp", lambda: _highs_qp(X, y, S, eta_sum)),
            ("highs-qp", lambda: _highs_qp(X, y, S, eta_sum, 1e-10)),
        ]
        solver = "tangent-plane-lp"
        for name, candidate in sources:
            if offer(candidate()) <= self.opt_tol:
                solver = name
                break
        else:  # the QP solver cycled or stopped short: Kelley's LPs, until certified or stalled
            last = (best[0], bound)
            for k, w_lp in enumerate(itertools.islice(_tangent_plane_answers(X, y, S, eta_sum), TANGENT_ROUNDS)):
                if k % TANGENT_CHECK_EVERY == TANGENT_CHECK_EVERY - 1:
                    if offer(w_lp) <= self.opt_tol or (best[0], bound) == last:
                        break
                    last = (best[0], bound)
        objective, w = best[0], best[1]
        # the certified gap covers the rounding of both numbers: F(w) <= objective + its error bound
        gap = max(0.0, objective + self.objective_error(w, X, y, S, eta_sum) - bound)
        certified = bool(gap <= self.opt_tol)
        info = {
            "hypothesis_class": CLASS_NAME,
            "backend": self.backend,
            "n": n + Z.shape[0],
            "d": d,
            "signed_weights": False,
            # "optimal" only when proved: the QP solver's own status proves nothing
            "status": "optimal" if certified else ("feasible" if math.isfinite(objective) else "error"),
            "certified": certified,
            "objective": objective,
            "bound": bound,
            "gap": gap,
            "nodes": None,  # no search tree
            "solver": solver,
            "seconds": time.perf_counter() - start,
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
