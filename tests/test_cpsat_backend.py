"""The ``cpsat`` backend: what is scaled, and what ``certified`` means.

* thresholds/stumps: exact (integer staircase model) -> certified objective == ``sweep``;
* halfspaces on dyadic-grid data: exact integer model with the Hadamard coefficient bound K ->
  certified objective == ``enumerate`` / brute force; a negative control with a too-small K shows
  the test would catch an invalid bound;
* real-valued halfspace data: discretized heuristic, bound = conflict bound only (honest);
* non-lattice weights: the rounding error is subtracted from the bound (property-tested);
* errors: bad options, ``halfspace_model='exact'`` on real data, ortools missing.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from brute_force import brute_halfspace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.base import SolverNotInstalledError, UnsupportedProblemError
from oraclepriv.solvers.mip.cpsat import dyadic_grid, exact_coefficient_bound, integer_costs
from strategies import grid_points, instances, points, real_points

from oraclepriv import make_oracle

SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def _tol(w: np.ndarray) -> float:
    return 1e-7 * max(1.0, float(np.abs(w).sum()))


def cpsat(cls: str, **options):
    return make_oracle(cls, backend="cpsat", threads=options.pop("threads", 2), **options)


# -- thresholds and stumps -----------------------------------------------------------------------


@SETTINGS
@given(data=st.data(), cls=st.sampled_from(["threshold", "stump"]), d=st.integers(1, 3))
def test_stumps_and_thresholds_match_sweep(data, cls, d):
    d = 1 if cls == "threshold" else d
    X, y, w = data.draw(instances(st.one_of(real_points(d, max_n=12), grid_points(d, max_n=12))))
    res = cpsat(cls).solve(X, y, w)
    ref = make_oracle(cls, backend="sweep").solve(X, y, w)
    assert res.status == "optimal"
    assert res.bound <= ref.objective + _tol(w)
    assert res.certified, f"objective {res.objective} bound {res.bound} ({res.details})"
    assert res.objective == pytest.approx(ref.objective, abs=_tol(w))


# -- halfspaces: exact on dyadic grids ------------------------------------------------------------


@SETTINGS
@given(data=st.data(), d=st.integers(1, 3))
@pytest.mark.slow
def test_halfspaces_on_grid_data_match_enumerate(data, d):
    X, y, w = data.draw(instances(points(d, max_n=8, grid_only=True)))
    res = cpsat("halfspace").solve(X, y, w)
    ref = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
    assert ref.certified
    if not np.all(X == X[0]):
        assert res.details["halfspace_model"] == "exact"
    assert res.bound <= ref.objective + _tol(w)
    assert res.certified, f"objective {res.objective} bound {res.bound}"
    assert res.objective == pytest.approx(ref.objective, abs=_tol(w))


def test_dyadic_fractions_are_a_grid_and_the_halfspace_evaluates_exactly():
    rng = np.random.default_rng(2)
    X = rng.integers(-8, 9, size=(8, 2)) / np.array([4.0, 0.5]) + np.array([100.0, -3.0])
    y = rng.integers(0, 2, size=8)
    w = rng.integers(-3, 4, size=8).astype(float)
    grid = dyadic_grid(X)
    assert grid is not None and list(grid.bits) == [2, 0]
    res = cpsat("halfspace").solve(X, y, w)
    assert res.details["halfspace_model"] == "exact" and res.certified
    assert res.objective == pytest.approx(brute_halfspace(X, y, w), abs=1e-9)
    scores = X @ np.asarray(res.hypothesis.w) + res.hypothesis.b
    assert np.all(np.abs(scores) >= 0.5 / 4.0 - 1e-12), "training points must sit off the boundary"


def test_too_small_coefficient_bound_is_caught(monkeypatch):
    """Negative control: with |w|, |b| <= 1 instead of the Hadamard bound, the integer model misses
    the optimal labeling and 'certifies' a worse answer; the comparison with enumerate catches it."""
    import oraclepriv.solvers.mip.cpsat as module

    X = np.array([[0.0, 0.0], [2.0, 3.0], [-3.0, -2.0], [2.0, 3.0], [-2.0, -1.0], [3.0, -1.0], [-2.0, 2.0]])
    y = np.array([0, 0, 1, 1, 0, 0, 1])
    truth = make_oracle("halfspace", backend="enumerate").solve(X, y).objective
    assert cpsat("halfspace").solve(X, y).objective == truth == 1.0
    monkeypatch.setattr(module, "exact_coefficient_bound", lambda Xint, active: 1)
    broken = cpsat("halfspace").solve(X, y)
    assert broken.certified and broken.objective == 2.0 != truth


def test_coefficient_bound_formula():
    Xint = [[3, -3], [0, 1], [-2, 2]]
    # rho^2 = 9 + 9 + 1 = 19, K >= 3 * 19 = 57
    assert exact_coefficient_bound(Xint, np.array([True, True])) >= 57
    assert exact_coefficient_bound(Xint, np.array([True, False])) >= 2 * np.sqrt(10)
    assert exact_coefficient_bound(Xint, np.array([False, False])) == 1


# -- halfspaces on real data: discretized, honest -------------------------------------------------


@SETTINGS
@given(data=st.data(), d=st.integers(1, 3))
def test_discretized_halfspaces_are_honest(data, d):
    X, y, w = data.draw(instances(real_points(d, max_n=7)))
    res = cpsat("halfspace").solve(X, y, w)
    truth = brute_halfspace(X, y, w)
    assert res.bound <= truth + _tol(w)
    assert res.objective >= truth - _tol(w)
    assert res.objective == pytest.approx(res.hypothesis.loss(X, y, w), abs=1e-12)
    if res.certified:
        assert res.objective == pytest.approx(truth, abs=_tol(w))


def test_discretized_model_certifies_only_through_the_trivial_bound():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)  # separable: objective 0 meets the bound 0
    sep = cpsat("halfspace").solve(X, y)
    assert sep.details["halfspace_model"] == "discretized"
    assert sep.objective == 0.0 and sep.bound == 0.0 and sep.certified
    y[:3] = 1 - y[:3]  # noisy: the optimum is > 0 but nothing beyond 0 is proved
    noisy = cpsat("halfspace").solve(X, y)
    assert noisy.bound == 0.0 and noisy.objective > 0 and not noisy.certified
    # CP-SAT solved the *discretized* points to optimality, which proves nothing about these ones:
    # the status is "feasible", not "optimal"
    assert noisy.details["cpsat_status"] == "OPTIMAL" and noisy.status == "feasible"
    assert sep.status == "optimal"  # met its (trivial) bound: proved


# -- weight scaling --------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1e-6, 1.0, 1e6]), m=st.integers(1, 40))
def test_integer_costs_bound_the_real_objective(seed, scale, m):
    rng = np.random.default_rng(seed)
    w = np.abs(rng.laplace(scale=scale, size=m))
    cost = w * rng.choice([-1.0, 1.0], size=m)
    ic = integer_costs(cost, w)
    # large Laplace draws can be exact multiples of a power of two: then the scaling is exact
    assert (ic.lattice is not None and ic.error == 0.0) or ic.error <= 1e-10 * max(1.0, w.sum()) + 1e-14 * np.abs(
        cost
    ).sum()
    for _ in range(20):
        x = rng.integers(0, 2, size=m)
        assert float(cost @ x) >= float(np.dot(ic.values, x)) / ic.scale - ic.error


def test_lattice_weights_are_scaled_exactly():
    w = np.array([0.25, 1.5, 3.0, 0.0])
    ic = integer_costs(np.array([0.25, -1.5, 3.0, 0.0]), w)
    assert ic.lattice == 0.25 and ic.error == 0.0 and ic.values == [1, -6, 12, 0] and ic.scale == 4.0


# -- time limit, negative control, errors ----------------------------------------------------------


def test_time_limit_is_reported_and_not_certified():
    rng = np.random.default_rng(0)
    X = rng.integers(-20, 21, size=(300, 4)).astype(float)
    y = (X @ rng.normal(size=4) + 10 * rng.normal(size=300) > 0).astype(int)
    res = cpsat("halfspace", time_limit=0.2).solve(X, y)
    assert res.details["halfspace_model"] == "exact"
    assert res.status == "time_limit" and not res.certified
    assert res.objective == res.hypothesis.loss(X, y)


def test_a_lying_solver_cannot_certify(monkeypatch):
    """The hypothesis is decoded from (w, b) and re-scored; z values are never trusted."""
    from oraclepriv.solvers.mip.cpsat import CpSatBackend

    real_run = CpSatBackend._run

    def lying_run(self, model, variables, ic, deadline):
        status, solver, has_solution, _, details = real_run(self, model, variables, ic, deadline)

        class Liar:
            def Value(self, v):  # noqa: N802 - CP-SAT's name
                return 0  # w = 0, b = 0: predicts 1 everywhere, z = 0 ("all correct")

        return "optimal", Liar(), True, 0, details

    monkeypatch.setattr(CpSatBackend, "_run", lying_run)
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1, 0, 1, 0])
    res = cpsat("halfspace").solve(X, y, np.array([1.0, 1.0, 1.0, 3.0]))
    assert res.bound == 0.0 and res.objective >= 1.0 and not res.certified


@pytest.mark.parametrize(
    "options,match",
    [
        ({"bogus": 1}, "unknown option"),
        ({"halfspace_model": "float"}, "halfspace_model must be one of"),
        ({"resolution_bits": 0}, r"resolution_bits must be an integer in \[1, 20\]"),
        ({"resolution_bits": 2.5}, "resolution_bits must be an integer"),
        ({"threads": 0}, "threads must be a positive integer"),
        ({"random_seed": -1}, "random_seed must be an integer"),
        ({"time_limit": -1}, "time_limit"),
    ],
)
def test_bad_options_are_rejected_by_name(options, match):
    with pytest.raises(ValueError, match=match):
        make_oracle("halfspace", backend="cpsat", **options)


def test_exact_model_on_real_valued_data_is_unsupported():
    X = np.array([[0.1, 0.2], [0.3, 0.7], [0.9, 0.05]])  # 0.1 is not a dyadic fraction
    with pytest.raises(UnsupportedProblemError, match="dyadic grid"):
        make_oracle("halfspace", backend="cpsat", halfspace_model="exact").solve(X, [0, 1, 0])


def test_missing_ortools_gives_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ortools.sat.python.cp_model", None)
    with pytest.raises(SolverNotInstalledError, match=r"backend 'cpsat' needs the ortools package.*pip install"):
        make_oracle("stump", backend="cpsat")


@pytest.mark.parametrize(
    "weights", [[0, 0, 0, 0, 0, 2.2250738585072014e-308], [1e-300, 0, 0, 0, 0, 1e-310], [1e300, 1, 0, 0, 0, 1e300]]
)
def test_extreme_weights_scale_without_overflow(weights):
    """Regression (found by the property test): a subnormal total weight overflowed the integer scaling."""
    X = np.array([[0.0], [0.0], [0.0], [0.0], [0.0], [1.0]])
    res = make_oracle("halfspace", backend="cpsat").solve(X, np.zeros(6, dtype=int), np.asarray(weights, dtype=float))
    assert res.objective == 0.0 and res.certified
