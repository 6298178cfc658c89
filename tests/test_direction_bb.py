"""The ``direction-bb`` backend: branch-and-bound over boxes of halfspace normals with interval bounds.

Exactness is checked against three independent references: the brute force of
``tests/brute_force.py`` (tiny n, d = 2..4), ``enumerate`` (exact for d <= 3, n up to 40) and
``scip-bc`` (d = 4, 5), on general-position and degenerate data (integer grids, conflicting
duplicates, collinear points, constant and duplicated feature columns, identical points, n = 1,
d = 1) with unit, integer, real, signed and partly zero weights. With a fallback (the default
"auto", or "scip-bc") every answer must be certified and optimal; with ``fallback="none"`` the bound
must never exceed the optimum, and on general-position data the search alone must certify. Bounds
reported under a time limit must be below the optimum too.

The kernel (:mod:`oraclepriv.solvers.combinatorial.direction_bounds`) is checked directly, in exact rational
arithmetic: a box's bound is below the loss of every halfspace whose normal lies in the box (corners
included, every offset) and tight on a single normal in general position; down a bisection in which
children inherit their parent's window, every bound stays valid and outside a box's window its
normals cost at least the window's floor; ``best_offsets`` reports the loss its threshold really has.

Negative controls: a bound raised by 1, a negative rounding tolerance, a face of the cube left out
of the search and conflicting duplicates counted as free each make ``check_answer`` -- the assertion
the exactness tests use -- fail on a fixed list of instances; a negative tolerance also makes the
kernel check fail.

Degenerate data and ``max_boxes``: flat points go to the fallback up front, other degenerate data
once a box gets narrow or, in d <= 3, after a box budget comparable with enumerate's work
(docs/solvers/direction-bb.md, "Convergence and degenerate data").
``test_degenerate_3d_data_is_certified_within_a_time_limit`` asserts that a flat 3-d instance (a
duplicated feature column, which once made the search refine 9.5 M boxes for 90 s) is handed to
``enumerate`` up front and certified optimal within a 1 s time limit. A search that is not handed
over early (``fallback="none"``) can run on to the default ``max_boxes`` (2,000,000 open boxes), so
the tests on degenerate data pass a smaller ``max_boxes``: the same stop, sooner.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import oraclepriv.solvers.combinatorial.direction_bb as direction_bb
import oraclepriv.solvers.combinatorial.direction_bounds as direction_bounds
import pyscipopt  # noqa: F401  # required (scip-bc: the d >= 4 reference, the fallback above d = 3): a broken install must fail, not skip
import pytest
from brute_force import brute_halfspace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.combinatorial.direction_bounds import WhitenedGroups, Window, best_offsets, region_lower_bounds
from strategies import instances, points

from oraclepriv import make_oracle

#: max_boxes for degenerate data: the search hands over to the fallback after this many open boxes
#: instead of 2,000,000 (module docstring)
SMALL_SEARCH = 20_000
#: a negative-control rounding-safety factor: the interval ends move inwards by about 0.5 (instead
#: of outwards by about 1e-13) on these instances
NEGATIVE_SAFETY = -1e14


# -- helpers ----------------------------------------------------------------------------------------


def solve(X, y, w, **options):
    return make_oracle("halfspace", backend="direction-bb", **options).solve(X, y, w)


def reference(X, y, w, backend: str) -> float:
    """The optimum by another exact backend (which must certify it)."""
    res = make_oracle("halfspace", backend=backend).solve(X, y, w)
    assert res.certified, f"reference {backend} did not certify: {res.status}"
    return res.objective


def check_answer(res, truth: float, *, certified: bool) -> None:
    """The exactness assertions: bound <= optimum <= objective; certified => objective = optimum;
    ``certified=True``: the answer must be certified."""
    tol = res.tolerance
    stop = res.details.get("search_stop")
    assert res.bound <= truth + tol, f"bound {res.bound!r} exceeds the true optimum {truth!r}: not a proved bound"
    assert res.objective >= truth - tol, f"objective {res.objective!r} below the true optimum {truth!r}"
    if res.certified:
        assert abs(res.objective - truth) <= tol, f"certified objective {res.objective!r} but the optimum is {truth!r}"
    if certified:
        assert res.certified, (
            f"not certified: status {res.status}, objective {res.objective!r}, bound {res.bound!r}, "
            f"optimum {truth!r}, search stop {stop}"
        )


def check_both(X, y, w, truth: float, general_position: bool, label: str, fallbacks=("auto",)) -> None:
    """With a fallback (the default "auto": enumerate for d <= 3, scip-bc above) the answer is the
    certified optimum; the search alone gives a valid bound (and certifies on general-position data)."""
    try:
        for fallback in fallbacks:
            res = solve(X, y, w, fallback=fallback, max_boxes=SMALL_SEARCH)
            check_answer(res, truth, certified=True)
            assert res.objective == res.hypothesis.loss(X, y, w)
        alone = solve(X, y, w, fallback="none", max_boxes=SMALL_SEARCH)
        check_answer(alone, truth, certified=general_position)
        assert "fallback" not in alone.details
    except AssertionError as error:
        raise AssertionError(f"{label}: {error}") from None


def noisy_halfspace(rng, n, d, noise=0.8):
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + noise * rng.normal(size=n) > 0).astype(int)
    return X, y


def _gaussian(rng, n, d):
    return rng.normal(size=(n, d))


def _conflicting_duplicates(rng, n, d):
    """Gaussian points, each repeated (labels are drawn independently: conflicts are common)."""
    base = rng.normal(size=(max(1, (n + 1) // 2), d))
    return base[rng.integers(0, len(base), size=n)]


def _grid(rng, n, d):
    return rng.integers(-1, 2, size=(n, d)).astype(float)


def _collinear(rng, n, d):
    """Integer points on one line (exactly collinear)."""
    direction = rng.integers(1, 3, size=d) * rng.choice([-1, 1], size=d)
    return rng.integers(-2, 3, size=d) + rng.integers(-3, 4, size=n)[:, None] * direction.astype(float)


def _constant_column(rng, n, d):
    X = rng.normal(size=(n, d))
    X[:, rng.integers(d)] = 0.1  # not a dyadic number: its float mean is not exactly 0.1
    return X


def _duplicated_column(rng, n, d):
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    X[:, -1] = X[:, 0]
    return X


def _identical(rng, n, d):
    return np.tile(rng.normal(size=d), (n, 1))


#: point kinds: name -> (generator, in general position)
POINTS = {
    "gaussian": (_gaussian, True),
    "conflicting_duplicates": (_conflicting_duplicates, True),
    "grid": (_grid, False),
    "collinear": (_collinear, False),
    "constant_column": (_constant_column, False),
    "duplicated_column": (_duplicated_column, False),
    "identical": (_identical, False),
}

WEIGHTS = {
    "unit": lambda rng, n: np.ones(n),
    "integer": lambda rng, n: rng.integers(1, 6, size=n).astype(float),
    "real": lambda rng, n: rng.exponential(size=n),
    "signed_real": lambda rng, n: rng.laplace(size=n),
    "signed_integer": lambda rng, n: rng.integers(-3, 4, size=n).astype(float),
    "some_zero": lambda rng, n: np.where(rng.random(n) < 0.4, 0.0, rng.normal(size=n)),
}


def instance(kind: str, seed: int, n: int, d: int):
    """(X, y, w, general position, label): weights cycle through every kind with the seed."""
    rng = np.random.default_rng(seed)
    make_points, general = POINTS[kind]
    weights = list(WEIGHTS)[seed % len(WEIGHTS)]
    X = make_points(rng, n, d)
    y = rng.integers(0, 2, size=n)
    return X, y, WEIGHTS[weights](rng, n), general, f"{kind}/{weights} seed={seed} n={n} d={d}"


# -- exactness against independent references ------------------------------------------------------


@pytest.mark.parametrize("kind", list(POINTS))
def test_matches_brute_force_on_tiny_instances(kind):
    for seed in range(9):
        rng = np.random.default_rng(1000 + seed)
        n, d = int(rng.integers(1, 9)), int(rng.integers(2, 5))
        X, y, w, general, label = instance(kind, seed, n, d)
        check_both(X, y, w, brute_halfspace(X, y, w), general, label, fallbacks=("auto", "scip-bc"))


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("kind", list(POINTS))
def test_matches_enumerate_up_to_40_points(kind, d):
    for seed in range(4):
        n = int(np.random.default_rng(2000 + seed).integers(10, 41))
        X, y, w, general, label = instance(kind, 100 * d + seed, n, d)
        check_both(X, y, w, reference(X, y, w, "enumerate"), general, label)


@pytest.mark.parametrize("weights", list(WEIGHTS))
def test_noisy_halfspaces_match_enumerate_with_default_options(weights):
    """General position, no option changed: the search alone certifies the optimum."""
    for seed, (n, d) in enumerate([(40, 2), (40, 3), (25, 3)]):
        rng = np.random.default_rng(300 + seed)
        X, y = noisy_halfspace(rng, n, d)
        w = WEIGHTS[weights](rng, n)
        res = solve(X, y, w)
        check_answer(res, reference(X, y, w, "enumerate"), certified=True)
        assert res.details["search_stop"] == "finished" and "fallback" not in res.details


@pytest.mark.parametrize(
    "seed, n, d, weights",
    [(1, 30, 4, "unit"), (2, 40, 4, "signed_real"), (4, 50, 5, "integer"), (2, 50, 5, "some_zero")],
)
def test_matches_scip_bc_in_4_and_5_dimensions(seed, n, d, weights):
    rng = np.random.default_rng(seed)
    X, y = noisy_halfspace(rng, n, d)
    w = WEIGHTS[weights](rng, n)
    truth = reference(X, y, w, "scip-bc")
    check_answer(solve(X, y, w), truth, certified=True)
    check_answer(solve(X, y, w, fallback="none"), truth, certified=True)


def test_degenerate_grid_in_4_dimensions_matches_scip_bc():
    """Above d = 3 the default fallback is scip-bc."""
    rng = np.random.default_rng(0)
    X = rng.integers(-1, 2, size=(30, 4)).astype(float)
    y = rng.integers(0, 2, size=30)
    w = rng.integers(-3, 4, size=30).astype(float)
    truth = reference(X, y, w, "scip-bc")
    check_both(X, y, w, truth, False, "grid 4-d")
    res = solve(X, y, w, max_boxes=SMALL_SEARCH)
    assert (
        res.details["search_stop"] in {"degenerate", "box_limit", "box_budget", "flat"}
        and res.details["fallback"] == "scip-bc"
    )


@pytest.mark.parametrize(
    "X, y, w",
    [
        pytest.param([[0.3]], [1], [2.0], id="n=1,d=1"),
        pytest.param([[0.3, -1.0, 2.0]], [0], [-2.0], id="n=1,d=3,negative"),
        pytest.param([[1.0, 2.0]] * 5, [0, 1, 1, 0, 1], [1.0, 2.0, -0.5, 3.0, 0.0], id="all identical"),
        pytest.param([[0.0], [1.0], [1.0], [2.0], [3.0], [3.0]], [0, 1, 0, 1, 1, 0], [1, 2, 1, 1, 1, 3], id="d=1 ties"),
        pytest.param(
            [[0.1], [0.2], [0.3], [0.7], [0.8], [0.9]], [1, 0, 1, 0, 1, 0], [-1, 2, 3, -1, 2, 2], id="d=1 signed"
        ),
        pytest.param([[0, 0], [1, 1], [2, 2], [3, 3], [1, 1]], [0, 1, 0, 1, 1], [1, 1, 1, 1, 1], id="collinear"),
        pytest.param([[0, 5], [1, 5], [2, 5], [3, 5]], [1, 0, 0, 1], [1, 2, 3, 4], id="constant column"),
        pytest.param([[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 1, 1]], [1, 1, 0, 0], [0, 0, 0, 0], id="all zero weights"),
        pytest.param([[0, 0], [1, 0], [0, 1], [1, 1]], [1, 0, 0, 1], [-1, -2, -3, -4], id="all negative"),
        pytest.param(
            [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1], [1, 1, 1]],
            [1, 0, 0, 0, 1, 0],
            [1, 1, 1, 1, 3, 2],
            id="xor-like 3-d with conflicting duplicate",
        ),
    ],
)
def test_edge_cases_match_brute_force(X, y, w):
    X, y, w = np.asarray(X, dtype=float), np.asarray(y), np.asarray(w, dtype=float)
    truth = brute_halfspace(X, y, w)
    check_both(X, y, w, truth, False, "edge case")
    if X.shape[1] == 1 or len(np.unique(X, axis=0)) == 1:
        check_answer(solve(X, y, w), truth, certified=True)  # default max_boxes: nothing to search


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), d=st.integers(1, 3))
def test_property_matches_brute_force_on_strategy_instances(data, d):
    """The shared strategies: grids, flats, decimals, identical points; signed weights."""
    X, y, w = data.draw(instances(points(d, min_n=1, max_n=7)))
    check_both(X, y, w, brute_halfspace(X, y, w), False, "strategy instance")


# -- time limits ------------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", ["unit", "signed_real"])
def test_bound_under_a_time_limit_is_below_the_optimum(weights):
    rng = np.random.default_rng(0)
    X, y = noisy_halfspace(rng, 200, 5, noise=1.0)
    w = WEIGHTS[weights](rng, 200)
    full = solve(X, y, w)
    assert full.certified
    truth = full.objective
    stopped = 0
    for limit in (0.01, 0.03, 0.05):
        for fallback in ("none", "auto"):
            res = solve(X, y, w, time_limit=limit, fallback=fallback)
            check_answer(res, truth, certified=False)
            if res.status == "time_limit":
                stopped += 1
                assert not res.certified and res.details["search_stop"] == "time_limit"
                assert res.bound < res.objective
    assert stopped, "no run stopped at its time limit: the test did not exercise it"


# -- negative controls ------------------------------------------------------------------------------


def _control_instances():
    out = []
    for seed in range(8):
        rng = np.random.default_rng(700 + seed)
        n, d = (30, 2) if seed % 2 else (24, 3)
        X, y = noisy_halfspace(rng, n, d, noise=1.0)
        X = np.concatenate([X, X[:6]])  # conflicting duplicates (labels redrawn)
        y = np.concatenate([y, 1 - y[:6]])
        w = WEIGHTS[["unit", "signed_real", "integer", "signed_integer"][seed % 4]](rng, len(y))
        out.append((X, y, w))
    return out


def _plus_one(real):
    def bounds(*args, **kwargs):
        value, window = real(*args, **kwargs)
        return value + 1.0, window

    return bounds


def _without_face(real):
    """The face v_0 = -1 of the cube is never searched (its boxes are discarded at once)."""

    def bounds(groups, lower, upper, *args, **kwargs):
        value, window = real(groups, lower, upper, *args, **kwargs)
        return np.where((lower[:, 0] == -1.0) & (upper[:, 0] == -1.0), np.inf, value), window

    return bounds


class _ConflictsFree:
    """WhitenedGroups whose conflicting groups lose min(W+, W-) from both labels: the unavoidable
    cost of a group holding both labels is not counted."""

    real = WhitenedGroups.build

    @classmethod
    def build(cls, X, y, w):
        groups = cls.real(X, y, w)
        both = np.minimum(groups.w_pos, groups.w_neg)
        points = _group_points(groups, X)  # rebuilt from one point per group: the same groups, in order
        G = groups.size
        return cls.real(
            np.concatenate([points, points]),
            np.concatenate([np.ones(G, dtype=int), np.zeros(G, dtype=int)]),
            np.concatenate([groups.w_pos - both, groups.w_neg - both]),
        )


def _apply(mutation: str, monkeypatch) -> None:
    if mutation == "bound_plus_one":
        monkeypatch.setattr(direction_bb, "region_lower_bounds", _plus_one(region_lower_bounds))
    elif mutation == "negative_tolerance":
        monkeypatch.setattr(direction_bounds, "ERROR_SAFETY", NEGATIVE_SAFETY)
    elif mutation == "face_left_out":
        monkeypatch.setattr(direction_bb, "region_lower_bounds", _without_face(region_lower_bounds))
    elif mutation == "conflicts_free":
        monkeypatch.setattr(direction_bb, "WhitenedGroups", _ConflictsFree)
    else:  # pragma: no cover
        raise AssertionError(mutation)


@pytest.mark.parametrize("mutation", ["bound_plus_one", "negative_tolerance", "face_left_out", "conflicts_free"])
def test_a_broken_bound_is_caught_by_check_answer(mutation, monkeypatch):
    cases = [(X, y, w, reference(X, y, w, "enumerate")) for X, y, w in _control_instances()]
    for X, y, w, truth in cases:  # unbroken: every check passes
        check_answer(solve(X, y, w, fallback="none", max_boxes=SMALL_SEARCH), truth, certified=True)
    _apply(mutation, monkeypatch)
    caught = []
    for X, y, w, truth in cases:
        try:
            check_answer(solve(X, y, w, fallback="none", max_boxes=SMALL_SEARCH), truth, certified=True)
        except AssertionError as error:
            caught.append(str(error))
    assert caught, f"the mutation {mutation!r} went unnoticed on every instance"
    if mutation != "conflicts_free":  # a bound too high, not merely too weak to certify
        assert any("not a proved bound" in c or "but the optimum is" in c for c in caught), caught


# -- the kernel, in exact arithmetic ----------------------------------------------------------------


def _group_points(groups: WhitenedGroups, X: np.ndarray) -> np.ndarray:
    first = np.unique(groups.group_of, return_index=True)[1]
    return np.asarray(X, dtype=float)[first]


def box_bounds(groups: WhitenedGroups, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """The boxes' bounds on their own (no window inherited from a parent box, no threshold)."""
    bounds, _ = region_lower_bounds(groups, lower, upper)
    return bounds


