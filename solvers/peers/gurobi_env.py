"""What the two Gurobi backends share: the import, a silent environment, the licence, and one guarded solve.

``gurobi`` (:mod:`oraclepriv.solvers.peers.gurobi`, the big-M model) and ``gurobi-bc``
(:mod:`oraclepriv.solvers.branch_and_cut.gurobi_bc`, the cover-cut branch-and-cut) both run Gurobi through
gurobipy. This module holds what they must do alike:

* **output**: one environment per process, created empty and started with ``OutputFlag = 0``, so
  neither the licence banner nor a log line reaches stdout (``docs/deadlines.md``: solver output
  never does);
* **licence**: gurobipy ships a size-limited licence (about 2000 variables and 2000 linear
  constraints; lazy constraints added from a callback do not count). A model above the limit
  fails with GurobiError 10010 at ``optimize``; :func:`licence_limit` recognises it, and the
  backends answer with status ``"error"`` and ``details["licence_limit"] = True`` and a message
  naming the limit, never silently. :func:`licence_works` (``is_installed``) solves a tiny model;
* **deadline and Ctrl-C** (:class:`GuardedSolve`): Gurobi installs its own SIGINT handler while it
  optimizes. It prints "Interrupt request received" on stdout and ends the solve with status
  INTERRUPTED, so the KeyboardInterrupt is lost, and since the handler is process-wide a helper
  thread (:func:`oraclepriv.solvers.runtime.interrupts.call_interruptibly`) cannot see the signal either.
  So the solve runs in the calling thread with a callback that, on its first call, puts Python's
  SIGINT handler back (main thread only). A Ctrl-C then raises KeyboardInterrupt inside the next
  callback; the guard catches it there (gurobipy would swallow an exception leaving a callback),
  expires the call's deadline, terminates the solve and re-raises after ``optimize`` returns. A
  solve that ends INTERRUPTED without the guard having asked for it (a Ctrl-C that Gurobi's
  handler caught before the first callback) is also re-raised as KeyboardInterrupt. The same
  callback terminates the solve when the call's deadline expires (Gurobi's TimeLimit also
  applies); exceptions raised in an inner callback are re-raised after the solve, never lost.

References: Gurobi Optimization, "Gurobi Optimizer Reference Manual" (parameters OutputFlag,
LazyConstraints, TimeLimit; ``Model.terminate``; callback codes; error code 10010,
SIZE_LIMIT_EXCEEDED), https://docs.gurobi.com.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oraclepriv.solvers.base import import_solver
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace
from oraclepriv.solvers.runtime.interrupts import in_main_thread

__all__ = [
    "TESTED_GUROBIPY",
    "LICENCE_LIMIT_ERRNOS",
    "import_gurobipy",
    "gurobi_env",
    "licence_works",
    "licence_limit",
    "licence_details",
    "GuardedSolve",
    "status_name",
    "objective_bound",
]

log = logging.getLogger(__name__)

#: the gurobipy version these backends are tested with
TESTED_GUROBIPY = "13.0.3"
#: GurobiError codes that mean "the licence does not allow this model" (10010: SIZE_LIMIT_EXCEEDED;
#: 10009: the licence is missing or does not cover this version)
LICENCE_LIMIT_ERRNOS = (10010,)
LICENCE_ERRNOS = (10009, 10010)


def import_gurobipy(backend: str = "gurobi"):
    """Import gurobipy or raise SolverNotInstalledError saying what to install."""
    return import_solver("gurobipy", backend=backend, package="gurobipy", tested=TESTED_GUROBIPY)


_ENVS: dict[int, Any] = {}


def gurobi_env(gp=None):
    """This process's silent Gurobi environment (created empty, ``OutputFlag = 0``, then started).

    One per process id: a forked worker builds its own."""
    pid = os.getpid()
    env = _ENVS.get(pid)
    if env is None:
        gp = gp or import_gurobipy()
        env = gp.Env(empty=True)
        env.setParam("OutputFlag", 0)
        env.setParam("LogToConsole", 0)
        env.start()
        _ENVS[pid] = env
    return env


def set_common_parameters(model, *, output_flag: bool, threads: int, random_seed: int | None) -> None:
    """The options both Gurobi backends share, on one model: its log on the console when
    ``output_flag`` (the environment is silent, :func:`gurobi_env`), Gurobi's threads and, unless
    None, its ``Seed``."""
    params = model.Params
    params.OutputFlag = int(output_flag)
    params.LogToConsole = int(output_flag)
    params.Threads = threads
    if random_seed is not None:
        params.Seed = random_seed


@functools.lru_cache(maxsize=1)
def licence_works() -> bool:
    """True when gurobipy imports and its licence solves a tiny MIP (checked once per process)."""
    try:
        gp = import_gurobipy()
        model = gp.Model(env=gurobi_env(gp))
        x = model.addVar(vtype=gp.GRB.BINARY, obj=1.0)
        model.addConstr(x >= 1)
        model.optimize()
        ok = model.Status == gp.GRB.OPTIMAL and abs(model.ObjVal - 1.0) < 1e-9
        model.dispose()
        return bool(ok)
    except Exception as exc:  # noqa: BLE001 - any failure means "not usable here"
        log.debug("gurobipy is not usable here: %s", exc)
        return False


def licence_limit(exc: BaseException) -> bool:
    """True if ``exc`` is a GurobiError saying the licence does not allow this model."""
    return getattr(exc, "errno", None) in LICENCE_ERRNOS


def licence_details(exc: BaseException, backend: str, num_vars: int, num_rows: int) -> dict[str, Any]:
    """The details of an answer the licence refused: the flag, the error code and a message naming the limit."""
    code = getattr(exc, "errno", None)
    message = (
        f"{backend}: Gurobi's licence refused the model (GurobiError {code}: {exc}); the model has {num_vars} "
        f"variables and {num_rows} linear constraints, and the size-limited licence that ships with gurobipy "
        "allows about 2000 of each"
    )
    log.warning(message)
    return {"licence_limit": True, "gurobi_error": code, "error": message, "num_vars": num_vars, "num_rows": num_rows}


def objective_bound(model) -> float:
    """Gurobi's proved lower bound (ObjBound) of a minimisation, or -inf when it has none."""
    try:
        value = float(model.ObjBound)
    except Exception:  # noqa: BLE001 - no bound available (the solve did not reach the MIP)
        return -math.inf
    return value if math.isfinite(value) else -math.inf


