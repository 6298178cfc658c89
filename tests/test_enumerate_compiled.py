"""The compiled (numba) sweeps of ``enumerate`` (``solvers/combinatorial/enumerate_kernels.py``) against the numpy
sweeps they stand in for, which stay the reference and the fallback.

* the same optimum, and a returned positive set that achieves it, on seeded instances of every degenerate kind:
  signed weights, Gaussian points, integer grids (collinear and coplanar subsets, float-exact predicates), decimal
  grids (collinear or coplanar in decimal, only nearly so in float64: the signs the kernels hand back), points on
  a few lines (pairs with a third point on their axis), duplicates, extreme power-of-two scalings;
* the filtered predicates never return a wrong sign: each answer is the exact sign or "unsure";
* each way back to the numpy sweep is taken on the instances made for it (unproved signs, planes with four or
  more points, third points on an axis), and the d = 3 parity shortcut falls back to all pairs on degenerate
  points, including a configuration whose only ordinary lines join points of different parity;
* the kernels against the brute force over all labelings, through the oracle, on the hand-typed degenerate data;
* the fallback: with numba absent (or the switch off) the numpy sweeps answer, and both paths give the oracle the
  same certified objective;
* the deadline contract: in a fresh numba cache a call with a time limit never compiles a kernel (it runs the numpy
  sweep), a call with no limit compiles one only when the problem is large enough, and once the kernels are in the
  cache another process's calls with a time limit load and use them.

The kernels are switched on here (``enumerate_compiled.mode = "on"``) whatever the process's default, so a kernel
that is not in numba's cache is compiled by the first test that needs it (seconds; CI runs ``oraclepriv warm``
before the tests, so there it is loaded). These tests skip only when numba is not installed. ``-m slow`` runs the
comparisons on many more and larger instances.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from brute_force import brute_halfspace
from degenerate_instances import KINDS as HAND_TYPED_KINDS
from degenerate_instances import degenerate_instance
from oraclepriv.solvers.combinatorial import enumerate_3d, enumerate_compiled
from oraclepriv.solvers.combinatorial.enumerate import best_separable_set
from oraclepriv.solvers.combinatorial.geometry import float_is_exact, orient2d, orient3d
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv import make_oracle

numba_only = pytest.mark.skipif(enumerate_compiled._import() is None, reason="numba is not installed")


@pytest.fixture(autouse=True)
def compiled_kernels_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels are switched on for these tests whatever the process's default (``enumerate_compiled.mode``,
    ``ORACLEPRIV_ENUMERATE_COMPILED``); a test that wants the numpy sweeps switches them off itself."""
    monkeypatch.setattr(enumerate_compiled, "mode", "on")


