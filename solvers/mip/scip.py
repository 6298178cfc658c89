"""``scip``: exact weighted 0-1 ERM as mixed-integer programs solved by SCIP through OR-Tools.

Same formulations (:mod:`oraclepriv.solvers.mip.milp`) and the same search/certification flow
(:class:`oraclepriv.solvers.mip.mipbackend.MipBackend`, which documents what ``certified`` means per
``certify`` mode) as ``highs``; only the solver adapter differs. With the default
``method="cuts"`` SCIP solves the hitting-set masters while the small separation LPs
(:class:`oraclepriv.solvers.branch_and_cut.cores.Separator`) run on HiGHS. The model is built once per set
of points with ``pywraplp.Solver.CreateSolver("SCIP")``; a later call on the same points only
changes objective coefficients (MPSolver re-extracts the model for SCIP on ``Solve``, so the
saving is the Python-side build). Integer optimality is proven with SCIP's native
``limits/gap = 0`` and ``limits/absgap`` from :func:`oraclepriv.solvers.mip.gaps.gap_rule`
(``SetSolverSpecificParametersAsString``); the time limit is passed in milliseconds; warm
starts go through ``SetHint``; ``bound`` is ``Objective().BestBound()`` (SCIP's dual bound).

Status: OPTIMAL -> "optimal"; FEASIBLE / NOT_SOLVED when the time limit was reached ->
"time_limit" (otherwise "error"); INFEASIBLE -> "infeasible"; anything else -> "error".
A dual bound is only read when SCIP returned OPTIMAL or FEASIBLE.

Deadlines and interrupts (``docs/deadlines.md``): the model build checks the call's deadline every
:data:`BUILD_CHECK_ROWS` rows; SCIP's own Ctrl-C handler is off (``misc/catchctrlc = FALSE``: it
printed "pressed CTRL-C" on stdout and returned a failure status), and a Ctrl-C while SCIP runs
(in a helper thread, MPSolver releases the GIL) stops it with ``InterruptSolve`` and propagates as
KeyboardInterrupt.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from oraclepriv.solvers.base import SolverNotInstalledError, Status, import_solver
from oraclepriv.solvers.mip.milp import MilpArrays
from oraclepriv.solvers.mip.mipbackend import MipBackend, MipRun, document_mip_options
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.interrupts import call_interruptibly

__all__ = ["ScipBackend", "ScipModel", "import_pywraplp", "TESTED_ORTOOLS"]

TESTED_ORTOOLS = "9.15.6755"
_NO_LIMIT_MS = 2**40  # MPSolver wants an integer number of milliseconds
#: the model build checks the deadline every this many rows (``docs/deadlines.md``)
BUILD_CHECK_ROWS = 1000


def import_pywraplp():
    """Import OR-Tools' MPSolver wrapper or raise SolverNotInstalledError saying what to install."""
    return import_solver("ortools.linear_solver.pywraplp", backend="scip", package="ortools", tested=TESTED_ORTOOLS)


