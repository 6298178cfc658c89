"""The compiled (numba) sweeps of the ``enumerate`` halfspace oracle: the pivot sweep in d = 2
(:func:`pivot_values_2d`, the compiled ``enumerate_2d._pivot_sweep_2d``) and the axis sweep in d = 3
(:func:`axis_values_3d`, the compiled ``enumerate_3d._axis_block``), with their filtered predicates and their sort.
:mod:`~oraclepriv.solvers.combinatorial.enumerate` proves why the hyperplanes through data points suffice;
``enumerate_3d._axis_block`` proves the axis frame and its filter.

Exactness. Every sign is either *proved* in floats or handed back: the predicates return :data:`UNSURE` when
Shewchuk's static filter (J. R. Shewchuk, "Adaptive precision floating-point arithmetic and fast robust geometric
predicates", orient2d and orient3d stage-A bounds, as in :mod:`~oraclepriv.solvers.combinatorial.geometry`) cannot
prove a sign, and a pivot or pair holding such a sign is reported ``unsure`` and evaluated by the numpy sweep,
whose predicates fall back to rational arithmetic. No near-degenerate sign is decided here in floats. The filters
add an absolute term :data:`UNDERFLOW_SLACK` for rounding in the subnormal range, which the stage-A bounds do not
cover, and never accept a non-finite value. With ``exact_floats`` (coordinates on a bounded power-of-two grid,
:func:`~oraclepriv.solvers.combinatorial.geometry.float_is_exact`) every product is exact and float signs are used
as they are.

Speed. Per pivot (d = 2) or pair (d = 3) the sweep is a few passes over the points: the directions and their
pseudo-angles (branch-free, vectorised), a bucket sort of the pseudo-angles that carries each point's fields along
(:func:`bucket_order`; the angles only *propose* the order), a verification of every consecutive pair (the filter;
an insertion repair with exact comparisons when the proposal is wrong) and running sums. Expected O(n) per pivot or
pair on spread-out data, so O(n^2) in d = 2 and O(n^3) in d = 3.

Why one module: numba's on-disk cache (``cache=True``) keys each compiled function on the file defining it, not on
the files of the functions it calls; kernels split over several files would keep stale compiled callees after an
edit of one of them.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "UNSURE",
    "orient2d_filtered",
    "difference_det2_filtered",
    "orient3d_filtered",
    "cross_component_filtered",
    "bucket_order",
    "merge_sort_by_key",
    "pivot_values_2d",
    "axis_values_3d",
    "EVALUATED",
    "HANDED_BACK",
    "ON_AXIS",
    "COPLANAR",
]

# ---------------------------------------------------------------- filtered predicates

#: what a predicate returns when the float filter cannot prove the sign
UNSURE = 2

_EPS = 2.0**-53
_CCW_ERRBOUND_A = (3.0 + 16.0 * _EPS) * _EPS
_O3D_ERRBOUND_A = (7.0 + 56.0 * _EPS) * _EPS
#: absolute slack for rounding in the subnormal range (each of the few roundings there errs by at most
#: 2^-1075 in absolute value; the slack is 2^55 times that)
UNDERFLOW_SLACK = 2.0**-1020


@numba.njit(cache=True)
def _sign(value: float) -> int:
    if value > 0.0:
        return 1
    if value < 0.0:
        return -1
    return 0


@numba.njit(cache=True)
def orient2d_filtered(ax: float, ay: float, bx: float, by: float, cx: float, cy: float, exact_floats: bool) -> int:
    """Sign of det[b - a, c - a] (+1 counter-clockwise, 0 collinear, -1 clockwise), or :data:`UNSURE`."""
    return difference_det2_filtered(bx - ax, by - ay, cx - ax, cy - ay, exact_floats)


@numba.njit(cache=True)
def difference_det2_filtered(bax: float, bay: float, cax: float, cay: float, exact_floats: bool) -> int:
    """Sign of det[b - a, c - a] from the float differences ``bax = fl(b_x - a_x)``, ... (each one rounded float
    subtraction of input coordinates, or its exact negation: Shewchuk's bound covers their rounding), or
    :data:`UNSURE`."""
    left = bax * cay
    right = bay * cax
    det = left - right
    if exact_floats:
        return _sign(det)
    permanent = abs(left) + abs(right)
    if abs(det) > _CCW_ERRBOUND_A * permanent + UNDERFLOW_SLACK:
        return _sign(det)
    # a float difference is zero exactly when the coordinates are equal: then a product is exactly zero
    if (bax == 0.0 or cay == 0.0) and (bay == 0.0 or cax == 0.0):
        return 0
    return UNSURE


@numba.njit(cache=True)
def orient3d_filtered(P: np.ndarray, a: int, b: int, c: int, d: int, exact_floats: bool) -> int:
    """Sign of det[P_b - P_a, P_c - P_a, P_d - P_a] for rows of P (n, 3), or :data:`UNSURE`."""
    u0, u1, u2 = P[b, 0] - P[a, 0], P[b, 1] - P[a, 1], P[b, 2] - P[a, 2]
    v0, v1, v2 = P[c, 0] - P[a, 0], P[c, 1] - P[a, 1], P[c, 2] - P[a, 2]
    w0, w1, w2 = P[d, 0] - P[a, 0], P[d, 1] - P[a, 1], P[d, 2] - P[a, 2]
    p12, p21, p20, p02, p01, p10 = v1 * w2, v2 * w1, v2 * w0, v0 * w2, v0 * w1, v1 * w0
    det = u0 * (p12 - p21) + u1 * (p20 - p02) + u2 * (p01 - p10)
    if exact_floats:
        return _sign(det)
    permanent = abs(u0) * (abs(p12) + abs(p21)) + abs(u1) * (abs(p20) + abs(p02)) + abs(u2) * (abs(p01) + abs(p10))
    if abs(det) > _O3D_ERRBOUND_A * permanent + UNDERFLOW_SLACK:
        return _sign(det)
    return UNSURE


@numba.njit(cache=True)
def cross_component_filtered(P: np.ndarray, i: int, j: int, k: int, component: int, exact_floats: bool) -> int:
    """Sign of ((P_j - P_i) x (P_k - P_i))_component for rows of P (n, 3), or :data:`UNSURE`: the 2x2 minor
    on the coordinates (component + 1, component + 2) mod 3, as
    :func:`~oraclepriv.solvers.combinatorial.geometry.cross_component_signs` defines it."""
    c1 = (component + 1) % 3
    c2 = (component + 2) % 3
    ax, ay = P[i, c1], P[i, c2]
    return difference_det2_filtered(P[j, c1] - ax, P[j, c2] - ay, P[k, c1] - ax, P[k, c2] - ay, exact_floats)


# ---------------------------------------------------------------- the proposing sort

#: element moves the insertion pass after the bucket scatter may spend (times the number of keys) before the keys
#: are sorted by merge sort instead (keys bunched in few buckets)
_BUCKET_BUDGET = 8


@numba.njit(cache=True, error_model="numpy")
def merge_sort_by_key(order: np.ndarray, key: np.ndarray, m: int) -> None:
    """Sort ``order[:m]`` and ``key[:m]`` together by ``key`` (stable, bottom-up merge sort, O(m log m)): the
    fallback of the proposing sort and the order along a line. Written out rather than ``np.argsort``: numba's
    compiled argsort is large, and compiling it was a good part of the kernels' first-call cost."""
    order_scratch = np.empty(m, dtype=np.int64)
    key_scratch = np.empty(m)
    source_order, source_key, target_order, target_key = order, key, order_scratch, key_scratch
    width = 1
    passes = 0
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            a, b = lo, mid
            for t in range(lo, hi):
                if a < mid and (b >= hi or source_key[b] >= source_key[a]):
                    target_order[t] = source_order[a]
                    target_key[t] = source_key[a]
                    a += 1
                else:
                    target_order[t] = source_order[b]
                    target_key[t] = source_key[b]
                    b += 1
        source_order, target_order = target_order, source_order
        source_key, target_key = target_key, source_key
        width *= 2
        passes += 1
    if passes % 2 == 1:  # an odd number of passes: the sorted values are in the scratch arrays
        for t in range(m):
            order[t] = source_order[t]
            key[t] = source_key[t]


@numba.njit(cache=True, error_model="numpy")
def bucket_order(
    key: np.ndarray,
    n: int,
    skip: int,
    skip2: int,
    bucket: np.ndarray,
    count: np.ndarray,
    order: np.ndarray,
    sorted_key: np.ndarray,
) -> int:
    """Sort the indices 0..n-1 except ``skip`` and ``skip2`` (-1: none; ``skip2 == skip`` skips one index) by
    ``key`` (in [0, 2]; a non-finite key is set to 0) and return their number m: ``order[:m]`` the sorted indices,
    ``sorted_key[:m]`` their keys.

    A bucket sort (2m buckets), then one insertion pass (the buckets are in order), or a merge sort when the
    insertion pass exceeds its budget (keys bunched in few buckets). ``bucket`` (n) and ``count`` (2n + 1) are
    work space."""
    if skip2 == skip:
        skip2 = -1
    m = n - (skip >= 0) - (skip2 >= 0)
    if m <= 0:
        return 0
    buckets = 2 * m
    scale = buckets / 2.0
    for b in range(buckets + 1):
        count[b] = 0
    for k in range(n):
        value = key[k]
        value = value if (value >= 0.0 and value <= 2.0) else 0.0
        key[k] = value
        bucket[k] = min(int(value * scale), buckets - 1)
    for k in range(n):
        count[bucket[k] + 1] += 1
    if skip >= 0:
        count[bucket[skip] + 1] -= 1
    if skip2 >= 0:
        count[bucket[skip2] + 1] -= 1
    for b in range(buckets):
        count[b + 1] += count[b]
    for k in range(n):
        if k != skip and k != skip2:
            b = bucket[k]
            c = count[b]
            order[c] = k
            sorted_key[c] = key[k]
            count[b] = c + 1
    budget = _BUCKET_BUDGET * m
    for s in range(1, m):  # the buckets are in order: sort inside them
        item_key = sorted_key[s]
        if sorted_key[s - 1] <= item_key:
            continue
        item = order[s]
        u = s
        while u > 0 and sorted_key[u - 1] > item_key:
            order[u] = order[u - 1]
            sorted_key[u] = sorted_key[u - 1]
            u -= 1
        order[u] = item
        sorted_key[u] = item_key
        budget -= s - u
        if budget < 0:  # bunched keys: merge sort
            merge_sort_by_key(order, sorted_key, m)
            return m
    return m


# ---------------------------------------------------------------- d = 2: the pivot sweep

#: exact comparisons the insertion repair of one pivot's (or pair's) order may spend, times the number of points,
#: before it is handed back to the numpy sweep (which sorts with a comparison sort)
_REPAIR_BUDGET = 8


@numba.njit(cache=True, error_model="numpy")
def _propose_order_2d(
    X: np.ndarray,
    Y: np.ndarray,
    G: np.ndarray,
    i: int,
    work: np.ndarray,
    bucket: np.ndarray,
    count: np.ndarray,
    order: np.ndarray,
    ordered: np.ndarray,
) -> None:
    """The other points' directions from pivot i reversed into the half-turn [0, pi), sorted by pseudo-angle (a
    proposal only: the caller verifies it exactly): ``order[:n - 1]`` the points and ``ordered[:n - 1]`` their rows
    (the pseudo-angle, a key in [0, 2] increasing with the angle over [0, pi]; the reversed direction's x and y;
    1.0 where it was reversed; the gain), by :func:`bucket_order`."""
    n = len(X)
    px, py = X[i], Y[i]
    for k in range(n):  # branch-free, so that it vectorises; the sort skips the pivot's own row
        dx = X[k] - px  # the sign of a float difference is exact
        dy = Y[k] - py
        flip = (dy < 0.0) | ((dy == 0.0) & (dx < 0.0))
        sign = 1.0 - 2.0 * flip
        dx = dx * sign
        dy = dy * sign
        ratio = dy / (abs(dx) + dy)
        work[0, k] = ratio if dx >= 0.0 else 2.0 - ratio
        work[1, k] = dx
        work[2, k] = dy
        work[3, k] = flip
        work[4, k] = G[k]
    bucket_order(work[0], n, i, i, bucket, count, order, ordered[0])
    for t in range(n - 1):
        k = order[t]
        ordered[1, t] = work[1, k]
        ordered[2, t] = work[2, k]
        ordered[3, t] = work[3, k]
        ordered[4, t] = work[4, k]


@numba.njit(cache=True, error_model="numpy")
def _verify_and_repair_2d(ordered: np.ndarray, order: np.ndarray, m: int, adj: np.ndarray, exact_floats: bool) -> bool:
    """Make rows 0..m-1 (``order`` and ``ordered``) the exact angular order and ``adj[t]`` the exact sign of the
    angle from row t to t + 1 (0: the same line through the pivot). False if a sign is unproved or the repair
    exceeds its budget. The sign of det[V_u, V_v] for the reversed directions in rows u, v (float differences of
    input coordinates, or their negations, as Shewchuk's filter requires) is > 0 iff v's angle is larger, and 0 iff
    both lie on one line through the pivot."""
    misordered = False
    for t in range(m - 1):
        s = difference_det2_filtered(ordered[1, t], ordered[2, t], ordered[1, t + 1], ordered[2, t + 1], exact_floats)
        if s == UNSURE:
            return False
        adj[t] = s
        misordered |= s < 0
    if not misordered:
        return True
    budget = _REPAIR_BUDGET * m + 64
    rows = ordered.shape[0]
    held = np.empty(rows)
    for s_pos in range(1, m):  # insertion sort with exact comparisons: the proposal is nearly sorted
        for r in range(rows):
            held[r] = ordered[r, s_pos]
        item = order[s_pos]
        u = s_pos
        while u > 0:
            budget -= 1
            if budget < 0:
                return False
            s = difference_det2_filtered(ordered[1, u - 1], ordered[2, u - 1], held[1], held[2], exact_floats)
            if s == UNSURE:
                return False
            if s >= 0:
                break
            for r in range(rows):
                ordered[r, u] = ordered[r, u - 1]
            order[u] = order[u - 1]
            u -= 1
        for r in range(rows):
            ordered[r, u] = held[r]
        order[u] = item
    for t in range(m - 1):
        s = difference_det2_filtered(ordered[1, t], ordered[2, t], ordered[1, t + 1], ordered[2, t + 1], exact_floats)
        if s == UNSURE or s < 0:
            return False
        adj[t] = s
    return True


@numba.njit(cache=True, error_model="numpy")
def _line_value(X: np.ndarray, Y: np.ndarray, G: np.ndarray, members: np.ndarray) -> float:
    """Best prefix or suffix (constants included) of distinct collinear points ``members`` in their order along
    the line (by x, or by y on a vertical line); ``members`` is sorted in place."""
    k = len(members)
    vertical = True
    for t in range(1, k):
        if X[members[t]] != X[members[0]]:
            vertical = False
            break
    coordinate = np.empty(k)
    for t in range(k):
        coordinate[t] = Y[members[t]] if vertical else X[members[t]]
    merge_sort_by_key(members, coordinate, k)
    prefix = 0.0
    max_prefix = 0.0
    min_prefix = 0.0
    for t in range(k):
        prefix += G[members[t]]
        max_prefix = max(max_prefix, prefix)
        min_prefix = min(min_prefix, prefix)
    return max(max_prefix, prefix - min_prefix)


@numba.njit(cache=True, error_model="numpy")
def _pivot_value_2d(
    X: np.ndarray, Y: np.ndarray, G: np.ndarray, i: int, order: np.ndarray, ordered: np.ndarray, m: int, adj: np.ndarray
) -> float:
    """Best gain over the lines through pivot i, given the exact angular order and its adjacent signs: per line
    (group of collinear directions), its better side by running sums over the groups plus the best labeling of
    the points on it. Left of a line: the unflipped points of later groups and the flipped points of earlier
    ones; right: the other points off it."""
    flipped_flag, gain = ordered[3], ordered[4]
    total_unflipped = 0.0
    total_flipped = 0.0
    generic = True
    for t in range(m):  # branch-free: vectorises
        total_flipped += gain[t] * flipped_flag[t]
        total_unflipped += gain[t] * (1.0 - flipped_flag[t])
    for t in range(m - 1):
        generic &= adj[t] != 0
    pivot_gain = max(G[i], 0.0)
    best = -np.inf
    if generic:  # every line through the pivot holds one other point: {p, q} takes any labeling
        cum_unflipped = 0.0
        cum_flipped = 0.0
        for t in range(m):
            flipped = gain[t] * flipped_flag[t]
            unflipped = gain[t] * (1.0 - flipped_flag[t])
            cum_unflipped += unflipped
            cum_flipped += flipped
            left = (total_unflipped - cum_unflipped) + (cum_flipped - flipped)
            right = (cum_unflipped - unflipped) + (total_flipped - cum_flipped)
            best = max(best, max(left, right) + pivot_gain + max(gain[t], 0.0))
        return best
    cum_unflipped = 0.0
    cum_flipped = 0.0
    t = 0
    while t < m:
        start = t
        unflipped = 0.0
        flipped = 0.0
        while True:
            if ordered[3, t] != 0.0:
                flipped += ordered[4, t]
            else:
                unflipped += ordered[4, t]
            if t == m - 1 or adj[t] != 0:
                break
            t += 1
        t += 1
        cum_unflipped += unflipped
        cum_flipped += flipped
        left = (total_unflipped - cum_unflipped) + (cum_flipped - flipped)
        right = (cum_unflipped - unflipped) + (total_flipped - cum_flipped)
        if t - start == 1:
            online = pivot_gain + max(unflipped + flipped, 0.0)  # {p, q}: every labeling is separable
        else:
            members = np.empty(t - start + 1, dtype=np.int64)
            for u in range(start, t):
                members[u - start] = order[u]
            members[t - start] = i
            online = _line_value(X, Y, G, members)
        best = max(best, max(left, right) + online)
    return best


@numba.njit(cache=True, error_model="numpy")
def pivot_values_2d(
    P: np.ndarray, G: np.ndarray, pivots: np.ndarray, exact_floats: bool, values: np.ndarray, unsure: np.ndarray
) -> None:
    """The 2-D pivot sweep: for each ``pivots[t]``, ``values[t]`` = the best gain over the lines through it (the
    quantity ``enumerate_2d._pivot_sweep_2d(...).value.max()``), or ``unsure[t]`` = True when a sign could not be
    proved in floats (``values[t]`` is then left as it was).

    P (n, 2) distinct points, G (n,) their gains, ``exact_floats``: every predicate is exact in floats."""
    n = P.shape[0]
    m = n - 1
    X = np.empty(n)
    Y = np.empty(n)
    for k in range(n):
        X[k] = P[k, 0]
        Y[k] = P[k, 1]
    work = np.zeros((5, n))  # per point: pseudo-angle, reversed direction x and y, reversed (1.0), gain
    ordered = np.zeros((5, n))  # the same in angular order
    bucket = np.empty(n, dtype=np.int64)
    count = np.empty(2 * n + 1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    adj = np.zeros(n, dtype=np.int64)
    for t in range(len(pivots)):
        i = pivots[t]
        _propose_order_2d(X, Y, G, i, work, bucket, count, order, ordered)
        if not _verify_and_repair_2d(ordered, order, m, adj, exact_floats):
            unsure[t] = True
            continue
        values[t] = _pivot_value_2d(X, Y, G, i, order, ordered, m, adj)


# ---------------------------------------------------------------- d = 3: the axis sweep

#: statuses of a pair of :func:`axis_values_3d`
EVALUATED = 0
HANDED_BACK = 1
ON_AXIS = 2
COPLANAR = 3

#: the frame filter of the numpy sweep (``enumerate_3d._FRAME_RTOL``, ``enumerate_3d._NORM_MIN``; its docstring
#: bounds the frame's rounding far below this)
FRAME_RTOL = 2.0**-40
NORM_MIN = 2.0**-400


@numba.njit(cache=True, error_model="numpy")
def _frame_3d(a0: float, a1: float, a2: float) -> tuple[int, float, float, float, float, float, float]:
    """The axis frame of ``enumerate_3d._axis_frame``: (m, b1, b2) with m the coordinate of the axis's smallest
    |a_m| (the first on ties), b2 = (a x e_m) / |a x e_m| and b1 = b2 x a / |a|."""
    m = 0
    if abs(a1) < abs(a0):
        m = 1
    if abs(a2) < min(abs(a0), abs(a1)):
        m = 2
    scale = max(abs(a0), abs(a1), abs(a2))
    h0, h1, h2 = a0 / scale, a1 / scale, a2 / scale
    norm = np.sqrt(h0 * h0 + h1 * h1 + h2 * h2)
    h0, h1, h2 = h0 / norm, h1 / norm, h2 / norm
    # a x e_m: component m1 = m + 1 is a_m2, component m2 = m + 2 is -a_m1 (indices mod 3)
    if m == 0:
        c0, c1, c2 = 0.0, h2, -h1
    elif m == 1:
        c0, c1, c2 = -h2, 0.0, h0
    else:
        c0, c1, c2 = h1, -h0, 0.0
    norm2 = np.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    c0, c1, c2 = c0 / norm2, c1 / norm2, c2 / norm2
    return m, c1 * h2 - c2 * h1, c2 * h0 - c0 * h2, c0 * h1 - c1 * h0, c0, c1, c2  # b1 = b2 x a_hat, then b2


@numba.njit(cache=True, error_model="numpy")
def _turn_3d(
    P: np.ndarray,
    i: int,
    j: int,
    x: np.ndarray,
    y: np.ndarray,
    norm: np.ndarray,
    sign: np.ndarray,
    u: int,
    v: int,
    exact_floats: bool,
) -> int:
    """Sign of det[a, V_u, V_v] for the reversed directions of points u, v about the axis P_i P_j (> 0 iff v
    comes after u in the half-turn, 0 iff both are coplanar with the axis), or :data:`UNSURE`: the frame filter
    on the projected coordinates, else det[a, D_u, D_v] (Shewchuk's filter) times the reversals."""
    cross = x[u] * y[v] - y[u] * x[v]
    bound = FRAME_RTOL * norm[u] * norm[v]
    if abs(cross) > bound and bound > FRAME_RTOL * NORM_MIN * NORM_MIN:
        return 1 if cross > 0.0 else -1
    s = orient3d_filtered(P, i, j, u, v, exact_floats)
    if s == UNSURE:
        return UNSURE
    return s * int(sign[u] * sign[v])


@numba.njit(cache=True, error_model="numpy")
def _resolve_reference_sides(
    P: np.ndarray,
    i: int,
    j: int,
    m: int,
    exact_floats: bool,
    x: np.ndarray,
    y: np.ndarray,
    norm: np.ndarray,
    sign: np.ndarray,
    key: np.ndarray,
) -> int:
    """Decide, for every point whose side of the reference plane the frame filter left open, that side exactly
    (``enumerate_3d._reference_sides``) and redo its reversal and key. Returns 1 when done, 0 when a third point
    lies on the axis, :data:`UNSURE` when a sign is unproved. ``x``, ``y`` hold the reversed coordinates (reversed
    by the float sign of y) and are corrected in place."""
    a = (P[j, 0] - P[i, 0], P[j, 1] - P[i, 1], P[j, 2] - P[i, 2])
    m1, m2 = (m + 1) % 3, (m + 2) % 3
    use_m2 = abs(a[m1]) >= abs(a[m2])
    component = m2 if use_m2 else m1
    if use_m2:
        axe_sign = -1 if a[m1] > 0.0 else (1 if a[m1] < 0.0 else 0)
    else:
        axe_sign = 1 if a[m2] > 0.0 else (-1 if a[m2] < 0.0 else 0)
    n = P.shape[0]
    for k in range(n):
        if k == i or k == j or (abs(y[k]) > FRAME_RTOL * norm[k] and norm[k] > NORM_MIN):
            continue
        sign_m = cross_component_filtered(P, i, j, k, m, exact_floats)
        if sign_m == UNSURE:
            return UNSURE
        on_reference_plane = sign_m == 0
        if on_reference_plane:
            beta = cross_component_filtered(P, i, j, k, component, exact_floats)
            if beta == UNSURE:
                return UNSURE
            beta *= axe_sign
            if beta == 0:  # a third point on the axis: the numpy sweep drops the pair too
                return 0
            flip = beta < 0
        else:
            flip = sign_m > 0  # sign_m = -sign y
        s = -1.0 if flip else 1.0
        if s != sign[k]:  # undo the float reversal, apply the exact one
            x[k] = -x[k]
            y[k] = -y[k]
            sign[k] = s
        if on_reference_plane:
            key[k] = 0.0
        else:
            ay = abs(y[k])
            ratio = ay / (abs(x[k]) + ay)
            key[k] = ratio if x[k] >= 0.0 else 2.0 - ratio
    return 1


@numba.njit(cache=True, error_model="numpy")
def _axis_value_3d(
    P: np.ndarray,
    G: np.ndarray,
    i: int,
    j: int,
    D: np.ndarray,
    norm: np.ndarray,
    exact_floats: bool,
    work: np.ndarray,
    sign: np.ndarray,
    bucket: np.ndarray,
    count: np.ndarray,
    order: np.ndarray,
    ordered: np.ndarray,
) -> tuple[float, int]:
    """(best gain over the planes through the axis P_i P_j, status): the status is :data:`EVALUATED`,
    :data:`HANDED_BACK`, :data:`ON_AXIS` or :data:`COPLANAR` (then the value is -inf). ``D`` (3, n) the differences
    P_k - P_i, ``norm`` their lengths; the other arguments are work space."""
    n = P.shape[0]
    L = n - 2
    x, y = work[1], work[2]
    m, b10, b11, b12, b20, b21, b22 = _frame_3d(D[0, j], D[1, j], D[2, j])
    open_sides = 0
    for k in range(n):  # branch-free, so that it vectorises
        xk = D[0, k] * b10 + D[1, k] * b11 + D[2, k] * b12
        yk = D[0, k] * b20 + D[1, k] * b21 + D[2, k] * b22
        open_sides += not (abs(yk) > FRAME_RTOL * norm[k] and norm[k] > NORM_MIN)
        s = 1.0 - 2.0 * (yk < 0.0)  # into the half-turn: sign_m = -sign y > 0 is reversed
        xk = xk * s
        yk = yk * s
        x[k] = xk
        y[k] = yk
        sign[k] = s
        ratio = yk / (abs(xk) + yk)
        work[0, k] = ratio if xk >= 0.0 else 2.0 - ratio
    endpoints_open = (not (abs(y[j]) > FRAME_RTOL * norm[j] and norm[j] > NORM_MIN)) + 1  # norm[i] = 0
    if open_sides > endpoints_open:
        resolved = _resolve_reference_sides(P, i, j, m, exact_floats, x, y, norm, sign, work[0])
        if resolved == UNSURE:
            return -np.inf, HANDED_BACK
        if resolved == 0:
            return -np.inf, ON_AXIS
    bucket_order(work[0], n, i, j, bucket, count, order, ordered[0])
    sx, sy, sn, sg, sh = ordered[1], ordered[2], ordered[3], ordered[4], ordered[5]
    for t in range(L):
        k = order[t]
        sx[t] = x[k]
        sy[t] = y[k]
        sn[t] = norm[k]
        sg[t] = G[k]
        sh[t] = G[k] * sign[k]
    unproved = 0
    for t in range(L - 1):  # the frame filter on every consecutive pair, branch-free
        cross = sx[t] * sy[t + 1] - sy[t] * sx[t + 1]
        bound = FRAME_RTOL * sn[t] * sn[t + 1]
        unproved += not (cross > bound and bound > FRAME_RTOL * NORM_MIN * NORM_MIN)
    if unproved:
        verified = _verify_and_repair_3d(P, i, j, x, y, norm, sign, order, L, exact_floats)
        if verified != EVALUATED:
            return -np.inf, verified
        for t in range(L):
            k = order[t]
            sg[t] = G[k]
            sh[t] = G[k] * sign[k]
    # with h = +g for unflipped and -g for flipped points, left - right = (h after t) - (h before t)
    total = 0.0
    total_h = 0.0
    for t in range(L):
        total += sg[t]
        total_h += sh[t]
    base = max(G[i], 0.0) + max(G[j], 0.0)
    best = -np.inf
    before = 0.0
    for t in range(L):
        g = sg[t]
        h = sh[t]
        diff = (total_h - before - h) - before
        value = 0.5 * ((total - g) + abs(diff)) + base + max(g, 0.0)  # {p, q, r}: every labeling is separable
        best = max(best, value)
        before += h
    return best, EVALUATED


@numba.njit(cache=True, error_model="numpy")
def _verify_and_repair_3d(
    P: np.ndarray,
    i: int,
    j: int,
    x: np.ndarray,
    y: np.ndarray,
    norm: np.ndarray,
    sign: np.ndarray,
    order: np.ndarray,
    L: int,
    exact_floats: bool,
) -> int:
    """Make ``order[:L]`` the exact angular order about the axis P_i P_j, every consecutive pair in strictly
    increasing angle: :data:`EVALUATED`. :data:`COPLANAR` when two points are proved coplanar with the axis (a
    plane with four or more points), :data:`HANDED_BACK` when a sign is unproved or the repair exceeds its budget."""
    misordered = False
    for t in range(L - 1):
        s = _turn_3d(P, i, j, x, y, norm, sign, order[t], order[t + 1], exact_floats)
        if s == UNSURE:
            return HANDED_BACK
        if s == 0:
            return COPLANAR
        misordered |= s < 0
    if not misordered:
        return EVALUATED
    budget = _REPAIR_BUDGET * L + 64
    for s_pos in range(1, L):  # insertion sort with exact comparisons: the proposal is nearly sorted
        item = order[s_pos]
        u = s_pos
        while u > 0:
            budget -= 1
            if budget < 0:
                return HANDED_BACK
            s = _turn_3d(P, i, j, x, y, norm, sign, order[u - 1], item, exact_floats)
            if s == UNSURE:
                return HANDED_BACK
            if s == 0:
                return COPLANAR
            if s >= 0:
                break
            order[u] = order[u - 1]
            u -= 1
        order[u] = item
    for t in range(L - 1):
        s = _turn_3d(P, i, j, x, y, norm, sign, order[t], order[t + 1], exact_floats)
        if s == UNSURE or s < 0:
            return HANDED_BACK
        if s == 0:
            return COPLANAR
    return EVALUATED


@numba.njit(cache=True, error_model="numpy")
def axis_values_3d(
    P: np.ndarray,
    G: np.ndarray,
    I: np.ndarray,
    J: np.ndarray,
    exact_floats: bool,
    values: np.ndarray,
    status: np.ndarray,
) -> None:
    """The 3-D axis sweep: for each pair (I[t], J[t]), sorted by I, ``status[t]`` and, when it is
    :data:`EVALUATED`, ``values[t]`` = the best gain over the planes through its axis (the row maximum of
    ``enumerate_3d._axis_block(...).value``). The other statuses: :data:`ON_AXIS` (a third point on the axis: the
    pair is not needed), :data:`COPLANAR` (a plane through the axis holds four or more points: handed back to the
    numpy sweep, which solves such planes once each), :data:`HANDED_BACK` (a sign unproved in floats).
    P (n, 3) distinct points of affine dimension 3, G (n,) their gains."""
    n = P.shape[0]
    D = np.empty((3, n))
    work = np.empty((4, n))  # per point: pseudo-angle, x, y (reversed), |D|
    norm = work[3]
    sign = np.ones(n)
    bucket = np.empty(n, dtype=np.int64)
    count = np.empty(2 * n + 1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    ordered = np.empty((6, n))  # in angular order: pseudo-angle, x, y, |D|, gain, signed gain
    pivot = -1
    for t in range(len(I)):
        i, j = I[t], J[t]
        if i != pivot:
            pivot = i
            for k in range(n):
                d0 = P[k, 0] - P[i, 0]
                d1 = P[k, 1] - P[i, 1]
                d2 = P[k, 2] - P[i, 2]
                D[0, k], D[1, k], D[2, k] = d0, d1, d2
                norm[k] = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        value, code = _axis_value_3d(P, G, i, j, D, norm, exact_floats, work, sign, bucket, count, order, ordered)
        values[t] = value
        status[t] = code
