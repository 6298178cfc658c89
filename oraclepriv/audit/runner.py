"""Black-box privacy audits of whole learners on neighbouring private datasets.

Procedure: fix the public points (and possibly the public random labels Ytilde: the guarantee holds
for every fixed Ytilde); run the *whole* learner N times on D and N times on a neighbour D' (one
private record replaced), each run with fresh randomness; the outcome of a run is the learner's
whole release, serialised (:mod:`oraclepriv.release`: what its guarantee covers); then bound the
privacy loss from below with Clopper–Pearson intervals
(:func:`~oraclepriv.audit.stats.estimate_epsilon`). The audit *fails* (``passed = False``) when
that lower confidence bound exceeds the claimed epsilon.

For learners whose release is a noisy argmin over the labelings of the public points (RRSPM and its
variants), :func:`audit_reduced` samples the same law without running the learner per draw: the
costs c_D(L) come from the exact oracle once per dataset, the noise is drawn in bulk and the
winning labeling is mapped to the release by the learner's own release step, so 10^6-10^7 runs
cost seconds (:mod:`oraclepriv.verify`). :func:`detectable_loss` states an audit's power.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from oraclepriv.audit.stats import EpsilonEstimate, epsilon_from_event_counts, estimate_epsilon
from oraclepriv.execution import check_n_jobs
from oraclepriv.public_data import PublicData
from oraclepriv.release import PrivacyLeakWarning

log = logging.getLogger(__name__)

__all__ = [
    "Neighbours",
    "AuditResult",
    "outcome_key",
    "sample_outcomes",
    "audit_learner",
    "audit_reduced",
    "check_n_jobs",
    "detectable_loss",
]


@dataclass
class Neighbours:
    """Two private datasets differing in one record, plus the fixed public data of the audit.

    Parameters
    ----------
    name : str
        The scenario's name.
    X : numpy.ndarray of shape (n, d)
        The private features of D.
    y : numpy.ndarray of shape (n,)
        The private labels of D.
    X_prime : numpy.ndarray of shape (n, d)
        The private features of D'.
    y_prime : numpy.ndarray of shape (n,)
        The private labels of D' (D and D' differ in at most one record).
    X_public : numpy.ndarray of shape (m, d)
        The public points, the same for both.
    hypothesis_class : str
        The class the audited learner uses.
    public_labels : numpy.ndarray or None, default None
        Fixed random labels of the public points (docs/theory/block-et-al.md, pitfall P17); None:
        drawn by the learner.
    probes : numpy.ndarray or None, default None
        Extra points whose predictions are part of the outcome; None: the record that differs.
    notes : str, default ""
        What the scenario shows.
    expected_log_ratio : float or None, default None
        The exact worst-case log-ratio, when known (e.g. epsilon for a tight construction).
    target_outcome : tuple of int or None, default None
        The labeling of the public points that attains it, when known.

    Raises
    ------
    ValueError
        When D and D' differ in shape or in more than one record.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    X_prime: np.ndarray
    y_prime: np.ndarray
    X_public: np.ndarray
    hypothesis_class: str
    # fixed Ytilde (docs/theory/block-et-al.md, pitfall P17); None: drawn by the learner
    public_labels: np.ndarray | None = None
    probes: np.ndarray | None = None  # extra points whose predictions are part of the outcome
    notes: str = ""
    expected_log_ratio: float | None = None  # exact worst-case log-ratio, when known (e.g. eps)
    target_outcome: tuple[int, ...] | None = None  # labeling of the public points attaining it, when known

    def __post_init__(self) -> None:
        if self.X.shape != self.X_prime.shape:
            raise ValueError(f"neighbours must have the same shape; got {self.X.shape} and {self.X_prime.shape}")
        differ = np.any(self.X != self.X_prime, axis=1) | (self.y != self.y_prime)
        if int(differ.sum()) > 1:
            raise ValueError(f"D and D' must differ in at most one record; they differ in {int(differ.sum())}")
        if self.probes is None:
            rows = np.flatnonzero(differ)
            self.probes = self.X[rows] if rows.size else np.empty((0, self.X.shape[1]))


