"""The 1-D and 2-D kernels of the ``enumerate`` halfspace oracle (:mod:`oraclepriv.solvers.combinatorial.enumerate`,
whose docstring proves why the hyperplanes through data points suffice).

* 1-D (points in order along a line): the best prefix or suffix, constants included, by prefix sums,
  O(n log n).
* 2-D (the pivot sweep): for every pivot point p, the other points sorted by angle around p (directions
  taken modulo pi), exactly collinear ones grouped, and every line through p evaluated with prefix sums;
  the points on a line through p are solved by the 1-D kernel. O(n^2 log n) time, O(n) memory.

Float angles only propose the angular order; it is verified pair by pair with the exact predicate
:func:`~oraclepriv.solvers.combinatorial.geometry.orient2d` and re-sorted exactly when floats got it wrong.
Ties resolve to the first pivot in the points' order. Given the compiled kernels (the caller's choice,
:func:`~oraclepriv.solvers.combinatorial.enumerate_compiled.choose`), the pivots are swept by the compiled kernel
(:func:`~oraclepriv.solvers.combinatorial.enumerate_kernels.pivot_values_2d`) and only the pivots it hands back (a
sign its float filter cannot prove) and the winning pivot are swept here. A deadline stops the pivot loop; the
answer is then the best set seen so far, marked incomplete.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import NamedTuple

import numpy as np
from oraclepriv.solvers.combinatorial.geometry import orient2d
from oraclepriv.solvers.runtime.deadline import Deadline

__all__ = ["Best", "best_on_line", "best_2d"]


class Best(NamedTuple):
    gain: float
    mask: np.ndarray  # positive set over the unique points
    complete: bool = True  # False: a deadline stopped the enumeration (gain is only achieved, not optimal)
    sweep: str = "numpy"  # the sweep that ran and why (enumerate_compiled.Choice.reason)


def best_on_line(order_key: np.ndarray, gains: np.ndarray) -> Best:
    """Best prefix or suffix (constants included) of points sorted by ``order_key`` (distinct)."""
    order = np.argsort(order_key, kind="stable")
    prefix = np.concatenate(([0.0], np.cumsum(gains[order])))
    total = prefix[-1]
    k_max = int(np.argmax(prefix))  # positives = first k_max points
    k_min = int(np.argmin(prefix))  # positives = points after the first k_min
    mask = np.zeros(len(gains), dtype=bool)
    if prefix[k_max] >= total - prefix[k_min]:
        mask[order[:k_max]] = True
        return Best(float(prefix[k_max]), mask)
    mask[order[k_min:]] = True
    return Best(float(total - prefix[k_min]), mask)


def _line_value(sorted_gains_by_segment: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Vectorised ``best_on_line`` value for consecutive segments of an already ordered array."""
    cs = np.cumsum(sorted_gains_by_segment)
    seg = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(cs))))
    base = (cs - sorted_gains_by_segment)[starts]
    prefix = cs - base[seg]
    max_p = np.maximum.reduceat(prefix, starts)
    min_p = np.minimum.reduceat(prefix, starts)
    total = np.add.reduceat(sorted_gains_by_segment, starts)
    return np.maximum(np.maximum(max_p, 0.0), total - np.minimum(min_p, 0.0))


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


def _pivot_sweep_2d(P: np.ndarray, G: np.ndarray, i: int, exact: bool) -> _PivotSweep:
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


#: pivots x points per call of the compiled kernel (the deadline is checked between calls)
_KERNEL_CHUNK_ENTRIES = 1 << 20


def _pivot_values_compiled(
    P: np.ndarray, G: np.ndarray, exact: bool, deadline: Deadline | None, kernel: ModuleType
) -> tuple[np.ndarray, bool]:
    """The best gain over the lines through every pivot (-inf for pivots a deadline left out) and whether all
    were evaluated: the compiled kernel, and the numpy sweep for the pivots it hands back (a sign it could not
    prove in floats)."""
    n = len(P)
    P = np.ascontiguousarray(P, dtype=np.float64)
    G = np.ascontiguousarray(G, dtype=np.float64)
    values = np.full(n, -np.inf)
    chunk = max(1, _KERNEL_CHUNK_ENTRIES // n)
    for lo in range(0, n, chunk):
        if deadline is not None and deadline.expired():
            deadline.note("enumeration (2-D pivots)")
            return values, False
        pivots = np.arange(lo, min(n, lo + chunk), dtype=np.int64)
        unsure = np.zeros(len(pivots), dtype=np.bool_)
        chunk_values = np.full(len(pivots), -np.inf)
        kernel.pivot_values_2d(P, G, pivots, bool(exact), chunk_values, unsure)
        for t in np.flatnonzero(unsure):
            if deadline is not None and deadline.expired():  # the pivots handed back so far are in chunk_values
                deadline.note("enumeration (2-D pivots)")
                values[pivots] = chunk_values
                return values, False
            chunk_values[t] = float(np.max(_pivot_sweep_2d(P, G, int(pivots[t]), exact).value))
        values[pivots] = chunk_values
    return values, True


def best_2d(
    P: np.ndarray,
    G: np.ndarray,
    exact: bool,
    deadline: Deadline | None = None,
    kernels: ModuleType | None = None,
) -> Best:
    """Best separable positive set of distinct 2-D points (affine dimension 2); the pivots are swept by the
    compiled kernel of ``kernels`` (:mod:`~oraclepriv.solvers.combinatorial.enumerate_kernels`, ready to run) when
    given, else by the numpy sweep."""
    n = len(P)
    total = float(G.sum())
    best_gain = total if total > 0 else 0.0  # the constants: every point positive, or none
    best_line: tuple[int, int] | None = None  # (pivot, line through it) of the best set once it beats them
    complete = True
    if kernels is not None:
        values, complete = _pivot_values_compiled(P, G, exact, deadline, kernels)
        i = int(np.argmax(values))  # the first pivot of the best value, as the loop below finds it
        if values[i] > best_gain:
            sweep = _pivot_sweep_2d(P, G, i, exact)
            k = int(np.argmax(sweep.value))
            if sweep.value[k] > best_gain:  # the numpy sweep's own value (the kernel's may differ in rounding)
                best_gain, best_line = float(sweep.value[k]), (i, k)
    for i in range(n if kernels is None else 0):
        if deadline is not None and deadline.expired():
            deadline.note("enumeration (2-D pivots)")
            complete = False
            break
        sweep = _pivot_sweep_2d(P, G, i, exact)
        k = int(np.argmax(sweep.value))
        if sweep.value[k] > best_gain:
            best_gain, best_line = float(sweep.value[k]), (i, k)
    mask = np.zeros(n, dtype=bool)
    if best_line is None:
        mask[:] = total > 0
    else:
        i, k = best_line
        sweep = _pivot_sweep_2d(P, G, i, exact)
        grp, order = sweep.group, sweep.order
        mask[order[_side_mask(grp, sweep.flipped, k, sweep.left_better[k])]] = True
        on_line = np.concatenate(([i], order[grp == k]))
        key = np.lexsort((P[on_line, 1], P[on_line, 0]))
        rank = np.empty(len(on_line))
        rank[key] = np.arange(len(on_line))
        sub = best_on_line(rank, G[on_line])
        mask[on_line[sub.mask]] = True
    return Best(best_gain, mask, complete, "numpy" if kernels is None else "compiled")
