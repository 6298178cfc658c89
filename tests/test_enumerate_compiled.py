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
* the fallback: with numba absent (or the switch off) the numpy sweeps answer, and both paths give the oracle the
  same certified objective.

The kernels are switched on here whatever the process's default, and compiled once per process (numba's on-disk
cache makes later processes load them instead);
``-m slow`` runs the comparisons on many more and larger instances.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from degenerate_instances import KINDS as HAND_TYPED_KINDS
from degenerate_instances import degenerate_instance
from oraclepriv.solvers.combinatorial import enumerate_3d, enumerate_compiled
from oraclepriv.solvers.combinatorial.enumerate import best_separable_set
from oraclepriv.solvers.combinatorial.geometry import float_is_exact, orient2d, orient3d
from oraclepriv.solvers.runtime.deadline import Deadline

from oraclepriv import make_oracle

numba_only = pytest.mark.skipif(enumerate_compiled._import() is None, reason="numba is not installed")

#: compiling the kernels takes seconds (d = 2) to minutes (d = 3) in a fresh installation: the whole module runs with
#: the slow checks (python3 -m pytest -m slow), and the default run keeps enumerate's numpy sweeps under test
pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def compiled_kernels_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels are switched on for these tests whatever the process's default (``enumerate_compiled.enabled``,
    ``ORACLEPRIV_ENUMERATE_COMPILED``); a test that wants the numpy sweeps switches them off itself."""
    monkeypatch.setattr(enumerate_compiled, "enabled", True)


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
        patch.setattr(enumerate_compiled, "enabled", False)
        return best_separable_set(P, G)


def assert_same_optimum(monkeypatch: pytest.MonkeyPatch, P: np.ndarray, G: np.ndarray) -> None:
    compiled = best_separable_set(P, G)
    reference = numpy_sweeps(monkeypatch, P, G)
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
    for seed in range(4):
        P, G = instance(seed, kind, 40 if d == 2 else 24, d)
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
    monkeypatch.setattr(enumerate_compiled, "enabled", False)
    reference = oracle.solve(X, y, w)
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
    for seed in range(40):
        G = np.random.default_rng(seed).integers(-5, 6, size=len(P)).astype(float)
        G[[0, 1, 2, 4]] = np.abs(G[[0, 1, 2, 4]]) + 3.0  # the plane of the line and the apex is worth taking
        assert_same_optimum(monkeypatch, P, G)


# ---------------------------------------------------------------- fallback and deadline


def test_without_numba_the_numpy_sweeps_answer(monkeypatch):
    P, G = instance(3, "gauss", 30, 3)
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
        enumerate_compiled._import.cache_clear()
        try:
            assert enumerate_compiled.kernels() is None
            without = best_separable_set(P, G)
        finally:
            enumerate_compiled._import.cache_clear()
    with monkeypatch.context() as patch:
        patch.setattr(enumerate_compiled, "enabled", False)
        assert enumerate_compiled.kernels() is None
        switched_off = best_separable_set(P, G)
    assert without.gain == switched_off.gain and (without.mask == switched_off.mask).all()


@numba_only
@pytest.mark.parametrize("d", [2, 3])
def test_an_expired_deadline_stops_the_compiled_sweep(d):
    P, G = instance(4, "gauss", 40, d)
    stopped = best_separable_set(P, G, deadline=Deadline(0.0))
    assert not stopped.complete
    assert abs(float(G[stopped.mask].sum()) - stopped.gain) <= 1e-9 * max(1.0, float(np.abs(G).sum()))


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
