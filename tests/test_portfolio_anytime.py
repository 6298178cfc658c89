"""The default halfspace backend under a time limit: what its phases found and proved is kept, and the time is
split so that a short limit is not spent on a phase whose outcome is known.

``portfolio`` (``solvers/portfolio.py``) runs up to two phases in d = 7 and 8. The tests wrap its scip-bc and
direction-bb in spies that record what each phase was given (its deadline, its start halfspace) and what it
answered, or replace a phase by a stub whose answer is fixed, and check the combined answer against them:
its objective is at most every phase's re-scored loss, its bound at least every phase's bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem
from oraclepriv.solvers.combine import combine_answers, combine_phases
from oraclepriv.solvers.mip.milp import heuristic_halfspaces, reduced_loss
from oraclepriv.solvers.portfolio import LEAD_SHARE, PortfolioBackend
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv import Halfspace, make_oracle


@dataclass
class Call:
    """One phase as a spy saw it: the deadline it was handed, the seconds left then, its start, its answer."""

    deadline: Deadline | None
    left: float | None
    start: Halfspace | None
    answer: BackendAnswer


class Spy(Backend):
    """Runs ``inner`` (a backend, or a fixed answer for a stub phase) and records each call."""

    name = "spy"
    classes = frozenset({"halfspace"})

    def __init__(self, inner: Backend | BackendAnswer) -> None:
        super().__init__()
        self.inner = inner
        self.calls: list[Call] = []

    def solve(self, problem: ReducedProblem, start: Halfspace | None = None) -> BackendAnswer:
        deadline = problem.deadline
        left = None if deadline is None else deadline.remaining()
        if isinstance(self.inner, BackendAnswer):
            answer = BackendAnswer(self.inner.hypothesis, self.inner.bound, self.inner.status, details={})
        elif start is not None:
            answer = self.inner.solve(problem, start=start)
        else:
            answer = self.inner.solve(problem)
        self.calls.append(Call(deadline, left, start, answer))
        self.problem = problem
        return answer


def spied_portfolio(scip: Backend | BackendAnswer | None = None, **options) -> tuple[PortfolioBackend, Spy, Spy]:
    """A portfolio whose scip-bc (real, or the stub answer ``scip``) and direction-bb are spies."""
    portfolio = PortfolioBackend(**options)
    real_scip = portfolio._scip_bc()
    assert real_scip is not None, "pyscipopt is a dependency of the package"
    scip_spy = Spy(real_scip if scip is None else scip)
    direction_spy = Spy(portfolio._direction)
    portfolio._scip, portfolio._direction = scip_spy, direction_spy
    return portfolio, scip_spy, direction_spy


def noisy(n: int, d: int, flipped: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian points labelled by a random halfspace, a share ``flipped`` of the labels flipped."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 4)
    y = (X @ rng.normal(size=d) > 0).astype(int)
    flip = rng.permutation(n)[: int(round(flipped * n))]
    y[flip] = 1 - y[flip]
    return X, y


def assert_no_phase_is_better(res, problem: ReducedProblem, calls: list[Call], tolerance: float) -> None:
    """The answer's objective and bound against every phase's (the oracle answers on the signed problem; here
    every weight is 1, so the signed and the reduced problem coincide)."""
    for call in calls:
        assert res.objective <= reduced_loss(call.answer.hypothesis, problem.X, problem.y, problem.w) + tolerance
        assert res.bound >= call.answer.bound - tolerance


# -- combining the phases' answers --------------------------------------------------------------------------


def test_combining_keeps_the_best_halfspace_and_the_largest_bound_of_every_phase():
    """Three phases, the last cut by the deadline with the trivial bound 0 and the worst halfspace: the answer
    has the first phase's halfspace, the second's bound, the last one's status and nodes, every trace merged."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1], dtype=np.int8)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    problem = ReducedProblem("halfspace", X, y, w)
    best = Halfspace((1.0,), -1.5)  # loss 0
    worse = Halfspace((0.0,), 1.0)  # all 1: loss 3
    worst = Halfspace((0.0,), -1.0)  # all 0: loss 7
    phases = [
        ("lead", BackendAnswer(best, bound=-np.inf, status="time_limit", nodes=3, details={"incumbents": [[0.1, 3]]})),
        ("middle", BackendAnswer(worse, bound=0.0, status="feasible", details={"incumbents": [[0.2, 0]]})),
        ("cut", BackendAnswer(worst, bound=0.0, status="time_limit", nodes=9)),
    ]
    out = combine_phases(problem, phases, {"incumbents": [[0.0, 7]]})
    assert out.hypothesis == best and out.bound == 0.0
    assert out.details["hypothesis_from"] == "lead" and out.details["bound_from"] == "middle"  # earliest of ties
    assert out.status == "optimal"  # loss 0 meets the bound 0 proved by a later phase
    assert out.nodes == 9
    assert out.details["incumbents"] == [[0.0, 7.0], [0.1, 3.0], [0.2, 0.0]]

    phases[1] = ("middle", BackendAnswer(worse, bound=2.0, status="feasible"))
    phases[0] = ("lead", BackendAnswer(worse, bound=1.0, status="time_limit"))
    out = combine_phases(problem, phases, {})
    assert out.hypothesis == worse and out.bound == 2.0 and out.details["bound_from"] == "middle"
    assert out.status == "time_limit"  # loss 3 above the bound 2: the state the last phase ended in
    pair = combine_answers(problem, phases[0][1], phases[2][1], {})
    assert pair.details["hypothesis_from"] == "first" and pair.bound == 1.0
    with pytest.raises(ValueError, match="phases must name at least one answer"):
        combine_phases(problem, [], {})


