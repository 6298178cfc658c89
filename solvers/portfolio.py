"""``portfolio``: the exact halfspace backend the oracle uses by default from d = 2 on.

Two exact methods with opposite strengths (measured in ``docs/solvers/direction-bb.md``):

* ``direction-bb`` (branch-and-bound over normals) is fastest up to d = 6 whatever the noise, and
  the only method here that certifies noisy data whose optimum exceeds W/(d + 2) (W the total
  weight), the cap of the cover-cut LP bound; its work grows quickly with d;
* ``scip-bc`` (cover-cut branch-and-cut) certifies nearly separable data within a second in any
  dimension, and stalls on noisy data; its primal heuristics (a local search above the cap) find
  better halfspaces early than direction-bb's own.

The rule: d <= 6, ``direction-bb``; d >= 9, ``scip-bc``. In d = 7 and 8 a heavily weighted call (a private
learner's noisy call: :func:`heavily_weighted`) gets the local search from the start heuristics' best halfspace for
:data:`HEAVY_SEARCH_SECONDS`, then ``direction-bb`` from the better of the two for the time left: the cover-cut LP
cannot use such weights, so a scip-bc lead costs its second without proving anything (measured in
``docs/solvers/direction-bb.md``, section 4). Any other call follows the cap W/(d + 2): for points in general
position every core has d + 2 points, so the cover-cut LP bound cannot exceed it (``docs/solvers/scip-bc.md``,
section 7), and a larger optimum can be proved only by branching, where direction-bb is faster. With the crossing
pairs (:mod:`~oraclepriv.solvers.combinatorial.direction_kernels`) direction-bb is the faster already below the
cap (from about a quarter of it in d = 7 and three quarters in d = 8: ``docs/solvers/direction-bb.md``, section 4),
so the switch is at :data:`CAP_SHARE` times the cap. The best loss known decides, and each probe runs only while the method is open:

1. the start heuristics (the constants, the best stump, the least-squares direction; milliseconds), the
   first of scip-bc's own candidates: a loss at or below the switch goes to ``scip-bc`` for the whole time
   (a lead would end there too, and its restart would repeat scip-bc's heuristics and root);
2. otherwise a lead of ``scip-bc`` for ``lead`` seconds (1 by default), at most a tenth of the time left
   under a time limit: its heuristics, local search and root prove nearly separable data at once;
3. a loss still above the cap: scip-bc's local search
   (:func:`~oraclepriv.solvers.combinatorial.local_search.search_from_start`) from the lead's best halfspace for as long
   again, the time scip-bc alone gives it (a tenth of the time left; it does not run on fewer than 100
   distinct points, or flat ones);
4. a loss still above the switch goes to ``direction-bb`` for the time left, started from the best halfspace
   found; a loss at or below it to ``scip-bc`` for the time left (its cores are kept).

So a short time limit is not spent on a lead whose outcome is known, or half of it on a lead whose bound
direction-bb would not have needed: the probes take at most a fifth of the time, they find the halfspaces
scip-bc alone finds (its starts, then the local search with its share of the time), and the better start
narrows direction-bb's search. The cap only chooses the method (on degenerate data smaller cores can lift
the LP bound: a guide, not a bound); the proof is always the chosen backends' own. The answer keeps the
largest bound proved by any phase (each holds over all closed halfspaces) and the best halfspace any phase
found (:func:`~oraclepriv.solvers.combine.combine_phases`), so a phase cut short by the deadline never
loses what an earlier one found or proved. Without pyscipopt every call goes to ``direction-bb``.

References
----------
.. [1] A. Block, M. Bun, R. Desai, A. Shetty, S. Wu, "Oracle-Efficient Differentially Private
   Learning with Public Data" (the weighted ERM oracle, Def. 4).
.. [2] H. R. Lourenco, O. C. Martin, T. Stuetzle, "Iterated local search", in *Handbook of
   Metaheuristics*, 2003 (the local search of step 3).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from oraclepriv.solvers.base import MAX_RANDOM_SEED, Backend, BackendAnswer, ReducedProblem, Status
from oraclepriv.solvers.combinatorial.direction_bb import DirectionBbBackend
from oraclepriv.solvers.combinatorial.local_search import LOCAL_SEARCH_SHARE, search_from_start
from oraclepriv.solvers.combine import combine_phases
from oraclepriv.solvers.mip.milp import heuristic_halfspaces, reduced_loss
from oraclepriv.solvers.runtime.deadline import Deadline
from oraclepriv.solvers.runtime.incumbents import IncumbentTrace

from oraclepriv.hypotheses import Halfspace

__all__ = [
    "PortfolioBackend",
    "DIRECTION_MAX_D",
    "CAP_RULE_MAX_D",
    "CAP_SHARE",
    "HEAVY_SEARCH_SECONDS",
    "LEAD_SECONDS",
    "LEAD_SHARE",
    "heavily_weighted",
]

#: up to this dimension the portfolio runs direction-bb alone: there a lead of scip-bc costs more than it
#: saves (measured in docs/solvers/direction-bb.md, section 4)
DIRECTION_MAX_D = 6
#: up to this dimension the cap rule W / (d + 2) chooses between scip-bc and direction-bb (module
#: docstring); above it, scip-bc alone
CAP_RULE_MAX_D = 8
#: in d = 7 and 8 a unit-weight call goes to direction-bb when its loss is above this share of the cap W / (d + 2):
#: with the crossing pairs' kernel direction-bb is the faster from about a quarter of the cap on in d = 7 and from about
#: three quarters in d = 8 (docs/solvers/direction-bb.md, section 4)
CAP_SHARE = {7: 0.25, 8: 0.75}
#: a heavily weighted call in d = 7, 8 starts with the local search for this many seconds (at most a tenth of the time
#: left), not with a scip-bc lead, whose LP cannot use the heavy weights (docs/solvers/direction-bb.md, section 4)
HEAVY_SEARCH_SECONDS = 0.3
#: scip-bc's lead in seconds (d = 7, 8), and the most the local search after it gets: a lead proves nearly
#: separable instances within a second or two
LEAD_SECONDS = 1.0
#: under a time limit the lead, and then the local search, take at most this share of the time left each (the
#: share scip-bc gives its local search): at short limits a lead of LEAD_SECONDS would take the time the
#: backend that follows needs
LEAD_SHARE = LOCAL_SEARCH_SHARE


class PortfolioBackend(Backend):
    """``direction-bb`` and ``scip-bc`` chosen and combined by dimension and loss (module docstring).

    Parameters
    ----------
    time_limit : float or None, default None
        Seconds for one call; the phases share it.
    **options
        The backend's options, by keyword (an unknown one is refused by name):

        lead : float, default 1.0
            Seconds scip-bc leads in d = 7 and 8 when the start heuristics leave the method open (not on a heavily
            weighted call), and at most as long again for the local search after it (under a time limit, each at
            most a tenth of the time left).
        random_seed : int or None, default None
            The ``random_seed`` of the direction-bb and scip-bc it runs (and so of direction-bb's fallback)
            and of the local search (None: seed 0, as in scip-bc).

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
    certificate = "the largest of the bounds of the backends it ran, each proved over all closed halfspaces"

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **options)
        self.lead = self.seconds_option("lead", LEAD_SECONDS)
        self.random_seed = self.int_option("random_seed", None, 0, MAX_RANDOM_SEED)
        self._direction = DirectionBbBackend(random_seed=self.random_seed)
        self._scip: Backend | None = None  # kept between calls: its core pool is reused on the same points

    def __getstate__(self) -> dict[str, Any]:
        """A pickle or copy leaves the kept scip-bc (its core pool holds the last call's points) behind."""
        state = dict(self.__dict__)
        state["_scip"] = None
        return state

    def _scip_bc(self) -> Backend | None:
        from oraclepriv.solvers.branch_and_cut.scip_bc import ScipBcBackend

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
        return self._cap_rule(problem, deadline, scip)

    def lead_seconds(self, deadline: Deadline) -> float:
        """The lead's seconds under ``deadline``: ``lead``, and at most :data:`LEAD_SHARE` of the time left
        when a limit applies."""
        left = deadline.remaining()
        return self.lead if left is None else min(self.lead, LEAD_SHARE * left)

    def _cap_rule(self, problem: ReducedProblem, deadline: Deadline, scip: Backend) -> BackendAnswer:
        """d = 7, 8: the steps of the module docstring; every phase that ran enters the answer."""
        X, y, w = problem.X, problem.y, problem.w
        cap = float(w.sum()) / (problem.d + 2)
        share = CAP_SHARE[problem.d]
        switch = share * cap
        start, start_loss = _start(X, y, w)
        heavy = heavily_weighted(w)
        details: dict[str, Any] = {
            "lp_cap": cap,
            "switch_loss": switch,
            "start_loss": start_loss,
            "heavily_weighted": heavy,
        }
        if heavy:
            return self._heavily_weighted(problem, deadline, start, details)
        if start_loss <= switch:
            answer = scip.solve(problem.with_deadline(deadline))
            return self._tagged(answer, f"scip-bc (start loss {start_loss:g} <= {share:g} x LP cap {cap:g})", details)

        lead = self.lead_seconds(deadline)
        first = scip.solve(problem.with_deadline(Deadline(lead, parent=deadline)))
        phases = [("scip-bc (lead)", first)]
        ran = f"scip-bc (lead {lead:.3g} s)"
        details.update(lead_status=first.status, lead_bound=first.bound)
        so_far = combine_phases(problem, phases, {**first.details, **details, "portfolio": ran})
        if so_far.status == "optimal" or deadline.expired():
            return so_far
        best = so_far.hypothesis
        assert isinstance(best, Halfspace)  # every phase is a halfspace search
        loss = reduced_loss(best, X, y, w)

        if loss > switch:  # search_from_start holds the search to LOCAL_SEARCH_SHARE (= LEAD_SHARE) of the time left
            searched = _local_search(problem, deadline, best, loss, self.lead, self.random_seed or 0, details)
            if searched is not None:
                phases.append(("local search", searched[0]))
                ran += f", then local search ({loss:g} -> {searched[1]:g})"
                if searched[1] < loss:
                    found = searched[0].hypothesis
                    assert isinstance(found, Halfspace)
                    best, loss = found, searched[1]
                if deadline.expired():
                    return combine_phases(problem, phases, {**first.details, **details, "portfolio": ran})

        if loss <= switch:
            phases.append(("scip-bc", scip.solve(problem.with_deadline(deadline))))
            ran += f", then scip-bc (loss {loss:g} <= {share:g} x LP cap {cap:g})"
        else:
            phases.append(("direction-bb", self._direction.solve(problem.with_deadline(deadline), start=best)))
            ran += ", then direction-bb"
        return combine_phases(problem, phases, {**phases[-1][1].details, **details, "portfolio": ran})

    def _heavily_weighted(
        self, problem: ReducedProblem, deadline: Deadline, best: Halfspace, details: dict[str, Any]
    ) -> BackendAnswer:
        """d = 7, 8, a heavily weighted call: the local search from the start heuristics' best halfspace ``best``
        for :data:`HEAVY_SEARCH_SECONDS`, whatever the cap, then ``direction-bb`` from the better of the two for the
        time left."""
        loss = details["start_loss"]
        phases: list[tuple[str, BackendAnswer]] = []
        ran = ""
        searched = _local_search(
            problem, deadline, best, loss, HEAVY_SEARCH_SECONDS, self.random_seed or 0, details, whatever_the_cap=True
        )
        if searched is not None:
            phases.append(("local search", searched[0]))
            ran = f"local search ({loss:g} -> {searched[1]:g}), then "
            if searched[1] < loss:
                found = searched[0].hypothesis
                assert isinstance(found, Halfspace)
                best = found
            if deadline.expired():
                return combine_phases(problem, phases, {**details, "portfolio": ran + "nothing (deadline)"})
        phases.append(("direction-bb", self._direction.solve(problem.with_deadline(deadline), start=best)))
        ran += "direction-bb (heavily weighted)"
        return combine_phases(problem, phases, {**phases[-1][1].details, **details, "portfolio": ran})

    @staticmethod
    def _tagged(answer: BackendAnswer, ran: str, details: dict[str, Any] | None = None) -> BackendAnswer:
        answer.details = {**answer.details, **(details or {}), "portfolio": ran}
        return answer