def exact_projections(groups: WhitenedGroups, points: np.ndarray, v) -> list[Fraction]:
    """v . A (x_g - mu) for every group point, in rational arithmetic (A, mu, v as the floats they are)."""
    d = groups.d
    A = [[Fraction(float(a)) for a in row] for row in groups.A]
    mu = [Fraction(float(m)) for m in groups.mu]
    normal = [sum(Fraction(float(v[j])) * A[j][k] for j in range(d)) for k in range(d)]  # A^T v
    return [sum(normal[k] * (Fraction(float(x[k])) - mu[k]) for k in range(d)) for x in points]


def exact_loss(groups: WhitenedGroups, p: list[Fraction], t) -> float:
    """The loss of {u : v . u >= t} given the exact projections (t = +-inf: the constants)."""
    return math.fsum(float(groups.w_neg[g]) if p[g] >= t else float(groups.w_pos[g]) for g in range(groups.size))


def exact_best_loss(groups: WhitenedGroups, p: list[Fraction]) -> float:
    """min over every offset t (each distinct projection, and +inf) of the loss."""
    return min(exact_loss(groups, p, t) for t in [*set(p), math.inf])


def random_boxes(rng, d: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Boxes on random faces of [-1, 1]^d, of widths from 2 down to ~1e-4 (some with integer corners)."""
    lower, upper = np.empty((count, d)), np.empty((count, d))
    for b in range(count):
        centre = rng.uniform(-1, 1, size=d)
        half = 10.0 ** rng.uniform(-4, 0, size=d) if b % 3 else np.ones(d)
        lower[b], upper[b] = np.clip(centre - half, -1, 1), np.clip(centre + half, -1, 1)
        k = rng.integers(d)
        lower[b, k] = upper[b, k] = rng.choice([-1.0, 1.0])
    return lower, upper


def kernel_violations(X, y, w, seed: int, boxes: int = 12, per_box: int = 12) -> list[str]:
    """Normals inside random boxes (corners, centre, random points) whose exact loss at some offset
    is below the box's bound."""
    rng = np.random.default_rng(seed)
    groups = WhitenedGroups.build(X, y, w)
    points = _group_points(groups, X)
    slack = groups.summation_slack()
    lower, upper = random_boxes(rng, groups.d, boxes)
    bounds = box_bounds(groups, lower, upper) - slack
    out = []
    for b in range(boxes):
        corners = [np.where(np.array(bits), upper[b], lower[b]) for bits in np.ndindex(*(2,) * groups.d)]
        inside = [rng.uniform(lower[b], upper[b]) for _ in range(per_box)]
        for v in [*corners, (lower[b] + upper[b]) / 2, *inside]:
            best = exact_best_loss(groups, exact_projections(groups, points, v))
            if best < bounds[b]:
                out.append(f"box {b}: normal {v.tolist()} has loss {best!r} < bound {bounds[b]!r}")
    return out


def _kernel_data(kind: str, seed: int):
    rng = np.random.default_rng(seed)
    n, d = 16, 2 + seed % 2
    X = {"gaussian": rng.normal(size=(n, d)), "grid": rng.integers(-1, 2, size=(n, d)).astype(float)}[kind]
    y = rng.integers(0, 2, size=n)
    w = np.where(rng.random(n) < 0.2, 0.0, rng.exponential(size=n))
    if seed % 3 == 0:
        w = np.ones(n)
    return X, y, w


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["gaussian", "grid"])
def test_region_bound_is_below_every_halfspace_in_the_box(kind, seed):
    X, y, w = _kernel_data(kind, seed)
    assert kernel_violations(X, y, w, seed) == []


