"""Perturb — Algorithm 1 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially
Private Learning with Public Data" (docs/theory/block-et-al.md, section "Algorithm 1: Perturb").

    Perturb(fbar, Q, gamma, Z):  zeta_i ~ Q i.i.d.,  t_i = fbar(Z_i) + gamma * zeta_i,
                                 output  argmin_{f in F}  sum_i (f(Z_i) - t_i)^2.

The output depends on ``fbar`` only through the target vector (fbar(Z_1), ..., fbar(Z_m)), so
Perturb is post-processing of that (noisy) vector: this module's functions take the *vector*,
never a model, and the oracle call sees only the public points.

Reduction for {0,1}-valued classes (exact, not a surrogate): since f(Z_i)^2 = f(Z_i),

    sum_i (f(Z_i) - t_i)^2 = sum_i t_i^2 + sum_i f(Z_i) * (1 - 2 t_i),

so predicting 1 on Z_i costs (1 - 2 t_i) and predicting 0 costs nothing: a weighted 0-1 problem
with label 0 and *signed* weight 1 - 2 t_i on every public point (the oracle protocol reduces
signed weights exactly). With gamma = 0 and t = fbar(Z) in {0,1} this is the realizable
consistency problem of Algorithm 4's last step (weights -1 on points fbar labels 1, +1 else).

Noise: Q = "gaussian" is N(0, 1) (std gamma after scaling); Q = "laplace" is Lap(1)
(scale gamma after scaling) — the paper's Q = Lap(1) multiplied by gamma; never scale twice
(docs/theory/block-et-al.md, pitfall P2).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from oraclepriv.oracle import OracleResult
from oraclepriv.protocols import ERMOracle
from oraclepriv.validation import as_features

__all__ = [
    "NOISE_FAMILIES",
    "PerturbOutput",
    "calibrate_gamma",
    "gaussian_mechanism_sigma",
    "least_squares_weights",
    "perturb",
    "sample_noise",
    "squared_error",
]

NOISE_FAMILIES = ("gaussian", "laplace")


def sample_noise(rng: np.random.Generator, family: str, size: int) -> np.ndarray:
    """zeta ~ Q i.i.d.: N(0, 1) or Lap(1) (density exp(-|x|)/2)."""
    if family == "gaussian":
        return rng.standard_normal(size)
    if family == "laplace":
        return rng.laplace(0.0, 1.0, size)
    raise ValueError(f"noise must be one of {list(NOISE_FAMILIES)}; got {family!r}")


def least_squares_weights(targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels and signed weights of the weighted 0-1 problem equivalent to least squares.

    For f in {0,1}:  sum_i (f_i - t_i)^2 = sum_i t_i^2 + sum_i w_i 1[f_i != 0],  w_i = 1 - 2 t_i.
    Returns (labels = 0, weights = 1 - 2 t).
    """
    t = np.asarray(targets, dtype=np.float64)
    if t.ndim != 1 or not np.all(np.isfinite(t)):
        raise ValueError(f"targets must be a finite 1-D array; got shape {t.shape}")
    return np.zeros(t.shape[0], dtype=np.int8), 1.0 - 2.0 * t


def squared_error(predictions: np.ndarray, targets: np.ndarray) -> float:
    """sum_i (f(Z_i) - t_i)^2 — Algorithm 1's objective, times m."""
    diff = np.asarray(predictions, dtype=np.float64) - np.asarray(targets, dtype=np.float64)
    return float(diff @ diff)


@dataclass
class PerturbOutput:
    """The released hypothesis of Algorithm 1 and what its one oracle call reported."""

    hypothesis: object
    targets: np.ndarray  # t = center + gamma * zeta (what the oracle saw, with Z)
    result: OracleResult
    #: sum_i (f(Z_i) - t_i)^2 of the returned hypothesis
    objective: float


