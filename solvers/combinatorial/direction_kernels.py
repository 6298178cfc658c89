"""The compiled kernel of ``direction-bb``'s crossing pairs: each box's greedy matching of crossing pairs.

Only groups whose interval [lo_g, hi_g] meets the box's window (the offsets the sweep still has to look at) can be
in a useful pair: a label-1 group surely predicted 1 above the window can only cross with a label-0 group that is
surely wrong across the window, and symmetrically (:mod:`~oraclepriv.solvers.combinatorial.direction_bounds`,
"Crossing pairs"). Deep in the search a window holds a few dozen groups, so :func:`match_crossing_pairs` looks, per
box, at the pairs among those only: the label-1 groups in a fixed order (larger excess first), each taking the open
label-0 group with the larger excess (then the nearer point) that crosses it on the whole box and whose extra cost
can count somewhere (lo_j < hi_i). The crossing test is max over the box of v . (u_i - u_j) (its centre and radius
against delta and |delta|) plus the pair's proved rounding bound, at most 0; the bound is computed here as in
:class:`~oraclepriv.solvers.combinatorial.direction_bounds.WhitenedGroups` (the two groups' tolerances, the rounding
of delta and of a (2d + 1)-term sum in any order, with the safety factor).

Compiled once per installation into numba's on-disk cache (``oraclepriv warm``), with one explicit signature.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["match_crossing_pairs"]


@njit(cache=True, nogil=True)
def match_crossing_pairs(
    centre_radius, points, tolerance, excess, plus, minus, ends, others, window_lo, window_hi, pair_error, most
):  # pragma: no cover - compiled
    """Per box (rows of ``centre_radius``, (B, 2d)), the greedy matching of crossing pairs (module docstring) as
    the sweep's extra events: (B, most) arrays of the matched pairs' lo_j, their hi_i (both +inf past the last
    pair) and their weights p = min(excess_i, excess_j) (0 past the last pair).

    ``points`` (E, d): the event groups' whitened points; ``tolerance``, ``excess`` (E,); ``plus`` the label-1
    event groups and ``minus`` the label-0 ones, each in the fixed order (larger excess first; int64); ``ends``
    (B, E) each group's event end (hi for label-1, lo for label-0), ``others`` (B, E) its other end; ``window_lo``,
    ``window_hi`` (B,); ``pair_error`` the factor of sum |delta| in a pair's rounding bound; ``most`` at least the
    largest matching. A label-1 group takes the first open label-0 group, in their order, that crosses it: the
    first with the largest excess. Pairs whose centres are in the wrong order are passed over without the test (a
    crossing pair has v . u_i <= v . u_j at the box's centre too); that choice only skips pairs, the test alone
    accepts them."""
    B = centre_radius.shape[0]
    d = points.shape[1]
    low = np.full((B, most), np.inf)
    high = np.full((B, most), np.inf)
    gain = np.zeros((B, most))
    open_minus = np.empty(minus.size, dtype=np.int64)
    for b in range(B):
        lo_w = window_lo[b]
        hi_w = window_hi[b]
        active = 0
        for position in range(minus.size):  # label-0 groups whose interval [lo, hi] = [ends, others] meets it
            j = minus[position]
            if ends[b, j] < hi_w and others[b, j] > lo_w:
                open_minus[active] = j
                active += 1
        count = 0
        for position in range(plus.size):
            if count == most or active == 0:
                break
            i = plus[position]
            hi_i = ends[b, i]
            lo_i = others[b, i]
            if not (lo_i < hi_w and hi_i > lo_w):
                continue
            centre_i = lo_i + hi_i
            for slot in range(active):
                j = open_minus[slot]
                if j < 0 or not ends[b, j] < hi_i or centre_i > ends[b, j] + others[b, j]:
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
                    low[b, count] = ends[b, j]
                    high[b, count] = hi_i
                    gain[b, count] = min(excess[i], excess[j])
                    count += 1
                    open_minus[slot] = -1
                    break
    return low, high, gain
