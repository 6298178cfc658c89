"""The iterated local search over hyperplanes (solvers/combinatorial/local_search.py): a primal heuristic of the branch-and-cut
backends. It must never make an answer worse or less exact: its halfspace is one more candidate, re-scored."""

from __future__ import annotations

import numpy as np
import pytest
from optional_backends import BRANCH_AND_CUT
from oraclepriv.solvers.combinatorial.direction_bounds import WhitenedGroups
from oraclepriv.solvers.combinatorial.local_search import (
    iterated_line_search,
    search_from_start,
    to_original,
    to_whitened,
)
from oraclepriv.solvers.mip.milp import heuristic_halfspaces
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv import make_oracle
from oraclepriv.hypotheses import Halfspace


def noisy(seed: int, n: int = 150, d: int = 4, flips: float = 0.25, signed: bool = False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) > 0).astype(int)
    y[rng.random(n) < flips] ^= 1
    w = rng.laplace(size=n) if signed else np.ones(n)
    return X, y, w


@pytest.mark.parametrize("seed", range(5))
def test_whitened_coordinates_describe_the_same_halfspace(seed):
    X, y, w = noisy(seed)
    groups = WhitenedGroups.build(X, y, np.abs(w))
    rng = np.random.default_rng(seed)
    h = Halfspace(tuple(rng.normal(size=X.shape[1])), float(rng.normal()))
    v, t = to_whitened(groups, h)
    back = to_original(groups, v, t)
    assert np.array_equal(back.predict(X), h.predict(X))
    assert np.abs(v).max() == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(4))  # even seeds: positive weights; odd: signed
def test_the_search_never_returns_a_worse_halfspace_and_is_deterministic(seed):
    X, y, w = noisy(seed, signed=seed % 2 == 1)
    w_abs = np.abs(w)
    y_red = np.where(w < 0, 1 - y, y)  # the reduced problem the backends see
    groups = WhitenedGroups.build(X, y_red, w_abs)
    start = min(heuristic_halfspaces(X, y_red, w_abs), key=lambda h: h.loss(X, y_red, w_abs))
    found, steps = iterated_line_search(groups, start, Deadline(None), max_steps=200, seed=seed)
    again, steps_again = iterated_line_search(groups, start, Deadline(None), max_steps=200, seed=seed)
    tol = 1e-9 * max(1.0, float(w_abs.sum()))
    assert found.loss(X, y_red, w_abs) <= start.loss(X, y_red, w_abs) + tol
    assert steps == steps_again == 200 and found == again


def test_the_search_stops_at_its_deadline():
    X, y, w = noisy(0, n=400, d=6)
    groups = WhitenedGroups.build(X, y, w)
    start = heuristic_halfspaces(X, y, w)[2]
    _, steps = iterated_line_search(groups, start, Deadline(0.0), max_steps=10**9)
    assert steps == 0


def test_when_the_search_runs():
    X, y, w = noisy(1)  # 150 groups, a quarter of the labels flipped: far above W/(d + 2) = 25
    start = heuristic_halfspaces(X, y, w)[2]
    loss = start.loss(X, y, w)
    assert loss > w.sum() / (X.shape[1] + 2)
    assert search_from_start(X, y, w, start, loss, Deadline(None), 0.5) is not None
    assert search_from_start(X, y, w, start, loss, Deadline(None), 0.0) is None  # switched off
    assert search_from_start(X, y, w, start, w.sum() / 6 - 1, Deadline(None), 0.5) is None  # below the cap
    few = noisy(1, n=60)
    assert search_from_start(*few, start, loss, Deadline(None), 0.5) is None  # too few groups to pay


@pytest.mark.parametrize("backend", BRANCH_AND_CUT)
@pytest.mark.slow
def test_the_backends_run_it_on_noisy_instances_and_stay_exact(backend):
    X, y, w = noisy(2, n=110, d=4, flips=0.2)  # loss 20 > W/(d + 2) = 18.3 and 110 groups: the search runs
    res = make_oracle("halfspace", backend=backend, local_search=0.5).solve(X, y, w)
    reference = make_oracle("halfspace", backend="direction-bb").solve(X, y, w)
    assert "local-search" in res.details["candidates"]
    assert res.certified and res.objective == pytest.approx(reference.objective, abs=1e-9 * np.abs(w).sum())
    off = make_oracle("halfspace", backend=backend, local_search=0).solve(X, y, w)
    assert "local-search" not in off.details["candidates"] and off.objective == pytest.approx(res.objective)


def test_a_broken_local_search_cannot_corrupt_the_answer(monkeypatch):
    """The search's halfspace is one more candidate: one that is wrong (here, the worst constant) is
    re-scored like any other and loses; the answer is still the certified optimum."""
    import oraclepriv.solvers.branch_and_cut.scip_bc as scip_bc

    X, y, w = noisy(2, n=110, d=4, flips=0.2)
    monkeypatch.setattr(scip_bc, "search_from_start", lambda *a: Halfspace((0.0,) * 4, 1.0))
    res = make_oracle("halfspace", backend="scip-bc").solve(X, y, w)
    reference = make_oracle("halfspace", backend="direction-bb").solve(X, y, w)
    assert res.certified and res.objective == reference.objective
    assert res.details["candidates"]["local-search"] > res.objective


@pytest.mark.parametrize("bad", [-1, "5", True, float("nan"), 2e6])
def test_bad_local_search_values_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="local_search must be a number of seconds"):
        make_oracle("halfspace", backend="scip-bc", local_search=bad)