def test_region_bound_check_catches_a_negative_tolerance(monkeypatch):
    monkeypatch.setattr(direction_bounds, "ERROR_SAFETY", NEGATIVE_SAFETY)
    found = [v for seed in range(3) for v in kernel_violations(*_kernel_data("grid", seed), seed)]
    assert found, "a negative tolerance went unnoticed by the kernel check"


@pytest.mark.parametrize("seed", range(3))
def test_region_bound_is_tight_on_a_single_normal_in_general_position(seed):
    """A box of one normal (lower = upper) has the exact best loss of that normal as its bound."""
    rng = np.random.default_rng(seed)
    X, y = noisy_halfspace(rng, 20, 3)
    w = rng.exponential(size=20)
    groups = WhitenedGroups.build(X, y, w)
    points = _group_points(groups, X)
    normals = rng.uniform(-1, 1, size=(10, 3))
    normals[np.arange(10), rng.integers(0, 3, size=10)] = rng.choice([-1.0, 1.0], size=10)
    bounds = box_bounds(groups, normals, normals)
    for v, bound in zip(normals, bounds):
        best = exact_best_loss(groups, exact_projections(groups, points, v))
        assert abs(bound - best) <= groups.summation_slack() + 1e-12 * groups.total, (v, bound, best)


def window_violations(groups, points, lower, upper, bounds, window, rng, random_normals=2) -> list[str]:
    """Normals in the boxes whose exact loss is below the box's bound at some offset, or below the
    window's floor at an offset outside the window (lo, hi]."""
    slack = groups.summation_slack()
    out = []
    for b in range(len(bounds)):
        lo, hi, floor = window.lo[b], window.hi[b], window.floor[b]
        corners = [np.where(np.array(bits), upper[b], lower[b]) for bits in np.ndindex(*(2,) * groups.d)]
        inside = [rng.uniform(lower[b], upper[b]) for _ in range(random_normals)]
        for v in [*corners, (lower[b] + upper[b]) / 2, *inside]:
            p = exact_projections(groups, points, v)
            best = exact_best_loss(groups, p)
            if best < bounds[b] - slack:
                out.append(f"box {b}: normal {v.tolist()} has loss {best!r} < bound {bounds[b]!r}")
            # real offsets outside (lo, hi]: every cut of the projections there, and the constants
            outside = []
            if math.isfinite(lo):
                outside += [q for q in p if q <= lo] + [Fraction(float(lo))]
            if math.isfinite(hi):
                outside += [q for q in p if q > hi] + [max(*p, Fraction(float(hi))) + 1]
            for t in outside:
                loss = exact_loss(groups, p, t)
                if loss < floor - slack:
                    out.append(
                        f"box {b}: normal {v.tolist()} costs {loss!r} at t={float(t)!r} outside window "
                        f"({lo!r}, {hi!r}] whose floor is {floor!r}"
                    )
    return out


