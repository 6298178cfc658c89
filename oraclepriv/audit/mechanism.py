"""Audits of Algorithms 2 and 3 (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially
Private Learning with Public Data") through the vector Perturb releases.

Perturb (Algorithm 1) outputs a post-processing of u = fbar(Z) + gamma * zeta, so privacy of
Algorithms 2 and 3 is the privacy of releasing u (docs/theory/audits.md, section "Audits of
Algorithms 2 and 3"). The
audit therefore has two parts, both able to fail:

1. *Stability*: compute fbar(Z) on neighbouring datasets D, D' with the learner's own code (for
   Algorithm 2 with shared xi^(j), the coupling of Lemma 1) and check
   ||fbar_D(Z) - fbar_D'(Z)||_m <= rho, the radius the learner calibrated gamma with.
2. *Mechanism*: sample u under both centers with the learner's gamma and noise family and
   bound the privacy loss from below with Clopper–Pearson intervals on the events
   {log p_D(u)/p_D'(u) > t} (likelihood-ratio tails: the Neyman–Pearson-optimal events; the
   grid of t is fixed from gamma and the centers before sampling).

A learner passes iff both hold. The sampling is vectorised, so 10^5-10^6 draws take well under a
second, which is what detecting an epsilon a small factor too large needs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from oraclepriv.audit.runner import Neighbours
from oraclepriv.audit.stats import EpsilonEstimate, epsilon_from_event_counts
from oraclepriv.learners.perturb import sample_noise
from oraclepriv.public_data import PublicData

__all__ = ["ReleaseAuditResult", "audit_release", "audit_perturb_learner", "centers_for"]


@dataclass
class ReleaseAuditResult:
    """Verdict of a stability + mechanism audit of a Perturb-based learner."""

    scenario: str
    learner: str
    epsilon: float
    delta: float
    gamma: float
    noise: str
    distance_m: float  # ||fbar_D(Z) - fbar_D'(Z)||_m (RMS over the public points)
    rho: float  # the stability radius the learner calibrated with
    estimate: EpsilonEstimate
    n_samples: int
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def eps_lower(self) -> float:
        return self.estimate.eps_lower

    @property
    def stability_ok(self) -> bool:
        return self.distance_m <= self.rho * (1 + 1e-9)

    @property
    def passed(self) -> bool:
        return self.stability_ok and not (self.estimate.eps_lower > self.epsilon)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "learner": self.learner,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "gamma": self.gamma,
            "noise": self.noise,
            "distance_m": self.distance_m,
            "rho": self.rho,
            "stability_ok": self.stability_ok,
            "eps_lower": self.eps_lower,
            "eps_point": self.estimate.eps_point,
            "n_samples": self.n_samples,
            "passed": self.passed,
            "seconds": self.seconds,
            **self.extra,
        }


def _log_ratio(u: np.ndarray, c_a: np.ndarray, c_b: np.ndarray, gamma: float, noise: str) -> np.ndarray:
    """log p_a(u) - log p_b(u) for u = c + gamma*zeta, zeta ~ N(0,I) or Lap(1)^m."""
    if noise == "gaussian":
        return (((u - c_b) ** 2).sum(axis=1) - ((u - c_a) ** 2).sum(axis=1)) / (2 * gamma**2)
    return (np.abs(u - c_b).sum(axis=1) - np.abs(u - c_a).sum(axis=1)) / gamma


def audit_release(
    c_a: np.ndarray,
    c_b: np.ndarray,
    gamma: float,
    noise: str,
    *,
    epsilon: float,
    delta: float,
    n_samples: int = 200_000,
    n_thresholds: int = 40,
    alpha: float = 0.05,
    seed: int = 0,
) -> EpsilonEstimate:
    """Lower confidence bound on the privacy loss of releasing c + gamma*zeta for c in {c_a, c_b}."""
    c_a, c_b = np.asarray(c_a, float), np.asarray(c_b, float)
    rng = np.random.default_rng(seed)
    m = c_a.shape[0]
    if noise == "gaussian":
        dist = float(np.linalg.norm(c_a - c_b))
        t_max = dist**2 / (2 * gamma**2) + 5.0 * dist / gamma
    else:
        t_max = float(np.abs(c_a - c_b).sum()) / gamma  # the Laplace loss is bounded by l1/gamma
    thresholds = np.linspace(0.0, max(t_max, 1e-12), n_thresholds, endpoint=False)
    rows = []
    stats = {}
    for name, c in (("a", c_a), ("b", c_b)):
        u = c + gamma * sample_noise(rng, noise, n_samples * m).reshape(n_samples, m)
        stats[name] = _log_ratio(u, c_a, c_b, gamma, noise)
    for t in thresholds:
        ka, kb = int((stats["a"] > t).sum()), int((stats["b"] > t).sum())
        rows.append((f"L>{t:.3g}", "D>D'", ka, n_samples, kb, n_samples))
        ka2, kb2 = int((stats["b"] < -t).sum()), int((stats["a"] < -t).sum())
        rows.append((f"L<-{t:.3g}", "D'>D", ka2, n_samples, kb2, n_samples))
    return epsilon_from_event_counts(rows, alpha=alpha, delta=delta)


def centers_for(learner: Any, neighbours: Neighbours, seed: int = 0) -> tuple[np.ndarray, np.ndarray, Any]:
    """fbar(Z) on D and on D' computed by the learner's own code (shared xi for Algorithm 2).

    Fits the learner on D first (for its calibrated ``gamma_`` and validated parameters).
    """
    learner.set_params(random_state=seed)
    learner.fit(neighbours.X, neighbours.y, X_public=PublicData(neighbours.X_public))
    Z = neighbours.X_public if getattr(learner, "m", None) is None else neighbours.X_public[: learner.m]
    if hasattr(learner, "regularized_erm"):
        c_a = learner.regularized_erm(neighbours.X, neighbours.y, Z)
        c_b = learner.regularized_erm(neighbours.X_prime, neighbours.y_prime, Z)
    else:
        oracle = learner._oracle()
        xis = np.random.default_rng(seed).standard_normal((int(learner.J), Z.shape[0]))
        c_a = learner.perturbed_erm_average(oracle, neighbours.X, neighbours.y, Z, xis)
        c_b = learner.perturbed_erm_average(oracle, neighbours.X_prime, neighbours.y_prime, Z, xis)
    return c_a, c_b, learner


def audit_perturb_learner(
    learner: Any,
    neighbours: Neighbours,
    *,
    n_samples: int = 200_000,
    alpha: float = 0.05,
    seed: int = 0,
) -> ReleaseAuditResult:
    """Stability + mechanism audit of a fitted-or-not Perturbation / Regularization learner."""
    start = time.perf_counter()
    c_a, c_b, learner = centers_for(learner, neighbours, seed)
    noise = getattr(learner, "noise", "gaussian")
    estimate = audit_release(
        c_a,
        c_b,
        learner.gamma_,
        noise,
        epsilon=learner.epsilon_,
        delta=learner.delta_,
        n_samples=n_samples,
        alpha=alpha,
        seed=seed + 1,
    )
    m = len(c_a)
    return ReleaseAuditResult(
        scenario=neighbours.name,
        learner=type(learner).__name__,
        epsilon=learner.epsilon_,
        delta=learner.delta_,
        gamma=float(learner.gamma_),
        noise=noise,
        distance_m=float(np.linalg.norm(c_a - c_b) / np.sqrt(m)),
        rho=float(learner.privacy_["stability_radius"]),
        estimate=estimate,
        n_samples=n_samples,
        seconds=time.perf_counter() - start,
    )