def outcome_key(hypothesis: Any, X_public: np.ndarray, probes: np.ndarray | None = None) -> tuple[int, ...]:
    """A released hypothesis as a discrete outcome: its labels on the public points, then on the probes.

    Parameters
    ----------
    hypothesis : Hypothesis
        The released hypothesis.
    X_public : numpy.ndarray of shape (m, d)
        The public points.
    probes : numpy.ndarray of shape (k, d) or None, default None
        The probes (None: none).

    Returns
    -------
    tuple of int
        The labels.
    """
    pts = np.vstack([X_public, probes]) if probes is not None and len(probes) else X_public
    return tuple(int(v) for v in np.asarray(hypothesis.predict(pts)).ravel())


@dataclass
class AuditResult:
    """The verdict of one audit: ``passed`` iff the lower confidence bound on the loss is <= epsilon.

    Parameters
    ----------
    scenario : str
        The scenario's name.
    learner : str
        The learner's name.
    epsilon : float
        The claimed epsilon.
    delta : float
        The claimed delta.
    n_runs : int
        Runs on each of D and D'.
    estimate : EpsilonEstimate
        The confidence bound and the point estimate of the loss.
    seconds : float
        Wall-clock seconds of the audit.
    expected_log_ratio : float or None, default None
        The scenario's exact worst-case log-ratio, when known.
    target_rates : tuple of float or None, default None
        The empirical probabilities of the target outcome under D and D'.
    extra : dict, default {}
        More facts, added to :meth:`to_dict`.
    """

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
        """The result as a JSON-friendly dict.

        Returns
        -------
        dict
            The fields, the estimate's bounds and ``passed``.
        """
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
) -> list[tuple[str, tuple[int, ...]]]:
    """Fit ``make_learner(seed)`` on (X, y) once per seed; return (the release as canonical JSON, the
    release's labels on the public points and probes) per run. The JSON is the audited outcome."""
    outcomes = []
    for seed in seeds[:n_runs]:
        learner = make_learner(int(seed))
        with warnings.catch_warnings():  # audits run weakened configurations (flag mode) on purpose
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            learner.fit(X, y, X_public=PublicData(neighbours.X_public), **_fit_params(learner, neighbours))
        release = learner.release_.to_json() if hasattr(learner, "release_") else repr(learner.hypothesis_)
        outcomes.append((release, outcome_key(learner.hypothesis_, neighbours.X_public, neighbours.probes)))
    return outcomes


def _fit_params(learner: Any, neighbours: Neighbours) -> dict[str, Any]:
    if neighbours.public_labels is not None and getattr(learner, "accepts_public_labels", False):
        return {"public_labels": neighbours.public_labels}  # a fixed Ytilde: the guarantee holds for each
    return {}


def _outcomes_chunk(
    make_learner: Callable[[int], Any],
    X: np.ndarray,
    y: np.ndarray,
    neighbours: Neighbours,
    seeds: np.ndarray,
    backends: dict[str, Any],
) -> list[tuple[str, tuple[int, ...]]]:
    """One worker's share of the runs. ``backends``: the parent's backend registry, so backends
    registered for the audit (``registered_backend``: targeting solvers, broken heuristics) exist in
    the worker process too."""
    from oraclepriv.backends import restore_registry

    restore_registry(backends)
    return sample_outcomes(make_learner, X, y, neighbours, len(seeds), seeds)


