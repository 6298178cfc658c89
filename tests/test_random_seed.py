"""The ``random_seed`` option of the branch-and-cut backends (scip-bc, gurobi-bc), the Gurobi big-M model and the portfolio.

A seed changes the search path (SCIP's seed shift, Gurobi's ``Seed``, the local search's chains), never
the answer's exactness: every seed must give the certified optimum an independent method finds. The seed
must also reach the solver: read back from the SCIP model, and from Gurobi's own log.
"""

from __future__ import annotations

import numpy as np
import pytest
from optional_backends import BRANCH_AND_CUT, needs_gurobi
from oraclepriv.solvers.base import MAX_RANDOM_SEED
from oraclepriv.solvers.branch_and_cut import scip_bc, scip_bc_model
from oraclepriv.solvers.combinatorial.direction_bounds import WhitenedGroups
from oraclepriv.solvers.combinatorial.local_search import iterated_line_search
from oraclepriv.solvers.mip.milp import heuristic_halfspaces
from oraclepriv.solvers.mip.mipbackend import HittingSetCache
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv import make_oracle


def noisy(seed: int, n: int = 110, d: int = 4, flips: float = 0.2, signed: bool = False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) > 0).astype(int)
    y[rng.random(n) < flips] ^= 1
    w = rng.integers(-3, 4, size=n).astype(float) if signed else np.ones(n)
    return X, y, w


@pytest.fixture
def scip_seeds(monkeypatch) -> list:
    """The random_seed of every SCIP search scip-bc starts from now on (its calls still run)."""
    seen: list = []
    run = scip_bc.run_branch_and_cut

    def spy(*args, **kwargs):
        seen.append(kwargs["random_seed"])
        return run(*args, **kwargs)

    monkeypatch.setattr(scip_bc, "run_branch_and_cut", spy)  # the parts and fallbacks run through scip-bc too
    return seen


@pytest.mark.parametrize(
    "backend", [*BRANCH_AND_CUT, "direction-bb", "portfolio", pytest.param("gurobi", marks=needs_gurobi)]
)
@pytest.mark.parametrize("bad", [-1, MAX_RANDOM_SEED + 1, 1.5, "3", True])
def test_bad_seeds_are_refused_by_name(backend, bad):
    with pytest.raises(ValueError, match="random_seed") as err:
        make_oracle("halfspace", backend=backend, random_seed=bad)
    assert repr(bad) in str(err.value) or str(bad) in str(err.value)


@pytest.mark.parametrize("seed", [None, 0, 12345, MAX_RANDOM_SEED])
def test_the_scip_model_carries_the_seed_shift(seed):
    pyscipopt = scip_bc_model.import_pyscipopt()
    X, y, w = noisy(0, n=20, d=2)
    form, sep, _ = HittingSetCache().get(X, y)
    model, _z, _handler = scip_bc_model.build_model(
        pyscipopt, sep, form.groups.group_weights(w), form.yg, [], abs_gap=0.0, random_seed=seed
    )
    assert model.getParam("randomization/randomseedshift") == (0 if seed is None else seed)


@pytest.mark.slow
def test_scip_bc_hands_its_seed_to_scip_and_to_the_local_search(monkeypatch):
    seen: dict[str, list] = {"scip": [], "local": []}
    run, search = scip_bc.run_branch_and_cut, scip_bc.search_from_start

    def spy_run(*args, **kwargs):
        seen["scip"].append(kwargs["random_seed"])
        return run(*args, **kwargs)

    def spy_search(*args):
        seen["local"].append(args[-1])
        return search(*args)

    monkeypatch.setattr(scip_bc, "run_branch_and_cut", spy_run)
    monkeypatch.setattr(scip_bc, "search_from_start", spy_search)
    X, y, w = noisy(2)
    make_oracle("halfspace", backend="scip-bc", random_seed=41, local_search=0.2).solve(X, y, w)
    make_oracle("halfspace", backend="scip-bc", local_search=0.2).solve(X, y, w)
    assert seen == {"scip": [41, None], "local": [41, 0]}


def test_the_local_search_depends_on_its_seed():
    """Different seeds take different chains (else the option would not change the search), and each
    seed is reproducible."""
    X, y, w = noisy(1, n=150, flips=0.25)
    groups = WhitenedGroups.build(X, y, w)
    start = heuristic_halfspaces(X, y, w)[2]
    found = [iterated_line_search(groups, start, Deadline(None), max_steps=60, seed=s)[0] for s in range(4)]
    assert len(set(found)) > 1
    assert iterated_line_search(groups, start, Deadline(None), max_steps=60, seed=2)[0] == found[2]


