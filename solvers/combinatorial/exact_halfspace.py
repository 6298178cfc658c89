"""A halfspace that realises a given labeling in exact arithmetic, or an exact proof that none does.

Every exact halfspace backend proves its bound about a *labeling* (enumerate's optimal separable set,
the groups a MIP solution classifies correctly); the hypothesis it returns must induce that labeling
under :meth:`oraclepriv.hypotheses.Halfspace.predict`, which is exact. A float64 LP finds such a
halfspace whenever the labeling's margin is well above float64 resolution. On data typed by hand
(decimal coordinates, several points on a common decimal line, which float64 makes almost but not
exactly collinear) the margin can be 1e-17 of the data's scale: no float64 (w, b) realises the
labeling, while a rational one does.

:func:`realize_labeling` first tries the float64 candidates it is given, then solves the max-margin
LP

    max t   s.t.  s_i (w . x_i + b) >= t  (i in W),   -1 <= w_j <= 1,  b free,  t <= 1

in exact rational arithmetic (:func:`max_margin_exact`: a dense primal simplex on an integer tableau
with fraction-free pivots, Bland's rule against cycling) over a working set W of rows, checks every row exactly, adds
the rows the answer gets wrong to W and repeats (a cutting-plane loop on an LP: it ends, since each
round adds a row outside W). The labeling is realisable iff the LP over all rows has t > 0 (a
strictly separating (w, b) scaled into the box gives t > 0; t > 0 makes the label-0 rows strictly
negative and the label-1 rows positive), and an LP over a subset W with t = 0 already proves it is not.
The rational simplex is written here because no dependency of the project solves LPs exactly: SymPy's
``linprog`` returned 0 for a separable 10-point instance whose optimum is 0.111, and pycddlib's exact
mode needs system libraries; the working sets stay small (the rows near the hyperplane).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from oraclepriv.hypotheses import Halfspace

__all__ = ["exact_polish", "exact_separation", "max_margin_exact", "minimal_non_separable", "realize_labeling"]

#: rows the exact working set starts from, per dimension (plus the rows a candidate gets wrong)
START_ROWS_PER_DIMENSION = 2


#: consecutive degenerate pivots (no gain in t) after which the simplex switches to Bland's rule for good
STALL_PIVOTS = 50


def _integer_row(values: Sequence[Fraction]) -> list[int]:
    """A row of rationals times the least common multiple of its denominators (a positive scaling)."""
    common = math.lcm(*(v.denominator for v in values))
    return [v.numerator * (common // v.denominator) for v in values]


def max_margin_exact(
    points: Sequence[Sequence[Fraction]], signs: Sequence[int]
) -> tuple[list[Fraction], Fraction, Fraction]:
    """(w, b, t) maximising t subject to signs_i (w . x_i + b) >= t, -1 <= w_j <= 1, t <= 1, exactly.

    A dense primal simplex from the feasible vertex w = 0, b = 0, t = 0 (all slacks basic) on an
    integer tableau: each data row is scaled to integers (a positive scaling of a constraint), and
    pivots are fraction-free (Edmonds' integer-preserving elimination: every entry stays an integer,
    the tableau's true value is the entry over the last pivot, divisions are exact). Dantzig's rule
    (largest reduced cost), switched for good to Bland's rule (smallest improving column, smallest
    basic index on ties) after :data:`STALL_PIVOTS` degenerate pivots in a row, so it terminates.
    Variables: w = p - q (p, q in [0, 1]), b = b+ - b-, t >= 0; the optimum t is at least 0, and
    it is > 0 exactly when the rows are strictly separable.
    """
    if not points:
        raise ValueError("max_margin_exact: no rows")
    d = len(points[0])
    n_var = 2 * d + 3  # p_0..p_(d-1), q_0..q_(d-1), b+, b-, t
    rows: list[list[int]] = []
    rhs: list[int] = []
    for x, s in zip(points, signs):
        sx = [s * Fraction(v) for v in x]
        # -s(w.x + b) + t <= 0, scaled to integers
        rows.append(_integer_row([-v for v in sx] + sx + [Fraction(-s), Fraction(s), Fraction(1)]))
        rhs.append(0)
    for j in range(2 * d):  # p_j <= 1, q_j <= 1
        rows.append([int(k == j) for k in range(n_var)])
        rhs.append(1)
    rows.append([int(k == n_var - 1) for k in range(n_var)])  # t <= 1
    rhs.append(1)
    m = len(rows)
    width = n_var + m
    tableau = [row + [int(k == i) for k in range(m)] + [rhs[i]] for i, row in enumerate(rows)]
    objective = [0] * (width + 1)
    objective[n_var - 1] = 1  # reduced costs (maximise t), last entry -z
    basis = [n_var + i for i in range(m)]
    denominator = 1
    bland, stalled = False, 0
    while True:
        if bland:
            entering = next((j for j in range(width) if objective[j] > 0), None)
        else:
            entering = max(range(width), key=lambda j: objective[j])
            entering = entering if objective[entering] > 0 else None
        if entering is None:
            break
        leaving = None
        for i in range(m):
            a = tableau[i][entering]
            if a > 0:
                if leaving is None:
                    leaving = i
                    continue
                # ratio rhs_i / a against rhs_l / a_l (same denominator: cross-multiply)
                here, best = tableau[i][width] * tableau[leaving][entering], tableau[leaving][width] * a
                if here < best or (here == best and basis[i] < basis[leaving]):
                    leaving = i
        if leaving is None:  # cannot happen: t <= 1 bounds the objective and no other column improves it
            raise ArithmeticError("max_margin_exact: unbounded direction in a bounded LP")
        degenerate = tableau[leaving][width] == 0
        stalled = stalled + 1 if degenerate else 0
        bland = bland or stalled >= STALL_PIVOTS
        pivot_row = tableau[leaving]
        pivot = pivot_row[entering]
        for row in (*(tableau[i] for i in range(m) if i != leaving), objective):
            factor = row[entering]
            if factor:
                for j in range(width + 1):
                    row[j] = (row[j] * pivot - factor * pivot_row[j]) // denominator
            elif pivot != denominator:
                for j in range(width + 1):
                    row[j] = row[j] * pivot // denominator
        denominator = pivot
        basis[leaving] = entering
    value = [Fraction(0)] * width
    for i, j in enumerate(basis):
        value[j] = Fraction(tableau[i][width], denominator)
    w = [value[j] - value[d + j] for j in range(d)]
    return w, value[2 * d] - value[2 * d + 1], value[n_var - 1]


def _exact_rows(X: np.ndarray, idx: Sequence[int]) -> list[list[Fraction]]:
    return [[Fraction(float(v)) for v in X[i]] for i in idx]


def exact_separation(
    X: np.ndarray,
    positive: np.ndarray,
    rows: np.ndarray | None = None,
    candidates: Sequence[Halfspace] = (),
    hint: Sequence[int] = (),
    max_working_rows: int | None = None,
) -> tuple[Halfspace | None, list[int] | None]:
    """Decide exactly whether the labeling ``positive`` on ``rows`` (all rows by default) is realisable.

    Returns ``(h, None)`` with a halfspace whose exact predictions are ``positive`` on ``rows``;
    ``(None, W)`` with W (indices into X) a subset of ``rows`` that is not strictly separable, proved
    by the exact LP; or ``(None, None)`` when the working set would exceed ``max_working_rows``.
    ``candidates``: float64 halfspaces tried first (the first that realises the labeling exactly is
    returned as it is; the best of them seeds the working set); ``hint``: rows (indices into X) the
    working set starts with, e.g. a core proposal of a float LP.
    """
    X = np.asarray(X, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    n, d = X.shape
    idx = np.arange(n) if rows is None else np.flatnonzero(np.asarray(rows, dtype=bool))
    if idx.size == 0 or positive[idx].all() or not positive[idx].any():
        label_one = idx.size == 0 or bool(positive[idx].all())
        return Halfspace((0.0,) * d, 1.0 if label_one else -1.0), None
    Xr, target = X[idx], positive[idx]
    wrong_counts = []
    for h in candidates:
        wrong = (h.predict(Xr) == 1) != target
        if not wrong.any():
            return h, None
        wrong_counts.append((int(wrong.sum()), h))
    signs = np.where(target, 1, -1)
    position = {int(i): k for k, i in enumerate(idx)}
    start: set[int] = {position[int(i)] for i in hint if int(i) in position}
    if wrong_counts:
        h = min(wrong_counts, key=lambda pair: pair[0])[1]
        v = h.decision_function(Xr)
        scale = np.abs(Xr) @ np.abs(np.asarray(h.w)) + abs(h.b)
        closeness = np.abs(v) / np.where(scale > 0, scale, 1.0)
        start.update(np.flatnonzero((h.predict(Xr) == 1) != target).tolist())
        start.update(np.argsort(closeness, kind="stable")[: START_ROWS_PER_DIMENSION * (d + 2)].tolist())
    elif not start:
        start.update(range(min(len(idx), START_ROWS_PER_DIMENSION * (d + 2))))
    start.add(int(np.flatnonzero(target)[0]))  # both labels present
    start.add(int(np.flatnonzero(~target)[0]))
    working = sorted(start)
    while True:
        if max_working_rows is not None and len(working) > max_working_rows:
            return None, None
        w, b, t = max_margin_exact(_exact_rows(Xr, working), [int(signs[i]) for i in working])
        if t <= 0:  # the rows in the working set alone are not strictly separable
            return None, [int(idx[i]) for i in working]
        h = Halfspace.from_exact(w, b)
        wrong = np.flatnonzero((h.predict(Xr) == 1) != target)
        if wrong.size == 0:
            return h, None
        working = sorted(set(working) | set(wrong.tolist()))


def realize_labeling(
    X: np.ndarray,
    positive: np.ndarray,
    rows: np.ndarray | None = None,
    candidates: Sequence[Halfspace] = (),
    max_working_rows: int | None = None,
) -> Halfspace | None:
    """A halfspace whose exact predictions are ``positive`` on ``rows`` (all rows by default), or None:
    the labeling is not realisable there (proved exactly), or the working set would exceed
    ``max_working_rows`` (:func:`exact_separation`)."""
    return exact_separation(X, positive, rows, candidates, max_working_rows=max_working_rows)[0]


def minimal_non_separable(X: np.ndarray, positive: np.ndarray, subset: Sequence[int]) -> list[int]:
    """A minimal non-separable subset of ``subset`` (which must be non-separable), by the deletion
    filter: drop each row in turn and keep it dropped when the rest stays non-separable (exact LP).
    A minimal one has at most d + 2 points with a unique Farkas certificate (a *core*)."""
    X = np.asarray(X, dtype=np.float64)
    signs = np.where(np.asarray(positive, dtype=bool), 1, -1)
    core = [int(i) for i in subset]
    for i in list(core):
        rest = [j for j in core if j != i]
        if len(rest) >= 2 and len({int(signs[j]) for j in rest}) == 2:
            t = max_margin_exact(_exact_rows(X, rest), [int(signs[j]) for j in rest])[2]
            if t <= 0:
                core = rest
    return core


#: the exact working set's size limit for :func:`exact_polish`, in multiples of d + 2 rows: a kept set handed
#: over by a MIP search may be non-separable, and the search goes on without a candidate then
POLISH_ROWS_PER_DIMENSION = 4
#: :func:`exact_polish` solves the exact LP in d <= this only (the rational simplex's cost grows fast with d)
POLISH_MAX_DIMENSION = 6


def exact_polish(form: Any, keep: np.ndarray, lp_solution: np.ndarray) -> Halfspace | None:
    """The halfspace of a max-margin LP solution over the kept groups of a MIP model, made exact.

    ``form`` is a halfspace model of :mod:`oraclepriv.solvers.mip.milp` (its ``groups.X`` are the group
    points, ``yg`` their labels, ``scaling`` the map from the LP's scaled coordinates); ``lp_solution``
    is :func:`~oraclepriv.solvers.mip.milp.margin_lp`'s (w', b', t). The float halfspace is kept when it
    classifies every kept group correctly in exact arithmetic with margin t > 1e-9; otherwise, in
    d <= :data:`POLISH_MAX_DIMENSION`, the kept labeling is realised exactly (:func:`realize_labeling`
    within :data:`POLISH_ROWS_PER_DIMENSION` (d + 2) rows). When no exact halfspace is found (the kept
    groups are not separable, the limit is reached, or d is larger), the float halfspace is returned if
    its LP margin is positive, as a candidate the search re-scores, else None.
    """
    d = form.d
    candidates = []
    w, b = form.scaling.to_original(lp_solution[:d], lp_solution[d])
    if np.all(np.isfinite(w)) and math.isfinite(b):
        h = Halfspace(tuple(w), b)
        kept = np.flatnonzero(keep)
        if lp_solution[-1] > 1e-9 and np.array_equal(h.predict(form.groups.X[kept]) == 1, form.yg[kept] == 1):
            return h
        candidates.append(h)
    # the float halfspace of a positive margin stays a candidate (the search re-scores it) when no exact one is found
    fallback = candidates[0] if candidates and lp_solution[-1] > 1e-9 else None
    if d > POLISH_MAX_DIMENSION:
        return fallback
    exact = realize_labeling(
        form.groups.X,
        form.yg == 1,
        rows=keep,
        candidates=candidates,
        max_working_rows=POLISH_ROWS_PER_DIMENSION * (d + 2),
    )
    return exact if exact is not None else fallback
