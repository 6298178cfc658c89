"""Repeat calls on the same points: what an oracle keeps between calls, and that it changes no answer.

An oracle keeps the point set of its last call (a private read-only copy, matched bit for bit) and the
``sweep`` backend its sorted columns, so a call with new weights on the same points neither validates the
points again nor sorts. The properties:

* a repeat call answers exactly as a fresh oracle does (objective, bound, hypothesis, certificate), on
  signed weights, ties, duplicates and labels that change between calls, with blocks small enough that
  the weight pass skips blocks on these small instances;
* a value changed in place in the caller's array (even -0.0 for 0.0) misses; a different array holding
  the same values hits; a NaN is refused as on a first call;
* the sweep's flags are sound (rational brute force): ``strict_minimiser`` means the answer's labeling is
  the unique exact minimiser, ``exact_minimiser`` True / False that it is / is not an exact minimiser; the
  exact comparison then needs no pass, and otherwise sorts nothing the sweep already sorted;
* kept state crosses no fit and no process: a fitted learner reaches none, none outlives the fit, and a
  pickled or copied oracle (or backend) has none.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import itertools
import pickle
import types
from fractions import Fraction

import numpy as np
import pytest
from brute_force import brute_stump, brute_threshold
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers import kept_points
from oraclepriv.solvers.base import ReducedProblem
from oraclepriv.solvers.combinatorial import sweep, sweep_compiled
from oraclepriv.solvers.combinatorial.sweep import SortedColumns, SweepBackend
from oraclepriv.solvers.kept_points import KeptPoints
from strategies import labels, points, signed_weights
from sweep_blocks import blocks_of

from oraclepriv import make_oracle
from oraclepriv.exact_comparison import ExactComparisonOracle, exact_cost
from oraclepriv.learners import RRSPM, RSPM, Perturbation, SubsampleAggregate
from oraclepriv.public_data import PublicData
from oraclepriv.robust import fallback_oracle

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def answer(result) -> tuple:
    """What a repeat call must reproduce exactly (the hypothesis by its repr: -0.0 is not 0.0)."""
    return result.objective, result.bound, repr(result.hypothesis), result.certified


def labelings(hypothesis_class: str, X: np.ndarray) -> set[tuple[int, ...]]:
    """Every labeling the class induces on X (each column's prefixes and suffixes of its sorted order)."""
    found = set()
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        cuts = [-np.inf, np.inf, *((values[:-1] + values[1:]) / 2)]
        for t in cuts:
            found.add(tuple((X[:, j] >= t).astype(int)))
            if hypothesis_class == "stump":
                found.add(tuple((X[:, j] <= t).astype(int)))
        if hypothesis_class == "threshold":
            break
    return found


def exact_loss(labeling, y, w) -> Fraction:
    return sum((Fraction(float(v)) for v, p, t in zip(w, labeling, y, strict=True) if p != t), Fraction(0))


def assert_unique_exact_minimiser(hypothesis_class, X, y, w, hypothesis) -> None:
    """The hypothesis's labeling has the smallest exact loss, and no other labeling attains it."""
    mine = tuple(np.asarray(hypothesis.predict(X), dtype=int))
    costs = {labeling: exact_loss(labeling, y, w) for labeling in labelings(hypothesis_class, X)}
    best = min(costs.values())
    assert costs[mine] == best
    assert [labeling for labeling, cost in costs.items() if cost == best] == [mine]


def is_an_exact_minimiser(hypothesis_class, X, y, w, result) -> bool:
    cost, e0 = exact_cost(result.hypothesis, X, y, w)
    return Fraction(cost) * Fraction(2) ** e0 == min(exact_loss(lab, y, w) for lab in labelings(hypothesis_class, X))


# ------------------------------------------------------------------------------ repeat calls are exact


@pytest.mark.slow
@settings(max_examples=250, **SETTINGS)
@given(data=st.data())
def test_repeat_calls_answer_exactly_as_fresh_calls(data):
    """Several calls on one oracle, with new labels and signed weights each time, sometimes on a different
    array with the same values, sometimes after a value changed in place: each answer is a fresh oracle's."""
    hypothesis_class = data.draw(st.sampled_from(["threshold", "stump"]), label="class")
    d = 1 if hypothesis_class == "threshold" else data.draw(st.integers(1, 3), label="d")
    X = np.array(data.draw(points(d, 1, 14), label="X"))
    n = X.shape[0]
    block = data.draw(st.sampled_from([1, 2, 3, 64]), label="block")
    with blocks_of(block):
        oracle = make_oracle(hypothesis_class)
        previous = None
        for call in range(4):
            action = data.draw(st.sampled_from(["same", "copy", "mutate"]), label="action") if call else "same"
            if action == "mutate":
                i, j = data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, d - 1))
                X[i, j] = data.draw(st.sampled_from([*np.unique(X).tolist(), 0.5, -0.0, 0.0]), label="value")
            X_call = X.copy() if action == "copy" else X
            y, w = data.draw(labels(n), label="y"), data.draw(signed_weights(n), label="w")
            result = oracle.solve(X_call, y, w)
            fresh = make_oracle(hypothesis_class).solve(X.copy(), y, w)
            assert answer(result) == answer(fresh)
            hit = previous is not None and np.array_equal(previous.view(np.uint64), X.view(np.uint64))
            assert result.details["repeat_points"] == hit
            assert result.details["sorted_columns"] == ("kept" if hit else "sorted")
            brute = (brute_threshold if hypothesis_class == "threshold" else brute_stump)(X, y, w)
            assert result.certified and abs(result.objective - brute) <= result.tolerance
            if result.details["strict_minimiser"]:
                assert_unique_exact_minimiser(hypothesis_class, X, y, w, result.hypothesis)
            if result.details["exact_minimiser"] is not None:  # the sweep's own exact check of its window
                assert result.details["exact_minimiser"] == is_an_exact_minimiser(hypothesis_class, X, y, w, result)
            previous = X.copy()