def test_a_phase_cut_by_the_deadline_never_replaces_what_the_lead_proved(monkeypatch):
    """A small noisy d = 7 instance (the lead path): a stub lead proves the optimum as its bound but found only
    the start heuristics' halfspace (above the LP cap, so direction-bb follows); direction-bb, cut by the
    deadline, proves less. The answer keeps the lead's bound and a halfspace at least as good as every phase's.
    Without its crossing pairs (the search then needs seconds here, with them a fraction of one)."""
    from oraclepriv.solvers.combinatorial import direction_compiled

    monkeypatch.setattr(direction_compiled, "mode", "off")
    X, y = noisy(40, 7, 0.2, seed=5)  # optimum 4; direction-bb needs seconds to prove it
    optimum = make_oracle("halfspace", backend="scip-bc").solve(X, y)
    assert optimum.certified
    ones = np.ones(40)
    start = min(heuristic_halfspaces(X, y, ones), key=lambda h: reduced_loss(h, X, y, ones))
    assert reduced_loss(start, X, y, ones) > 40 / 9  # above the LP cap W / (d + 2)
    stub = BackendAnswer(start, bound=optimum.objective, status="time_limit")
    portfolio, scip_spy, direction_spy = spied_portfolio(scip=stub, time_limit=0.2)
    res = make_oracle("halfspace", backend=portfolio).solve(X, y)
    assert res.details["portfolio"].endswith("then direction-bb") and len(scip_spy.calls) == 1
    (cut,) = direction_spy.calls
    # cut by its deadline; on a fast machine it may still have proved the optimum, never more
    assert cut.answer.status == "time_limit" and cut.answer.bound <= optimum.objective
    assert res.bound == optimum.objective and res.details["bound_from"] == "scip-bc (lead)"
    assert res.certified == (res.objective == optimum.objective)
    assert_no_phase_is_better(res, direction_spy.problem, scip_spy.calls + direction_spy.calls, 1e-9)


# -- the time split under a short limit -----------------------------------------------------------------------


def test_noisy_data_gets_a_short_lead_the_local_search_then_direction_bb_with_the_rest():
    """d = 8, 150 points, 20 % of the labels flipped (start loss above the LP cap W / 10) under a 4 s limit:
    scip-bc leads for a tenth of the limit, the local search takes at most a tenth of what is left and hands its
    halfspace on, and direction-bb gets the rest of the call's time and is cut by the deadline; the answer is
    no worse, in objective or bound, than any of the three."""
    X, y = noisy(150, 8, 0.2, seed=0)
    limit = 4.0
    portfolio, scip_spy, direction_spy = spied_portfolio(time_limit=limit)
    res = make_oracle("halfspace", backend=portfolio).solve(X, y)
    ran = res.details["portfolio"]
    (lead,) = scip_spy.calls
    assert lead.deadline is not None and lead.deadline.seconds == pytest.approx(LEAD_SHARE * limit, rel=0.05)
    assert ran.startswith(f"scip-bc (lead {lead.deadline.seconds:.3g} s), then local search (")
    assert ran.endswith("then direction-bb")
    (call,) = direction_spy.calls
    assert call.answer.status == "time_limit"  # the phase was cut by the deadline
    assert call.deadline is not None and call.deadline.parent is None  # the call's own deadline, not a share
    # the lead and the local search took a tenth each (plus the start heuristics and one line search past it)
    assert call.left is not None and call.left >= limit * (1 - 2 * LEAD_SHARE) - 0.3
    problem = direction_spy.problem
    lead_loss = reduced_loss(lead.answer.hypothesis, problem.X, problem.y, problem.w)
    assert call.start is not None
    start_loss = reduced_loss(call.start, problem.X, problem.y, problem.w)
    assert start_loss == min(lead_loss, res.details["local_search_loss"])
    assert res.objective <= start_loss
    assert_no_phase_is_better(res, problem, scip_spy.calls + direction_spy.calls, 1e-9)


