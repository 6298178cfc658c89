"""c_D(L): the fewest private mistakes of a hypothesis that labels the noisy points as L.

For RRSPM and RSPM (Block, Bun, Desai, Shetty, Wu, Algorithms 4 and 5), with the private data D
fixed, labeling L of the points costs c_D(L) + (noise terms), so the law of the release is
determined by the finitely many c_D(L) (:mod:`oraclepriv.noisy_argmin.laws`). They are computed here with
the project's own exact oracles, so the verifier exercises the paths the learners use:

* the realisable labelings of the points: one ERM on the points alone per labeling (realisable iff
  the certified optimum is 0);
* c_D(L): one ERM on D plus the points labelled L with weight n + 1 each (a hypothesis that
  disagrees with L on a point costs more than any that agrees, and one that agrees exists), so the
  certified optimum is c_D(L). Every answer must be certified over the whole class, else
  :class:`VerificationError`.

:func:`brute_force_costs` computes the same numbers independently, from a complete cover of the
union of the private records and the points (:func:`oraclepriv.cover.public_cover`), for the
cross-check the verifier runs where it is cheap.
"""

from __future__ import annotations

import numpy as np

from oraclepriv.cover import public_cover
from oraclepriv.oracle import Oracle

__all__ = ["VerificationError", "brute_force_costs", "labeling_costs", "realisable_labelings"]


class VerificationError(RuntimeError):
    """The verifier could not establish an exact quantity it needs (an uncertified oracle answer)."""


def _all_labelings(m: int) -> np.ndarray:
    return np.array([[(k >> j) & 1 for j in range(m)] for k in range(2**m)], dtype=np.int8)


def realisable_labelings(points: np.ndarray, oracle: Oracle) -> np.ndarray:
    """The labelings (rows, in {0,1}) of ``points`` that some hypothesis of the oracle's class realises."""
    keep = []
    for labels in _all_labelings(points.shape[0]):
        result = oracle.solve(points, labels, np.ones(points.shape[0]), caller="verify", step="realisable")
        if not result.certified:
            raise VerificationError(
                f"backend {result.backend!r} did not certify the labeling {labels.tolist()} "
                "of the points (realisable or not); the verifier needs exact answers"
            )
        if result.objective <= result.tolerance:
            keep.append(labels)
    return np.array(keep, dtype=np.int8)


def labeling_costs(
    X: np.ndarray, y: np.ndarray, points: np.ndarray, labelings: np.ndarray, oracle: Oracle
) -> np.ndarray:
    """c_D(L) for every row L of ``labelings`` (each realisable on ``points``), by the oracle."""
    n, m = X.shape[0], points.shape[0]
    rows = np.vstack([X, points])
    weights = np.r_[np.ones(n), np.full(m, float(n + 1))]
    costs = np.empty(len(labelings))
    for k, labels in enumerate(labelings):
        result = oracle.solve(rows, np.r_[y, labels], weights, caller="verify", step="labeling-cost")
        if not result.certified:
            raise VerificationError(
                f"backend {result.backend!r} did not certify c_D(L) for L = {labels.tolist()}; "
                "the verifier needs exact answers"
            )
        if result.objective > n + 0.5:
            raise VerificationError(
                f"labeling {labels.tolist()} was found realisable on the points but backend "
                f"{result.backend!r} certifies cost {result.objective} > n = {n} with it forced"
            )
        costs[k] = round(result.objective)
    return costs


def brute_force_costs(
    X: np.ndarray, y: np.ndarray, points: np.ndarray, labelings: np.ndarray, hypothesis_class: str
) -> np.ndarray | None:
    """c_D(L) from a complete cover of X and the points (None if the cover is not complete: degenerate data)."""
    cover = public_cover(np.vstack([X, points]), hypothesis_class)
    if not cover.complete:
        return None
    errors = cover.errors(X, y)
    on_points = cover.labelings(points)
    costs = np.empty(len(labelings))
    for k, labels in enumerate(labelings):
        match = np.all(on_points == labels, axis=1)
        costs[k] = errors[match].min() if match.any() else np.inf
    return costs
