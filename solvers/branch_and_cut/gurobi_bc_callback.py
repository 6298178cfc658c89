"""The Gurobi callback of ``gurobi-bc``: separability as lazy constraints, enforced by exactly verified core cuts.

The model of :mod:`oraclepriv.solvers.branch_and_cut.gurobi_bc` has one binary z_g per group of identical points
(z_g = 1: "group g is misclassified"), the cover rows of the cores already known, and nothing that
mentions a halfspace. The constraint "the groups claimed correct, S(z) = {g : z_g < 0.5}, are
strictly separable" lives only in :class:`CoverCutCallback`, Gurobi's lazy-constraint callback
(``LazyConstraints = 1``), which does for Gurobi what the constraint handler of ``scip-bc``
(:mod:`oraclepriv.solvers.branch_and_cut.scip_bc_handler`) does for SCIP, with the same pieces:

* ``MIPSOL`` (a new incumbent candidate, integral): first every known core the solution violates is
  added again with ``cbLazy`` (Gurobi requires a callback to cut off *every* solution that violates
  one of its lazy constraints, old ones included); then S(z) is tested with the Farkas LP of
  :class:`oraclepriv.solvers.branch_and_cut.cores.Separator` and the repair loop of
  :func:`oraclepriv.solvers.mip.benders.repair`, and every exactly verified core it meets
  becomes a lazy cover cut  sum_{g in C} z_g >= 1. A solution is rejected only with such a core;
  when the float LP calls S(z) non-separable but no core passes the exact check, the solution is
  accepted (Gurobi then solves a relaxation, whose bound is still a lower bound over all halfspaces);
* ``MIPNODE`` with an optimal node LP (fractional points x): the known cores x violates, then
  Pfetsch's separation LP (:func:`oraclepriv.solvers.branch_and_cut.cover_separation.min_x_cores`, with the
  budgets of ``scip-bc``) proposes minimal non-separable sets of points with small x; violated
  proposals become lazy cuts after the exact check;
* primal side: rank rounding of the root LP point once the root has converged
  (:func:`oraclepriv.solvers.branch_and_cut.cover_separation.rank_rounding`, as in ``scip-bc``), the repaired
  rounded point {g : x_g < 0.5} (every
  :data:`~oraclepriv.solvers.branch_and_cut.cover_separation.REPAIR_EVERY`-th node call) and the separable sets met
  while enforcing are offered to Gurobi with ``cbSetSolution`` at the next node.

Every row is a cover cut over a core verified in exact arithmetic, so every halfspace's error
vector satisfies it, and Gurobi's dual bound is a lower bound over all halfspaces
(``docs/theory/cover-cut-model.md``, section 3). Gurobi's symmetry detection is switched off by
the backend for the same reason as SCIP's: it sees rows and objective, not separability.

Deadline: the :class:`~oraclepriv.solvers.peers.gurobi_env.GuardedSolve` that wraps this callback stops
calling it once the call's deadline has expired and terminates the solve; inside a call, the repair
and separation loops check the same deadline (a solution met past it is decided with one Farkas LP).

References: M. E. Pfetsch, "Branch-and-cut for the maximum feasible subsystem problem", SIAM J.
Optim. 19(1), 2008; G. Codato and M. Fischetti, "Combinatorial Benders' cuts for mixed-integer
linear programming", Oper. Res. 54(4), 2006; Gurobi Optimizer Reference Manual, "Callbacks"
(``cbLazy``, ``cbGetSolution``, ``cbGetNodeRel``, ``cbSetSolution``).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from oraclepriv.solvers.branch_and_cut.cores import CoreStatus, Separator
from oraclepriv.solvers.branch_and_cut.cover_separation import (
    REPAIR_EVERY,
    VIOLATION_TOL,
    core_key,
    min_x_cores,
    note_rounding,
    rank_rounding,
)
from oraclepriv.solvers.mip import benders
from oraclepriv.solvers.mip.mipbackend import note_cheapest_separable
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace
from scipy import sparse

__all__ = ["CoverCutCallback"]

log = logging.getLogger(__name__)

#: at most this many known cores re-added per callback call (the most violated first)
POOL_CUTS = 200


class CoverCutCallback:
    """Lazy core cuts for Gurobi (module docstring); call it as ``callback(model, where)``.

    Parameters
    ----------
    gp : module
        gurobipy.
    z : list of gurobipy.Var
        The binaries, one per group.
    sep : Separator
        The Farkas LPs over the groups (HiGHS).
    W, yg : numpy.ndarray
        Group weights (>= 0) and group labels.
    cores : list of tuple of int
        The cores already known (seeded rows or not): the pool checked first.
    deadline : Deadline
        The oracle call's deadline.
    trace : IncumbentTrace, optional
        Where the objective of every solution the callback accepts is noted with its time.

    Attributes
    ----------
    new_cores : list of tuple of int
        Cores verified during the solve (kept for later calls on the same points).
    best_keep : list of (float, numpy.ndarray)
        The cheapest separable sets met (cost, correct-group mask), cheapest first.
    unverified, accepted_unverified : int
        Proposals that failed the exact check, and solutions accepted for want of a proof.
    stats : dict
        Counters (calls, cuts, offered solutions).
    """

    def __init__(
        self,
        gp,
        z: list,
        sep: Separator,
        W: np.ndarray,
        yg: np.ndarray,
        cores: list[tuple[int, ...]],
        deadline: Deadline,
        trace: IncumbentTrace | None = None,
    ) -> None:
        self.gp = gp
        self.trace = trace
        self.GRB = gp.GRB
        self.z = z
        self.sep = sep
        self.W = W
        self.yg = yg
        self.deadline = deadline
        self.pool: list[tuple[int, ...]] = []
        self.known: set[tuple[int, ...]] = set()
        self._matrix: Any = None
        for core in cores:
            self._remember(core_key(core))
        self.new_cores: list[tuple[int, ...]] = []
        self.best_keep: list[tuple[float, np.ndarray]] = []
        self._offered = np.inf
        self.unverified = 0
        self.accepted_unverified = 0
        self.stats: dict[str, Any] = {
            "mipsol_calls": 0,
            "mipnode_calls": 0,
            "cuts_enforce": 0,
            "cuts_pool": 0,
            "cuts_sepa": 0,
            "heuristic_solutions": 0,
            "deadline_enforcements": 0,
            "rounding_tries": 0,
            "rounding_best": None,
        }
        self.rounded = False  # rank rounding of the converged root LP done
        self.root_calls = 0
        self.next_rounding = 5

    # -- the pool of known cores ---------------------------------------------------------------
    def _remember(self, core: tuple[int, ...]) -> bool:
        if core in self.known:
            return False
        self.known.add(core)
        self.pool.append(core)
        self._matrix = None
        return True

    def _pool_violated(self, x: np.ndarray) -> list[tuple[int, ...]]:
        """Known cores whose cut x violates, the most violated first (at most POOL_CUTS)."""
        if not self.pool:
            return []
        if self._matrix is None:
            rows = np.repeat(np.arange(len(self.pool)), [len(c) for c in self.pool])
            cols = np.fromiter((g for c in self.pool for g in c), dtype=np.int64, count=int(rows.size))
            self._matrix = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(len(self.pool), self.W.size))
        sums = self._matrix @ x
        bad = np.flatnonzero(sums < 1.0 - VIOLATION_TOL)
        bad = bad[np.argsort(sums[bad], kind="stable")][:POOL_CUTS]
        return [self.pool[i] for i in bad]

    def _lazy(self, model, core: tuple[int, ...]) -> None:
        model.cbLazy(self.gp.quicksum(self.z[g] for g in core) >= 1)

    def _add_new(self, model, cores) -> int:
        added = 0
        for core in map(core_key, cores):
            if self._remember(core):
                self.new_cores.append(core)
                added += 1
            self._lazy(model, core)
        return added

    # -- primal side -----------------------------------------------------------------------------
    def _note_separable(self, keep: np.ndarray) -> None:
        note_cheapest_separable(self.best_keep, keep, self.W)

    def _offer(self, model) -> None:
        """Hand Gurobi the cheapest separable set met so far, once (at a MIPNODE call)."""
        if not self.best_keep or self.best_keep[0][0] >= self._offered:
            return
        cost, keep = self.best_keep[0]
        self._offered = cost
        model.cbSetSolution(self.z, np.where(keep, 0.0, 1.0).tolist())
        if model.cbUseSolution() < self.gp.GRB.INFINITY:
            self.stats["heuristic_solutions"] += 1

    # -- the callback ----------------------------------------------------------------------------
    def __call__(self, model, where: int) -> None:
        if where == self.GRB.Callback.MIPSOL:
            self._enforce(model)
        elif where == self.GRB.Callback.MIPNODE:
            if model.cbGet(self.GRB.Callback.MIPNODE_STATUS) == self.GRB.OPTIMAL:
                self._separate(model)

    def _enforce(self, model) -> None:
        self.stats["mipsol_calls"] += 1
        x = np.asarray(model.cbGetSolution(self.z), dtype=np.float64)
        keep = x < 0.5
        old = self._pool_violated(np.where(keep, 0.0, 1.0))
        if old:  # a solution that violates known cores: cut it off with them (no LP needed)
            for core in old:
                self._lazy(model, core)
            self.stats["cuts_pool"] += len(old)
            return
        if self.deadline.expired():  # one Farkas LP decides; reject only with a verified core
            self.stats["deadline_enforcements"] += 1
            status, S = self.sep.find_core(keep)
            if status == CoreStatus.CORE:
                self.stats["cuts_enforce"] += self._add_new(model, [S])
            elif status == CoreStatus.UNVERIFIED:
                self.unverified += 1
                self.accepted_unverified += 1
            return
        repaired, cores, bad = benders.repair(self.sep, keep, self.W, self.yg, self.deadline)
        self.unverified += bad
        if not cores:
            if bad == 0:
                self._note_separable(keep)  # a real labeling: Gurobi may keep it
            else:
                self.accepted_unverified += 1  # no proof of non-separability: accept, never reject
            if self.trace is not None:  # accepted: Gurobi's new incumbent if it is cheaper
                self.trace.note(model.cbGet(self.GRB.Callback.MIPSOL_OBJ))
            return
        self.stats["cuts_enforce"] += self._add_new(model, cores)
        if bad == 0:
            self._note_separable(benders.add_back(self.sep, repaired, self.W, self.deadline))

    def _separate(self, model) -> None:
        self.stats["mipnode_calls"] += 1
        x = np.asarray(model.cbGetNodeRel(self.z), dtype=np.float64)
        old = self._pool_violated(x)
        for core in old:
            self._lazy(model, core)
        self.stats["cuts_pool"] += len(old)
        root = model.cbGet(self.GRB.Callback.MIPNODE_NODCNT) == 0
        cores, unverified = min_x_cores(self.sep, x, self.known, root, self.deadline.expired)
        self.unverified += unverified
        if root and not self.rounded:
            # round the root LP point when the root has converged (no violated core found) and, on a
            # long root, at root calls 5, 15, 45, ... (a time-limited call gets an early incumbent)
            self.root_calls += 1
            self.rounded = not cores and not old
            gap_open = (
                model.cbGet(self.GRB.Callback.MIPNODE_OBJBST) > model.cbGet(self.GRB.Callback.MIPNODE_OBJBND) + 1e-9
            )
            if (self.rounded or self.root_calls == self.next_rounding) and gap_open and not self.deadline.expired():
                self.next_rounding = 3 * self.root_calls
                cores += self._rank_rounding(x)
        if self.stats["mipnode_calls"] % REPAIR_EVERY == 1 % REPAIR_EVERY and not self.deadline.expired():
            keep, more, bad = benders.repair(self.sep, x < 0.5, self.W, self.yg, self.deadline)
            self.unverified += bad
            for core in map(core_key, more):
                if x[list(core)].sum() < 1.0 - VIOLATION_TOL:
                    cores.append(core)
                elif self._remember(core):  # verified but satisfied by x: kept for later checks
                    self.new_cores.append(core)
            if bad == 0:
                self._note_separable(keep)
        self.stats["cuts_sepa"] += self._add_new(model, cores)
        self._offer(model)

    def _rank_rounding(self, x: np.ndarray) -> list[tuple[int, ...]]:
        """Rank rounding of the root LP point (:func:`~oraclepriv.solvers.branch_and_cut.cover_separation.rank_rounding`):
        its separable sets are remembered (the cheapest is offered by :meth:`_offer`); returns the
        verified cores met that x violates."""
        found = rank_rounding(self.sep, x, self.W, self.yg, self.deadline, self.deadline.expired)
        self.unverified += found.unverified
        note_rounding(self.stats, found, self.W)
        for keep in found.separable:
            self._note_separable(keep)
        return found.cores
