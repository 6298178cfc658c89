"""The points a MIP model of :mod:`oraclepriv.solvers.mip.milp` is built from: exact duplicates merged
(identical (x, y) points become one group with summed weight; identical x with opposite labels are paired,
and every hypothesis pays the lighter of the two), and the affine map of each column onto [-1, 1] (halfspaces
are affine-invariant, so a (w, b) found on the scaled data maps back exactly up to float64 rounding)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PointGroups", "AffineScaling"]


@dataclass
class PointGroups:
    """Identical (x, y) points merged into groups; identical x with opposite labels paired."""

    group_of: np.ndarray  # (n,) group index of every original point
    X: np.ndarray  # (G, d) one row per group
    y: np.ndarray  # (G,) int8 label of the group
    conflicts: np.ndarray  # (K, 2) group pairs with the same x and opposite labels

    @classmethod
    def from_points(cls, X: np.ndarray, y: np.ndarray) -> PointGroups:
        keyed = np.column_stack([X, y.astype(np.float64)])
        rows, first, group_of = np.unique(keyed, axis=0, return_index=True, return_inverse=True)
        group_of = np.asarray(group_of).reshape(-1)
        Xg = np.ascontiguousarray(rows[:, :-1])
        yg = rows[:, -1].astype(np.int8)
        # groups sharing the same x: np.unique sorts lexicographically, so a conflicting pair is
        # two consecutive rows with equal x (label 0 first, then label 1).
        same_x = np.all(Xg[1:] == Xg[:-1], axis=1) if len(Xg) > 1 else np.zeros(0, dtype=bool)
        idx = np.flatnonzero(same_x)
        conflicts = np.column_stack([idx, idx + 1]).astype(np.int64) if idx.size else np.zeros((0, 2), np.int64)
        return cls(group_of=group_of, X=Xg, y=yg, conflicts=conflicts)

    @property
    def size(self) -> int:
        return int(self.X.shape[0])

    def group_weights(self, w: np.ndarray) -> np.ndarray:
        return np.bincount(self.group_of, weights=w, minlength=self.size).astype(np.float64)

    def conflict_bound(self, w: np.ndarray) -> float:
        """sum over same-x opposite-label pairs of min(W_0, W_1): every hypothesis pays it."""
        if not len(self.conflicts):
            return 0.0
        W = self.group_weights(w)
        return float(np.minimum(W[self.conflicts[:, 0]], W[self.conflicts[:, 1]]).sum())


@dataclass
class AffineScaling:
    """x' = (x - center) / scale per column, mapping each non-constant column onto [-1, 1].

    Constant columns map to 0 (their weight is irrelevant on the data and is returned as 0).
    A halfspace (w', b') on x' is the halfspace w_j = w'_j / scale_j, b = b' - sum_j w_j center_j
    on x: the same predictions up to float64 rounding of the two affine maps.
    """

    center: np.ndarray
    scale: np.ndarray
    constant: np.ndarray

    @classmethod
    def fit(cls, X: np.ndarray) -> AffineScaling:
        lo = X.min(axis=0)
        hi = X.max(axis=0)
        constant = hi == lo
        center = np.where(constant, lo, lo / 2.0 + hi / 2.0)
        scale = np.where(constant, 1.0, hi / 2.0 - lo / 2.0)
        return cls(center=center, scale=scale, constant=constant)

    def transform(self, X: np.ndarray) -> np.ndarray:
        Xs = (X - self.center) / self.scale
        Xs[:, self.constant] = 0.0
        return np.clip(Xs, -1.0, 1.0)  # clip only removes float rounding beyond +-1

    def to_original(self, w_scaled: np.ndarray, b_scaled: float) -> tuple[np.ndarray, float]:
        w_scaled = np.where(self.constant, 0.0, w_scaled)
        w = w_scaled / self.scale
        return w, float(b_scaled - np.dot(w, self.center))

    def to_scaled(self, w: np.ndarray, b: float) -> tuple[np.ndarray, float]:
        w = np.where(self.constant, 0.0, np.asarray(w, dtype=np.float64))
        return w * self.scale, float(b + np.dot(w, self.center))

    def to_dict(self) -> dict[str, Any]:
        return {
            "center": self.center.tolist(),
            "scale": self.scale.tolist(),
            "constant_columns": np.flatnonzero(self.constant).tolist(),
        }
