"""The compiled kernel of ``direction-bb``'s crossing pairs: each box's greedy matching of crossing pairs.

:func:`match_crossing_pairs` goes through the candidate pairs in their fixed order (the order they are stored in) (larger weight first, then nearer
points) and, per box, takes a pair when neither of its groups is in a pair taken already, the sweep leaves both
groups' excess uncounted somewhere (lo_j < hi_i, on the sweep's own interval ends) and the pair crosses on the
whole box: max over the box of v . (u_i - u_j), one (2d)-term product of the box's centre and radius with
(delta, |delta|), plus the pair's proved rounding bound, is at most 0
(:mod:`~oraclepriv.solvers.combinatorial.direction_bounds`, "Crossing pairs", gives the proof and the bound, which
covers a product summed in any order). The greedy matching is maximal, so it lifts a box's bound at least as much
as any matching it contains; the numpy code has no per-box loop that would be fast enough, so without this kernel
the search runs without the pairs (:mod:`~oraclepriv.solvers.combinatorial.direction_compiled`).

Compiled once per installation into numba's on-disk cache (``oraclepriv warm``), with one explicit signature.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["match_crossing_pairs"]


@njit(cache=True, nogil=True)
def match_crossing_pairs(centre_radius, stacked, tol, ev_i, ev_j, weight, ends, n_events, most):  # pragma: no cover
    """Per box (rows of ``centre_radius``, (B, 2d)), the greedy matching of crossing pairs (module docstring), as
    the sweep's extra events: (B, most) arrays of the matched pairs' lo_j, their hi_i (both +inf past the last
    pair) and their weights p (0 past the last pair). ``stacked`` (2d, P): the pairs' (delta, |delta|) as columns;
    ``tol`` (P,) their rounding bounds; ``ev_i``, ``ev_j`` (P,) their two groups' event columns in ``ends``
    (B, E), the pairs in the matching's fixed order; ``most`` at least the largest matching (the smaller side's
    group count). Each box's crossing values are computed first for all pairs (a loop over the pairs for each
    of the 2d coordinates, which the compiler vectorises), then the greedy pass reads them."""
    B = centre_radius.shape[0]
    width = centre_radius.shape[1]
    P = tol.size
    low = np.full((B, most), np.inf)
    high = np.full((B, most), np.inf)
    gain = np.zeros((B, most))
    taken = np.zeros(n_events, dtype=np.int64)  # the box (plus 1) that took the event's group last
    crossing = np.empty(P)
    for b in range(B):
        crossing[:] = tol
        for q in range(width):
            c = centre_radius[b, q]
            row = stacked[q]
            for k in range(P):
                crossing[k] += c * row[k]
        stamp = b + 1
        count = 0
        for k in range(P):
            if crossing[k] > 0.0:
                continue
            i = ev_i[k]
            j = ev_j[k]
            if taken[i] == stamp or taken[j] == stamp:
                continue
            if not ends[b, j] < ends[b, i]:
                continue
            low[b, count] = ends[b, j]
            high[b, count] = ends[b, i]
            gain[b, count] = weight[k]
            count += 1
            taken[i] = stamp
            taken[j] = stamp
            if count == most:
                break
    return low, high, gain
