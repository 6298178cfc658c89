"""Non-separable subsets ("cores") of a labelled point set, found by LP and verified exactly.

Used by the combinatorial-Benders / implicit-hitting-set halfspace oracle of
:mod:`oraclepriv.solvers.mip.mipbackend` (``method="cuts"``): the hitting-set master of
:class:`oraclepriv.solvers.mip.milp.HalfspaceHittingSet` needs, for a set K of points it wants to classify
correctly, either a proof that K is realisable by a halfspace or a small subset of K that is not.

Facts used (for finite point sets; P = points labelled 1, N = points labelled 0):

* A labelling is induced by a closed halfspace 1[w.x + b >= 0] iff P and N are *strictly*
  separable iff conv(P) and conv(N) are disjoint (see :mod:`oraclepriv.solvers.combinatorial.enumerate`).
* Farkas: conv(P) meets conv(N) iff there is lambda >= 0 with
  sum_i lambda_i s_i (x_i, 1) = 0 and sum_i lambda_i = 1  (s_i = +1 on P, -1 on N): then
  sum_P lambda = sum_N lambda = 1/2 and the two weighted means coincide.
* A basic solution of that system (d + 2 equality rows) has at most d + 2 non-zeros with
  linearly independent columns, so its support S is a minimal non-separable set (Radon /
  Caratheodory); in general position |S| = d + 2.

Every halfspace misclassifies at least one point of a non-separable S, so the "core cut"
sum_{i in S} z_i >= 1 is valid for every halfspace (margin-free, any weights): this is the
combinatorial Benders cut of Codato & Fischetti ("Combinatorial Benders' cuts for mixed-integer
linear programming", Oper. Res. 54(4), 2006) for the minimum-misclassification problem, i.e.
an irreducible infeasible subsystem (IIS) cut as in Pfetsch's branch-and-cut for the maximum
feasible subsystem problem (SIAM J. Optim. 19(1), 2008).

Exactness: the LP runs in float64 on [-1, 1]-scaled data, so a core it proposes is re-checked
in exact rational arithmetic on the *original* float64 coordinates (:func:`verify_core`:
integer Gaussian elimination, Bareiss) before it may be used as a cut. A proposal that fails the
exact check is never used as a cut (see :class:`Separator`). The check is fraction-free: Bareiss
elimination, then back substitution of D * lambda in integers (D the last pivot; Cramer), and its
verdicts are memoised per support (:meth:`Separator.verify`).

Separation of fractional points (``scip-bc``): :meth:`Separator.min_cost_core` solves the same
Farkas system with an objective min sum_i c_i lambda_i (c = the LP point, Pfetsch 2008); its
optimal vertex is a minimal non-separable set of cheap points, a *proposal* that becomes a cut
only after :meth:`Separator.verify`.

The cover model these cuts belong to, and why a verified core gives a cut valid for the whole
class: ``docs/theory/cover-cut-model.md``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from oraclepriv.solvers.combinatorial.exact_halfspace import exact_separation, minimal_non_separable

__all__ = ["verify_core", "Separator", "CoreStatus"]

#: the exact fallback's working-set limit, in multiples of d + 2 rows
EXACT_ROWS_PER_DIMENSION = 4
#: the exact fallback runs in d <= this (the rational simplex's cost grows fast with d)
EXACT_MAX_DIMENSION = 6
#: seconds the exact fallback may spend over a separator's life (the points of one oracle problem)
EXACT_SECONDS = 5.0


def _row_to_ints(values: list[float]) -> list[int]:
    """Multiply a row of floats by one power of two so every entry is an exact integer."""
    ratios = [float(v).as_integer_ratio() for v in values]
    shift = max((den.bit_length() - 1 for _, den in ratios), default=0)  # denominators are powers of 2
    return [num << (shift - (den.bit_length() - 1)) for num, den in ratios]


def verify_core(X: np.ndarray, y: np.ndarray, support) -> bool:
    """Exactly decide whether the points ``support`` (indices into X, y) are a *certified* core.

    Solves  sum_i lambda_i s_i (x_i, 1) = 0,  sum_i lambda_i = 1  over the support in rational
    arithmetic. Returns True iff the columns are linearly independent, the system is consistent
    and its (then unique) solution is >= 0 — which proves conv(P_S) and conv(N_S) intersect, so
    no halfspace classifies all of S correctly. False means "not proved" (the caller drops it).
    """
    S = [int(i) for i in support]
    k = len(S)
    if k < 2:
        return False
    d = X.shape[1]
    s = [1 if y[i] == 1 else -1 for i in S]
    rows: list[list[int]] = []
    for j in range(d):
        rows.append(_row_to_ints([s[c] * float(X[S[c], j]) for c in range(k)]) + [0])
    rows.append([s[c] for c in range(k)] + [0])
    rows.append([1] * k + [1])
    m = len(rows)
    # Bareiss fraction-free elimination on the augmented matrix, pivoting on the k unknowns
    prev = 1
    for c in range(k):
        p = next((r for r in range(c, m) if rows[r][c] != 0), None)
        if p is None:
            return False  # dependent columns: not a basic (minimal) certificate
        rows[c], rows[p] = rows[p], rows[c]
        piv = rows[c][c]
        rc = rows[c]
        for r in range(c + 1, m):
            rr = rows[r]
            factor = rr[c]
            if factor == 0:
                if piv != prev:  # the Bareiss step is then rr[j] * piv // prev (exact)
                    for j in range(c + 1, k + 1):
                        rr[j] = rr[j] * piv // prev
            else:
                for j in range(c + 1, k + 1):
                    rr[j] = (rr[j] * piv - factor * rc[j]) // prev
            rr[c] = 0
        prev = piv
    if any(rows[r][k] != 0 for r in range(k, m)):
        return False  # inconsistent
    # the leading k x k block is upper triangular with non-zero diagonal and last pivot D = its
    # determinant up to sign, so (Cramer) D * lambda is an integer vector: back substitution in
    # integers, every division exact (a remainder would mean an arithmetic bug: refuse, never accept)
    D = rows[k - 1][k - 1]
    num = [0] * k
    for c in range(k - 1, -1, -1):
        rc = rows[c]
        acc = D * rc[k] - sum(rc[j] * num[j] for j in range(c + 1, k))
        q, rem = divmod(acc, rc[c])
        if rem:
            return False
        num[c] = q
    if D < 0:
        num = [-v for v in num]
        D = -D
    return all(v >= 0 for v in num) and sum(num) == D


class CoreStatus:
    SEPARABLE = "separable"
    CORE = "core"
    UNVERIFIED = "unverified"  # the LP says non-separable but the exact check did not confirm it


class Separator:
    """A persistent Farkas LP over all points; ``find_core(keep)`` restricts it to a subset.

    Columns lambda_i >= 0 (upper bound 0 for points outside the subset), rows
    sum_i lambda_i s_i x'_i = 0 (d rows, x' the [-1, 1]-scaled data), sum_i lambda_i s_i = 0,
    sum_i lambda_i = 1. Infeasible <=> the subset is strictly separable. Re-runs are
    warm-started by HiGHS from the previous basis (only column bounds change).
    """

    def __init__(self, highspy, Xs: np.ndarray, y: np.ndarray, X_exact: np.ndarray):
        self.highspy = highspy
        self.Xs = np.asarray(Xs, dtype=np.float64)
        self.y = np.asarray(y)
        self.X_exact = np.asarray(X_exact, dtype=np.float64)
        n, d = self.Xs.shape
        self.n, self.d = n, d
        self.h = self._new_lp()
        self._h_cost: Any = None  # a second copy with an objective, for min_cost_core (built on first use)
        self._cost = np.zeros(n)
        self._upper_cost = np.full(n, math.inf)
        self._verified: dict[tuple[int, ...], bool] = {}
        self.idx = np.arange(n, dtype=np.int32)
        self._upper = np.full(n, math.inf)
        self.lp_calls = 0
        self.unverified = 0
        #: proposals the float LP got wrong that the exact fallback decided
        self.exact_repairs = 0
        self.exact_seconds = 0.0
        #: the Farkas multipliers of the last proposal, aligned with its support
        self.last_multipliers = np.zeros(0)

    def _new_lp(self):
        n, d = self.n, self.d
        highspy = self.highspy
        sgn = np.where(self.y == 1, 1.0, -1.0)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("presolve", "off")  # tiny LPs re-solved from a warm basis
        h.addVars(n, np.zeros(n), np.full(n, math.inf))
        A = np.vstack([(sgn[:, None] * self.Xs).T, sgn[None, :], np.ones((1, n))])  # (d + 2, n)
        rows = [np.flatnonzero(A[r]) for r in range(d + 2)]
        starts = np.cumsum([0] + [len(r) for r in rows[:-1]]).astype(np.int32)
        index = np.concatenate(rows).astype(np.int32)
        value = np.concatenate([A[r, rows[r]] for r in range(d + 2)])
        rhs = np.zeros(d + 2)
        rhs[-1] = 1.0
        h.addRows(d + 2, rhs, rhs, int(index.size), starts, index, value)
        return h

    def verify(self, support) -> bool:
        """:func:`verify_core` on ``support``, memoised (a core's verdict depends only on its points)."""
        key = tuple(sorted(int(i) for i in support))
        ok = self._verified.get(key)
        if ok is None:
            ok = bool(verify_core(self.X_exact, self.y, key))
            self._verified[key] = ok
            if not ok:
                self.unverified += 1
        return ok

    def min_cost_core(self, keep: np.ndarray, cost: np.ndarray) -> np.ndarray | None:
        """A core *proposal* (not verified: call :meth:`verify`) minimising sum_i cost_i lambda_i over
        the Farkas system restricted to ``keep`` (Pfetsch 2008: with cost = an LP point x, the vertex
        found is a minimal non-separable set whose points have small x, the candidates for violated
        cover cuts). None if ``keep`` is separable or the LP fails."""
        keep = np.asarray(keep, dtype=bool)
        if not (np.any(keep & (self.y == 1)) and np.any(keep & (self.y == 0))):
            return None
        if self._h_cost is None:
            self._h_cost = self._new_lp()
            # between the LPs of one separation call only the costs change, so the last basis stays
            # primal feasible: primal simplex (about half the iterations of dual; docs/solvers/scip-bc.md)
            self._h_cost.setOptionValue("simplex_strategy", 4)
        h = self._h_cost
        upper = np.where(keep, math.inf, 0.0)
        changed = np.flatnonzero(upper != self._upper_cost).astype(np.int32)
        if changed.size:
            h.changeColsBounds(changed.size, changed, np.zeros(changed.size), upper[changed])
            self._upper_cost = upper
        cost = np.where(keep, np.asarray(cost, dtype=np.float64), 0.0)
        changed = np.flatnonzero(cost != self._cost).astype(np.int32)
        if changed.size:
            h.changeColsCost(changed.size, changed, cost[changed])
            self._cost = cost
        self.lp_calls += 1
        h.run()
        if h.getModelStatus() != self.highspy.HighsModelStatus.kOptimal:
            return None
        lam = np.asarray(h.getSolution().col_value)
        support = np.flatnonzero((lam > 0) & keep)
        return support if support.size >= 2 else None

    def find_core(self, keep: np.ndarray) -> tuple[str, np.ndarray | None]:
        """(SEPARABLE, None) | (CORE, exactly verified core indices) | (UNVERIFIED, proposal)."""
        keep = np.asarray(keep, dtype=bool)
        if not (np.any(keep & (self.y == 1)) and np.any(keep & (self.y == 0))):
            return CoreStatus.SEPARABLE, None
        upper = np.where(keep, math.inf, 0.0)
        changed = np.flatnonzero(upper != self._upper).astype(np.int32)
        if changed.size:
            self.h.changeColsBounds(changed.size, changed, np.zeros(changed.size), upper[changed])
            self._upper = upper
        self.lp_calls += 1
        self.h.run()
        S = self.highspy.HighsModelStatus
        status = self.h.getModelStatus()
        if status == S.kInfeasible:
            return CoreStatus.SEPARABLE, None
        if status != S.kOptimal:  # numerical trouble: retry from scratch once
            self.h.clearSolver()
            self.h.run()
            status = self.h.getModelStatus()
            if status == S.kInfeasible:
                return CoreStatus.SEPARABLE, None
            if status != S.kOptimal:
                return self._exact_fallback(keep, ())
        lam = np.asarray(self.h.getSolution().col_value)
        support = np.flatnonzero((lam > 0) & keep)
        self.last_multipliers = lam[support]
        if self.verify(support):
            return CoreStatus.CORE, support
        return self._exact_fallback(keep, support)

    def _exact_fallback(self, keep: np.ndarray, proposal) -> tuple[str, np.ndarray | None]:
        """The float LP's proposal failed the exact check (near-degenerate points, e.g. decimal
        coordinates on a common line): decide ``keep`` in exact arithmetic instead (the exact LP of
        :func:`~oraclepriv.solvers.combinatorial.exact_halfspace.exact_separation`, from the proposal, within
        :data:`EXACT_ROWS_PER_DIMENSION` (d + 2) rows, in d <= :data:`EXACT_MAX_DIMENSION`, while this
        separator has spent less than :data:`EXACT_SECONDS` on it): SEPARABLE when a rational halfspace
        realises it, CORE with a minimal non-separable subset that :func:`verify_core` certifies, else
        UNVERIFIED (as without the fallback)."""
        if self.d > EXACT_MAX_DIMENSION or self.exact_seconds >= EXACT_SECONDS:
            self.unverified += 1
            return CoreStatus.UNVERIFIED, np.asarray(proposal, dtype=np.int64) if len(proposal) else None
        limit = EXACT_ROWS_PER_DIMENSION * (self.d + 2)
        start = time.perf_counter()
        try:
            return self._decide_exactly(keep, proposal, limit)
        finally:
            self.exact_seconds += time.perf_counter() - start

    def _decide_exactly(self, keep: np.ndarray, proposal, limit: int) -> tuple[str, np.ndarray | None]:
        h, subset = exact_separation(self.X_exact, self.y == 1, rows=keep, hint=proposal, max_working_rows=limit)
        if h is not None:
            self.exact_repairs += 1
            return CoreStatus.SEPARABLE, None
        if subset is not None:
            core = np.asarray(sorted(minimal_non_separable(self.X_exact, self.y == 1, subset)), dtype=np.int64)
            if self.verify(core):
                self.exact_repairs += 1
                self.last_multipliers = np.full(core.size, 1.0 / core.size)
                return CoreStatus.CORE, core
        self.unverified += 1
        return CoreStatus.UNVERIFIED, np.asarray(proposal, dtype=np.int64) if len(proposal) else None