def test_nearly_separable_data_gets_scip_bc_once_for_the_whole_time():
    """d = 8, start loss below the LP cap: scip-bc runs once, on the call's own deadline (no lead followed by a
    restart that would repeat its heuristics and root), and the answer is scip-bc's."""
    X, y = noisy(80, 8, 0.0, seed=1)
    y[:2] = 1 - y[:2]
    portfolio, scip_spy, direction_spy = spied_portfolio(time_limit=2.0)
    res = make_oracle("halfspace", backend=portfolio).solve(X, y)
    assert res.details["portfolio"].startswith("scip-bc (start loss")
    assert res.details["start_loss"] <= res.details["lp_cap"] == pytest.approx(80 / 10)
    assert len(scip_spy.calls) == 1 and not direction_spy.calls
    (call,) = scip_spy.calls
    assert call.deadline is not None and call.deadline.parent is None and call.deadline.seconds == 2.0
    assert res.certified and res.hypothesis == call.answer.hypothesis


@pytest.mark.parametrize("then", ["direction-bb", "scip-bc"])
@pytest.mark.parametrize(("limit", "lead"), [(2.0, LEAD_SHARE * 2.0), (None, 1.0)])
def test_the_lead_takes_at_most_a_tenth_of_a_short_limit_and_the_next_phase_the_rest(limit, lead, then):
    """Where the start heuristics are above the switch (``CAP_SHARE`` times the LP cap), scip-bc leads for
    ``lead`` seconds (1 by default) without a limit, and at most a tenth of the time left under one; the phase the
    switch picks then gets the call's own deadline (direction-bb with the lead's halfspace as its start). Stub
    phases answer at once (40 points: the local search does not run), so the test reads the deadlines and starts
    they were handed."""
    from oraclepriv.solvers.portfolio import CAP_SHARE

    X, y = noisy(40, 8, 0.2, seed=3)
    ones = np.ones(40)
    switch = CAP_SHARE[8] * 40 / 10
    if then == "direction-bb":  # the start heuristics' best (loss 6): above the switch
        lead_h = min(heuristic_halfspaces(X, y, ones), key=lambda h: reduced_loss(h, X, y, ones))
    else:  # an optimal halfspace (loss 3): at the switch
        lead_h = make_oracle("halfspace", backend="scip-bc").solve(X, y).hypothesis
    assert (reduced_loss(lead_h, X, y, ones) > switch) == (then == "direction-bb")
    stub = BackendAnswer(lead_h, bound=0.0, status="time_limit")
    portfolio, scip_spy, direction_spy = spied_portfolio(scip=stub, time_limit=limit)
    direction_spy.inner = BackendAnswer(Halfspace(tuple([0.0] * 8), -1.0), bound=0.0, status="time_limit")
    res = make_oracle("halfspace", backend=portfolio).solve(X, y)
    lead_call = scip_spy.calls[0]
    assert lead_call.deadline is not None and lead_call.deadline.seconds == pytest.approx(lead, rel=0.05)
    assert res.details["portfolio"].startswith(f"scip-bc (lead {lead_call.deadline.seconds:.3g} s), then {then}")
    (rest,) = scip_spy.calls[1:] if then == "scip-bc" else direction_spy.calls
    assert rest.deadline is not None and rest.deadline.parent is None  # the rest of the call's own time
    if then == "direction-bb":
        assert rest.start == lead_h
    assert res.hypothesis == lead_h  # the later stub phase found worse


