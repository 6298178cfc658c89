"""Black-box privacy audits of whole learners on neighbouring private datasets.

Procedure (implementation notes §5.2): fix the public points (and, per pitfall P17, possibly the
public random labels Ytilde); run the *whole* learner N times on D and N times on a neighbour D'
(one private record replaced), each run with fresh randomness; map each released hypothesis to a
discrete outcome — its labeling of the public points plus its predictions at probe points (by
default the differing record's x, where a learner that leaks the intermediate fhat shows it);
then bound the privacy loss from below with Clopper–Pearson intervals
(:func:`~oraclepriv.audit.stats.estimate_epsilon`). The audit *fails* (``passed = False``) when
that lower confidence bound exceeds the claimed epsilon.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

import numpy as np

from oraclepriv.audit.stats import EpsilonEstimate, estimate_epsilon

__all__ = ["Neighbours", "AuditResult", "outcome_key", "sample_outcomes", "audit_learner", "check_n_jobs"]


@dataclass
class Neighbours:
    """Two private datasets differing in one record, plus the fixed public data of the audit."""

    name: str
    X: np.ndarray
    y: np.ndarray
    X_prime: np.ndarray
    y_prime: np.ndarray
    X_public: np.ndarray
    hypothesis: str
    public_labels: np.ndarray | None = None  # fixed Ytilde (P17); None: drawn by the learner
    probes: np.ndarray | None = None  # extra points whose predictions are part of the outcome
    notes: str = ""
    expected_log_ratio: float | None = None  # exact worst-case log-ratio, when known (e.g. eps)
    target_outcome: Hashable | None = None  # labeling of the public points attaining it, when known

    def __post_init__(self) -> None:
        if self.X.shape != self.X_prime.shape:
            raise ValueError(f"neighbours must have the same shape; got {self.X.shape} and {self.X_prime.shape}")
        differ = np.any(self.X != self.X_prime, axis=1) | (self.y != self.y_prime)
        if int(differ.sum()) > 1:
            raise ValueError(f"D and D' must differ in at most one record; they differ in {int(differ.sum())}")
        if self.probes is None:
            rows = np.flatnonzero(differ)
            self.probes = self.X[rows] if rows.size else np.empty((0, self.X.shape[1]))


def outcome_key(hypothesis: Any, X_public: np.ndarray, probes: np.ndarray) -> tuple[int, ...]:
    """A released hypothesis as a discrete outcome: labels on the public points, then on the probes."""
    pts = np.vstack([X_public, probes]) if len(probes) else X_public
    return tuple(int(v) for v in np.asarray(hypothesis.predict(pts)).ravel())


@dataclass
class AuditResult:
    """Verdict of one audit: ``passed`` iff the lower confidence bound on the loss is <= epsilon."""

    scenario: str
    learner: str
    epsilon: float
    delta: float
    n_runs: int
    estimate: EpsilonEstimate
    seconds: float
    expected_log_ratio: float | None = None
    target_rates: tuple[float, float] | None = None  # empirical P(target) under D and D'
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def eps_lower(self) -> float:
        return self.estimate.eps_lower

    @property
    def eps_point(self) -> float:
        return self.estimate.eps_point

    @property
    def passed(self) -> bool:
        return not (self.estimate.eps_lower > self.epsilon)

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "learner": self.learner,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "n_runs": self.n_runs,
            "eps_lower": self.eps_lower,
            "eps_point": self.eps_point,
            "worst_event": repr(self.estimate.worst_event),
            "worst_direction": self.estimate.worst_direction,
            "n_events": self.estimate.n_events,
            "alpha": self.estimate.alpha,
            "passed": self.passed,
            "expected_log_ratio": self.expected_log_ratio,
            "target_rates": self.target_rates,
            "seconds": self.seconds,
            **self.extra,
        }


def sample_outcomes(
    make_learner: Callable[[int], Any],
    X: np.ndarray,
    y: np.ndarray,
    neighbours: Neighbours,
    n_runs: int,
    seeds: np.ndarray,
) -> list[tuple[int, ...]]:
    """Fit ``make_learner(seed)`` on (X, y) once per seed; return the outcome keys."""
    outcomes = []
    for seed in seeds[:n_runs]:
        learner = make_learner(int(seed))
        fit_params = {}
        if neighbours.public_labels is not None and getattr(learner, "accepts_public_labels", False):
            fit_params["public_labels"] = neighbours.public_labels  # fixed Ytilde (P17)
        learner.fit(X, y, X_public=neighbours.X_public, **fit_params)
        outcomes.append(outcome_key(learner.hypothesis_, neighbours.X_public, neighbours.probes))
    return outcomes


def _outcomes_chunk(make_learner, X, y, neighbours, seeds, backends: dict[str, Any]) -> list[tuple[int, ...]]:
    """One worker's share of the runs. ``backends``: the parent's backend registry, so backends
    registered for the audit (``registered_backend``: targeting solvers, broken heuristics) exist in
    the worker process too."""
    from oraclepriv.oracle import BACKENDS

    BACKENDS.update(backends)
    return sample_outcomes(make_learner, X, y, neighbours, len(seeds), seeds)


def _outcomes(make_learner, X, y, neighbours: Neighbours, seeds: np.ndarray, n_jobs: int) -> list[tuple[int, ...]]:
    """``sample_outcomes`` over ``seeds``, split over ``n_jobs`` worker processes (joblib/loky).
    Every run's seed is fixed in advance and the outcomes come back in seed order, so the result is
    the same for every ``n_jobs``."""
    if n_jobs == 1:
        return sample_outcomes(make_learner, X, y, neighbours, len(seeds), seeds)
    from joblib import Parallel, delayed, effective_n_jobs

    from oraclepriv.oracle import BACKENDS

    chunks = [c for c in np.array_split(seeds, 4 * effective_n_jobs(n_jobs)) if len(c)]
    parts = Parallel(n_jobs=n_jobs)(
        delayed(_outcomes_chunk)(make_learner, X, y, neighbours, c, dict(BACKENDS)) for c in chunks
    )
    return [o for part in parts for o in part]


def check_n_jobs(n_jobs: Any) -> int:
    """n_jobs: a positive integer, or -1 for every CPU (joblib's convention)."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or not (n_jobs >= 1 or n_jobs == -1):
        raise ValueError(f"n_jobs must be a positive integer or -1 (every CPU); got {n_jobs!r}")
    return int(n_jobs)


def audit_learner(
    make_learner: Callable[[int], Any],
    neighbours: Neighbours,
    *,
    epsilon: float,
    delta: float = 0.0,
    n_runs: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
    learner_name: str | None = None,
    n_jobs: int = 1,
) -> AuditResult:
    """Run the learner ``n_runs`` times on each neighbour and bound its privacy loss from below.

    ``make_learner(seed)`` must return an unfitted learner using ``seed`` as its random_state
    (so every run has fresh, independent randomness). The runs on D and D' use disjoint seeds.
    ``n_jobs`` > 1 spreads the runs over that many processes (joblib); the outcomes, and so the
    verdict, do not depend on it.
    """
    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1; got {n_runs!r}")
    n_jobs = check_n_jobs(n_jobs)
    start = time.perf_counter()
    seeds = np.random.default_rng(seed).choice(2**62, size=2 * n_runs, replace=False)
    out_a = _outcomes(make_learner, neighbours.X, neighbours.y, neighbours, seeds[:n_runs], n_jobs)
    out_b = _outcomes(make_learner, neighbours.X_prime, neighbours.y_prime, neighbours, seeds[n_runs:], n_jobs)
    estimate = estimate_epsilon(out_a, out_b, alpha=alpha, delta=delta)
    rates = None
    if neighbours.target_outcome is not None:
        m = len(neighbours.X_public)
        target = tuple(neighbours.target_outcome)
        rates = (
            sum(o[:m] == target for o in out_a) / n_runs,
            sum(o[:m] == target for o in out_b) / n_runs,
        )
    name = learner_name or type(make_learner(0)).__name__
    return AuditResult(
        scenario=neighbours.name,
        learner=name,
        epsilon=float(epsilon),
        delta=float(delta),
        n_runs=n_runs,
        estimate=estimate,
        seconds=time.perf_counter() - start,
        expected_log_ratio=neighbours.expected_log_ratio,
        target_rates=rates,
    )
