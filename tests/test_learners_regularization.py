"""Regularization (Algorithm 3) on bounded linear predictors: certified convex oracle, 2 calls, calibration."""

import json
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from oraclepriv.solvers.convex_linear import ConvexLinearBackend

from oraclepriv.convex_oracle import make_convex_oracle
from oraclepriv.learners import Regularization, UncertifiedOracleError
from oraclepriv.learners.regularization import regularization_parameters


def l1_data(n, m, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    X /= np.maximum(1, np.abs(X).sum(1, keepdims=True))
    Z = rng.uniform(-1, 1, (m, d))
    Z /= np.maximum(1, np.abs(Z).sum(1, keepdims=True))
    y = (X @ np.linspace(1, -0.5, d) > 0).astype(np.int8)
    return X, y, Z


def test_two_calls_certified_and_json():
    X, y, Z = l1_data(60, 10, 2)
    clf = Regularization(epsilon=1.0, delta=1e-3, eta=0.1, random_state=0).fit(X, y, X_public=Z)
    assert [r["step"] for r in clf.ledger_.records] == ["regularized-erm", "perturb"]
    assert clf.ledger_.records[0]["certified"] and clf.ledger_.records[0]["gap"] <= 1e-6
    assert clf.ledger_.records[1]["n"] == len(Z)
    assert np.all(np.abs(clf.hypothesis_.w) <= 1)
    assert clf.stability_radius_ == pytest.approx(2 / math.sqrt(6.0) + 2 * math.sqrt(1e-6 / 6.0))
    json.dumps(clf.summary())
    assert clf.predict(X).dtype == np.int8


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), eta=st.floats(0.05, 20))
@example(seed=232, eta=5.0)  # an earlier SLSQP backend stopped at gap 3e-6 > opt_tol here (found by a fresh-clone run)
def test_convex_oracle_matches_grid_search_and_bound_is_valid(seed, eta):
    X, y, Z = l1_data(15, 4, 1, seed)
    y = 2.0 * y - 1
    S = Z.T @ Z / len(Z)
    result = make_convex_oracle().regularized_erm(X, y, Z, eta, caller="t", step="s")
    grid = np.linspace(-1, 1, 2001)
    best = min(ConvexLinearBackend.objective(np.array([g]), X, y, S, eta) for g in grid)
    assert result.objective <= best + 1e-6
    assert result.bound <= best + 1e-9  # a valid lower bound on the true optimum
    assert result.certified
    # the Lagrangian bound holds at any point, not only at the optimum
    for g in (-1.0, -0.3, 0.4, 1.0):
        assert ConvexLinearBackend.lower_bound(np.array([g]), X, y, S, eta) <= best + 1e-9


def test_uncertified_solution_raises(monkeypatch):
    X, y, Z = l1_data(30, 5, 2)
    # every bound the backend computes goes through the Lagrangian bound: make it useless
    monkeypatch.setattr(ConvexLinearBackend, "lagrangian_bound", staticmethod(lambda *a: -1e9))
    with pytest.raises(UncertifiedOracleError, match="regularized-erm"):
        Regularization(epsilon=1.0, delta=1e-3).fit(X, y, X_public=Z)
    clf = Regularization(epsilon=1.0, delta=1e-3, on_uncertified="flag").fit(X, y, X_public=Z)
    assert clf.diagnostics_["proof_applies"] is False


def test_laplace_calibration():
    X, y, Z = l1_data(40, 6, 2)
    clf = Regularization(epsilon=2.0, delta=0.0, noise="laplace", eta=0.5, random_state=0).fit(X, y, X_public=Z)
    rho = clf.stability_radius_
    assert clf.gamma_ == pytest.approx(6 * rho / 2.0)
    paper = Regularization(epsilon=2.0, delta=0.0, noise="laplace", eta=0.5, laplace_factor="paper").fit(
        X, y, X_public=Z
    )
    assert paper.gamma_ == pytest.approx(6**1.5 * rho / 2.0)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"hypothesis_class": "halfspace"}, "hypothesis_class"),
        ({"noise": "laplace"}, "delta must be 0"),
        ({"delta": 0.0}, "delta must be > 0"),
        ({"eta": 0}, "eta"),
        ({"backend": "highs"}, "backend"),
        ({"laplace_factor": "x", "noise": "laplace", "delta": 0.0}, "laplace_factor"),
    ],
)
def test_bad_parameters(params, match):
    X, y, Z = l1_data(20, 4, 2)
    kw = {"epsilon": 1.0, "delta": 1e-3, **params}
    with pytest.raises(ValueError, match=match):
        Regularization(**kw).fit(X, y, X_public=Z)


def test_unknown_backend_is_refused_naming_the_value():
    X, y, Z = l1_data(20, 4, 2)
    with pytest.raises(ValueError, match=r"backend must be None or one of \['highs-qp\+kkt'\].*got 'highs'") as error:
        Regularization(epsilon=1.0, delta=1e-3, backend="highs").fit(X, y, X_public=Z)
    assert "deprecated alias" in str(error.value)


def test_deprecated_scipy_backend_warns_and_fits_the_same_as_highs_qp_kkt():
    """backend="scipy" (the key from the SLSQP days) is an alias of "highs-qp+kkt" for one release: it warns
    naming the new value, runs the same backend and releases exactly what the new key releases."""
    X, y, Z = l1_data(40, 8, 3, seed=7)
    new = Regularization(epsilon=1.0, delta=1e-3, backend="highs-qp+kkt", random_state=3).fit(X, y, X_public=Z)
    with pytest.warns(FutureWarning, match=r"backend='scipy' is deprecated.*use backend='highs-qp\+kkt'"):
        old = Regularization(epsilon=1.0, delta=1e-3, backend="scipy", random_state=3).fit(X, y, X_public=Z)
    default = Regularization(epsilon=1.0, delta=1e-3, random_state=3).fit(X, y, X_public=Z)
    for clf in (old, default):
        assert clf.hypothesis_ == new.hypothesis_
        assert np.array_equal(clf.public_targets_, new.public_targets_)
        assert clf.gamma_ == new.gamma_
        assert [r["backend"] for r in clf.ledger_.records] == [r["backend"] for r in new.ledger_.records]
    assert new.ledger_.records[0]["backend"] == "highs-qp+kkt"
    assert old.release_.to_dict() == new.release_.to_dict()


def test_inputs_must_be_in_the_l1_ball():
    X, y, Z = l1_data(20, 4, 2)
    with pytest.raises(ValueError, match="X_private row 0 has l1 norm"):
        Regularization(epsilon=1.0, delta=1e-3).fit(X * 0 + 0.9, y, X_public=Z)
    with pytest.raises(ValueError, match="X_public row"):
        Regularization(epsilon=1.0, delta=1e-3).fit(X, y, X_public=Z * 0 + 0.6)


def test_from_theory():
    p = regularization_parameters(0.1, 0.05, 0.5, 3)
    assert p["eta"] == pytest.approx(0.1)
    assert p["m"] == math.ceil(0.25 * 3 / (0.25 * 0.01))
    clf = Regularization.from_theory(0.1, 0.05, 0.5, 3, epsilon=1.0, delta=1e-6)
    assert clf.m == p["m"] and clf.eta == p["eta"]
