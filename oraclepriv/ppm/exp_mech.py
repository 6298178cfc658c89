"""The exponential mechanism of A_LearnHalf step 9 (R. Bassily, S. Moran, A. Nandi, "Learning from Mixtures
of Private and Public Populations", Alg. 2; McSherry-Talwar 2007; ``docs/theory/ppm.md#sampler``).

Score q(S', g) = -m(g)/n with m(g) the integer number of mistakes of g on all n examples. Under
substitution of one private record (label included) m changes by at most 1, i.e. Δq = 1/n, so

    Pr[ĝ = g] = exp(-ε m(g) / 2) / Σ_{g' ∈ G} exp(-ε m(g') / 2)          (pure ε-DP, δ = 0)

Privacy map: for neighbouring S, S' every ratio Pr_S(g) / Pr_S'(g) lies in [e^{-ε}, e^{ε}] (the
numerator moves by at most e^{ε/2}, the normaliser by at most e^{ε/2}).

Accuracy (Dwork-Roth Thm 3.11): with probability >= 1 - β,
m(ĝ) <= min_G m + (2/ε)(ln|G| + ln(1/β))  (:func:`accuracy_slack`).

Sampling (two-pass histogram; exact): draw m* with probability proportional to
N_m e^{-εm/2} (Gumbel-max over the n+1 buckets, in log space), then a uniform member among the N_{m*}
with that score. Pr[g] = N_m e^{-εm/2}/Z · 1/N_m = e^{-εm/2}/Z: the mechanism above. As with any
floating-point implementation, the Mironov (2012) caveats about float sampling apply.

``epsilon = inf`` is a non-private debug mode (uniform over the minimisers;
``docs/theory/ppm.md#epsilon-inf``, case 6).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from oraclepriv.validation import check_epsilon as check_any_epsilon

__all__ = [
    "log_probabilities",
    "sample_from_histogram",
    "accuracy_slack",
    "check_epsilon",
    "exceedance_probability",
]


def check_epsilon(epsilon: Any) -> float:
    """The mechanism's epsilon: :func:`oraclepriv.validation.check_epsilon` (the one rule of the library and the
    command line) with ``inf`` taken, the non-private debug mode above."""
    return check_any_epsilon(epsilon, allow_inf=True)


def log_probabilities(mistakes: np.ndarray, epsilon: float) -> np.ndarray:
    """Exact log Pr[ĝ = g] for an explicit list of per-member mistake counts (tiny G only)."""
    m = np.asarray(mistakes, dtype=np.float64)
    eps = check_epsilon(epsilon)
    if math.isinf(eps):
        best = m == m.min()
        with np.errstate(divide="ignore"):
            return np.where(best, -math.log(best.sum()), -np.inf)
    logw = -eps * m / 2.0
    top = logw.max()
    return logw - (top + math.log(np.exp(logw - top).sum()))


def sample_from_histogram(hist: np.ndarray, epsilon: float, rng: np.random.Generator) -> tuple[int, int]:
    """Draw (m*, r): the score bucket m* ∝ N_m e^{-εm/2}, and a uniform rank r in [0, N_{m*})."""
    hist = np.asarray(hist)
    eps = check_epsilon(epsilon)
    support = np.flatnonzero(hist > 0)
    if support.size == 0:
        raise ValueError("the histogram is empty: G has no members")
    if math.isinf(eps):
        m_star = int(support[0])
    else:
        logw = np.log(hist[support].astype(np.float64)) - eps * support / 2.0
        m_star = int(support[np.argmax(logw + rng.gumbel(size=support.size))])
    r = int(rng.integers(int(hist[m_star])))
    return m_star, r


def accuracy_slack(size_G: int, epsilon: float, beta: float) -> float:
    """(2/ε)(ln|G| + ln(1/β)): Pr[m(ĝ) > min m + slack] <= β (Dwork-Roth Thm 3.11)."""
    eps = check_epsilon(epsilon)
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1); got {beta!r}")
    return 2.0 / eps * (math.log(size_G) + math.log(1.0 / beta))


def exceedance_probability(hist: np.ndarray, epsilon: float, threshold: float) -> float:
    """Exact Pr[m(ĝ) > threshold] under the mechanism, from the histogram of mistake counts."""
    hist = np.asarray(hist)
    eps = check_epsilon(epsilon)
    support = np.flatnonzero(hist > 0)
    if math.isinf(eps):
        return float(support[0] > threshold)
    logw = np.log(hist[support].astype(np.float64)) - eps * support / 2.0
    top = logw.max()
    w = np.exp(logw - top)
    return float(w[support > threshold].sum() / w.sum())