def perturb(
    oracle: ERMOracle,
    X_public: np.ndarray,
    center: np.ndarray,
    gamma: float,
    noise: str,
    rng: np.random.Generator,
    *,
    caller: str,
    step: str = "perturb",
) -> PerturbOutput:
    """Perturb (Algorithm 1) for a {0,1}-valued class: one fresh oracle call on the public points only.

    Algorithm 1 of Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning
    with Public Data": targets ``t = center + gamma * zeta``, zeta i.i.d. from the noise law, then the
    least-squares fit to t over the class, solved exactly as a weighted 0-1 problem. The call sees
    exactly (Z, labels 0, weights 1 - 2 t): no model, no warm start. Ties are broken by the oracle's
    deterministic rule (a function of its inputs).

    Parameters
    ----------
    oracle : ERMOracle
        The oracle (:class:`oraclepriv.protocols.ERMOracle`).
    X_public : numpy.ndarray of shape (m, d)
        The public points Z.
    center : numpy.ndarray of shape (m,)
        The vector fbar(Z) in the {0,1} encoding; it may be real-valued (e.g. an average of
        hypotheses).
    gamma : float
        The noise scale, finite and >= 0 (0: no noise).
    noise : {"gaussian", "laplace"}
        The noise law Q: N(0, 1) or Lap(1), scaled by gamma once (docs/theory/block-et-al.md, pitfall
        P2).
    rng : numpy.random.Generator
        The source of the noise.
    caller : str
        Who calls, as recorded in the ledger.
    step : str, default "perturb"
        The step, as recorded in the ledger.

    Returns
    -------
    PerturbOutput
        The released hypothesis, the targets, the oracle's answer and the least-squares objective.

    Raises
    ------
    ValueError
        When ``center`` has not one entry per public point or ``gamma`` is negative or not finite.
    """
    Z = as_features(X_public, "X_public")
    center = np.asarray(center, dtype=np.float64)
    if center.shape != (Z.shape[0],):
        raise ValueError(f"center must have one entry per public point ({Z.shape[0]}); got shape {center.shape}")
    if not (gamma >= 0 and np.isfinite(gamma)):
        raise ValueError(f"gamma must be a finite number >= 0; got {gamma!r}")
    if gamma > 0:
        targets = center + gamma * sample_noise(rng, noise, Z.shape[0])
    else:
        targets = center.copy()
    labels, weights = least_squares_weights(targets)
    result = oracle.solve(Z, labels, weights, caller=caller, step=step)
    objective = squared_error(result.hypothesis.predict(Z), targets)
    return PerturbOutput(result.hypothesis, targets, result, objective)


# ----------------------------------------------------------------------------------------------
# Calibration of gamma: Perturb releases u = fbar(Z) + gamma * zeta (then post-processes it), so
# gamma is set by the standard mechanisms on u (docs/theory/block-et-al.md, section "Calibrating
# gamma"), from a stability radius rho with
# ||fbar_D - fbar_D'||_m <= rho, i.e. ||u-shift||_2 <= sqrt(m) rho and ||u-shift||_1 <= m rho.
# ----------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def gaussian_mechanism_sigma(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest std of the analytic Gaussian mechanism (Balle & Wang 2018, Thm 8) for (eps, delta)-DP.

    N(0, s^2 I) added to a vector of l2-sensitivity Delta is (eps, delta)-DP iff
    Phi(Delta/(2s) - eps s/Delta) - e^eps Phi(-Delta/(2s) - eps s/Delta) <= delta.
    """
    from scipy.optimize import brentq
    from scipy.stats import norm

    if not (l2_sensitivity > 0 and np.isfinite(l2_sensitivity)):
        raise ValueError(f"l2_sensitivity must be a finite number > 0; got {l2_sensitivity!r}")
    if not (epsilon > 0 and np.isfinite(epsilon)) or not (0 < delta < 1):
        raise ValueError(f"need a finite epsilon > 0 and 0 < delta < 1; got epsilon={epsilon!r}, delta={delta!r}")

    def excess(log_s: float) -> float:
        s = np.exp(log_s)
        a, b = l2_sensitivity / (2 * s), epsilon * s / l2_sensitivity
        # e^eps Phi(-a - b) in log space: e^eps alone overflows beyond eps = 709.78
        return float(norm.cdf(a - b) - np.exp(epsilon + norm.logcdf(-a - b)) - delta)

    lo, hi = np.log(l2_sensitivity) - 20.0, np.log(l2_sensitivity) + 20.0
    return float(np.exp(brentq(excess, lo, hi, xtol=1e-12))) * (1 + 1e-9)


def calibrate_gamma(
    noise: str, rho: float, m: int, epsilon: float, delta: float, *, laplace_factor: str = "standard"
) -> float:
    """gamma for Perturb's release of u = fbar(Z) + gamma * zeta, given the stability radius rho.

    Gaussian (zeta ~ N(0,1)): analytic Gaussian mechanism with l2-sensitivity sqrt(m) * rho.
    Laplace (zeta ~ Lap(1)): gamma = m rho / eps (l1-sensitivity <= m rho, "standard", our derivation in
    docs/theory/block-et-al.md, section "Calibrating gamma") or the paper's Lemma 3/9 condition
    gamma = m^{3/2} rho / eps ("paper", looser).
    """
    if noise == "gaussian":
        return gaussian_mechanism_sigma(float(np.sqrt(m) * rho), float(epsilon), float(delta))
    if noise == "laplace":
        if laplace_factor == "standard":
            return m * rho / epsilon
        if laplace_factor == "paper":
            return m**1.5 * rho / epsilon
        raise ValueError(f"laplace_factor must be 'standard' or 'paper'; got {laplace_factor!r}")
    raise ValueError(f"noise must be one of {list(NOISE_FAMILIES)}; got {noise!r}")