@pytest.mark.slow
@settings(max_examples=300, **SETTINGS)
@given(data=st.data())
def test_the_sweeps_exact_flag_is_sound_on_near_ties(data):
    """Weights 1e16 next to small integers: float64 sums lose the small ones, so near-ties within the float window
    are common, in one column (cuts apart by a few points) and across columns; the flag must match the truth."""
    hypothesis_class = data.draw(st.sampled_from(["threshold", "stump"]), label="class")
    d = 1 if hypothesis_class == "threshold" else data.draw(st.integers(1, 2), label="d")
    n = data.draw(st.integers(2, 9), label="n")
    X = np.array(data.draw(st.lists(st.lists(st.integers(0, 4), min_size=d, max_size=d), min_size=n, max_size=n)))
    X = X.astype(float)
    values = st.sampled_from([1e16, -1e16, 1.0, -1.0, 2.0, -2.0, 3.0, 0.0])
    w = np.array(data.draw(st.lists(values, min_size=n, max_size=n), label="w"))
    y = data.draw(labels(n), label="y")
    with blocks_of(data.draw(st.sampled_from([1, 2, 64]), label="block")):
        result = make_oracle(hypothesis_class).solve(X, y, w)
    assert result.certified
    if result.details["exact_minimiser"] is not None:
        assert result.details["exact_minimiser"] == is_an_exact_minimiser(hypothesis_class, X, y, w, result)
    compared = ExactComparisonOracle(make_oracle(hypothesis_class)).solve(X, y, w)
    assert is_an_exact_minimiser(hypothesis_class, X, y, w, compared)


