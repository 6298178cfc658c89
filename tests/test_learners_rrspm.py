"""RRSPM (Algorithm 4): oracle-call accounting, the public-only second call, validation, Gaussian calibration."""

import json
import math

import numpy as np
import pytest

from oraclepriv import Threshold
from oraclepriv.audit.controls import QuantileSplitBackend
from oraclepriv.backends import registered_backend
from oraclepriv.learners import RRSPM, NotFittedError, UncertifiedOracleError
from oraclepriv.learners.rrspm import gaussian_noise_std, log_projection_bound, rrspm_parameters
from oraclepriv.oracle import Oracle


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.random((120, 2))
    y = (X[:, 0] > 0.4).astype(np.int8)
    Z = rng.random((8, 2))
    return X, y, Z


@pytest.fixture
def capture(monkeypatch):
    """Record the inputs and answers of every Oracle.solve call."""
    calls = []
    original = Oracle.solve

    def spy(self, X, y, weights=None, **kw):
        result = original(self, X, y, weights, **kw)
        calls.append({"X": np.array(X), "y": np.array(y), "w": np.array(weights), "result": result, **kw})
        return result

    monkeypatch.setattr(Oracle, "solve", spy)
    return calls


@pytest.mark.parametrize("hypothesis", ["stump", "halfspace"])
def test_two_calls_and_second_sees_only_public_projection(data, capture, hypothesis):
    X, y, Z = data
    clf = RRSPM(epsilon=1.0, hypothesis_class=hypothesis, random_state=3).fit(X, y, X_public=Z)
    assert len(clf.ledger_) == 2
    assert [r["step"] for r in clf.ledger_.records] == ["private-erm", "perturb"]
    assert all(r["caller"] == "RRSPM" and r["certified"] for r in clf.ledger_.records)
    first, second = capture
    assert first["X"].shape[0] == len(X) + len(Z)
    fhat_on_Z = first["result"].hypothesis.predict(Z)
    # the second call's inputs are exactly (Z, fhat(Z)) in the least-squares encoding
    assert np.array_equal(second["X"], Z)
    assert np.array_equal(second["y"], np.zeros(len(Z)))
    assert np.array_equal(second["w"], 1.0 - 2.0 * fhat_on_Z)
    assert np.array_equal(clf.public_projection_, fhat_on_Z)
    assert clf.diagnostics_["projection_agreement"] == 1.0
    assert np.array_equal(clf.predict(Z), fhat_on_Z)
    assert clf.hypothesis_ is second["result"].hypothesis  # the released model is the 2nd answer, not fhat


def test_release_is_a_function_of_public_projection_only(capture):
    """Two private datasets whose fhat differ off Z but agree on Z give the identical output."""
    Z = np.array([[0.0], [3.0]])
    found = 0
    for seed in range(40):
        outs = []
        for label in (1, 0):  # leak scenario: fhat cuts at 0.5 or at 2 (pred at x=1 differs)
            capture.clear()
            clf = RRSPM(epsilon=1.0, hypothesis_class="threshold", random_state=seed)
            clf.fit(np.array([[1.0]]), np.array([label]), X_public=Z, public_labels=np.array([0, 1]))
            outs.append((clf.public_projection_.tolist(), clf.hypothesis_, capture[0]["result"].hypothesis))
        (p1, h1, f1), (p2, h2, f2) = outs
        if p1 == p2 == [0, 1]:
            found += 1
            assert f1.predict(np.array([[1.0]]))[0] != f2.predict(np.array([[1.0]]))[0]  # fhat differs at x = 1
            assert h1 == h2  # ... the released hypothesis does not
    assert found >= 3


def test_release_ignores_fhat_and_the_private_data():
    clf = RRSPM(epsilon=1.0, hypothesis_class="threshold")
    Z = np.arange(4.0)[:, None]
    proj = np.array([0, 0, 1, 1], dtype=np.int8)
    oracle = clf._oracle()
    clf.epsilon_ = 1.0
    X, y = np.array([[1.8]]), np.array([1])
    a = clf._release(oracle, Z, proj, np.random.default_rng(0), fhat=Threshold(1.7), X=X, y=y)
    b = clf._release(oracle, Z, proj, np.random.default_rng(1), fhat=Threshold(2.2), X=X + 5, y=1 - y)
    assert a == b == Threshold(1.5)


