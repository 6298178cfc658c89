"""The 3-D kernel of the ``enumerate`` halfspace oracle (:mod:`oraclepriv.solvers.combinatorial.enumerate`, whose
docstring proves why the hyperplanes through data points suffice): the axis sweep.

For every pair (p, q) whose line holds no third data point (enough, by the Sylvester-Gallai theorem; see
``_axis_block``), the other points are sorted by angle around the axis pq, exactly coplanar ones grouped,
and every plane through the axis is evaluated with prefix sums; the points on a plane with more than three
points are solved, once per plane, by the 2-D kernel (:func:`~oraclepriv.solvers.combinatorial.enumerate_2d.best_2d`).
O(n^3 log n) time. The sweeps of a block of pairs run as one set of numpy array operations (pairs x points),
so the Python overhead is per block, not per pair or point.

Exactness: float angles only propose the order. A batched float filter over the whole block certifies the
signs it can; every other sign is decided by the exact predicates of
:mod:`oraclepriv.solvers.combinatorial.geometry` (Shewchuk's filter, then rational arithmetic), and a row
whose proposal is wrong is re-sorted exactly. Given the compiled kernels (the caller's choice,
:func:`~oraclepriv.solvers.combinatorial.enumerate_compiled.choose`), the pairs are swept by the compiled kernel
(:func:`~oraclepriv.solvers.combinatorial.enumerate_kernels.axis_values_3d`; which pairs are needed:
``_best_pair_compiled``) and only the pairs it hands back and the winning pair are swept here; the planes with four
or more points use the 2-D kernel only when it is already in the process
(:func:`~oraclepriv.solvers.combinatorial.enumerate_compiled.loaded`: nothing is loaded or compiled for them). A
deadline stops the loop over blocks; the answer is then the best set seen so far, marked incomplete.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import NamedTuple

import numpy as np
from oraclepriv.solvers.combinatorial import enumerate_compiled
from oraclepriv.solvers.combinatorial.enumerate_2d import Best, best_2d
from oraclepriv.solvers.combinatorial.geometry import cross_component_signs, cross_signs, orient3d, orient3d_sign
from oraclepriv.solvers.runtime.deadline import Deadline

__all__ = ["best_3d", "plane_projection"]


def plane_projection(p: np.ndarray, q: np.ndarray, r: np.ndarray, exact: bool) -> tuple[int, int]:
    """Two coordinates whose projection is injective on the plane through p, q, r (not collinear)."""
    signs = cross_signs(p, q, r[None, :], exact)[0]
    normal = np.cross(q - p, r - p)
    candidates = [l for l in range(3) if signs[l] != 0]
    drop = max(candidates, key=lambda l: abs(normal[l]))
    keep = [l for l in range(3) if l != drop]
    return keep[0], keep[1]


#: pairs x points evaluated per vectorised block of ``best_3d`` (bounds the memory: ~40 arrays of
#: this many float64 entries, ~10 MB each at this size)
_BLOCK_ENTRIES = 1 << 17


#: under a time limit, the seconds one block of pairs should take: the deadline is checked between blocks, so it is
#: overrun by about this much (the blocks start at :data:`_FIRST_BLOCK` pairs and are sized by the time measured)
_BLOCK_SECONDS = 0.25
_FIRST_BLOCK = 8


def _blocks(count: int, maximum: int, deadline: Deadline | None) -> Iterator[tuple[int, int]]:
    """Consecutive ranges [lo, hi) covering 0..count-1, of ``maximum`` items with no time limit. Under a limit they
    start at :data:`_FIRST_BLOCK` items and each next one is sized from the seconds the last one took (measured
    between the yields; at most twice as large) to take about :data:`_BLOCK_SECONDS`: a block's cost varies by
    orders of magnitude with the data (the exact sorts and the planes with many points of degenerate data), and
    the deadline is only checked between blocks."""
    limited = deadline is not None and deadline.remaining() is not None
    size = min(maximum, _FIRST_BLOCK) if limited else maximum
    lo = 0
    while lo < count:
        hi = min(count, lo + size)
        start = time.perf_counter()
        yield lo, hi
        if limited:
            factor = min(2.0, _BLOCK_SECONDS / max(time.perf_counter() - start, 1e-6))
            size = max(1, min(maximum, int(size * factor)))
        lo = hi


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
    A, m, endpoint, X, Y, N = _axis_frame(P, I, J)
    sign_m, zero, beta = _reference_sides(P, I, J, A, m, Y, N, endpoint, exact)
    keep = ~(zero & (beta == 0)).any(axis=1)  # no third point on the axis
    if not keep.all():
        if not keep.any():
            return None
        I, J, X, Y, N = I[keep], J[keep], X[keep], Y[keep], N[keep]
        sign_m, zero, beta, endpoint = sign_m[keep], zero[keep], beta[keep], endpoint[keep]
    order, fl, ss, adj = _angular_order(P, I, J, X, Y, N, sign_m, zero, beta, endpoint, exact)
    value, start, end, left_better = _plane_values(P, G, I, J, order, ss, adj, exact, plane_cache)
    return _AxisBlock(np.stack((I, J), axis=1), value, order, fl, start, end, left_better)


def _axis_frame(
    P: np.ndarray, I: np.ndarray, J: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every row's directions D_k = P_k - P_I in the frame of its axis (:func:`_axis_block`): (the axes
    a = P_J - P_I, the coordinate m of each axis's smallest |a_m|, the axis endpoints as a (rows, points)
    mask, the float coordinates x = D.b1 and y = D.b2, the norms |D|)."""
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

    return A, m, endpoint, X, Y, N


