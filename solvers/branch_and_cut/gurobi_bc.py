"""``gurobi-bc``: exact, margin-free halfspace ERM by the cover-cut branch-and-cut of ``scip-bc``, run by Gurobi.

Problem: the reduced weighted ERM of the oracle protocol (Block, Bun, Desai, Shetty, Wu,
"Oracle-Efficient Differentially Private Learning with Public Data", Def. 4; labels flipped so that
every weight is >= 0): min over closed halfspaces h of  sum_i w_i 1[h(x_i) != y_i].

Method: the same model as ``scip-bc`` (:mod:`oraclepriv.solvers.branch_and_cut.scip_bc`): the maximum feasible
subsystem branch-and-cut of Pfetsch with the combinatorial Benders (cover) cuts of Codato and
Fischetti. One binary "misclassified" variable per group of identical points, no big-M rows, no
(w, b) in the model; the separability of the groups claimed correct is a lazy constraint enforced
by Gurobi's lazy-constraint callback (:mod:`oraclepriv.solvers.branch_and_cut.gurobi_bc_callback`), which adds a
cover cut over every exactly verified non-separable core it needs. The solver-independent pieces are
the project's own, imported: the groups and cores (:class:`~oraclepriv.solvers.mip.milp.HalfspaceHittingSet`),
the Farkas LPs and the exact check (:mod:`oraclepriv.solvers.branch_and_cut.cores`), the repair and add-back
heuristics (:class:`~oraclepriv.solvers.mip.mipbackend.MipBackend`) and the max-margin polishing LP.

What ``certified`` means: Gurobi's dual bound is a lower bound over *all* halfspaces, because every
row of its model is a cover cut over a core verified in exact arithmetic and a solution is rejected
only with such a core (``docs/theory/cover-cut-model.md``, section 3); the protocol re-scores the
returned (w, b) and certifies it when it meets the bound. As in ``scip-bc``, a bound that a found
halfspace beats is withdrawn, and "finished" without a real halfspace attaining the bound is
reported as an error, never as optimal. Design and measurements: ``docs/solvers/gurobi.md``.

Deadline and interrupts (``docs/deadlines.md``): the start heuristics may use at most
:data:`~oraclepriv.solvers.mip.mipbackend.HEURISTIC_SHARE` of the time left; Gurobi gets the rest minus
the time one polishing LP took; the callback honours the same deadline and terminates the solve;
Ctrl-C raises KeyboardInterrupt (:class:`~oraclepriv.solvers.peers.gurobi_env.GuardedSolve`). A model the
size-limited licence refuses is answered with status ``"error"`` and ``details["licence_limit"]``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem
from oraclepriv.solvers.branch_and_cut.cores import Separator
from oraclepriv.solvers.branch_and_cut.gurobi_bc_callback import CoverCutCallback
from oraclepriv.solvers.combinatorial.local_search import LOCAL_SEARCH_SECONDS, search_from_start
from oraclepriv.solvers.mip import benders
from oraclepriv.solvers.mip.heuristics import Candidates
from oraclepriv.solvers.mip.milp import HalfspaceHittingSet, gap_rule, heuristic_halfspaces, lattice_round_up
from oraclepriv.solvers.mip.mipbackend import HEURISTIC_SHARE, HittingSetCache
from oraclepriv.solvers.peers import gurobi_env as genv
from oraclepriv.solvers.peers.gurobi import check_options
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace

from oraclepriv.hypotheses import Halfspace

__all__ = ["GurobiBcBackend", "SEED_ROWS"]

#: at most this many known cores enter the model as rows (the rest stay in the callback's pool and
#: are added lazily when violated): the size-limited licence counts rows, not lazy constraints
SEED_ROWS = 1000


def _polish(form: HalfspaceHittingSet, keep: np.ndarray, seconds: float | None) -> Halfspace | None:
    from oraclepriv.solvers.branch_and_cut.scip_bc import (
        ScipBcBackend,  # the max-margin LP over the kept groups (HiGHS)
    )

    return ScipBcBackend._polish(form, keep, seconds)


class GurobiBcBackend(Backend):
    """Exact halfspace oracle: Gurobi branch-and-cut with lazy, exactly verified core cuts.

    Solves the reduced problem (weights >= 0) over all closed halfspaces ``1[w.x + b >= 0]``,
    margin-free; the bound is Gurobi's dual bound over cover cuts that every halfspace satisfies, so
    a certified answer is optimal over the whole class (module docstring).

    Parameters
    ----------
    time_limit : float or None, default None
        Wall-clock seconds for the whole call; None for no limit.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        threads : int, default 1
            Gurobi threads.
        output_flag : bool, default False
            Print Gurobi's log (on stdout; off by default).
        local_search : float, default 5.0
            As for ``scip-bc``: seconds of iterated local search over hyperplanes from the best start
            halfspace on noisy instances (:func:`~oraclepriv.solvers.combinatorial.local_search.search_from_start`); 0: off.
        random_seed : int or None, default None
            In [0, 2^31 - 1]: Gurobi's ``Seed`` and the local search's seed (None: Gurobi's default and
            seed 0). Exact either way; the seed changes the search path and a time-limited call's incumbent.

    Raises
    ------
    ValueError
        An unknown option or an invalid value.
    oraclepriv.solvers.base.SolverNotInstalledError
        gurobipy cannot be imported.

    See Also
    --------
    oraclepriv.solvers.branch_and_cut.scip_bc.ScipBcBackend : the same model in SCIP, with a constraint handler.

    References
    ----------
    .. [1] M. E. Pfetsch, "Branch-and-cut for the maximum feasible subsystem problem", SIAM J.
       Optim. 19(1), 2008.
    .. [2] G. Codato, M. Fischetti, "Combinatorial Benders' cuts for mixed-integer linear
       programming", Oper. Res. 54(4), 2006.
    .. [3] Gurobi Optimization, "Gurobi Optimizer Reference Manual" (LazyConstraints, callbacks),
       https://docs.gurobi.com.
    """

    name = "gurobi-bc"
    requires = ("gurobipy",)
    classes = frozenset({"halfspace"})
    options = frozenset({"threads", "output_flag", "local_search", "random_seed"})
    certificate = (
        "halfspaces: bound = Gurobi's dual bound of the branch-and-cut over exactly verified non-separable "
        "cores (lazy cover cuts), a proved lower bound over all halfspaces (margin-free)"
    )

    @classmethod
    def is_installed(cls) -> bool:
        """True when gurobipy imports and its licence solves a tiny model."""
        return super().is_installed() and genv.licence_works()

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.threads, self.output_flag, self.random_seed = check_options(self)
        self.local_search = self.seconds_option("local_search", LOCAL_SEARCH_SECONDS)
        self._gp = genv.import_gurobipy("gurobi-bc")
        self._cache = HittingSetCache()

    def _hitting_set(self, X: np.ndarray, y: np.ndarray) -> tuple[HalfspaceHittingSet, Separator, bool]:
        """The cached (groups with their core pool, separator) for these points and reduced labels."""
        return self._cache.get(X, y)

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        deadline = self.deadline(problem)
        try:
            return self._solve(problem, deadline)
        except BaseException:  # an interrupt may leave the kept core pool half-updated: drop it
            self._cache.clear()
            raise

    def _solve(self, problem: ReducedProblem, deadline: Deadline) -> BackendAnswer:
        t_start = time.perf_counter()
        X, y, w = problem.X, problem.y, problem.w
        total = float(w.sum())
        tol = 1e-9 * max(1.0, total)
        trace = IncumbentTrace.for_deadline(deadline)
        cands = Candidates(X, y, w, trace=trace)
        heuristics = heuristic_halfspaces(X, y, w)  # the two constants first
        cands.add("constant-1", heuristics[0])
        cands.add("constant-0", heuristics[1])
        for i, h in enumerate(heuristics[2:]):
            cands.add(f"heuristic-{i}", h)
        if np.all(X == X[0]):  # one distinct point: only the two constant labelings exist
            loss, source, constant = cands.best()
            return BackendAnswer(
                constant,
                bound=loss,
                status="optimal",
                nodes=0,
                details={"hypothesis_source": source, "incumbents": trace.to_list()},
            )
        form, sep, reused = self._hitting_set(X, y)
        W = form.groups.group_weights(w)
        yg = form.yg
        abs_gap, q = gap_rule(w)
        cores_before, lp_before = len(form.cores), sep.lp_calls

        # primal heuristic, within a share of the time left: repair the all-points set, extend it and
        # the heuristics' correct sets greedily, polish each into a real halfspace
        heuristic = deadline.share(HEURISTIC_SHARE)
        keep_all, cores, bad = benders.repair(sep, np.ones(form.groups.size, dtype=bool), W, yg, heuristic)
        form.add_cores(cores)
        starts = [("repair-all", benders.add_back(sep, keep_all, W, heuristic))]
        for _, source, seed in sorted(cands.items, key=lambda c: c[0])[:3]:
            if source.startswith("heuristic") and not heuristic.expired():
                keep_h = seed.predict(form.groups.X) == yg
                starts.append((f"{source}-addback", benders.add_back(sep, keep_h, W, heuristic)))
        polish_seconds = 0.0
        for source, keep in starts:
            t0 = time.perf_counter()
            cands.add(source, _polish(form, keep, deadline.solver_seconds()))
            polish_seconds = max(polish_seconds, time.perf_counter() - t0)
        loss, _, start = cands.best()  # the same start heuristics as scip-bc, local search included
        assert isinstance(start, Halfspace)  # every candidate of this halfspace backend is one
        cands.add(
            "local-search", search_from_start(X, y, w, start, loss, deadline, self.local_search, self.random_seed or 0)
        )
        heuristic_seconds = time.perf_counter() - t_start
        start_keep = cands.best()[2].predict(form.groups.X) == yg

        run = self._branch_and_cut(form, sep, W, start_keep, abs_gap, deadline, polish_seconds, trace)
        for k, keep in enumerate(run["keeps"]):
            if k > 0 and deadline.expired():
                deadline.note("final polishing")
                break
            cands.add(f"gurobi-{k}", _polish(form, keep, deadline.solver_seconds(minimum=max(polish_seconds, 0.05))))
        form.add_cores(run["new_cores"])

        status, dual = run["status"], run["dual"]
        conflict = form.groups.conflict_bound(w)
        bound = max(conflict, 0.0)
        if math.isfinite(dual) and status != "error":
            bound = max(lattice_round_up(dual, q, total), bound)
        loss, source, hypothesis = cands.best()
        invalid_bound = loss < bound - tol  # a real halfspace beats the "proved" bound: never report it
        if invalid_bound:
            bound = max(conflict, 0.0)
            status = "optimal" if loss <= bound + tol else "error"
        if status == "optimal" and loss > bound + tol:
            status = "error"  # Gurobi finished, but no real halfspace attains its bound
        details: dict[str, Any] = form.details()
        details.update(run["details"])
        details.update(
            {
                "method": "branch-and-cut (Gurobi lazy constraints)",
                "certificate": self.certificate,
                "gurobi_bound_contradicted": bool(invalid_bound),
                "heuristic_seconds": heuristic_seconds,
                "polish_seconds": polish_seconds,
                "cores_total": len(form.cores),
                "cores_new": len(form.cores) - cores_before,
                "cores_unverified": run["unverified"] + bad,
                "separation_lps": sep.lp_calls - lp_before,
                "model_reused": reused,
                "weight_lattice": q,
                "mip_abs_gap": abs_gap,
                "conflict_bound": conflict,
                "hypothesis_source": source,
                "hypothesis_reduced_loss": loss,
                "candidates": {src: value for value, src, _ in cands.items},
                "incumbents": trace.to_list(),
            }
        )
        return BackendAnswer(hypothesis, bound=float(bound), status=status, nodes=run["nodes"], details=details)

    def _branch_and_cut(
        self,
        form: HalfspaceHittingSet,
        sep: Separator,
        W: np.ndarray,
        start_keep: np.ndarray,
        abs_gap: float,
        deadline: Deadline,
        polish_seconds: float,
        trace: IncumbentTrace,
    ) -> dict[str, Any]:
        """One Gurobi run over the groups: status, dual bound, nodes, kept sets to polish, new cores
        (the solutions the callback accepts are noted in ``trace``)."""
        gp = self._gp
        GRB = gp.GRB
        out: dict[str, Any] = {
            "status": "time_limit",
            "dual": -math.inf,
            "nodes": 0,
            "keeps": [],
            "new_cores": [],
            "unverified": 0,
            "details": {"gurobi_status": "NOT_STARTED"},
        }
        if deadline.expired():
            deadline.note("branch-and-cut (not started)")
            return out
        G = W.size
        seeded = form.cores[:SEED_ROWS]
        model = gp.Model(env=genv.gurobi_env(gp))
        try:
            z = model.addVars(G, vtype=GRB.BINARY, obj=W.tolist())
            zl = [z[g] for g in range(G)]
            for core in seeded:
                model.addConstr(gp.quicksum(zl[g] for g in core) >= 1)
            genv.set_common_parameters(
                model, output_flag=self.output_flag, threads=self.threads, random_seed=self.random_seed
            )
            params = model.Params
            params.LazyConstraints = 1
            params.MIPGap = 0.0
            params.MIPGapAbs = float(abs_gap)
            # symmetry detection and dual reductions see the rows and the objective, not the lazy
            # separability constraint: off, as in scip-bc (docs/theory/cover-cut-model.md, section 3)
            params.Symmetry = 0
            params.DualReductions = 0
            # most-fractional branching: far fewer nodes than Gurobi's default on the issue suite
            # (measured in docs/solvers/gurobi.md, section 2)
            params.VarBranch = 2
            for g in range(G):
                zl[g].Start = 0.0 if start_keep[g] else 1.0
            callback = CoverCutCallback(gp, zl, sep, W, form.yg, list(form.cores), deadline, trace)
            remaining = deadline.solver_seconds(reserve=min(polish_seconds, 0.25 * (deadline.remaining() or 0.0)))
            outcome = genv.GuardedSolve(gp, deadline, callback).run(model, remaining)
            if outcome.status == GRB.OPTIMAL:
                out["status"] = "optimal"
            elif outcome.status == GRB.TIME_LIMIT or outcome.deadline_stop:
                out["status"] = "time_limit"
            else:
                out["status"] = "error"
            out["dual"] = genv.objective_bound(model)
            out["nodes"] = int(model.NodeCount)
            keeps = []
            if model.SolCount > 0:
                keeps.append(np.array([v.X for v in zl]) < 0.5)
            out["keeps"] = keeps + [keep for _, keep in callback.best_keep]
            out["new_cores"] = callback.new_cores
            out["unverified"] = callback.unverified
            out["details"] = {
                "gurobi_status": outcome.status_name,
                "gurobi_dual_bound": out["dual"],
                "gurobi_primal_bound": float(model.ObjVal) if model.SolCount > 0 else math.inf,
                "gurobi_seconds": outcome.seconds,
                "cores_seeded": len(seeded),
                "accepted_unverified": callback.accepted_unverified,
                **callback.stats,
            }
        except gp.GurobiError as exc:
            out["status"] = "error"
            if genv.licence_limit(exc):
                out["details"] = genv.licence_details(exc, self.name, G, len(seeded))
            else:
                out["details"] = {"error": f"gurobi-bc: GurobiError {getattr(exc, 'errno', None)}: {exc}"}
        finally:
            model.dispose()
        return out