def merged(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct points and their gains, as the oracle merges them."""
    P, inverse = np.unique(X, axis=0, return_inverse=True)
    G = np.bincount(inverse.reshape(-1), weights=np.where(y == 1, w, -w), minlength=len(P))
    return P, G


def points(rng: np.random.Generator, kind: str, n: int, d: int) -> np.ndarray:
    """n points in R^d of one family."""
    if kind == "gauss":
        return rng.normal(size=(n, d))
    if kind == "grid":  # many collinear triples and coplanar quadruples, float-exact predicates
        return rng.integers(-2, 3, size=(n, d)).astype(float)
    if kind == "decimal":  # decimal-collinear/coplanar subsets: float signs the filters cannot prove
        X = np.round(rng.uniform(-1, 1, size=(n, d)), 1)
        k = n // 3
        X[:k, -1] = np.round(0.3 * X[:k, 0] + 0.1, 2)
        return X
    if kind == "lines":  # points on three lines plus some others (dyadic: float-exact): third points on axes
        t = rng.integers(-4, 5, size=n)[:, None]
        starts = rng.integers(-8, 9, size=(3, d)) / 4.0
        directions = rng.integers(-2, 3, size=(3, d)) + np.eye(3, d)
        line = np.arange(n) % 3
        X = starts[line] + t * directions[line] / 4.0
        X[: n // 5] = rng.integers(-16, 17, size=(n // 5, d)) / 8.0
        return X
    if kind == "duplicates":
        base = rng.normal(size=(max(3, n // 3), d))
        return base[rng.integers(len(base), size=n)]
    if kind == "tiny":  # every coordinate difference far below the filters' underflow guards
        return rng.normal(size=(n, d)) * 2.0**-1000
    if kind == "huge":  # products overflow: every sign decided exactly
        return rng.normal(size=(n, d)) * 2.0**600
    raise ValueError(kind)


KINDS = ["gauss", "grid", "decimal", "lines", "duplicates", "tiny", "huge"]


def instance(seed: int, kind: str, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([seed, d, KINDS.index(kind)])
    X = points(rng, kind, n, d)
    y = rng.integers(0, 2, size=n)
    w = rng.laplace(size=n) if seed % 2 else rng.integers(-3, 4, size=n).astype(float)  # signed, with ties
    return merged(X, y, w)


def numpy_sweeps(monkeypatch: pytest.MonkeyPatch, P: np.ndarray, G: np.ndarray):
    with monkeypatch.context() as patch:
        patch.setattr(enumerate_compiled, "mode", "off")
        return best_separable_set(P, G)


def assert_same_optimum(monkeypatch: pytest.MonkeyPatch, P: np.ndarray, G: np.ndarray) -> None:
    compiled = best_separable_set(P, G)
    reference = numpy_sweeps(monkeypatch, P, G)
    assert compiled.sweep.startswith("compiled") or compiled.sweep == "line", compiled.sweep
    assert reference.sweep.startswith("numpy") or reference.sweep == "line", reference.sweep
    tolerance = 1e-9 * max(1.0, float(np.abs(G).sum()))
    case = f"P={P.tolist()} G={G.tolist()}"
    assert compiled.complete and reference.complete
    assert abs(compiled.gain - reference.gain) <= tolerance, (compiled.gain, reference.gain, case)
    assert abs(float(G[compiled.mask].sum()) - compiled.gain) <= tolerance, case  # the set achieves the gain


# ---------------------------------------------------------------- same optimum as the numpy sweeps


@numba_only
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # the numpy filters overflow on "huge",
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # then decide exactly
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", KINDS)
def test_compiled_sweeps_find_the_numpy_optimum(kind, d, monkeypatch):
    extreme = kind in (
        "tiny",
        "huge",
    )  # every sign in rational arithmetic on both paths: smaller here, larger in -m slow
    for seed in range(2 if extreme else 4):
        P, G = instance(seed, kind, (24 if extreme else 40) if d == 2 else (14 if extreme else 24), d)
        assert_same_optimum(monkeypatch, P, G)


@numba_only
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", HAND_TYPED_KINDS)
def test_compiled_sweeps_find_the_numpy_optimum_on_hand_typed_data(kind, d, monkeypatch):
    for seed in range(6):
        P, G = merged(*degenerate_instance(kind, d, seed, max_n=16))
        assert_same_optimum(monkeypatch, P, G)


@numba_only
@pytest.mark.parametrize("d", [2, 3])
def test_the_oracle_certifies_the_same_objective_on_both_paths(d, monkeypatch):
    rng = np.random.default_rng(d)
    n = 150 if d == 2 else 50
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) >= 0).astype(int)
    w = rng.laplace(size=n)
    oracle = make_oracle("halfspace", backend="enumerate")
    compiled = oracle.solve(X, y, w)
    monkeypatch.setattr(enumerate_compiled, "mode", "off")
    reference = oracle.solve(X, y, w)
    assert compiled.details["sweep"].startswith("compiled") and reference.details["sweep"].startswith("numpy")
    assert compiled.certified and reference.certified
    assert compiled.objective == pytest.approx(reference.objective, abs=compiled.tolerance)


# ---------------------------------------------------------------- the filtered predicates


def near_degenerate_triples(rng: np.random.Generator, count: int, d: int) -> np.ndarray:
    """(count, 3 or 4, d) point tuples that are collinear/coplanar in decimal or within an ulp of it."""
    base = np.round(rng.uniform(-1, 1, size=(count, 1, d)), 1)
    steps = np.round(rng.uniform(-1, 1, size=(count, d - 1, d)), 1)
    coefficients = rng.integers(-3, 4, size=(count, d, d - 1)) / 10.0
    tuples = base + coefficients @ steps
    tuples[::3] = np.nextafter(tuples[::3], np.inf)  # an ulp off
    tuples[1::5] *= 2.0**-1030  # subnormal differences
    return np.concatenate((base, tuples), axis=1)


@numba_only
def test_filtered_predicates_return_the_exact_sign_or_unsure():
    kernels = enumerate_compiled.kernels()
    rng = np.random.default_rng(0)
    unsure = 0
    for a, b, c in near_degenerate_triples(rng, 600, 2)[:, :3]:
        exact = int(orient2d(a, b, c)[0])
        got = kernels.orient2d_filtered(a[0], a[1], b[0], b[1], c[0], c[1], False)
        assert got in (exact, kernels.UNSURE), (a, b, c, exact, got)
        unsure += got == kernels.UNSURE
    for quadruple in near_degenerate_triples(rng, 600, 3):
        exact = int(orient3d(*quadruple)[0])
        got = kernels.orient3d_filtered(quadruple, 0, 1, 2, 3, False)
        assert got in (exact, kernels.UNSURE), (quadruple, exact, got)
        unsure += got == kernels.UNSURE
        for component in range(3):
            keep = [(component + 1) % 3, (component + 2) % 3]
            exact = int(orient2d(*quadruple[:3, keep])[0])
            got = kernels.cross_component_filtered(quadruple, 0, 1, 2, component, False)
            assert got in (exact, kernels.UNSURE)
    assert unsure > 100  # the near-degenerate signs are handed back, not guessed


@numba_only
def test_zero_signs_are_proved_only_on_float_exact_data():
    """A zero determinant never passes the float filter: it is proved on float-exact data, or from coordinate
    differences that are exactly zero (2-D), and handed back otherwise."""
    kernels = enumerate_compiled.kernels()
    grid = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [3.0, 0.0, 1.0]])
    assert float_is_exact(grid)
    assert kernels.orient2d_filtered(0.0, 0.0, 1.0, 1.0, 2.0, 2.0, True) == 0
    assert kernels.orient2d_filtered(0.0, 0.0, 1.0, 1.0, 2.0, 2.0, False) == kernels.UNSURE
    assert kernels.orient2d_filtered(0.1, 0.3, 0.1, 0.7, 0.1, 0.2, False) == 0  # equal x: the products are 0
    assert kernels.orient3d_filtered(grid, 0, 1, 2, 3, True) == 0
    assert kernels.orient3d_filtered(grid, 0, 1, 2, 3, False) == kernels.UNSURE


@numba_only
def test_the_kernels_use_the_numpy_sweeps_frame_filter():
    kernels = enumerate_compiled.kernels()
    assert (kernels.FRAME_RTOL, kernels.NORM_MIN) == (enumerate_3d._FRAME_RTOL, enumerate_3d._NORM_MIN)


# ---------------------------------------------------------------- the proposing sort


@numba_only
@pytest.mark.parametrize("spread", ["uniform", "bunched"])
def test_bucket_order_sorts_every_index_but_the_skipped_ones(spread):
    """Spread keys take the bucket pass; keys bunched into a few buckets exceed the insertion budget and take the
    merge sort. Either way: every index but the skipped ones, in the order of their keys."""
    kernels = enumerate_compiled.kernels()
    rng = np.random.default_rng(3)
    for n, (skip, skip2) in itertools.product((200, 500), ((4, -1), (4, 4), (4, 7), (-1, -1))):  # even, odd merges
        key = rng.uniform(0, 2, n) if spread == "uniform" else 1.0 + rng.uniform(0, 1e-3, n)
        key[::50] = np.nan  # non-finite keys sort as 0
        expected_key = np.where(np.isnan(key), 0.0, key)
        order, sorted_key = np.empty(n, dtype=np.int64), np.empty(n)
        bucket, count = np.empty(n, dtype=np.int64), np.empty(2 * n + 1, dtype=np.int64)
        m = kernels.bucket_order(key, n, skip, skip2, bucket, count, order, sorted_key)
        kept = sorted(set(range(n)) - {skip, skip2})
        assert m == len(kept) and sorted(order[:m].tolist()) == kept
        assert (np.diff(sorted_key[:m]) >= 0).all() and (sorted_key[:m] == expected_key[order[:m]]).all()


# ---------------------------------------------------------------- the ways back to the numpy sweeps


@numba_only
def test_pivots_with_unproved_signs_are_handed_back_and_solved_exactly(monkeypatch):
    kernels = enumerate_compiled.kernels()
    P, G = instance(1, "decimal", 40, 2)
    values = np.full(len(P), -np.inf)
    unsure = np.zeros(len(P), dtype=np.bool_)
    kernels.pivot_values_2d(P, G, np.arange(len(P)), float_is_exact(P), values, unsure)
    assert unsure.any() and not unsure.all()
    assert_same_optimum(monkeypatch, P, G)


@numba_only
@pytest.mark.parametrize("kind, status", [("decimal", "HANDED_BACK"), ("grid", "COPLANAR"), ("lines", "ON_AXIS")])
def test_pairs_are_handed_back_for_each_reason(kind, status, monkeypatch):
    kernels = enumerate_compiled.kernels()
    P, G = instance(0, kind, 30, 3)
    I, J = np.triu_indices(len(P), 1)
    values = np.full(len(I), -np.inf)
    statuses = np.zeros(len(I), dtype=np.int8)
    kernels.axis_values_3d(P, G, I, J, float_is_exact(P), values, statuses)
    assert (statuses == getattr(kernels, status)).any()
    assert np.isfinite(values[statuses == kernels.EVALUATED]).all()
    assert np.isinf(values[statuses != kernels.EVALUATED]).all()
    assert_same_optimum(monkeypatch, P, G)


@numba_only
def test_general_position_sweeps_only_the_pairs_of_equal_parity(monkeypatch):
    swept = []
    original = enumerate_3d._axis_values_compiled

    def counting(P, G, I, J, *args):
        swept.append(len(I))
        return original(P, G, I, J, *args)

    monkeypatch.setattr(enumerate_3d, "_axis_values_compiled", counting)
    P, G = instance(2, "gauss", 21, 3)
    assert_same_optimum(monkeypatch, P, G)
    assert swept == [55 + 45]  # the pairs among the 11 even and among the 10 odd indices


@numba_only
def test_degenerate_points_whose_ordinary_lines_all_mix_parities_are_swept_fully(monkeypatch):
    """Points 0, 2, 4 on a line and point 1 off it: the plane they span has the ordinary lines 1-0, 1-2, 1-4 only
    (mixed parity), so the parity shortcut alone would never sweep it. The collinear triple is met from the pair
    (0, 2), and every pair is swept."""
    rng = np.random.default_rng(5)
    line = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    apex = np.array([[0.0, 1.0, 0.0]])
    others = rng.integers(3, 9, size=(6, 3)).astype(float)
    P = np.concatenate((line[:1], apex, line[1:2], others[:1], line[2:], others[1:]))
    for seed in range(20):
        G = np.random.default_rng(seed).integers(-5, 6, size=len(P)).astype(float)
        G[[0, 1, 2, 4]] = np.abs(G[[0, 1, 2, 4]]) + 3.0  # the plane of the line and the apex is worth taking
        assert_same_optimum(monkeypatch, P, G)


# ---------------------------------------------------------------- fallback and deadline


def test_without_numba_the_numpy_sweeps_answer(monkeypatch):
    P, G = instance(3, "gauss", 30, 3)
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
        patch.delitem(sys.modules, "oraclepriv.solvers.combinatorial.enumerate_kernels", raising=False)
        enumerate_compiled._forget_import()
        try:
            assert enumerate_compiled.kernels() is None
            without = best_separable_set(P, G)
        finally:
            enumerate_compiled._forget_import()
    with monkeypatch.context() as patch:
        patch.setattr(enumerate_compiled, "mode", "off")
        assert enumerate_compiled.kernels() is None
        switched_off = best_separable_set(P, G)
    assert without.sweep.startswith("numpy (numba is not installed")
    assert switched_off.sweep == "numpy (ORACLEPRIV_ENUMERATE_COMPILED=0)"
    assert without.gain == switched_off.gain and (without.mask == switched_off.mask).all()


@numba_only
@pytest.mark.parametrize("d", [2, 3])
def test_an_expired_deadline_stops_the_compiled_sweep(d):
    P, G = instance(4, "gauss", 40, d)
    stopped = best_separable_set(P, G, deadline=Deadline(0.0))
    assert not stopped.complete
    assert abs(float(G[stopped.mask].sum()) - stopped.gain) <= 1e-9 * max(1.0, float(np.abs(G).sum()))


# ---------------------------------------------------------------- against the brute force


@numba_only
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", HAND_TYPED_KINDS)
def test_the_compiled_oracle_matches_the_brute_force_on_degenerate_data(kind, d):
    """Through the oracle, with every sweep compiled: the certified objective is the brute force's optimum over all
    labelings (LP realisability), on decimal lines and planes, grids, duplicates and extreme scales."""
    oracle = make_oracle("halfspace", backend="enumerate")
    swept = set()
    for seed in range(4):
        X, y, w = degenerate_instance(kind, d, seed, max_n=8)
        result = oracle.solve(X, y, w)
        swept.add(result.details["sweep"].split(" ")[0])
        assert result.certified
        assert result.objective == pytest.approx(brute_halfspace(X, y, w), abs=result.tolerance), (kind, d, seed)
    assert "compiled" in swept


# ---------------------------------------------------------------- the choice and the deadline contract


def _run_calls(calls: list[tuple[int, int, float | None]], cache_dir: str | None) -> dict:
    """Run enumerate calls (d, n, time limit) in a fresh process, numba's cache in ``cache_dir`` (None: the
    process's default), the switch at its default; return per call the sweep, the seconds and whether it was
    certified, and how many kernel signatures that process compiled or loaded."""
    script = f"""
import json, time
import numpy as np
from oraclepriv import make_oracle
from oraclepriv.solvers.combinatorial import enumerate_compiled
rows = []
for d, n, limit in {calls!r}:
    rng = np.random.default_rng([d, n])
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) >= 0).astype(int)
    start = time.perf_counter()
    result = make_oracle("halfspace", backend="enumerate", time_limit=limit).solve(X, y, rng.laplace(size=n))
    rows.append([result.details["sweep"], time.perf_counter() - start, result.certified])
