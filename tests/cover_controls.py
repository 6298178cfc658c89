"""Negative-control helpers for the cover-cut drivers (``scip-bc``, ``gurobi-bc``) in tests."""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import csr_matrix

__all__ = ["break_the_rounding", "cheapest_labeling_the_cores_allow"]


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


def break_the_rounding(
    monkeypatch, bounds: Callable[[Any], tuple[np.ndarray, np.ndarray]] | None = None
) -> list[float]:
    """Break the rank rounding of a cover-cut driver (``cover_separation.rank_rounding``): its add-back
    returns :func:`cheapest_labeling_the_cores_allow` over the driver's known cores (within ``bounds(driver)``,
    e.g. a solver's global fixings) instead of a separable set. Returns the list the offered costs are
    appended to; a sound driver must refuse every such labeling that no halfspace realises."""
    from oraclepriv.solvers.mip import benders

    real_add_back = benders.add_back
    offered: list[float] = []

    def cheapest_cover_labeling(sep, keep, W, deadline=None):
        if sys._getframe(1).f_code.co_name != "rank_rounding":
            return real_add_back(sep, keep, W, deadline)
        driver = sys._getframe(2).f_locals["self"]  # the SCIP handler or the Gurobi callback
        lower, upper = bounds(driver) if bounds is not None else (None, None)
        bogus = cheapest_labeling_the_cores_allow(driver.known, W, lower, upper)
        offered.append(float(W[~bogus].sum()))
        return bogus

    monkeypatch.setattr(benders, "add_back", cheapest_cover_labeling)
    return offered
