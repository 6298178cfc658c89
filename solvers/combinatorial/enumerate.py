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

Algorithms:
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
Exactness: the angular orders and groupings are decided by exact predicates
(``oraclepriv.solvers.combinatorial.geometry``: float filter + rational fallback; in d = 3 a batched float filter over a
whole block first, exact arithmetic only for the signs it cannot certify). Floating-point angles
are only used to propose an order, which is then verified pair-by-pair exactly (and re-sorted
exactly if wrong).

Representative: the optimal dichotomy is realised by the max-margin halfspace (LP, ||w||_inf <= 1
on centred and scaled data), so training points sit clearly off the boundary whenever the
labeling allows, and the answer depends only on the point set and the dichotomy.
Tie-breaking is deterministic: unique points are processed in lexicographic order.

Time limit (``docs/deadlines.md``): the pivot loop (d = 2) and the loop over blocks of pairs
(d = 3) check the call's deadline; an enumeration it stops returns the best separable labeling
seen so far with status "time_limit" and only the trivial bound 0 of the reduced problem (the
labelings not yet enumerated could be better), so it is never certified unless that bound is met.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem, UnsupportedProblemError
from oraclepriv.solvers.combinatorial.exact_halfspace import realize_labeling
from oraclepriv.solvers.combinatorial.geometry import float_is_exact, orient2d, orient3d
from oraclepriv.solvers.runtime.deadline import Deadline
from scipy.optimize import linprog

from oraclepriv.hypotheses import Halfspace

__all__ = ["EnumerateBackend", "best_separable_set", "max_margin_halfspace"]

MAX_DIMENSION = 3


class _Best(NamedTuple):
    gain: float
    mask: np.ndarray  # positive set over the unique points
    complete: bool = True  # False: a deadline stopped the enumeration (gain is only achieved, not optimal)


# ----------------------------------------------------------------------------------------------
# 1-D: points in order along a line


def _best_on_line(order_key: np.ndarray, gains: np.ndarray) -> _Best:
    """Best prefix or suffix (constants included) of points sorted by ``order_key`` (distinct)."""
    order = np.argsort(order_key, kind="stable")
    prefix = np.concatenate(([0.0], np.cumsum(gains[order])))
    total = prefix[-1]
    k_max = int(np.argmax(prefix))  # positives = first k_max points
    k_min = int(np.argmin(prefix))  # positives = points after the first k_min
    mask = np.zeros(len(gains), dtype=bool)
    if prefix[k_max] >= total - prefix[k_min]:
        mask[order[:k_max]] = True
        return _Best(float(prefix[k_max]), mask)
    mask[order[k_min:]] = True
    return _Best(float(total - prefix[k_min]), mask)


