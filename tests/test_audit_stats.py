"""Audit statistics: Clopper–Pearson bounds and the epsilon lower confidence bound."""

import math

import numpy as np
import pytest

from oraclepriv.audit.stats import clopper_pearson, estimate_epsilon


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(0, 10, 0.05)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10))
    lo, hi = clopper_pearson(10, 10, 0.05)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10))
    lo, hi = clopper_pearson(50, 100, 0.05)
    assert lo == pytest.approx(0.3983, abs=1e-3) and hi == pytest.approx(0.6017, abs=1e-3)
    with pytest.raises(ValueError):
        clopper_pearson(5, 3, 0.05)


def test_clopper_pearson_coverage():
    rng = np.random.default_rng(0)
    p, n = 0.07, 200
    ks = rng.binomial(n, p, 2000)
    covered = np.mean([clopper_pearson(int(k), n, 0.1, "lower")[0] <= p for k in ks])
    assert covered >= 0.9


def test_identical_laws_do_not_look_private_leaky():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, 5000).tolist()
    b = rng.integers(0, 4, 5000).tolist()
    est = estimate_epsilon(a, b, alpha=0.05)
    assert est.eps_lower < 0.05 and est.eps_point < 0.2


def test_known_ratio_is_bracketed():
    rng = np.random.default_rng(2)
    eps = 1.0
    p_a = math.exp(eps) / (1 + math.exp(eps))  # randomized response: ratio e^eps exactly
    a = (rng.random(20000) < p_a).tolist()
    b = (rng.random(20000) < 1 - p_a).tolist()
    est = estimate_epsilon(a, b, alpha=0.05)
    assert 0.9 < est.eps_lower <= eps
    assert est.eps_point == pytest.approx(eps, abs=0.06)


def test_disjoint_supports_give_a_large_bound():
    est = estimate_epsilon([0] * 500, [1] * 500)
    assert est.eps_lower > 4 and est.eps_point == math.inf


def test_identical_samples_give_a_zero_bound_never_a_negative_one():
    """A privacy loss is never negative: the same output law on both sides gives eps_lower == 0.0 (no evidence
    of any loss), not the negative log-ratio bound the Clopper-Pearson intervals alone give, nor -inf."""
    outcomes = [0, 1, 2, 3] * 250
    est = estimate_epsilon(outcomes, outcomes)
    assert est.eps_lower == 0.0 and math.copysign(1.0, est.eps_lower) == 1.0
    assert all(row["eps_lower"] == 0.0 for row in est.details)
    assert est.worst_event in {0, 1, 2, 3}
    # an event too rare to bound (p_lo <= delta on every event, formerly -inf) also reports 0
    rare = estimate_epsilon([0, 1], [0, 1], delta=0.5)
    assert rare.eps_lower == 0.0 and all(row["eps_lower"] == 0.0 for row in rare.details)


def test_lower_bound_is_never_negative_on_close_laws():
    """Random samples of nearby laws: the clamp holds on every seed (before it, these gave about -0.1)."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = rng.integers(0, 3, 2000).tolist()
        b = rng.integers(0, 3, 2000).tolist()
        est = estimate_epsilon(a, b)
        assert est.eps_lower >= 0.0 and min(row["eps_lower"] for row in est.details) >= 0.0