def test_laplace_weights_have_scale_2m_over_eps():
    clf = RRSPM(epsilon=0.5)
    clf.epsilon_ = 0.5
    xi = clf._public_weights(np.random.default_rng(0), 10, 1)
    assert xi.shape == (10,)
    big = RRSPM(epsilon=0.5)
    big.epsilon_ = 0.5
    draws = np.concatenate([big._public_weights(np.random.default_rng(s), 10, 1) for s in range(3000)])
    assert np.mean(np.abs(draws)) == pytest.approx(2 * 10 / 0.5, rel=0.03)


def test_gaussian_calibration_solves_the_privacy_loss_equation():
    for eps, delta, m, logn in ((1.0, 1e-5, 10, math.log(11)), (0.3, 1e-8, 50, 40.0)):
        s = gaussian_noise_std(eps, delta, m, logn)
        A = 2 * math.sqrt(m) * math.sqrt(2 * (logn + math.log(1 / delta)))
        assert A / s + 2 * m / s**2 == pytest.approx(eps, rel=1e-9)
    assert log_projection_bound("threshold", 5, 1) == pytest.approx(math.log(6))
    assert log_projection_bound("stump", 2, 3) == pytest.approx(math.log(4))  # capped at 2^m
    assert log_projection_bound("halfspace", 10, 2) == pytest.approx(math.log(1 + 10 + 45 + 120))


def test_gaussian_variant_privacy_record(data):
    X, y, Z = data
    clf = RRSPM(epsilon=1.0, delta=1e-4, noise="gaussian", hypothesis_class="stump", random_state=0).fit(
        X, y, X_public=Z
    )
    assert clf.privacy_["noise"] == "gaussian" and "derived here" in clf.privacy_["calibration_source"]
    assert clf.privacy_["delta"] == 1e-4 and len(clf.ledger_) == 2


def test_fit_is_reproducible_and_summary_is_json(data):
    X, y, Z = data
    a = RRSPM(epsilon=1.0, hypothesis_class="stump", random_state=7).fit(X, y, X_public=Z)
    b = RRSPM(epsilon=1.0, hypothesis_class="stump", random_state=7).fit(X, y, X_public=Z)
    assert a.hypothesis_ == b.hypothesis_
    s = json.loads(json.dumps(a.summary()))
    assert s["privacy"]["oracle_calls_by_design"] == 2 and s["privacy"]["neighbouring"].startswith(
        "replace one private record"
    )
    assert set(s) == {"algorithm", "hypothesis", "privacy", "n_features"}  # the release: nothing else
    assert s["hypothesis"]["hypothesis_class"] == "stump" and s["privacy"]["epsilon"] == 1.0
    assert a.privacy_["mechanism"].startswith("RRSPM") and a.diagnostics_["proof_applies"] is True


def test_m_uses_first_public_points(data):
    X, y, Z = data
    clf = RRSPM(epsilon=1.0, hypothesis_class="stump", m=5, random_state=0).fit(X, y, X_public=Z)
    assert clf.privacy_["m"] == 5 and clf.public_projection_.shape == (5,)