def status_name(gp, code: int) -> str:
    """Gurobi's name for a status code (e.g. 2 -> "OPTIMAL")."""
    for name in dir(gp.GRB.Status):
        if not name.startswith("_") and getattr(gp.GRB.Status, name) == code:
            return name
    return str(code)


@dataclass
class SolveOutcome:
    """How a guarded solve ended: Gurobi's status, and whether the deadline stopped it."""

    status: int
    status_name: str
    deadline_stop: bool
    seconds: float


class GuardedSolve:
    """``model.optimize`` with the call's deadline, a Ctrl-C that stays a KeyboardInterrupt, and an
    optional inner callback (module docstring).

    Parameters
    ----------
    gp : module
        gurobipy.
    deadline : Deadline
        The oracle call's deadline; the solve is terminated when it expires or is interrupted.
    inner : callable, optional
        ``inner(model, where)``, the backend's own callback (e.g. lazy cuts); not called once the
        deadline has expired.
    trace : IncumbentTrace, optional
        Where the objective of every new solution is noted with its time (a model without lazy
        constraints, whose solutions are all feasible; ``gurobi-bc`` notes the solutions its callback
        accepts itself).
    """

    def __init__(
        self,
        gp,
        deadline: Deadline,
        inner: Callable[[Any, int], None] | None = None,
        trace: IncumbentTrace | None = None,
    ) -> None:
        self.gp = gp
        self.deadline = deadline
        self.inner = inner
        self.trace = trace
        self.deadline_stop = False
        self.interrupted = False
        self.error: BaseException | None = None
        self._previous_sigint: Any = None
        self._restored = False

    def _restore_sigint(self) -> None:
        self._restored = True
        if in_main_thread() and self._previous_sigint is not None:
            signal.signal(signal.SIGINT, self._previous_sigint)

    def _stop(self, model, reason: str) -> None:
        if reason == "deadline" and not self.deadline_stop:
            self.deadline_stop = True
            self.deadline.note("gurobi")
        model.terminate()

    def __call__(self, model, where: int) -> None:
        try:
            if not self._restored:
                self._restore_sigint()
            if self.interrupted or self.error is not None:
                model.terminate()
                return
            if self.deadline.expired():
                if self.deadline.interrupted:
                    self.interrupted = True
                    model.terminate()
                else:
                    self._stop(model, "deadline")
                return
            if self.trace is not None and where == self.gp.GRB.Callback.MIPSOL:
                self.trace.note(model.cbGet(self.gp.GRB.Callback.MIPSOL_OBJ))
            if self.inner is not None:
                self.inner(model, where)
        except KeyboardInterrupt:
            self.interrupted = True
            self.deadline.interrupt()
            model.terminate()
        except BaseException as exc:  # noqa: BLE001 - re-raised after optimize returns
            self.error = exc
            model.terminate()

    def run(self, model, time_limit: float | None) -> SolveOutcome:
        """Optimize ``model`` within ``time_limit`` seconds (None: no limit); raise KeyboardInterrupt
        after a Ctrl-C and re-raise an inner callback's exception. GurobiError (e.g. the licence
        limit) propagates to the caller."""
        if time_limit is not None:
            model.Params.TimeLimit = max(float(time_limit), 1e-3)
        self._previous_sigint = signal.getsignal(signal.SIGINT) if in_main_thread() else None
        self._restored = False
        model.optimize(self)
        status = int(model.Status)
        if (
            self.interrupted
            or self.deadline.interrupted
            or (status == self.gp.GRB.INTERRUPTED and not self.deadline_stop and self.error is None)
        ):
            self.deadline.interrupt()
            raise KeyboardInterrupt
        if self.error is not None:
            raise self.error
        if status == self.gp.GRB.TIME_LIMIT:
            self.deadline.note("gurobi")
        return SolveOutcome(status, status_name(self.gp, status), self.deadline_stop, float(model.Runtime))