def test_a_repeat_call_on_many_points_reuses_the_sorted_columns_and_answers_as_a_fresh_call():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(40_000, 3)), 2)  # many ties; more points than SCAN_MAX: the blocked pass
    y = rng.integers(0, 2, 40_000)
    oracle = make_oracle("stump")
    for seed in range(3):
        w = np.random.default_rng(seed).laplace(size=40_000)
        result = oracle.solve(X, y, w)
        assert result.details["sorted_columns"] == ("kept" if seed else "sorted")
        assert answer(result) == answer(make_oracle("stump").solve(X.copy(), y, w))


def test_a_value_changed_in_place_misses_and_minus_zero_is_a_change():
    X = np.array([[0.0, 1.0], [2.0, 3.0], [1.0, 0.5], [4.0, 0.0]])
    y, w = np.array([1, 0, 1, 0]), np.array([1.0, -2.0, 0.5, 3.0])
    oracle = make_oracle("stump")
    oracle.solve(X, y, w)
    assert oracle.solve(X, y, -w).details["repeat_points"]
    X[3, 1] = -0.0  # equal as a float, a different value bit for bit
    result = oracle.solve(X, y, w)
    assert not result.details["repeat_points"] and result.details["sorted_columns"] == "sorted"
    assert answer(result) == answer(make_oracle("stump").solve(X.copy(), y, w))
    X[0, 0] = 5.0
    assert not oracle.solve(X, y, w).details["repeat_points"]


def test_a_nan_is_refused_on_a_repeat_call_as_on_a_first():
    X = np.arange(8.0).reshape(4, 2)
    y, w = np.array([0, 1, 0, 1]), np.ones(4)
    oracle = make_oracle("stump")
    oracle.solve(X, y, w)
    X[1, 1] = np.nan
    with pytest.raises(ValueError, match="X must be finite"):
        oracle.solve(X, y, w)
    with pytest.raises(ValueError, match="X must be finite"):
        make_oracle("stump").solve(X, y, w)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_weight_is_refused_on_a_repeat_call_as_on_a_first(bad):
    """A repeat call skips the validation of its points, never of its weights."""
    X = np.arange(8.0).reshape(4, 2)
    y, w = np.array([0, 1, 0, 1]), np.ones(4)
    oracle = make_oracle("stump")
    oracle.solve(X, y, w)
    w[2] = bad
    for fresh in (False, True):
        with pytest.raises(ValueError, match=r"weights must be finite; index 2 has value"):
            (make_oracle("stump") if fresh else oracle).solve(X, y, w)
    assert oracle.solve(X, y, np.ones(4)).details["repeat_points"]  # the refused call dropped nothing


def test_weights_whose_total_overflows_are_refused_on_a_repeat_call():
    X = np.arange(8.0).reshape(4, 2)
    y = np.array([0, 1, 0, 1])
    oracle = make_oracle("stump")
    oracle.solve(X, y, np.ones(4))
    with pytest.raises(ValueError, match=r"the sum of \|weights\| overflows float64"):
        oracle.solve(X, y, np.array([1e308, -1e308, 1e308, 1.0]))


def test_labels_outside_zero_and_one_are_refused_on_a_repeat_call():
    X = np.arange(8.0).reshape(4, 2)
    oracle = make_oracle("stump")
    oracle.solve(X, np.array([0, 1, 0, 1]), np.ones(4))
    for y in (np.array([0, 1, 2, 1]), np.array([0, -1, 0, 1]), np.array([0.0, 1.0, 0.5, 1.0])):
        with pytest.raises(ValueError, match=r"y must contain labels in \{0, 1\}"):
            oracle.solve(X, y, np.ones(4))