@pytest.mark.parametrize(
    "params, fit_kw, match",
    [
        ({"epsilon": 0}, {}, "epsilon"),
        ({"epsilon": -1}, {}, "epsilon"),
        ({"epsilon": float("nan")}, {}, "epsilon"),
        ({"delta": 1.5, "noise": "gaussian"}, {}, "delta"),
        ({"delta": -0.1}, {}, "delta"),
        ({"delta": 0.05, "noise": "gaussian"}, {}, "1/n"),
        ({"delta": 1e-5}, {}, "laplace"),
        ({"noise": "gaussian"}, {}, "delta must be > 0"),
        ({"noise": "cauchy"}, {}, "noise"),
        ({"m": 100}, {}, "m=100"),
        ({"m": 0}, {}, "m must be"),
        ({"hypothesis_class": "tree"}, {}, "hypothesis_class"),
        ({"backend": "nope"}, {}, "backend"),
        ({"on_uncertified": "ignore"}, {}, "on_uncertified"),
        ({}, {"public_labels": [0, 2, 0, 0, 0, 0, 0, 0]}, "public_labels"),
    ],
)
def test_bad_parameters(data, params, fit_kw, match):
    X, y, Z = data
    kw = {"epsilon": 1.0, "hypothesis_class": "stump", **params}
    with pytest.raises(ValueError, match=match):
        RRSPM(**kw).fit(X[:40], y[:40], X_public=Z, **fit_kw)


def test_bad_data(data):
    X, y, Z = data
    clf = RRSPM(epsilon=1.0, hypothesis_class="stump")
    with pytest.raises(ValueError, match="X_public is required"):
        clf.fit(X, y)
    with pytest.raises(ValueError, match="X_public has 3 features but X_private has 2"):
        clf.fit(X, y, X_public=np.ones((4, 3)))
    with pytest.raises(ValueError, match="X_public is empty"):
        clf.fit(X, y, X_public=np.ones((0, 2)))
    with pytest.raises(ValueError, match="y_private has 3 distinct class labels"):
        clf.fit(X, np.where(y == 1, 1, -1) * (1 + (np.arange(len(y)) == 0)), X_public=Z)
    with pytest.raises(ValueError, match="Input X_private contains NaN"):
        Xn = X.copy()
        Xn[3, 1] = np.nan
        clf.fit(Xn, y, X_public=Z)
    with pytest.raises(ValueError, match="y_private has 119 entries"):
        clf.fit(X, y[:-1], X_public=Z)
    with pytest.raises(NotFittedError):
        RRSPM().predict(X)


def test_uncertified_private_call_raises_or_is_flagged(data):
    X, y, Z = data
    with registered_backend("quantile-heuristic", QuantileSplitBackend) as name:
        with pytest.raises(UncertifiedOracleError, match="private-erm"):
            RRSPM(epsilon=1.0, hypothesis_class="stump", backend=name, random_state=0).fit(X, y, X_public=Z)
        clf = RRSPM(epsilon=1.0, hypothesis_class="stump", backend=name, on_uncertified="flag", random_state=0).fit(
            X, y, X_public=Z
        )
    assert clf.diagnostics_["proof_applies"] is False
    assert clf.diagnostics_["uncertified_private_calls"] == ["private-erm"]


def test_from_theory():
    p = rrspm_parameters(0.1, 0.05, 1.0, 1, 1.0)
    assert p["m"] == math.ceil((1 + math.log(20)) / 0.01)
    q = rrspm_parameters(0.1, 0.05, 1.0, 1, 1.0, rate="epsilon-net")
    assert q["m"] < p["m"]
    clf = RRSPM.from_theory(0.2, 0.1, 1.0, 1, epsilon=2.0, hypothesis_class="threshold", rate="epsilon-net")
    assert clf.m == clf.theory["m"] and clf.epsilon == 2.0
    with pytest.raises(ValueError, match="alpha"):
        rrspm_parameters(0.0, 0.05, 1.0, 1, 1.0)
    with pytest.raises(ValueError, match="rate"):
        rrspm_parameters(0.1, 0.05, 1.0, 1, 1.0, rate="fast")


def test_accuracy_when_n_is_large_relative_to_m():
    """Lemma 23: the noise term m^2 log(m/beta)/(eps n) is small, so RRSPM is accurate."""
    rng = np.random.default_rng(5)
    X = rng.random((20000, 1))
    y = (X[:, 0] >= 0.3).astype(np.int8)
    Z = rng.random((10, 1))
    clf = RRSPM(epsilon=1.0, hypothesis_class="threshold", random_state=1).fit(X, y, X_public=Z)
    assert np.mean(clf.predict(X) == y) > 0.85
