"""The compiled weight pass of ``sweep`` (``solvers/combinatorial/sweep_kernels.py``) and the choice of it
(``sweep_compiled.py``).

* the kernels' block parts are numpy's ``bincount`` parts bit for bit, on random, tied, gridded, signed and
  degenerate inputs (an all-equal column, zero weights, one point), and so are the blocks they choose to scan, so
  every candidate the pass ranks is the same;
* an oracle answers identically with the kernels and without them, on a first call and on repeat calls, and a
  NaN or infinite weight on a repeat call is refused by name as on a first;
* the choice: switched off, nothing to do, in process, loaded, and never a compilation in a call with a time limit.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest
from oraclepriv.solvers.combinatorial import sweep, sweep_compiled
from oraclepriv.solvers.combinatorial.sweep import Gains, SortedColumns
from oraclepriv.solvers.runtime.deadline import Deadline
from sweep_blocks import blocks_of

from oraclepriv import make_oracle

numba_only = pytest.mark.skipif(sweep_compiled._import() is None, reason="numba is not installed")


@contextlib.contextmanager
def switched(mode: str):
    saved = sweep_compiled.mode
    sweep_compiled.mode = mode
    try:
        yield
    finally:
        sweep_compiled.mode = saved


def instance(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X with 3 columns, labels, weights >= 0) of one kind."""
    rng = np.random.default_rng(seed)
    n = 1 if kind == "one point" else 400
    X = rng.normal(size=(n, 3))
    y = rng.integers(0, 2, n)
    w = np.abs(rng.laplace(size=n))
    if kind == "tied":
        X = np.round(X, 1)
    elif kind == "gridded":
        X = rng.integers(-3, 4, size=(n, 3)).astype(float) * 0.25
    elif kind == "all-equal column":
        X[:, 1] = 2.5
    elif kind == "zero weights":
        w[rng.random(n) < 0.5] = 0.0
        w[:7] = 0.0
    elif kind == "extreme weights":
        w = np.where(rng.random(n) < 0.1, 1e16, w)
    return X, y, w


KINDS = ["random", "tied", "gridded", "all-equal column", "zero weights", "extreme weights", "one point"]


def bits(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array, dtype=np.float64).tobytes()


@numba_only
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("block", [1, 3, 64])
def test_the_kernels_parts_are_bincounts_bit_for_bit_and_rank_the_same_candidates(kind, block):
    X, y, w = instance(kind, block)
    kernels = sweep_compiled._import()
    sweep_compiled.warm()
    for d in (1, 2, 3):  # one column alone, a pair, a pair and one alone
        columns = SortedColumns(X[:, :d], block)
        for labels, magnitudes in ((y, w), ((y + 1) % 2, w[::-1].copy())):
            compiled, reference = Gains(labels, magnitudes, kernels), Gains(labels, magnitudes)
            blocked = compiled.compile_block_parts(columns)
            assert blocked == any(c.n_blocks > 1 for c in columns.columns)
            for column in columns.columns:
                if column.n_blocks > 1:
                    assert bits(compiled.block_parts(column)) == bits(reference.block_parts(column))
            assert bits(np.array(compiled.sums(columns))) == bits(np.array(reference.sums(columns)))
            for slack, signs in itertools.product((0.0, 0.25), ((1, -1), (1,))):  # stumps, thresholds
                assert repr(sweep.ranked_candidates(columns, compiled, signs, slack)) == repr(
                    sweep.ranked_candidates(columns, reference, signs, slack)
                )


@numba_only
def test_signed_gains_take_the_kernel_too():
    """Gains given as an array of either sign (the exact comparison's) sum the same parts."""
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(500, 2)), 1)
    g = rng.laplace(size=500) * (rng.random(500) < 0.8)
    g[:5] = -0.0
    columns = SortedColumns(X, 16)
    compiled = Gains.of_values(g, sweep_compiled._import())
    assert compiled.compile_block_parts(columns)
    for column in columns.columns:
        assert bits(compiled.block_parts(column)) == bits(Gains.of_values(g).block_parts(column))


