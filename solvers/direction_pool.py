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
from oraclepriv.solvers.direction_bounds import Window

__all__ = ["OpenBoxes"]

#: smallest capacity of the slot arrays
MIN_CAPACITY = 4096


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
        """The number of open boxes."""
        return int(np.count_nonzero(self.bounds[: self.size] < cutoff))

    def open_bounds(self, cutoff: float) -> np.ndarray:
        """The bounds of the open boxes."""
        bounds = self.bounds[: self.size]
        return bounds[bounds < cutoff]

    def select(self, k: int, cutoff: float, highest: bool = False) -> np.ndarray:
        """Slots of up to k open boxes: those with the lowest bounds, or with the highest below the
        cutoff (``highest``: the boxes closest to being dropped, so that memory stays bounded)."""
        bounds = self.bounds[: self.size]
        if self.count(cutoff) <= k:
            return np.flatnonzero(bounds < cutoff)
        key = np.where(bounds < cutoff, -bounds, np.inf) if highest else bounds
        return np.argpartition(key, k)[:k]

    def take(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, Window]:
        """Copies of the boxes in ``slots``: lower, upper, bounds and windows."""
        window = Window(self.win_lo[slots], self.win_hi[slots], self.win_floor[slots])
        return self.lower[slots], self.upper[slots], self.bounds[slots], window

    def remove(self, slots: np.ndarray) -> None:
        self.bounds[slots] = np.inf

    def push(self, lower: np.ndarray, upper: np.ndarray, bounds: np.ndarray, window: Window, cutoff: float) -> None:
        """Add boxes (those with bounds at or above ``cutoff`` are not stored)."""
        keep = bounds < cutoff
        m = int(np.count_nonzero(keep))
        if self.size + m > len(self.bounds):
            self._compact(cutoff)
            if self.size + m > len(self.bounds) // 2:
                self._allocate(max(2 * len(self.bounds), 2 * (self.size + m)))
        end = self.size + m
        self.lower[self.size : end] = lower[keep]
        self.upper[self.size : end] = upper[keep]
        self.bounds[self.size : end] = bounds[keep]
        self.win_lo[self.size : end] = window.lo[keep]
        self.win_hi[self.size : end] = window.hi[keep]
        self.win_floor[self.size : end] = window.floor[keep]
        self.size = end
