"""The hypotheses a MIP search starts from and keeps: cheap candidate halfspaces for warm starts (the two
constants, the best stump, the weighted least-squares direction with its exact best offset), every candidate
scored by its own weighted 0-1 loss on the reduced problem (:class:`Candidates`, the best is answered), and
the share of a call's time the start heuristics may use (:data:`HEURISTIC_SHARE`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from oraclepriv.solvers.combinatorial.sweep import best_stump
from oraclepriv.solvers.mip.points import AffineScaling
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace

from oraclepriv.hypotheses import Halfspace, Hypothesis

__all__ = ["HEURISTIC_SHARE", "Candidates", "reduced_loss", "constant_costs", "heuristic_halfspaces"]

#: with a time limit, the start heuristics (repairing the all-points set, extending the warm starts)
#: may use at most this share of the time left, so that the search that proves bounds gets the rest
HEURISTIC_SHARE = 0.5


def reduced_loss(h: Hypothesis, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    """The hypothesis's own weighted 0-1 loss on the reduced problem."""
    return h.loss(X, y, w)


def constant_costs(y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """(cost of predicting 1 everywhere, cost of predicting 0 everywhere)."""
    return float(w[y == 0].sum()), float(w[y == 1].sum())


def _constant_halfspace(d: int, label: int) -> Halfspace:
    return Halfspace(tuple([0.0] * d), 1.0 if label == 1 else -1.0)


def heuristic_halfspaces(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> list[Halfspace]:
    """Cheap candidate halfspaces for warm starts: the two constants, the best stump, and the
    weighted least-squares direction with its exact best offset (a 1-D sweep on the projection)."""
    n, d = X.shape
    cands = [_constant_halfspace(d, 1), _constant_halfspace(d, 0)]
    feature, sign, theta, _ = best_stump(X, y, w)
    if math.isfinite(theta):
        wv = np.zeros(d)
        wv[feature] = sign
        cands.append(Halfspace(tuple(wv), -sign * theta))
    scaling = AffineScaling.fit(X)
    Xs = scaling.transform(X)
    sw = np.sqrt(w)
    design = np.column_stack([Xs, np.ones(n)]) * sw[:, None]
    target = (2.0 * y - 1.0) * sw
    if np.any(sw > 0):
        coef, *_ = np.linalg.lstsq(design, target, rcond=None)
        direction = np.where(scaling.constant, 0.0, coef[:d])
        if np.any(direction != 0) and np.all(np.isfinite(direction)):
            u = (Xs @ direction)[:, None]
            _, s, t, _ = best_stump(u, y, w)
            if math.isfinite(t):
                wo, bo = scaling.to_original(s * direction, -s * t)
                if np.all(np.isfinite(wo)) and math.isfinite(bo):
                    cands.append(Halfspace(tuple(wo), bo))
    return cands


@dataclass
class Candidates:
    """Hypotheses found so far, scored on the reduced problem; the best is returned (and, with a
    ``trace``, noted there with its time)."""

    X: np.ndarray
    y: np.ndarray
    w: np.ndarray
    items: list[tuple[float, str, Hypothesis]] = field(default_factory=list)
    trace: IncumbentTrace | None = None

    def add(self, source: str, h: Hypothesis | None) -> None:
        if h is not None:
            self.items.append((reduced_loss(h, self.X, self.y, self.w), source, h))
            if self.trace is not None:
                self.trace.note(self.items[-1][0])

    def best(self) -> tuple[float, str, Hypothesis]:
        return min(self.items, key=lambda item: item[0])