module = enumerate_compiled._module
kernels = 0 if module is None else len(module.pivot_values_2d.overloads) + len(module.axis_values_3d.overloads)
print(json.dumps({{"rows": rows, "kernels": kernels}}))
"""
    env = {k: v for k, v in os.environ.items() if k != enumerate_compiled.MODE_VARIABLE}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@numba_only
def test_a_call_with_a_time_limit_never_compiles_a_kernel(tmp_path):
    """In a fresh numba cache, calls with a time limit large enough to load a kernel (were it in the cache) run the
    numpy sweep and compile nothing; so does a call with no limit on a problem too small to repay a compilation."""
    out = _run_calls([(2, 1000, 30.0), (3, 200, 30.0), (2, 1000, None)], str(tmp_path))
    limited_2d, limited_3d, unlimited = out["rows"]
    for sweep, seconds, certified in (limited_2d, limited_3d):
        assert sweep.startswith("numpy (the kernel is not compiled, and a call with a time limit never compiles"), sweep
        assert certified and seconds < 30.0
    assert unlimited[0].startswith("numpy (the kernel is not compiled, and compiling it would cost more"), unlimited
    assert out["kernels"] == 0  # nothing compiled, nothing loaded
    assert not any(tmp_path.rglob("*.nbc"))  # and nothing written to the cache


@numba_only
def test_a_warm_cache_serves_calls_with_a_time_limit_in_another_process():
    """Once the kernels are in numba's cache (here or by oraclepriv warm), a new process's calls with a time limit
    load them; a small call before any numpy time has been spent keeps the numpy sweep."""
    for dimension in enumerate_compiled.DIMENSIONS:
        enumerate_compiled.warm(dimension)
    out = _run_calls([(2, 50, 30.0), (2, 1000, 30.0), (3, 200, 30.0), (2, 50, 30.0)], None)
    small_first, large_2d, large_3d, small_after = out["rows"]
    assert small_first[0] == "numpy (a small problem: loading the kernel would cost more than this sweep)"
    assert large_2d[0] == "compiled (loaded from numba's cache)" and large_3d[0] == large_2d[0]
    assert small_after[0] == "compiled"  # in the process now: used at every size
    assert all(row[2] for row in out["rows"])
    assert out["kernels"] == 2


def test_many_small_numpy_sweeps_earn_the_kernel_load(monkeypatch):
    """The rent-or-buy rule: small calls keep the numpy sweep until this process's numpy sweeps of that dimension
    have taken as long as a load; a call with little time left never loads."""
    monkeypatch.setattr(enumerate_compiled, "mode", "auto")
    monkeypatch.setattr(enumerate_compiled, "_numpy_seconds", dict.fromkeys(enumerate_compiled.DIMENSIONS, 0.0))
    monkeypatch.setattr(enumerate_compiled, "loaded", lambda dimension: None)
    loads = []
    monkeypatch.setattr(
        enumerate_compiled, "_load_from_cache", lambda module, dimension: loads.append(dimension) or True
    )
    assert enumerate_compiled.choose(2, 20, None).kernels is None
    enumerate_compiled.record_numpy_sweep(2, enumerate_compiled.LOAD_AFTER_NUMPY_SECONDS)
    assert enumerate_compiled.choose(3, 20, None).kernels is None  # the 3-D sweeps have not earned it
    assert enumerate_compiled.choose(2, 20, Deadline(enumerate_compiled.LOAD_MIN_SECONDS / 2)).kernels is None
    assert loads == []
    if enumerate_compiled._import() is not None:
        assert enumerate_compiled.choose(2, 20, None).reason == "compiled (loaded from numba's cache)"
        assert loads == [2]


def test_the_switch_refuses_unknown_values(monkeypatch):
    monkeypatch.setattr(enumerate_compiled, "mode", None)
    monkeypatch.setenv(enumerate_compiled.MODE_VARIABLE, "yes")
    with pytest.raises(ValueError, match="ORACLEPRIV_ENUMERATE_COMPILED must be 0, 1 or auto; got 'yes'"):
        enumerate_compiled.current_mode()
    for value, expected in (("0", "off"), ("1", "on"), ("auto", "auto"), ("", "auto")):
        monkeypatch.setenv(enumerate_compiled.MODE_VARIABLE, value)
        assert enumerate_compiled.current_mode() == expected


@pytest.mark.parametrize("mode", [pytest.param("on", marks=numba_only), "off"])
def test_a_time_limit_holds_on_degenerate_data_handed_back_to_the_numpy_sweep(mode, monkeypatch):
    """Integer-grid points in d = 3: nearly every pair's axis has a plane with four or more points, so the compiled
    sweep hands nearly every pair back to the numpy sweep, whose blocks of pairs then cost seconds each at their
    full size. Under a time limit the blocks are sized by the time they take, so the limit holds on both paths."""
    monkeypatch.setattr(enumerate_compiled, "mode", mode)
    rng = np.random.default_rng(200)
    X = rng.integers(-6, 7, size=(200, 3)).astype(float)
    y = (X @ rng.normal(size=3) + 1.8 * rng.normal(size=200) >= 0).astype(int)
    limit = 1.0
    start = time.perf_counter()
    result = make_oracle("halfspace", backend="enumerate", time_limit=limit).solve(X, y, rng.laplace(size=200))
    seconds = time.perf_counter() - start
    assert result.status == "time_limit" and "enumeration (3-D pairs)" in result.details["deadline_phases"]
    assert seconds < limit + 1.5, f"{seconds:.2f} s for a limit of {limit} s (load {os.getloadavg()})"


# ---------------------------------------------------------------- thorough (-m slow)


@numba_only
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("d", [2, 3])
def test_compiled_sweeps_find_the_numpy_optimum_thorough(d, monkeypatch):
    for seed in range(4, 24):
        for kind in KINDS:
            n = [60, 150, 400][seed % 3] if d == 2 else [20, 40, 70][seed % 3]
            if kind in ("tiny", "huge"):  # every sign in rational arithmetic on both paths
                n = min(n, 40 if d == 2 else 20)
            P, G = instance(seed, kind, n, d)
            assert_same_optimum(monkeypatch, P, G)
        for kind in HAND_TYPED_KINDS:
            assert_same_optimum(monkeypatch, *merged(*degenerate_instance(kind, d, seed, max_n=24)))


def _fake_llvm_callback():
    """A function whose code lives in llvmlite's callback file (where a raised exception is dropped by ctypes): it
    sends this process SIGINT and reports whether the interrupt was raised inside it."""
    source = (
        "import signal\n"
        "def callback():\n"
        "    try:\n"
        "        signal.raise_signal(signal.SIGINT)\n"
        "        for _ in range(1000):\n"
        "            pass\n"
        "    except KeyboardInterrupt:\n"
        "        return 'raised inside'\n"
        "    return 'returned'\n"
    )
    namespace: dict = {}
    exec(compile(source, "/site/llvmlite/binding/executionengine.py", "exec"), namespace)
    return namespace["callback"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_ctrl_c_inside_an_llvm_callback_is_raised_after_it_not_lost():
    """Without the guard the interrupt is raised inside the callback (ctypes would print and drop it); with it the
    callback returns and the interrupt comes right after, before the compilation could go on."""
    import signal

    import llvmlite.binding.executionengine as engine

    assert enumerate_compiled._BINDING_FILES in engine.__file__  # the guard names llvmlite's binding files
    callback = _fake_llvm_callback()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert callback() == "raised inside"  # what llvmlite's callback meets without the guard
    outcome = []
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        with enumerate_compiled.ctrl_c_survives_llvm_callbacks():
            outcome.append(callback())
            time.sleep(5.0)  # the compilation going on: the deferred Ctrl-C ends it, 20 ms on
    assert outcome == ["returned"] and time.perf_counter() - start < 2.0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