@settings(max_examples=200, **SETTINGS)
@given(
    w=st.lists(
        st.sampled_from([1e300, -1e300, 1e16, -1e16, 3.0, -2.0, 1e-300, -1e-300, 5e-324, -5e-324, 0.0]),
        min_size=1,
        max_size=12,
    )
)
def test_the_offset_of_the_sign_reduction_is_the_sum_of_the_negatives_within_the_tolerance(w):
    """(sum w - sum |w|) / 2: never positive, 0 without a negative weight, within the certificate's tolerance of
    the exact sum of the negatives; a negative weight too small to move it still marks the call signed."""
    from oraclepriv.oracle import certification_tolerance, reduce_signed_weights

    weights = np.array(w)
    y = np.arange(weights.size) % 2
    y_reduced, magnitudes, offset = reduce_signed_weights(y, weights)
    exact = sum((Fraction(v) for v in w if v < 0), Fraction(0))
    assert offset <= 0 and (offset == 0) >= (exact == 0)
    assert abs(Fraction(offset) - exact) <= Fraction(certification_tolerance(weights))
    np.testing.assert_array_equal(y_reduced, y ^ (weights < 0))
    X = np.arange(float(weights.size))[:, None]
    assert make_oracle("stump").solve(X, y, weights).signed_weights == bool((weights < 0).any())


def test_a_threshold_oracle_keeps_one_dimensional_points():
    x = np.array([3.0, 1.0, 2.0, 2.0])
    oracle = make_oracle("threshold")
    oracle.solve(x, [1, 0, 1, 0], [1.0, 1.0, 2.0, -1.0])
    assert oracle.solve(x, [0, 0, 1, 1], [1.0, 2.0, 1.0, 1.0]).details["repeat_points"]


def test_the_backend_keys_its_columns_on_the_points_when_called_directly():
    """Called without the protocol, the backend compares the points bit for bit: an in-place change misses."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y, w = np.array([0, 0, 1, 1], dtype=np.int8), np.ones(4)
    backend = SweepBackend()
    assert backend.solve(ReducedProblem("stump", X, y, w)).details["sorted_columns"] == "sorted"
    assert backend.solve(ReducedProblem("stump", X.copy(), y, w)).details["sorted_columns"] == "kept"
    X[0, 0] = 2.5
    again = backend.solve(ReducedProblem("stump", X, y, w))
    fresh = SweepBackend().solve(ReducedProblem("stump", X.copy(), y, w))
    assert again.details["sorted_columns"] == "sorted" and again.hypothesis == fresh.hypothesis
    assert again.bound == fresh.bound


def test_the_protocol_hands_its_copy_to_the_sweep_which_keeps_no_second_one():
    X = np.random.default_rng(1).normal(size=(30, 2))
    oracle = make_oracle("stump", backend="sweep")
    oracle.solve(X, np.arange(30) % 2, np.ones(30))
    kept = KeptPoints.holding(oracle._kept.array)
    assert kept is oracle._kept and not np.shares_memory(kept.array, X) and not kept.array.flags.writeable
    assert oracle.backend_used("sweep")._kept[0] is kept


def test_the_column_major_copy_holds_the_kept_points_read_only():
    X = np.random.default_rng(4).normal(size=(50, 3))
    oracle = make_oracle("stump")
    oracle.solve(X, np.arange(50) % 2, np.ones(50))
    kept = oracle._kept
    columns = kept.columns
    assert columns.flags.f_contiguous and not columns.flags.writeable and columns is kept.columns
    np.testing.assert_array_equal(columns, X)
    assert not np.shares_memory(columns, X) and not np.shares_memory(columns, kept.array)
    one = KeptPoints(X[:, :1])
    assert one.columns is one.array  # one column: already contiguous


# ------------------------------------------------------------------------------ the exact comparison


class UntrustedSweep(SweepBackend):
    """The sweep's answers under another solve method: the exact comparison does not take its flag on trust."""

    name = "untrusted-sweep"

    def solve(self, problem):
        return super().solve(problem)


