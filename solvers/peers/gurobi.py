"""``gurobi``: the good big-M model for halfspace 0-1 ERM on Gurobi, a restricted-class peer in the benchmark.

The model an optimization researcher would build first: on the reduced problem (labels
flipped so that every weight is >= 0, :mod:`oraclepriv.oracle`), with the data mapped per column
onto [-1, 1] and identical (x, label) points merged into one group of summed weight,

    min  sum_g W_g z_g
    s.t. w.x'_g + b >= gamma - M_g z_g   (y_g = 1),   w.x'_g + b <= -gamma + M_g z_g   (y_g = 0),
         z_a + z_b >= 1 for the two groups of a point that carries both labels,
         w in [-1, 1]^d,  b in [-B, B],  z in {0, 1}^G,

with B = max_g ||x'_g||_1 + gamma and the data-derived M_g = gamma + ||x'_g||_1 + B, the smallest
constants for which z_g = 1 switches a row off (:class:`oraclepriv.solvers.mip.milp.HalfspaceMarginMilp`,
shared with ``highs``/``scip``/``pyomo`` under ``certify="margin"``). Gurobi runs with MIPGap 0, an
absolute gap below the weight lattice, one thread by default, and a time limit from the call's
deadline.

What its bound proves: optimality over the **restricted class** H_gamma of halfspaces whose
correctly classified points have margin >= gamma at ||w||_inf <= 1 on the scaled data, not over all
halfspaces (points closer than the margin to the best boundary count as errors). So, as for
``naive-highs``, :meth:`GurobiBackend.restriction` states that class and the protocol never marks
an answer ``certified``; it reports ``meets_bound`` with the restriction (``docs/theory/certification.md``,
``docs/theory/cover-cut-model.md`` section 5).

Why the solver's "optimal" proves nothing here (``docs/solvers/gurobi.md``): Gurobi accepts z_g
within IntFeasTol of 0 as 0, and in a big-M row that relaxes the margin by M_g * IntFeasTol. With
Gurobi's default tolerances and a small margin (gamma = 1e-5) the (w, b) of an "OPTIMAL" answer can
misclassify points its z counts as correct. The backend therefore (a) by default tightens
FeasibilityTol and IntFeasTol until gamma dominates them (``tolerances="margin"``); (b) rebuilds the
hypothesis from (w, b), or from the max-margin LP over the groups the solution claims correct, and
records Gurobi's own objective beside the re-scored loss of Gurobi's (w, b)
(``details["claim_mismatch"]``); (c) says ``optimal`` only when the best real hypothesis meets the
proved bound. The protocol re-scores whatever is returned.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from oraclepriv.solvers.base import MAX_RANDOM_SEED, Backend, BackendAnswer, ReducedProblem, Status
from oraclepriv.solvers.mip.heuristics import Candidates
from oraclepriv.solvers.mip.milp import (
    DEFAULT_GAMMA,
    GAMMA_RANGE,
    GAMMA_WHY,
    HalfspaceMarginMilp,
    gap_rule,
    heuristic_halfspaces,
    lattice_round_up,
)
from oraclepriv.solvers.peers.gurobi_env import (
    GuardedSolve,
    gurobi_env,
    import_gurobipy,
    licence_details,
    licence_limit,
    licence_works,
    objective_bound,
    set_common_parameters,
)
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace

from oraclepriv.hypotheses import Halfspace

__all__ = ["GurobiBackend", "TOLERANCES", "add_milp_rows"]

#: "margin": FeasibilityTol and IntFeasTol tightened so that gamma dominates what they let a big-M
#: row slip (HalfspaceMarginMilp.feasibility_tolerance); "default": Gurobi's own (1e-6, 1e-5)
TOLERANCES = ("margin", "default")
#: Gurobi's smallest accepted FeasibilityTol / IntFeasTol
_MIN_TOL = 1e-9
#: seconds kept back from Gurobi for the max-margin polishing LP (a few ms at n = 600)
POLISH_RESERVE = 0.05


def add_milp_rows(gp, model, x, milp) -> None:
    """Add the rows row_lower <= A x <= row_upper of a MilpArrays to a Gurobi model (matrix form)."""
    A = milp.A
    lower, upper = milp.row_lower, milp.row_upper
    for sense, rhs in ((gp.GRB.GREATER_EQUAL, lower), (gp.GRB.LESS_EQUAL, upper)):
        rows = np.flatnonzero(np.isfinite(rhs))
        if rows.size:
            model.addMConstr(A[rows], x, sense, rhs[rows])


def check_options(backend: Backend) -> tuple[int, bool, int | None]:
    """(threads, output_flag, random_seed) of a Gurobi backend's config, validated (threads default
    1; random_seed None or in [0, 2^31 - 1], Gurobi's ``Seed``)."""
    threads = backend.int_option("threads", 1, 1)
    assert threads is not None
    seed = backend.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
    return threads, backend.flag_option("output_flag", False), seed


