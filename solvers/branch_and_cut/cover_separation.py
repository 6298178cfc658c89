"""Separation and rounding of LP points for the cover-cut branch-and-cut drivers (``scip-bc``, ``gurobi-bc``).

Both drivers keep one binary z_g per group of identical points (z_g = 1: "group g is misclassified") and
cut off labelings no halfspace realises with cover rows  sum_{g in C} z_g >= 1  over exactly verified
cores C (``docs/theory/cover-cut-model.md``). What they do with a fractional LP point x does not depend
on the solver, and lives here:

* :func:`min_x_cores`: Pfetsch's separation LP proposes minimal non-separable sets of points with small
  x; the violated ones that pass the exact check become cuts;
* :func:`rank_rounding`: a primal heuristic on the root LP point, which ranks the likely errors well.

The tuning constants are discussed, with measurements, in ``docs/solvers/scip-bc.md`` (sections 2, 3
and 8); ``gurobi-bc`` uses the same values (``docs/solvers/gurobi.md``).

Reference: M. E. Pfetsch, "Branch-and-cut for the maximum feasible subsystem problem", SIAM J. Optim.
19(1), 2008.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

import numpy as np
from oraclepriv.solvers.branch_and_cut.cores import Separator
from oraclepriv.solvers.mip import benders
from oraclepriv.solvers.runtime.deadline import Deadline

__all__ = [
    "REPAIR_EVERY",
    "ROUNDING_ADD_BACK",
    "ROUNDING_TRIES",
    "SEPA_LPS",
    "SEPA_MISSES",
    "SEPA_PENALTY",
    "VIOLATION_TOL",
    "Rounding",
    "core_key",
    "min_x_cores",
    "note_rounding",
    "rank_rounding",
    "violated",
]

#: a fractional point violates sum z >= 1 when the sum is below 1 - tol
VIOLATION_TOL = 1e-6
#: separation budget per call, (at the root, below it): at most this many separation LPs ...
SEPA_LPS = (100, 30)
#: ... or this many useless proposals in a row
SEPA_MISSES = (10, 4)
#: cost added to every point of a proposal, so that the next separation LP of the call looks elsewhere
SEPA_PENALTY = 0.2
#: the first and every REPAIR_EVERY-th separation call also repair the rounded point {g : x_g < 0.5}
#: (a primal heuristic; doing it at every call costs time for no fewer nodes)
REPAIR_EVERY = 10
#: rank rounding of the root LP point: at most this many k values, spread over [s / 2, 3 s] for
#: s = sum_g x_g ...
ROUNDING_TRIES = 24
#: ... of which the ROUNDING_ADD_BACK cheapest repaired sets get the greedy add-back
ROUNDING_ADD_BACK = 4


def core_key(core) -> tuple[int, ...]:
    """A core as the sorted tuple of its groups (the form every pool and row name uses)."""
    return tuple(sorted(int(g) for g in core))


def violated(cores, x: np.ndarray) -> list[tuple[int, ...]]:
    """The cores (as :func:`core_key` tuples) whose cut sum_{g in C} z_g >= 1 the point x violates."""
    return [core_key(c) for c in cores if x[list(c)].sum() < 1.0 - VIOLATION_TOL]


def min_x_cores(
    sep: Separator,
    x: np.ndarray,
    known: Collection[tuple[int, ...]],
    at_root: bool,
    expired: Callable[[], bool],
) -> tuple[list[tuple[int, ...]], int]:
    """Violated verified cores of the LP point x by Pfetsch's separation LP, and the count of proposals
    that failed the exact check.

    The Farkas LP with objective min sum_g x_g lambda_g (:meth:`Separator.min_cost_core`) returns a
    vertex, i.e. a minimal non-separable set, made of points with small x; after each proposal the cost
    of its points rises by :data:`SEPA_PENALTY` so that the next LP finds another one. Only violated
    proposals not in ``known`` are verified (exactly, memoised by the separator); the call ends after
    :data:`SEPA_LPS` LPs or :data:`SEPA_MISSES` useless proposals in a row, or when ``expired()``."""
    at = 0 if at_root else 1
    cand = x < 1.0 - VIOLATION_TOL  # a point with x_g = 1 satisfies every cut through it
    cost = x.copy()
    out: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    unverified = 0
    misses = 0
    for _ in range(SEPA_LPS[at]):
        if expired():
            break
        S = sep.min_cost_core(cand, cost)
        if S is None:  # cand is separable (or the LP failed): no core left to propose
            break
        core = core_key(S)
        useful = core not in seen and core not in known and x[S].sum() < 1.0 - VIOLATION_TOL
        seen.add(core)
        if useful and sep.verify(core):
            out.append(core)
            misses = 0
        else:
            unverified += int(useful)
            misses += 1
            if misses >= SEPA_MISSES[at]:
                break
        cost[S] += SEPA_PENALTY
    return out, unverified


@dataclass
class Rounding:
    """What :func:`rank_rounding` found."""

    #: verified cores met by the repairs that the LP point violates (they become cuts)
    cores: list[tuple[int, ...]] = field(default_factory=list)
    #: separable sets (correct-group masks) after the greedy add-back, cheapest repair first
    separable: list[np.ndarray] = field(default_factory=list)
    #: k values tried
    tries: int = 0
    #: core proposals that failed the exact check
    unverified: int = 0


def rank_rounding(
    sep: Separator,
    x: np.ndarray,
    W: np.ndarray,
    yg: np.ndarray,
    deadline: Deadline,
    expired: Callable[[], bool],
) -> Rounding:
    """Primal heuristic on the root LP point x: for several k, claim the k groups with the largest x
    wrong, repair the rest to a separable set (drop rule of ``benders.repair``), and re-add what fits
    (``benders.add_back``) for the :data:`ROUNDING_ADD_BACK` cheapest repairs.

    The result's separable sets are real labelings (the repair and the add-back keep a set only when the
    Farkas LP finds it separable); a caller still offers them to its solver as candidates, which checks
    them again, so a wrong set is refused there, never certified."""
    order = np.argsort(-x, kind="stable")
    mass = float(x.sum())
    positive = int(np.count_nonzero(x > VIOLATION_TOL))
    lo, hi = max(1, int(mass // 2)), min(positive, int(math.ceil(3 * mass)))
    ks = sorted(set(np.linspace(lo, hi, num=ROUNDING_TRIES).round().astype(int))) if hi >= lo else []
    out = Rounding()
    repaired: list[tuple[float, np.ndarray]] = []
    for k in ks:
        if expired():
            break
        keep = np.ones(x.size, dtype=bool)
        keep[order[:k]] = False
        keep, more, bad = benders.repair(sep, keep, W, yg, deadline)
        out.unverified += bad
        out.tries += 1
        out.cores += violated(more, x)
        if bad == 0:
            repaired.append((float(W[~keep].sum()), keep))
    # the greedy add-back costs one LP per dropped group: only for the cheapest repairs
    for _, keep in sorted(repaired, key=lambda r: r[0])[:ROUNDING_ADD_BACK]:
        out.separable.append(benders.add_back(sep, keep, W, deadline))
    return out


def note_rounding(stats: dict, found: Rounding, W: np.ndarray) -> None:
    """Add a rounding's counts to a driver's ``stats``: ``rounding_tries`` and ``rounding_best``, the
    cost of the cheapest set the rounding offered (None until one was)."""
    stats["rounding_tries"] += found.tries
    for keep in found.separable:
        cost = float(W[~keep].sum())
        if stats["rounding_best"] is None or cost < stats["rounding_best"]:
            stats["rounding_best"] = cost