def answer(result) -> tuple:
    return result.objective, result.bound, repr(result.hypothesis), result.certified, result.tolerance


@numba_only
@pytest.mark.parametrize("d", [1, 2, 5])
def test_an_oracle_answers_alike_with_and_without_the_kernels_on_repeat_calls(d):
    rng = np.random.default_rng(d)
    X = np.round(rng.normal(size=(600, d)), 1)
    with blocks_of(8):
        kept = {mode: make_oracle("stump") for mode in ("on", "off")}
        for seed in range(3):
            y = np.random.default_rng(seed).integers(0, 2, 600)
            scale = (1.0, 1e-300, 1e200)[seed]  # ordinary weights, then weights the protocol scales (their peak)
            w = np.random.default_rng(seed).laplace(size=600) * scale
            results = {}
            for mode, oracle in kept.items():
                with switched(mode):
                    results[mode] = oracle.solve(X, y, w)
                    results[f"fresh {mode}"] = make_oracle("stump").solve(X.copy(), y, w)
            assert len({answer(r) for r in results.values()}) == 1
            assert len({repr(r.details.get("power_of_two_scaling")) for r in results.values()}) == 1
            assert ("power_of_two_scaling" in results["on"].details) == (scale != 1.0)
            assert results["on"].details["sweep"].startswith("compiled")
            assert results["off"].details["sweep"] == f"numpy ({sweep_compiled.MODE_VARIABLE}=0)"
            assert results["on"].details["exact_minimiser"] == results["off"].details["exact_minimiser"]
            assert results["on"].details["repeat_points"] == (seed > 0)


@numba_only
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_non_finite_weight_on_a_repeat_call_with_the_kernels_is_refused_by_name(bad):
    X = np.arange(40.0).reshape(20, 2)
    y, w = np.arange(20) % 2, np.ones(20)
    with blocks_of(4), switched("on"):
        oracle = make_oracle("stump")
        assert oracle.solve(X, y, w).details["sweep"].startswith("compiled")
        w[2] = bad
        with pytest.raises(ValueError, match=r"weights must be finite; index 2 has value"):
            oracle.solve(X, y, w)


def test_a_call_without_blocks_or_with_the_kernels_off_never_imports_numba(monkeypatch):
    monkeypatch.setattr(sweep_compiled, "_import", lambda: pytest.fail("numba imported"))
    monkeypatch.setattr(sweep_compiled, "loaded", lambda: None)
    assert sweep_compiled.choose(0, None).kernels is None
    with switched("off"):
        assert sweep_compiled.choose(10**9, None) == (None, f"numpy ({sweep_compiled.MODE_VARIABLE}=0)")
    monkeypatch.setattr(sweep_compiled, "_numpy_seconds", 0.0)
    assert "loading the kernels would cost more" in sweep_compiled.choose(10**6, None).reason
    result = make_oracle("stump").solve(np.arange(10.0)[:, None], np.arange(10) % 2)  # one block: no pass
    assert result.details["sweep"] == "numpy (no column is cut into blocks: each is scanned whole)"


