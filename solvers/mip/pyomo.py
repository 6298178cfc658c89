"""``pyomo``: exact weighted 0-1 ERM as Pyomo models, solved by HiGHS or any MIP solver Pyomo knows.

Same formulations (:mod:`oraclepriv.solvers.mip.milp`) and the same search/certification flow
(:class:`oraclepriv.solvers.mip.mipbackend.MipBackend`, which documents what ``certified`` means per ``certify``
mode) as ``highs`` and ``scip``; only the solver adapter (:class:`PyomoModel`) differs.

The model. One ``ConcreteModel`` per formulation and set of points: a ``Var`` per column (binary /
integer / continuous with the formulation's bounds), one linear ``Constraint`` per row, and the
objective ``sum_j c[j] * x[j]`` where ``c`` is a *mutable* ``Param``. The weights of the oracle
problem enter only through ``c`` (for halfspaces ``c`` on the mistake binary of a group of
identical points is the group's summed weight; for stumps it is the staircase gain), so a call
with new weights on the same points only assigns ``c`` and re-solves:

* default ``solver="highs"``: Pyomo's persistent HiGHS interface (``pyomo.contrib.solver``,
  ``SolverFactory("highs")``). Its automatic update checks are switched off except for parameters,
  so a re-solve costs one ``changeColCost`` per column and no rebuild. ``rel_gap = 0`` and
  ``abs_gap`` from :func:`oraclepriv.solvers.mip.gaps.gap_rule`; ``bound`` is ``results.objective_bound``
  (HiGHS' ``mip_dual_bound``). Warm starts go to the underlying ``highspy.Highs`` object with
  ``setSolution`` (Pyomo's interface has no MIP-start option; the column map is Pyomo's own).
* ``solver=<name>``: any other name Pyomo's solver factories know. Names of the new interface
  (``pyomo.contrib.solver``: ``gurobi_persistent``, ``gurobi_direct``, ``scip_persistent`` ...) get
  ``rel_gap``/``abs_gap``/``time_limit`` through the common config; legacy names (``gurobi``,
  ``cplex``, ``cbc``, ``glpk``, ``scip``, ``xpress``, ``appsi_highs`` ...) get the solver's native
  gap and time options from :data:`NATIVE_OPTIONS` and re-send the model on every solve. A legacy
  solver whose option names are not in that table runs with its default gaps; that can only make
  an answer *uncertified* (the bound is whatever the solver proved), never falsely certified.
  Legacy bound: ``results.problem.lower_bound`` when finite; when the solver reports an optimal
  termination without one, ``incumbent - abs_gap`` (what rel gap 0 / abs gap ``abs_gap`` proves).

An unknown solver name is a ``ValueError`` naming it; a known solver that is not installed or not
licensed is a :class:`~oraclepriv.solvers.base.SolverNotInstalledError` naming it (raised by ``make_oracle``).

Deadlines and interrupts (``docs/deadlines.md``): the Python-side build checks the call's deadline
every :data:`BUILD_CHECK_ROWS` rows; Pyomo's translation of the model into the solver is one call
that cannot be stopped, so it starts only if the time left covers :data:`TRANSLATE_FACTOR` times the
build time just measured (else the build stops with
:class:`~oraclepriv.solvers.runtime.deadline.DeadlineExceeded`). A solve runs in a helper thread and Ctrl-C
stops HiGHS through its interrupt callback (``cancelSolve``), then propagates as KeyboardInterrupt.
Pyomo captures the solver's output (``tee`` only with ``output_flag=True``).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np
from oraclepriv.solvers.base import SolverNotInstalledError, Status, import_solver
from oraclepriv.solvers.mip.milp import MilpArrays
from oraclepriv.solvers.mip.mipbackend import MipBackend, MipRun, document_mip_options
from oraclepriv.solvers.runtime.deadline import Deadline, DeadlineExceeded
from oraclepriv.solvers.runtime.interrupts import call_interruptibly

__all__ = ["PyomoBackend", "PyomoModel", "import_pyomo", "resolve_solver", "NATIVE_OPTIONS", "TESTED_PYOMO"]

TESTED_PYOMO = "6.10.1"
#: the build checks the deadline every this many rows
BUILD_CHECK_ROWS = 1000
#: Pyomo's translation into the solver (``set_instance``) starts only if the time left is at least
#: this many times the Python-side build time (the translation's cost: ``docs/deadlines.md``)
TRANSLATE_FACTOR = 2.0

#: native option names of legacy Pyomo solver plugins: (relative gap, absolute gap, time limit,
#: feasibility tolerance, threads, random seed); None where the solver has no such option.
NATIVE_OPTIONS: dict[str, tuple[str | None, ...]] = {
    "gurobi": ("MIPGap", "MIPGapAbs", "TimeLimit", "FeasibilityTol", "Threads", "Seed"),
    "cplex": (
        "mip_tolerances_mipgap",
        "mip_tolerances_absmipgap",
        "timelimit",
        "simplex_tolerances_feasibility",
        "threads",
        "randomseed",
    ),
    "scip": ("limits/gap", "limits/absgap", "limits/time", "numerics/feastol", None, "randomization/randomseedshift"),
    "cbc": ("ratioGap", "allowableGap", "seconds", "primalTolerance", "threads", "randomCbcSeed"),
    "glpk": ("mipgap", None, "tmlim", None, None, None),
    "xpress": ("miprelstop", "mipabsstop", "maxtime", "feastol", "threads", "randomseed"),
    "highs": ("mip_rel_gap", "mip_abs_gap", "time_limit", "mip_feasibility_tolerance", "threads", "random_seed"),
}

#: new-interface (pyomo.contrib.solver) option names for the feasibility tolerance and random seed
_NEW_INTERFACE_EXTRA = {
    "highs": ("mip_feasibility_tolerance", "random_seed"),
    "gurobi": ("FeasibilityTol", "Seed"),
    "scip": ("numerics/feastol", "randomization/randomseedshift"),
}


def _drop_interrupt_warning(record: logging.LogRecord) -> bool:
    """A logging filter: False (drop) for Pyomo's warning about HiGHS's "interrupted" status."""
    return "kInterrupt" not in record.getMessage()


def import_pyomo():
    """Import ``pyomo.environ`` or raise SolverNotInstalledError saying what to install."""
    return import_solver("pyomo.environ", backend="pyomo", package="pyomo", tested=TESTED_PYOMO)


def _family(name: str) -> str | None:
    """The solver family whose native option names apply ('appsi_highs' -> 'highs')."""
    lowered = name.lower()
    for family in NATIVE_OPTIONS:
        if family in lowered:
            return family
    return None


def resolve_solver(name: str) -> tuple[str, Any]:
    """(interface, solver object) for a Pyomo solver name; interface is "new" or "legacy".

    Raises ValueError for a name no Pyomo factory knows (or a legacy persistent interface, which
    this adapter does not drive) and SolverNotInstalledError for a known but unavailable solver.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"backend 'pyomo': solver must be a non-empty solver name; got {name!r}")
    import_pyomo()
    from pyomo.contrib.solver.common.factory import SolverFactory as NewFactory
    from pyomo.opt.base.solvers import LegacySolverFactory

    new_names = sorted(NewFactory._cls)  # the registry of pyomo.contrib.solver interfaces
    legacy_names = sorted(n for n in LegacySolverFactory if not n.startswith("_"))
    if name in NewFactory._cls:
        solver = NewFactory(name)
        availability = solver.available()
        if not availability:
            raise SolverNotInstalledError(
                f"backend 'pyomo': Pyomo solver {name!r} is not available in this environment ({availability}); "
                "install and license it, or use solver='highs' (the default, via highspy)"
            )
        return "new", solver
    if name in legacy_names:
        if name.endswith("_persistent"):
            raise ValueError(
                f"backend 'pyomo': legacy persistent interface {name!r} is not supported; use "
                f"{name[: -len('_persistent')]!r} (re-sends the model per solve) or a pyomo.contrib.solver name: {new_names}"
            )
        import pyomo.environ as pyo

        solver = pyo.SolverFactory(name)
        try:
            available = bool(solver.available(exception_flag=False))
        except Exception:  # some plugins raise instead of answering  # noqa: BLE001
            available = False
        if not available:
            raise SolverNotInstalledError(
                f"backend 'pyomo': Pyomo solver {name!r} is not available in this environment (executable or "
                "Python package not found, or no license); install it, or use solver='highs' (the default)"
            )
        return "legacy", solver
    raise ValueError(
        f"backend 'pyomo': unknown Pyomo solver {name!r}; Pyomo knows {new_names} (pyomo.contrib.solver) and "
        f"{legacy_names} (legacy SolverFactory)"
    )