def heavily_weighted(w: np.ndarray) -> bool:
    """Whether a call's weights are those of a private learner's noisy call: at least
    :data:`~oraclepriv.solvers.branch_and_cut.scip_bc_split.HEAVY_MIN_SHARE` of the weight on points weighing more
    than :data:`~oraclepriv.solvers.branch_and_cut.scip_bc_split.HEAVY_FACTOR` times the median (RRSPM's public
    points with Laplace weights, Perturbation's with Gaussian ones). The cover-cut LP cannot use such weights, so in
    d = 7 and 8 these calls go to ``direction-bb`` after a short local search, without a scip-bc lead, whatever the
    cap says (``docs/solvers/direction-bb.md``, section 4)."""
    from oraclepriv.solvers.branch_and_cut.scip_bc_split import HEAVY_MIN_SHARE, split_groups_by_weight

    heavy = split_groups_by_weight(w)
    total = float(np.sum(w))
    return bool(heavy.any() and total > 0 and float(np.sum(w[heavy])) >= HEAVY_MIN_SHARE * total)


def _start(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[Halfspace, float]:
    """The best of the start heuristics (``heuristics.heuristic_halfspaces``) and its reduced loss; scip-bc's
    candidates include them, so a lead's best loss is never above it."""
    losses = [(reduced_loss(h, X, y, w), i, h) for i, h in enumerate(heuristic_halfspaces(X, y, w))]
    loss, _, best = min(losses, key=lambda t: (t[0], t[1]))
    return best, loss


def _local_search(
    problem: ReducedProblem,
    deadline: Deadline,
    start: Halfspace,
    loss: float,
    seconds: float,
    seed: int,
    details: dict[str, Any],
    *,
    whatever_the_cap: bool = False,
) -> tuple[BackendAnswer, float] | None:
    """The local search from ``start`` (reduced loss ``loss``) as a phase (:func:`search_from_start`, which runs it
    only above the LP cap unless ``whatever_the_cap``): its answer, which proves nothing beyond the trivial bound 0,
    and its halfspace's reduced loss (also put in ``details["local_search_loss"]``); None when it does not run."""
    X, y, w = problem.X, problem.y, problem.w
    found = search_from_start(X, y, w, start, loss, deadline, seconds, seed, whatever_the_cap=whatever_the_cap)
    if found is None:
        return None
    found_loss = reduced_loss(found, X, y, w)
    trace = IncumbentTrace.for_deadline(deadline)
    trace.note(found_loss)
    status: Status = "time_limit" if deadline.expired() else "feasible"
    details["local_search_loss"] = found_loss
    return BackendAnswer(found, 0.0, status, details={"incumbents": trace.to_list()}), found_loss