class ScipModel:
    """A persistent MPSolver/SCIP model of one :class:`~oraclepriv.solvers.mip.milp.MilpArrays`."""

    def __init__(
        self,
        pywraplp,
        milp: MilpArrays,
        *,
        output_flag: bool = False,
        threads: int | None = None,
        random_seed: int | None = None,
        deadline: Deadline | None = None,
    ):
        solver = pywraplp.Solver.CreateSolver("SCIP")
        if solver is None:
            raise SolverNotInstalledError("backend 'scip': this ortools build has no SCIP solver")
        self.pywraplp = pywraplp
        self.milp = milp
        self.solver = solver
        self.output_flag = output_flag
        self.random_seed = random_seed
        if output_flag:
            solver.EnableOutput()
        else:
            solver.SuppressOutput()
        if threads is not None:
            solver.SetNumThreads(int(threads))
        inf = solver.infinity()

        def clip(v: float) -> float:
            return v if math.isfinite(v) else math.copysign(inf, v)

        self.vars = [
            (solver.IntVar if milp.integer[j] else solver.NumVar)(
                clip(milp.col_lower[j]), clip(milp.col_upper[j]), f"x{j}"
            )
            for j in range(milp.num_cols)
        ]
        A = milp.A
        for r in range(A.shape[0]):
            if deadline is not None and r % BUILD_CHECK_ROWS == 0:
                deadline.check("model build (scip)")
            ct = solver.RowConstraint(clip(milp.row_lower[r]), clip(milp.row_upper[r]), f"r{r}")
            for k in range(A.indptr[r], A.indptr[r + 1]):
                ct.SetCoefficient(self.vars[A.indices[k]], float(A.data[k]))
        self.objective = solver.Objective()
        self.objective.SetMinimization()
        self.is_mip = bool(milp.integer.any())
        self.set_costs(milp.cost)

    def set_costs(self, cost: np.ndarray) -> None:
        for var, c in zip(self.vars, np.asarray(cost, dtype=np.float64)):
            self.objective.SetCoefficient(var, float(c))

    def run(
        self,
        time_limit: float | None,
        *,
        abs_gap: float = 0.0,
        feasibility_tolerance: float | None = None,
        start: np.ndarray | None = None,
    ) -> MipRun:
        solver, S = self.solver, self.pywraplp.Solver
        solver.set_time_limit(_NO_LIMIT_MS if time_limit is None else max(1, int(math.ceil(time_limit * 1000))))
        params = [
            "limits/gap = 0",
            f"limits/absgap = {float(abs_gap)!r}",
            f"numerics/feastol = {float(feasibility_tolerance or 1e-6)!r}",
            "misc/catchctrlc = FALSE",
        ]
        if self.random_seed is not None:
            params.append(f"randomization/randomseedshift = {int(self.random_seed)}")
        if not self.output_flag:
            params.append("display/verblevel = 0")
        if not solver.SetSolverSpecificParametersAsString("\n".join(params) + "\n"):
            raise RuntimeError(f"backend 'scip': SCIP rejected the parameters {params}")
        accepted = None
        if start is not None:
            solver.SetHint(self.vars, [float(v) for v in start])
            accepted = True  # MPSolver gives no feedback; SCIP repairs or drops an infeasible hint
        else:
            solver.SetHint([], [])
        t0 = time.perf_counter()
        code = call_interruptibly(solver.Solve, solver.InterruptSolve)
        seconds = time.perf_counter() - t0
        names = {
            S.OPTIMAL: "OPTIMAL",
            S.FEASIBLE: "FEASIBLE",
            S.INFEASIBLE: "INFEASIBLE",
            S.UNBOUNDED: "UNBOUNDED",
            S.ABNORMAL: "ABNORMAL",
            S.NOT_SOLVED: "NOT_SOLVED",
            S.MODEL_INVALID: "MODEL_INVALID",
        }
        raw = names.get(code, str(code))
        hit_limit = time_limit is not None and seconds >= 0.95 * time_limit
        status: Status
        if code == S.OPTIMAL:
            status = "optimal"
        elif code in (S.FEASIBLE, S.NOT_SOLVED):
            status = "time_limit" if hit_limit else "error"
        elif code == S.INFEASIBLE:
            status = "infeasible"
        else:
            status = "error"
        has_solution = code in (S.OPTIMAL, S.FEASIBLE)
        x = np.array([v.solution_value() for v in self.vars]) if has_solution else None
        primal = float(self.objective.Value()) if has_solution else math.inf
        if has_solution and self.is_mip:
            dual = float(self.objective.BestBound())
        elif code == S.OPTIMAL:
            dual = primal
        else:
            dual = -math.inf
        if not math.isfinite(dual):
            dual = -math.inf
        nodes = int(solver.nodes()) if self.is_mip else 0
        gap = 0.0 if not (has_solution and math.isfinite(dual)) else abs(primal - dual) / max(1e-10, abs(primal))
        return MipRun(status, raw, x, dual, primal, nodes, gap, seconds, accepted)


@document_mip_options
class ScipBackend(MipBackend):
    """SCIP MIP oracle (through OR-Tools' MPSolver) for thresholds, stumps and halfspaces.

    The models and the search/certification flow of
    :class:`~oraclepriv.solvers.mip.mipbackend.MipBackend`; only the solver adapter
    (:class:`ScipModel`) differs from ``highs``.

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the whole call; None for no limit.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        {mip_options}

        ``random_seed`` sets SCIP's ``randomization/randomseedshift``.

    References
    ----------
    .. [1] The SCIP Optimization Suite, https://www.scipopt.org; OR-Tools MPSolver,
       https://developers.google.com/optimization
    .. [2] ``docs/theory/cover-cut-model.md`` (what the bound proves for halfspaces).
    """

    name = "scip"
    requires = ("ortools",)

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self._pywraplp = import_pywraplp()

    def new_model(self, milp: MilpArrays, deadline: Deadline | None = None) -> ScipModel:
        return ScipModel(
            self._pywraplp,
            milp,
            output_flag=self.output_flag,
            threads=self.threads,
            random_seed=self.random_seed,
            deadline=deadline,
        )
