"""Negative-control helpers for the cover-cut drivers (``scip-bc``, ``gurobi-bc``) in tests."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import csr_matrix

__all__ = ["cheapest_labeling_the_cores_allow"]


def cheapest_labeling_the_cores_allow(
    cores: Collection[tuple[int, ...]], W: np.ndarray, lower: np.ndarray | None = None, upper: np.ndarray | None = None
) -> np.ndarray:
    """The correct-group mask of a minimum-weight hitting set of ``cores`` (scipy's MILP): the cheapest
    labeling that every cover row sum_{g in C} z_g >= 1 over these cores allows, within the bounds
    ``lower`` <= z <= ``upper`` (a solver's global fixings). When its cost is below the optimum, no
    halfspace realises it, and only a driver's separability check can refuse it."""
    rows = [g for core in cores for g in core]
    ptr = np.cumsum([0] + [len(core) for core in cores])
    A = csr_matrix((np.ones(len(rows)), rows, ptr), shape=(len(cores), W.size))
    res = milp(
        c=np.asarray(W, dtype=float),
        constraints=[LinearConstraint(A, lb=1.0)] if len(cores) else [],
        integrality=np.ones(W.size),
        bounds=Bounds(0.0 if lower is None else lower, 1.0 if upper is None else upper),
    )
    assert res.success, res.message
    return res.x < 0.5