def _reference_sides(
    P: np.ndarray,
    I: np.ndarray,
    J: np.ndarray,
    A: np.ndarray,
    m: np.ndarray,
    Y: np.ndarray,
    N: np.ndarray,
    endpoint: np.ndarray,
    exact: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact side of every direction about its row's reference plane (spanned by the axis and e_m):
    (sign_m = sign (a x D)_m, the mask of directions on that plane, and there the sign beta of their e_m
    component; beta = 0: the point is on the axis). Float signs of y are kept where the filter certifies
    them (:data:`_FRAME_RTOL`), the others are 2x2 minors decided exactly."""
    R, n = Y.shape
    m1, m2 = (m + 1) % 3, (m + 2) % 3
    # side of the reference plane: sign_m = sign (a x D)_m = -sign y, exactly
    sign_m = -np.sign(Y).astype(np.int8)
    unsure = ~(np.abs(Y) > _FRAME_RTOL * N) | ~(N > _NORM_MIN)
    unsure &= ~endpoint
    if unsure.any():
        r, k = np.nonzero(unsure)
        sign_m[r, k] = cross_component_signs(P, I[r], J[r], k, m[r], exact)
    zero = (sign_m == 0) & ~endpoint
    beta = np.zeros((R, n), dtype=np.int8)
    if zero.any():
        # on the reference plane: (a x D)_l = beta (a x e_m)_l; use the component l of a x e_m of
        # largest modulus ((a x e_m)_m1 = a_m2, (a x e_m)_m2 = -a_m1; not both zero as a != 0)
        r, k = np.nonzero(zero)
        use_m2 = np.abs(A[r, m1[r]]) >= np.abs(A[r, m2[r]])
        l = np.where(use_m2, m2[r], m1[r])
        axe_sign = np.where(use_m2, -np.sign(A[r, m1[r]]), np.sign(A[r, m2[r]])).astype(np.int8)
        beta[r, k] = cross_component_signs(P, I[r], J[r], k, l, exact) * axe_sign
    return sign_m, zero, beta


def _angular_order(
    P: np.ndarray,
    I: np.ndarray,
    J: np.ndarray,
    X: np.ndarray,
    Y: np.ndarray,
    N: np.ndarray,
    sign_m: np.ndarray,
    zero: np.ndarray,
    beta: np.ndarray,
    endpoint: np.ndarray,
    exact: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every row's other points in exact angular order about its axis: (order, flipped, the flip's sign per
    position, the exact sign of det[a, V_u, V_v] of each consecutive pair: 0 inside a group of points coplanar
    with the axis). Directions are flipped into the half-turn, ordered by float angle, and every consecutive
    pair is verified (float filter, else ``orient3d``); a row found misordered is sorted exactly
    (:func:`_exact_angular_sort`)."""
    R, n = X.shape
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
    for bad_row in bad:  # near-parallel planes misordered by the float angles: sort this row exactly
        order[bad_row], adj[bad_row] = _exact_angular_sort(
            pts, int(I[bad_row]), int(J[bad_row]), order[bad_row], flip[bad_row], adj[bad_row], exact
        )
        fl[bad_row] = flip[bad_row, order[bad_row]]
        ss[bad_row] = S[bad_row, order[bad_row]]

    return order, fl, ss, adj


def _plane_values(
    P: np.ndarray,
    G: np.ndarray,
    I: np.ndarray,
    J: np.ndarray,
    order: np.ndarray,
    ss: np.ndarray,
    adj: np.ndarray,
    exact: bool,
    plane_cache: dict,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The best gain of every plane through each row's axis (at the position its group starts; -inf
    elsewhere), each group's first and last position, and whether the positive side is "left": the side
    gains by prefix sums along the order, the points on the plane added as a free labeling of three points or,
    for a plane with more points, by the 2-D kernel once per plane (``plane_cache``)."""
    R, L = order.shape
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
    return value, start, end, diff >= 0


def _exact_angular_sort(
    pts: list[tuple[float, ...]],
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
            known[(u, v)] = orient3d_sign(p, q, pts[u], pts[v], exact) * sign[u] * sign[v]
        return known[(u, v)]

    members: list[int] = proposal.tolist()
    budget = 8 * len(members) + 64
    out: list[int] = []
    for x in members:
        pos = len(out)
        while pos > 0 and turn(out[pos - 1], x) < 0:
            pos -= 1
        out.insert(pos, x)
        if len(known) > budget:
            out = sorted(members, key=functools.cmp_to_key(_reversed(turn)))
            break
    signs = np.array([turn(u, v) for u, v in zip(out[:-1], out[1:])], dtype=np.int8)
    assert not (signs < 0).any()
    return np.array(out, dtype=np.int64), signs


def _reversed(turn: Callable[[int, int], int]) -> Callable[[int, int], int]:
    """The comparison that sorts by ``turn``: u before v when ``turn(u, v)`` > 0."""

    def compare(u: int, v: int) -> int:
        return -turn(u, v)

    return compare


def _side_positions(block: _AxisBlock, r: int, t: int) -> np.ndarray:
    """Positions (in row r's angular order) on the better side of the plane of the group at t."""
    s, e, fl = block.start[r, t], block.end[r, t], block.flipped[r]
    positions = np.arange(block.order.shape[1])
    later, earlier = positions > e, positions < s
    left = later & ~fl | earlier & fl
    right = earlier & ~fl | later & fl
    return left if block.left_better[r, t] else right


def _plane_best(P: np.ndarray, G: np.ndarray, idx: np.ndarray, exact: bool) -> Best:
    """Best separable labeling of coplanar 3-D points P[idx] (idx[0], idx[1], idx[-1] not collinear)."""
    coords = list(plane_projection(P[idx[0]], P[idx[1]], P[idx[-1]], exact))
    return best_2d(P[idx][:, coords], G[idx], exact, kernels=enumerate_compiled.loaded(2))


#: pairs x points per call of the compiled kernel (the deadline is checked between calls)
_KERNEL_CHUNK_ENTRIES = 1 << 20


def _axis_values_compiled(
    P: np.ndarray,
    G: np.ndarray,
    I: np.ndarray,
    J: np.ndarray,
    exact: bool,
    deadline: Deadline | None,
    plane_cache: dict,
    kernel: ModuleType,
) -> tuple[np.ndarray, bool, bool]:
    """The best gain over the planes through every pair's axis (-inf for pairs with a third point on the axis and
    for pairs a deadline left out), whether all were evaluated, and whether the points were found degenerate (a
    pair with a third point on its axis, or a plane through an axis with four or more points). The compiled
    kernel, and the numpy sweep for the pairs it hands back."""
    n = len(P)
    values = np.full(len(I), -np.inf)
    degenerate = False
    chunk = max(1, _KERNEL_CHUNK_ENTRIES // n)
    block_size = max(1, _BLOCK_ENTRIES // n)
    for lo in range(0, len(I), chunk):
        if deadline is not None and deadline.expired():
            deadline.note("enumeration (3-D pairs)")
            return values, False, degenerate
        hi = min(len(I), lo + chunk)
        status = np.zeros(hi - lo, dtype=np.int8)
        chunk_values = np.full(hi - lo, -np.inf)
        kernel.axis_values_3d(P, G, I[lo:hi], J[lo:hi], bool(exact), chunk_values, status)
        degenerate |= bool(np.isin(status, (kernel.ON_AXIS, kernel.COPLANAR)).any())
        rows = np.flatnonzero(np.isin(status, (kernel.HANDED_BACK, kernel.COPLANAR)))
        for start, stop in _blocks(len(rows), block_size, deadline):
            if deadline is not None and deadline.expired():  # the pairs handed back so far are in chunk_values
                deadline.note("enumeration (3-D pairs)")
                values[lo:hi] = chunk_values
                return values, False, degenerate
            part = rows[start:stop]
            with np.errstate(over="ignore", invalid="ignore"):  # non-finite values take the exact path
                block = _axis_block(P, G, I[lo:hi][part], J[lo:hi][part], exact, plane_cache)
            kept = {} if block is None else {(int(a), int(b)): r for r, (a, b) in enumerate(block.pairs)}
            degenerate |= len(kept) < len(part) or (block is not None and bool((block.end > block.start).any()))
            for t in part:
                r = kept.get((int(I[lo + t]), int(J[lo + t])))
                if r is not None:
                    assert block is not None
                    chunk_values[t] = float(np.max(block.value[r]))
        values[lo:hi] = chunk_values
    return values, True, degenerate


def _best_pair_compiled(
    P: np.ndarray,
    G: np.ndarray,
    I: np.ndarray,
    J: np.ndarray,
    exact: bool,
    deadline: Deadline | None,
    plane_cache: dict,
    kernel: ModuleType,
) -> tuple[np.ndarray, bool]:
    """The best gain over the planes through every pair's axis that is needed, and whether the enumeration is
    complete.

    Pairs of points of the same index parity first: every three points hold two of the same parity, so when no
    three points are collinear and no four coplanar every plane spanned by data points (it holds exactly three)
    is swept from one of these pairs, half of all pairs (the other half, a complete bipartite graph, is the largest
    set of pairs containing no triangle). Degenerate points are detected on the way (a collinear triple has two
    points of the same parity, and the sweep about them meets the third on its axis; four coplanar points have two
    of the same parity, and the sweep about them meets the other two on one plane), and then the pairs of mixed
    parity are swept too, as the numpy sweep does."""
    values = np.full(len(I), -np.inf)
    same = (I % 2) == (J % 2)
    values[same], complete, degenerate = _axis_values_compiled(
        P, G, I[same], J[same], exact, deadline, plane_cache, kernel
    )
    if complete and degenerate:
        values[~same], complete, _ = _axis_values_compiled(
            P, G, I[~same], J[~same], exact, deadline, plane_cache, kernel
        )
    return values, complete


def best_3d(
    P: np.ndarray,
    G: np.ndarray,
    exact: bool,
    deadline: Deadline | None = None,
    kernels: ModuleType | None = None,
) -> Best:
    """Best separable positive set of distinct 3-D points (affine dimension 3): the axis sweep of
    every pair, in vectorised blocks of pairs (lexicographic order, so ties resolve to the first pair), or the
    compiled kernel's when ``kernels`` (:mod:`~oraclepriv.solvers.combinatorial.enumerate_kernels`, ready to run)
    is given."""
    n = len(P)
    total = float(G.sum())
    best_gain = total if total > 0 else 0.0  # the constants: every point positive, or none
    best_pair: tuple[int, int] | None = None  # the axis of the best set once it beats them
    plane_cache: dict[bytes, float] = {}
    I, J = np.triu_indices(n, 1)
    size = max(1, _BLOCK_ENTRIES // n)
    complete = True
    if kernels is not None:
        P = np.ascontiguousarray(P, dtype=np.float64)
        G = np.ascontiguousarray(G, dtype=np.float64)
        values, complete = _best_pair_compiled(P, G, I, J, exact, deadline, plane_cache, kernels)
        first = int(np.argmax(values))  # the first pair of the best value
        if values[first] > best_gain:
            with np.errstate(over="ignore", invalid="ignore"):
                block = _axis_block(P, G, I[first : first + 1], J[first : first + 1], exact, plane_cache)
            assert block is not None  # its value is finite: it holds no third point on its axis
            if block.value[0].max() > best_gain:  # the numpy sweep's own value (the kernel's may differ in rounding)
                best_gain, best_pair = float(block.value[0].max()), (int(I[first]), int(J[first]))
    for lo, hi in _blocks(len(I) if kernels is None else 0, size, deadline):
        if deadline is not None and deadline.expired():
            deadline.note("enumeration (3-D pairs)")
            complete = False
            break
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite values take the exact path
            block = _axis_block(P, G, I[lo:hi], J[lo:hi], exact, plane_cache)
        if block is None:
            continue
        r, t = np.unravel_index(int(np.argmax(block.value)), block.value.shape)
        if block.value[r, t] > best_gain:
            best_gain, best_pair = float(block.value[r, t]), (int(block.pairs[r][0]), int(block.pairs[r][1]))
    mask = np.zeros(n, dtype=bool)
    if best_pair is None:
        mask[:] = total > 0
    else:
        i, j = best_pair
        with np.errstate(over="ignore", invalid="ignore"):
            block = _axis_block(P, G, np.array([i]), np.array([j]), exact, plane_cache)
        assert block is not None  # the pair was kept in its block: it holds no third point on its axis
        plane = int(np.argmax(block.value[0]))
        order = block.order[0]
        mask[order[_side_positions(block, 0, plane)]] = True
        on_plane = np.concatenate(([i, j], order[block.start[0, plane] : block.end[0, plane] + 1]))
        sub = _plane_best(P, G, on_plane, exact)
        mask[on_plane[sub.mask]] = True
    return Best(best_gain, mask, complete, "numpy" if kernels is None else "compiled")
