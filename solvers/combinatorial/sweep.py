"""``sweep``: exact weighted-0-1 ERM for thresholds and decision stumps.

Exact on the reduced problem (w >= 0): every labeling a stump can produce on the training points is
"prefix or suffix of a column's sorted order, cut between distinct values" (the constants included);
the sweep evaluates all of them with prefix sums of the gains g_i = w_i (y_i = 1) or -w_i (y_i = 0),
the gain of labelling point i 1 rather than 0. It works in two phases:

* **what depends on the points alone** (:class:`SortedColumns`): each column's sorted order, its cuts
  between distinct values, and its blocks -- runs of about :data:`BLOCK` consecutive points of the
  sorted order, cut between distinct values. O(d n log n), once per point set: the backend keeps it for
  the point set it saw last (:mod:`oraclepriv.solvers.kept_points`), so a call with new weights on the
  same points does not sort again;
* **the weight pass** (:func:`column_extremes`), per column: the positive and the negative part of
  every block's gains (one ``bincount`` of the weights by block and label), the prefix sum at every block
  boundary, and, inside the few blocks whose bounds can reach the extreme, the prefix sum at every cut
  (the block's distinct-value groups summed, then added up in order). O(d n), plus the blocks looked
  into. A column of at most :data:`SCAN_MAX` points is one block, scanned whole (cheaper while it fits
  in cache). The pass reads the weights and labels as they are (:class:`Gains`): the array of gains is
  built only where it is read whole, and the sums of the gains and of the weights are the first
  column's block parts added up. Where numba's kernels are ready, the block parts of every column come
  from one compiled pass over the points and the blocks to look into from one compiled loop
  (:mod:`~oraclepriv.solvers.combinatorial.sweep_kernels`, chosen per call by
  :mod:`~oraclepriv.solvers.combinatorial.sweep_compiled`): the same float64 operations in the same
  order, so the same numbers and the same answer; ``details["sweep"]`` says which pass ran.

Every prefix sum the pass computes is a float64 sum, in some order, of the gains before its cut, so it
is within gamma_n sum_i |g_i| of the exact sum (Higham, "Accuracy and Stability of Numerical
Algorithms", eq. (4.4), which holds for any summation order; gamma_n = n u / (1 - n u), u = 2^-53).
Every prefix inside a block is at least the prefix at the block's start plus the block's negative part
(at most that plus its positive part); a block is skipped only when that bound, computed, is worse than
the best prefix found at a block boundary (plus the slack asked for) by more than twice that error. So
the pass returns the computed extreme a full scan of the same sums would find, and every cut whose
computed gain lies within the slack of it.

Tie-breaking is deterministic: among stumps of largest computed gain, the smallest feature, then sign +1
before -1, then the smallest cut position wins (the constants are listed once, as feature 0's cuts of
sign +1: all ones at cut 0, all zeros at cut n). Thresholds sit strictly between the two
distinct training values they separate (the float midpoint; if the values are adjacent floats, the
endpoint that keeps the labeling exact), or at +-inf.

The answer also says whether it is an *exact* minimiser (``details["exact_minimiser"]``). Every candidate
whose computed gain lies more than twice the error bound of :func:`gain_error_bound` below the best one's
is strictly worse, in exact arithmetic, than the best; the others (the window) are compared with the best
exactly: two labelings' gains differ by a sum over the points they label differently (for two cuts of one
column and sign, the points between the cuts), whose sign :func:`math.fsum` gives exactly (it rounds the
exact sum correctly, and a non-zero sum of float64 values never rounds to zero). The flag is True when no
window candidate is exactly better, False when one is, None when the window holds more than
:data:`WINDOW_LIMIT` candidates (undecided); ``details["strict_minimiser"]`` when the window holds the
best alone, which is then the unique exact minimiser. (:mod:`oraclepriv.exact_comparison` then needs no
pass of its own.)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem
from oraclepriv.solvers.combinatorial import sweep_compiled
from oraclepriv.solvers.kept_points import KeptPoints

from oraclepriv.hypotheses import Stump, Threshold

__all__ = [
    "BLOCK",
    "Candidate",
    "ColumnExtreme",
    "Gains",
    "SortedColumn",
    "SortedColumns",
    "SweepBackend",
    "best_stump",
    "candidate_threshold",
    "column_extremes",
    "cut_value",
    "exact_gain_order",
    "gain_error_bound",
    "gains_of",
    "is_exact_minimiser",
    "magnitude_bound",
    "ranked_candidates",
]

#: the unit roundoff of float64
UNIT_ROUNDOFF = 2.0**-53

#: points per block of a column's sorted order (a block ends at the first cut between distinct values
#: at or after each multiple of BLOCK, so it holds whole groups of equal values and at most BLOCK cuts)
BLOCK = 64

#: the most window candidates the sweep compares with its answer exactly (more: the flag stays undecided)
WINDOW_LIMIT = 16

#: columns of at most this many points are one block: the pass then scans them whole, which costs less
#: than summing blocks while the column fits in cache
SCAN_MAX = 1 << 15


def cut_value(lower: float, upper: float, sign: int) -> float:
    """A threshold separating sorted distinct values lower < upper.

    sign=+1 (h = 1 iff x >= t) needs lower < t <= upper; sign=-1 (h = 1 iff x <= t) needs
    lower <= t < upper. The midpoint is used when it lies strictly between them.
    """
    mid = lower / 2.0 + upper / 2.0
    if lower < mid < upper:
        return float(mid)
    return float(upper) if sign == 1 else float(lower)


def gains_of(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """g_i = w_i where y_i = 1, -w_i where y_i = 0 (exact: a product by +-1)."""
    return w * (2 * np.asarray(y, dtype=np.int8) - 1)


def magnitude_bound(g: np.ndarray | Gains, abs_sum: float | None = None) -> float:
    """An upper bound on sum_i |g_i|: its float64 sum (``abs_sum`` when already computed) is within gamma_n of
    it (any order), so the factor 1 + 8 n u covers it (n u <= 1/4) and the rounding of the product."""
    if isinstance(g, Gains):
        return g.magnitude_bound(abs_sum)
    if abs_sum is None:
        abs_sum = float(np.abs(g).sum())
    return abs_sum * (1.0 + 8.0 * g.shape[0] * UNIT_ROUNDOFF)


def gain_error_bound(n: int, magnitude: float) -> float:
    """Twice e = (2 gamma_n + 3u) sum |g|: every gain the sweep computes (a prefix sum, or the total minus
    one) is within e of the exact gain; doubled for the rounding of the comparisons made with it.
    ``magnitude`` is an upper bound on sum |g| (:func:`magnitude_bound`). Needs n u < 1/4."""
    gamma_n = n * UNIT_ROUNDOFF / (1.0 - n * UNIT_ROUNDOFF)
    return 2.0 * (2.0 * gamma_n + 3.0 * UNIT_ROUNDOFF) * magnitude


class Gains:
    """The gains of one call, g_i = w_i where y_i = 1 and -w_i where y_i = 0, held as the magnitudes w_i >= 0 and
    where g_i <= 0 (the labels 0): what the weight pass reads.

    Per column the pass needs each block's positive and negative part -- one ``bincount`` of the magnitudes by
    (block, label 0) -- and the gains themselves only inside the few blocks it looks into (:meth:`at`), so the
    array of all gains (:meth:`values`) is built only for a column scanned whole (at most :data:`SCAN_MAX`
    points) or an exact comparison of labelings of different columns. The sums of the gains and of their
    magnitudes come from the first column's block parts (:meth:`sums`): no pass of their own.

    Parameters
    ----------
    y : numpy.ndarray of shape (n,)
        Labels in {0, 1}.
    w : numpy.ndarray of shape (n,), float64
        The weights, all >= 0 (the reduced problem's).
    """

    def __init__(self, y: np.ndarray, w: np.ndarray, kernels: ModuleType | None = None) -> None:
        self.n = int(w.shape[0])
        self._labels = np.asarray(y, dtype=np.int8)
        #: the magnitudes |g_i| (the weights)
        self.magnitudes: np.ndarray = w
        self._non_positive: np.ndarray | None = None
        self._values: np.ndarray | None = None
        self._first_parts: tuple[SortedColumn, np.ndarray] | None = None
        self._parts: list[tuple[SortedColumn, np.ndarray]] = []  # the compiled pass's, every column at once
        self._kernels = kernels
        self._sums: tuple[float, float] | None = None
        self._bins: np.ndarray | None = None

    @property
    def non_positive(self) -> np.ndarray:
        """Where g_i <= 0 (label 0): the bincount bin of its magnitude is its block's second."""
        if self._non_positive is None:
            self._non_positive = self._labels == 0
        return self._non_positive

    @classmethod
    def of_values(cls, g: np.ndarray, kernels: ModuleType | None = None) -> Gains:
        """The gains of an array of them (of either sign)."""
        gains = cls((g >= 0).view(np.int8), np.abs(g), kernels)
        gains._values = g
        return gains

    def values(self) -> np.ndarray:
        """Every gain (built once, on first use)."""
        if self._values is None:
            self._values = gains_of(self._labels, self.magnitudes)
        return self._values

    def at(self, index: np.ndarray) -> np.ndarray:
        """The gains at ``index`` (exact: each a magnitude times +-1)."""
        if self._values is not None:
            return self._values[index]
        return gains_of(self._labels[index], self.magnitudes[index])

    def block_parts(self, column: SortedColumn) -> np.ndarray:
        """(positive part, negative part) of every block of ``column``, interleaved (shape (2 B,)): one bincount of
        the magnitudes by (block, label 0), the second of each pair negated (exact); the compiled pass's when it
        ran (:meth:`compile_block_parts`: the same numbers)."""
        for held, parts in self._parts:
            if held is column:
                return parts
        if self._first_parts is not None and self._first_parts[0] is column:
            return self._first_parts[1]
        start = time.perf_counter()
        if self._bins is None:  # one buffer for every column's bins, in bincount's own index type
            self._bins = np.empty(self.n, dtype=np.intp)
        bins = np.add(column.bins, self.non_positive, out=self._bins)
        parts = np.bincount(bins, weights=self.magnitudes, minlength=2 * column.n_blocks)
        np.negative(parts[1::2], out=parts[1::2])
        if self._first_parts is None:
            self._first_parts = (column, parts)
        sweep_compiled.record_numpy_pass(time.perf_counter() - start)
        return parts

    @property
    def kernels(self) -> ModuleType | None:
        """The compiled kernels these gains were given (:mod:`~oraclepriv.solvers.combinatorial.sweep_kernels`), or
        None: the numpy pass."""
        return self._kernels

    def compile_block_parts(self, columns: SortedColumns) -> bool:
        """Compute the block parts of every column cut into blocks in one compiled pass over the points, two
        columns at a time (:mod:`~oraclepriv.solvers.combinatorial.sweep_kernels`: the numbers
        :meth:`block_parts` would compute, bit for bit), when these gains were given the kernels and the arrays
        are of the kernels' types; False (nothing done) otherwise."""
        kernels = self._kernels
        if kernels is None:
            return False
        blocked = [c for c in columns.columns if c.n_blocks > 1 and not any(c is held for held, _ in self._parts)]
        if not blocked or not _of_type(np.int32, *(c.bins for c in blocked)):
            return False
        magnitudes = np.ascontiguousarray(self.magnitudes, dtype=np.float64)
        labels = np.ascontiguousarray(self._labels)
        parts = [np.zeros(2 * c.n_blocks) for c in blocked]
        for k in range(0, len(blocked) - 1, 2):
            a, b = blocked[k], blocked[k + 1]
            kernels.block_parts_pair(a.bins, b.bins, magnitudes, labels, parts[k], parts[k + 1])
        if len(blocked) % 2:
            kernels.block_parts_one(blocked[-1].bins, magnitudes, labels, parts[-1])
        self._parts.extend(zip(blocked, parts))
        return True

    def sums(self, columns: SortedColumns) -> tuple[float, float]:
        """(the sum of the gains, the sum of their magnitudes), each a float64 sum of its terms in some order: from
        the block parts of the first column when it has blocks (the pass computes them anyway), else summed
        directly."""
        if self._sums is None:
            self.compile_block_parts(columns)
            first = columns.columns[0] if columns.columns else None
            if first is not None and first.n_blocks > 1:
                parts = self.block_parts(first)
                positive, negative = float(parts[0::2].sum()), float(parts[1::2].sum())
                self._sums = (positive + negative, positive - negative)
            else:
                self._sums = (float(self.values().sum()), float(self.magnitudes.sum()))
        return self._sums

    def magnitude_bound(self, abs_sum: float | None = None) -> float:
        """:func:`magnitude_bound` of these gains (``abs_sum``: the sum of the magnitudes, when computed)."""
        if abs_sum is None:
            abs_sum = float(self.magnitudes.sum())
        return abs_sum * (1.0 + 8.0 * self.n * UNIT_ROUNDOFF)


def _as_gains(g: np.ndarray | Gains) -> Gains:
    return g if isinstance(g, Gains) else Gains.of_values(np.asarray(g, dtype=np.float64))


def _of_type(dtype: type, *arrays: np.ndarray) -> bool:
    """Whether every array is contiguous of ``dtype``: the one signature a kernel is compiled for (any other would
    make numba compile another in the call)."""
    return all(array.dtype == dtype and array.flags.c_contiguous for array in arrays)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of arange(s, s + l) over (starts, lengths)."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.intp)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total, dtype=np.intp)


@dataclass(frozen=True, eq=False)
class SortedColumn:
    """What the sweep needs of one column that does not depend on the weights.

    Kept for a point set's lifetime, so held small: positions are int32 (int64 beyond 2^31 points), and the
    cuts are not stored when every value is distinct (every position is then a cut). Fresh memory costs a
    page fault per page the first time it is written, which on large point sets is most of a first call.

    Attributes
    ----------
    order : numpy.ndarray of int32 (or intp), shape (n,)
        The column's argsort.
    distinct_cuts : numpy.ndarray of int32 (or intp), or None
        The cut positions k in 1 .. n-1 between distinct values (sorted value k-1 < sorted value k), increasing;
        None when every position is one (all values distinct): :meth:`cuts` gives them either way.
    starts : numpy.ndarray of intp, shape (B + 1,)
        Block b holds the sorted positions starts[b] .. starts[b + 1] - 1; starts[0] = 0, starts[B] = n,
        and every other start is a cut.
    bins : numpy.ndarray of int32 (or intp), shape (n,)
        2 * (the block of point i): the bincount bin of its gain when >= 0 (+1 when negative); empty when
        the column is one block (the pass needs no block sums then).
    inner_lo, inner_hi : numpy.ndarray of intp, shape (B,)
        cuts[inner_lo[b]:inner_hi[b]] are the cuts strictly inside block b.
    """

    order: np.ndarray
    distinct_cuts: np.ndarray | None
    starts: np.ndarray
    bins: np.ndarray
    inner_lo: np.ndarray
    inner_hi: np.ndarray

    def cuts(self, index: np.ndarray | None = None) -> np.ndarray:
        """The cuts (as intp), or the cuts at positions ``index`` of the list of cuts."""
        if self.distinct_cuts is None:
            return np.arange(1, self.order.size, dtype=np.intp) if index is None else index + 1
        cuts = self.distinct_cuts if index is None else self.distinct_cuts[index]  # index first: converts few
        return cuts.astype(np.intp, copy=False)

    @property
    def n_cuts(self) -> int:
        return self.order.size - 1 if self.distinct_cuts is None else int(self.distinct_cuts.size)

    @property
    def has_inner(self) -> np.ndarray:
        """Whether each block has a cut inside it."""
        return self.inner_hi > self.inner_lo

    @classmethod
    def of(cls, column: np.ndarray, block: int) -> SortedColumn:
        """The sorted column of ``column`` (finite float64, shape (n,)), in blocks of about ``block`` points."""
        column = np.ascontiguousarray(column)
        n = column.shape[0]
        position = np.int32 if n < 2**31 else np.intp
        order = np.argsort(column)
        xs = column[order]
        order = order.astype(position)
        step = xs[1:] > xs[:-1]
        cuts = None if step.all() else (np.flatnonzero(step) + 1).astype(position)
        n_cuts = n - 1 if cuts is None else cuts.size
        if block >= n:  # one block: the pass scans the column whole and needs no bins
            whole, inner_hi = np.array([0, n], dtype=np.intp), np.array([n_cuts], dtype=np.intp)
            return cls(order, cuts, whole, np.zeros(0, dtype=position), np.zeros(1, dtype=np.intp), inner_hi)
        if cuts is None:  # every position is a cut: blocks of exactly ``block`` points (the last one shorter)
            starts = np.append(np.arange(0, n, block, dtype=np.intp), n)
            inner_lo, inner_hi = starts[:-1], starts[1:] - 1  # cut k is the (k - 1)-th cut
        else:
            at = np.searchsorted(cuts, np.arange(block, n, block))  # the first cut at or after each multiple
            starts = np.unique(np.concatenate([[0], cuts[at[at < cuts.size]], [n]])).astype(np.intp)
            inner_lo = np.searchsorted(cuts, starts[:-1], side="right").astype(np.intp)
            inner_hi = np.searchsorted(cuts, starts[1:], side="left").astype(np.intp)
        bins = np.empty(n, dtype=position)
        bins[order] = np.repeat(np.arange(0, 2 * (starts.size - 1), 2, dtype=position), np.diff(starts))
        return cls(order, cuts, starts, bins, inner_lo, inner_hi)

    @property
    def n_blocks(self) -> int:
        return int(self.starts.size - 1)


class SortedColumns:
    """The sorted columns of one point set: what the sweep keeps between calls.

    Parameters
    ----------
    X : numpy.ndarray of shape (n, d), float64
        The points, finite.
    block : int or None, default None
        Points per block; None: :data:`BLOCK`, or the whole column when it has at most :data:`SCAN_MAX`
        points (tests use small blocks to exercise the skipping on small instances).
    """

    def __init__(self, X: np.ndarray, block: int | None = None) -> None:
        if block is None:
            block = BLOCK if X.shape[0] > SCAN_MAX else max(int(X.shape[0]), 1)
        if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
            raise ValueError(f"block must be a positive integer; got {block!r}")
        self.n, self.d = int(X.shape[0]), int(X.shape[1])
        self.block = int(block)
        self.columns = tuple(SortedColumn.of(X[:, j], block) for j in range(self.d))

    def __reduce__(self) -> Any:
        raise TypeError("SortedColumns is kept state of private points; it is never pickled or copied")


class ColumnExtreme(NamedTuple):
    """The largest computed gain of one (column, sign) over its interior cuts, and every cut near it.

    ``gain`` and ``cut`` are the best (the smallest cut among equal gains); ``near_gains`` and ``near_cuts``
    hold every interior cut whose computed gain is at least ``gain - slack``, by increasing cut."""

    gain: float
    cut: int
    near_gains: np.ndarray
    near_cuts: np.ndarray


def _inner_prefixes(
    column: SortedColumn, g: Gains, starts_prefix: np.ndarray, blocks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(prefix sums, cuts) at every cut strictly inside ``blocks`` (increasing): the prefix at the block's start
    plus the in-order sum of the block's groups of equal values before the cut (a summation in some order)."""
    if blocks.size == 0:
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.intp)
    if column.n_blocks == 1:  # the whole column, one group per cut (when the values are distinct, one per point)
        values = g.values()[column.order]
        if column.distinct_cuts is not None:
            values = np.add.reduceat(values, np.concatenate([[0], column.distinct_cuts]))
        return starts_prefix[0] + np.cumsum(values[:-1]), column.cuts()
    first = column.starts[blocks]
    lengths = column.starts[blocks + 1] - first
    if column.distinct_cuts is None and lengths.min() == lengths.max():  # every point its own group, blocks alike
        length = int(lengths[0])
        table = g.at(column.order[(first[:, None] + np.arange(length)).ravel()]).reshape(blocks.size, length)
        local = np.cumsum(table, axis=1)[:, :-1]  # in order along each block, before each cut
        cuts = (first[:, None] + np.arange(1, length)).ravel()
        return (starts_prefix[blocks][:, None] + local).ravel(), cuts
    values = g.at(column.order[_ranges(first, lengths)])
    lo = column.inner_lo[blocks]
    counts = column.inner_hi[blocks] - lo
    cut_index = _ranges(lo, counts)
    cuts = column.cuts(cut_index)
    row = np.repeat(np.arange(blocks.size, dtype=np.intp), counts)
    offsets = np.cumsum(lengths) - lengths  # where each block starts in ``values``
    new_group = np.zeros(values.size, dtype=bool)
    new_group[offsets] = True
    new_group[offsets[row] + cuts - first[row]] = True
    group_sums = np.add.reduceat(values, np.flatnonzero(new_group))  # each group summed in order
    groups = counts + 1
    if blocks.size == 1:
        local = np.cumsum(group_sums)[:-1]  # in order along the block's groups, before each cut
    else:
        table = np.zeros((blocks.size, int(groups.max())))
        table[np.repeat(np.arange(blocks.size), groups), _ranges(np.zeros_like(groups), groups)] = group_sums
        local = np.cumsum(table, axis=1)[row, cut_index - lo[row]]  # in order along each block's groups
    return starts_prefix[blocks][row] + local, cuts


def column_extremes(
    columns: SortedColumns,
    g: np.ndarray | Gains,
    signs: tuple[int, ...],
    slack: float = 0.0,
    magnitude: float | None = None,
    total: float | None = None,
) -> list[dict[int, ColumnExtreme | None]]:
    """The weight pass: for every column and sign, the largest computed gain over the interior cuts and the
    cuts within ``slack`` of it (:class:`ColumnExtreme`; None when the column has no interior cut).

    Sign +1 labels the points after the cut 1 (gain total - prefix), sign -1 those before it (gain prefix).

    Parameters
    ----------
    columns : SortedColumns
        The sorted columns of the call's points.
    g : numpy.ndarray of shape (n,) or Gains
        The gains, of either sign (:func:`gains_of`), or the call's :class:`Gains`.
    signs : tuple of int
        The signs wanted: (1,) for thresholds, (1, -1) for stumps.
    slack : float, default 0.0
        How far below the largest gain the near cuts reach (>= 0).
    magnitude : float or None
        An upper bound on sum |g| (:func:`magnitude_bound`; computed when None).
    total : float or None
        The computed sum of g, the gain of all ones (computed when None).
    """
    gains = _as_gains(g)
    gains.compile_block_parts(columns)
    n = gains.n
    if magnitude is None:
        magnitude = gains.magnitude_bound(gains.sums(columns)[1])
    if total is None:
        total = gains.sums(columns)[0]
    # computed prefixes are within gamma_n sum|g| of the exact ones, the bounds too; the rest covers roundings
    margin = (4.0 * n + 16.0) * UNIT_ROUNDOFF * magnitude + 2.0 * slack * UNIT_ROUNDOFF
    out = []
    for column in columns.columns:
        B = column.n_blocks
        starts_prefix = np.zeros(B + 1)
        has_inner = column.has_inner
        if B == 1:  # one block: every cut is looked at
            blocks = np.flatnonzero(has_inner)
        elif gains.kernels is not None and _of_type(np.intp, column.inner_lo, column.inner_hi):  # one compiled loop
            scanned = np.empty(B, dtype=np.intp)
            found = gains.kernels.blocks_to_scan(
                np.ascontiguousarray(gains.block_parts(column)),
                column.inner_lo,
                column.inner_hi,
                1 in signs,
                -1 in signs,
                float(slack),
                float(margin),
                starts_prefix,
                scanned,
            )
            blocks = scanned[:found]
        else:
            parts = gains.block_parts(column)
            positive_part, negative_part = parts[0::2], parts[1::2]
            np.cumsum(positive_part + negative_part, out=starts_prefix[1:])
            boundary = starts_prefix[1:B]
            wanted = np.zeros(B, dtype=bool)
            if 1 in signs:  # the smallest prefix; a block's prefixes are >= its start's plus its negative part
                wanted |= starts_prefix[:B] + negative_part <= float(boundary.min()) + slack + margin
            if -1 in signs:  # the largest prefix; a block's prefixes are <= its start's plus its positive part
                wanted |= starts_prefix[:B] + positive_part >= float(boundary.max()) - slack - margin
            blocks = np.flatnonzero(has_inner & wanted)
        inner, inner_cuts = _inner_prefixes(column, gains, starts_prefix, blocks)
        prefixes = np.concatenate([starts_prefix[1:B], inner])
        cuts = np.concatenate([column.starts[1:B], inner_cuts])
        extremes: dict[int, ColumnExtreme | None] = {}
        for sign in signs:
            if cuts.size == 0:
                extremes[sign] = None
                continue
            cut_gains = total - prefixes if sign == 1 else prefixes
            best = float(cut_gains.max())
            near = np.flatnonzero(cut_gains >= best - slack)
            near = near[np.argsort(cuts[near], kind="stable")]
            near_gains, near_cuts = cut_gains[near], cuts[near]
            at_best = near_cuts[near_gains == best]
            extremes[sign] = ColumnExtreme(best, int(at_best.min()), near_gains, near_cuts)
        out.append(extremes)
    return out


class Candidate(NamedTuple):
    """One labeling the class induces: positives after cut ``cut`` of ``feature``'s sorted order (sign +1) or
    before it (sign -1); cut 0 and n are the constants."""

    gain: float
    feature: int
    sign: int
    cut: int


def ranked_candidates(
    columns: SortedColumns,
    g: np.ndarray | Gains,
    signs: tuple[int, ...],
    slack: float,
    magnitude: float | None = None,
    total: float | None = None,
) -> tuple[Candidate, list[Candidate]]:
    """(the best candidate in the tie-break order, every other candidate whose computed gain is at least the
    best's minus ``slack``). The constants are listed once each: all ones (gain: the computed total) as cut 0
    of feature 0, sign +1; all zeros (gain 0, exact) as cut n of feature 0, sign +1."""
    gains = _as_gains(g)
    n = gains.n
    total = gains.sums(columns)[0] if total is None else total
    extremes = column_extremes(columns, gains, signs, slack, magnitude, total)
    all_ones, all_zeros = Candidate(total, 0, 1, 0), Candidate(0.0, 0, 1, n)
    ordered = [all_ones]  # the tie-break order: feature, sign +1 before -1, smallest cut
    near: list[Candidate] = [all_ones, all_zeros]
    for feature, by_sign in enumerate(extremes):
        for sign in signs:
            extreme = by_sign[sign]
            if extreme is not None:
                ordered.append(Candidate(extreme.gain, feature, sign, extreme.cut))
                pairs = zip(extreme.near_gains.tolist(), extreme.near_cuts.tolist())
                near.extend(Candidate(v, feature, sign, k) for v, k in pairs)
            if feature == 0 and sign == 1:
                ordered.append(all_zeros)  # cut n of feature 0, sign +1
    best = ordered[0]
    for candidate in ordered[1:]:
        if candidate.gain > best.gain:
            best = candidate
    others = [c for c in near if c.gain >= best.gain - slack and c != best]
    return best, others


def candidate_threshold(X: np.ndarray, columns: SortedColumns, candidate: Candidate) -> float:
    """The sweep's threshold for ``candidate``: -inf before every point, +inf after every point, else strictly
    between the two distinct values its cut separates."""
    k, n = candidate.cut, X.shape[0]
    if k == 0:
        return -math.inf
    if k == n:
        return math.inf
    order = columns.columns[candidate.feature].order
    column = X[:, candidate.feature]
    return cut_value(float(column[order[k - 1]]), float(column[order[k]]), candidate.sign)


def best_stump(
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    signs: tuple[int, ...] = (1, -1),
    columns: SortedColumns | None = None,
) -> tuple[int, int, float, float]:
    """Exact minimiser of sum_i w_i 1[stump(x_i) != y_i] (w >= 0) over all features and ``signs``.

    Returns (feature, sign, threshold, loss) with loss computed from the sums (the protocol layer re-scores
    the hypothesis independently). ``columns``: the sorted columns of X when already known (else sorted here).
    """
    columns = columns if columns is not None else SortedColumns(X)
    gains = Gains(y, np.asarray(w, dtype=np.float64))
    total, weight_sum = gains.sums(columns)
    best, _ = ranked_candidates(columns, gains, signs, 0.0, total=total)
    loss_all_zero = 0.5 * (weight_sum + total)  # the sum of w over y = 1
    return best.feature, best.sign, candidate_threshold(X, columns, best), loss_all_zero - best.gain


def _positives(columns: SortedColumns, candidate: Candidate) -> np.ndarray:
    """The points ``candidate`` labels 1, as a mask."""
    order = columns.columns[candidate.feature].order
    mask = np.zeros(order.size, dtype=bool)
    mask[order[candidate.cut :] if candidate.sign == 1 else order[: candidate.cut]] = True
    return mask


def exact_gain_order(columns: SortedColumns, g: np.ndarray | Gains, a: Candidate, b: Candidate) -> int:
    """The sign of gain(a) - gain(b) in exact arithmetic: +1, 0 or -1 (module docstring)."""
    gains = _as_gains(g)
    if a.feature == b.feature and a.sign == b.sign:  # they differ on the points between the two cuts
        lo, hi = sorted((a.cut, b.cut))
        between = gains.at(columns.columns[a.feature].order[lo:hi])
        # sign +1: the smaller cut labels them 1 too; sign -1: the larger cut does
        difference = between if (a.cut == lo) == (a.sign == 1) else -between
    else:
        in_a, in_b = _positives(columns, a), _positives(columns, b)
        values = gains.values()
        difference = np.concatenate([values[in_a & ~in_b], -values[in_b & ~in_a]])
    total = math.fsum(difference.tolist())
    return (total > 0) - (total < 0)


def is_exact_minimiser(
    columns: SortedColumns, g: np.ndarray | Gains, best: Candidate, window: list[Candidate]
) -> bool | None:
    """Whether ``best`` (the largest computed gain) has an exact gain at least every ``window`` candidate's (then it
    is an exact minimiser: the candidates outside the window are strictly worse than it); None when the window
    holds :data:`WINDOW_LIMIT` candidates or more."""
    if len(window) >= WINDOW_LIMIT:
        return None
    gains = _as_gains(g)
    return all(exact_gain_order(columns, gains, best, other) >= 0 for other in window)


class SweepBackend(Backend):
    """Exact sort-and-sweep oracle for thresholds and stumps.

    Evaluates every labeling the class induces on the training points with prefix sums (module
    docstring), so the bound is the optimum itself. It keeps the sorted columns of the point set it
    solved last (:class:`SortedColumns`, keyed on the points by :class:`~oraclepriv.solvers.kept_points.KeptPoints`),
    so a call with new weights on the same points does not sort; the kept state is dropped when the
    backend is pickled or copied, and :meth:`fresh` starts without it.

    Parameters
    ----------
    time_limit : float or None, default None
        The sweep takes O(d n log n) time and is never stopped; a call with a limit never compiles the compiled
        weight pass (:mod:`~oraclepriv.solvers.combinatorial.sweep_compiled`), which ``details["sweep"]`` names.
    **options
        None: the backend takes no options, and refuses any keyword by name.

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).

    Examples
    --------
    >>> from oraclepriv import make_oracle
    >>> X = [[0.0, 5.0], [1.0, 3.0], [2.0, 1.0], [3.0, 0.0]]
    >>> res = make_oracle("stump", backend="sweep").solve(X, [0, 0, 1, 1])
    >>> res.hypothesis, res.objective, res.certified
    (Stump(feature=0, threshold=1.5, sign=1), 0.0, True)
    """

    name = "sweep"
    classes = frozenset({"threshold", "stump"})
    certificate = (
        "exact: every labeling the class induces on the training points is evaluated by prefix sums, "
        "so the bound is the optimum (up to float64 summation error, covered by the tolerance)"
    )

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self._kept: tuple[KeptPoints, SortedColumns] | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_kept"] = None  # the kept points are private data: never pickled or copied
        return state

    def forget(self) -> None:
        """Drop the kept sorted columns (the next call sorts)."""
        self._kept = None

    def sorted_columns(self, X: np.ndarray) -> tuple[SortedColumns, bool]:
        """(the sorted columns of X, whether they were kept from an earlier call); kept for the next call."""
        if self._kept is not None and self._kept[0].matches(X):
            return self._kept[1], True
        self._kept = None  # free the old point set before sorting the new one
        points = KeptPoints.of(X)
        columns = SortedColumns(points.columns)  # column-major: each column sorted where it lies
        self._kept = (points, columns)
        return columns, False

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        signs = (1,) if problem.hypothesis_class == "threshold" else (1, -1)
        columns, kept = self.sorted_columns(problem.X)
        blocked = sum(problem.n for column in columns.columns if column.n_blocks > 1)
        choice = sweep_compiled.choose(blocked, self.deadline(problem))  # the weight pass: compiled or numpy
        gains = Gains(problem.y, problem.w, choice.kernels)  # |g_i| = w_i: the weights are >= 0
        total, weight_sum = gains.sums(columns)
        magnitude = gains.magnitude_bound(weight_sum)
        # the window of the exact comparison (oraclepriv.exact_comparison): twice the error bound
        bounded = problem.n * UNIT_ROUNDOFF < 0.25  # gain_error_bound needs n u < 1/4
        slack = 2.0 * gain_error_bound(problem.n, magnitude) if bounded else 0.0
        best, others = ranked_candidates(columns, gains, signs, slack, magnitude, total)
        loss_all_zero = 0.5 * (weight_sum + total)  # the sum of w over y = 1
        threshold = candidate_threshold(problem.X, columns, best)
        hypothesis: Threshold | Stump = (
            Threshold(threshold)
            if problem.hypothesis_class == "threshold"
            else Stump(best.feature, threshold, best.sign)
        )
        details = {
            "method": "sort+prefix-sum",
            "sorted_columns": "kept" if kept else "sorted",
            "sweep": choice.reason,
            "strict_minimiser": bool(bounded and not others),
            "exact_minimiser": is_exact_minimiser(columns, gains, best, others) if bounded else None,
        }
        return BackendAnswer(hypothesis, bound=loss_all_zero - best.gain, status="optimal", nodes=0, details=details)
