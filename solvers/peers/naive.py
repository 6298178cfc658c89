"""``naive-highs``: the textbook big-M MIP for halfspace 0-1 ERM, kept as the benchmark baseline.

The naive formulation (unit box on w and b, margin 1e-4, plain big-M from max |x|, no warm start)
is what ``oraclepriv bench mip`` measures the real backends against, in the same run. It is
deliberately without any of the engineering of :mod:`oraclepriv.solvers.mip.mipbackend` (no scaling,
no duplicate merging, no warm start, no cuts, no persistent re-use). On the reduced problem
(labels flipped so all weights are >= 0, see :mod:`oraclepriv.oracle`) it solves, on the *raw* data,

    min  sum_i w_i z_i
    s.t. w.x_i + b >= gamma - M z_i      (y_i = 1)
         w.x_i + b <= -gamma + M z_i     (y_i = 0)
         w in [-1, 1]^d, b in [-1, 1], z_i in {0, 1},
    gamma = 1e-4,  M = gamma + 1 + d * max_ij |x_ij|  (so |w.x + b| <= M - gamma on the box).

HiGHS runs with ``mip_rel_gap = 0`` and ``mip_abs_gap`` below one weight unit
(:func:`oraclepriv.solvers.mip.gaps.gap_rule`); the proved dual bound is rounded up to the weight lattice.

What its bound proves: optimality over the *restricted* class of halfspaces with
w in [-1,1]^d, b in [-1,1] whose correctly classified points have margin >= 1e-4 on the raw data.
That is not a lower bound over all halfspaces (e.g. data far from the origin need |b| > 1, and
points closer than 1e-4 to the optimal boundary are counted as errors), so a naive certificate can
be wrong about the true optimum; the protocol re-scores the returned (w, b) as always, and never
marks its answers ``certified`` (:meth:`NaiveHighsBackend.restriction`). Restricted-class bounds
are discussed in ``docs/theory/cover-cut-model.md``, section 5.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from oraclepriv.solvers.base import MAX_RANDOM_SEED, Backend, BackendAnswer, ReducedProblem
from oraclepriv.solvers.mip.highs import HighsModel, import_highspy
from oraclepriv.solvers.mip.milp import MilpArrays, _RowBuilder, gap_rule, lattice_round_up

from oraclepriv.hypotheses import Halfspace

__all__ = ["NaiveHighsBackend", "naive_milp", "NAIVE_GAMMA"]

#: the fixed margin of the naive model (raw data units)
NAIVE_GAMMA = 1e-4


def naive_milp(X: np.ndarray, y: np.ndarray, w: np.ndarray, gamma: float = NAIVE_GAMMA) -> tuple[MilpArrays, float]:
    """The naive big-M model (module docstring) as plain arrays; returns (milp, M).
    Columns: w (d), b, z (n)."""
    n, d = X.shape
    M = gamma + 1.0 + d * float(np.abs(X).max())
    ncols = d + 1 + n
    rb = _RowBuilder()
    one = np.asarray(y) == 1  # y=1: w.x + b + M z >= gamma;  y=0: w.x + b - M z <= -gamma
    rb.add_block(
        np.column_stack([np.broadcast_to(np.arange(d + 1), (n, d + 1)), d + 1 + np.arange(n)]),
        np.column_stack([X, np.ones(n), np.where(one, M, -M)]),
        np.where(one, gamma, -math.inf),
        np.where(one, math.inf, -gamma),
    )
    A, rl, ru = rb.matrix(ncols)
    cost = np.concatenate([np.zeros(d + 1), np.asarray(w, dtype=np.float64)])
    lower = np.concatenate([-np.ones(d + 1), np.zeros(n)])
    upper = np.ones(ncols)
    integer = np.zeros(ncols, dtype=bool)
    integer[d + 1 :] = True
    return MilpArrays(cost, lower, upper, integer, A, rl, ru), M


class NaiveHighsBackend(Backend):
    """The naive big-M halfspace baseline on HiGHS; its bound holds over a restricted class only.

    Solves the textbook model of the module docstring (raw data, w in [-1, 1]^d, b in [-1, 1],
    margin 1e-4). Answers report ``meets_bound`` with the restriction stated, never ``certified``.

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for the whole call; None for no limit.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        threads : int or None, default None
            HiGHS threads (None: HiGHS's default).
        random_seed : int or None, default None
            HiGHS random seed (None: HiGHS's default).
        output_flag : bool, default False
            Print the HiGHS log.

    References
    ----------
    .. [1] Q. Huangfu, J. A. J. Hall, "Parallelizing the dual revised simplex method", Math. Prog.
       Comp. 10, 2018 (HiGHS).
    .. [2] ``docs/theory/cover-cut-model.md``, sections 2 and 5 (big-M models, restricted classes).
    """

    name = "naive-highs"
    requires = ("highspy",)
    classes = frozenset({"halfspace"})
    options = frozenset({"threads", "random_seed", "output_flag"})
    certificate = (
        "naive baseline: bound is the HiGHS dual bound of the big-M model with w in [-1,1]^d, b in [-1,1] "
        f"and margin {NAIVE_GAMMA:g} on the raw data; meets_bound means optimal over that restricted "
        "margin-1e-4 unit-box class only, never certified over all halfspaces"
    )

    def restriction(self, hypothesis_class: str) -> str | None:
        """Always restricted: the unit-box, margin-1e-4 halfspaces on the raw data."""
        return f"halfspaces with w in [-1,1]^d, b in [-1,1] and margin >= {NAIVE_GAMMA:g} on the raw data"

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.threads = self.int_option("threads", None, 1)
        self.random_seed = self.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
        self.output_flag = self.flag_option("output_flag", False)
        self._highspy = import_highspy()

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        X, y, w = problem.X, problem.y, problem.w
        d = problem.d
        deadline = self.deadline(problem)
        milp, M = naive_milp(X, y, w)
        model = HighsModel(
            self._highspy, milp, output_flag=self.output_flag, threads=self.threads, random_seed=self.random_seed
        )
        abs_gap, q = gap_rule(w)
        run = model.run(deadline.solver_seconds(), abs_gap=abs_gap)
        if run.x is not None:
            hypothesis = Halfspace(tuple(float(v) for v in run.x[:d]), float(run.x[d]))
        else:  # no incumbent: an honest constant, uncertified unless the bound says otherwise
            hypothesis = Halfspace(tuple([0.0] * d), 1.0)
        bound = lattice_round_up(run.dual_bound, q, float(w.sum())) if math.isfinite(run.dual_bound) else -math.inf
        if math.isfinite(bound):
            bound = max(bound, 0.0)
        details = {
            "formulation": "naive big-M (unit box, margin 1e-4, raw data)",
            "gamma": NAIVE_GAMMA,
            "M": M,
            "num_cols": milp.num_cols,
            "num_rows": milp.num_rows,
            "mip_status": run.raw_status,
            "mip_dual_bound": run.dual_bound,
            "mip_primal": run.primal,
            "mip_gap": run.gap,
            "mip_seconds": run.seconds,
            "mip_abs_gap": abs_gap,
            "weight_lattice": q,
        }
        return BackendAnswer(hypothesis, bound=bound, status=run.status, nodes=run.nodes, details=details)
