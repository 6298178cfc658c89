"""The combinatorial-Benders halfspace oracle (``method="cuts"``, the MIP backends' default for
certify="margin-free"), its core cuts, the ``naive-highs`` baseline and the benchmark suite.

Cut validity is checked against brute force: every core the backend adds must be non-separable
(brute-force LP on the core alone), and the misclassified set of *every* brute-force optimal
labeling must hit every core -- a cut that removed an optimal solution fails here. A negative
control feeds the backend a fake (separable) "core" and shows the bound check catches it.
"""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_halfspace, halfspace_realizable, optimal_labelings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.branch_and_cut.cores import CoreStatus, Separator, verify_core
from oraclepriv.solvers.mip.milp import AffineScaling
from strategies import instances, points

from oraclepriv import make_oracle
from oraclepriv.bench.mip_suite import NOISE_RATE, halfspace_instance, halfspace_suite

MIP_BACKENDS = ["highs", "scip"]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def backend_cores(oracle, backend):
    """(groups, cores) the backend holds for the last solved points (group-index tuples)."""
    form = oracle._backends[backend]._hitting.form
    return form.groups, form.cores


# -- exact core verification ----------------------------------------------------------------------


def test_verify_core_accepts_radon_configurations_and_rejects_separable_sets():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [0.5, 0.5], [5.0, 5.0]])
    y = np.array([0, 0, 0, 1, 1])
    assert verify_core(X, y, [0, 1, 2, 3])  # a label-1 point inside a label-0 triangle
    assert not verify_core(X, y, [0, 1, 2, 4])  # the far point is separable from the triangle
    assert not verify_core(X, y, [0, 1, 3])  # a proper subset is separable
    # crossing segments (2 + 2 Radon partition) and opposite-label duplicates
    Xc = np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    assert verify_core(Xc, np.array([1, 1, 0, 0]), [0, 1, 2, 3])
    assert verify_core(np.array([[0.3, 0.7], [0.3, 0.7]]), np.array([1, 0]), [0, 1])
    # collinear 1, 0, 1 is a core; 1, 1, 0 is not
    Xl = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    assert verify_core(Xl, np.array([1, 0, 1]), [0, 1, 2])
    assert not verify_core(Xl, np.array([1, 1, 0]), [0, 1, 2])


def test_verify_core_is_exact_at_float_resolution():
    """A label-1 point one ulp outside a label-0 segment's line is separable: floats would blur it."""
    eps = np.nextafter(0.5, 1.0) - 0.5
    X = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5 + eps]])
    assert not verify_core(X, np.array([0, 0, 1]), [0, 1, 2])
    X[2, 1] = 0.5
    assert verify_core(X, np.array([0, 0, 1]), [0, 1, 2])


@SETTINGS
@given(data=st.data(), d=st.integers(1, 3))
def test_separator_cores_are_non_separable_and_separable_verdicts_are_right(data, d):
    X = data.draw(points(d, min_n=2, max_n=8))
    y = data.draw(st.lists(st.integers(0, 1), min_size=len(X), max_size=len(X))).copy()
    y = np.asarray(y, dtype=np.int8)
    import highspy

    sep = Separator(highspy, AffineScaling.fit(X).transform(X), y, X)
    keep = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(X), max_size=len(X))), dtype=bool)
    status, S = sep.find_core(keep)
    sub = np.flatnonzero(keep)
    if status == CoreStatus.SEPARABLE:
        assert halfspace_realizable(X[sub], y[sub])
    elif status == CoreStatus.CORE:
        assert set(S) <= set(sub)
        assert not halfspace_realizable(X[S], y[S]), "a verified core must be non-separable"


# -- the cuts backend against brute force ---------------------------------------------------------