def test_a_call_with_a_time_limit_never_compiles_the_kernels(monkeypatch):
    """Rent or buy: after enough numpy passes a call with no limit compiles the kernels; one with a limit loads
    them from the cache if it can, never compiles them."""
    compiled = []
    monkeypatch.setattr(sweep_compiled, "loaded", lambda: None)
    monkeypatch.setattr(sweep_compiled, "_import", lambda: sweep)  # any module: the kernels are never run here
    monkeypatch.setattr(sweep_compiled, "_load_from_cache", lambda module: False)
    monkeypatch.setattr(sweep_compiled, "_compile", compiled.append)
    monkeypatch.setattr(sweep_compiled, "_numpy_seconds", sweep_compiled.COMPILE_AFTER_NUMPY_SECONDS)
    with switched("auto"):
        limited = sweep_compiled.choose(10**6, Deadline(60.0))
        assert limited.kernels is None and "never compiles" in limited.reason and not compiled
        short = sweep_compiled.choose(10**6, Deadline(sweep_compiled.LOAD_MIN_SECONDS / 2))
        assert short.kernels is None and "left to load" in short.reason
        unlimited = sweep_compiled.choose(10**6, None)
        assert unlimited == (sweep, "compiled (compiled in this call: no time limit)") and compiled == [sweep]
        monkeypatch.setattr(sweep_compiled, "_load_from_cache", lambda module: True)
        assert sweep_compiled.choose(10**6, Deadline(60.0)).reason == "compiled (loaded from numba's cache)"
        monkeypatch.setattr(sweep_compiled, "_numpy_seconds", 0.0)  # a single large call loads at once
        assert sweep_compiled.choose(sweep_compiled.LOAD_MIN_POINT_COLUMNS, None).kernels is sweep


@numba_only
def test_warm_readies_the_kernels_in_this_process():
    assert sweep_compiled.warm() in ("in process", "loaded", "compiled")
    assert sweep_compiled.loaded() is not None and sweep_compiled.warm() == "in process"
    assert sweep_compiled.choose(10, None).reason == "compiled"


def reduction_bits(reduced: tuple) -> list:
    labels, weights, abs_sum, reduced_labels, magnitudes, offset, _ = reduced  # the largest |w|: checked apart
    return [
        labels.tobytes(),
        labels.dtype,
        weights.tobytes(),
        abs_sum,
        reduced_labels.tobytes(),
        bits(magnitudes),
        offset,
    ]


@numba_only
def test_the_protocols_pass_over_labels_and_weights_is_numpys_bit_for_bit(monkeypatch):
    """The compiled pass over a call's labels and weights (in process: the stump oracle's kernels) gives what the
    numpy validation and sign reduction give, bit for bit, and refuses what they refuse, with their words."""
    from oraclepriv.oracle import _labels_and_reduced_weights

    sweep_compiled.warm()
    kernels, ran = sweep_compiled.loaded(), []  # in process (checked before a kernel is wrapped in a spy)
    assert kernels is not None
    compiled_pass = kernels.signed_reduction
    monkeypatch.setattr(kernels, "signed_reduction", lambda *arrays: ran.append(1) or compiled_pass(*arrays))
    rng = np.random.default_rng(0)
    n = 257
    weights = {
        "signed": rng.laplace(size=n),
        "zeros and minus zeros": np.where(rng.random(n) < 0.5, -0.0, 0.0) + np.where(rng.random(n) < 0.3, 1.5, 0.0),
        "no negative": np.abs(rng.laplace(size=n)),
        "extreme": rng.choice([1e300, -1e300, 5e-324, -5e-324, 1.0], size=n),
        "strided": rng.laplace(size=2 * n)[::2],
    }
    labels = {
        "int64": rng.integers(0, 2, n),
        "int8": rng.integers(0, 2, n).astype(np.int8),
        "bool": rng.random(n) < 0.5,
        "float": rng.integers(0, 2, n).astype(float),
    }
    peaks = 0
    for w in weights.values():
        for y in labels.values():
            with switched("on"):
                compiled = _labels_and_reduced_weights(y, w, n)
            with switched("off"):
                reference = _labels_and_reduced_weights(y, w, n)
            assert reduction_bits(compiled) == reduction_bits(reference)
            assert reference[-1] is None  # the numpy way leaves the largest |w| to the scaling
            peak = compiled[-1]
            assert peak is None or bits(np.array([peak])) == bits(np.array([np.abs(w).max()]))
            peaks += peak is not None
    assert len(ran) == peaks == 2 * 4  # the contiguous weights with int64 and int8 labels
    refused = [
        (np.where(np.arange(n) == 5, 2, labels["int64"]), weights["signed"], r"y must contain labels in \{0, 1\}"),
        (np.where(np.arange(n) == 5, -1, labels["int8"]).astype(np.int8), weights["signed"], r"index 5 has value -1"),
        (labels["int64"], np.where(np.arange(n) == 3, np.nan, 1.0), r"weights must be finite; index 3 has value nan"),
        (labels["int64"], np.where(np.arange(n) == 4, -np.inf, 1.0), r"weights must be finite; index 4 has value -inf"),
        (labels["int64"], np.full(n, 1e308), r"the sum of \|weights\| overflows float64"),
    ]
    for y, w, message in refused:
        for mode in ("on", "off"):
            with switched(mode), pytest.raises(ValueError, match=message):
                _labels_and_reduced_weights(y, w, n)