def bisect_widest(lo: np.ndarray, hi: np.ndarray, window: Window) -> tuple[np.ndarray, np.ndarray, Window]:
    """The children of boxes [lo, hi] as the search makes them (bisected along the widest side), each
    inheriting its parent's window."""
    rows, axis = np.arange(len(lo)), (hi - lo).argmax(axis=1)
    middle = (lo[rows, axis] + hi[rows, axis]) / 2
    hi_left, lo_right = hi.copy(), lo.copy()
    hi_left[rows, axis] = middle
    lo_right[rows, axis] = middle
    return np.concatenate([lo, lo_right]), np.concatenate([hi_left, hi]), Window.join(window, window)


@pytest.mark.parametrize(
    ("seed", "pairs"),
    [
        (0, False),
        (1, False),
        pytest.param(2, False, marks=pytest.mark.slow),
        pytest.param(3, False, marks=pytest.mark.slow),
        (0, True),
        (1, True),
    ],
    ids=["0-numpy", "1-numpy", "2-numpy", "3-numpy", "0-pairs-kernel", "1-pairs-kernel"],
)
def test_windows_inherited_down_the_bisection_keep_the_bounds_valid(seed, pairs, request):
    """As in the search: the 2d faces, then bisection along the widest side, each child inheriting
    its parent's window, with a pruning threshold that falls as incumbents would. At every level
    each box's bound is below the exact loss of its normals, and outside its window the exact loss
    is at least the window's floor. Both sweeps: numpy's, and the compiled one with crossing pairs."""
    X, y, w = _kernel_data(["gaussian", "grid"][seed % 2], 20 + seed)
    rng = np.random.default_rng(seed)
    groups = WhitenedGroups.build(X, y, w)
    points = _group_points(groups, X)
    if pairs:
        groups = groups.with_crossing_pairs(request.getfixturevalue("pair_kernels"))
        assert groups.pairs is not None
    d = groups.d
    lower, upper = -np.ones((2 * d, d)), np.ones((2 * d, d))
    for k in range(d):
        lower[2 * k, k] = upper[2 * k, k] = 1.0
        lower[2 * k + 1, k] = upper[2 * k + 1, k] = -1.0
    sampled = min(exact_best_loss(groups, exact_projections(groups, points, v)) for v in rng.uniform(-1, 1, (20, d)))
    threshold = sampled + 1.0
    window = None
    found, narrowed = [], 0
    for _ in range(12):
        bounds, windows = region_lower_bounds(groups, lower, upper, window, threshold)
        found += window_violations(groups, points, lower, upper, bounds, windows, rng)
        narrowed += int(np.sum(np.isfinite(windows.lo) | np.isfinite(windows.hi)))
        order = np.argsort(bounds)  # the lowest bounds (the boxes the search keeps) and a random one
        keep = np.unique(np.concatenate([order[:4], rng.integers(0, len(bounds), size=1)]))
        lower, upper, window = bisect_widest(lower[keep], upper[keep], windows.take(keep))
        threshold -= rng.choice([0.0, 0.25])
    assert found == []
    assert narrowed, "no window ever excluded an offset: the test did not exercise the windows"