@pytest.mark.slow
@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_the_comparison_window_finds_exact_minimisers_on_the_kept_columns(data):
    hypothesis_class = data.draw(st.sampled_from(["threshold", "stump"]), label="class")
    d = 1 if hypothesis_class == "threshold" else data.draw(st.integers(1, 3), label="d")
    X = data.draw(points(d, 1, 10), label="X")
    n = X.shape[0]
    with blocks_of(data.draw(st.sampled_from([1, 2, 64]), label="block")):
        compared = ExactComparisonOracle(make_oracle(hypothesis_class, backend=UntrustedSweep))
        for _ in range(2):
            y, w = data.draw(labels(n), label="y"), data.draw(signed_weights(n), label="w")
            result = compared.solve(X, y, w)
            assert "sweep's float filter" not in result.details["exact_comparison"]
            best = min(exact_loss(labeling, y, w) for labeling in labelings(hypothesis_class, X))
            cost, e0 = exact_cost(result.hypothesis, X, y, w)
            assert Fraction(cost) * Fraction(2) ** e0 == best


def _count_sorts(monkeypatch) -> list[int]:
    built = [0]
    original = SortedColumns.__init__

    def counting(self, X, block=None):
        built[0] += 1
        original(self, X, block)

    monkeypatch.setattr(SortedColumns, "__init__", counting)
    return built


def test_the_comparison_sorts_nothing_the_sweep_sorted(monkeypatch):
    """Unit weights on alternating labels tie exactly: the sweep's answer is not strict, so the comparison computes
    its window, on the columns the sweep kept; a strict answer needs no pass at all."""
    built = _count_sorts(monkeypatch)
    X = np.arange(40.0)[:, None]
    compared = ExactComparisonOracle(make_oracle("stump"))
    tied = compared.solve(X, np.arange(40) % 2, np.ones(40))
    assert not tied.details["strict_minimiser"] and "integer arithmetic" in tied.details["exact_comparison"]
    assert built[0] == 1
    strict = compared.solve(X, (np.arange(40) > 20).astype(int), np.linspace(1.0, 2.0, 40))
    assert strict.details["strict_minimiser"] and "sweep's float filter" in strict.details["exact_comparison"]
    # two cuts tie exactly (moving the cut across one 1 and one 0 of equal weight): the sweep resolves them itself
    y = (np.arange(40) > 20).astype(int)
    y[22] = 0  # cuts 21 and 23 make one mistake each
    tie = compared.solve(X, y, np.ones(40))
    assert not tie.details["strict_minimiser"] and tie.details["exact_minimiser"] is True
    assert "sweep's float filter" in tie.details["exact_comparison"]
    assert built[0] == 1
    # halfspaces on one feature (enumerate): the comparison sorts once per point set, kept by the oracle
    halfspaces = ExactComparisonOracle(make_oracle("halfspace", backend="enumerate"))
    for w in (np.ones(40), np.full(40, 2.0)):
        halfspaces.solve(X, np.arange(40) % 2, w)
    assert built[0] == 2


def test_a_fallback_oracle_shares_its_primary_sweep_columns(monkeypatch):
    built = _count_sorts(monkeypatch)
    X = np.arange(30.0)[:, None]
    compared = ExactComparisonOracle(fallback_oracle("stump", "sweep", time_limit=60.0))
    for seed in range(3):
        y = np.arange(30) % 2
        result = compared.solve(X, y, np.ones(30) * (seed + 1))
        assert result.certified and result.details["repeat_points"] == (seed > 0)
    assert built[0] == 1


def test_the_strict_flag_is_not_trusted_when_the_weights_lost_bits_to_scaling():
    """Weights 1e300 apart: the protocol's power-of-two scaling rounds the tiny ones away (weight_slack > 0), so
    the sweep's problem is not the signed one and the comparison checks the answer itself."""
    X = np.arange(6.0)[:, None]
    y = np.array([1, 0, 1, 0, 1, 1])
    w = np.array([1e300, 3e-300, -2e-300, 1e-300, 5e-300, 1e300])
    result = ExactComparisonOracle(make_oracle("stump")).solve(X, y, w)
    assert result.details["power_of_two_scaling"]["weight_slack"] > 0
    assert "sweep's float filter" not in result.details["exact_comparison"]
    best = min(exact_loss(labeling, y, w) for labeling in labelings("stump", X))
    cost, e0 = exact_cost(result.hypothesis, X, y, w)
    assert Fraction(cost) * Fraction(2) ** e0 == best


