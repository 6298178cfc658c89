"""``enumerate``: exact, margin-free weighted-0-1 ERM for halfspaces in dimension d <= 3.

The class is H = {x -> 1[w.x + b >= 0]} (w = 0 allowed: the constant hypotheses). On a finite
point set the labelings it induces are exactly the *strictly linearly separable* dichotomies
(closed and open halfspaces induce the same labelings of finitely many points). So the oracle
maximises the gain  sum_{x in S} g(x)  over separable positive sets S, where
g(x) = (weight of label-1 points at x) - (weight of label-0 points at x) after merging
duplicates; the loss is  sum_{y_i = 1} w_i - gain.

Completeness (why enumerating hyperplanes through data points suffices): if S and its
complement are both non-empty and strictly separable, translate a separating hyperplane until it
touches a point, then rotate it about the touched points until it touches points spanning a
hyperplane of the data's affine hull. No point crosses sides on the way, so the final
hyperplane H passes through >= k affinely independent points (k = dimension of the hull), every
point off H is on its correct side, and the labeling of the points *on* H is separable within H
(a halfspace meets H in a half-flat). Conversely, for a hyperplane H spanned by data points, any
separable labeling of the points on H combined with either side of H is realised by rotating H
by a tiny angle about a flat inside H (and translating), which keeps every off-H point on its
side. Hence

    best gain = max(0, total, max over spanned H and sides s of [gain(side s of H) + best_{k-1}(points on H)])

where best_{k-1} is the same problem one dimension down (in 1-D: the best prefix or suffix of
the points in order along the line, constants included).

Algorithms (the kernels: :mod:`~oraclepriv.solvers.combinatorial.enumerate_2d` for affine dimension 1 and 2,
:mod:`~oraclepriv.solvers.combinatorial.enumerate_3d` for 3; :func:`best_separable_set` picks one by the data's affine
dimension, decided exactly):
  * affine dimension 1 (d = 1, or collinear data): sort along the line, prefix sums, O(n log n).
  * dimension 2: for every pivot point p, sort the other points by angle around p (directions
    taken modulo pi), group exactly-collinear ones, and evaluate every line through p with prefix
    sums — O(n^2 log n) time, O(n) memory.
  * dimension 3: for every pair (p, q) whose line holds no third data point (enough, by the
    Sylvester-Gallai theorem; see ``_axis_block``), sort the other points by angle around the axis
    pq, group exactly-coplanar ones, evaluate every plane through the axis with prefix sums; the
    points on a plane with more than three points are solved (once per plane) by the 2-D
    routine — O(n^3 log n) time. The sweeps of a block of pairs run as one set of numpy array
    operations (pairs x points), so the Python overhead is per block, not per pair or point.
Compiled kernels: the pivot sweeps (d = 2) and axis sweeps (d = 3) run in
:mod:`~oraclepriv.solvers.combinatorial.enumerate_kernels` wherever that cannot make a call overrun its time limit
(the choice, per call: :mod:`~oraclepriv.solvers.combinatorial.enumerate_compiled`; a call with a time limit never
waits on a compilation), expected O(n) per pivot or pair; every sign they
cannot prove with Shewchuk's float filter is handed back to the numpy sweeps below, which decide it in rational
arithmetic, so both paths give the same optimum. In d = 3 the compiled path first sweeps only the pairs of points of
equal index parity (enough when no three points are collinear and no four coplanar, which it detects on the way).
Exactness: the angular orders and groupings are decided by exact predicates
(``oraclepriv.solvers.combinatorial.geometry``: float filter + rational fallback; in d = 3 a batched float filter over a
whole block first, exact arithmetic only for the signs it cannot certify). Floating-point angles
are only used to propose an order, which is then verified pair-by-pair exactly (and re-sorted
exactly if wrong).

Representative: the optimal dichotomy is realised by the max-margin halfspace (LP, ||w||_inf <= 1
on centred and scaled data, :mod:`~oraclepriv.solvers.combinatorial.max_margin`; made exact by
:func:`~oraclepriv.solvers.combinatorial.exact_halfspace.realize_labeling`), so training points sit clearly off the boundary whenever the
labeling allows, and the answer depends only on the point set and the dichotomy.
Tie-breaking is deterministic: unique points are processed in lexicographic order.

Time limit (``docs/deadlines.md``): the pivot loop (d = 2) and the loop over blocks of pairs
(d = 3) check the call's deadline; an enumeration it stops returns the best separable labeling
seen so far with status "time_limit" and only the trivial bound 0 of the reduced problem (the
labelings not yet enumerated could be better), so it is never certified unless that bound is met.
"""

from __future__ import annotations

import time

import numpy as np
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem, Status, UnsupportedProblemError
from oraclepriv.solvers.combinatorial import enumerate_compiled
from oraclepriv.solvers.combinatorial.enumerate_2d import Best, best_2d, best_on_line
from oraclepriv.solvers.combinatorial.enumerate_3d import best_3d, plane_projection
from oraclepriv.solvers.combinatorial.exact_halfspace import realize_labeling
from oraclepriv.solvers.combinatorial.geometry import cross_signs, float_is_exact, orient2d, orient3d
from oraclepriv.solvers.combinatorial.max_margin import max_margin_halfspace
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv.hypotheses import Halfspace

__all__ = ["EnumerateBackend", "best_separable_set"]

MAX_DIMENSION = 3