@pytest.mark.parametrize("backend", MIP_BACKENDS)
@SETTINGS
@given(data=st.data(), d=st.integers(1, 3))
def test_cuts_backend_is_exact_and_its_cuts_keep_every_optimal_labeling(backend, data, d):
    """Every point flavour of ``strategies.points`` (generic reals, grids with duplicates,
    collinear/coplanar points, all-equal points) with signed weights: the cuts method is
    documented exact on all data, so with no time limit it must certify and hit brute force."""
    X, y, w = data.draw(instances(points(d, min_n=1, max_n=7)))
    oracle = make_oracle("halfspace", backend=backend, method="cuts")
    res = oracle.solve(X, y, w)
    tol = 1e-7 * max(1.0, float(np.abs(w).sum()))
    truth, optima = optimal_labelings(X, y, w, tol)
    assert res.bound <= truth + tol, "the bound must be a lower bound over all halfspaces"
    assert res.certified and res.status == "optimal", f"objective {res.objective}, bound {res.bound}"
    assert res.objective == pytest.approx(truth, abs=tol)
    if oracle._backends[backend]._hitting.form is None:
        return  # all points identical: answered without a master
    groups, cores = backend_cores(oracle, backend)
    yr = np.where(w < 0, 1 - y, y)  # the reduced labels the cores are built on
    for core in cores:
        members = np.isin(groups.group_of, core)
        Xc, yc = groups.X[list(core)], groups.y[list(core)]
        assert not halfspace_realizable(Xc, yc), f"core {core} is separable: an invalid cut"
        for labeling in optima:
            wrong = labeling != yr  # reduced problem: a point is 'wrong' iff it disagrees with yr
            assert wrong[members].any(), f"core {core} cuts off an optimal labeling"


@pytest.mark.parametrize("backend", MIP_BACKENDS)
def test_cuts_certify_general_position_instances(backend):
    rng = np.random.default_rng(4)
    for n, d in [(30, 2), (40, 3), (30, 4)]:
        X = rng.normal(size=(n, d))
        y = (X @ rng.normal(size=d) + 0.8 * rng.normal(size=n) > 0).astype(int)
        w = rng.integers(-3, 4, size=n).astype(float)
        res = make_oracle("halfspace", backend=backend).solve(X, y, w)
        assert res.certified and res.status == "optimal"
        assert res.details["method"] == "cuts" and res.details["cores_unverified"] == 0
        if d <= 3:
            ref = make_oracle("halfspace", backend="enumerate").solve(X, y, w)
            assert res.objective == pytest.approx(ref.objective, abs=1e-9 * np.abs(w).sum())


def test_fake_core_is_caught_by_the_bound_check(monkeypatch):
    """Negative control: a separator that accepts a separable set as a 'core' adds an invalid cut;
    the bound then exceeds the brute-force optimum, which the exactness test above asserts against."""
    import oraclepriv.solvers.branch_and_cut.cores as cores

    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])  # separable: optimum 0
    real = cores.Separator.find_core

    def lying(self, keep):
        status, S = real(self, keep)
        if status == cores.CoreStatus.SEPARABLE and keep[2] and keep[3]:
            return cores.CoreStatus.CORE, np.array([2, 3])  # 'no halfspace gets both 1s right'
        return status, S

    monkeypatch.setattr(cores.Separator, "find_core", lying)
    res = make_oracle("halfspace", backend="highs").solve(X, y)
    assert res.bound > brute_halfspace(X, y, np.ones(4))  # the audit's assertion would fail


def test_resolve_with_new_weights_reuses_the_core_pool():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))  # n = 40: 63 cores on the first solve, 80 after the re-solve, 0.2 s
    y = (X[:, 0] + 0.7 * rng.normal(size=40) > 0).astype(int)
    w1 = rng.exponential(size=40)
    w2 = rng.exponential(size=40)
    oracle = make_oracle("halfspace", backend="highs", method="cuts")
    first = oracle.solve(X, y, w1)
    again = oracle.solve(X, y, w2)
    fresh = make_oracle("halfspace", backend="highs", method="cuts").solve(X, y, w2)
    assert first.details["cuts_model_reused"] is False and again.details["cuts_model_reused"] is True
    assert again.details["cores_total"] >= first.details["cores_total"]
    assert again.certified and fresh.certified
    assert again.objective == pytest.approx(fresh.objective, abs=1e-9 * w2.sum())


