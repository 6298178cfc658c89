"""What a MIP backend's solver adapter is (:class:`MipModel`: one solver's model of a
:class:`~oraclepriv.solvers.mip.milp.MilpArrays`, re-run with new costs) and what one run of it returns
(:class:`MipRun`). The HiGHS, SCIP and Pyomo backends each provide one; the driver
(:class:`~oraclepriv.solvers.mip.mipbackend.MipBackend`) and the Benders loop (:mod:`oraclepriv.solvers.mip.benders`)
use only this interface."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
from oraclepriv.solvers.base import STATUSES, Status

__all__ = ["MipRun", "MipModel"]


@dataclass
class MipRun:
    """What one solver run returned (objective values exclude the formulation's offset)."""

    status: Status  # optimal / time_limit / infeasible / error
    raw_status: str  # the solver's own status name
    x: np.ndarray | None  # column values of the best solution found, if any
    dual_bound: float  # proved lower bound on the model's optimum; -inf if none
    primal: float
    nodes: int
    gap: float
    seconds: float
    start_accepted: bool | None = None

    def __post_init__(self) -> None:
        # the adapters map their solver's own statuses onto the backends' words; any other word is an adapter's bug
        if self.status not in STATUSES:
            raise ValueError(f"a MIP run's status must be one of {list(STATUSES)}; got {self.status!r}")


class MipModel(Protocol):
    """The MIP model adapter a backend hands the driver (``new_model``): one solver's model of a
    :class:`~oraclepriv.solvers.mip.milp.MilpArrays`, built once per point set and re-run with new costs
    (the signed weights change between calls; the constraints do not)."""

    def set_costs(self, cost: np.ndarray) -> None:
        """Replace the objective's column costs (``len(cost)`` equals the model's column count)."""
        ...

    def run(
        self,
        time_limit: float | None,
        *,
        abs_gap: float = 0.0,
        feasibility_tolerance: float | None = None,
        start: np.ndarray | None = None,
    ) -> MipRun:
        """Solve to a zero relative gap (``abs_gap`` absolute) within ``time_limit`` seconds, from the
        optional starting column values ``start``; the run's status, best solution and proved bound."""
        ...