@pytest.mark.parametrize("kind", ["gaussian", "grid"])
def test_best_offsets_report_the_loss_their_threshold_has(kind):
    rng = np.random.default_rng(5)
    for seed in range(3):
        X, y, w = _kernel_data(kind, 10 + seed)
        groups = WhitenedGroups.build(X, y, w)
        points = _group_points(groups, X)
        lower, upper = random_boxes(rng, groups.d, 20)
        normals = np.concatenate([(lower + upper) / 2, lower, rng.uniform(-1, 1, size=(10, groups.d))])
        offsets = best_offsets(groups, normals)
        slack = groups.summation_slack()
        for v, loss, t, margin in zip(normals, offsets.loss, offsets.threshold, offsets.margin):
            p = exact_projections(groups, points, v)
            threshold = t if math.isinf(t) else Fraction(float(t))
            assert abs(loss - exact_loss(groups, p, threshold)) <= slack, (v, t, loss)
            best = exact_best_loss(groups, p)
            assert loss >= best - slack
            if kind == "gaussian":  # projections far apart: the best offset is found
                assert loss <= best + slack, (v, loss, best)
            if math.isfinite(t):
                assert margin > 0 and min(abs(q - threshold) for q in p) >= Fraction(float(margin))


# -- options ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, value",
    [
        ("fallback", "scip"),
        ("fallback", ""),
        ("fallback", "gurobi-bc"),
        ("batch", 0),
        ("batch", -4),
        ("batch", 2.0),
        ("batch", "8"),
        ("batch", True),
        ("max_boxes", 0),
        ("max_boxes", 1.5),
        ("max_boxes", False),
        ("max_boxes", "1000"),
    ],
)
def test_bad_options_are_rejected_by_name_and_value(option, value):
    with pytest.raises(ValueError, match=rf"{option}.*{re.escape(repr(value))}"):
        make_oracle("halfspace", backend="direction-bb", **{option: value})


def test_unknown_option_is_rejected():
    with pytest.raises(ValueError, match="unknown option"):
        make_oracle("halfspace", backend="direction-bb", bogus=1)


def test_one_box_gives_a_valid_bound_and_no_false_optimal_status():
    rng = np.random.default_rng(3)
    seen_open = False
    for n, d in [(30, 2), (30, 3), (40, 3)]:
        X, y = noisy_halfspace(rng, n, d, noise=1.0)
        w = rng.laplace(size=n)
        truth = reference(X, y, w, "enumerate")
        res = solve(X, y, w, fallback="none", max_boxes=1)
        check_answer(res, truth, certified=False)
        assert res.details["search_stop"] in {"box_limit", "finished"}
        if res.details["search_stop"] == "box_limit":
            seen_open = True
            assert res.details["open_boxes"] > 1
        if res.status == "optimal":
            assert abs(res.objective - truth) <= res.tolerance
        if not res.certified:
            assert res.status != "optimal"
    assert seen_open, "max_boxes=1 never stopped the search"


def test_one_box_hands_over_to_the_fallback_and_keeps_its_halfspace():
    """max_boxes=1: the search stops at once; the fallback's better halfspace is the answer."""
    rng = np.random.default_rng(3)
    handed_over = 0
    for n, d in [(30, 2), (30, 3), (40, 3)]:
        X, y = noisy_halfspace(rng, n, d, noise=1.0)
        w = rng.laplace(size=n)
        res = solve(X, y, w, max_boxes=1)
        check_answer(res, reference(X, y, w, "enumerate"), certified=True)
        if res.details["search_stop"] == "box_limit":
            handed_over += 1
            assert res.details["fallback"] == "enumerate" and res.details["fallback_status"] == "optimal"
    assert handed_over


@pytest.mark.parametrize("batch", [1, 16, 100, 100_000])
def test_batch_size_does_not_change_the_answer(batch):
    rng = np.random.default_rng(8)
    X, y = noisy_halfspace(rng, 40, 3)
    w = rng.integers(-2, 4, size=40).astype(float)
    res = solve(X, y, w, batch=batch)
    check_answer(res, reference(X, y, w, "enumerate"), certified=True)
    assert res.details["search_stop"] == "finished"


def test_details_describe_the_search():
    rng = np.random.default_rng(9)
    X, y = noisy_halfspace(rng, 30, 3)
    res = solve(X, y, np.ones(30))
    details = res.details
    assert details["search_stop"] == "finished" and details["open_boxes"] == 0
    assert details["boxes"] >= 6 and details["groups"] == 30
    assert details["search_bound"] == res.bound and res.nodes == details["boxes"]


# -- degenerate data: the fallback ----------------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 3])
def test_degenerate_grid_with_conflicting_duplicates_is_handed_to_the_fallback(d):
    """The search either finishes or hands over (enumerate for d <= 3 by default, scip-bc when
    asked); either way the answer is certified and optimal."""
    handed_over = {"auto": 0, "scip-bc": 0}
    for seed in range(4):
        rng = np.random.default_rng(40 + seed)
        n = 30
        X = rng.integers(-1, 2, size=(n, d)).astype(float)
        y = rng.integers(0, 2, size=n)
        w = rng.integers(-3, 4, size=n).astype(float) if seed % 2 else rng.laplace(size=n)
        assert len(np.unique(X, axis=0)) < n  # duplicates (with conflicting labels, in practice)
        truth = reference(X, y, w, "enumerate")
        for fallback, expected in (("auto", "enumerate"), ("scip-bc", "scip-bc")):
            res = solve(X, y, w, fallback=fallback, max_boxes=SMALL_SEARCH)
            check_answer(res, truth, certified=True)
            stop = res.details["search_stop"]
            if stop == "finished":
                assert "fallback" not in res.details
            else:
                assert stop in {"degenerate", "box_limit", "box_budget", "flat"}
                assert res.details.get("fallback") == expected, f"search stop {stop} but no hand-over"
                assert res.details["fallback_status"] == "optimal"
                # both in the reduced problem's units: the search's bound is below the proved optimum
                assert res.details["search_bound"] <= res.details["fallback_bound"] + res.tolerance
                handed_over[fallback] += 1
    assert all(handed_over.values()), f"the fallback was never used: {handed_over}"


