"""The two private selections of the margin learners, as explicit output laws.

Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees":

* Algorithm 4, step 7: the exponential mechanism over the M candidates w^1..w^M with score -L_S(w^t), the empirical
  rho-hinge loss, at privacy epsilon/2: P(t) proportional to exp((epsilon/2) (-L_S(w^t)) / (2 Delta)), Delta the
  score's sensitivity (:func:`exponential_mechanism_log_probabilities`);
* Algorithm 6, step 2: the generalized exponential mechanism over the margin grid, after Raskhodnikova, Smith,
  "Lipschitz Extensions for Node-Private Graph Statistics and the Generalized Exponential Mechanism" (Algorithm 1):
  option j has an error F_j of sensitivity Delta_j; its normalised score
  s_j = max_i ((F_j + t Delta_j) - (F_i + t Delta_i)) / (Delta_j + Delta_i) has sensitivity at most 1, and the
  option is drawn with probability proportional to exp(-epsilon s_j / 2)
  (:func:`generalized_exponential_mechanism_log_probabilities`; the derivation: docs/theory/margin-learners.md).

Both return the whole output law as log-probabilities, so the learners sample from it and the tests compute the
exact privacy loss between neighbouring datasets from it (:func:`oraclepriv.privacy_loss`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "exponential_mechanism_log_probabilities",
    "generalized_exponential_mechanism_log_probabilities",
    "normalised_scores",
    "sample_index",
]


def exponential_mechanism_log_probabilities(losses: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    """log P(t) of the exponential mechanism choosing among candidates by their losses (lower is better).

    P(t) proportional to exp(-epsilon loss_t / (2 sensitivity)): epsilon-DP when every loss changes by at most
    ``sensitivity`` between neighbouring datasets (McSherry, Talwar, "Mechanism Design via Differential Privacy").

    Parameters
    ----------
    losses : array-like of shape (M,)
        The candidates' losses on the private data.
    epsilon : float
        The mechanism's privacy parameter, > 0.
    sensitivity : float
        A bound on the change of any candidate's loss between neighbours, > 0.

    Returns
    -------
    numpy.ndarray of shape (M,)
        The log-probabilities (they log-sum to 0).
    """
    logits = -float(epsilon) * np.asarray(losses, dtype=np.float64) / (2.0 * float(sensitivity))
    return logits - logsumexp(logits)


def normalised_scores(errors: np.ndarray, sensitivities: np.ndarray, shift: float) -> np.ndarray:
    """s_j = max_i ((F_j + t Delta_j) - (F_i + t Delta_i)) / (Delta_j + Delta_i), t = ``shift``; s_j >= 0.

    Each term moves by at most (Delta_j + Delta_i) / (Delta_j + Delta_i) = 1 between neighbours, and so does their
    maximum: the normalised score has sensitivity 1 whatever the Delta_j.
    """
    F = np.asarray(errors, dtype=np.float64)
    D = np.asarray(sensitivities, dtype=np.float64)
    penalised = F + float(shift) * D
    return np.max((penalised[:, None] - penalised[None, :]) / (D[:, None] + D[None, :]), axis=1)


def generalized_exponential_mechanism_log_probabilities(
    errors: np.ndarray, sensitivities: np.ndarray, epsilon: float, confidence: float
) -> np.ndarray:
    """log P(j) of the generalized exponential mechanism over options with errors F_j of sensitivities Delta_j.

    t = 2 log(K / beta) / epsilon (Raskhodnikova and Smith's choice; any t fixed in advance keeps the privacy);
    P(j) proportional to exp(-epsilon s_j / 2) with s_j of :func:`normalised_scores`: epsilon-DP.

    Parameters
    ----------
    errors : array-like of shape (K,)
        F_j on the private data (lower is better).
    sensitivities : array-like of shape (K,)
        Delta_j > 0, bounds on the change of F_j between neighbours, fixed in advance.
    epsilon : float
        The mechanism's privacy parameter, > 0.
    confidence : float
        beta in (0, 1), in t only.

    Returns
    -------
    numpy.ndarray of shape (K,)
        The log-probabilities.
    """
    K = len(np.asarray(errors))
    shift = 2.0 * math.log(K / float(confidence)) / float(epsilon)
    logits = -float(epsilon) * normalised_scores(errors, sensitivities, shift) / 2.0
    return logits - logsumexp(logits)


def sample_index(log_probabilities: np.ndarray, rng: np.random.Generator) -> int:
    """One draw from the law ``exp(log_probabilities)``."""
    p = np.exp(np.asarray(log_probabilities, dtype=np.float64))
    return int(rng.choice(len(p), p=p / p.sum()))