@numba_only
def test_the_protocols_rescoring_of_a_stump_is_its_own_loss_bit_for_bit(monkeypatch):
    """The compiled re-scoring (the mistaken weights in order, summed by numpy) is :meth:`Hypothesis.loss` bit for bit,
    thresholds on data values and at +-inf, both signs, every feature; other layouts go the hypothesis's own way."""
    from oraclepriv.hypotheses import Stump, Threshold
    from oraclepriv.oracle import _rescored_loss

    sweep_compiled.warm()
    kernels, ran = sweep_compiled.loaded(), []  # in process (checked before a kernel is wrapped in a spy)
    assert kernels is not None
    compiled_pass = kernels.mistaken_weights
    monkeypatch.setattr(kernels, "mistaken_weights", lambda *arrays: ran.append(1) or compiled_pass(*arrays))
    rng = np.random.default_rng(1)
    X = np.asfortranarray(np.round(rng.normal(size=(300, 3)), 1))
    y = rng.integers(0, 2, 300).astype(np.int8)
    w = rng.laplace(size=300) * 10.0 ** rng.integers(-12, 12, size=300)
    hypotheses = [Threshold(t) for t in (-np.inf, np.inf, float(X[7, 0]), 0.05)]
    for feature in range(3):
        for t in (-np.inf, np.inf, float(X[11, feature]), float(np.median(X[:, feature])) + 0.05):
            hypotheses += [Stump(feature, t, 1), Stump(feature, t, -1)]
    for h in hypotheses:
        points = X[:, :1] if isinstance(h, Threshold) else X
        with switched("on"):
            compiled = _rescored_loss(h, points, y, w)
            other_layout = _rescored_loss(h, np.ascontiguousarray(points), y, w)
        assert bits(np.array([compiled, other_layout])) == bits(np.array([h.loss(points, y, w)] * 2))
    assert len(ran) == len(hypotheses) + 4  # every call but the stumps' on C-ordered points (a strided column)


def test_a_failed_compilation_leaves_the_numpy_pass_answering_and_is_not_retried(monkeypatch, caplog):
    attempts = []

    def broken(module):
        attempts.append(module)
        raise RuntimeError("no LLVM today")

    monkeypatch.setattr(sweep_compiled, "loaded", lambda: None)
    monkeypatch.setattr(sweep_compiled, "_import", lambda: sweep)
    monkeypatch.setattr(sweep_compiled, "_load_from_cache", lambda module: False)
    monkeypatch.setattr(sweep_compiled, "_compile", broken)
    monkeypatch.setattr(sweep_compiled, "_compile_failure", None)
    monkeypatch.setattr(sweep_compiled, "_numpy_seconds", sweep_compiled.COMPILE_AFTER_NUMPY_SECONDS)
    with switched("auto"):
        for _ in range(2):
            choice = sweep_compiled.choose(10**6, None)
            assert choice.kernels is None and "compiling the kernels failed" in choice.reason
            assert "no LLVM today" in choice.reason
    assert len(attempts) == 1 and "numpy pass answers" in caplog.text