# ------------------------------------------------------------------------------ lifetime


def _kept_holders(root) -> list:
    """Every object reachable from ``root`` that holds kept points or sorted columns."""
    found, seen, stack = [], set(), [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(obj))
        if isinstance(obj, (KeptPoints, SortedColumns)):
            found.append(obj)
        stack.extend(gc.get_referents(obj))
    return found


GRID = [np.round(np.linspace(-2.0, 2.0, 9), 2)] * 2

#: each oracle learner on stumps, fitted on (X, y) and 10 public points (RSPM: on grid points, its own public set)
LEARNERS = {
    "rrspm": lambda X, y, Z: RRSPM(hypothesis_class="stump", random_state=0).fit(X, y, X_public=Z),
    "rrspm-fallback": lambda X, y, Z: RRSPM(hypothesis_class="stump", on_uncertified="fallback", random_state=0).fit(
        X, y, X_public=Z
    ),
    "rrspm-backend-instance": lambda X, y, Z: RRSPM(
        hypothesis_class="stump", backend=SweepBackend(), random_state=0
    ).fit(X, y, X_public=Z),
    "perturbation": lambda X, y, Z: Perturbation(delta=1e-3, J=3, hypothesis_class="stump", random_state=0).fit(
        X, y, X_public=Z
    ),
    "subsample": lambda X, y, Z: SubsampleAggregate(n_teachers=3, hypothesis_class="stump", random_state=0).fit(
        X, y, X_public=Z
    ),
    "rspm": lambda X, y, Z: RSPM(hypothesis_class="stump", grid=GRID, random_state=0).fit(np.round(X * 2) / 2, y),
}


@pytest.mark.parametrize("fit", LEARNERS.values(), ids=LEARNERS.keys())
def test_a_fitted_learner_holds_no_kept_state_and_none_outlives_its_fit(fit):
    rng = np.random.default_rng(3)
    X = np.clip(rng.normal(size=(80, 2)), -2.0, 2.0)
    y = (X[:, 0] > 0).astype(int)
    gc.collect()
    alive_before = len(kept_points._HOLDERS)
    learner = fit(X, y, PublicData(rng.normal(size=(10, 2))))
    gc.collect()
    assert _kept_holders(learner) == []
    assert len(kept_points._HOLDERS) == alive_before
    if isinstance(learner.backend, SweepBackend):  # the template the user passed was never solved with
        assert learner.backend._kept is None


def test_a_pickled_or_copied_oracle_keeps_nothing_and_kept_state_never_pickles():
    X = np.random.default_rng(2).normal(size=(25, 3))
    y, w = np.arange(25) % 2, np.linspace(-1.0, 1.0, 25)
    oracle = make_oracle("stump")
    oracle.solve(X, y, w)
    assert _kept_holders(oracle)
    copies = [pickle.loads(pickle.dumps(oracle)), copy.copy(oracle), copy.deepcopy(oracle)]
    for other in copies:
        assert _kept_holders(other) == []
        again = other.solve(X, y, w)
        assert not again.details["repeat_points"] and again.details["sorted_columns"] == "sorted"
        assert answer(again) == answer(oracle.solve(X, y, w))
    assert oracle.solve(X, y, w).details["sorted_columns"] == "kept"  # the original kept its own
    backend = oracle.backend_used("sweep")
    assert pickle.loads(pickle.dumps(backend))._kept is None and backend.fresh()._kept is None
    for private in (oracle._kept, backend._kept[1]):
        with pytest.raises(TypeError, match="never pickled"):
            pickle.dumps(private)
    oracle.forget()
    assert _kept_holders(oracle) == [] and not oracle.solve(X, y, w).details["repeat_points"]