def test_degenerate_normals_in_the_plane_are_detected_without_max_boxes():
    """In d = 2 a degenerate normal is a point of a face: boxes around it shrink below the minimum
    width and the search says so (default max_boxes); the default fallback (enumerate) finishes."""
    X = np.array([[1, 1], [-1, 1], [0, 0], [0, -1], [1, -1], [-1, 0], [0, 0], [-1, -1]], dtype=float)
    y = np.array([0, 0, 0, 1, 0, 1, 1, 0])  # (0, 0) twice, with both labels
    w = np.array([1, 2, 1, 3, 1, 3, 3, 3], dtype=float)
    truth = brute_halfspace(X, y, w)
    alone = solve(X, y, w, fallback="none")
    check_answer(alone, truth, certified=False)
    assert alone.details["search_stop"] == "degenerate" and alone.details["degenerate_boxes"] > 0
    assert alone.status == "feasible" and not alone.certified
    res = solve(X, y, w)
    check_answer(res, truth, certified=True)
    assert res.details["search_stop"] == "degenerate" and res.details["fallback"] == "enumerate"
    assert res.bound > alone.bound  # the fallback's proof closed the gap the search left


def _degenerate_3d_instance():
    """6 points on the plane x0 = x1 of R^3 (a duplicated feature column), 5 distinct."""
    X = np.array([[1, 1, 1], [1, 1, 1], [0, 0, -1], [0, 0, -1], [-1, -1, -1], [0, 0, 0]], dtype=float)
    y = np.array([0, 0, 0, 1, 0, 1])
    w = np.array([1.0, 1.0, 2.0, 0.0, 1.0, 3.0])
    return X, y, w


def test_degenerate_3d_data_is_certified_with_a_smaller_max_boxes():
    X, y, w = _degenerate_3d_instance()
    truth = brute_halfspace(X, y, w)
    res = solve(X, y, w, max_boxes=SMALL_SEARCH)
    check_answer(res, truth, certified=True)
    assert res.details["search_stop"] in {"box_limit", "flat"} and res.details["fallback"] == "enumerate"


def test_degenerate_3d_data_is_certified_within_a_time_limit():
    # a duplicated feature column: the points are flat, so the call goes to enumerate up front (before
    # that, the search refined a whole curve of degenerate normals: 9.5 M boxes, 90 s)
    X, y, w = _degenerate_3d_instance()
    truth = brute_halfspace(X, y, w)
    res = solve(X, y, w, time_limit=1.0)
    check_answer(res, truth, certified=True)
    assert res.details["search_stop"] == "flat" and res.details["fallback"] == "enumerate"


@pytest.mark.parametrize("seed", [0, 1])
def test_a_3d_integer_grid_is_handed_to_enumerate_within_its_box_budget(seed):
    # full-dimensional but degenerate (many coplanar points): no box becomes narrow quickly, so the
    # budget of boxes (comparable with enumerate's work) hands it over; this took about 96 s before
    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, size=(30, 3)).astype(float)
    y = rng.integers(0, 2, size=30)
    w = rng.integers(-3, 4, size=30).astype(float)
    res = solve(X, y, w, time_limit=20.0)
    reference = make_oracle("halfspace", backend="scip-bc").solve(X, y, w)  # independent of enumerate
    assert reference.certified
    check_answer(res, reference.objective, certified=True)
    assert res.details["search_stop"] in {"box_budget", "degenerate", "finished"}


def test_bucketed_sweep_gives_the_same_bounds_and_windows_as_one_sweep(monkeypatch):
    """The sweep runs per bucket of boxes with similar counts of events inside their windows
    (``direction_bounds._buckets``): any bucketing must give exactly the bounds and windows of one
    sweep over all boxes. Heavy signed weights (as in RRSPM's calls) make the counts spread."""
    from oraclepriv.solvers.combinatorial import direction_bounds

    rng = np.random.default_rng(11)
    X = rng.normal(size=(90, 4))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    y[rng.random(90) < 0.15] ^= 1
    w = np.where(np.arange(90) < 20, rng.laplace(0, 20, 90), 1.0)
    y = np.where(w < 0, 1 - y, y)
    groups = WhitenedGroups.build(X, y, np.abs(w))
    d = groups.d
    lower, upper = -np.ones((2 * d, d)), np.ones((2 * d, d))
    for k in range(d):
        lower[2 * k, k] = upper[2 * k, k] = 1.0
        lower[2 * k + 1, k] = upper[2 * k + 1, k] = -1.0
    split = []
    real_buckets = direction_bounds._buckets

    def spy(count):
        order, cuts = real_buckets(count)
        split.append(len(cuts) > 2)
        return order, cuts

    monkeypatch.setattr(direction_bounds, "_buckets", spy)
    threshold, window = float(np.abs(w).sum()) / 4, None
    for _ in range(9):
        monkeypatch.setattr(direction_bounds, "BUCKET_SLACK", math.inf)
        one_bounds, one_windows = region_lower_bounds(groups, lower, upper, window, threshold)
        monkeypatch.setattr(direction_bounds, "BUCKET_SLACK", -math.inf)
        monkeypatch.setattr(direction_bounds, "BUCKET_MIN", 2)
        bounds, windows = region_lower_bounds(groups, lower, upper, window, threshold)
        np.testing.assert_array_equal(bounds, one_bounds)
        for field in ("lo", "hi", "floor"):
            np.testing.assert_array_equal(getattr(windows, field), getattr(one_windows, field))
        keep = np.argsort(bounds)[:40]
        lower, upper, window = bisect_widest(lower[keep], upper[keep], windows.take(keep))
        threshold *= 0.97
    assert any(split), "the sweep was never split into buckets: the test did not exercise them"


# -- crossing pairs (direction_bounds, "Crossing pairs"; the matching kernel in direction_kernels) ----------------


@pytest.fixture(scope="module")
def pair_kernels():
    """The compiled matching kernel, made ready in this process (from numba's cache after ``oraclepriv warm``)."""
    from oraclepriv.solvers.combinatorial import direction_compiled

    direction_compiled.warm()
    return direction_compiled._import()


@pytest.fixture
def pairs_on(pair_kernels, monkeypatch):
    """Every direction-bb search uses the crossing pairs, whatever its dimension."""
    from oraclepriv.solvers.combinatorial import direction_compiled

    monkeypatch.setattr(direction_compiled, "mode", "on")