class PyomoModel:
    """A Pyomo model of one :class:`~oraclepriv.solvers.mip.milp.MilpArrays` with mutable objective coefficients."""

    def __init__(
        self,
        milp: MilpArrays,
        solver_name: str = "highs",
        *,
        output_flag: bool = False,
        threads: int | None = None,
        random_seed: int | None = None,
        deadline: Deadline | None = None,
    ):
        pyo = import_pyomo()
        from pyomo.core.expr.numeric_expr import LinearExpression

        self.pyo = pyo
        self.milp = milp
        self.solver_name = solver_name
        self.interface, self.solver = resolve_solver(solver_name)
        self.family = _family(solver_name)
        self.output_flag = output_flag
        self.threads = threads
        self.random_seed = random_seed
        self.is_mip = bool(milp.integer.any())
        ncols = milp.num_cols

        def finite(v: float) -> float | None:
            return float(v) if math.isfinite(v) else None

        def domain(_, j):
            if not milp.integer[j]:
                return pyo.Reals
            return pyo.Binary if (milp.col_lower[j] == 0 and milp.col_upper[j] == 1) else pyo.Integers

        t0 = time.perf_counter()
        m = pyo.ConcreteModel(name="oraclepriv-erm")
        m.x = pyo.Var(
            range(ncols),
            within=domain,
            bounds=lambda _, j: (finite(float(milp.col_lower[j])), finite(float(milp.col_upper[j]))),
        )
        m.c = pyo.Param(range(ncols), mutable=True, initialize=lambda _, j: float(milp.cost[j]))
        A = milp.A

        m.rows = pyo.ConstraintList()
        for r in range(A.shape[0]):
            if deadline is not None and r % BUILD_CHECK_ROWS == 0:
                deadline.check("model build (pyomo)")
            lo, hi = A.indptr[r], A.indptr[r + 1]
            body = LinearExpression(
                constant=0.0,
                linear_coefs=[float(v) for v in A.data[lo:hi]],
                linear_vars=[m.x[int(j)] for j in A.indices[lo:hi]],
            )
            m.rows.add((finite(milp.row_lower[r]), body, finite(milp.row_upper[r])))
        m.obj = pyo.Objective(
            expr=LinearExpression(
                constant=0.0, linear_coefs=[m.c[j] for j in range(ncols)], linear_vars=[m.x[j] for j in range(ncols)]
            ),
            sense=pyo.minimize,
        )
        self.model = m
        self.vars = [m.x[j] for j in range(ncols)]
        if self.interface == "new":
            cfg = self.solver.config
            cfg.raise_exception_on_nonoptimal_result = False
            cfg.load_solutions = False
            if hasattr(cfg, "auto_updates"):  # persistent: after the first solve only parameters change
                au = cfg.auto_updates
                for flag in (
                    "check_for_new_or_removed_constraints",
                    "check_for_new_or_removed_vars",
                    "check_for_new_or_removed_params",
                    "check_for_new_objective",
                    "update_constraints",
                    "update_vars",
                    "update_named_expressions",
                    "update_objective",
                ):
                    if hasattr(au, flag):
                        setattr(au, flag, False)
            if hasattr(self.solver, "set_instance"):  # build the solver model now, so run() can warm-start it
                left = None if deadline is None else deadline.remaining()
                if deadline is not None and left is not None and left < TRANSLATE_FACTOR * (time.perf_counter() - t0):
                    deadline.note("model translation (pyomo)")
                    raise DeadlineExceeded("model translation (pyomo)")
                self.solver.set_instance(m)

    def set_costs(self, cost: np.ndarray) -> None:
        c = self.model.c
        for j, value in enumerate(np.asarray(cost, dtype=np.float64)):
            c[j] = float(value)

    # -- solving -------------------------------------------------------------------------------

    def run(
        self,
        time_limit: float | None,
        *,
        abs_gap: float = 0.0,
        feasibility_tolerance: float | None = None,
        start: np.ndarray | None = None,
    ) -> MipRun:
        if self.interface == "new":
            return self._run_new(time_limit, abs_gap, feasibility_tolerance, start)
        return self._run_legacy(time_limit, abs_gap, feasibility_tolerance, start)

    def _cancel(self) -> None:
        """Ask a running HiGHS to stop (Pyomo's HiGHS interface registers highspy's interrupt callbacks).

        Pyomo then logs a warning about the "interrupted" status through its logging handler, which
        writes to stdout; the KeyboardInterrupt says it all, so that one record is dropped."""
        cancel = getattr(getattr(self.solver, "_solver_model", None), "cancelSolve", None)
        if cancel is not None:
            logging.getLogger("pyomo.contrib.solver.solvers.highs").addFilter(_drop_interrupt_warning)
            cancel()

    def _highs_handle(self):
        """The persistent interface's highspy.Highs object and Pyomo's column map (HiGHS only)."""
        h = getattr(self.solver, "_solver_model", None)
        col_of = getattr(self.solver, "_pyomo_var_to_solver_var_map", None)
        if h is None or col_of is None or not hasattr(h, "setSolution"):
            return None, None
        return h, col_of

    def _highs_start(self, start: np.ndarray | None) -> bool | None:
        """Clear the previous run's incumbent (its costs are stale) and pass a MIP start to HiGHS."""
        h, col_of = self._highs_handle()
        if h is None:
            return None
        import highspy

        h.clearSolver()
        if start is None or not self.is_mip:
            return None
        order = np.array([col_of[id(v)] for v in self.vars], dtype=np.int32)
        return h.setSolution(len(order), order, np.asarray(start, dtype=np.float64)) == highspy.HighsStatus.kOk

    def _run_new(self, time_limit, abs_gap, feasibility_tolerance, start) -> MipRun:
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

        kwargs: dict[str, Any] = {"tee": bool(self.output_flag)}
        if time_limit is not None:
            kwargs["time_limit"] = float(time_limit)
        if self.threads is not None:
            kwargs["threads"] = int(self.threads)
        options: dict[str, Any] = {}
        if time_limit is None and self.family == "highs":
            options["time_limit"] = math.inf  # a persistent HiGHS keeps the last run's limit otherwise
        if self.is_mip:
            kwargs["rel_gap"] = 0.0
            kwargs["abs_gap"] = float(abs_gap)
            extra = _NEW_INTERFACE_EXTRA.get(self.family or "")
            if extra is not None:
                options[extra[0]] = float(feasibility_tolerance or 1e-6)
                if self.random_seed is not None:
                    options[extra[1]] = int(self.random_seed)
        if options:
            kwargs["solver_options"] = options
        accepted = None
        if self.solver_name == "highs":
            accepted = self._highs_start(start)
        t0 = time.perf_counter()
        results = call_interruptibly(lambda: self.solver.solve(self.model, **kwargs), self._cancel)
        seconds = time.perf_counter() - t0
        tc = results.termination_condition
        status: Status
        if tc == TerminationCondition.convergenceCriteriaSatisfied:
            status = "optimal"
        elif tc == TerminationCondition.maxTimeLimit:
            status = "time_limit"
        elif tc == TerminationCondition.provenInfeasible:
            status = "infeasible"
        else:
            status = "error"
        has_solution = results.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
        x = None
        if has_solution:
            primals = results.solution_loader.get_vars(self.vars)
            x = np.array([primals[v] for v in self.vars], dtype=np.float64)
        primal = (
            float(results.incumbent_objective) if has_solution and results.incumbent_objective is not None else math.inf
        )
        bound = results.objective_bound
        dual = float(bound) if bound is not None and math.isfinite(float(bound)) else -math.inf
        if not self.is_mip and status != "optimal":
            dual = -math.inf
        nodes = getattr(results.extra_info, "mip_node_count", None)
        nodes = int(nodes) if nodes is not None and nodes >= 0 else 0
        gap = (
            abs(primal - dual) / max(1e-10, abs(primal))
            if (math.isfinite(primal) and math.isfinite(dual))
            else math.inf
        )
        raw = f"{tc.name}/{results.solution_status.name}"
        return MipRun(status, raw, x, dual, primal, nodes, gap, seconds, accepted)

    def _run_legacy(self, time_limit, abs_gap, feasibility_tolerance, start) -> MipRun:
        from pyomo.opt import SolverStatus, TerminationCondition

        pyo = self.pyo
        names = NATIVE_OPTIONS.get(self.family or "")
        options: dict[str, Any] = {}
        if names is not None:
            rel_name, abs_name, time_name, feas_name, threads_name, seed_name = names
            if self.is_mip:
                if rel_name:
                    options[rel_name] = 0.0
                if abs_name:
                    options[abs_name] = float(abs_gap)
                if feas_name and feasibility_tolerance is not None:
                    options[feas_name] = float(feasibility_tolerance)
            if time_name and time_limit is not None:
                options[time_name] = float(time_limit)
            if threads_name and self.threads is not None:
                options[threads_name] = int(self.threads)
            if seed_name and self.random_seed is not None:
                options[seed_name] = int(self.random_seed)
        warm = False
        if start is not None and getattr(self.solver, "warm_start_capable", lambda: False)():
            for v, value in zip(self.vars, np.asarray(start, dtype=np.float64)):
                v.set_value(float(value), skip_validation=True)
            warm = True
        else:
            for v in self.vars:
                v.set_value(None, skip_validation=True)
        solve_kwargs: dict[str, Any] = {"tee": bool(self.output_flag), "load_solutions": False, "options": options}
        if warm:
            solve_kwargs["warmstart"] = True
        t0 = time.perf_counter()
        results = call_interruptibly(lambda: self.solver.solve(self.model, **solve_kwargs), self._cancel)
        seconds = time.perf_counter() - t0
        tc = results.solver.termination_condition
        status: Status
        if tc == TerminationCondition.optimal:
            status = "optimal"
        elif tc == TerminationCondition.maxTimeLimit:
            status = "time_limit"
        elif tc == TerminationCondition.infeasible:
            status = "infeasible"
        else:
            status = "error"
        x = None
        primal = math.inf
        if len(results.solution) > 0 and results.solver.status in (
            SolverStatus.ok,
            SolverStatus.warning,
            SolverStatus.aborted,
        ):
            self.model.solutions.load_from(results)
            values = [v.value for v in self.vars]
            if all(value is not None for value in values):
                x = np.array(values, dtype=np.float64)
                primal = float(pyo.value(self.model.obj))
        reported = None
        try:
            lower = results.problem.lower_bound if len(results.problem) else None
            if lower is not None and math.isfinite(float(lower)):
                reported = float(lower)
        except (TypeError, ValueError):
            reported = None
        dual = -math.inf
        if status == "optimal" and x is not None:
            proved = [reported] if reported is not None else []
            if not self.is_mip or (names is not None and names[0] is not None):
                # rel gap 0 (and abs gap abs_gap where the solver has one) proves incumbent - abs_gap
                has_abs_gap = self.is_mip and names is not None and names[1] is not None
                proved.append(primal - (float(abs_gap) if has_abs_gap else 0.0))
            if proved:
                dual = min(max(proved), primal)
        elif status == "time_limit" and reported is not None:
            dual = reported
        gap = (
            abs(primal - dual) / max(1e-10, abs(primal))
            if (math.isfinite(primal) and math.isfinite(dual))
            else math.inf
        )
        raw = f"{results.solver.status}/{tc}"
        return MipRun(status, raw, x, float(dual), primal, 0, gap, seconds, warm if start is not None else None)

    # -- export --------------------------------------------------------------------------------

    def write(self, path: str) -> None:
        """Write the model (current costs) in a format chosen by the file extension (.mps, .lp)."""
        self.model.write(str(path), io_options={"symbolic_solver_labels": False})


