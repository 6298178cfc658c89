"""The design of the margin-utility experiment (:mod:`oraclepriv.experiments.margin_utility`): its constants, its
synthetic margin distribution, and the shapes of the bounds of Bassily, Mohri, Suresh, "Differentially Private
Learning with Margin Guarantees" (Theorem 3.2, Lemma 3.1) with their constants set to 1."""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "CONFIDENCE",
    "DELTA",
    "DIMENSION",
    "FULL",
    "MARGIN",
    "N_STEPS",
    "N_TEST",
    "QUICK",
    "SWEEP_SIZE",
    "lemma_3_1_shape",
    "sample_margin_data",
    "theorem_3_2_shape",
]

DIMENSION = 20
MARGIN = 0.25
DELTA = 1e-6
CONFIDENCE = 0.05
N_STEPS = 50
N_TEST = 20_000
FULL = {"sizes": (1000, 3000, 10_000, 30_000, 100_000), "epsilons": (1.0, 4.0), "sweep": (0.5, 1.0, 2.0, 4.0, 8.0)}
QUICK = {"sizes": (1000, 3000, 10_000), "epsilons": (1.0, 4.0), "sweep": (0.5, 1.0, 2.0, 4.0)}
#: the m of the sweep over epsilon
SWEEP_SIZE = {"full": 10_000, "quick": 3000}


def sample_margin_data(m: int, rng: np.random.Generator, d: int = DIMENSION, margin: float = MARGIN):
    """m records of the margin distribution (described in :mod:`oraclepriv.experiments.margin_utility`), 0/1 labels."""
    u = rng.uniform(margin, 1.0, m)
    v = rng.normal(size=(m, d - 1))
    v /= np.linalg.norm(v, axis=1)[:, None]
    y = rng.integers(0, 2, m)
    X = np.hstack([((2 * y - 1) * u)[:, None], np.sqrt(1.0 - u**2)[:, None] * v]) * 0.999
    return X, y.astype(np.int8)


def theorem_3_2_shape(m: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """Theorem 3.2's excess term with constants 1 (Lambda = r = 1, rho, delta, beta of this experiment)."""
    from oraclepriv.learners.margin_algorithms import bound_penalty

    m, epsilon = np.broadcast_arrays(np.asarray(m, float), np.asarray(epsilon, float))
    return np.array(
        [bound_penalty(np.array([MARGIN]), int(n), 1.0, float(e), DELTA, CONFIDENCE)[0] for n, e in zip(m, epsilon)]
    )


def lemma_3_1_shape(m: np.ndarray, epsilon: np.ndarray, k: int = DIMENSION) -> np.ndarray:
    """Lemma 3.1's excess term with constants 1 and k = ``k`` (Lambda = r~ = 1)."""
    m, epsilon = np.broadcast_arrays(np.asarray(m, float), np.asarray(epsilon, float))
    private = math.sqrt(k) * math.log(1.0 / DELTA) ** 1.5 * math.log(1.0 / CONFIDENCE)
    return (1.0 / MARGIN) * (1.0 / np.sqrt(m) + private / (epsilon * m))
