"""The compiled (numba) weight pass of the ``sweep`` stump oracle: every column's block parts in one pass over the
points (:func:`block_parts_pair`, :func:`block_parts_one`).

What it computes. For a column cut into blocks of its sorted order (:class:`~oraclepriv.solvers.combinatorial.sweep.
SortedColumn`: ``bins[i]`` is twice the block of point i), the weight pass needs each block's positive and negative
part: the sum of the magnitudes w_i of its points labelled 1, and minus the sum of those labelled 0
(:meth:`~oraclepriv.solvers.combinatorial.sweep.Gains.block_parts`). numpy computes them per column with a
``bincount`` of the magnitudes by ``bins + (label 0)``, which reads the weights and labels, writes an index array
and reads it again, once per column. Here one loop over the points reads each point's weight and label once and
adds the magnitude into the part of its block in two columns at a time (two accumulations in flight overlap their
memory latency; more at once measured slower), then negates the negative parts.

Identical results, not merely close ones: ``bincount`` with weights adds ``weights[i]`` into its bin for i = 0, 1,
..., n - 1 in float64, starting from 0.0, and so does this loop, bin by bin in the same order; the negation is
exact. Every sum the sweep builds on the parts (the prefix sums at block boundaries, the sums of the gains, the
bounds that decide which blocks it looks into) is therefore the same float64 number on either path, and so is its
answer: the numpy pass stays the reference and the fallback.

The protocol's pass over a call's labels and weights (:func:`signed_reduction`), which every call makes before
any backend runs, is here too, as the stump oracle's repeat calls spend most of their time in such passes: one loop
checks the labels, casts them to int8, takes the magnitudes |w_i| and flips the label where w_i < 0 (the exact sign
reduction of :func:`oraclepriv.oracle.reduce_signed_weights`), where numpy makes a pass per step. Each output is an
exact function of its point (a comparison, a cast, a sign bit), so it is numpy's bit for bit; the sums stay numpy's
(their order of summation is numpy's own). The same loop finds the largest magnitude, which the exact power-of-two
scaling of the weights needs (:meth:`~oraclepriv.solvers.exponents.PowerOfTwoScaling.fit`; a maximum is exact in
any order), so that no pass of its own reads the magnitudes again.

The blocks the pass looks into (:func:`blocks_to_scan`) are chosen in one loop over the blocks too: the prefix sums
at the block boundaries (numpy's ``cumsum``, an in-order sum), their extremes, and each block's bound against them,
the comparisons of :func:`~oraclepriv.solvers.combinatorial.sweep.column_extremes` in its order of operations.

The protocol's re-scoring of a stump or threshold answer (:func:`mistaken_weights`) is fused the same way: one loop
decides each point's prediction (the hypothesis's own comparison, ``x >= t`` or ``x <= t``, exact), compares it
with the label and keeps the weight where they differ, in order: the array ``numpy.compress`` makes of
:func:`~oraclepriv.hypotheses.weighted_zero_one_loss`'s mask, which numpy then sums as it sums that one.

Why one module: numba's on-disk cache (``cache=True``) keys each compiled function on the file defining it, so
the kernels and nothing else live here; :mod:`~oraclepriv.solvers.combinatorial.sweep_compiled` decides when they
run, and imports this module (and numba) only then.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["block_parts_one", "block_parts_pair", "blocks_to_scan", "mistaken_weights", "signed_reduction"]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def block_parts_pair(
    bins_a: np.ndarray,
    bins_b: np.ndarray,
    magnitudes: np.ndarray,
    labels: np.ndarray,
    parts_a: np.ndarray,
    parts_b: np.ndarray,
) -> None:
    """Add every point's magnitude into its block's part in two columns (``parts_a``, ``parts_b``, zeros on entry,
    of length twice the number of blocks): the positive part (even entry) for label 1, the negative part (odd
    entry, negated at the end) for label 0. ``bins_a``, ``bins_b``: twice each point's block in each column."""
    for i in range(magnitudes.shape[0]):
        magnitude = magnitudes[i]
        negative = np.intp(labels[i] == 0)
        parts_a[bins_a[i] + negative] += magnitude
        parts_b[bins_b[i] + negative] += magnitude
    for k in range(1, parts_a.shape[0], 2):
        parts_a[k] = -parts_a[k]
    for k in range(1, parts_b.shape[0], 2):
        parts_b[k] = -parts_b[k]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def block_parts_one(bins: np.ndarray, magnitudes: np.ndarray, labels: np.ndarray, parts: np.ndarray) -> None:
    """:func:`block_parts_pair` for one column."""
    for i in range(magnitudes.shape[0]):
        parts[bins[i] + np.intp(labels[i] == 0)] += magnitudes[i]
    for k in range(1, parts.shape[0], 2):
        parts[k] = -parts[k]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def blocks_to_scan(
    parts: np.ndarray,
    inner_lo: np.ndarray,
    inner_hi: np.ndarray,
    smallest: bool,
    largest: bool,
    slack: float,
    margin: float,
    starts_prefix: np.ndarray,
    blocks: np.ndarray,
) -> int:
    """The weight pass's choice of blocks, for one column of B >= 2 blocks: ``starts_prefix`` (length B + 1, zero on
    entry) gets the prefix sum at every block start (the in-order cumulative sum of each block's positive plus
    negative part, as ``numpy.cumsum``), ``blocks`` the blocks with a cut inside them whose bound reaches the
    smallest boundary prefix plus ``slack`` plus ``margin`` (``smallest``: a block's prefixes are at least its
    start's plus its negative part) or the largest minus them (``largest``: at most its start's plus its positive
    part), increasing; returns how many. Every number is computed as
    :func:`~oraclepriv.solvers.combinatorial.sweep.column_extremes`'s numpy pass computes it, additions in the same
    order."""
    count = parts.shape[0] // 2
    total = 0.0
    for b in range(count):
        step = parts[2 * b] + parts[2 * b + 1]
        total = step if b == 0 else total + step
        starts_prefix[b + 1] = total
    low, high = starts_prefix[1], starts_prefix[1]
    for b in range(2, count):
        low = min(low, starts_prefix[b])
        high = max(high, starts_prefix[b])
    found = 0
    for b in range(count):
        if inner_hi[b] > inner_lo[b] and (
            (smallest and starts_prefix[b] + parts[2 * b + 1] <= low + slack + margin)
            or (largest and starts_prefix[b] + parts[2 * b] >= high - slack - margin)
        ):
            blocks[found] = b
            found += 1
    return found


