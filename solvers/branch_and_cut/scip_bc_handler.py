"""The SCIP constraint handler of ``scip-bc``: separability as a lazy constraint, enforced by core cuts.

The model of :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_model` has one binary z_g per group of identical
points (z_g = 1: "group g is misclassified") and no rows that mention a halfspace. The constraint
"the groups claimed correct, S(z) = {g : z_g < 0.5}, are strictly separable" lives only in this
handler (:data:`CoreHandler`, built by :func:`handler_class`):

* **enforcement** (``consenfolp`` / ``consenfops`` / ``consenforelax``) at integral points: test
  S(z) with the Farkas LP of :class:`oraclepriv.solvers.branch_and_cut.cores.Separator`; if it is not separable,
  add a cover cut  sum_{g in C} z_g >= 1  for every exactly verified core C the repair loop of
  :func:`oraclepriv.solvers.mip.benders.repair` meets inside S(z);
* **check** (``conscheck``) of candidate solutions: reject only with an exactly verified core;
* **separation** (``conssepalp``) of fractional LP points x: Pfetsch's separation LP (the Farkas
  system with objective min sum_g x_g lambda_g, :meth:`oraclepriv.solvers.branch_and_cut.cores.Separator.min_cost_core`)
  proposes minimal non-separable sets of points with small x; violated proposals become cuts after
  the exact check;
* **primal side**: the rounded LP point and *rank rounding* of the root LP point are repaired into
  separable sets and offered to SCIP as solutions (SCIP's own heuristics are off; they cannot see
  this constraint); the separation and the rank rounding are shared with ``gurobi-bc``
  (:mod:`oraclepriv.solvers.branch_and_cut.cover_separation`);
* **locks** (``conslock``): every z_g is locked downwards, because the cuts are covering rows.

The callbacks honour the call's deadline (``docs/deadlines.md``): past it (or after a Ctrl-C,
which expires it) enforcement tests the labeling with a single Farkas LP instead of the repair
loop, separation proposes no more cores, and the primal heuristics stop, so no callback keeps
SCIP past its own time limit by more than one LP; the handler then asks SCIP to stop. Cutting
work short never breaks the invariant below: a labeling is still rejected only with a verified
core.

Soundness rests on one invariant: SCIP is told "infeasible" only together with a core verified in
exact arithmetic (:func:`oraclepriv.solvers.branch_and_cut.cores.verify_core`), and every core cut is satisfied by
every halfspace. Why that makes SCIP's dual bound a bound over all halfspaces is derived in
``docs/theory/cover-cut-model.md``; the design choices and the tuning constants below are
discussed, with measurements, in ``docs/solvers/scip-bc.md``.

References: M. E. Pfetsch, "Branch-and-cut for the maximum feasible subsystem problem", SIAM J.
Optim. 19(1), 2008; G. Codato and M. Fischetti, "Combinatorial Benders' cuts for mixed-integer
linear programming", Oper. Res. 54(4), 2006.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from oraclepriv.solvers.branch_and_cut.cores import CoreStatus, Separator
from oraclepriv.solvers.branch_and_cut.cover_separation import (
    REPAIR_EVERY,
    core_key,
    min_x_cores,
    note_rounding,
    rank_rounding,
    violated,
)
from oraclepriv.solvers.mip import benders
from oraclepriv.solvers.mip.mipbackend import note_cheapest_separable
from oraclepriv.solvers.runtime.deadline import Deadline

log = logging.getLogger(__name__)

__all__ = ["CoreHandler", "handler_class", "install_handler"]

#: separation of fractional LP points at every SEPA_FREQ-th depth (0 = root only)
SEPA_FREQ = 1
#: core rows enter the LP at once (True) or only when an LP point violates them (False; then SCIP's
#: linear handler separates them, see ``LINEAR_SEPAFREQ`` in :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_model`).
#: Smaller LPs and fewer nodes on hard instances, a fraction of a second lost on easy ones.
CORE_ROWS_INITIAL = False


def _handler_class(pyscipopt):
    """The constraint-handler class, built on first use so importing this module needs no pyscipopt."""
    RESULT = pyscipopt.SCIP_RESULT

    class _CoreHandler(pyscipopt.Conshdlr):
        """Lazy core cuts: separability of {g : z_g < 0.5} by the Farkas LP, exactly verified cores."""

        def __init__(
            self,
            z,
            sep: Separator,
            W: np.ndarray,
            yg: np.ndarray,
            known: set[tuple[int, ...]],
            deadline: Deadline | None = None,
        ):
            self.z = z
            self.deadline = Deadline(None) if deadline is None else deadline
            self.stop_requested = False  # interruptSolve called at the deadline
            self.sep = sep
            self.W = W
            self.yg = yg
            self.known = known  # cores already rows of this model
            self.new_cores: list[tuple[int, ...]] = []
            self.pending: list[tuple[int, ...]] = []  # found by conscheck, added at the next enforcement
            self.best_keep: list[tuple[float, np.ndarray]] = []  # separable sets met, cheapest first
            self.unverified = 0  # core proposals that failed the exact check
            self.accepted_unverified = 0  # LP-non-separable labelings accepted for want of a proof
            self._tz: list[Any] | None = None  # the transformed variables (on first use)
            self.rounded = False  # rank rounding of the converged root LP done
            self.root_x: np.ndarray | None = None  # the last root LP point separated (parallel split)
            self.root_calls = 0
            self.next_rounding = 5
            self.stats: dict[str, Any] = {  # diagnostics for the answer's details, as gurobi-bc's
                "enforce_calls": 0,
                "check_calls": 0,
                "sepa_calls": 0,
                "cuts_enforce": 0,
                "cuts_sepa": 0,
                "heuristic_solutions": 0,
                "rounding_tries": 0,
                "rounding_best": None,
                "deadline_enforcements": 0,
            }

        # -- helpers -------------------------------------------------------------------------
        def _values(self, solution) -> np.ndarray:
            return np.array([self.model.getSolVal(solution, v) for v in self.z])

        def _add_cut(self, core: tuple[int, ...]) -> bool:
            if core in self.known:
                return False
            self.known.add(core)
            self.new_cores.append(core)
            log.debug("core added (%d groups; %d cores in the model)", len(core), len(self.known))
            self.model.addCons(
                pyscipopt.quicksum(self.z[g] for g in core) >= 1,
                name=f"core{len(self.known)}",
                initial=CORE_ROWS_INITIAL,
                separate=True,
                enforce=True,
                check=True,
                propagate=True,
                local=False,
                removable=True,
            )
            return True

        def _add_pending(self) -> int:
            added = sum(self._add_cut(c) for c in self.pending)
            self.pending = []
            return added

        def _note_separable(self, keep: np.ndarray) -> None:
            """Remember a separable set (for the final hypothesis) and offer it to SCIP as a solution."""
            cost = note_cheapest_separable(self.best_keep, keep, self.W)
            if cost is not None and cost < self.model.getPrimalbound() - 1e-9:
                values = np.where(keep, 0.0, 1.0)
                # SCIP refuses (an error, not a verdict) values that contradict a global fixing,
                # e.g. a reduced-cost fixing that proves no better solution has that value: skip those
                if self._tz is None:
                    self._tz = [self.model.getTransformedVar(v) for v in self.z]
                for g, v in enumerate(self._tz):
                    lb, ub = v.getLbGlobal(), v.getUbGlobal()
                    if lb == ub and lb != values[g]:
                        return
                sol = self.model.createSol()
                for g, v in enumerate(self.z):
                    self.model.setSolVal(sol, v, values[g])
                if self.model.trySol(sol, printreason=False):
                    self.stats["heuristic_solutions"] += 1

        def _expired(self) -> bool:
            """Past the deadline (or interrupted): do the least that keeps SCIP sound, and ask it to stop."""
            if not self.deadline.expired():
                return False
            if not self.stop_requested:
                self.stop_requested = True
                self.deadline.note("branch-and-cut callbacks")
                try:
                    self.model.interruptSolve()
                except Exception:  # noqa: BLE001 - SCIP is past the stage where it can be interrupted
                    pass
            return True

        def _cores_of(self, keep: np.ndarray) -> tuple[list[tuple[int, ...]], int, np.ndarray]:
            repaired, cores, bad = benders.repair(self.sep, keep, self.W, self.yg, self.deadline)
            self.unverified += bad
            return [core_key(c) for c in cores], bad, repaired

        def _enforce_at_deadline(self, keep: np.ndarray, added: int) -> dict:
            """Past the deadline: one Farkas LP decides (a verified core is a cut; otherwise accept,
            as :meth:`_enforce` does when it has no proof), instead of the repair loop."""
            self.stats["deadline_enforcements"] += 1
            status, S = self.sep.find_core(keep)
            if status == CoreStatus.CORE and self._add_cut(core_key(S)):
                self.stats["cuts_enforce"] += 1
                return {"result": RESULT.CONSADDED}
            if status == CoreStatus.UNVERIFIED:
                self.unverified += 1
                self.accepted_unverified += 1
            return {"result": RESULT.CONSADDED if added else RESULT.FEASIBLE}

        def _enforce(self) -> dict:
            self.stats["enforce_calls"] += 1
            added = self._add_pending()
            keep = self._values(None) < 0.5
            if self._expired():
                return self._enforce_at_deadline(keep, added)
            cores, bad, repaired = self._cores_of(keep)
            if not cores and bad == 0:  # the claimed-correct set is separable: a real labeling
                self._note_separable(keep)
                return {"result": RESULT.CONSADDED if added else RESULT.FEASIBLE}
            n_new = sum(self._add_cut(c) for c in cores)
            self.stats["cuts_enforce"] += n_new
            if cores:
                self._note_separable(benders.add_back(self.sep, repaired, self.W, self.deadline))
            if added + n_new:
                return {"result": RESULT.CONSADDED}
            if not cores:
                # the LP calls the kept set non-separable but no core passed the exact check: no
                # proof, so accept (SCIP then solves a relaxation and its bound stays valid)
                self.accepted_unverified += 1
            # else: only cores that are already linear constraints of the model (a pseudo solution,
            # or rows not yet in the LP); the linear handler, enforced after this one, resolves them
            return {"result": RESULT.FEASIBLE}

        # -- SCIP callbacks ------------------------------------------------------------------
        def consenfolp(self, constraints, nusefulconss, solinfeasible):
            return self._enforce()

        def consenfops(self, constraints, nusefulconss, solinfeasible, objinfeasible):
            return self._enforce()

        def consenforelax(self, solution, constraints, nusefulconss, solinfeasible):
            return self._enforce()

        def conscheck(self, constraints, solution, checkintegrality, checklprows, printreason, completely):
            self.stats["check_calls"] += 1
            keep = self._values(solution) < 0.5
            status, S = self.sep.find_core(keep)
            if status == CoreStatus.SEPARABLE:
                return {"result": RESULT.FEASIBLE}
            if status == CoreStatus.CORE:  # rejected with a proof: an exactly verified core
                self.pending.append(core_key(S))
                return {"result": RESULT.INFEASIBLE}
            self.unverified += 1  # no proof: never reject (SCIP would use the verdict to prune)
            self.accepted_unverified += 1
            return {"result": RESULT.FEASIBLE}

        def _min_x_cores(self, x: np.ndarray) -> list[tuple[int, ...]]:
            """Violated cores of the LP point x (:func:`~oraclepriv.solvers.branch_and_cut.cover_separation.min_x_cores`)."""
            cores, unverified = min_x_cores(self.sep, x, self.known, self.model.getDepth() == 0, self._expired)
            self.unverified += unverified
            return cores

        def _rank_rounding(self, x: np.ndarray) -> list[tuple[int, ...]]:
            """Rank rounding of the root LP point (:func:`~oraclepriv.solvers.branch_and_cut.cover_separation.rank_rounding`):
            its separable sets are offered to SCIP; returns the verified cores met that x violates."""
            found = rank_rounding(self.sep, x, self.W, self.yg, self.deadline, self._expired)
            self.unverified += found.unverified
            note_rounding(self.stats, found, self.W)
            for keep in found.separable:
                self._note_separable(keep)
            return found.cores

        def conssepalp(self, constraints, nusefulconss):
            self.stats["sepa_calls"] += 1
            added = self._add_pending()
            if self._expired():
                return {"result": RESULT.CONSADDED if added else RESULT.DIDNOTFIND}
            x = self._values(None)
            if self.model.getDepth() == 0:
                self.root_x = x
            cores = self._min_x_cores(x)
            if self.model.getDepth() == 0 and not self.rounded:
                # round the root LP point when the root has converged (no violated core found) and,
                # on a long root, at root calls 5, 15, 45, ... (a time-limited call gets an early incumbent)
                self.root_calls += 1
                self.rounded = not cores
                if (
                    self.rounded or self.root_calls == self.next_rounding
                ) and self.model.getPrimalbound() > self.model.getDualbound() + 1e-9:
                    self.next_rounding = 3 * self.root_calls
                    cores += self._rank_rounding(x)
            if self.stats["sepa_calls"] % REPAIR_EVERY == 1 % REPAIR_EVERY:
                # primal side (SCIP's own heuristics are off): the rounded point, repaired by the
                # drop rule of benders.repair, is a separable set, offered as a solution; the
                # verified cores the repair met become cuts when x violates them
                keep, more, bad = benders.repair(self.sep, x < 0.5, self.W, self.yg, self.deadline)
                self.unverified += bad
                cores += violated(more, x)
                if bad == 0:
                    self._note_separable(keep)
            n_new = sum(self._add_cut(c) for c in cores)
            self.stats["cuts_sepa"] += n_new
            return {"result": RESULT.CONSADDED if added + n_new else RESULT.DIDNOTFIND}

        def conslock(self, constraint, locktype, nlockspos, nlocksneg):
            # covering rows sum z >= 1: decreasing any z may violate one, increasing never does
            for v in self.z:
                self.model.addVarLocksType(self.model.getTransformedVar(v), locktype, nlockspos, nlocksneg)

    return _CoreHandler


#: the handler class, once pyscipopt is imported (:func:`handler_class`); None before
CoreHandler = None


def handler_class(pyscipopt):
    """The constraint-handler class for this pyscipopt module (built once, then shared)."""
    global CoreHandler
    if CoreHandler is None:
        CoreHandler = _handler_class(pyscipopt)
    return CoreHandler


def install_handler(
    pyscipopt,
    model,
    z,
    sep: Separator,
    W: np.ndarray,
    yg: np.ndarray,
    known: set[tuple[int, ...]],
    deadline: Deadline | None = None,
):
    """Create the handler for the binaries ``z`` and include it in ``model``; returns the handler.

    Enforcement and check run at priority -100, before SCIP's linear handler (which holds the
    core rows), separation at priority 100, after it, at every SEPA_FREQ-th depth. The handler
    needs no constraint objects of its own and takes no part in propagation or presolving."""
    handler = handler_class(pyscipopt)(z, sep, W, yg, known, deadline)
    model.includeConshdlr(
        handler,
        "halfspace_cores",
        "lazy exactly verified non-separable cores",
        sepapriority=100,
        enfopriority=-100,
        chckpriority=-100,
        sepafreq=SEPA_FREQ,
        propfreq=-1,
        eagerfreq=-1,
        maxprerounds=0,
        needscons=False,
    )
    return handler