#: (n, d, share of labels flipped, seed) of small instances that scip-bc and direction-bb each prove within
#: seconds, one per path of the rule: the start at or below the cap (scip-bc alone), a lead that proves the
#: optimum, a lead whose loss is at or below the cap (then scip-bc), and one above it (the local search, then
#: direction-bb)
FINISHING = {
    "scip-bc alone": (60, 7, 0.0, 4),
    "lead": (40, 7, 0.1, 0),
    "lead, then scip-bc": (120, 7, 0.1, 4),
    "lead, then local search, then direction-bb": pytest.param((100, 7, 0.15, 1), marks=pytest.mark.slow),
}


@pytest.mark.parametrize("case", list(FINISHING.values()), ids=list(FINISHING))
def test_where_every_single_backend_finishes_the_portfolio_answers_as_they_do(case):
    """The deterministic comparison: on small d = 7 instances that scip-bc and direction-bb each prove within
    the limit, the portfolio proves the same optimum under the same limit (objective and bound), on every path
    of its rule."""
    X, y = noisy(*case)
    answers = [make_oracle("halfspace", backend=b, time_limit=60).solve(X, y) for b in ("direction-bb", "scip-bc")]
    res = make_oracle("halfspace", backend="portfolio", time_limit=60).solve(X, y)
    assert all(a.certified for a in answers) and res.certified
    assert res.objective == min(a.objective for a in answers)
    assert res.bound >= max(a.bound for a in answers) - res.tolerance


@pytest.mark.parametrize("n", [pytest.param(40, marks=pytest.mark.slow), 100])
def test_a_heavily_weighted_call_goes_to_direction_bb_whatever_the_cap(n):
    """d = 7, nearly separable private rows plus a few heavy public points with random labels (an RRSPM-like call):
    the start loss is under the LP cap, which would send a unit-weight call to scip-bc for the whole time, but the
    cover-cut LP cannot use such weights, so no scip-bc lead runs: the local search from the start heuristics' best
    (from 100 distinct points), then direction-bb from the better; the answer is the optimum that scip-bc alone
    certifies."""
    from oraclepriv.solvers.portfolio import heavily_weighted

    rng = np.random.default_rng(4)
    X, y = noisy(n, 7, 0.05, seed=4)
    Z = rng.normal(size=(4, 7))
    X, y = np.vstack([X, Z]), np.concatenate([y, rng.integers(0, 2, size=4)])
    w = np.concatenate([np.ones(n), rng.uniform(8.0, 12.0, size=4)])
    assert heavily_weighted(w) and not heavily_weighted(np.ones(n))
    portfolio, scip_spy, direction_spy = spied_portfolio()
    res = make_oracle("halfspace", backend=portfolio).solve(X, y, w)
    assert res.details["heavily_weighted"] is True
    if n < 100:  # under the LP cap, which counts the heavy weights the LP cannot use
        assert res.details["start_loss"] <= res.details["lp_cap"]
    ran = res.details["portfolio"]
    assert ran.startswith("local search (") == (n >= 100) and ran.endswith("direction-bb (heavily weighted)")
    assert not scip_spy.calls and len(direction_spy.calls) == 1
    (call,) = direction_spy.calls
    if n >= 100:  # direction-bb starts from the local search's halfspace, which is at least as good as the start
        assert reduced_loss(call.start, X, y, w) == res.details["local_search_loss"] <= res.details["start_loss"]
    truth = make_oracle("halfspace", backend="scip-bc").solve(X, y, w)
    assert truth.certified and res.certified and res.objective == pytest.approx(truth.objective, abs=1e-9)


@pytest.mark.parametrize("backend", ["portfolio", "scip-bc"])
def test_an_oracle_pickled_after_a_call_keeps_no_cores_and_solves_again(backend):
    """After a call in d = 7 (the portfolio runs scip-bc's lead) the oracle pickles, without the core pool built
    from the points it saw, and the loaded oracle gives the same answer."""
    import pickle

    X, y = noisy(40, 7, 0.05, seed=4)
    oracle = make_oracle("halfspace", backend=backend)
    first = oracle.solve(X, y)
    data = pickle.dumps(oracle)
    assert X.tobytes() not in data
    loaded = pickle.loads(data)
    scip = loaded._backends[backend]._scip if backend == "portfolio" else loaded._backends[backend]
    assert scip is None or scip._cache.key is None  # no core pool came along
    again = loaded.solve(X, y)
    assert again.certified and again.objective == first.objective