@pytest.mark.parametrize("block, n, ties", list(itertools.product([1, 5, 64], [1, 2, 3, 200], [True, False])))
def test_sorted_columns_partition_every_column_into_blocks_of_whole_groups(block, n, ties):
    rng = np.random.default_rng(n)
    X = rng.integers(0, 7, size=(n, 2)).astype(float) if ties else rng.normal(size=(n, 2))
    for j, column in enumerate(SortedColumns(X, block).columns):
        xs = X[column.order, j]
        assert np.all(np.diff(xs) >= 0)
        np.testing.assert_array_equal(column.cuts(), np.flatnonzero(np.diff(xs) > 0) + 1)
        assert column.n_cuts == column.cuts().size
        starts = column.starts
        assert starts[0] == 0 and starts[-1] == n and np.all(np.diff(starts) > 0)
        assert set(starts[1:-1].tolist()) <= set(column.cuts().tolist())  # blocks end between distinct values
        assert np.all(column.inner_hi - column.inner_lo <= block)
        inside = np.searchsorted(column.cuts(), starts[1:]) - np.searchsorted(column.cuts(), starts[:-1], side="right")
        np.testing.assert_array_equal(column.inner_hi - column.inner_lo, inside)  # the cuts strictly inside a block
        if column.n_blocks == 1:
            assert column.bins.size == 0  # one block: no block sums, no bins
            continue
        ranks = np.empty(n, dtype=np.intp)
        ranks[column.order] = np.arange(n)
        np.testing.assert_array_equal(column.bins // 2, np.searchsorted(starts, ranks, side="right") - 1)


@pytest.mark.parametrize("block", [1, 3, 64])
def test_the_weight_pass_reads_weights_and_labels_as_it_reads_the_gains(block):
    """Gains held as weights and labels (the sweep's) give the pass the answer the array of gains gives it, their
    gains at any index are the array's, and their sums (from the first column's block parts) are within the
    error bound of the exact sums."""
    rng = np.random.default_rng(block)
    X = np.round(rng.normal(size=(300, 2)), 1)  # ties inside blocks
    y = rng.integers(0, 2, 300).astype(np.int8)
    w = np.abs(rng.laplace(size=300)) * (rng.random(300) < 0.9)  # some zero weights
    g = sweep.gains_of(y, w)
    columns = SortedColumns(X, block)
    held = sweep.Gains(y, w)
    index = rng.integers(0, 300, 50)
    np.testing.assert_array_equal(held.at(index), g[index])
    total, weight_sum = held.sums(columns)
    slack = 4 * sweep.gain_error_bound(300, sweep.magnitude_bound(g))
    assert abs(Fraction(total) - sum(map(Fraction, g.tolist()))) <= Fraction(slack)
    assert abs(Fraction(weight_sum) - sum(map(Fraction, w.tolist()))) <= Fraction(slack)
    for slack in (0.0, 0.5):
        from_labels = sweep.ranked_candidates(columns, held, (1, -1), slack, total=total)
        from_gains = sweep.ranked_candidates(columns, g, (1, -1), slack, total=total)
        assert from_labels == from_gains


@pytest.mark.parametrize("block", [7, 64])
def test_the_inner_prefixes_of_distinct_values_are_the_grouped_ones(block):
    """Blocks of distinct values, all of one length, take a shortcut (each point its own group): the same prefix
    sums, bit for bit, and cuts as the grouped path."""
    rng = np.random.default_rng(block)
    X = rng.normal(size=(1000, 1))
    column = SortedColumns(X, block).columns[0]
    gains = sweep.Gains(rng.integers(0, 2, 1000), np.abs(rng.laplace(size=1000)))
    parts = gains.block_parts(column)
    starts_prefix = np.concatenate([[0.0], np.cumsum(parts[0::2] + parts[1::2])])
    full = np.flatnonzero(np.diff(column.starts) == block)
    grouped = dataclasses.replace(column, distinct_cuts=np.arange(1, 1000, dtype=np.int32))  # the same cuts, stored
    for blocks in (full[:1], full[3:9], np.sort(rng.choice(full, 5, replace=False))):
        fast, slow = (
            sweep._inner_prefixes(column, gains, starts_prefix, blocks),
            sweep._inner_prefixes(grouped, gains, starts_prefix, blocks),
        )
        np.testing.assert_array_equal(fast[0], slow[0])
        np.testing.assert_array_equal(fast[1], slow[1])


def test_the_repeat_call_benchmark_row_reports_a_kept_and_exact_repeat_call():
    """The row of ``oraclepriv bench oracles`` (its timings are a benchmark, not tested): the repeat call used the
    kept sorted columns and answered as a new oracle does."""
    from oraclepriv.bench.oracles import bench_repeat_call, markdown_report

    row = bench_repeat_call(n=40_000, repeats=1)
    assert row["kept"] and row["same_as_fresh"] and row["certified"]
    assert row["ratio"] == row["seconds"] / row["argsort_seconds"] and row["first_ratio"] > 0
    report = markdown_report([row], "oraclepriv bench oracles")
    assert "repeat call with new weights" in report
    if sweep_compiled._import() is not None and sweep_compiled.current_mode() != "off":  # made ready: n > SCAN_MAX
        assert row["sweep"] == "compiled" and "compiled weight pass" in report


def test_the_first_call_benchmark_row_times_new_oracles():
    """``bench_stump_sweep`` times a new oracle's first call (it sorts), never a repeat call on kept columns."""
    from oraclepriv.bench.oracles import bench_stump_sweep, markdown_report

    row = bench_stump_sweep(n=2000, d=2, repeats=2)
    assert row["first_call"] and row["certified"] and row["ratio"] == row["oracle_seconds"] / row["argsort_seconds"]
    assert "first call of a new oracle" in markdown_report([row], "oraclepriv bench oracles")


@pytest.mark.parametrize("order", ["C", "F"])
def test_the_bitwise_match_holds_in_every_memory_layout(order):
    """Kept points are compared byte for byte when both buffers share a layout (memcmp), else by their integer views:
    the same verdicts either way, a change in the last byte or a -0.0 for 0.0 included."""
    X = np.asarray(np.arange(30.0).reshape(10, 3) - 10.0, order=order)
    kept = KeptPoints(X)
    same = [X.copy(order="C"), X.copy(order="F"), np.repeat(X, 2, axis=0)[::2]]  # both layouts and a strided view
    assert all(kept.matches(candidate) for candidate in same)
    for i, j, value in [(9, 2, np.nextafter(X[9, 2], np.inf)), (0, 0, 7.0), (4, 1, 0.0)]:
        for candidate in same:
            changed = candidate.copy(order="K")
            changed[i, j] = value
            assert not kept.matches(changed)
    assert X[3, 1] == 0.0 and not np.signbit(X[3, 1])
    for candidate in same:
        signed_zero = candidate.copy(order="K")
        signed_zero[3, 1] = -0.0  # equal as a float, another value bit for bit
        assert not kept.matches(signed_zero)


def test_the_oracle_benchmark_runs_the_stump_rows_alone():
    """``bench_oracles(only="stump")``: the stump oracle's two rows and nothing else; an unknown group is refused."""
    from oraclepriv.bench.oracles import bench_oracles

    rows = bench_oracles(quick=True, only="stump")
    assert [row["benchmark"] for row in rows] == ["stump-sweep", "stump-repeat"]
    with pytest.raises(ValueError, match="only must be one of"):
        bench_oracles(quick=True, only="stumps")
