"""c_D(L): the fewest private mistakes of a hypothesis that labels the noisy points as L.

For RRSPM and RSPM (Block, Bun, Desai, Shetty, Wu, Algorithms 4 and 5), with the private data D
fixed, labeling L of the points costs c_D(L) + (noise terms), so the law of the release is
determined by the finitely many c_D(L) (:mod:`oraclepriv.noisy_argmin.laws`). They are computed here with
the project's own exact oracles, so the verifier exercises the paths the learners use:

* the realisable labelings of the points: one ERM on a prefix of the points per candidate
  labeling (realisable iff the certified optimum is 0). The candidates are grown one point at a
  time from the realisable labelings of the first j - 1 points, each extended by 0 and by 1 (after
  every labeling of the first few points, :data:`FIRST_LEVEL`): a labeling realised on all the points
  is realised on every prefix by the same hypothesis, so none is missed, and at most
  2^5 + 2 (m - 5) K calls are made for K realisable labelings of m > 5 points (not 2^m, and no list
  of the 2^m candidates is held);
* c_D(L): one ERM on D plus the points labelled L with weight n + 1 each (a hypothesis that
  disagrees with L on a point costs more than any that agrees, and one that agrees exists), so the
  certified optimum is c_D(L). Every answer must be certified over the whole class, else
  :class:`VerificationError`, whose message names the labeling, the records and points of the
  problem with their labels, the backend's status and what to try instead.

:func:`brute_force_costs` computes the same numbers independently, from a complete cover of the
union of the private records and the points (:func:`oraclepriv.cover.public_cover`), for the
cross-check the verifier runs where it is cheap.

The errors name private records by row and label, never by their coordinates (the points'
coordinates are named: they are public, or the learner's own identification set).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from oraclepriv.cover import public_cover
from oraclepriv.oracle import Oracle, OracleResult

__all__ = [
    "VerificationError",
    "brute_force_costs",
    "labeling_costs",
    "realisable_labelings",
    "uncertified_message",
]


class VerificationError(RuntimeError):
    """The verifier could not establish an exact quantity it needs (an uncertified oracle answer)."""


#: records and points listed by name in an uncertified-answer message (the rest are counted)
LISTED = 20
#: realisable_labelings tries every labeling of this many first points before growing them one point at a time
#: (up to here the labelings of the prefixes are about as many as the candidates)
FIRST_LEVEL = 5
#: exact backends a halfspace problem can be handed to instead (each proves its bound over the whole class)
HALFSPACE_BACKENDS = ("enumerate", "direction-bb", "scip-bc")


def _coordinates(x: np.ndarray) -> str:
    """A point as ``(0.2, 0.3)``."""
    return "(" + ", ".join(f"{float(v):g}" for v in np.atleast_1d(x)) + ")"


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:LISTED])
    return shown + (f" and {len(items) - LISTED} more" if len(items) > LISTED else "")


def uncertified_message(
    result: OracleResult,
    what: str,
    labels: np.ndarray,
    points: np.ndarray,
    y: np.ndarray | None = None,
    dataset: str = "D",
) -> str:
    """Why an oracle answer the verifier needs is not certified, and what to do about it.

    Names ``what`` was asked (the labeling L), the problem's rows with their labels: the points with their
    coordinates and the labels L gives them, and, for c_D(L), the private records of ``dataset`` by row and
    label (weight 1; their coordinates are not repeated: they are private); the backend's status, objective and
    bound (and its own account of a failure, when it gives one); and the ways out: another exact backend, no
    time limit (or a larger one) when the backend stopped at one, and, for halfspaces, the warning that
    near-degenerate decimal coordinates can defeat a float64 halfspace."""
    labels = np.asarray(labels).astype(int)
    on_points = [f"z{j} = {_coordinates(z)} -> {int(v)}" for j, (z, v) in enumerate(zip(points, labels))]
    if y is None:
        rows = f"the points (public points; RSPM: its identification set) {_listed(on_points)}"
    else:
        n = len(y)
        records = [f"{i}: y={int(v)}" for i, v in enumerate(np.asarray(y))]
        rows = (
            f"the {n} private records of {dataset} (rows 0 to {n - 1}, weight 1, coordinates not shown) with labels "
            f"{_listed(records)}; and the points labelled by L (public points; RSPM: its identification set; weight "
            f"{n + 1} each): {_listed(on_points)}"
        )
    status = f"status {result.status!r}, objective {result.objective:g}, bound {result.bound:g}"
    if result.restriction is not None:
        status += f", bound proved only over {result.restriction}"
    reason = result.details.get("error")
    if reason:
        status += f"; the backend says: {reason}"
    hints = []
    others = [b for b in HALFSPACE_BACKENDS if b != result.backend] if result.hypothesis_class == "halfspace" else []
    hints.append(
        "run it with another exact backend"
        + (f" ({', '.join(others)}: backend=... in Python, --backend on the command line)" if others else "")
    )
    limit = result.details.get("time_limit")
    if result.status == "time_limit" or limit is not None:
        hints.append(
            "give the backend no time limit"
            + (f" (it had {limit:g} s)" if isinstance(limit, (int, float)) else "")
            + " or a larger one"
        )
    if result.hypothesis_class == "halfspace":
        hints.append(
            "check the data for near-degenerate decimal coordinates (points on or very near a common line or plane, "
            "repeated points with both labels): the optimal labeling's margin can then lie below float64 resolution, "
            "so that no float64 halfspace the backend returns realises it"
        )
    return (
        f"backend {result.backend!r} did not certify {what} ({status}), on {rows}. The verifier needs every such "
        f"answer certified over the whole class; to get one: {'; '.join(hints)}"
    )


def _all_labelings(m: int) -> np.ndarray:
    """The 2^m labelings of m points, row k holding the bits of k (point j gets bit j)."""
    return ((np.arange(2**m)[:, None] >> np.arange(m)[None, :]) & 1).astype(np.int8)


def realisable_labelings(
    points: np.ndarray, oracle: Oracle, progress: Callable[[int, int], None] | None = None
) -> np.ndarray:
    """The labelings (rows, in {0,1}) of ``points`` that some hypothesis of the oracle's class realises, in the
    order of their binary codes sum_j L_j 2^j.

    Every labeling of the first min(m, :data:`FIRST_LEVEL`) points is tried; then the points are added one at a
    time (module docstring): the realisable labelings of the first j points are the certified-realisable
    extensions by 0 and by 1 of those of the first j - 1. ``progress(j, m)`` after each level."""
    m = points.shape[0]
    first = min(m, FIRST_LEVEL)
    prefixes = np.zeros((1, 0), dtype=np.int8)
    for j in range(first, m + 1):
        if j == first:
            candidates = _all_labelings(first)
        else:
            candidates = np.vstack([np.c_[prefixes, np.full(len(prefixes), bit, dtype=np.int8)] for bit in (0, 1)])
        keep = []
        for labels in candidates:
            result = oracle.solve(points[:j], labels, np.ones(j), caller="verify", step="realisable")
            if not result.certified:
                raise VerificationError(
                    uncertified_message(
                        result, f"whether the labeling L = {labels.tolist()} is realisable", labels, points[:j]
                    )
                )
            if result.objective <= result.tolerance:
                keep.append(labels)
        prefixes = np.array(keep, dtype=np.int8).reshape(len(keep), j)
        if progress is not None:
            progress(j, m)
    return prefixes[np.lexsort(prefixes.T)] if m > first else prefixes


def labeling_costs(
    X: np.ndarray, y: np.ndarray, points: np.ndarray, labelings: np.ndarray, oracle: Oracle, dataset: str = "D"
) -> np.ndarray:
    """c_D(L) for every row L of ``labelings`` (each realisable on ``points``), by the oracle; ``dataset`` names
    (X, y) in an error (e.g. a neighbour of D)."""
    n, m = X.shape[0], points.shape[0]
    rows = np.vstack([X, points])
    weights = np.r_[np.ones(n), np.full(m, float(n + 1))]
    costs = np.empty(len(labelings))
    for k, labels in enumerate(labelings):
        result = oracle.solve(rows, np.r_[y, labels], weights, caller="verify", step="labeling-cost")
        if not result.certified:
            raise VerificationError(
                uncertified_message(
                    result,
                    f"c_D(L) (the fewest private mistakes of a hypothesis labelling the points as L) for "
                    f"L = {labels.tolist()}",
                    labels,
                    points,
                    y,
                    dataset,
                )
            )
        if result.objective > n + 0.5:
            raise VerificationError(
                f"labeling {labels.tolist()} was found realisable on the points but backend "
                f"{result.backend!r} certifies cost {result.objective} > n = {n} with it forced (on {dataset})"
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
