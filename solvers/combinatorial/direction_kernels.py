"""The compiled kernel of ``direction-bb``'s crossing pairs: each box's interval ends, its greedy matching of
crossing pairs and the sweep of its lower bound, in one pass per box.

The bound is that of :func:`~oraclepriv.solvers.combinatorial.direction_bounds.region_lower_bounds` with the pairs'
events added (:mod:`~oraclepriv.solvers.combinatorial.direction_bounds`, "Crossing pairs"); the numpy version of that
function computes the same bound without pairs. Per box:

1. **Interval ends.** Each event group's event end and its other end, c . u +- r . |u| plus the group's tolerance,
   a 2d-term sum and one addition, the same proved rounding bound as the numpy matrix product (any summation order).
2. **The matching.** Only groups whose interval [lo_g, hi_g] meets the box's window (the offsets the sweep still has
   to look at) can be in a useful pair. The label-1 groups, in a fixed order (larger excess first), each take the open
   label-0 group with the larger excess (then the earlier in the order) that crosses it on the whole box and whose
   extra cost can count somewhere (lo_j < hi_i). The crossing test is max over the box of v . (u_i - u_j) (the centre
   and radius against delta and |delta|) plus the pair's proved rounding bound, at most 0 (the bound is computed as
   in :class:`~oraclepriv.solvers.combinatorial.direction_bounds.WhitenedGroups`: the two groups' tolerances, the
   rounding of delta and of a (2d + 1)-term sum in any order, with the safety factor). Two necessary conditions pass
   over pairs without the test: the centres' order (a crossing pair has v . u_i <= v . u_j at the box's centre too)
   and the radii (r . |u_i - u_j| >= |r . |u_i| - r . |u_j||, read off the interval widths); they only skip pairs, the
   test alone accepts them. The open label-0 groups with a centre at or above a label-1 group's are found by a bit
   set per rank of their centres, so a label-1 group visits only those.
3. **The sweep.** The events inside the window (the groups' and the matched pairs': +p at lo_j, -p at hi_i) are
   sorted and summed from the cost just above the window's lower end; the cost is read after the last of equal ends.
   The box's bound and its new window (from the first to past the last event where the cost is below the threshold)
   follow the numpy sweep's rules exactly.

Compiled once per installation into numba's on-disk cache (``oraclepriv warm``), with one explicit signature.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["paired_bounds"]

# the index of the lowest set bit of a 64-bit word: de Bruijn multiplication (no intrinsics needed)
_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_LOWEST_BIT = np.zeros(64, dtype=np.int64)
for _bit in range(64):
    _LOWEST_BIT[((1 << _bit) * 0x03F79D71B4CB0A89 % (1 << 64)) >> 58] = _bit
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_TOP_SIX = np.uint64(58)


#: up to this many values :func:`_argsort_small` sorts by insertion (no allocation), above it numpy's argsort
_INSERTION_MAX = 64


@njit(cache=True, nogil=True)
def _argsort_small(values, count, buffer):  # pragma: no cover - compiled
    """The order of ``values[:count]`` (ascending): by insertion into ``buffer`` for a few values (deep in the search
    a box has a few dozen), else numpy's argsort."""
    if count > _INSERTION_MAX:
        return np.argsort(values[:count])
    for i in range(count):
        item = values[i]
        k = i - 1
        while k >= 0 and values[buffer[k]] > item:
            buffer[k + 1] = buffer[k]
            k -= 1
        buffer[k + 1] = i
    return buffer[:count]


