"""Algorithm 1 (Perturb): the least-squares -> weighted 0-1 reduction is exact; one public-only call."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oraclepriv import Ledger, Threshold, make_oracle
from oraclepriv.learners.perturb import (
    calibrate_gamma,
    gaussian_mechanism_sigma,
    least_squares_weights,
    perturb,
    squared_error,
)


def all_threshold_labelings(z):
    cuts = np.concatenate([[-np.inf], np.sort(z), [np.inf]])
    return [Threshold(c).predict(z[:, None]) for c in cuts]


@settings(max_examples=60, deadline=None)
@given(
    z=st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=8),
    t=st.lists(st.floats(-2, 3, allow_nan=False), min_size=8, max_size=8),
)
def test_perturb_minimises_squared_error_over_all_thresholds(z, t):
    z = np.array(z)
    t = np.array(t[: len(z)])
    out = perturb(make_oracle("threshold"), z[:, None], t, 0.0, "gaussian", np.random.default_rng(0), caller="test")
    best = min(squared_error(p, t) for p in all_threshold_labelings(z))
    assert out.objective == pytest.approx(best, abs=1e-9)
    assert out.result.certified


def test_reduction_identity():
    rng = np.random.default_rng(1)
    t = rng.normal(size=6)
    labels, w = least_squares_weights(t)
    for _ in range(20):
        f = rng.integers(0, 2, 6)
        assert squared_error(f, t) == pytest.approx(np.sum(t**2) + np.sum(w[f != labels]))


def test_gamma_zero_reproduces_a_realizable_labeling_with_one_public_call():
    Z = np.arange(6.0)[:, None]
    target = (Z[:, 0] >= 2.5).astype(float)
    with Ledger() as ledger:
        out = perturb(
            make_oracle("threshold"), Z, target, 0.0, "laplace", np.random.default_rng(0), caller="t", step="perturb"
        )
    assert np.array_equal(out.hypothesis.predict(Z), target)
    assert len(ledger) == 1 and ledger.records[0]["n"] == 6 and ledger.records[0]["step"] == "perturb"


def test_noise_scale_is_gamma():
    Z = np.zeros((20000, 1))
    out = perturb(
        make_oracle("threshold"), Z, np.full(20000, 0.5), 2.0, "laplace", np.random.default_rng(0), caller="t"
    )
    # Lap(1) * gamma has mean |x| = gamma
    assert np.mean(np.abs(out.targets - 0.5)) == pytest.approx(2.0, rel=0.05)
    out = perturb(
        make_oracle("threshold"), Z, np.full(20000, 0.5), 2.0, "gaussian", np.random.default_rng(0), caller="t"
    )
    assert np.std(out.targets) == pytest.approx(2.0, rel=0.05)


def test_bad_inputs():
    with pytest.raises(ValueError, match="gamma"):
        perturb(
            make_oracle("threshold"),
            np.zeros((2, 1)),
            np.zeros(2),
            -1.0,
            "gaussian",
            np.random.default_rng(0),
            caller="t",
        )
    with pytest.raises(ValueError, match="center"):
        perturb(
            make_oracle("threshold"),
            np.zeros((2, 1)),
            np.zeros(3),
            0.0,
            "gaussian",
            np.random.default_rng(0),
            caller="t",
        )
    with pytest.raises(ValueError, match="noise"):
        perturb(
            make_oracle("threshold"), np.zeros((2, 1)), np.zeros(2), 1.0, "cauchy", np.random.default_rng(0), caller="t"
        )


def test_analytic_gaussian_calibration():
    from scipy.stats import norm

    for eps, delta in ((0.5, 1e-5), (1.0, 1e-3), (3.0, 1e-6)):
        s = gaussian_mechanism_sigma(1.0, eps, delta)
        excess = lambda s: norm.cdf(0.5 / s - eps * s) - np.exp(eps) * norm.cdf(-0.5 / s - eps * s)  # noqa: E731
        assert excess(s) <= delta  # private
        assert excess(s * 0.99) > delta  # and (nearly) the smallest such s
    # large eps: e^eps overflows a float beyond 709.78; the condition is evaluated in log space, still tight
    for eps in (710.0, 800.0):
        s = gaussian_mechanism_sigma(1.0, eps, 1e-5)
        excess = lambda s: norm.cdf(0.5 / s - eps * s) - np.exp(eps + norm.logcdf(-0.5 / s - eps * s))  # noqa: E731
        assert np.isfinite(s) and excess(s) <= 1e-5 < excess(s * 0.99)
    with pytest.raises(ValueError, match="finite epsilon"):
        gaussian_mechanism_sigma(1.0, np.inf, 1e-5)
    # classical mechanism is valid for eps < 1, so the analytic one is never larger
    assert gaussian_mechanism_sigma(1.0, 0.5, 1e-5) <= np.sqrt(2 * np.log(1.25 / 1e-5)) / 0.5
    assert calibrate_gamma("laplace", 0.5, 4, 2.0, 0.0) == pytest.approx(4 * 0.5 / 2.0)
    assert calibrate_gamma("laplace", 0.5, 4, 2.0, 0.0, laplace_factor="paper") == pytest.approx(8 * 0.5 / 2.0)
