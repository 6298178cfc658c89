"""The strategies of ``scip-bc`` for a few heavy weights among many light ones.

Every strategy (``plain``, ``priority``, ``split``, ``heavy-first``, ``decompose``, ``partition``, ``auto``) is
checked against independent methods: the brute force of ``tests/brute_force.py`` (all labelings,
LP realisability) on tiny instances, and ``enumerate`` (exact, d <= 3) on larger ones. The
instances are shaped like RRSPM's private call: unit or small integer weights (zeros included) on
most points and a few signed heavy weights, with duplicated points and conflicting labels. The
assertions: the bound never exceeds the optimum, the objective never beats it, and a certified
answer is the optimum.
"""

from __future__ import annotations

import numpy as np
import pyscipopt  # noqa: F401  # required (scip-bc): a broken install must fail, not skip
import pytest
from brute_force import brute_halfspace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.branch_and_cut.scip_bc_split import (
    STRATEGIES,
    choose_strategy,
    heavy_first_priorities,
    random_partition,
    split_groups_by_weight,
)
from test_scip_bc_backend import check_answer  # bound <= optimum <= objective; certified => optimum

from oraclepriv import make_oracle

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def heavy_instance(seed: int, d: int, n_light: int, n_heavy: int, scale: float = 20.0, grid: bool = False):
    """Light points (weights 1, some 0 or 2) and heavy points with signed Laplace weights; a few
    duplicates, one with the opposite label (a conflict)."""
    rng = np.random.default_rng(seed)
    n = n_light + n_heavy
    X = rng.integers(-2, 3, size=(n, d)).astype(float) if grid else rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0).astype(np.int8)
    w = rng.choice([0.0, 1.0, 1.0, 1.0, 2.0], size=n)
    w[n_light:] = rng.laplace(0.0, scale, size=n_heavy)
    y[n_light:] = rng.integers(0, 2, size=n_heavy)  # random labels, as RRSPM's public points
    if n >= 3:  # a duplicate with the same label and one with the opposite label
        X = np.vstack([X, X[:1], X[n_light : n_light + 1]])
        y = np.append(y, [y[0], 1 - y[n_light]]).astype(np.int8)
        w = np.append(w, [1.0, 1.0])
    return X, y, w


@settings(SETTINGS, max_examples=6)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 3), n_heavy=st.integers(1, 3), grid=st.booleans())
def test_every_strategy_matches_brute_force(seed, d, n_heavy, grid):
    X, y, w = heavy_instance(seed, d, 5 - n_heavy + 1, n_heavy, grid=grid)
    truth = brute_halfspace(X, y, w, max_n=9)
    for strategy in STRATEGIES:
        res = make_oracle("halfspace", backend="scip-bc", strategy=strategy).solve(X, y, w)
        check_answer(res, truth, w)
        assert res.certified, f"strategy {strategy}: not certified ({res.status}, {res.objective} vs {res.bound})"


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_every_strategy_matches_enumerate_on_rrspm_shaped_instances(seed):
    X, y, w = heavy_instance(100 + seed, 2, 30, 8)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    assert truth.certified
    for strategy in STRATEGIES:
        res = make_oracle("halfspace", backend="scip-bc", strategy=strategy).solve(X, y, w)
        check_answer(res, truth.objective, w)
        assert res.certified, f"strategy {strategy}: not certified"


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_every_strategy_matches_enumerate_in_three_dimensions(seed):
    X, y, w = heavy_instance(200 + seed, 3, 40, 10, grid=seed % 2 == 1)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    for strategy in STRATEGIES:
        res = make_oracle("halfspace", backend="scip-bc", strategy=strategy).solve(X, y, w)
        check_answer(res, truth.objective, w)
        assert res.certified


def test_the_strategy_is_reported_and_auto_follows_the_weights():
    X, y, w = heavy_instance(7, 2, 20, 4)
    res = make_oracle("halfspace", backend="scip-bc").solve(X, y, w)
    assert res.details["strategy_used"] in ("priority", "heavy-first")  # resolved per call, never "auto"
    unit = make_oracle("halfspace", backend="scip-bc").solve(X, y, np.ones(y.size))
    assert unit.details["strategy_used"] == "plain"  # no heavy groups: nothing to split
    assert choose_strategy("auto", np.ones(10)) == "plain"
    assert choose_strategy("auto", np.array([1.0] * 10 + [50.0, 80.0])) != "plain"
    assert choose_strategy("decompose", np.ones(3)) == "decompose"


def test_split_and_priorities():
    W = np.array([1.0, 1.0, 2.0, 1.0, 9.0, 30.0, 0.0])
    heavy = split_groups_by_weight(W)
    assert heavy.tolist() == [False, False, False, False, True, True, False]
    priorities = heavy_first_priorities(W, heavy)
    assert priorities[5] > priorities[4] > 0 and not priorities[~heavy].any()