def _outcomes(
    make_learner: Callable[[int], Any],
    X: np.ndarray,
    y: np.ndarray,
    neighbours: Neighbours,
    seeds: np.ndarray,
    n_jobs: int,
) -> list[tuple[str, tuple[int, ...]]]:
    """``sample_outcomes`` over ``seeds``, in this process for ``n_jobs`` = 1, otherwise cut into four
    shares per worker and run where :mod:`oraclepriv.execution` says (local processes or a dask
    cluster). Every run's seed is fixed in advance and the outcomes come back in seed order, so the
    result is the same for every ``n_jobs`` and every backend."""
    from oraclepriv.execution import dask_active, effective_workers, parallel_map

    if n_jobs == 1 and not dask_active():
        return sample_outcomes(make_learner, X, y, neighbours, len(seeds), seeds)
    from oraclepriv.backends import registry_snapshot

    chunks = [c for c in np.array_split(seeds, 4 * effective_workers(n_jobs)) if len(c)]
    log.debug("audit %s: %d runs in %d tasks", neighbours.name, len(seeds), len(chunks))
    snapshot = registry_snapshot()
    parts = parallel_map(_outcomes_chunk, [(make_learner, X, y, neighbours, c, snapshot) for c in chunks], n_jobs)
    return [o for part in parts for o in part]


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
    ``n_jobs`` > 1 spreads the runs over that many processes, and inside
    :func:`oraclepriv.execution.execution` with dask over the cluster; the outcomes, and so the
    verdict, depend on neither.

    Parameters
    ----------
    make_learner : callable
        ``make_learner(seed)`` returns an unfitted learner with ``seed`` as its random_state, so every
        run has fresh, independent randomness.
    neighbours : Neighbours
        The two datasets and the public data.
    epsilon : float
        The claimed epsilon.
    delta : float, default 0.0
        The claimed delta.
    n_runs : int, default 2000
        Runs on each dataset, >= 1.
    alpha : float, default 0.05
        One minus the confidence of the lower bound.
    seed : int, default 0
        The seed of the runs' seeds (the runs on D and D' use disjoint seeds).
    learner_name : str or None, default None
        The learner's name in the result; None: its class name.
    n_jobs : int, default 1
        Worker processes.

    Returns
    -------
    AuditResult
        The lower confidence bound on the loss and the verdict.

    Raises
    ------
    ValueError
        For ``n_runs < 1`` or a bad ``n_jobs``.
    """
    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1; got {n_runs!r}")
    n_jobs = check_n_jobs(n_jobs)
    start = time.perf_counter()
    seeds = np.random.default_rng(seed).choice(2**62, size=2 * n_runs, replace=False)
    out_a = _outcomes(make_learner, neighbours.X, neighbours.y, neighbours, seeds[:n_runs], n_jobs)
    out_b = _outcomes(make_learner, neighbours.X_prime, neighbours.y_prime, neighbours, seeds[n_runs:], n_jobs)
    estimate = estimate_epsilon([o[0] for o in out_a], [o[0] for o in out_b], alpha=alpha, delta=delta)
    rates = None
    if neighbours.target_outcome is not None:
        m = len(neighbours.X_public)
        target = neighbours.target_outcome
        rates = (
            sum(o[1][:m] == target for o in out_a) / n_runs,
            sum(o[1][:m] == target for o in out_b) / n_runs,
        )
    name = learner_name or type(make_learner(0)).__name__
    return _result(neighbours, name, epsilon, delta, n_runs, estimate, start, target_rates=rates)


def audit_reduced(
    make_learner: Callable[[int], Any],
    neighbours: Neighbours,
    *,
    epsilon: float,
    delta: float = 0.0,
    n_runs: int = 1_000_000,
    alpha: float = 0.05,
    seed: int = 0,
    learner_name: str | None = None,
) -> AuditResult:
    """The audit of :func:`audit_learner` for a noisy-argmin learner (``noise_law`` and ``_release``,
    e.g. RRSPM), with ``n_runs`` draws of the reduced problem per neighbour (module docstring)."""
    from oraclepriv.noisy_argmin.costs import labeling_costs, realisable_labelings
    from oraclepriv.noisy_argmin.laws import sampled_argmin_law
    from oraclepriv.oracle import make_oracle

    if n_runs < 1:
        raise ValueError(f"n_runs must be >= 1; got {n_runs!r}")
    start = time.perf_counter()
    learner = make_learner(seed)
    if not (hasattr(learner, "noise_law") and hasattr(learner, "_release")):
        raise ValueError(
            f"{type(learner).__name__} is not a noisy-argmin learner (no noise_law/_release): use audit_learner"
        )
    learner.fit(
        neighbours.X, neighbours.y, X_public=PublicData(neighbours.X_public), **_fit_params(learner, neighbours)
    )
    m = len(learner.public_labels_)
    Z = np.asarray(neighbours.X_public, dtype=np.float64)[:m]
    family, scale = learner.noise_law(m, Z.shape[1])
    oracle = make_oracle(learner.hypothesis_class, backend=learner.backend)
    labelings = realisable_labelings(Z, oracle)
    release_oracle = make_oracle(learner.hypothesis_class, backend=learner.backend)
    rng = np.random.default_rng(seed)
    counts = []
    for X, y in ((neighbours.X, neighbours.y), (neighbours.X_prime, neighbours.y_prime)):
        law = sampled_argmin_law(labeling_costs(X, y, Z, labelings, oracle), labelings, family, scale, n_runs, rng)
        if law.counts is None:
            raise RuntimeError("a sampled argmin law carries its draws' counts")
        side: dict[str, int] = {}
        for labels, hits in zip(labelings, law.counts):
            released = learner._release(release_oracle, Z, labels.astype(np.int8), rng, fhat=None, X=X, y=y)
            key = repr(released.to_dict())
            side[key] = side.get(key, 0) + int(hits)
        counts.append(side)
    rows = []
    for event in sorted(set(counts[0]) | set(counts[1])):
        a, b = counts[0].get(event, 0), counts[1].get(event, 0)
        rows += [(event, "D>D'", a, n_runs, b, n_runs), (event, "D'>D", b, n_runs, a, n_runs)]
    estimate = epsilon_from_event_counts(rows, alpha=alpha, delta=delta)
    return _result(
        neighbours,
        learner_name or type(learner).__name__,
        epsilon,
        delta,
        n_runs,
        estimate,
        start,
        extra={"sampler": "reduced"},
    )


def _result(
    neighbours: Neighbours,
    name: str,
    epsilon: float,
    delta: float,
    n_runs: int,
    estimate: EpsilonEstimate,
    start: float,
    **fields: Any,
) -> AuditResult:
    return AuditResult(
        scenario=neighbours.name,
        learner=name,
        epsilon=float(epsilon),
        delta=float(delta),
        n_runs=n_runs,
        estimate=estimate,
        seconds=time.perf_counter() - start,
        expected_log_ratio=neighbours.expected_log_ratio,
        **fields,
    )


def detectable_loss(n_runs: int, m: int, epsilon: float, *, alpha: float = 0.05, n_events: int | None = None) -> float:
    """The power of an audit with ``n_runs`` runs per side on the tight construction with m public points.

    A mechanism of the construction's family with true loss eps' > eps releases the target with
    probabilities p = 2^-m e^(-eps'/2) and q = 2^-m e^(-3 eps'/2) under D and D' (Laplace scale 2m/eps').
    Returns the smallest eps' for which the Clopper-Pearson lower bound at the expected counts
    (n p, n q) exceeds eps: the loss the audit detects about half the time (the median statement),
    with the Bonferroni correction over ``n_events`` (default 2^m) events in 2 directions.
    """
    from oraclepriv.audit.stats import clopper_pearson

    events = n_events if n_events is not None else 2**m
    alpha_each = alpha / (2 * 2 * events)

    def detected(eps_true: float) -> bool:
        p, q = 2.0**-m * math.exp(-eps_true / 2), 2.0**-m * math.exp(-1.5 * eps_true)
        lo, _ = clopper_pearson(round(n_runs * p), n_runs, alpha_each, "lower")
        _, hi = clopper_pearson(round(n_runs * q), n_runs, alpha_each, "upper")
        return lo > 0 and math.log(lo / hi) > epsilon

    grid = [epsilon * (1 + k / 100) for k in range(1, 301)]  # up to 4 eps (beyond, the target becomes rare)
    first = next((k for k, value in enumerate(grid) if detected(value)), None)
    if first is None:
        return math.inf
    low, high = (epsilon if first == 0 else grid[first - 1]), grid[first]
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (low, middle) if detected(middle) else (middle, high)
    return high
