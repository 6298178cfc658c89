"""``portfolio``: the exact halfspace backend the oracle uses by default from d = 2 on.

Two exact methods with opposite strengths (measured in ``docs/solvers/direction-bb.md``):

* ``direction-bb`` (branch-and-bound over normals) is fastest up to d = 6 whatever the noise, and
  the only method here that certifies noisy data whose optimum exceeds n/(d + 2), the cap of the
  cover-cut LP bound; its work grows quickly with d;
* ``scip-bc`` (cover-cut branch-and-cut) certifies nearly separable data within a second in any
  dimension, and stalls on noisy data.

The rule: d <= 6, ``direction-bb``; d = 7 and 8, ``scip-bc`` for a lead of ``lead`` seconds, then,
if it has not proved its answer, ``direction-bb`` for the time left, started from scip-bc's best
halfspace, if scip-bc's best loss exceeds W / (d + 2) (W the total weight), else ``scip-bc`` again
for the time left (its cores are kept); d >= 9, ``scip-bc``. For points in general position every
core has d + 2 points, so the cover-cut LP bound cannot exceed W / (d + 2)
(``docs/solvers/scip-bc.md``, section 7) and a larger optimum can be proved only by branching, where
direction-bb is faster. The cap only chooses the method (on other data it is a guide, not a bound);
the proof is always the chosen backends' own. The answer keeps the larger of the proved bounds (each
holds over all closed halfspaces) and the better halfspace. Without pyscipopt every call goes to ``direction-bb``.

References
----------
.. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
   Learning with Public Data" (the weighted ERM oracle, Def. 4).
"""

from __future__ import annotations

from typing import Any

from oraclepriv.solvers.base import MAX_RANDOM_SEED, Backend, BackendAnswer, ReducedProblem
from oraclepriv.solvers.combine import combine_answers
from oraclepriv.solvers.deadline import Deadline
from oraclepriv.solvers.direction_bb import DirectionBbBackend
from oraclepriv.solvers.milp import reduced_loss

__all__ = ["PortfolioBackend", "DIRECTION_MAX_D", "CAP_RULE_MAX_D"]

#: up to this dimension the portfolio runs direction-bb alone: there a lead of scip-bc costs more than it
#: saves (measured in docs/solvers/direction-bb.md, section 4)
DIRECTION_MAX_D = 6
#: up to this dimension scip-bc gets a lead and direction-bb the rest when scip-bc's loss exceeds
#: W / (d + 2), the cap of the cover-cut LP bound on points in general position; above it, scip-bc alone
CAP_RULE_MAX_D = 8
#: scip-bc's lead in seconds (d = 7, 8): it proves nearly separable instances within a second or two
LEAD_SECONDS = 1.0


class PortfolioBackend(Backend):
    """``direction-bb`` and ``scip-bc`` chosen and combined by dimension (module docstring).

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for one call; the lead and the rest share it.
    lead : float, default 1.0
        Seconds scip-bc runs first in d = 7 and 8.
    random_seed : int or None, default None
        The ``random_seed`` of the direction-bb and scip-bc it runs (and so of direction-bb's fallback).

    References
    ----------
    .. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
       Learning with Public Data" (the weighted ERM oracle, Def. 4).

    Examples
    --------
    >>> import numpy as np
    >>> from oraclepriv import make_oracle
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(80, 5))
    >>> y = (X.sum(axis=1) > 0).astype(int)
    >>> res = make_oracle("halfspace", backend="portfolio").solve(X, y)
    >>> res.certified, res.objective
    (True, 0.0)
    """

    name = "portfolio"
    classes = frozenset({"halfspace"})
    options = frozenset({"lead", "random_seed"})
    certificate = "the larger of the bounds of the backends it ran, each proved over all closed halfspaces"

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.lead = self.seconds_option("lead", LEAD_SECONDS)
        self.random_seed = self.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
        self._direction = DirectionBbBackend(random_seed=self.random_seed)
        self._scip: Backend | None = None  # kept between calls: its core pool is reused on the same points

    def _scip_bc(self) -> Backend | None:
        from oraclepriv.solvers.scip_bc import ScipBcBackend

        if self._scip is None:
            if not ScipBcBackend.is_installed():
                return None
            self._scip = ScipBcBackend(random_seed=self.random_seed)
        return self._scip

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        deadline = self.deadline(problem)
        d = problem.d
        scip = self._scip_bc() if d > DIRECTION_MAX_D else None
        if scip is None:
            return self._tagged(self._direction.solve(problem.with_deadline(deadline)), "direction-bb")
        if d > CAP_RULE_MAX_D:
            return self._tagged(scip.solve(problem.with_deadline(deadline)), "scip-bc")
        lead = f"scip-bc (lead {self.lead:g} s)"
        first = scip.solve(problem.with_deadline(Deadline(float(self.lead), parent=deadline)))
        if first.status == "optimal" or deadline.expired():
            return self._tagged(first, lead)
        cap = float(problem.w.sum()) / (d + 2)
        loss = reduced_loss(first.hypothesis, problem.X, problem.y, problem.w)
        details = {"lead_status": first.status, "lead_bound": first.bound, "lp_cap": cap}
        if loss <= cap:
            second = scip.solve(problem.with_deadline(deadline))
            ran = f"{lead}, then scip-bc (loss {loss:g} <= LP cap {cap:g})"
        else:
            second = self._direction.solve(problem.with_deadline(deadline), start=first.hypothesis)
            ran = f"{lead}, then direction-bb"
        return combine_answers(problem, first, second, {**second.details, **details, "portfolio": ran})

    @staticmethod
    def _tagged(answer: BackendAnswer, ran: str) -> BackendAnswer:
        answer.details = {**answer.details, "portfolio": ran}
        return answer
