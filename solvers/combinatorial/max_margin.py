"""Float max-margin halfspaces for a separable labeling: the candidates the ``enumerate`` oracle hands to
:func:`~oraclepriv.solvers.combinatorial.exact_halfspace.realize_labeling`, which keeps the first one that
realises the labeling exactly and otherwise solves the same LP in rational arithmetic.

The LP (maximise the margin t at ||w||_inf <= 1, t <= 1, b free) is the one the MIP backends solve over the
groups a MIP solution keeps (:func:`oraclepriv.solvers.mip.milp.margin_lp`, a model for a backend's solver
adapter on [-1, 1]-scaled data with a bounded offset). Here it runs on scipy's HiGHS under three scalings in
turn (module of :func:`max_margin_halfspace`), so that data whose columns differ by many orders of magnitude
still give a float candidate.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linprog

from oraclepriv.hypotheses import Halfspace

__all__ = ["max_margin_halfspace"]


def max_margin_halfspace(X: np.ndarray, positive: np.ndarray) -> list[tuple[Halfspace, float]]:
    """Max-margin halfspace(s) for a separable labeling (LP on centred, scaled data).

    Maximises t subject to w.x + b >= t on positives, <= -t on negatives, ||w||_inf <= 1, t <= 1.
    Returns candidate (halfspace in original coordinates, margin t on the scaled data) pairs:
    the default-tolerance LP answer and, unless it already realises the labeling (exact predictions),
    a tight-tolerance re-solve, then the LP on data scaled column by column (columns whose spreads
    differ by many orders of magnitude, e.g. 2^-128 beside 1, look constant to the LP under one
    common scale). A labeling whose margin is below float64 resolution (points collinear in decimal
    but not in binary) may have no float64 candidate that realises it: the caller hands these
    candidates to :func:`~oraclepriv.solvers.combinatorial.exact_halfspace.realize_labeling`, which then solves the
    LP in rational arithmetic.
    """
    n, d = X.shape
    if positive.all() or not positive.any():
        return [(Halfspace((0.0,) * d, 1.0 if positive.all() else -1.0), 1.0)]
    center = (X.max(axis=0) + X.min(axis=0)) / 2.0
    spread = np.max(np.abs(X - center), axis=0)
    common = np.full(d, float(spread.max()) or 1.0)
    per_column = np.where(spread > 0, spread, 1.0)
    tight = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    candidates = []
    for scale, options in ((common, {}), (common, tight), (per_column, {})):
        found = _margin_lp(X, positive, center, scale, options)
        if found is None:
            continue
        candidates.append(found)
        if np.array_equal(found[0].predict(X) == 1, positive):
            break
    return candidates


def _margin_lp(
    X: np.ndarray, positive: np.ndarray, center: np.ndarray, scale: np.ndarray, options: dict[str, Any]
) -> tuple[Halfspace, float] | None:
    """The max-margin LP of :func:`max_margin_halfspace` on (X - center) / scale (column-wise)."""
    n, d = X.shape
    Z = (X - center) / scale
    s = np.where(positive, -1.0, 1.0)  # every row reads  s_i (w.z_i + b) + t <= 0
    A = np.hstack((s[:, None] * Z, s[:, None], np.ones((n, 1))))
    c = np.zeros(d + 2)
    c[-1] = -1.0
    bounds = [(-1.0, 1.0)] * d + [(None, None), (None, 1.0)]
    res = linprog(c, A_ub=A, b_ub=np.zeros(n), bounds=bounds, method="highs", options=options)
    if res.status != 0:
        return None
    w_scaled, b_scaled, margin = res.x[:d], res.x[d], res.x[-1]
    w = w_scaled / scale
    if not (np.all(np.isfinite(w)) and np.isfinite(b_scaled - float(w @ center))):
        return None
    return Halfspace(tuple(w), b_scaled - float(w @ center)), float(margin)
