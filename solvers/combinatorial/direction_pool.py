"""The open boxes of ``direction-bb``'s search, kept in slots of preallocated arrays.

A step of the search takes a batch of open boxes (the lowest bounds, or the highest when crowded)
and adds their children. Keeping the open boxes in plain arrays that are filtered and concatenated
every step copies every open box several times per step, which cost more than the bounds themselves
once hundreds of thousands of boxes were open (``docs/solvers/direction-bb.md``, section 5). Here a
taken box only has its slot's bound set to +inf, children go to the end, and the arrays are
compacted (boxes whose bound reached the cutoff dropped) only when they are full.
"""

from __future__ import annotations

import numpy as np
from oraclepriv.solvers.combinatorial.direction_bounds import Window

__all__ = ["OpenBoxes"]

#: smallest capacity of the slot arrays
MIN_CAPACITY = 4096
#: select's candidate set holds the best boxes for about this many steps, and at least
#: MIN_CANDIDATES boxes (each re-ranking reads every open box)
CANDIDATE_STEPS = 8
MIN_CANDIDATES = 8192


class OpenBoxes:
    """Boxes of normals [lower, upper] with their lower bounds and offset windows.

    A box is open while its bound is below the search's cutoff (the incumbent's loss minus the
    allowed gap); the cutoff only decreases, so a box that reached it never reopens. Slots past
    ``size`` are unused; a taken box's slot holds bound +inf until the next compaction.
    """

    lower: np.ndarray
    upper: np.ndarray
    bounds: np.ndarray
    win_lo: np.ndarray
    win_hi: np.ndarray
    win_floor: np.ndarray

    def __init__(self, lower: np.ndarray, upper: np.ndarray, bounds: np.ndarray, window: Window) -> None:
        self.d = int(lower.shape[1])
        self.size = 0
        self._open = 0  # open boxes below the cutoff _counted_at
        self._counted_at = np.inf
        self._candidates: np.ndarray | None = None  # select's candidate set (slots), None: rank again
        self._worst = np.inf  # the worst key in the candidate set when it was formed
        self._highest = False
        self._allocate(max(MIN_CAPACITY, 2 * len(bounds)))
        self.push(lower, upper, bounds, window, cutoff=np.inf)

    def _allocate(self, capacity: int) -> None:
        size = self.size
        lower, upper = np.empty((capacity, self.d)), np.empty((capacity, self.d))
        bounds = np.full(capacity, np.inf)
        lo, hi, floor = np.empty(capacity), np.empty(capacity), np.empty(capacity)
        if size:
            lower[:size], upper[:size], bounds[:size] = self.lower[:size], self.upper[:size], self.bounds[:size]
            lo[:size], hi[:size], floor[:size] = self.win_lo[:size], self.win_hi[:size], self.win_floor[:size]
        self.lower, self.upper, self.bounds = lower, upper, bounds
        self.win_lo, self.win_hi, self.win_floor = lo, hi, floor

    def _compact(self, cutoff: float) -> None:
        keep = np.flatnonzero(self.bounds[: self.size] < cutoff)
        k = keep.size
        for name in ("lower", "upper", "bounds", "win_lo", "win_hi", "win_floor"):
            array = getattr(self, name)
            array[:k] = array[keep]
        self.bounds[k : self.size] = np.inf
        self.size = k

    def count(self, cutoff: float) -> int:
        """The number of open boxes (counted again only when the cutoff has dropped)."""
        if cutoff < self._counted_at:
            self._open = int(np.count_nonzero(self.bounds[: self.size] < cutoff))
            self._counted_at = cutoff
        return self._open

    def open_bounds(self, cutoff: float) -> np.ndarray:
        """The bounds of the open boxes."""
        bounds = self.bounds[: self.size]
        return bounds[bounds < cutoff]

    def _key(self, slots: np.ndarray | slice, cutoff: float) -> np.ndarray:
        bounds = self.bounds[slots]
        return np.where(bounds < cutoff, -bounds, np.inf) if self._highest else bounds

    def select(self, k: int, cutoff: float, highest: bool = False) -> np.ndarray:
        """Slots of up to k open boxes: those with the lowest bounds, or with the highest below the
        cutoff (``highest``: the boxes closest to being dropped, so that memory stays bounded).

        The ranking of all open boxes is not redone every step: a candidate set holds the
        ``max(CANDIDATE_STEPS * k, MIN_CANDIDATES)`` best boxes of the last full ranking, every box outside it ranks
        after its worst (children that rank before it join it), so the k best candidates are the k
        best boxes as long as at least k candidates are still open."""
        if self.count(cutoff) <= k:
            return np.flatnonzero(self.bounds[: self.size] < cutoff)
        if highest != self._highest or self._candidates is None:
            self._highest = highest
            self._candidates = None
        else:
            self._candidates = self._candidates[self.bounds[self._candidates] < cutoff]
            if self._candidates.size < k:
                self._candidates = None
        if self._candidates is None:
            key = self._key(slice(0, self.size), cutoff)
            m = min(max(CANDIDATE_STEPS * k, MIN_CANDIDATES), self.count(cutoff))
            self._candidates = np.argpartition(key, m - 1)[:m] if m < self.size else np.arange(self.size)
            self._candidates = self._candidates[self.bounds[self._candidates] < cutoff]
            self._worst = float(key[self._candidates].max())
        key = self._key(self._candidates, cutoff)
        if self._candidates.size <= k:
            chosen, self._candidates = self._candidates, self._candidates[:0]
            return chosen
        part = np.argpartition(key, k)
        chosen = self._candidates[part[:k]]
        self._candidates = self._candidates[part[k:]]
        return chosen

    def take(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, Window]:
        """Copies of the boxes in ``slots``: lower, upper, bounds and windows."""
        window = Window(self.win_lo[slots], self.win_hi[slots], self.win_floor[slots])
        return self.lower[slots], self.upper[slots], self.bounds[slots], window

    def remove(self, slots: np.ndarray) -> None:
        """Take the (open) boxes in ``slots`` out."""
        self.bounds[slots] = np.inf
        self._open -= len(slots)

    def push(self, lower: np.ndarray, upper: np.ndarray, bounds: np.ndarray, window: Window, cutoff: float) -> None:
        """Add boxes (those with bounds at or above ``cutoff`` are not stored)."""
        keep = bounds < cutoff
        m = int(np.count_nonzero(keep))
        if self.size + m > len(self.bounds):
            self._compact(cutoff)
            self._candidates = None  # slots moved
            if self.size + m > len(self.bounds) // 2:
                self._allocate(max(2 * len(self.bounds), 2 * (self.size + m)))
        end = self.size + m
        self.lower[self.size : end] = lower[keep]
        self.upper[self.size : end] = upper[keep]
        self.bounds[self.size : end] = bounds[keep]
        self.win_lo[self.size : end] = window.lo[keep]
        self.win_hi[self.size : end] = window.hi[keep]
        self.win_floor[self.size : end] = window.floor[keep]
        if self._candidates is not None:  # new boxes that rank before the candidates' worst join them
            new = np.arange(self.size, end)
            self._candidates = np.concatenate([self._candidates, new[self._key(new, cutoff) < self._worst]])
        self.size = end
        if cutoff < self._counted_at:
            self.count(cutoff)
        else:
            self._open += m
