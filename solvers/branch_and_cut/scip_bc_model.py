"""The SCIP model of ``scip-bc``: the hitting set over groups of points, with the halfspace left implicit.

One binary z_g per group g of identical (x, y) points (the groups of
:class:`oraclepriv.solvers.mip.milp.HalfspaceHittingSet`; z_g = 1 means "g is misclassified"), the
objective  sum_g W_g z_g  (W_g the group's summed reduced weight), the cover rows
sum_{g in C} z_g >= 1  of the cores already known, and *no* big-M rows. Which labelings a
halfspace realises is enforced by the constraint handler of
:mod:`oraclepriv.solvers.branch_and_cut.scip_bc_handler`. The model, and why its dual bound is a lower bound over
all halfspaces, is derived in ``docs/theory/cover-cut-model.md``; the SCIP parameters chosen here
are explained in ``docs/solvers/scip-bc.md``.

:func:`run_branch_and_cut` builds one such model (optionally restricted to a region of the
parallel search of :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_parallel`), solves it and returns plain data,
so it can also run in a worker process.

Deadlines and interrupts (``docs/deadlines.md``): SCIP's time limit is the time the call's
:class:`~oraclepriv.solvers.runtime.deadline.Deadline` leaves, and the constraint handler checks the same
deadline inside its callbacks (which can take longer than SCIP's own checks allow for). SCIP's
Ctrl-C handler is off (``misc/catchctrlc = FALSE``: it printed "pressed CTRL-C" on stdout and
returned the status "userinterrupt", which read as a solver failure). SCIP runs in a helper thread
(``optimizeNogil``); a Ctrl-C in the waiting thread expires the deadline (the handler's callbacks
return at once), calls ``interruptSolve`` and propagates as KeyboardInterrupt.
"""

from __future__ import annotations

import logging
import math
from typing import Any, TypedDict

import numpy as np
from oraclepriv.solvers.base import import_solver
from oraclepriv.solvers.branch_and_cut.cores import Separator
from oraclepriv.solvers.branch_and_cut.scip_bc_handler import install_handler
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace
from oraclepriv.solvers.runtime.interrupts import call_interruptibly

__all__ = ["TESTED_PYSCIPOPT", "ScipOptions", "import_pyscipopt", "build_model", "run_branch_and_cut", "not_started"]

#: the PySCIPOpt version this backend is tested with
TESTED_PYSCIPOPT = "6.3.0"
#: the known cores seeded into a model enter its LP at once (a region of the parallel search seeds
#: thousands and passes False: they then enter only when violated)
SEED_ROWS_INITIAL = True
#: separation frequency of SCIP's linear handler, which separates the core rows not yet in the LP
#: (SCIP's default 0 would separate them at the root only); None keeps SCIP's default
LINEAR_SEPAFREQ: int | None = 1

log = logging.getLogger(__name__)


class ScipOptions(TypedDict):
    """The backend's options every SCIP run of one call shares (keywords of :func:`run_branch_and_cut`)."""

    abs_gap: float
    threads: int
    output_flag: bool
    random_seed: int | None


def import_pyscipopt():
    """Import PySCIPOpt or raise SolverNotInstalledError saying what to install."""
    return import_solver("pyscipopt", backend="scip-bc", package="pyscipopt", tested=TESTED_PYSCIPOPT)


def _set_parameters(model, scip, *, abs_gap: float, threads: int, random_seed: int | None = None) -> None:
    """Gaps that prove optimality, and SCIP features switched off because they cannot see the
    handler's constraint or do not pay on a covering LP (``docs/solvers/scip-bc.md``); a
    ``random_seed`` shifts every random seed of SCIP and its LP solver (another search path)."""
    model.setParam("limits/gap", 0.0)
    if random_seed is not None:
        model.setParam("randomization/randomseedshift", int(random_seed))
    model.setParam("limits/absgap", float(abs_gap))
    model.setParam("lp/threads", threads)
    model.setParam("presolving/maxrestarts", 0)
    # Ctrl-C is ours (call_interruptibly), not SCIP's: its handler prints to stdout and swallows it
    model.setParam("misc/catchctrlc", False)
    if LINEAR_SEPAFREQ is not None:
        model.setParam("constraints/linear/sepafreq", LINEAR_SEPAFREQ)
    # symmetry handling sees only the rows and the objective, not the handler's constraint
    # (separability), so equal-weight points look interchangeable and symmetry-breaking constraints
    # would cut off real optima: off
    model.setParam("misc/usesymmetry", 0)
    # SCIP's primal heuristics (sub-MIPs such as RENS cannot see the handler either) are replaced by
    # the handler's own separable sets; pseudo-cost branching without strong branching, whose LPs
    # are expensive with many cut rows
    model.setHeuristics(scip.SCIP_PARAMSETTING.OFF)
    model.setParam("branching/pscost/priority", 100000)
    # Gomory, aggregation (c-MIR) and {0,1/2} cuts on covering rows: dense rows, no fewer nodes
    for sepa in ("gomory", "aggregation", "zerohalf"):
        model.setParam(f"separating/{sepa}/freq", -1)


