"""The numerical delta (oraclepriv.near_ties): the near-tie probability bound against simulation.

A near-tie is the event that the best and the second-best labelings of the public points are
within the certification tolerance tau of each other: only then may a certified answer differ from
the exact argmin. The bound gamma = 2 m rho tau (rho: the noise density's maximum) is checked
against 10^6 simulated noisy argmins over the labelings thresholds realise on Z, with a large tau
so that the event is frequent; at m = 1 with equal costs the bound is attained, so a constant
that is off by a factor shows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from oraclepriv.learners import RRSPM, PublicCoverEM, SubsampleAggregate
from oraclepriv.near_ties import (
    NEAR_TIE_TAIL,
    gaussian_near_tie_probability,
    laplace_near_tie_probability,
    numerical_delta,
)
from oraclepriv.oracle import CERTIFICATION_RTOL

DRAWS = 1_000_000


def _near_tie_frequency(m: int, costs: np.ndarray, noise: np.ndarray, tau: float) -> float:
    """Fraction of draws where the two cheapest threshold labelings of m sorted public points are within tau.

    Labeling k labels the first k public points 0 and the rest 1 (k = 0..m); Ytilde = all 0, so
    labeling k pays the noise of public points k..m-1.
    """
    suffix = np.cumsum(noise[:, ::-1], axis=1)[:, ::-1]  # suffix[:, k] = sum_{j >= k} noise_j
    total = np.concatenate([suffix, np.zeros((noise.shape[0], 1))], axis=1) + costs
    two = np.partition(total, 1, axis=1)[:, :2]
    return float(np.mean(two[:, 1] - two[:, 0] <= tau))


@pytest.mark.parametrize("family", ["laplace", "gaussian"])
@pytest.mark.parametrize("m, costs", [(1, [0.0, 0.0]), (3, [2.0, 0.0, 1.0, 3.0]), (5, [0, 1, 1, 0, 2, 1])])
def test_bound_holds_and_is_attained_at_m_one(family, m, costs):
    rng = np.random.default_rng(m)
    scale = 2.0 * m  # RRSPM's Lap(2m/eps) at eps = 1, or a Gaussian std of the same size
    noise = rng.laplace(0, scale, (DRAWS, m)) if family == "laplace" else rng.normal(0, scale, (DRAWS, m))
    tau = 0.02 * scale
    rho = 1 / (2 * scale) if family == "laplace" else 1 / (scale * math.sqrt(2 * math.pi))
    bound = 2 * m * rho * tau
    hits = round(_near_tie_frequency(m, np.asarray(costs, dtype=float), noise, tau) * DRAWS)
    low, high = stats.binomtest(hits, DRAWS).proportion_ci(0.999, method="exact")
    assert low <= bound, (hits / DRAWS, bound)
    if m == 1:  # one noisy weight, equal costs: P(|xi| <= tau) ~ 2 tau rho, the bound itself
        assert high >= bound * 0.97


def test_library_bound_matches_the_formula():
    m, scale, n = 4, 8.0, 100.0
    total = stats.gamma.isf(NEAR_TIE_TAIL, a=m, scale=scale)
    expected = NEAR_TIE_TAIL + 2 * m / (2 * scale) * CERTIFICATION_RTOL * (n + total)
    assert laplace_near_tie_probability(m, scale, n) == pytest.approx(expected, rel=1e-12)
    gauss = gaussian_near_tie_probability(m, scale, n)
    assert NEAR_TIE_TAIL < gauss < 1e-6
    assert numerical_delta(1.0, 1e-6) == pytest.approx((1 + math.e) * 1e-6)
    for bad in (
        {"m": 0, "scale": 1.0, "fixed_weight": 1.0},
        {"m": 2, "scale": -1.0, "fixed_weight": 1.0},
        {"m": 2, "scale": 1.0, "fixed_weight": math.inf},
    ):
        with pytest.raises(ValueError):
            laplace_near_tie_probability(**bad)


def test_learners_record_their_numerical_delta():
    rng = np.random.default_rng(0)
    X = rng.random((50, 1))
    y = (X[:, 0] > 0.4).astype(int)
    Z = np.linspace(0, 1, 5).reshape(-1, 1)
    # halfspaces in the plane: no exhaustive backend compares their answers exactly
    X2, Z2 = np.hstack([X, rng.random((50, 1))]), np.hstack([Z, Z[::-1]])
    rrspm = RRSPM(epsilon=1.0, hypothesis_class="halfspace", random_state=0).fit(X2, y, X_public=Z2)
    gamma = laplace_near_tie_probability(5, 10.0, 50.0)
    assert rrspm.privacy_["near_tie_probability"] == gamma
    assert rrspm.privacy_["numerical_delta"] == numerical_delta(1.0, gamma) > 0
    assert "numerical delta" in rrspm.privacy_["guarantee"]
    for other in (
        SubsampleAggregate(n_teachers=5, noise="laplace", delta=0.0, hypothesis_class="threshold", random_state=0),
        PublicCoverEM(epsilon=1.0, hypothesis_class="threshold", random_state=0),
        RRSPM(epsilon=1.0, hypothesis_class="threshold", random_state=0),  # the sweep's answers compared exactly
        RRSPM(epsilon=1.0, hypothesis_class="halfspace", random_state=0),  # on one feature: enumerate's, likewise
    ):
        assert other.fit(X, y, X_public=Z).privacy_["numerical_delta"] == 0.0  # no near-tie in the proof
