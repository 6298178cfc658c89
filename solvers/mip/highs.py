"""``highs``: exact weighted 0-1 ERM as mixed-integer programs solved by HiGHS (highspy).

The formulations are those of :mod:`oraclepriv.solvers.mip.milp` and the search/certification flow is
:class:`oraclepriv.solvers.mip.mipbackend.MipBackend` (both shared with the other MIP backends). Each model is
built once with ``addVars``/``addRows``/``changeColsIntegrality``; a later call on the same points (same X and reduced labels, compared by a BLAKE2 fingerprint)
only changes the costs with ``changeColsCost`` and re-runs. Gaps are set so that integer
optimality is proven: ``mip_rel_gap = 0`` and ``mip_abs_gap`` from :func:`oraclepriv.solvers.mip.gaps.gap_rule`
(half the weight lattice when weights are multiples of 2^-k, else a tenth of the certification
tolerance).

What ``certified`` means (``certify`` option, halfspaces; thresholds and stumps are always exact):

* ``certify="margin-free"``, ``method="cuts"`` (default; ``method="auto"`` uses it for lattice
  weights and ``"bigm"`` otherwise, see ``oraclepriv.solvers.mip.mipbackend``): combinatorial Benders -- HiGHS solves
  the hitting-set master over exactly verified non-separable cores
  (:class:`~oraclepriv.solvers.mip.milp.HalfspaceHittingSet`, :mod:`oraclepriv.solvers.branch_and_cut.cores`); ``bound`` is the master's
  dual bound, a proved lower bound over *all* halfspaces (details in
  :class:`~oraclepriv.solvers.mip.mipbackend.MipBackend`).
* ``certify="margin-free"``, ``method="bigm"``: the reported ``bound`` is a proved lower bound over *all*
  halfspaces, ``max(conflict bound, min(relaxed MIP dual bound, cost(all 1), cost(all 0)))``
  from :class:`~oraclepriv.solvers.mip.milp.HalfspaceRelaxedMilp`, so ``certified`` means optimal over all
  halfspaces. The hypothesis comes from the relaxed solution turned into a real halfspace by
  :func:`~oraclepriv.solvers.mip.milp.margin_lp`; if that does not attain the bound (degenerate data, see the
  relaxation's docstring), the gamma-margin model is solved as well for a better hypothesis and
  the answer is honestly uncertified when the gap remains.
* ``certify="margin"``: only the gamma-margin model is solved and ``bound`` is its dual bound:
  a proved lower bound over halfspaces whose correctly classified points have margin >= gamma at
  ||w||_inf <= 1 on the [-1, 1]-scaled data, *not* over all halfspaces. That margin class is a
  restricted class (:meth:`~oraclepriv.solvers.mip.mipbackend.MipBackend.restriction`), so such an
  answer is never ``certified``: at best it ``meets_bound``, optimal over the margin class, with the
  ``restriction`` stated, and a learner's exactness gate refuses it. The bound may exceed the true
  optimum when the optimum needs a smaller margin.

The known HiGHS trap ("optimal" big-M solutions that violate rows at default tolerances, HiGHS
issues #1721 and #3034) cannot produce a false certificate here: the hypothesis is rebuilt from
(w, b) (never from the z values) and the protocol re-scores it; a violation shows as
objective > bound, i.e. uncertified. The solver's feasibility tolerance is also tightened so the
margin dominates it (``HalfspaceMarginMilp.feasibility_tolerance``). The models and their
certificates: ``docs/theory/cover-cut-model.md``.

Interrupts: a run executes in a helper thread (HiGHS releases the GIL) and Ctrl-C stops it through
HiGHS's interrupt callbacks (:func:`~oraclepriv.solvers.runtime.interrupts.call_interruptibly`), so a
KeyboardInterrupt arrives within a fraction of a second instead of at the time limit
(``docs/deadlines.md``). Solver output stays off unless ``output_flag=True``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from oraclepriv.solvers.base import TESTED_HIGHSPY, Status, import_highspy
from oraclepriv.solvers.mip.milp import MilpArrays
from oraclepriv.solvers.mip.mipbackend import CERTIFY_MODES, MipBackend, MipRun, document_mip_options
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.interrupts import call_interruptibly

__all__ = ["HighsBackend", "HighsModel", "HighsRun", "import_highspy", "CERTIFY_MODES", "TESTED_HIGHSPY"]

HighsRun = MipRun  # backwards-compatible name


def _status_name(highspy: Any, status: Any) -> Status:
    S = highspy.HighsModelStatus
    if status == S.kOptimal:
        return "optimal"
    if status == S.kTimeLimit:
        return "time_limit"
    if status == S.kInfeasible:
        return "infeasible"
    return "error"


class HighsModel:
    """A persistent highspy model of one :class:`~oraclepriv.solvers.mip.milp.MilpArrays`."""

    def __init__(
        self,
        highspy,
        milp: MilpArrays,
        *,
        output_flag: bool = False,
        threads: int | None = None,
        random_seed: int | None = None,
    ):
        self.highspy = highspy
        self.milp = milp
        h = highspy.Highs()
        h.setOptionValue("output_flag", bool(output_flag))
        if threads is not None:
            h.setOptionValue("threads", int(threads))
        if random_seed is not None:
            h.setOptionValue("random_seed", int(random_seed))
        n = milp.num_cols
        h.addVars(n, milp.col_lower.astype(np.float64), milp.col_upper.astype(np.float64))
        self.all_cols = np.arange(n, dtype=np.int32)
        h.changeColsCost(n, self.all_cols, milp.cost.astype(np.float64))
        int_cols = np.flatnonzero(milp.integer).astype(np.int32)
        if int_cols.size:
            h.changeColsIntegrality(int_cols.size, int_cols, np.ones(int_cols.size, dtype=np.uint8))  # kInteger
        A = milp.A
        if A.shape[0]:
            h.addRows(
                A.shape[0],
                milp.row_lower.astype(np.float64),
                milp.row_upper.astype(np.float64),
                int(A.nnz),
                A.indptr[:-1].astype(np.int32),
                A.indices.astype(np.int32),
                A.data.astype(np.float64),
            )
        self.h = h
        self.is_mip = bool(int_cols.size)
        # Ctrl-C: the waiting thread sets the flag, HiGHS's interrupt callbacks stop the run
        self._stop = [False]
        stop = self._stop

        def on_interrupt(event) -> None:
            if stop[0]:
                event.interrupt()

        if hasattr(h, "cbMipInterrupt"):
            for callback in (h.cbMipInterrupt, h.cbSimplexInterrupt, h.cbIpmInterrupt):
                callback.subscribe(on_interrupt)

    def _cancel(self) -> None:
        self._stop[0] = True

    def set_costs(self, cost: np.ndarray) -> None:
        self.h.changeColsCost(self.milp.num_cols, self.all_cols, np.asarray(cost, dtype=np.float64))

    def run(
        self,
        time_limit: float | None,
        *,
        abs_gap: float = 0.0,
        feasibility_tolerance: float | None = None,
        start: np.ndarray | None = None,
    ) -> MipRun:
        h, hs = self.h, self.highspy
        h.clearSolver()  # forget the previous run's incumbent/basis (its costs are stale)
        h.setOptionValue("time_limit", float(time_limit) if time_limit is not None else math.inf)
        if self.is_mip:
            h.setOptionValue("mip_rel_gap", 0.0)
            h.setOptionValue("mip_abs_gap", float(abs_gap))
            h.setOptionValue("mip_feasibility_tolerance", float(feasibility_tolerance or 1e-6))
        accepted = None
        if start is not None:
            accepted = (
                h.setSolution(self.milp.num_cols, self.all_cols, np.asarray(start, dtype=np.float64))
                == hs.HighsStatus.kOk
            )
        t0 = time.perf_counter()
        self._stop[0] = False
        call_interruptibly(h.run, self._cancel)
        seconds = time.perf_counter() - t0
        model_status = h.getModelStatus()
        info = h.getInfo()
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.asarray(h.getSolution().col_value, dtype=np.float64) if has_solution else None
        if x is not None and x.shape[0] != self.milp.num_cols:
            x = None
        status = _status_name(hs, model_status)
        if self.is_mip:
            dual = float(info.mip_dual_bound)
            nodes = int(info.mip_node_count)
            gap = float(info.mip_gap)
        else:
            dual = float(info.objective_function_value) if status == "optimal" else -math.inf
            nodes, gap = 0, 0.0
        if not math.isfinite(dual) and not (status == "optimal" and x is not None):
            dual = -math.inf
        return MipRun(
            status=status,
            raw_status=h.modelStatusToString(model_status),
            x=x,
            dual_bound=dual,
            primal=float(info.objective_function_value) if x is not None else math.inf,
            nodes=nodes,
            gap=gap,
            seconds=seconds,
            start_accepted=accepted,
        )


@document_mip_options
class HighsBackend(MipBackend):
    """HiGHS MIP oracle for thresholds, stumps and halfspaces.

    The models and the search/certification flow of
    :class:`~oraclepriv.solvers.mip.mipbackend.MipBackend`, solved by HiGHS through highspy, with
    persistent models re-solved after a change of costs (module docstring).

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the whole call; None for no limit.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        {mip_options}

        ``threads`` and ``random_seed`` set the HiGHS options of the same names.

    References
    ----------
    .. [1] Q. Huangfu, J. A. J. Hall, "Parallelizing the dual revised simplex method", Math. Prog.
       Comp. 10, 2018 (HiGHS); documentation: https://ergo-code.github.io/HiGHS/
    .. [2] ``docs/theory/cover-cut-model.md`` (what the bound proves for halfspaces).

    Examples
    --------
    XOR with weights 1, 2, 3, 4: the cheapest mistake is the point of weight 1.

    >>> import numpy as np
    >>> from oraclepriv import make_oracle
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> res = make_oracle("halfspace", backend="highs").solve(X, [0, 1, 1, 0], [1.0, 2.0, 3.0, 4.0])
    >>> res.certified, res.objective, res.details["method_used"]
    (True, 1.0, 'cuts')
    """

    name = "highs"
    requires = ("highspy",)

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self._highspy = import_highspy()

    def new_model(self, milp: MilpArrays, deadline: Deadline | None = None) -> HighsModel:
        return HighsModel(
            self._highspy, milp, output_flag=self.output_flag, threads=self.threads, random_seed=self.random_seed
        )