def build_model(
    pyscipopt,
    sep: Separator,
    W: np.ndarray,
    yg: np.ndarray,
    cores: list[tuple[int, ...]],
    *,
    abs_gap: float,
    threads: int = 1,
    output_flag: bool = False,
    fix: dict[int, int] | None = None,
    seed_rows_initial: bool = SEED_ROWS_INITIAL,
    deadline: Deadline | None = None,
    priorities: np.ndarray | None = None,
    bound_rows: tuple[tuple[np.ndarray, float], ...] = (),
    random_seed: int | None = None,
):
    """The SCIP model over the groups (module docstring): returns (model, z, handler).

    ``cores`` are seeded as rows; ``fix`` (group -> 0/1) fixes variables (a region of the
    parallel search); ``deadline`` is the one the handler's callbacks honour. ``priorities``
    (one integer per group) are SCIP branching priorities; ``bound_rows`` are rows
    sum_{g in groups} W_g z_g >= rhs that the caller has proved for every halfspace (the part
    bounds of :mod:`oraclepriv.solvers.branch_and_cut.scip_bc_split`); ``random_seed`` as in :func:`_set_parameters`."""
    scip = pyscipopt
    model = scip.Model("scip-bc")
    if not output_flag:
        model.hideOutput()
    z = [model.addVar(name=f"z{g}", vtype="B", obj=float(W[g])) for g in range(W.size)]
    known: set[tuple[int, ...]] = set()
    for k, core in enumerate(cores):
        known.add(core)
        model.addCons(scip.quicksum(z[g] for g in core) >= 1, name=f"seed{k}", initial=seed_rows_initial)
    for k, (groups, rhs) in enumerate(bound_rows):
        model.addCons(scip.quicksum(float(W[g]) * z[g] for g in groups) >= float(rhs), name=f"part{k}")
    if priorities is not None:
        for g in np.flatnonzero(priorities):
            model.chgVarBranchPriority(z[g], int(priorities[g]))
    for fixed, value in (fix or {}).items():
        model.fixVar(z[fixed], float(value))
    handler = install_handler(pyscipopt, model, z, sep, W, yg, known, deadline)
    _set_parameters(model, scip, abs_gap=abs_gap, threads=threads, random_seed=random_seed)
    return model, z, handler


def _note_incumbents(pyscipopt, model, trace: IncumbentTrace) -> None:
    """Note every new best solution SCIP finds in ``trace`` (an event handler on BESTSOLFOUND)."""
    events = pyscipopt.SCIP_EVENTTYPE.BESTSOLFOUND

    class BestSolutionFound(pyscipopt.Eventhdlr):
        def eventinit(self):
            self.model.catchEvent(events, self)

        def eventexit(self):
            self.model.dropEvent(events, self)

        def eventexec(self, event):
            trace.note(self.model.getSolObjVal(self.model.getBestSol()))

    model.includeEventhdlr(BestSolutionFound(), "incumbent_trace", "notes SCIP's improving solutions with their time")


def not_started() -> dict[str, Any]:
    """The result of a search that never ran (no bound of its own), shaped like :func:`run_branch_and_cut`'s."""
    return {
        "raw": "notstarted",
        "nodes": 0,
        "dual": -math.inf,
        "primal": math.inf,
        "seconds": 0.0,
        "keeps": [],
        "new_cores": [],
        "unverified": 0,
        "accepted_unverified": 0,
        "stats": {},
        "start_accepted": False,
        "root_x": None,
    }


