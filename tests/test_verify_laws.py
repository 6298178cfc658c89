"""The exact law of a Laplace noisy argmin (oraclepriv.noisy_argmin.laws) against independent methods.

m = 1: the Laplace CDF in closed form. m = 2: a one-dimensional scipy quadrature of the conditional
probability (for fixed eta_1 the winning set of eta_2 is an interval), independent of the polytope
code. m = 3 and 4: 2·10^5 direct samples (10^8 under the slow marker) (exact binomial intervals). Costs are real and signed, so
the polytopes' right-hand sides are not integers; ties between costs are included (they make the
most degenerate polytopes).
"""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from scipy import integrate, stats

from oraclepriv.noisy_argmin.laws import (
    CHUNK_BYTES,
    MAX_EXACT_POINTS,
    draw_chunk,
    laplace_argmin_law,
    sampled_argmin_law,
    sampled_law_memory,
)


def _instance(rng: np.random.Generator, m: int, ties: bool):
    K = int(rng.integers(2, 2**m + 1))
    labelings = np.array([[(k >> j) & 1 for j in range(m)] for k in rng.choice(2**m, K, replace=False)])
    costs = rng.integers(-3, 4, K).astype(float) if ties else rng.normal(0, 3, K)
    return costs, labelings


def _laplace_cdf(x: float, scale: float) -> float:
    return 0.5 * math.exp(x / scale) if x < 0 else 1.0 - 0.5 * math.exp(-x / scale)


def _quadrature_law_m2(costs, labelings, scale):
    """P(k wins) = int f(e1) P(e2 in I_k(e1)) de1, I_k(e1) an interval from the pairwise conditions."""

    def conditional(e1, k):
        lo, hi = -math.inf, math.inf
        for o in range(len(costs)):
            if o == k:
                continue
            d = labelings[k] - labelings[o]  # need <e, d> <= c_o - c_k
            rhs = costs[o] - costs[k] - d[0] * e1
            if d[1] > 0:
                hi = min(hi, rhs / d[1])
            elif d[1] < 0:
                lo = max(lo, rhs / d[1])
            elif rhs < 0:
                return 0.0
        return max(0.0, _laplace_cdf(hi, scale) - _laplace_cdf(lo, scale)) if hi > lo else 0.0

    breaks = sorted({float(c) for c in np.subtract.outer(costs, costs).ravel()} | {0.0})
    out = []
    for k in range(len(costs)):
        f = lambda e1: math.exp(-abs(e1) / scale) / (2 * scale) * conditional(e1, k)  # noqa: E731
        total = 0.0
        edges = [-60 * scale] + breaks + [60 * scale]
        for a, b in zip(edges[:-1], edges[1:]):
            total += integrate.quad(f, a, b, epsabs=1e-13, epsrel=1e-12, limit=200, points=[(a + b) / 2])[0]
        out.append(total)
    return np.array(out)


def test_m_one_matches_the_laplace_cdf():
    law = laplace_argmin_law(np.array([2.5, 0.0]), np.array([[0], [1]]), 3.0)
    assert law.probabilities[1] == pytest.approx(_laplace_cdf(2.5, 3.0), abs=1e-14)
    assert law.exact and law.error < 1e-13


@pytest.mark.parametrize("seed", range(12))
def test_m_two_matches_quadrature(seed):
    rng = np.random.default_rng(seed)
    costs, labelings = _instance(rng, 2, ties=seed % 2 == 0)
    law = laplace_argmin_law(costs, labelings, 4.0)
    reference = _quadrature_law_m2(costs, labelings, 4.0)
    np.testing.assert_allclose(law.probabilities, reference, atol=1e-9)
    assert law.error < 1e-12


def _check_against_samples(seed: int, draws: int) -> None:
    rng = np.random.default_rng(100 + seed)
    m = 3 if seed < 6 else 4
    costs, labelings = _instance(rng, m, ties=seed % 2 == 0)
    scale = 2.0 * m
    law = laplace_argmin_law(costs, labelings, scale)
    assert law.error < 1e-12
    sampled = sampled_argmin_law(costs, labelings, "laplace", scale, draws, rng)
    for p, hits in zip(law.probabilities, sampled.counts):
        low, high = stats.binomtest(int(hits), sampled.draws).proportion_ci(0.99999, method="exact")
        assert low - 1e-12 <= p <= high + 1e-12, (p, hits / sampled.draws)


@pytest.mark.parametrize("seed", range(10))
def test_m_three_and_four_match_direct_samples(seed):
    _check_against_samples(seed, 200_000)  # the 10^8-draw run is under -m slow


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
def test_m_three_and_four_match_a_hundred_million_samples(seed):
    _check_against_samples(seed, 100_000_000)


def test_bad_input_is_named():
    labelings = np.array([[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="costs must be finite"):
        laplace_argmin_law(np.array([0.0, math.inf]), labelings, 1.0)
    with pytest.raises(ValueError, match="distinct"):
        laplace_argmin_law(np.zeros(2), np.array([[0, 1], [0, 1]]), 1.0)
    with pytest.raises(ValueError, match="scale"):
        laplace_argmin_law(np.zeros(2), labelings, -1.0)
    big = np.array([[(k >> j) & 1 for j in range(MAX_EXACT_POINTS + 1)] for k in range(2)])
    with pytest.raises(ValueError, match=f"at most {MAX_EXACT_POINTS} noisy points"):
        laplace_argmin_law(np.zeros(2), big, 1.0)
    with pytest.raises(ValueError, match="draws"):
        sampled_argmin_law(np.zeros(2), labelings, "gaussian", 1.0, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="chunk"):
        sampled_argmin_law(np.zeros(2), labelings, "gaussian", 1.0, 10, np.random.default_rng(0), chunk=0)


# ------------------------------------------------------------------------------------------------ streamed draws
@pytest.mark.parametrize("family", ["laplace", "gaussian"])
def test_the_sampled_law_does_not_depend_on_the_chunk(family):
    """The draws are one stream of the generator, whatever the chunk size (the default one included)."""
    costs, labelings = _instance(np.random.default_rng(4), 4, ties=False)
    counts = [
        sampled_argmin_law(costs, labelings, family, 2.0, 10_007, np.random.default_rng(9), chunk=chunk).counts
        for chunk in (1, 333, 10_007, None)
    ]
    for other in counts[1:]:
        np.testing.assert_array_equal(counts[0], other)


@pytest.mark.parametrize("m, K, draws", [(3, 8, 1_000_000), (10, 300, 200_000), (4, 16, 5_000)])
def test_sampled_law_memory_is_bounded_and_as_stated(m, K, draws):
    """The peak of what a sampled law allocates (tracemalloc) is within 25% of :func:`sampled_law_memory`, whose
    chunk keeps to :data:`CHUNK_BYTES`: it does not grow with the draws."""
    labelings = ((np.arange(K)[:, None] >> np.arange(m)[None, :]) & 1).astype(np.int8)
    costs = (np.arange(K) % 3).astype(np.float64)
    sampled_argmin_law(costs, labelings, "laplace", 2.0, 10, np.random.default_rng(0))  # warm-up
    tracemalloc.start()
    try:
        sampled_argmin_law(costs, labelings, "laplace", 2.0, draws, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    stated = sampled_law_memory(m, K, draws)
    assert 0.8 <= peak / stated <= 1.25, (peak, stated)
    assert draw_chunk(m, K, draws) * 8 * (m + K + 1) <= CHUNK_BYTES
    assert sampled_law_memory(m, K, 100 * draws) == stated or draw_chunk(m, K, draws) == draws