def test_bad_strategy_is_refused_by_name():
    with pytest.raises(ValueError, match="strategy"):
        make_oracle("halfspace", backend="scip-bc", strategy="fastest")


def test_a_time_limited_decomposition_reports_a_proved_bound():
    X, y, w = heavy_instance(11, 3, 60, 12)
    truth = make_oracle("halfspace", backend="scip-bc", strategy="plain").solve(X, y, w)
    res = make_oracle("halfspace", backend="scip-bc", strategy="decompose", time_limit=0.3).solve(X, y, w)
    if truth.certified:
        check_answer(res, truth.objective, w)
    assert res.bound <= res.objective + 1e-7 * np.abs(w).sum()


@pytest.mark.parametrize("seed", [2, 3])
def test_a_heavy_part_of_one_distinct_point_seeds_no_foreign_cores(seed):
    """Regression: a part with one distinct point returns before building its own cores, so the part
    backend's cache still held the other part's cores, which were mapped onto the wrong groups (the
    bound guard caught the false bound: status "error"). Laplace weights on an integer grid."""
    rng = np.random.default_rng(seed)
    n, d = (40, 2) if seed % 2 == 0 else (30, 3)
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    y = rng.integers(0, 2, size=n)
    w = rng.laplace(size=n)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    for strategy in STRATEGIES:
        res = make_oracle("halfspace", backend="scip-bc", strategy=strategy).solve(X, y, w)
        check_answer(res, truth.objective, w)
        assert res.certified and not res.details["scip_bound_contradicted"], strategy


# -- strategy="partition": rows sum_{g in P} W_g z_g >= (proved optimum of P) for random parts P -------


def test_random_partition_covers_every_group_once_and_is_reproducible():
    masks = random_partition(23, 5)
    assert len(masks) == 4  # 23 // 5
    counts = np.sum(masks, axis=0)
    assert np.all(counts == 1)  # a partition
    assert min(int(m.sum()) for m in masks) >= 5
    again = random_partition(23, 5)
    assert all(np.array_equal(a, b) for a, b in zip(masks, again))
    assert random_partition(9, 5) == []  # one part would be the whole problem again
    assert random_partition(10, 5) != []


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 3), part_size=st.integers(2, 4), grid=st.booleans())
def test_partition_matches_brute_force(seed, d, part_size, grid):
    X, y, w = heavy_instance(seed, d, 6, 1, grid=grid)
    truth = brute_halfspace(X, y, w, max_n=9)
    res = make_oracle("halfspace", backend="scip-bc", strategy="partition", part_size=part_size).solve(X, y, w)
    check_answer(res, truth, w)
    assert res.certified, f"not certified ({res.status}, {res.objective} vs {res.bound})"
    groups = res.details["n_groups"]  # distinct points with weight (the parts are made of groups)
    assert len(res.details["parts"]) == (groups // part_size if groups >= 2 * part_size else 0)


@pytest.mark.parametrize("seed", range(3))
def test_partition_matches_enumerate(seed):
    rng = np.random.default_rng(300 + seed)
    X = rng.normal(size=(60, 2))
    y = (X @ rng.normal(size=2) + 0.8 * rng.normal(size=60) > 0).astype(np.int8)  # noisy labels
    w = rng.choice([1.0, 1.0, 2.0], size=60)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    res = make_oracle("halfspace", backend="scip-bc", strategy="partition", part_size=15).solve(X, y, w)
    check_answer(res, truth.objective, w)
    assert res.certified
    parts = res.details["parts"]
    assert len(parts) == 4 and sum(p["bound"] for p in parts) <= truth.objective + 1e-9


def test_an_inflated_part_bound_is_caught(monkeypatch):
    """Negative control: the part rows reach SCIP's bound. With each part's bound raised by 5 (a false
    proof; their sum then exceeds the optimum) SCIP's dual bound does too, a real halfspace beats it,
    and the guard withdraws it."""
    import oraclepriv.solvers.branch_and_cut.scip_bc as scip_bc_module
    from oraclepriv.solvers.branch_and_cut.scip_bc_split import solve_part

    def inflated(*args, **kwargs):
        part = solve_part(*args, **kwargs)
        part.bound += 5.0
        return part

    monkeypatch.setattr(scip_bc_module, "solve_part", inflated)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 2))
    y = (X @ rng.normal(size=2) + 0.8 * rng.normal(size=40) > 0).astype(np.int8)
    w = np.ones(40)
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    res = make_oracle("halfspace", backend="scip-bc", strategy="partition", part_size=10).solve(X, y, w)
    assert res.details["scip_bound_contradicted"]
    assert res.bound <= truth.objective + 1e-9  # what is reported is still a bound


@pytest.mark.parametrize("bad", [0, 1, 2.5, True, "10", None])
def test_bad_part_size_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="part_size"):
        make_oracle("halfspace", backend="scip-bc", strategy="partition", part_size=bad)