def run_branch_and_cut(
    pyscipopt,
    sep: Separator,
    W: np.ndarray,
    yg: np.ndarray,
    cores: list[tuple[int, ...]],
    *,
    start_keep: np.ndarray | None,
    time_limit: float | None,
    abs_gap: float,
    threads: int = 1,
    output_flag: bool = False,
    fix: dict[int, int] | None = None,
    objlimit: float | None = None,
    node_limit: int | None = None,
    seed_rows_initial: bool = SEED_ROWS_INITIAL,
    deadline: Deadline | None = None,
    priorities: np.ndarray | None = None,
    bound_rows: tuple[tuple[np.ndarray, float], ...] = (),
    trace: IncumbentTrace | None = None,
    random_seed: int | None = None,
) -> dict[str, Any]:
    """One SCIP branch-and-cut over the groups, optionally restricted to a region.

    ``fix``: group -> 0/1; ``objlimit``: only labelings strictly cheaper count (SCIP's status is
    then "infeasible" when the region has none); ``node_limit``: stop after that many nodes;
    ``start_keep``: the groups a start solution classifies correctly (offered to SCIP unless it
    contradicts ``fix``); ``deadline``: the call's deadline, which the handler's callbacks honour
    (``time_limit`` is SCIP's own limit); ``priorities`` and ``bound_rows`` as in :func:`build_model`;
    ``trace``: where SCIP's improving solutions are noted with their time (:mod:`oraclepriv.solvers.runtime.incumbents`);
    ``random_seed``: SCIP's seed shift (None: SCIP's default).
    A Ctrl-C raises KeyboardInterrupt (module docstring); a stop by the handler at the deadline
    reads as "timelimit".

    Returns plain data (also from a worker process): SCIP status (``raw``), nodes, dual and primal
    bound, seconds, the kept sets worth polishing (SCIP's best solution, then the handler's best
    separable sets), the new cores, the handler's counters, and the root LP point (``root_x``)."""
    deadline = Deadline(None) if deadline is None else deadline
    model, z, handler = build_model(
        pyscipopt,
        sep,
        W,
        yg,
        cores,
        abs_gap=abs_gap,
        threads=threads,
        output_flag=output_flag,
        fix=fix,
        seed_rows_initial=seed_rows_initial,
        deadline=deadline,
        priorities=priorities,
        bound_rows=bound_rows,
        random_seed=random_seed,
    )
    if trace is not None:
        _note_incumbents(pyscipopt, model, trace)
    if time_limit is not None:
        model.setParam("limits/time", max(float(time_limit), 1e-2))
    if node_limit is not None:
        model.setParam("limits/nodes", int(node_limit))
    if objlimit is not None:
        model.setObjlimit(float(objlimit))
    start_accepted = False
    if start_keep is not None and all(start_keep[g] == (v == 0) for g, v in (fix or {}).items()):
        start = model.createSol()
        for g, v in enumerate(z):
            model.setSolVal(start, v, 0.0 if start_keep[g] else 1.0)
        start_accepted = bool(model.addSol(start))

    def cancel() -> None:  # Ctrl-C in the waiting thread: the handler returns at once, SCIP stops
        deadline.interrupt()
        try:
            model.interruptSolve()
        except Exception:  # noqa: BLE001 - SCIP already past the stage where it can be interrupted
            pass

    call_interruptibly(model.optimizeNogil, cancel)
    if deadline.interrupted:
        raise KeyboardInterrupt
    raw = model.getStatus()
    if raw == "userinterrupt":  # only the handler calls interruptSolve otherwise: at the deadline
        raw = "timelimit"
    keeps = []
    if model.getNSols() > 0:
        best = model.getBestSol()
        keeps.append(np.array([model.getSolVal(best, v) for v in z]) < 0.5)
    keeps += [keep for _, keep in handler.best_keep]
    return {
        "raw": raw,
        "nodes": int(model.getNNodes()),
        "dual": float(model.getDualbound()),
        "primal": float(model.getPrimalbound()),
        "seconds": float(model.getSolvingTime()),
        "keeps": keeps,
        "new_cores": handler.new_cores + handler.pending,
        "unverified": handler.unverified,
        "accepted_unverified": handler.accepted_unverified,
        "stats": dict(handler.stats),
        "start_accepted": start_accepted,
        "root_x": handler.root_x,
    }