@pytest.mark.parametrize("backend", BRANCH_AND_CUT)
@pytest.mark.parametrize("instance", range(4))
@pytest.mark.slow
def test_every_seed_gives_the_certified_optimum(backend, instance):
    X, y, w = noisy(10 + instance, n=40 + 8 * instance, d=3, signed=instance % 2 == 1)
    reference = make_oracle("halfspace", backend="direction-bb").solve(X, y, w)
    assert reference.certified
    tol = 1e-9 * np.abs(w).sum()
    for seed in (0, 7, 2**20 + 3):
        res = make_oracle("halfspace", backend=backend, random_seed=seed, local_search=0.2).solve(X, y, w)
        assert res.certified and res.objective == pytest.approx(reference.objective, abs=tol)
        assert res.hypothesis.loss(X, y, w) == pytest.approx(reference.objective, abs=tol)


@needs_gurobi
@pytest.mark.parametrize("backend", ["gurobi-bc", "gurobi"])
def test_gurobi_logs_the_seed_it_was_given(backend, capfd):
    """Gurobi's own log (shown with output_flag) states the Seed it runs with; without output_flag
    nothing reaches the console."""
    X, y, w = noisy(3, n=80)
    make_oracle("halfspace", backend=backend, random_seed=7, output_flag=True).solve(X, y, w)
    out = capfd.readouterr().out
    assert "Set parameter Seed to value 7" in out
    make_oracle("halfspace", backend=backend, random_seed=7).solve(X, y, w)
    quiet = capfd.readouterr()
    assert quiet.out == "" and "Seed" not in quiet.err


@pytest.mark.slow
def test_the_partition_parts_take_the_seed(scip_seeds):
    """The parts of ``strategy="partition"`` and the search over the whole run with the same seed shift."""
    seen = scip_seeds
    X, y, w = noisy(4, n=120, flips=0.15)
    res = make_oracle("halfspace", backend="scip-bc", strategy="partition", part_size=50, random_seed=9).solve(X, y, w)
    reference = make_oracle("halfspace", backend="direction-bb").solve(X, y, w)
    assert res.certified and res.objective == pytest.approx(reference.objective)
    assert seen and set(seen) == {9}


def test_the_portfolio_hands_its_seed_to_scip_bc(scip_seeds):
    """In d >= 7 the portfolio runs scip-bc, which gets the portfolio's seed; the answer stays exact."""
    seen = scip_seeds
    X, y, w = noisy(5, n=40, d=7, flips=0.05)
    res = make_oracle("halfspace", backend="portfolio", random_seed=13).solve(X, y, w)
    reference = make_oracle("halfspace", backend="direction-bb").solve(X, y, w)
    assert res.certified and res.objective == pytest.approx(reference.objective)
    assert seen and set(seen) == {13}
    with pytest.raises(ValueError, match=r"backend 'portfolio': random_seed must be an integer in \[0, 2147483647\]"):
        make_oracle("halfspace", backend="portfolio", random_seed=-1)


def test_direction_bb_takes_a_seed_stays_exact_and_hands_it_to_its_fallback(scip_seeds):
    """direction-bb's seed drives its line searches (deterministic per seed, exact for every seed) and reaches
    the scip-bc it falls back to on flat data, also through the portfolio."""
    X, y, w = noisy(6, n=70, d=3, signed=True)
    reference = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    for seed in (0, 5, 99):
        res = make_oracle("halfspace", backend="direction-bb", random_seed=seed).solve(X, y, w)
        assert res.certified and res.objective == pytest.approx(reference.objective, abs=1e-9 * np.abs(w).sum())
    seen = scip_seeds
    rng = np.random.default_rng(0)
    flat = rng.normal(size=(40, 5))
    flat[:, 4] = flat[:, 0] + flat[:, 1]  # rounded sums: flat to the search, so it falls back to scip-bc
    labels = (flat[:, 0] - flat[:, 2] > 0).astype(int)
    for backend in ("direction-bb", "portfolio"):
        seen.clear()
        res = make_oracle("halfspace", backend=backend, random_seed=13).solve(flat, labels)
        assert res.details.get("fallback") == "scip-bc"
        assert seen and set(seen) == {13}
