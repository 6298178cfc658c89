"""The primal side of ``oraclepriv bench mip``: how early each backend found good halfspaces.

Final times and bounds say how fast a backend *proves*; on instances nobody closes, and for a user
who stops a search early, what matters is how soon good halfspaces appear. Backends that keep an
incumbent trace (:mod:`oraclepriv.solvers.runtime.incumbents`: ``scip-bc``, ``gurobi-bc``, ``gurobi``,
``direction-bb``, ``portfolio``) return ``details["incumbents"]``, the improving values with the
seconds since the call started; a row of the benchmark carries it, and this module reads two
measures off it:

* **time to the final incumbent** (``best_found_seconds``): the first time the trace reaches the
  row's final objective (its re-scored loss);
* **primal integral** (Berthold, "Measuring the impact of primal heuristics", Oper. Res. Lett.
  41(6), 2013): P(T) = integral over [0, T] of the primal gap
  gamma(t) = |c* - c(t)| / max(|c*|, |c(t)|), with c(t) the incumbent at time t, c* the best
  objective known for the instance (over the run's rows and the library's manifest), gamma = 1
  before the first incumbent or when c(t) and c* have opposite signs, and 0 when both are 0.
  T is the time limit; after the call ends its final objective stands. Lower is better; a backend
  that finds c* at once and keeps it has P = 0, one that never finds a halfspace has P = T.

Trace values before the final one are the backend's own numbers (the loss of a labeling its
search accepted, mapped to the signed problem), not re-scored hypotheses; the last point is the
row's re-scored objective. Backends without a trace get no primal measures (None), never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = ["primal_gap", "primal_integral", "best_found_seconds", "best_known_objectives", "add_primal_measures"]


def primal_gap(value: float | None, best: float) -> float:
    """Berthold's primal gap of incumbent ``value`` (None: no incumbent yet) against ``best``, in [0, 1]."""
    if value is None or not math.isfinite(value):
        return 1.0
    if value == 0.0 and best == 0.0:
        return 0.0
    if value * best < 0.0:
        return 1.0
    return min(1.0, abs(best - value) / max(abs(best), abs(value)))


def _steps(trace: Iterable[Iterable[float]], final: float, end: float) -> list[tuple[float, float]]:
    """The incumbent as a step function: (time, value) pairs in time order, the trace's improving
    values before ``end`` (the call's end) and the re-scored ``final`` objective from ``end`` on
    (which stands even if the search had claimed a lower value that no returned halfspace attains)."""
    steps: list[tuple[float, float]] = []
    for seconds, value in sorted((float(s), float(v)) for s, v in trace):
        if seconds < end and (not steps or value < steps[-1][1]):
            steps.append((max(0.0, seconds), value))
    if math.isfinite(final) and (not steps or final != steps[-1][1]):
        steps.append((max(0.0, end), final))
    return steps


def primal_integral(trace: Iterable[Iterable[float]], final: float, end: float, best: float, horizon: float) -> float:
    """P(``horizon``) for an incumbent ``trace`` ([seconds, value] pairs) whose call ended at ``end``
    with the re-scored objective ``final``, against the best known objective ``best``."""
    if not horizon > 0:
        raise ValueError(f"horizon must be a number of seconds > 0; got {horizon!r}")
    steps = [(t, v) for t, v in _steps(trace, final, end) if t < horizon]
    total, now, value = 0.0, 0.0, None
    for t, v in steps:
        total += primal_gap(value, best) * (t - now)
        now, value = t, v
    return total + primal_gap(value, best) * (horizon - now)


def best_found_seconds(trace: Iterable[Iterable[float]], final: float, end: float, tolerance: float) -> float:
    """The first time the incumbent reached the row's final objective (within ``tolerance``);
    ``end`` when only the final answer does (e.g. the re-scored halfspace is better than any value
    the search noted)."""
    for t, v in _steps(trace, final, end):
        if v <= final + tolerance:
            return min(t, end)
    return end


def best_known_objectives(rows: list[dict[str, Any]], manifest_best: dict[str, float | None]) -> dict[str, float]:
    """Per instance, the lowest objective any row found (objectives are re-scored hypotheses, so every
    one is attained) or the manifest's best known, whichever is lower."""
    best: dict[str, float] = {}
    for r in rows:
        value = r.get("objective")
        if isinstance(value, (int, float)) and math.isfinite(value):
            best[r["instance"]] = min(best.get(r["instance"], math.inf), float(value))
    for name, value in manifest_best.items():
        if value is not None and math.isfinite(value):
            best[name] = min(best.get(name, math.inf), float(value))
    return best


def add_primal_measures(rows: list[dict[str, Any]], manifest_best: dict[str, float | None]) -> None:
    """Set ``best_known``, ``best_found_seconds`` and ``primal_integral`` on every row with an
    incumbent trace (``None`` on the others)."""
    best = best_known_objectives(rows, manifest_best)
    for r in rows:
        trace = r.get("incumbents")
        objective = r.get("objective")
        r["best_known"] = best.get(r["instance"])
        if trace is None or not isinstance(objective, (int, float)) or not math.isfinite(objective):
            r["best_found_seconds"] = r["primal_integral"] = None
            continue
        end = min(float(r["seconds"]), float(r["time_limit"]))
        tolerance = 1e-9 * max(1.0, abs(float(objective)))
        r["best_found_seconds"] = best_found_seconds(trace, float(objective), end, tolerance)
        r["primal_integral"] = primal_integral(
            trace, float(objective), end, best[r["instance"]], float(r["time_limit"])
        )
