"""The noise each learner's ``fit`` actually DRAWS and RELEASES, checked exactly against the calibration its
privacy claim states, for Regularization, Perturbation, RSPM, RRSPM (both noises), SubsampleAggregate (both
noises) and OutputPerturbationLogistic.

Checks that read what a learner declares (``gamma_``, ``noise_law``, a sampler tested on its own) pass when
``fit`` draws less noise than it declares; these checks observe the fit instead:

* the fit's random generator is a :class:`RecordingGenerator` (a numpy ``Generator`` subclass: every learner
  takes a ``Generator`` as ``random_state`` and draws from it), which logs each noise draw with its
  distribution parameters and its values;
* a spy on the oracle (:class:`~oraclepriv.oracle.Oracle` or the convex oracle) logs the inputs of the call
  the released hypothesis is computed from, and the answers the noise-free part is built from;
* each test then checks the draw's parameters, that the vector the release is computed from equals
  (noise-free part) + s x (recorded draws) for one s (to 1e-9), and that this s satisfies the privacy claim's
  own condition: the closed-form scale (Laplace: 2m/eps, m rho/eps, m/(k eps); output perturbation:
  Delta/eps) to rel 1e-9, or the (eps, delta) condition of the Gaussian calibration evaluated at s,
  written out here (Balle-Wang's analytic Gaussian mechanism; RRSPM's A/s + 2m/s^2 <= eps).

Everything is exact, so there is no sampling error: a 10% noise shortfall (s -> 0.9 s) is 10^8 times the
1e-9 tolerance of a closed-form scale, and for the Gaussian conditions each test also shows the condition
already fails at 0.99 s. Every learner's check has a control here that runs it on a fit whose noise is 0.9x
the calibration while the declared values stay right, and requires the check to fail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

import oraclepriv.learners.output_perturbation as output_perturbation_module
import oraclepriv.learners.perturbation as perturbation_module
import oraclepriv.learners.regularization as regularization_module
import oraclepriv.learners.rspm as rspm_module
import oraclepriv.learners.subsample as subsample_module
from oraclepriv.convex_oracle import ConvexOracle
from oraclepriv.learners import RRSPM, RSPM, Perturbation, Regularization, SubsampleAggregate
from oraclepriv.learners.output_perturbation import OutputPerturbationLogistic, logistic_minimiser
from oraclepriv.oracle import Oracle

REL = 1e-9  # tolerance of every exact comparison; a 10% shortfall is 1e8 times larger

# -- instruments -----------------------------------------------------------------------------------------------

_SIGNATURES = {
    "standard_normal": ("size",),
    "normal": ("loc", "scale", "size"),
    "laplace": ("loc", "scale", "size"),
    "gamma": ("shape", "scale", "size"),
}
_DEFAULTS = {"loc": 0.0, "scale": 1.0, "size": None}


@dataclass
class Draw:
    method: str
    params: dict[str, Any]
    values: np.ndarray


class RecordingGenerator(np.random.Generator):
    """A PCG64 Generator that logs every continuous noise draw (method, parameters, values)."""

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.draws: list[Draw] = []

    def _record(self, method: str, args: tuple, kwargs: dict, out: Any) -> Any:
        params = dict(_DEFAULTS)
        params.update(zip(_SIGNATURES[method], args))
        params.update(kwargs)
        self.draws.append(Draw(method, params, np.array(out, dtype=np.float64, copy=True)))
        return out

    def standard_normal(self, *args: Any, **kwargs: Any) -> Any:
        return self._record("standard_normal", args, kwargs, super().standard_normal(*args, **kwargs))

    def normal(self, *args: Any, **kwargs: Any) -> Any:
        return self._record("normal", args, kwargs, super().normal(*args, **kwargs))

    def laplace(self, *args: Any, **kwargs: Any) -> Any:
        return self._record("laplace", args, kwargs, super().laplace(*args, **kwargs))

    def gamma(self, *args: Any, **kwargs: Any) -> Any:
        return self._record("gamma", args, kwargs, super().gamma(*args, **kwargs))

    def of(self, method: str) -> list[Draw]:
        return [d for d in self.draws if d.method == method]


@dataclass
class Call:
    step: str | None
    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    result: Any


@pytest.fixture
def oracle_calls(monkeypatch):
    """Every Oracle.solve call of the fit: its inputs (copied: the learners reuse buffers) and its answer."""
    calls: list[Call] = []
    real = Oracle.solve

    def spy(self, X, y, weights=None, **kw):
        result = real(self, X, y, weights, **kw)
        calls.append(Call(kw.get("step"), np.array(X, dtype=np.float64), np.array(y), np.array(weights, float), result))
        return result

    monkeypatch.setattr(Oracle, "solve", spy)
    return calls


def the_call(calls: list[Call], step: str) -> Call:
    found = [c for c in calls if c.step == step]
    assert len(found) == 1, [c.step for c in calls]
    return found[0]


def used_scale(noisy: np.ndarray, center: np.ndarray, draws: np.ndarray) -> float:
    """The s with noisy = center + s * draws (asserted to REL): the noise scale the release actually used."""
    diff = np.asarray(noisy, dtype=np.float64) - np.asarray(center, dtype=np.float64)
    s = float(diff @ draws / (draws @ draws))
    np.testing.assert_allclose(diff, s * draws, rtol=REL, atol=REL * abs(s))
    return s


def assert_scale(used: float, claimed: float, what: str) -> None:
    assert used == pytest.approx(claimed, rel=REL), f"{what}: the fit used scale {used!r}, the claim is {claimed!r}"


def gaussian_delta(sensitivity: float, epsilon: float, s: float) -> float:
    """delta of N(0, s^2 I) on a vector of l2-sensitivity Delta at epsilon (Balle & Wang 2018, Theorem 8)."""
    a, b = sensitivity / (2.0 * s), epsilon * s / sensitivity
    return float(norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b))


def assert_analytic_gaussian(s: float, sensitivity: float, epsilon: float, delta: float) -> None:
    """The (eps, delta) claim holds at the std s the fit used, and is tight: 1% less noise breaks it."""
    assert gaussian_delta(sensitivity, epsilon, s) <= delta, (
        f"the fit used std {s!r}: delta {gaussian_delta(sensitivity, epsilon, s)!r} > claimed {delta!r}"
    )
    assert gaussian_delta(sensitivity, epsilon, 0.99 * s) > delta  # the claim is the calibration, not slack


def scaled(factor: float, fn):
    """fn with its result multiplied by ``factor`` (the controls' noise shortfall)."""
    return lambda *a, **k: factor * fn(*a, **k)


# -- Regularization (Algorithm 3) -----------------------------------------------------------------------------


def _l1_data(n: int, m: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    X /= np.maximum(1, np.abs(X).sum(1, keepdims=True))
    Z = rng.uniform(-1, 1, (m, d))
    Z /= np.maximum(1, np.abs(Z).sum(1, keepdims=True))
    return X, (X[:, 0] > 0).astype(np.int8), Z


def check_regularization(monkeypatch, noise: str) -> None:
    n, m, eps, eta, opt_tol = 30, 8, 1.0, 0.5, 1e-6
    delta = 1e-3 if noise == "gaussian" else 0.0
    X, y, Z = _l1_data(n, m, 2)
    seen: dict[str, Any] = {}
    real_erm, real_ls = ConvexOracle.regularized_erm, ConvexOracle.least_squares

    def erm(self, *a, **k):
        seen["erm"] = real_erm(self, *a, **k)
        return seen["erm"]

    def ls(self, Z_, u, **k):
        seen["u"] = np.array(u, dtype=np.float64)
        seen["ls"] = real_ls(self, Z_, u, **k)
        return seen["ls"]

    monkeypatch.setattr(ConvexOracle, "regularized_erm", erm)
    monkeypatch.setattr(ConvexOracle, "least_squares", ls)
    rng = RecordingGenerator(0)
    clf = Regularization(epsilon=eps, delta=delta, noise=noise, eta=eta, opt_tol=opt_tol, random_state=rng)
    clf.fit(X, y, X_public=Z)
    method = "standard_normal" if noise == "gaussian" else "laplace"
    (draw,) = rng.of(method)
    assert draw.values.shape == (m,)
    if method == "laplace":
        assert draw.params["loc"] == 0.0 and draw.params["scale"] == 1.0  # Q = Lap(1), scaled by gamma after
    fbar = Z @ seen["erm"].w  # the certified regularized ERM the fit computed, on Z
    s = used_scale(seen["u"], fbar, draw.values)  # u is what the released predictor is fitted to
    assert np.array_equal(clf.hypothesis_.w, seen["ls"].w) and np.array_equal(clf.public_targets_, seen["u"])
    rho = 2.0 / math.sqrt(n * eta) + 2.0 * math.sqrt(opt_tol / (n * eta))  # the module docstring's radius
    if noise == "laplace":
        assert_scale(s, m * rho / eps, "Regularization Laplace gamma = m rho / eps")
    else:
        assert_analytic_gaussian(s, math.sqrt(m) * rho, eps, delta)
    assert clf.gamma_ == pytest.approx(s, rel=REL) and clf.privacy_["gamma"] == clf.gamma_


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_regularization_releases_the_calibrated_noise(monkeypatch, noise):
    check_regularization(monkeypatch, noise)


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_control_regularization_noise_shortfall_is_caught(monkeypatch, noise):
    monkeypatch.setattr(regularization_module, "sample_noise", scaled(0.9, regularization_module.sample_noise))
    with pytest.raises(AssertionError, match="the fit used"):
        check_regularization(monkeypatch, noise)


# -- Perturbation (Algorithm 2) -------------------------------------------------------------------------------


def check_perturbation(calls: list[Call]) -> None:
    n, m, J, eps, delta = 30, 6, 2, 1.0, 1e-3
    rng0 = np.random.default_rng(1)
    X = rng0.random((n, 1))
    y = (X[:, 0] > 0.5).astype(np.int8)
    Z = rng0.random((m, 1))
    rng = RecordingGenerator(0)
    clf = Perturbation(epsilon=eps, delta=delta, hypothesis_class="threshold", J=J, random_state=rng)
    clf.fit(X, y, X_public=Z)
    xis, zeta = rng.of("standard_normal")  # the J GP perturbations, then Perturb's zeta
    assert xis.values.shape == (J, m) and zeta.values.shape == (m,)
    # fbar on the +-1 scale: the average of the J perturbed ERMs the fit computed
    fbar = np.mean([2.0 * the_call(calls, f"perturbed-erm-{j}").result.hypothesis.predict(Z) - 1 for j in (1, 2)], 0)
    last = the_call(calls, "perturb")  # the call the released hypothesis comes from: weights 1 - 2 t
    assert np.array_equal(last.X, Z) and not last.y.any()
    t = (1.0 - last.weights) / 2.0  # the targets on the {0,1} scale
    u = 2.0 * t - 1.0  # on the +-1 scale: fbar + gamma zeta
    s = used_scale(u, fbar, zeta.values)
    assert clf.hypothesis_ is last.result.hypothesis
    np.testing.assert_allclose(clf.public_targets_, u, rtol=REL, atol=REL)
    assert_analytic_gaussian(s, math.sqrt(m) * 2.0, eps, delta)  # rho = 2 (the default, unconditional)
    assert clf.gamma_ == pytest.approx(s, rel=REL)


def test_perturbation_releases_the_calibrated_noise(oracle_calls):
    check_perturbation(oracle_calls)


def test_control_perturbation_noise_shortfall_is_caught(monkeypatch, oracle_calls):
    real = perturbation_module.perturb
    monkeypatch.setattr(
        perturbation_module, "perturb", lambda oracle, Z, c, gamma, *a, **k: real(oracle, Z, c, 0.9 * gamma, *a, **k)
    )
    with pytest.raises(AssertionError, match="the fit used"):
        check_perturbation(oracle_calls)


# -- RSPM (Algorithm 5) ---------------------------------------------------------------------------------------

GRID = [0.0, 0.25, 0.5, 0.75, 1.0]


def check_rspm(calls: list[Call]) -> None:
    n, eps = 20, 0.8
    rng0 = np.random.default_rng(2)
    X = rng0.choice(GRID, size=(n, 1))
    y = (X[:, 0] >= 0.5).astype(np.int8)
    rng = RecordingGenerator(0)
    clf = RSPM(epsilon=eps, hypothesis_class="threshold", grid=[GRID], random_state=rng).fit(X, y)
    m = len(GRID)  # the identification set of thresholds on a grid: the grid points
    assert clf.identification_set_.shape == (m, 1)
    (draw,) = rng.of("laplace")
    assert draw.params["loc"] == 0.0 and draw.values.shape == (m,)
    erm = the_call(calls, "private-erm")  # the noisy argmin whose labeling of U is released
    assert np.array_equal(erm.weights[:n], np.ones(n)) and np.array_equal(erm.X[n:], clf.identification_set_)
    assert np.array_equal(erm.weights[n:], draw.values)  # the drawn xi are the weights the ERM used
    assert (
        clf.hypothesis_.predict(clf.identification_set_).tolist()
        == erm.result.hypothesis.predict(clf.identification_set_).tolist()
    )
    assert_scale(float(draw.params["scale"]), 2.0 * m / eps, "RSPM xi ~ Lap(2m/eps)")
    # the law oraclepriv verify integrates is the one drawn
    assert clf.noise_law(m, 1) == ("laplace", pytest.approx(draw.params["scale"], rel=REL))
    assert clf.privacy_["noise_scale"] == pytest.approx(draw.params["scale"], rel=REL)


def test_rspm_releases_the_calibrated_noise(oracle_calls):
    check_rspm(oracle_calls)


def test_control_rspm_weights_shortfall_is_caught(monkeypatch, oracle_calls):
    """The ERM sees 0.9 xi while the draw and the declared law are right."""
    real = rspm_module.noisy_private_erm
    monkeypatch.setattr(
        rspm_module, "noisy_private_erm", lambda lr, o, X, y, U, yt, xi: real(lr, o, X, y, U, yt, 0.9 * xi)
    )
    with pytest.raises(AssertionError):
        check_rspm(oracle_calls)


def test_control_rspm_law_shortfall_is_caught(monkeypatch, oracle_calls):
    """noise_law (hence the draw and what the verifier integrates) 0.9 x 2m/eps: the closed form catches it."""
    real = RSPM.noise_law
    monkeypatch.setattr(RSPM, "noise_law", lambda self, m, d: (real(self, m, d)[0], 0.9 * real(self, m, d)[1]))
    with pytest.raises(AssertionError, match="the fit used"):
        check_rspm(oracle_calls)


# -- RRSPM (Algorithm 4): Laplace and the derived Gaussian calibration ----------------------------------------


def check_rrspm(calls: list[Call], noise: str) -> None:
    n, m, eps = 40, 6, 1.0
    delta = 1e-3 if noise == "gaussian" else 0.0
    rng0 = np.random.default_rng(3)
    X = rng0.random((n, 1))
    y = (X[:, 0] > 0.4).astype(np.int8)
    Z = rng0.random((m, 1))
    rng = RecordingGenerator(0)
    clf = RRSPM(epsilon=eps, delta=delta, noise=noise, hypothesis_class="threshold", random_state=rng)
    clf.fit(X, y, X_public=Z)
    method = "normal" if noise == "gaussian" else "laplace"
    (draw,) = rng.of(method)
    assert draw.params["loc"] == 0.0 and draw.values.shape == (m,)
    erm = the_call(calls, "private-erm")
    assert np.array_equal(erm.weights[:n], np.ones(n)) and np.array_equal(erm.X[n:], Z)
    assert np.array_equal(erm.weights[n:], draw.values)  # the drawn xi are the weights the ERM used
    assert np.array_equal(clf.public_projection_, erm.result.hypothesis.predict(Z))
    s = float(draw.params["scale"])
    if noise == "laplace":
        assert_scale(s, 2.0 * m / eps, "RRSPM xi ~ Lap(2m/eps)")
    else:
        # docs/theory/rrspm-gaussian-calibration.md: (eps, delta)-DP iff A/s + 2m/s^2 <= eps,
        # A = 2 sqrt(m) sqrt(2 ln(N/delta)), N = m + 1 labelings of m points by thresholds
        A = 2.0 * math.sqrt(m) * math.sqrt(2.0 * math.log((m + 1) / delta))
        loss = A / s + 2.0 * m / s**2
        assert loss <= eps * (1 + REL), f"the fit used std {s!r}: A/s + 2m/s^2 = {loss!r} > eps = {eps!r}"
        s99 = 0.99 * s
        assert A / s99 + 2.0 * m / s99**2 > eps  # the claim is the calibration, not slack
        assert clf.privacy_["noise_std"] == pytest.approx(s, rel=REL)
    assert clf.noise_law(m, 1) == (noise, pytest.approx(s, rel=REL))  # what the verifier integrates


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_rrspm_releases_the_calibrated_noise(oracle_calls, noise):
    check_rrspm(oracle_calls, noise)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_control_rrspm_weights_shortfall_is_caught(monkeypatch, oracle_calls, noise):
    """The draw at 0.9 x noise_law's scale while noise_law and privacy_ stay right."""

    def short(self, rng, m, n_features):
        family, scale = self.noise_law(m, n_features)
        return rng.laplace(0.0, 0.9 * scale, m) if family == "laplace" else rng.normal(0.0, 0.9 * scale, m)

    monkeypatch.setattr(RRSPM, "_public_weights", short)
    with pytest.raises(AssertionError, match="the fit used"):
        check_rrspm(oracle_calls, noise)


# -- SubsampleAggregate ---------------------------------------------------------------------------------------


def check_subsample(calls: list[Call], noise: str) -> None:
    n, m, k, eps = 40, 6, 4, 1.0
    delta = 1e-3 if noise == "gaussian" else 0.0
    rng0 = np.random.default_rng(4)
    X = rng0.normal(size=(n, 1))
    y = (X[:, 0] > 0).astype(np.int8)
    Z = rng0.normal(size=(m, 1))
    rng = RecordingGenerator(0)
    clf = SubsampleAggregate(
        n_teachers=k, noise=noise, epsilon=eps, delta=delta, hypothesis_class="threshold", random_state=rng
    ).fit(X, y, X_public=Z)
    method = "standard_normal" if noise == "gaussian" else "laplace"
    (draw,) = rng.of(method)
    assert draw.values.shape == (m,)
    if method == "laplace":
        assert draw.params["loc"] == 0.0 and draw.params["scale"] == 1.0  # Q = Lap(1), scaled by gamma after
    teachers = [the_call(calls, f"teacher-{t}") for t in range(k)]
    assert all(c.result.certified for c in teachers)
    center = np.mean([c.result.hypothesis.predict(Z) for c in teachers], axis=0)  # fbar: the mean vote
    last = the_call(calls, "perturb")  # the public-only call the release comes from: weights 1 - 2 t
    assert np.array_equal(last.X, Z) and not last.y.any()
    s = used_scale((1.0 - last.weights) / 2.0, center, draw.values)
    assert clf.hypothesis_ is last.result.hypothesis
    if noise == "laplace":
        assert_scale(s, m / (k * eps), "SubsampleAggregate Laplace gamma = m / (k eps)")
    else:
        assert_analytic_gaussian(s, math.sqrt(m) / k, eps, delta)
    # the law oraclepriv verify integrates (eta = -2 gamma zeta) is the one the release used
    assert clf.noise_law(m, 1) == (noise, pytest.approx(2.0 * s, rel=REL))
    assert clf.privacy_["gamma"] == pytest.approx(s, rel=REL)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_subsample_releases_the_calibrated_noise(oracle_calls, noise):
    check_subsample(oracle_calls, noise)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_control_subsample_noise_shortfall_is_caught(monkeypatch, oracle_calls, noise):
    real = subsample_module.perturb
    monkeypatch.setattr(
        subsample_module, "perturb", lambda oracle, Z, c, gamma, *a, **k: real(oracle, Z, c, 0.9 * gamma, *a, **k)
    )
    with pytest.raises(AssertionError, match="the fit used"):
        check_subsample(oracle_calls, noise)


# -- OutputPerturbationLogistic -------------------------------------------------------------------------------


def check_output_perturbation() -> None:
    n, lam, eps, opt_tol, R = 30, 0.1, 0.5, 1e-6, 2.0
    rng0 = np.random.default_rng(5)
    X = rng0.normal(size=(n, 2))
    y = (X[:, 0] + 0.3 * rng0.normal(size=n) > 0).astype(np.int8)
    rng = RecordingGenerator(0)
    clf = OutputPerturbationLogistic(epsilon=eps, regularization=lam, data_norm=R, opt_tol=opt_tol, random_state=rng)
    clf.fit(X, y)
    p = 3  # two features and the intercept
    (direction,) = rng.of("standard_normal")
    (radius,) = rng.of("gamma")
    assert direction.values.shape == (p,) and radius.params["shape"] == p and radius.params["size"] is None
    # the released vector theta + b, read back from the public coefficients
    noisy = np.r_[clf.coef_[0] * R * math.sqrt(2.0), clf.intercept_[0] * math.sqrt(2.0)]
    theta, _ = logistic_minimiser(clf.features(X), y, lam, opt_tol * 2.0 / n)  # the fit's own minimiser
    unit = direction.values / np.linalg.norm(direction.values)
    r = used_scale(noisy, theta, unit)  # ||b||: b = ||b|| * the recorded direction
    assert r == pytest.approx(float(radius.values), rel=1e-6)  # ||b|| is the recorded Gamma draw
    assert_scale(
        float(radius.params["scale"]), 2.0 / (n * lam) * (1 + 2 * opt_tol) / eps, "||b|| ~ Gamma(p, Delta/eps)"
    )
    assert clf.release_.privacy["noise_scale"] == pytest.approx(radius.params["scale"], rel=REL)


def test_output_perturbation_releases_the_calibrated_noise():
    check_output_perturbation()


def test_control_output_perturbation_noise_shortfall_is_caught(monkeypatch):
    real = output_perturbation_module.sample_output_noise
    monkeypatch.setattr(
        output_perturbation_module, "sample_output_noise", lambda rng, dim, scale: real(rng, dim, 0.9 * scale)
    )
    with pytest.raises(AssertionError, match="the fit used"):
        check_output_perturbation()