def best_separable_set(
    P: np.ndarray, G: np.ndarray, exact: bool | None = None, deadline: Deadline | None = None
) -> Best:
    """Max over separable S of sum_{x in S} G[x], for *distinct* points P (n, d), d <= 3.

    A ``deadline`` that stops the enumeration gives the best set seen so far (``complete`` False); None means no
    time limit. ``sweep`` of the answer says which sweep ran and why
    (:func:`~oraclepriv.solvers.combinatorial.enumerate_compiled.choose`)."""
    n, d = P.shape
    if exact is None:
        exact = float_is_exact(P)
    total = float(G.sum())
    if n == 1:
        mask = np.array([total > 0])
        return Best(max(total, 0.0), mask, sweep="line")
    p0, p1 = P[0], P[1]
    if d == 1:
        return best_on_line(P[:, 0], G)._replace(sweep="line")
    if d == 2:
        collinear = orient2d(p0, p1, P, exact) == 0
    else:
        collinear = ~cross_signs(p0, p1, P, exact).any(axis=1)
    if collinear.all():
        axis = int(np.argmax(np.abs(p1 - p0)))  # p1 - p0 has this component non-zero
        return best_on_line(P[:, axis], G)._replace(sweep="line")
    if d == 2:
        return _swept(2, P, G, exact, deadline)
    p2 = P[int(np.argmax(~collinear))]
    coplanar = orient3d(p0, p1, p2, P, exact) == 0
    if coplanar.all():
        coords = list(plane_projection(p0, p1, p2, exact))
        return _swept(2, P[:, coords], G, exact, deadline)
    return _swept(3, P, G, exact, deadline)


def _swept(dimension: int, P: np.ndarray, G: np.ndarray, exact: bool, deadline: Deadline | None) -> Best:
    """The 2-D or 3-D sweep (``best_2d``, ``best_3d``) the switch chooses for this call; the time a numpy sweep
    takes counts towards loading the kernel (:func:`~oraclepriv.solvers.combinatorial.enumerate_compiled.choose`)."""
    choice = enumerate_compiled.choose(dimension, len(P), deadline)
    sweep = best_2d if dimension == 2 else best_3d
    start = time.perf_counter()
    best = sweep(P, G, exact, deadline, choice.kernels)
    if choice.kernels is None:
        enumerate_compiled.record_numpy_sweep(dimension, time.perf_counter() - start)
    return best._replace(sweep=choice.reason)


class EnumerateBackend(Backend):
    """Exact combinatorial halfspace oracle for d <= 3 (margin-free).

    Enumerates every labeling a halfspace induces, through the hyperplanes spanned by data points,
    with exact orientation predicates (module docstring); the bound is the optimum itself.

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the call; None for no limit. The enumeration takes O(n log n), O(n^2 log n) or
        O(n^3 log n) time for affine dimension 1, 2 or 3; one stopped by the limit is not certified
        (module docstring).
    **options
        None: the backend takes no options, and refuses any keyword by name.

    Raises
    ------
    oraclepriv.solvers.base.UnsupportedProblemError
        From :meth:`check`, for d > 3.

    References
    ----------
    .. [1] J. R. Shewchuk, "Adaptive precision floating-point arithmetic and fast robust geometric
       predicates", Discrete Comput. Geom. 18, 1997.
    .. [2] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).

    Examples
    --------
    XOR with weights 1, 2, 3, 4: the cheapest mistake is the point of weight 1.

    >>> from oraclepriv import make_oracle
    >>> X = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    >>> res = make_oracle("halfspace", backend="enumerate").solve(X, [0, 1, 1, 0], [1.0, 2.0, 3.0, 4.0])
    >>> res.certified, res.objective, res.bound
    (True, 1.0, 1.0)
    """

    name = "enumerate"
    classes = frozenset({"halfspace"})
    certificate = (
        "exact and margin-free: every labeling induced by a halfspace {w.x + b >= 0} (w = 0 included) is "
        "dominated by an enumerated candidate, with exact orientation predicates; the bound is the optimum "
        "(up to float64 summation error, covered by the tolerance)"
    )

    def check(self, hypothesis_class: str, n: int, d: int) -> None:
        super().check(hypothesis_class, n, d)
        if d > MAX_DIMENSION:
            raise UnsupportedProblemError(
                f"backend 'enumerate' handles halfspaces with d <= {MAX_DIMENSION}; got d={d} (use a MIP backend)"
            )

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        X, y, w = problem.X, problem.y, problem.w
        P, inverse = np.unique(X, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        G = np.bincount(inverse, weights=np.where(y == 1, w, -w), minlength=len(P))
        exact = float_is_exact(P)
        best = best_separable_set(P, G, exact, self.deadline(problem))
        loss_all_zero = float(w[y == 1].sum())
        details = {
            "method": "exact enumeration (pivot/axis angular sweep)",
            "unique_points": int(len(P)),
            "float_exact_predicates": bool(exact),
            "sweep": best.sweep,
        }
        # representative: the max-margin halfspace of the optimal labeling, realised exactly
        d = P.shape[1]
        candidates = max_margin_halfspace(P, best.mask)
        hypothesis = realize_labeling(P, best.mask, candidates=[h for h, _ in candidates])
        status: Status = "optimal"
        if hypothesis is None:  # cannot happen for a labeling the enumeration found separable: say so
            constants = [Halfspace((0.0,) * d, 1.0), Halfspace((0.0,) * d, -1.0)]
            hypothesis = max(constants, key=lambda h: float(G[h.predict(P) == 1].sum()))
            status = "error"
            details["error"] = "the optimal labeling could not be realised exactly; returned the better constant"
        details["exact_coefficients"] = hypothesis.exact is not None
        margins = [m for h, m in candidates if h is hypothesis]
        details["margin_scaled"] = margins[0] if margins else None
        if not best.complete:  # only what the enumeration reached: the trivial bound of the reduced problem
            details["enumeration_complete"] = False
            return BackendAnswer(hypothesis, bound=0.0, status="time_limit", nodes=0, details=details)
        return BackendAnswer(hypothesis, bound=loss_all_zero - best.gain, status=status, nodes=0, details=details)