def pair_violations(X, y, w, seed: int, kernels, tolerance_shift: float = 0.0) -> list[str]:
    """``kernel_violations`` with the boxes' bounds lifted by crossing pairs (``tolerance_shift`` is added to every
    group's tolerance in the pairs' test only: a large negative shift accepts pairs that do not cross)."""
    groups = WhitenedGroups.build(X, y, w)
    with_pairs = groups.with_crossing_pairs(kernels)
    if with_pairs.pairs is None:
        return []
    if tolerance_shift:
        from dataclasses import replace

        with_pairs = replace(
            with_pairs, pairs=replace(with_pairs.pairs, tolerance=with_pairs.pairs.tolerance + tolerance_shift)
        )
    rng = np.random.default_rng(seed)
    points = _group_points(groups, X)
    lower, upper = random_boxes(rng, groups.d, 8)
    plain = box_bounds(groups, lower, upper) - groups.summation_slack()
    bounds = box_bounds(with_pairs, lower, upper) - with_pairs.summation_slack()
    out = []
    for b in range(len(bounds)):
        if bounds[b] < plain[b] - with_pairs.summation_slack():
            out.append(f"box {b}: the pairs lowered the bound ({bounds[b]!r} < {plain[b]!r})")
        corners = [np.where(np.array(bits), upper[b], lower[b]) for bits in np.ndindex(*(2,) * groups.d)]
        inside = [rng.uniform(lower[b], upper[b]) for _ in range(6)]
        for v in [*corners, (lower[b] + upper[b]) / 2, *inside]:
            best = exact_best_loss(groups, exact_projections(groups, points, v))
            if best < bounds[b]:
                out.append(f"box {b}: normal {v.tolist()} has loss {best!r} < bound {bounds[b]!r}")
    return out


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("kind", ["gaussian", "grid"])
def test_crossing_pairs_bound_is_below_every_halfspace_in_the_box_and_above_the_plain_bound(kind, seed, pair_kernels):
    X, y, w = _kernel_data(kind, seed)
    assert pair_violations(X, y, w, seed, pair_kernels) == []


@pytest.mark.parametrize("signed", [False, True], ids=["unit", "laplace"])
def test_pairs_kernel_without_pairs_gives_the_numpy_bounds_and_windows(signed, pair_kernels):
    """The compiled kernel's interval ends and sweep against numpy's (an independent implementation): with the
    matching switched off (``most`` = 0) the bounds agree within the summation slack and the windows up to the
    rounding of the interval ends, down a bisection with inherited windows and a falling threshold."""
    from dataclasses import replace

    rng = np.random.default_rng(12 + signed)
    X = rng.normal(size=(90, 4))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    y[rng.random(90) < 0.15] ^= 1
    w = np.where(np.arange(90) < 20, rng.laplace(0, 20, 90), 1.0) if signed else np.ones(90)
    y = np.where(w < 0, 1 - y, y)
    groups = WhitenedGroups.build(X, y, np.abs(w))
    paired = groups.with_crossing_pairs(pair_kernels)
    unmatched = replace(paired, pairs=replace(paired.pairs, most=0))
    d = groups.d
    lower, upper = -np.ones((2 * d, d)), np.ones((2 * d, d))
    for k in range(d):
        lower[2 * k, k] = upper[2 * k, k] = 1.0
        lower[2 * k + 1, k] = upper[2 * k + 1, k] = -1.0
    threshold, window, narrowed, lifted = float(np.abs(w).sum()) / 4, None, 0, 0
    for _ in range(9):
        bounds, windows = region_lower_bounds(groups, lower, upper, window, threshold)
        kernel_bounds, kernel_windows = region_lower_bounds(unmatched, lower, upper, window, threshold)
        np.testing.assert_allclose(kernel_bounds, bounds, rtol=0, atol=groups.summation_slack())
        for field in ("lo", "hi", "floor"):
            np.testing.assert_allclose(getattr(kernel_windows, field), getattr(windows, field), rtol=1e-12, atol=1e-12)
        narrowed += int(np.sum(np.isfinite(windows.lo) | np.isfinite(windows.hi)))
        paired_bounds, _ = region_lower_bounds(paired, lower, upper, window, threshold)
        lifted += int(np.sum(paired_bounds > bounds + paired.summation_slack()))
        keep = np.argsort(bounds)[:40]
        lower, upper, window = bisect_widest(lower[keep], upper[keep], windows.take(keep))
        threshold *= 0.97
    assert narrowed, "no window ever excluded an offset: the test did not exercise the windows"
    assert lifted, "the pairs never lifted a bound: the data did not exercise them"


def _reference_paired_bounds(groups: WhitenedGroups, lower, upper, window, threshold: float):
    """The bounds and windows of boxes with crossing pairs, by the rules the compiled kernel implements
    (``direction_kernels``), written again in plain Python, box by box: the independent check of the kernel."""
    pairs, events = groups.pairs, groups.events
    B, d = lower.shape
    window = Window.everything(B) if window is None else window
    centre_radius = np.concatenate([lower / 2 + upper / 2, (upper - lower) / 2 + 4 * np.finfo(float).eps], axis=1)
    bounds, new_lo, new_hi = np.empty(B), np.empty(B), np.empty(B)
    for b in range(B):
        lo_w, hi_w = window.lo[b], window.hi[b]
        ends = centre_radius[b] @ events.stacked + events.offset
        others = centre_radius[b] @ pairs.other_stacked + pairs.other_offset
        found = list(zip(ends, events.step))
        open_minus = [j for j in pairs.minus if ends[j] < hi_w and others[j] > lo_w]
        for i in pairs.plus:
            if len(found) - len(ends) == 2 * pairs.most or not open_minus:
                break
            hi_i, lo_i = ends[i], others[i]
            if not (lo_i < hi_w and hi_i > lo_w):
                continue
            for j in open_minus:
                lo_j, hi_j = ends[j], others[j]
                if not lo_j < hi_i or lo_i + hi_i > lo_j + hi_j:
                    continue
                width_i = (hi_i - lo_i) / 2 - pairs.tolerance[i]
                width_j = (hi_j - lo_j) / 2 - pairs.tolerance[j]
                if ((lo_i + hi_i) - (lo_j + hi_j)) / 2 + abs(width_i - width_j) + pairs.tolerance[i] + pairs.tolerance[
                    j
                ] > 0:
                    continue
                delta = pairs.points[i] - pairs.points[j]
                s = sum(centre_radius[b, q] * delta[q] + centre_radius[b, d + q] * abs(delta[q]) for q in range(d))
                if s + pairs.tolerance[i] + pairs.tolerance[j] + pairs.pair_error * np.abs(delta).sum() <= 0:
                    p = min(pairs.excess[i], pairs.excess[j])
                    found += [(lo_j, p), (hi_i, -p)]
                    open_minus.remove(j)
                    break
        start = base = float(groups.w_neg.sum()) + sum(step for end, step in found if end <= lo_w)
        inside = sorted((end, step) for end, step in found if lo_w < end < hi_w)
        values = []  # (end, the cost just above it), after the last of equal ends
        for k, (end, step) in enumerate(inside):
            base += step
            if k + 1 == len(inside) or inside[k + 1][0] != end:
                values.append((end, base))
        bounds[b] = min([start, window.floor[b]] + [v for _, v in values])
        low = [k for k, (_, v) in enumerate(values) if v < threshold]
        kept = start < threshold
        new_lo[b], new_hi[b] = (lo_w, hi_w) if kept else (np.inf, -np.inf)
        if low:
            new_lo[b] = min(new_lo[b], values[low[0]][0])
            new_hi[b] = values[low[-1] + 1][0] if low[-1] + 1 < len(values) else hi_w
        elif kept and inside:
            new_hi[b] = inside[0][0]
    return bounds, Window(new_lo, new_hi, np.minimum(window.floor, threshold))