def test_auto_method_picks_cuts_for_lattice_weights_and_bigm_otherwise():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    oracle = make_oracle("halfspace", backend="highs", method="auto")
    lattice = oracle.solve(X, y, rng.integers(-3, 4, size=30).astype(float))
    real = oracle.solve(X, y, rng.laplace(size=30))
    assert lattice.details["method_used"] == "cuts" and real.details["method_used"] == "bigm"
    assert lattice.certified and real.certified


def test_bad_method_is_rejected():
    with pytest.raises(ValueError, match="method must be one of"):
        make_oracle("halfspace", backend="highs", method="magic")


# -- naive baseline ---------------------------------------------------------------------------------


def test_naive_baseline_certifies_only_its_restricted_class():
    """Two points 0.001 apart near x = 1000 need |b| ~ 1000 |w| with w >= 0.2 for margin 1e-4:
    outside the unit box, so the naive model cannot find the 0-mistake halfspace (and its
    certificate string says its class is restricted); the margin-free default finds it."""
    X = np.array([[1000.0], [1000.001]])
    y = np.array([0, 1])
    res = make_oracle("halfspace", backend="naive-highs").solve(X, y)
    assert res.objective == 1.0
    assert make_oracle("halfspace", backend="highs").solve(X, y).objective == 0.0
    assert make_oracle("halfspace", backend="enumerate").solve(X, y).objective == 0.0
    assert "restricted" in res.details["certificate"] and res.restriction is not None and not res.certified


def test_naive_baseline_matches_enumerate_on_easy_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=40) > 0).astype(int)
    res = make_oracle("halfspace", backend="naive-highs", threads=1).solve(X, y)
    ref = make_oracle("halfspace", backend="enumerate").solve(X, y)
    assert res.meets_bound and not res.certified and res.objective == ref.objective


def test_naive_rejects_other_classes_and_bad_options():
    from oraclepriv.solvers.base import UnsupportedProblemError

    with pytest.raises(UnsupportedProblemError, match="does not support hypothesis class 'stump'"):
        make_oracle("stump", backend="naive-highs").solve(np.zeros((2, 1)), [0, 1])
    with pytest.raises(ValueError, match="unknown option"):
        make_oracle("halfspace", backend="naive-highs", certify="margin")


# -- benchmark suite --------------------------------------------------------------------------------


def test_halfspace_suite_is_deterministic_and_as_documented():
    a = halfspace_suite(ns=(20, 50), ds=(2, 3), seed=1)
    b = halfspace_suite(ns=(20, 50), ds=(2, 3), seed=1)
    assert [x[0] for x in a] == ["sepnoise-n20-d2-s1", "sepnoise-n20-d3-s1", "sepnoise-n50-d2-s1", "sepnoise-n50-d3-s1"]
    for (name, X, y, w), (name2, X2, y2, w2) in zip(a, b):
        assert name == name2 and np.array_equal(X, X2) and np.array_equal(y, y2) and np.array_equal(w, w2)
        n, d = X.shape
        assert y.dtype == np.int8 and set(np.unique(y)) <= {0, 1} and np.all(w == 1.0) and w.shape == (n,)
    # the same (n, d) does not depend on the rest of the suite; another seed gives other data
    name, X, y, _ = halfspace_instance(50, 3, seed=1)
    assert np.array_equal(X, a[3][1]) and not np.array_equal(X, halfspace_instance(50, 3, seed=2)[1])
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        halfspace_instance(0, 2)


def test_halfspace_suite_flips_exactly_the_documented_fraction():
    """Regenerate the clean labels from the same stream and count the flips."""
    n, d, seed = 200, 5, 0
    _, X, y, _ = halfspace_instance(n, d, seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, d]))
    X2 = rng.normal(size=(n, d))
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    clean = (X2 @ u + 0.25 * rng.normal() >= 0).astype(np.int8)
    assert np.array_equal(X, X2)
    assert int((clean != y).sum()) == round(NOISE_RATE * n)