@document_mip_options
class PyomoBackend(MipBackend):
    """Pyomo MIP oracle for thresholds, stumps and halfspaces, on any MIP solver Pyomo drives.

    The models and the search/certification flow of
    :class:`~oraclepriv.solvers.mip.mipbackend.MipBackend`, stated as a Pyomo ``ConcreteModel`` with
    mutable cost parameters (module docstring).

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the whole call; None for no limit.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        solver : str, default "highs"
            A Pyomo solver name (new ``pyomo.contrib.solver`` interfaces or legacy plugins). An unknown
            name raises ValueError; a known solver that is not available raises SolverNotInstalledError.
        {mip_options}

    Attributes
    ----------
    solver_name : str
        The validated ``solver``.

    References
    ----------
    .. [1] M. L. Bynum, G. A. Hackebeil, W. E. Hart, C. D. Laird, B. L. Nicholson, J. D. Siirola,
       J.-P. Watson, D. L. Woodruff, "Pyomo — Optimization Modeling in Python", 3rd ed., Springer,
       2021; documentation: https://pyomo.readthedocs.io
    """

    name = "pyomo"
    requires = ("pyomo",)
    options = MipBackend.options | {"solver"}

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.solver_name = self.config.get("solver", "highs")
        resolve_solver(self.solver_name)  # fail fast: unknown name -> ValueError, missing -> SolverNotInstalledError

    def _describe_certificate(self) -> str:
        return f"{super()._describe_certificate()} (Pyomo, solver={self.config.get('solver', 'highs')!r})"

    def new_model(self, milp: MilpArrays, deadline: Deadline | None = None) -> PyomoModel:
        return PyomoModel(
            milp,
            self.solver_name,
            output_flag=self.output_flag,
            threads=self.threads,
            random_seed=self.random_seed,
            deadline=deadline,
        )
