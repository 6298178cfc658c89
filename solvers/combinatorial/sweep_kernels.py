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

Why one module: numba's on-disk cache (``cache=True``) keys each compiled function on the file defining it, so
the kernels and nothing else live here; :mod:`~oraclepriv.solvers.combinatorial.sweep_compiled` decides when they
run, and imports this module (and numba) only then.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["block_parts_one", "block_parts_pair"]


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
