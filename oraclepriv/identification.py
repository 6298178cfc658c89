"""Universal identification sets for thresholds and stumps on a finite grid (RSPM's input).

A set U is a universal identification set for a class F on a domain if any two functions of F that
differ somewhere on the domain differ on U (Goldman, Kearns and Schapire 1993; used by Neel, Roth
and Wu 2019 for RSPM, restated as Definition 9 and Algorithm 5 in Block, Bun, Desai, Shetty, Wu,
"Oracle-Efficient Differentially Private Learning with Public Data").

The domain here is a finite grid: the product of one sorted set of values per feature. On it the
class has finitely many distinct functions, listed once each by :func:`grid_members`:

* thresholds (one feature, values g_1 < ... < g_k): 1[x >= g_i] for every i (i = 1 is the constant
  1) and the constant 0;
* stumps: the two constants, and for every feature j with values v_1 < ... < v_k (k >= 2),
  1[x_j >= v_i] for i >= 2 and 1[x_j <= v_i] for i <= k - 1. A non-constant stump depends on its
  own feature only, so stumps on different features, or with different signs or cuts, are
  different functions on the grid.

Identification sets (:func:`identification_set`): for thresholds the grid points; for stumps a base
point b = (v_1 of every feature) plus every point that moves one coordinate of b to another grid
value, 1 + sum_j (k_j - 1) points. Why it identifies: two stumps on one feature differ at some value
of that feature, i.e. at a point of U on that feature's line through b; two stumps on features
j != j' that agree at b differ on j's line (the first changes value there, the second is constant).
:func:`check_identification_set` decides the property for any given U on a grid: every member's
labeling of U must be different.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from oraclepriv.hypotheses import Hypothesis, Stump, Threshold

__all__ = ["check_grid", "check_identification_set", "grid_members", "identification_set", "on_grid", "snap_to_grid"]

GRID_CLASSES = ("threshold", "stump")


def check_grid(grid: Sequence[Sequence[float]] | Sequence[np.ndarray], hypothesis_class: str) -> list[np.ndarray]:
    """The grid as sorted, distinct, finite value arrays (one per feature); errors name the problem."""
    if hypothesis_class not in GRID_CLASSES:
        raise ValueError(
            f"identification sets are provided for {list(GRID_CLASSES)} on a grid; got hypothesis_class={hypothesis_class!r}"
        )
    if grid is None or len(grid) == 0:
        raise ValueError("grid must list the values of every feature (one sequence per feature); got none")
    values = []
    for j, column in enumerate(grid):
        arr = np.asarray(column, dtype=np.float64).reshape(-1)
        if arr.size == 0 or not np.all(np.isfinite(arr)):
            raise ValueError(f"grid feature {j} must be a non-empty list of finite values; got {column!r}")
        values.append(np.unique(arr))
    if hypothesis_class == "threshold" and len(values) != 1:
        raise ValueError(f"thresholds live on one feature; the grid has {len(values)}")
    return values


def grid_members(grid: Sequence[np.ndarray], hypothesis_class: str) -> list[Hypothesis]:
    """Every distinct function the class realises on the grid, once each (module docstring)."""
    if hypothesis_class == "threshold":
        thresholds: list[Hypothesis] = [Threshold(float(g)) for g in grid[0]]
        return thresholds + [Threshold(math.inf)]
    members: list[Hypothesis] = [Stump(0, -math.inf, 1), Stump(0, math.inf, 1)]  # constants 1 and 0
    for j, values in enumerate(grid):
        members += [Stump(j, float(v), 1) for v in values[1:]]
        members += [Stump(j, float(v), -1) for v in values[:-1]]
    return members


def identification_set(hypothesis_class: str, grid: Sequence[Sequence[float]] | Sequence[np.ndarray]) -> np.ndarray:
    """The identification set of the module docstring, as points (rows) of the grid."""
    values = check_grid(grid, hypothesis_class)
    if hypothesis_class == "threshold":
        return values[0].reshape(-1, 1)
    base = np.array([v[0] for v in values])
    points = [base]
    for j, column in enumerate(values):
        for v in column[1:]:
            point = base.copy()
            point[j] = v
            points.append(point)
    return np.vstack(points)


def check_identification_set(
    points: np.ndarray, hypothesis_class: str, grid: Sequence[Sequence[float]] | Sequence[np.ndarray]
) -> None:
    """Raise ValueError unless ``points`` (on the grid) tell every two functions of the class apart."""
    values = check_grid(grid, hypothesis_class)
    U = np.asarray(points, dtype=np.float64)
    if U.ndim != 2 or U.shape[1] != len(values):
        raise ValueError(
            f"identification set must be an array of points with {len(values)} features; got shape {U.shape}"
        )
    on_grid(U, values, "identification set")
    seen: dict[bytes, Hypothesis] = {}
    for member in grid_members(values, hypothesis_class):
        key = member.predict(U).tobytes()
        if key in seen:
            raise ValueError(
                f"the identification set does not separate the class on the grid: {seen[key].to_dict()} and "
                f"{member.to_dict()} are different functions on the grid with the same labels on all {len(U)} points"
            )
        seen[key] = member


def on_grid(X: np.ndarray, grid: Sequence[np.ndarray], name: str) -> None:
    """Raise ValueError naming the first value of ``X`` that is not a grid value of its feature."""
    for j, values in enumerate(grid):
        bad = np.flatnonzero(~np.isin(X[:, j], values))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"{name} row {i} feature {j} is {float(X[i, j])!r}, not a grid value of that feature")


def snap_to_grid(
    hypothesis: Hypothesis, points: np.ndarray, grid: Sequence[np.ndarray], hypothesis_class: str
) -> Hypothesis:
    """The grid member with the same labels on the identification set ``points`` (so the same function on the grid)."""
    labels = np.asarray(hypothesis.predict(points), dtype=np.int8).tobytes()
    for member in grid_members(grid, hypothesis_class):
        if member.predict(points).tobytes() == labels:
            return member
    raise ValueError(f"{hypothesis.to_dict()} labels the identification set as no function of the class on the grid")