@pytest.mark.parametrize("kind", ["gaussian", "grid"])
def test_pairs_kernel_gives_the_bounds_and_windows_of_its_rules_written_in_python(kind, pair_kernels):
    """The compiled kernel with its matching on, against the same rules written box by box in Python, down a
    bisection with inherited windows and a falling threshold (RRSPM-like heavy signed weights: ties between a pair's
    events and its groups' own events are the rule)."""
    rng = np.random.default_rng(5)
    n = 40
    X = rng.normal(size=(n, 3)) if kind == "gaussian" else rng.integers(-2, 3, size=(n, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    y[rng.random(n) < 0.3] ^= 1
    w = np.where(np.arange(n) < 8, rng.laplace(0, 6, n), 1.0)
    y = np.where(w < 0, 1 - y, y)
    groups = WhitenedGroups.build(X, y, np.abs(w)).with_crossing_pairs(pair_kernels)
    d = groups.d
    lower, upper = -np.ones((2 * d, d)), np.ones((2 * d, d))
    for k in range(d):
        lower[2 * k, k] = upper[2 * k, k] = 1.0
        lower[2 * k + 1, k] = upper[2 * k + 1, k] = -1.0
    threshold, window, matched = float(np.abs(w).sum()) / 3, None, 0
    for _ in range(7):
        bounds, windows = region_lower_bounds(groups, lower, upper, window, threshold)
        expected, expected_windows = _reference_paired_bounds(groups, lower, upper, window, threshold)
        np.testing.assert_allclose(bounds, expected, rtol=0, atol=groups.summation_slack())
        for field in ("lo", "hi", "floor"):
            np.testing.assert_allclose(
                getattr(windows, field), getattr(expected_windows, field), rtol=1e-12, atol=1e-12
            )
        plain, _ = region_lower_bounds(replace_pairs(groups), lower, upper, window, threshold)
        matched += int(np.sum(bounds > plain + groups.summation_slack()))
        keep = np.argsort(bounds)[:24]
        lower, upper, window = bisect_widest(lower[keep], upper[keep], windows.take(keep))
        threshold *= 0.95
    assert matched, "no pair ever lifted a bound: the test did not exercise the matching"


def replace_pairs(groups: WhitenedGroups) -> WhitenedGroups:
    """The same groups without crossing pairs."""
    from dataclasses import replace

    return replace(groups, pairs=None)


def test_crossing_pairs_check_catches_pairs_that_do_not_cross(pair_kernels):
    """The check above has power: pairs accepted without crossing lift some bound above a real halfspace's loss."""
    found = [v for seed in range(2) for v in pair_violations(*_kernel_data("gaussian", seed), seed, pair_kernels, -1e6)]
    assert found, "pairs accepted without the crossing test went unnoticed"


@pytest.mark.parametrize(
    "seed, n, d, weights",
    [(1, 30, 4, "unit"), (2, 30, 5, "signed_real"), (5, 28, 7, "real")],
)
def test_with_crossing_pairs_matches_scip_bc(seed, n, d, weights, pairs_on):
    rng = np.random.default_rng(seed)
    X, y = noisy_halfspace(rng, n, d)
    w = WEIGHTS[weights](rng, n)
    res = solve(X, y, w, fallback="none")
    assert res.details["crossing_pairs"].startswith("crossing pairs"), res.details["crossing_pairs"]
    check_answer(res, reference(X, y, w, "scip-bc"), certified=True)


@pytest.mark.parametrize("kind", ["conflicting_duplicates", "grid"])
def test_with_crossing_pairs_matches_brute_force_on_tiny_instances(kind, pairs_on):
    for seed in range(3):
        rng = np.random.default_rng(3000 + seed)
        n, d = int(rng.integers(2, 9)), int(rng.integers(2, 5))
        X, y, w, general, label = instance(kind, seed, n, d)
        check_both(X, y, w, brute_halfspace(X, y, w), general, label, fallbacks=("auto",))


def test_crossing_pairs_are_chosen_by_dimension_and_switch(pair_kernels, monkeypatch):
    from oraclepriv.solvers.combinatorial import direction_compiled

    rng = np.random.default_rng(0)
    X, y = noisy_halfspace(rng, 24, 3)
    assert "d < 6" in solve(X, y, None).details["crossing_pairs"]
    X7, y7 = noisy_halfspace(rng, 24, 7)
    assert solve(X7, y7, None).details["crossing_pairs"] == "crossing pairs"  # the kernel is in this process
    assert "crossing_pairs=False" in solve(X7, y7, None, crossing_pairs=False).details["crossing_pairs"]
    monkeypatch.setattr(direction_compiled, "mode", "off")
    assert "=0" in solve(X7, y7, None).details["crossing_pairs"]
    monkeypatch.setattr(direction_compiled, "mode", "sometimes")
    with pytest.raises(ValueError, match="direction_compiled.mode"):
        solve(X7, y7, None)


CTRL_C_IN_THE_KERNEL = """
import os, signal, sys, threading
from oraclepriv import make_oracle
from oraclepriv.bench.learner_calls import learner_calls
from oraclepriv.solvers.combinatorial import direction_compiled

direction_compiled.warm()
call = learner_calls("rrspm", 8, 200, 16, 1)  # RRSPM's private call in d = 8: seconds, most of them in the kernel
signal.signal(signal.SIGINT, signal.default_int_handler)
for delay in (0.4, 0.7, 1.0):
    threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
    try:
        make_oracle("halfspace", backend="direction-bb", time_limit=60).solve(call.X, call.y, call.w)
        print("finished")
    except KeyboardInterrupt:
        print("KeyboardInterrupt")
    except BaseException as error:
        print(type(error).__name__)
"""


def test_a_ctrl_c_while_the_pairs_kernel_runs_is_a_keyboard_interrupt(pair_kernels):
    """A Ctrl-C that lands while the compiled kernel runs comes out of numba as a chain of SystemErrors ending in the
    KeyboardInterrupt (the dispatcher calls back into Python during the call); the search raises the interrupt
    itself, so that the command line exits with 130 and a learner's fit stops as on any other Ctrl-C. Three
    interrupts of RRSPM's d = 8 private call, most of whose time is spent in the kernel, in a fresh process."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", CTRL_C_IN_THE_KERNEL], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["KeyboardInterrupt"] * 3, (done.stdout, done.stderr[-2000:])