@njit(cache=True, nogil=True)
def paired_bounds(
    centre_radius,
    stacked,
    offset,
    step,
    base,
    other_stacked,
    other_offset,
    points,
    tolerance,
    excess,
    plus,
    minus,
    pair_error,
    most,
    window_lo,
    window_hi,
    window_floor,
    threshold,
):  # pragma: no cover - compiled
    """Per box (rows of ``centre_radius``, (B, 2d): centre, then radius), its lower bound with crossing pairs and its
    new window (module docstring): arrays (bounds, new window lo, new window hi), each (B,), raw (the caller
    subtracts the summation slack and takes the new floor).

    The events: ``stacked`` (2d, E) and ``offset`` (E,) give each event group's event end (hi for label-1, lo for
    label-0), ``step`` (E,) the change of the cost there, ``base`` the cost below every interval. The pairs:
    ``other_stacked``, ``other_offset`` give each group's other end; ``points`` (E, d), ``tolerance`` and ``excess``
    (E,) the event groups' whitened points, tolerances and |W+ - W-|; ``plus`` and ``minus`` the label-1 and label-0
    event groups in the fixed order (larger excess first; int64); ``pair_error`` the factor of sum |delta| in a
    pair's rounding bound; ``most`` at least the largest matching. The window: ``window_lo``, ``window_hi``,
    ``window_floor`` (B,); ``threshold`` the raw level below which offsets stay in the window."""
    B = centre_radius.shape[0]
    d = centre_radius.shape[1] // 2
    E = step.size
    M = minus.size
    bounds = np.empty(B)
    new_lo = np.empty(B)
    new_hi = np.empty(B)
    ends = np.empty(E)
    others = np.empty(E)
    # the open label-0 groups of a box, in their order (slot = bit): index, lo, lo + hi (twice the centre's
    # projection) and half the width less the tolerance (the radius against |u|)
    open_group = np.empty(M, dtype=np.int64)
    open_lo = np.empty(M)
    open_centre = np.empty(M)
    open_width = np.empty(M)
    words = max((M + 63) // 64, 1)
    free = np.zeros(words, dtype=np.uint64)
    at_or_above = np.zeros((M + 1, words), dtype=np.uint64)  # row k: the slots of centre rank >= k
    sorted_centre = np.empty(M)
    key = np.empty(E + 2 * most)
    change = np.empty(E + 2 * most)
    by_centre_buffer = np.empty(M, dtype=np.int64)
    order_buffer = np.empty(E + 2 * most, dtype=np.int64)
    for b in range(B):
        lo_w = window_lo[b]
        hi_w = window_hi[b]
        # 1. the interval ends
        for e in range(E):
            ends[e] = 0.0
            others[e] = 0.0
        for q in range(2 * d):
            c = centre_radius[b, q]
            for e in range(E):
                ends[e] += c * stacked[q, e]
                others[e] += c * other_stacked[q, e]
        start = base  # the cost just above the window's lower end
        K = 0
        for e in range(E):
            ends[e] += offset[e]
            others[e] += other_offset[e]
            if ends[e] <= lo_w:
                start += step[e]
            elif ends[e] < hi_w:
                key[K] = ends[e]
                change[K] = step[e]
                K += 1
        # 2. the greedy matching among the groups meeting the window
        active = 0
        for position in range(M):
            j = minus[position]
            if ends[j] < hi_w and others[j] > lo_w:
                open_group[active] = j
                open_lo[active] = ends[j]
                open_centre[active] = ends[j] + others[j]
                open_width[active] = (others[j] - ends[j]) / 2 - tolerance[j]
                active += 1
        used = (active + 63) // 64
        if active > 0:
            for word in range(used):
                free[word] = _ZERO
                at_or_above[active, word] = _ZERO
            for slot in range(active):
                free[slot >> 6] |= _ONE << np.uint64(slot & 63)
            by_centre = _argsort_small(open_centre, active, by_centre_buffer)
            for rank in range(active - 1, -1, -1):
                slot = by_centre[rank]
                sorted_centre[rank] = open_centre[slot]
                for word in range(used):
                    at_or_above[rank, word] = at_or_above[rank + 1, word]
                at_or_above[rank, slot >> 6] |= _ONE << np.uint64(slot & 63)
        count = 0
        left = active
        for position in range(plus.size):
            if count == most or left == 0:
                break
            i = plus[position]
            hi_i = ends[i]
            lo_i = others[i]
            if not (lo_i < hi_w and hi_i > lo_w):
                continue
            centre_i = lo_i + hi_i
            width_i = (hi_i - lo_i) / 2 - tolerance[i]
            rank = np.searchsorted(sorted_centre[:active], centre_i)  # the slots with centre >= centre_i
            found = -1
            for word in range(used):
                bits = at_or_above[rank, word] & free[word]
                while bits != _ZERO:
                    lowest = bits & (~bits + _ONE)
                    bits ^= lowest
                    slot = word * 64 + _LOWEST_BIT[(lowest * _DE_BRUIJN) >> _TOP_SIX]
                    if not open_lo[slot] < hi_i:
                        continue
                    j = open_group[slot]
                    if (centre_i - open_centre[slot]) / 2 + abs(width_i - open_width[slot]) + tolerance[i] + tolerance[
                        j
                    ] > 0.0:
                        continue
                    size = 0.0
                    s = 0.0
                    for q in range(d):
                        delta = points[i, q] - points[j, q]
                        magnitude = abs(delta)
                        size += magnitude
                        s += centre_radius[b, q] * delta + centre_radius[b, d + q] * magnitude
                    s += tolerance[i] + tolerance[j] + pair_error * size
                    if s <= 0.0:
                        found = slot
                        break
                if found >= 0:
                    break
            if found < 0:
                continue
            free[found >> 6] ^= _ONE << np.uint64(found & 63)
            left -= 1
            count += 1
            p = min(excess[i], excess[open_group[found]])
            lo_j = open_lo[found]
            if lo_j <= lo_w:
                start += p
            elif lo_j < hi_w:
                key[K] = lo_j
                change[K] = p
                K += 1
            if hi_i <= lo_w:
                start -= p
            elif hi_i < hi_w:
                key[K] = hi_i
                change[K] = -p
                K += 1
        # 3. the sweep over the events inside the window
        bound = min(start, window_floor[b])
        kept = start < threshold
        lo_new = lo_w if kept else np.inf
        hi_new = hi_w if kept else -np.inf
        if K > 0:
            order = _argsort_small(key, K, order_buffer)
            value = start
            first_low = np.inf
            past_low = np.inf
            any_low = False
            after_low = False
            for k in range(K):
                t = key[order[k]]
                if after_low:  # the first event past a low one
                    past_low = t
                    after_low = False
                value += change[order[k]]
                if k + 1 < K and key[order[k + 1]] == t:
                    continue
                bound = min(bound, value)
                if value < threshold:
                    if not any_low:
                        first_low = t
                        any_low = True
                    after_low = True
                    past_low = np.inf
            if any_low:
                lo_new = min(lo_new, first_low)
                hi_new = past_low if past_low < np.inf else hi_w
            elif kept:
                hi_new = key[order[0]]
        bounds[b] = bound
        new_lo[b] = lo_new
        new_hi[b] = hi_new
    return bounds, new_lo, new_hi