@numba.njit(cache=True, nogil=True, boundscheck=False)
def signed_reduction(
    labels: np.ndarray,
    weights: np.ndarray,
    valid_labels: np.ndarray,
    reduced_labels: np.ndarray,
    magnitudes: np.ndarray,
) -> tuple[bool, bool, float]:
    """One pass over a call's labels (an integer type) and float64 weights: ``valid_labels`` the labels as int8,
    ``reduced_labels`` those flipped where the weight is negative, ``magnitudes`` the weights' absolute values.

    Returns (whether every label is 0 or 1, whether a weight is negative, the largest magnitude); when a label is
    neither, the outputs mean nothing and the caller refuses the labels. A NaN weight compares as not negative, as
    in numpy, and has magnitude NaN (and then so has the largest). Branch-free (the label check is a bitwise or of
    ``label & ~1``, zero for 0 and 1 only), so the compiler vectorises it; the largest magnitude is taken on the
    bits of |w| as unsigned integers (their order is the order of the non-negative floats, +0.0 the least), since
    a floating-point maximum would keep the loop from being vectorised: exact, as any maximum is."""
    outside = 0
    any_negative = np.int8(0)
    weight_bits = weights.view(np.uint64)
    sign_off = np.uint64(0x7FFFFFFFFFFFFFFF)
    peak_bits = np.uint64(0)
    for i in range(weights.shape[0]):
        label = labels[i]
        outside |= label & ~1
        weight = weights[i]
        negative = np.int8(weight < 0.0)
        valid_labels[i] = np.int8(label)
        reduced_labels[i] = np.int8(label) ^ negative
        magnitudes[i] = abs(weight)
        peak_bits = max(peak_bits, weight_bits[i] & sign_off)
        any_negative |= negative
    peak = np.empty(1, dtype=np.uint64)
    peak[0] = peak_bits
    return outside == 0, any_negative != 0, peak.view(np.float64)[0]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def mistaken_weights(
    column: np.ndarray, threshold: float, sign: int, labels: np.ndarray, weights: np.ndarray, out: np.ndarray
) -> int:
    """Write to ``out`` the weights of the points a stump mislabels, in their order, and return how many: the stump
    predicts 1 where ``column >= threshold`` (``sign`` 1) or ``column <= threshold`` (otherwise), and mislabels a
    point whose label (int8, 0 or 1) differs. Branch-free: every weight is written, and the write position moves on
    past the mislabelled ones only."""
    count = 0
    if sign == 1:
        for i in range(column.shape[0]):
            out[count] = weights[i]
            count += np.int8(column[i] >= threshold) != labels[i]
    else:
        for i in range(column.shape[0]):
            out[count] = weights[i]
            count += np.int8(column[i] <= threshold) != labels[i]
    return count