def _line_value(sorted_gains_by_segment: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Vectorised ``_best_on_line`` value for consecutive segments of an already ordered array."""
    cs = np.cumsum(sorted_gains_by_segment)
    seg = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(cs))))
    base = (cs - sorted_gains_by_segment)[starts]
    prefix = cs - base[seg]
    max_p = np.maximum.reduceat(prefix, starts)
    min_p = np.minimum.reduceat(prefix, starts)
    total = np.add.reduceat(sorted_gains_by_segment, starts)
    return np.maximum(np.maximum(max_p, 0.0), total - np.minimum(min_p, 0.0))


# ----------------------------------------------------------------------------------------------
# 2-D: pivot sweep


def _angular_groups(proposal: np.ndarray, sgn: np.ndarray, orient) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Verify a proposed angular order exactly (re-sorting exactly if floats got it wrong) and group it.

    ``proposal``: point indices sorted by float angle of their direction modulo pi; ``sgn[i] = -1``
    if point i's direction was flipped into the upper half-plane; ``orient(a, b)`` the exact sign
    of cross(D_a, D_b) for index arrays. Returns (order, flipped, group id per position), where
    a group is a set of exactly parallel directions (points on one line/plane with the pivot).
    """

    def adjacent(order: np.ndarray) -> np.ndarray:
        s = sgn[order]
        return orient(order[:-1], order[1:]) * s[:-1] * s[1:]  # >= 0 iff non-decreasing angle

    order = proposal
    adj = adjacent(order)
    if (adj < 0).any():  # near-parallel directions misordered by float angles: sort exactly

        def compare(u: int, v: int) -> int:
            return -int(orient(np.array([u]), np.array([v]))[0]) * int(sgn[u]) * int(sgn[v])

        order = np.array(sorted(order.tolist(), key=functools.cmp_to_key(compare)), dtype=np.int64)
        adj = adjacent(order)
        assert not (adj < 0).any()
    group = np.concatenate(([0], np.cumsum(adj != 0)))
    return order, sgn[order] < 0, group


def _side_gains(
    group: np.ndarray, flipped: np.ndarray, g: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per group k (a line/plane through the pivot): gains of the off-hyperplane points on its left
    and right (prefix sums), the gain of the group itself, and the group sizes.

    Left of the hyperplane with direction V_k: unflipped points of later groups and flipped points
    of earlier groups; right: the rest of the off-hyperplane points.
    """
    n_groups = int(group[-1]) + 1
    gu = np.bincount(group, weights=np.where(flipped, 0.0, g), minlength=n_groups)
    gf = np.bincount(group, weights=np.where(flipped, g, 0.0), minlength=n_groups)
    cu, cf = np.cumsum(gu), np.cumsum(gf)
    left = (cu[-1] - cu) + (cf - gf)
    right = (cu - gu) + (cf[-1] - cf)
    return left, right, gu + gf, np.bincount(group, minlength=n_groups)


def _side_mask(group: np.ndarray, flipped: np.ndarray, k: int, left: bool) -> np.ndarray:
    """Positions (in angular order) of the points strictly left (or right) of group k's hyperplane."""
    later = (group > k) & ~flipped | (group < k) & flipped
    earlier = (group < k) & ~flipped | (group > k) & flipped
    return later if left else earlier


class _PivotSweep(NamedTuple):
    value: np.ndarray  # best gain per line (group) through the pivot, off-line sides + on-line part
    left_better: np.ndarray
    order: np.ndarray  # other points in angular order
    group: np.ndarray  # group id per position in ``order``
    flipped: np.ndarray


def _pivot_sweep_2d(P: np.ndarray, G: np.ndarray, i: int, exact: bool) -> _PivotSweep | None:
    n = len(P)
    others = np.concatenate((np.arange(i), np.arange(i + 1, n)))
    p = P[i]
    D = P[others] - p
    flip = (D[:, 1] < 0) | ((D[:, 1] == 0) & (D[:, 0] < 0))
    V = np.where(flip[:, None], -D, D)
    proposal = others[np.argsort(np.arctan2(V[:, 1], V[:, 0]), kind="stable")]
    sgn = np.ones(n, dtype=np.int8)
    sgn[others[flip]] = -1
    order, fl, group = _angular_groups(proposal, sgn, lambda a, b: orient2d(p, P[a], P[b], exact))
    g = G[order]
    left, right, g_group, size = _side_gains(group, fl, g)
    online = np.maximum(G[i], 0.0) + np.maximum(g_group, 0.0)  # singleton groups: {p, q} free
    multi = np.flatnonzero(size >= 2)
    if len(multi):
        members = np.flatnonzero(size[group] >= 2)
        gid = np.concatenate((group[members], multi))
        pts = np.concatenate((P[order[members]], np.repeat(p[None, :], len(multi), axis=0)))
        gv = np.concatenate((g[members], np.full(len(multi), G[i])))
        srt = np.lexsort((pts[:, 1], pts[:, 0], gid))  # along each line: lexicographic order
        gid_s = gid[srt]
        starts = np.flatnonzero(np.concatenate(([True], gid_s[1:] != gid_s[:-1])))
        online[gid_s[starts]] = _line_value(gv[srt], starts)
    value = np.maximum(left, right) + online
    return _PivotSweep(value, left >= right, order, group, fl)


def _best_2d(P: np.ndarray, G: np.ndarray, exact: bool, deadline: Deadline | None = None) -> _Best:
    """Best separable positive set of distinct 2-D points (affine dimension 2)."""
    n = len(P)
    total = float(G.sum())
    best_gain, best = (total, "all") if total > 0 else (0.0, "none")
    complete = True
    for i in range(n):
        if deadline is not None and deadline.expired():
            deadline.note("enumeration (2-D pivots)")
            complete = False
            break
        sweep = _pivot_sweep_2d(P, G, i, exact)
        k = int(np.argmax(sweep.value))
        if sweep.value[k] > best_gain:
            best_gain, best = float(sweep.value[k]), (i, k)
    mask = np.zeros(n, dtype=bool)
    if best == "all":
        mask[:] = True
    if isinstance(best, tuple):
        i, k = best
        sweep = _pivot_sweep_2d(P, G, i, exact)
        grp, order = sweep.group, sweep.order
        mask[order[_side_mask(grp, sweep.flipped, k, sweep.left_better[k])]] = True
        on_line = np.concatenate(([i], order[grp == k]))
        key = np.lexsort((P[on_line, 1], P[on_line, 0]))
        rank = np.empty(len(on_line))
        rank[key] = np.arange(len(on_line))
        sub = _best_on_line(rank, G[on_line])
        mask[on_line[sub.mask]] = True
    return _Best(best_gain, mask, complete)


# ----------------------------------------------------------------------------------------------
# 3-D: axis sweep


def _minor_sign(p: np.ndarray, q: np.ndarray, R: np.ndarray, coords: tuple[int, int], exact: bool) -> np.ndarray:
    """Exact sign of the 2x2 minor (q-p)_c0 (r-p)_c1 - (q-p)_c1 (r-p)_c0 for every row r of R."""
    c = list(coords)
    return orient2d(p[c], q[c], R[:, c], exact)


def _cross_signs(p: np.ndarray, q: np.ndarray, R: np.ndarray, exact: bool) -> np.ndarray:
    """Exact signs of the components of (q - p) x (r - p), shape (len(R), 3)."""
    return np.stack([_minor_sign(p, q, R, ((l + 1) % 3, (l + 2) % 3), exact) for l in range(3)], axis=1)


def _plane_projection(p: np.ndarray, q: np.ndarray, r: np.ndarray, exact: bool) -> tuple[int, int]:
    """Two coordinates whose projection is injective on the plane through p, q, r (not collinear)."""
    signs = _cross_signs(p, q, r[None, :], exact)[0]
    normal = np.cross(q - p, r - p)
    candidates = [l for l in range(3) if signs[l] != 0]
    drop = max(candidates, key=lambda l: abs(normal[l]))
    keep = [l for l in range(3) if l != drop]
    return keep[0], keep[1]


#: pairs x points evaluated per vectorised block of ``_best_3d`` (bounds the memory: ~40 arrays of
#: this many float64 entries, ~10 MB each at this size)
_BLOCK_ENTRIES = 1 << 17
#: relative tolerance of the float filter in the projected frame (see ``_axis_block``)
_FRAME_RTOL = 2.0**-40
#: below this norm, products of coordinate differences may have lost bits to underflow: exact path
_NORM_MIN = 2.0**-400


class _AxisBlock(NamedTuple):
    """Angular sweeps about the axes of a block of pairs (one row per kept pair)."""

    pairs: np.ndarray  # (R, 2) the kept pairs (i, j); pairs with a third point on their line are dropped
    value: np.ndarray  # (R, L) best gain of the plane whose group starts at this position; -inf elsewhere
    order: np.ndarray  # (R, L) the other points in angular order about the axis
    flipped: np.ndarray  # (R, L) direction reversed to bring it into the half-turn [0, pi)
    start: np.ndarray  # (R, L) first position of the position's group (points coplanar with the axis)
    end: np.ndarray  # (R, L) last position of the group
    left_better: np.ndarray  # (R, L) the positive side of the best labeling is "left" (see _side_positions)


def _axis_block(
    P: np.ndarray, G: np.ndarray, I: np.ndarray, J: np.ndarray, exact: bool, plane_cache: dict
) -> _AxisBlock | None:
    """Sweep every plane through the axis P[I[r]] P[J[r]], for all rows r at once.

    Angular order (about the axis a = P_j - P_i): a point k has direction D_k = P_k - P_i; the
    plane through the axis and k is determined by D_k up to sign, so D_k is reversed ("flipped")
    into a half-turn [0, pi) measured from the reference half-plane spanned by a and +e_m
    (m = the smallest |a_m|, so e_m is not parallel to a). The side of that reference plane is the
    sign of (a x e_m).D = -(a x D)_m; on the reference plane itself D = alpha a + beta e_m and the
    sign of beta decides (beta = 0: k is on the axis). Both are signs of 2x2 minors of coordinate
    differences.

    Float angles (atan2 of the coordinates x = D.b1, y = D.b2 in a right-handed orthonormal frame
    (b1, b2, a/|a|), b2 = (a x e_m)/|a x e_m|) only *propose* the order; it is then verified
    exactly: consecutive flipped directions V_u, V_v are in order iff det[a, V_u, V_v] >= 0 (all V
    lie in the half-open half-turn, so the sign of this determinant is the sign of their angle
    difference), with equality iff u, v are coplanar with the axis (same group). A row whose
    proposal fails is sorted exactly.

    Exact signs, filtered in the projected frame: by the Binet-Cauchy identity
    (b1.p)(b2.q) - (b2.p)(b1.q) = (b1 x b2).(p x q), the 2-D cross product x_u y_v - y_u x_v equals
    det[a, D_u, D_v] / |a| up to the frame's error (b1 x b2 = a/|a| to a few ulps) and the rounding
    of D, of the projections and of the products: a few dozen ulps of |D_u| |D_v| in all; likewise
    y = -(a x D)_m / |a x e_m| up to a few ulps of |D|. A float sign is accepted only when its value
    exceeds ``_FRAME_RTOL`` (2^-40, about 8000 ulps) times |D_u| |D_v| (resp. |D|), and norms are
    far from underflow; every other sign is recomputed by ``orient2d`` / ``orient3d`` (Shewchuk's
    filter, then exact rational arithmetic). Non-finite values always fall back.

    Pairs with a third data point on their line are dropped: every plane H spanned by data points
    contains, by the Sylvester-Gallai theorem (a finite non-collinear planar set has a line through
    exactly two of its points), a pair of data points whose line holds no other data point, and
    every data point on that line lies in H; so H is still swept from that pair. This leaves
    only axes without on-axis points, where a group of size 1 is a plane through exactly three
    non-collinear points (every labeling of them is separable within the plane).

    Side gains: "left" of the plane of a group (det[a, V_group, D_x] > 0) holds the unflipped
    points of later groups and the flipped points of earlier ones; "right" the rest off the plane.
    With prefix sums along the order, every plane of the row costs O(1).
    """
    n = len(P)
    R = len(I)
    rows = np.arange(R)
    A = P[J] - P[I]  # (R, 3) the axis
    Pt = np.ascontiguousarray(P.T)
    Dst = np.empty((3, R, n))  # D[c, r, k] = P[k, c] - P[I[r], c]
    for c in range(3):
        np.subtract(Pt[c][None, :], Pt[c][I][:, None], out=Dst[c])
    m = np.argmin(np.abs(A), axis=1)
    m1, m2 = (m + 1) % 3, (m + 2) % 3
    endpoint = np.zeros((R, n), dtype=bool)
    endpoint[rows, I] = True
    endpoint[rows, J] = True
    a_hat = A / np.abs(A).max(axis=1)[:, None]  # pre-scaled: no overflow/underflow in the norm
    a_hat /= np.linalg.norm(a_hat, axis=1)[:, None]
    b2 = np.zeros((R, 3))  # a x e_m: component m1 is a_m2, component m2 is -a_m1
    b2[rows, m1] = a_hat[rows, m2]
    b2[rows, m2] = -a_hat[rows, m1]
    b2 /= np.linalg.norm(b2, axis=1)[:, None]
    b1 = np.cross(b2, a_hat)
    X = Dst[0] * b1[:, 0:1] + Dst[1] * b1[:, 1:2] + Dst[2] * b1[:, 2:3]
    Y = Dst[0] * b2[:, 0:1] + Dst[1] * b2[:, 1:2] + Dst[2] * b2[:, 2:3]
    N = np.sqrt(Dst[0] * Dst[0] + Dst[1] * Dst[1] + Dst[2] * Dst[2])

    # side of the reference plane: sign_m = sign (a x D)_m = -sign y, exactly
    sign_m = -np.sign(Y).astype(np.int8)
    unsure = ~(np.abs(Y) > _FRAME_RTOL * N) | ~(N > _NORM_MIN)
    unsure &= ~endpoint
    if unsure.any():
        r, k = np.nonzero(unsure)
        sign_m[r, k] = _minor_signs(P, I[r], J[r], k, m[r], exact)
    zero = (sign_m == 0) & ~endpoint
    beta = np.zeros((R, n), dtype=np.int8)
    if zero.any():
        # on the reference plane: (a x D)_l = beta (a x e_m)_l; use the component l of a x e_m of
        # largest modulus ((a x e_m)_m1 = a_m2, (a x e_m)_m2 = -a_m1; not both zero as a != 0)
        r, k = np.nonzero(zero)
        use_m2 = np.abs(A[r, m1[r]]) >= np.abs(A[r, m2[r]])
        l = np.where(use_m2, m2[r], m1[r])
        axe_sign = np.where(use_m2, -np.sign(A[r, m1[r]]), np.sign(A[r, m2[r]])).astype(np.int8)
        beta[r, k] = _minor_signs(P, I[r], J[r], k, l, exact) * axe_sign
    keep = ~(zero & (beta == 0)).any(axis=1)  # no third point on the axis
    if not keep.all():
        if not keep.any():
            return None
        I, J, X, Y, N = I[keep], J[keep], X[keep], Y[keep], N[keep]
        sign_m, zero, beta, endpoint = sign_m[keep], zero[keep], beta[keep], endpoint[keep]
        R = len(I)
        rows = np.arange(R)
    flip = (sign_m > 0) | (zero & (beta < 0))  # into the half-turn: y > 0, or y = 0 and beta > 0
    S = np.where(flip, -1.0, 1.0)
    X *= S  # exact: the flipped directions' coordinates
    Y *= S
    key = np.arctan2(np.abs(Y), X)  # y >= 0 exactly after the flip: |Y| is its estimate
    key[zero] = 0.0  # exactly on the reference half-plane after the flip
    undefined = np.isnan(key)
    if undefined.any():  # overflowing coordinates: any proposal will do, it is verified below
        key[undefined] = 0.0
    key[endpoint] = np.inf
    L = n - 2
    order = np.argsort(key, axis=1)[:, :L]
    flat = order + (rows * n)[:, None]
    ss = np.take(S, flat)
    fl = ss < 0
    xs, ys, ns = np.take(X, flat), np.take(Y, flat), np.take(N, flat)
    cross = xs[:, :-1] * ys[:, 1:] - ys[:, :-1] * xs[:, 1:]
    bound = _FRAME_RTOL * ns[:, :-1] * ns[:, 1:]
    adj = np.sign(cross).astype(np.int8)
    unsure = ~(np.abs(cross) > bound) | ~(bound > _FRAME_RTOL * _NORM_MIN * _NORM_MIN)
    if unsure.any():
        r, t = np.nonzero(unsure)
        u, v = order[r, t], order[r, t + 1]
        turn = np.where(fl[r, t] == fl[r, t + 1], 1, -1).astype(np.int8)
        adj[r, t] = orient3d(P[I[r]], P[J[r]], P[u], P[v], exact) * turn
    bad = np.flatnonzero((adj < 0).any(axis=1))
    pts = [tuple(map(float, row)) for row in P] if len(bad) else []
    for r in bad:  # near-parallel planes misordered by the float angles: sort this row exactly
        order[r], adj[r] = _exact_angular_sort(pts, I[r], J[r], order[r], flip[r], adj[r], exact)
        fl[r] = flip[r, order[r]]
        ss[r] = S[r, order[r]]

    # groups and side gains by prefix sums along each row: with h = +g for unflipped and -g for
    # flipped points, left - right = (sum of h after the group) - (sum of h before it), and
    # left + right = (sum of g off the group)
    g = G[order]
    h = g * ss
    H = np.cumsum(h, axis=1)
    total = g.sum(axis=1)[:, None]
    positions = np.broadcast_to(np.arange(L), (R, L))
    generic = bool((adj != 0).all())
    if generic:  # every group is one point
        start = end = positions
        is_start = np.ones((R, L), dtype=bool)
        diff = (H[:, -1:] - H) - (H - h)
        g_group = g
    else:
        is_start = np.ones((R, L), dtype=bool)
        is_start[:, 1:] = adj != 0
        is_end = np.ones((R, L), dtype=bool)
        is_end[:, :-1] = adj != 0
        start = np.maximum.accumulate(np.where(is_start, positions, 0), axis=1)
        end = np.minimum.accumulate(np.where(is_end, positions, L - 1)[:, ::-1], axis=1)[:, ::-1]
        diff = (H[:, -1:] - np.take_along_axis(H, end, axis=1)) - np.take_along_axis(H - h, start, axis=1)
        Gc = np.cumsum(g, axis=1)
        g_group = np.where(
            end == start, g, np.take_along_axis(Gc, end, axis=1) - np.take_along_axis(Gc - g, start, axis=1)
        )
    better_side = 0.5 * ((total - g_group) + np.abs(diff))  # max(left, right)
    base = np.maximum(G[I], 0.0) + np.maximum(G[J], 0.0)
    online = base[:, None] + np.maximum(g_group, 0.0)  # {p, q, r}: every labeling is separable in the plane
    if not generic:
        for r, s in zip(*np.nonzero(is_start & (end > start))):
            # a plane with many points is met from every ordinary pair inside it: solve it once
            on_plane = np.concatenate(([I[r], J[r]], order[r, s : end[r, s] + 1]))
            plane_key = np.sort(on_plane).tobytes()
            if plane_key not in plane_cache:
                plane_cache[plane_key] = _plane_best(P, G, on_plane, exact).gain
            online[r, s] = plane_cache[plane_key]
    value = better_side + online
    if not generic:
        value[~is_start] = -np.inf
    return _AxisBlock(np.stack((I, J), axis=1), value, order, fl, start, end, diff >= 0)


def _minor_signs(P: np.ndarray, I: np.ndarray, J: np.ndarray, K: np.ndarray, l: np.ndarray, exact: bool) -> np.ndarray:
    """Exact signs of ((P_J - P_I) x (P_K - P_I))_l, entry by entry (l per entry)."""
    l1, l2 = (l + 1) % 3, (l + 2) % 3
    proj = lambda idx: np.stack((P[idx, l1], P[idx, l2]), axis=1)  # noqa: E731
    return orient2d(proj(I), proj(J), proj(K), exact)


def _orient3d_scalar(a: tuple, b: tuple, c: tuple, d: tuple, exact: bool) -> int:
    """Exact sign of det[b - a, c - a, d - a] for one quadruple of points (Python floats).

    Float filter with the bound 2^-40 * permanent (looser than Shewchuk's o3derrboundA, hence
    valid), else ``orient3d`` (Shewchuk's filter, then rational arithmetic).
    """
    u0, u1, u2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    v0, v1, v2 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    w0, w1, w2 = d[0] - a[0], d[1] - a[1], d[2] - a[2]
    p12, p21, p20, p02, p01, p10 = v1 * w2, v2 * w1, v2 * w0, v0 * w2, v0 * w1, v1 * w0
    det = u0 * (p12 - p21) + u1 * (p20 - p02) + u2 * (p01 - p10)
    permanent = abs(u0) * (abs(p12) + abs(p21)) + abs(u1) * (abs(p20) + abs(p02)) + abs(u2) * (abs(p01) + abs(p10))
    if exact or (abs(det) > _FRAME_RTOL * permanent and permanent > _NORM_MIN):
        return (det > 0) - (det < 0)
    return int(orient3d(np.array(a), np.array(b), np.array(c), np.array(d))[0])


def _exact_angular_sort(
    pts: list[tuple[float, float, float]],
    i: int,
    j: int,
    proposal: np.ndarray,
    flip: np.ndarray,
    adj: np.ndarray,
    exact: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Sort a proposed angular order about the axis P_i P_j exactly; return it and its adjacent signs.

    ``pts``: the points as tuples; ``flip`` (per point index) reverses directions; ``adj`` holds
    the exact signs already known for the proposal's consecutive pairs. Insertion sort with exact comparisons: the float proposal is
    nearly sorted (only near-parallel planes are swapped), so this costs O(L + inversions)
    comparisons; a proposal far from sorted falls back to a comparison sort, O(L log L).
    """
    p, q = pts[i], pts[j]
    sign = np.where(flip, -1, 1).tolist()
    known = {(int(u), int(v)): int(t) for u, v, t in zip(proposal[:-1], proposal[1:], adj)}

    def turn(u: int, v: int) -> int:  # sign of det[a, V_u, V_v]: > 0 iff v comes after u
        if (u, v) not in known:
            known[(u, v)] = _orient3d_scalar(p, q, pts[u], pts[v], exact) * sign[u] * sign[v]
        return known[(u, v)]

    members = proposal.tolist()
    budget = 8 * len(members) + 64
    out: list[int] = []
    for x in members:
        pos = len(out)
        while pos > 0 and turn(out[pos - 1], x) < 0:
            pos -= 1
        out.insert(pos, x)
        if len(known) > budget:
            out = sorted(members, key=functools.cmp_to_key(lambda u, v: -turn(u, v)))
            break
    signs = np.array([turn(u, v) for u, v in zip(out[:-1], out[1:])], dtype=np.int8)
    assert not (signs < 0).any()
    return np.array(out, dtype=np.int64), signs


def _side_positions(block: _AxisBlock, r: int, t: int) -> np.ndarray:
    """Positions (in row r's angular order) on the better side of the plane of the group at t."""
    s, e, fl = block.start[r, t], block.end[r, t], block.flipped[r]
    positions = np.arange(block.order.shape[1])
    later, earlier = positions > e, positions < s
    left = later & ~fl | earlier & fl
    right = earlier & ~fl | later & fl
    return left if block.left_better[r, t] else right


def _plane_best(P: np.ndarray, G: np.ndarray, idx: np.ndarray, exact: bool) -> _Best:
    """Best separable labeling of coplanar 3-D points P[idx] (idx[0], idx[1], idx[-1] not collinear)."""
    coords = list(_plane_projection(P[idx[0]], P[idx[1]], P[idx[-1]], exact))
    return _best_2d(P[idx][:, coords], G[idx], exact)


def _best_3d(P: np.ndarray, G: np.ndarray, exact: bool, deadline: Deadline | None = None) -> _Best:
    """Best separable positive set of distinct 3-D points (affine dimension 3): the axis sweep of
    every pair, in vectorised blocks of pairs (lexicographic order, so ties resolve to the first pair)."""
    n = len(P)
    total = float(G.sum())
    best_gain, best = (total, "all") if total > 0 else (0.0, "none")
    plane_cache: dict[bytes, float] = {}
    I, J = np.triu_indices(n, 1)
    size = max(1, _BLOCK_ENTRIES // n)
    complete = True
    for lo in range(0, len(I), size):
        if deadline is not None and deadline.expired():
            deadline.note("enumeration (3-D pairs)")
            complete = False
            break
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite values take the exact path
            block = _axis_block(P, G, I[lo : lo + size], J[lo : lo + size], exact, plane_cache)
        if block is None:
            continue
        r, t = np.unravel_index(int(np.argmax(block.value)), block.value.shape)
        if block.value[r, t] > best_gain:
            best_gain, best = float(block.value[r, t]), tuple(int(v) for v in block.pairs[r])
    mask = np.zeros(n, dtype=bool)
    if best == "all":
        mask[:] = True
    if isinstance(best, tuple):
        i, j = best
        with np.errstate(over="ignore", invalid="ignore"):
            block = _axis_block(P, G, np.array([i]), np.array([j]), exact, plane_cache)
        t = int(np.argmax(block.value[0]))
        order = block.order[0]
        mask[order[_side_positions(block, 0, t)]] = True
        on_plane = np.concatenate(([i, j], order[block.start[0, t] : block.end[0, t] + 1]))
        sub = _plane_best(P, G, on_plane, exact)
        mask[on_plane[sub.mask]] = True
    return _Best(best_gain, mask, complete)


# ----------------------------------------------------------------------------------------------
# dispatch on the affine dimension (decided exactly)


def best_separable_set(
    P: np.ndarray, G: np.ndarray, exact: bool | None = None, deadline: Deadline | None = None
) -> _Best:
    """Max over separable S of sum_{x in S} G[x], for *distinct* points P (n, d), d <= 3.

    A ``deadline`` that stops the enumeration gives the best set seen so far (``complete`` False)."""
    n, d = P.shape
    if exact is None:
        exact = float_is_exact(P)
    total = float(G.sum())
    if n == 1:
        mask = np.array([total > 0])
        return _Best(max(total, 0.0), mask)
    p0, p1 = P[0], P[1]
    if d == 1:
        return _best_on_line(P[:, 0], G)
    if d == 2:
        collinear = orient2d(p0, p1, P, exact) == 0
    else:
        collinear = ~_cross_signs(p0, p1, P, exact).any(axis=1)
    if collinear.all():
        axis = int(np.argmax(np.abs(p1 - p0)))  # p1 - p0 has this component non-zero
        return _best_on_line(P[:, axis], G)
    if d == 2:
        return _best_2d(P, G, exact, deadline)
    p2 = P[int(np.argmax(~collinear))]
    coplanar = orient3d(p0, p1, p2, P, exact) == 0
    if coplanar.all():
        coords = list(_plane_projection(p0, p1, p2, exact))
        return _best_2d(P[:, coords], G, exact, deadline)
    return _best_3d(P, G, exact, deadline)


def max_margin_halfspace(X: np.ndarray, positive: np.ndarray) -> list[tuple[Halfspace, float]]:
    """Max-margin halfspace(s) for a separable labeling (LP on centred, scaled data).

    Maximises t subject to w.x + b >= t on positives, <= -t on negatives, ||w||_inf <= 1, t <= 1.
    Returns candidate (halfspace in original coordinates, margin t on the scaled data) pairs:
    the default-tolerance LP answer and, unless it already realises the labeling (exact predictions),
    a tight-tolerance re-solve, then the LP on data scaled column by column (columns whose spreads
    differ by many orders of magnitude, e.g. 2^-128 beside 1, look constant to the LP under one
    common scale). A labeling whose margin is below float64 resolution (points collinear in decimal
    but not in binary) may have no float64 candidate that realises it: the caller hands these
    candidates to :func:`~oraclepriv.solvers.combinatorial.exact_halfspace.realize_labeling`, which then solves the
    LP in rational arithmetic.
    """
    n, d = X.shape
    if positive.all() or not positive.any():
        return [(Halfspace((0.0,) * d, 1.0 if positive.all() else -1.0), 1.0)]
    center = (X.max(axis=0) + X.min(axis=0)) / 2.0
    spread = np.max(np.abs(X - center), axis=0)
    common = np.full(d, float(spread.max()) or 1.0)
    per_column = np.where(spread > 0, spread, 1.0)
    tight = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    candidates = []
    for scale, options in ((common, {}), (common, tight), (per_column, {})):
        found = _margin_lp(X, positive, center, scale, options)
        if found is None:
            continue
        candidates.append(found)
        if np.array_equal(found[0].predict(X) == 1, positive):
            break
    return candidates


def _margin_lp(
    X: np.ndarray, positive: np.ndarray, center: np.ndarray, scale: np.ndarray, options: dict
) -> tuple[Halfspace, float] | None:
    """The max-margin LP of :func:`max_margin_halfspace` on (X - center) / scale (column-wise)."""
    n, d = X.shape
    Z = (X - center) / scale
    s = np.where(positive, -1.0, 1.0)  # every row reads  s_i (w.z_i + b) + t <= 0
    A = np.hstack((s[:, None] * Z, s[:, None], np.ones((n, 1))))
    c = np.zeros(d + 2)
    c[-1] = -1.0
    bounds = [(-1.0, 1.0)] * d + [(None, None), (None, 1.0)]
    res = linprog(c, A_ub=A, b_ub=np.zeros(n), bounds=bounds, method="highs", options=options)
    if res.status != 0:
        return None
    w_scaled, b_scaled, margin = res.x[:d], res.x[d], res.x[-1]
    w = w_scaled / scale
    if not (np.all(np.isfinite(w)) and np.isfinite(b_scaled - float(w @ center))):
        return None
    return Halfspace(tuple(w), b_scaled - float(w @ center)), float(margin)


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
        }
        # representative: the max-margin halfspace of the optimal labeling, realised exactly
        d = P.shape[1]
        candidates = max_margin_halfspace(P, best.mask)
        hypothesis = realize_labeling(P, best.mask, candidates=[h for h, _ in candidates])
        status = "optimal"
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