class GurobiBackend(Backend):
    """The big-M halfspace model on Gurobi; its bound holds over a restricted class only.

    Solves the model of the module docstring. Answers report ``meets_bound`` with the restriction
    stated (margin >= gamma at ||w||_inf <= 1 on [-1, 1]-scaled data), never ``certified``.

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the whole call; None for no limit.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        gamma : float, default 1e-3
            The margin on [-1, 1]-scaled data, in [1e-6, 0.5].
        tolerances : {"margin", "default"}, default "margin"
            Gurobi's FeasibilityTol and IntFeasTol: tightened so that gamma dominates them, or
            Gurobi's defaults (which can make "OPTIMAL" answers wrong at small gamma; module docstring).
        threads : int, default 1
            Gurobi threads.
        output_flag : bool, default False
            Print Gurobi's log (on stdout; off by default).
        random_seed : int or None, default None
            Gurobi's ``Seed``, in [0, 2^31 - 1] (None: Gurobi's default); another search path.

    References
    ----------
    .. [1] Gurobi Optimization, "Gurobi Optimizer Reference Manual" (MIPGap, IntFeasTol,
       FeasibilityTol), https://docs.gurobi.com.
    .. [2] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).
    .. [3] ``docs/theory/cover-cut-model.md``, sections 2 and 5 (big-M models, restricted classes).
    """

    name = "gurobi"
    requires = ("gurobipy",)
    classes = frozenset({"halfspace"})
    options = frozenset({"gamma", "tolerances", "threads", "output_flag", "random_seed"})

    @classmethod
    def is_installed(cls) -> bool:
        """True when gurobipy imports and its licence solves a tiny model."""
        return super().is_installed() and licence_works()

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.gamma = gamma = self.number_option("gamma", DEFAULT_GAMMA, *GAMMA_RANGE, GAMMA_WHY)
        self.tolerances = self.choice_option("tolerances", "margin", TOLERANCES)
        self.threads, self.output_flag, self.random_seed = check_options(self)
        self.certificate = (
            f"big-M baseline: bound is Gurobi's dual bound of the margin-{gamma:g} model with ||w||_inf <= 1 on "
            "[-1,1]-scaled data; meets_bound means optimal over that restricted margin class only, never "
            "certified over all halfspaces"
        )
        self._gp = import_gurobipy("gurobi")

    def restriction(self, hypothesis_class: str) -> str | None:
        """Always restricted: halfspaces with margin >= gamma at ||w||_inf <= 1 on the scaled data."""
        return (
            f"halfspaces whose correctly classified points have margin >= {self.gamma:g} at ||w||_inf <= 1 "
            "on the [-1,1]-scaled data"
        )

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        gp = self._gp
        GRB = gp.GRB
        deadline = self.deadline(problem)
        X, y, w = problem.X, problem.y, problem.w
        total = float(w.sum())
        tol = 1e-9 * max(1.0, total)
        abs_gap, q = gap_rule(w)
        trace = IncumbentTrace.for_deadline(deadline)
        cands = Candidates(X, y, w, trace=trace)
        for i, h in enumerate(heuristic_halfspaces(X, y, w)):
            cands.add(f"heuristic-{i}", h)
        form = HalfspaceMarginMilp(X, y, self.gamma)
        milp = form.milp
        conflict = form.groups.conflict_bound(w)
        details: dict[str, Any] = form.details()
        details.update(
            {"formulation": "big-M (margin, [-1,1]-scaled, merged duplicates)", "tolerances": self.tolerances}
        )
        bound, nodes = max(conflict, 0.0), 0
        status: Status = "error"
        model = gp.Model(env=gurobi_env(gp))
        try:
            x = model.addMVar(
                milp.num_cols,
                lb=milp.col_lower,
                ub=milp.col_upper,
                vtype=np.where(milp.integer, GRB.BINARY, GRB.CONTINUOUS),
            )
            model.setObjective(form.costs(y, w)[0] @ x, GRB.MINIMIZE)
            add_milp_rows(gp, model, x, milp)
            self._set_parameters(model, abs_gap, form)
            start = cands.best()[2]
            assert isinstance(start, Halfspace)  # every candidate is a heuristic halfspace
            x.Start = form.encode(start)
            outcome = GuardedSolve(gp, deadline, trace=trace).run(
                model, deadline.solver_seconds(reserve=POLISH_RESERVE)
            )
            nodes = int(model.NodeCount)
            status = self._status(gp, outcome)
            dual = objective_bound(model)
            if math.isfinite(dual):
                bound = max(lattice_round_up(dual, q, total), conflict, 0.0)
            details.update(
                {"gurobi_status": outcome.status_name, "gurobi_dual_bound": dual, "gurobi_seconds": outcome.seconds}
            )
            if model.SolCount > 0:
                values = np.asarray(x.X, dtype=np.float64)
                self._read_solution(form, values, float(model.ObjVal), cands, details, deadline, tol)
        except gp.GurobiError as exc:
            if not licence_limit(exc):
                details["error"] = f"gurobi: GurobiError {getattr(exc, 'errno', None)}: {exc}"
            else:
                details.update(licence_details(exc, self.name, milp.num_cols, milp.num_rows))
            status = "error"
        finally:
            model.dispose()
        loss, source, hypothesis = cands.best()
        if status == "optimal" and loss > bound + tol:
            status = "feasible"  # Gurobi's OPTIMAL, but no real halfspace found attains its bound
        details.update(
            {
                "conflict_bound": conflict,
                "weight_lattice": q,
                "mip_abs_gap": abs_gap,
                "hypothesis_source": source,
                "hypothesis_reduced_loss": loss,
                "candidates": {src: value for value, src, _ in cands.items},
                "incumbents": trace.to_list(),
            }
        )
        return BackendAnswer(hypothesis, bound=float(bound), status=status, nodes=nodes, details=details)

    def _set_parameters(self, model, abs_gap: float, form: HalfspaceMarginMilp) -> None:
        set_common_parameters(model, output_flag=self.output_flag, threads=self.threads, random_seed=self.random_seed)
        params = model.Params
        params.MIPGap = 0.0
        params.MIPGapAbs = float(abs_gap)
        if self.tolerances == "margin":
            tight = max(form.feasibility_tolerance(), _MIN_TOL)
            params.FeasibilityTol = min(tight, 1e-6)
            params.IntFeasTol = min(tight, 1e-5)

    @staticmethod
    def _status(gp: Any, outcome: Any) -> Status:
        if outcome.status == gp.GRB.OPTIMAL:
            return "optimal"
        if outcome.status == gp.GRB.TIME_LIMIT or outcome.deadline_stop:
            return "time_limit"
        return "error"

    @staticmethod
    def _read_solution(
        form: HalfspaceMarginMilp,
        values: np.ndarray,
        claim: float,
        cands: Candidates,
        details: dict[str, Any],
        deadline: Deadline,
        tol: float,
    ) -> None:
        """Gurobi's (w, b) and the max-margin halfspace of the groups it claims correct become
        candidates; Gurobi's own objective is recorded beside the re-scored loss of its (w, b)."""
        from oraclepriv.solvers.branch_and_cut.scip_bc import ScipBcBackend  # the max-margin polish (HiGHS LP)

        own = form.decode(values)
        cands.add("gurobi-wb", own)
        own_loss = cands.items[-1][0]
        t0 = time.perf_counter()
        keep = form.correct_mask(values)
        cands.add("gurobi-polished", ScipBcBackend._polish(form, keep, deadline.solver_seconds(minimum=POLISH_RESERVE)))
        details.update(
            {
                "gurobi_objective": claim,
                "gurobi_solution_loss": own_loss,
                # Gurobi's (w, b) makes more (weighted) errors than its objective claims
                "claim_mismatch": bool(own_loss > claim + max(tol, 1e-6)),
                "polish_seconds": time.perf_counter() - t0,
            }
        )
