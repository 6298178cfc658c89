"""Exact privacy verification of a noisy-argmin learner on a small instance (``oraclepriv verify``).

RRSPM and RSPM (Block, Bun, Desai, Shetty, Wu, Algorithms 4 and 5) release a deterministic function
of the labeling L* of the noisy points (Z, or the identification set U) that minimises
c_D(L) + sum_j xi_j 1[L_j != Ytilde_j]. For an instance D, a neighbour family and the learner's own
code, the verifier

0. estimates the run's time and memory from the problem's size (with a few timed calls) and refuses
   it, before any labeling, cost or law is computed, when either is over its limit
   (:mod:`oraclepriv.verify.budget`; again once the realisable labelings are known);
1. finds the realisable labelings of the points and c_D(L) for each, for D and for every neighbour,
   with an exact backend (:mod:`oraclepriv.noisy_argmin.costs`; cross-checked against brute force where
   the cover of the data is complete);
2. maps every labeling to the learner's release, by calling the learner's own release step on
   (points, L). The private data are handed to it inside watchers: if the step reads them, its
   output is recomputed on every dataset (that is how a release that leaks is caught);
3. computes the law of L*: exact for Laplace noise (:func:`~oraclepriv.noisy_argmin.laws.laplace_argmin_law`,
   with its error bound), sampled otherwise (vectorised, no oracle call per draw, the draws streamed in
   chunks of bounded memory; exact binomial intervals, :func:`clopper_pearson`, Bonferroni over
   outcomes and neighbours); the law does not depend on Ytilde;
4. reports the privacy loss max |log P_D(o) - log P_D'(o)| over neighbours and outcomes
   (:func:`~oraclepriv.privacy_loss.privacy_loss`), the privacy profile delta(eps) = max over ordered
   pairs of sum_o max(0, P(o) - e^eps P'(o)), where they are attained, and a verdict against the
   learner's claim (:attr:`VerifyResult.verdict`).

The intervals bound the maxima themselves, not the terms where the point estimates are largest: the
loss's ends are the largest lower and upper ends of the log ratio over every outcome, neighbour and
direction (a term the point estimate ranks low can have the widest interval, e.g. an outcome drawn
a few times), and likewise for delta(eps) over the ordered pairs. Each end is clipped to the
quantity's range: the loss (a maximum of absolute values) to [0, inf], delta(eps) (a difference of
probabilities) to [0, 1]. The sampled mode's statements hold jointly with probability
:data:`CONFIDENCE`.

Verdicts. "exceeds": the claim is exceeded beyond the error bars (the lower end of the loss, or of
delta(eps) for an (eps, delta) claim, is above the claim), in either mode. Exact mode otherwise says
"verified": its error bars are float rounding (~1e-13), so a value within them of the claim is the
claim met (the tight constructions, whose loss is eps exactly, must read "verified"). Sampled mode
says "verified" only when the upper end is within the claim too, and "inconclusive" when the interval
contains the claim: such a run neither refutes nor supports it (more draws narrow the interval; a
value exactly at the claim is decided by exact mode only).

What is verified is the mechanism with an exact oracle (the tolerance's near-ties are the numerical
delta of the release, :mod:`oraclepriv.near_ties`), and the release as a function of the winning
labeling computed with a fresh oracle (that the learner's second call sees nothing else is a test
of its own, ``tests/test_learners_rrspm.py``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from oraclepriv.backends import registry_snapshot, restore_registry
from oraclepriv.execution import check_n_jobs, dask_active, effective_workers, parallel_map
from oraclepriv.noisy_argmin.costs import VerificationError, brute_force_costs, labeling_costs, realisable_labelings
from oraclepriv.noisy_argmin.laws import MAX_EXACT_POINTS, ArgminLaw, laplace_argmin_law, sampled_argmin_law
from oraclepriv.oracle import make_oracle
from oraclepriv.privacy_loss import privacy_loss
from oraclepriv.public_data import PublicData
from oraclepriv.release import reading_diagnostics
from oraclepriv.verify.budget import (
    DEFAULT_MAX_SECONDS,
    Estimate,
    TooLargeError,
    calibrate_draw_seconds,
    default_max_memory,
    labeling_count_bound,
    realisability_calls,
    typical_seconds,
)

__all__ = [
    "MODES",
    "VERDICTS",
    "Neighbour",
    "TooLargeError",
    "VerifyResult",
    "clopper_pearson",
    "neighbour_family",
    "verify_learner",
]

MODES = ("exact", "sampled")
#: the verdicts of :attr:`VerifyResult.verdict` ("inconclusive" in sampled mode only)
VERDICTS = ("verified", "exceeds", "inconclusive")
#: confidence of the sampled mode's statements (Bonferroni over outcomes, neighbours and directions)
CONFIDENCE = 0.99

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Neighbour:
    """A neighbour of the private dataset D: record ``position`` replaced by (x, label).

    Parameters
    ----------
    position : int
        The index of the replaced private record.
    kind : str
        Where x comes from: "label flip", "public point" or "other point".
    x : tuple of float
        The new record's features.
    label : int
        The new record's label, 0 or 1.
    """

    position: int
    kind: str
    x: tuple[float, ...]
    label: int

    def apply(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X2, y2 = X.copy(), y.copy()
        X2[self.position] = self.x
        y2[self.position] = self.label
        return X2, y2

    def describe(self) -> str:
        return f"record {self.position} -> ({', '.join(f'{v:g}' for v in self.x)}; y={self.label}) [{self.kind}]"

    def name(self) -> str:
        """The neighbour in words without the private record's coordinates (a label flip's point is private)."""
        if self.kind == "label flip":
            return f"the neighbour of D whose record {self.position} has its label flipped to {self.label}"
        return (
            f"the neighbour of D whose record {self.position} is replaced by the {self.kind} "
            f"({', '.join(f'{v:g}' for v in self.x)}; y={self.label})"
        )


def neighbour_family(
    X: np.ndarray, y: np.ndarray, points: np.ndarray, others: np.ndarray | None = None
) -> list[Neighbour]:
    """The neighbours of (X, y) the verifier compares D with.

    Every replacement of one private record by its label flip, a point of ``points`` with either label,
    or a row of ``others`` with either label (those equal to the record itself are dropped).

    Parameters
    ----------
    X : numpy.ndarray of shape (n, d)
        The private features.
    y : numpy.ndarray of shape (n,)
        The private labels, in {0, 1}.
    points : numpy.ndarray of shape (m, d)
        Candidate records (the learner's noisy points).
    others : numpy.ndarray of shape (k, d) or None, default None
        More candidate records.

    Returns
    -------
    list of Neighbour
        The family.

    Raises
    ------
    ValueError
        When the family is empty (no private record).
    """
    candidates: list[tuple[str, np.ndarray]] = [("public point", p) for p in np.asarray(points, dtype=np.float64)]
    if others is not None:
        candidates += [("other point", p) for p in np.asarray(others, dtype=np.float64)]
    family = []
    for i in range(X.shape[0]):
        family.append(Neighbour(i, "label flip", tuple(map(float, X[i])), int(1 - y[i])))
        for kind, p in candidates:
            for label in (0, 1):
                if np.array_equal(p, X[i]) and label == y[i]:
                    continue
                if np.array_equal(p, X[i]) and label != y[i]:
                    continue  # the label flip, already listed
                family.append(Neighbour(i, kind, tuple(map(float, p)), label))
    if not family:
        raise ValueError("the neighbour family is empty: the instance needs at least one private record")
    return family


class _Watched:
    """Stands in for a private argument of the release step and records whether it was touched."""

    _name: str
    _log: list[str]

    def __init__(self, name: str, log: list[str]):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_log", log)

    def _touch(self, *args: Any, **kwargs: Any) -> Any:
        self._log.append(self._name)
        raise _ReadPrivate(self._name)

    __getattr__ = __getitem__ = __array__ = __iter__ = __len__ = __float__ = __bool__ = _touch


class _ReadPrivate(Exception):
    pass


@dataclass
class VerifyResult:
    """The instance's privacy loss against the learner's claim (module docstring).

    Parameters
    ----------
    learner : str
        The learner's name.
    hypothesis_class : str
        Its class.
    backend : str
        The verifier's backend.
    mode : {"exact", "sampled"}
        How the output law was computed.
    epsilon : float
        The learner's claimed epsilon.
    delta : float
        Its claimed delta (total: by design plus numerical).
    n : int
        The number of private records.
    m : int
        The number of noisy points.
    n_labelings : int
        The number of realisable labelings of the points.
    n_neighbours : int
        The number of neighbouring datasets compared.
    loss : float
        The privacy loss: the largest ``abs(log P_D(o) - log P_D'(o))`` over neighbours and outcomes.
    loss_low : float
        The lower end of its interval (error bars: rounding in exact mode, confidence in sampled mode).
    loss_high : float
        The upper end of its interval.
    delta_at_epsilon : float
        The privacy profile delta(eps) at the claimed epsilon.
    delta_low : float
        The lower end of its interval.
    delta_high : float
        The upper end of its interval.
    worst_neighbour : str
        Where the loss is attained, in words.
    worst_outcome : str
        The outcome where it is attained.
    release_reads_private_data : bool
        Whether the learner's release step read the private data (then its output was recomputed on
        every dataset).
    brute_force_checked : int
        How many cost vectors were cross-checked against brute force.
    numerical_error : float
        The error bound of one probability of the exact law.
    seconds : float
        Wall-clock seconds of the run.
    draws : int, default 0
        Noise vectors drawn per cost vector (sampled mode).
    estimate : dict, default {}
        The run's time and memory as estimated before its costs and laws
        (:class:`~oraclepriv.verify.budget.Estimate`).
    extra : dict, default {}
        More facts, added to :meth:`to_dict`.
    """

    learner: str
    hypothesis_class: str
    backend: str
    mode: str
    epsilon: float
    delta: float
    n: int
    m: int
    n_labelings: int
    n_neighbours: int
    loss: float
    loss_low: float
    loss_high: float
    delta_at_epsilon: float
    delta_low: float
    delta_high: float
    worst_neighbour: str
    worst_outcome: str
    release_reads_private_data: bool
    brute_force_checked: int
    numerical_error: float
    seconds: float
    draws: int = 0
    #: the run's time and memory as estimated before its costs and laws (:class:`~oraclepriv.verify.budget.Estimate`)
    estimate: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def _judged(self) -> tuple[str, float, float, float, float]:
        """(name, point, lower end, upper end, claim) of the quantity the verdict compares with the claim: the
        loss against eps for a pure claim, delta(eps) against delta for an (eps, delta) one."""
        if self.delta == 0:
            return "the loss", self.loss, self.loss_low, self.loss_high, self.epsilon
        return "delta(eps)", self.delta_at_epsilon, self.delta_low, self.delta_high, self.delta

    @property
    def verdict(self) -> str:
        """One of :data:`VERDICTS` (the module docstring): "exceeds" when the claim is exceeded beyond the error
        bars; in exact mode "verified" otherwise; in sampled mode "verified" only when the upper end is within the
        claim as well, and "inconclusive" when the interval contains the claim (neither refuted nor supported)."""
        _, _, low, high, claim = self._judged()
        if low > claim:
            return "exceeds"
        if self.mode == "sampled" and high > claim:
            return "inconclusive"
        return "verified"

    @property
    def verdict_reason(self) -> str:
        """The verdict in one sentence: the interval compared with the claim, and, for "inconclusive", what would
        decide it."""
        name, point, low, high, claim = self._judged()
        symbol = "eps" if self.delta == 0 else "delta"
        interval = f"{name} = {point:.6g} in [{low:.6g}, {high:.6g}]"
        bars = (
            f"{CONFIDENCE:.0%} interval over {self.draws:,} draw{'s' if self.draws != 1 else ''} per cost vector"
            if self.mode == "sampled"
            else f"numerical error {self.numerical_error:.2g} per probability"
        )
        verdict = self.verdict
        if verdict == "exceeds":
            return f"{interval} ({bars}): its lower end is above the claimed {symbol} = {claim:g}"
        if verdict == "verified" and self.mode == "sampled":
            return f"{interval} ({bars}): its upper end is within the claimed {symbol} = {claim:g}"
        if verdict == "verified":
            return f"{interval} ({bars}): not above the claimed {symbol} = {claim:g} beyond the numerical error"
        unseen = " (an outcome drawn 0 times under some dataset leaves it at inf)" if math.isinf(high) else ""
        return (
            f"{interval} ({bars}) contains the claimed {symbol} = {claim:g}: the run neither refutes nor supports "
            f"the claim; more draws narrow the interval{unseen}, unless the true value equals the claim, which only "
            "exact mode (Laplace noise) decides"
        )

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-friendly dict, with the verdict and its reason.

        Returns
        -------
        dict
            Every field (``extra`` merged in), ``verdict`` and ``verdict_reason``.
        """
        out = {k: v for k, v in self.__dict__.items() if k != "extra"}
        out["verdict"] = self.verdict
        out["verdict_reason"] = self.verdict_reason
        out.update(self.extra)
        return out


def _costs_chunk(
    X: np.ndarray,
    y: np.ndarray,
    datasets: list[Neighbour | None],
    points: np.ndarray,
    labelings: np.ndarray,
    learner: Any,
    backend: str | None,
    backend_options: dict[str, Any],
    cross_check: bool,
    backends: dict[str, Any],
) -> tuple[list[np.ndarray], int]:
    """Normalised costs of each dataset's labelings (one oracle per task, configured by ``backend_options``;
    registered backends shipped along): c_D(L) by default, or the learner's own ``verification_costs``
    (SubsampleAggregate). A dataset is D (None) or a neighbour of D, built here one at a time."""
    restore_registry(backends)
    oracle = make_oracle(learner.hypothesis_class, backend=backend, **backend_options)
    own = getattr(learner, "verification_costs", None)
    out, checked = [], 0
    for neighbour in datasets:
        Xd, yd = (X, y) if neighbour is None else neighbour.apply(X, y)
        if own is not None:
            out.append((lambda c: c - c.min())(own(Xd, yd, points, labelings, oracle)))
            continue
        name = "D" if neighbour is None else neighbour.name()
        costs = labeling_costs(Xd, yd, points, labelings, oracle, dataset=name)
        if cross_check:
            reference = brute_force_costs(Xd, yd, points, labelings, learner.hypothesis_class)
            if reference is not None:
                if not np.array_equal(reference, costs):
                    raise VerificationError(
                        f"c_D(L) from backend {backend or 'default'!r} disagrees with brute force on {name}: "
                        f"{costs.tolist()} vs {reference.tolist()}"
                    )
                checked += 1
        out.append(costs - costs.min())
    return out, checked


def clopper_pearson(hits: np.ndarray, total: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact (Clopper-Pearson) two-sided 1 - alpha intervals for ``hits`` successes out of ``total``, vectorised:
    the beta quantiles low = B^-1(alpha/2; k, N - k + 1) (0 at k = 0) and high = B^-1(1 - alpha/2; k + 1, N - k)
    (1 at k = N), the interval :func:`scipy.stats.binomtest`'s ``proportion_ci(method="exact")`` solves for with a
    root finder (to an absolute 2e-12: the quantiles are also accurate for the tiny probabilities of an outcome
    drawn a few times in 10^7).

    Parameters
    ----------
    hits : numpy.ndarray
        Successes, each in [0, total].
    total : int
        Trials.
    alpha : float
        One minus the confidence, in (0, 1).

    Returns
    -------
    low : numpy.ndarray
        The lower ends.
    high : numpy.ndarray
        The upper ends.
    """
    k = np.asarray(hits, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, special.betaincinv(np.maximum(k, 1.0), total - k + 1.0, alpha / 2), 0.0)
        high = np.where(k < total, special.betainccinv(k + 1.0, np.maximum(total - k, 1.0), alpha / 2), 1.0)
    return low, high


def _log_ratio_interval(p_lo: float, p_hi: float, q_lo: float, q_hi: float) -> tuple[float, float]:
    """The range of log(p / q) over p in [p_lo, p_hi] and q in [q_lo, q_hi] (probabilities): +inf where p > 0
    is certain and q = 0 possible, -inf where p = 0 is possible (an outcome impossible under both is (-inf, -inf),
    no term of the loss)."""
    low = math.log(p_lo / q_hi) if p_lo > 0 and q_hi > 0 else (math.inf if q_hi <= 0 < p_lo else -math.inf)
    high = math.log(p_hi / q_lo) if q_lo > 0 and p_hi > 0 else (math.inf if p_hi > 0 else -math.inf)
    return low, high


def _log_law(probabilities: dict[str, float]) -> dict[str, float]:
    """Each outcome's log-probability (-inf for probability 0), the form :func:`~oraclepriv.privacy_loss.privacy_loss`
    compares."""
    return {o: math.log(p) if p > 0 else -math.inf for o, p in probabilities.items()}


def _law(
    costs: np.ndarray,
    labelings: np.ndarray,
    mode: str,
    family: str,
    scale: float,
    draws: int,
    seed: np.random.SeedSequence,
) -> ArgminLaw:
    """One cost vector's law, without its copy of the labelings (the verifier holds one law per dataset)."""
    if mode == "exact":
        law = laplace_argmin_law(costs, labelings, scale)
    else:
        law = sampled_argmin_law(costs, labelings, family, scale, draws, np.random.default_rng(seed))
    return dataclasses.replace(law, labelings=np.empty((0, labelings.shape[1]), dtype=np.int8))


def _family_size(n: int, points: np.ndarray, others: np.ndarray | None) -> int:
    """An upper bound on ``len(neighbour_family(...))`` without building it: a label flip per record and every
    candidate point with either label."""
    candidates = len(points) + (0 if others is None else len(np.atleast_2d(others)))
    return n * (1 + 2 * candidates)


def verify_learner(
    learner: Any,
    X: np.ndarray,
    y: np.ndarray,
    X_public: np.ndarray | None = None,
    *,
    backend: str | None = None,
    backend_options: dict[str, Any] | None = None,
    others: np.ndarray | None = None,
    mode: str = "exact",
    draws: int = 10_000_000,
    seed: int = 0,
    cross_check: bool = True,
    name: str | None = None,
    n_jobs: int = 1,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    max_memory: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> VerifyResult:
    """Verify a noisy-argmin learner's privacy claim exactly on a small instance (X, y).

    The run is estimated after the learner's fit (its memory from the counts alone, its time with a few
    timed calls) and again once the realisable labelings are known, and refused when the estimate is
    over a limit (:mod:`oraclepriv.verify.budget` states the formulas).

    Parameters
    ----------
    learner : estimator
        An unfitted RRSPM, RSPM or SubsampleAggregate, or a variant of one; its own oracle is
        configured by its parameters.
    X : numpy.ndarray of shape (n, d)
        The private features.
    y : numpy.ndarray of shape (n,)
        The private labels, in {0, 1}.
    X_public : numpy.ndarray of shape (m, d) or None, default None
        The public points; None for RSPM.
    backend : str or None, default None
        The exact backend of the verifier's own oracles (the costs c_D(L), the realisable labelings).
    backend_options : dict or None, default None
        Its options (e.g. ``{"workers": 2}`` for scip-bc; an unknown one is refused by name).
    others : numpy.ndarray of shape (k, d) or None, default None
        Extra candidate records for the neighbour family (:func:`neighbour_family`).
    mode : {"exact", "sampled"}, default "exact"
        "exact": the exact law (Laplace noise, m <= ``MAX_EXACT_POINTS``); "sampled": ``draws`` noise
        vectors per cost vector, with exact binomial intervals.
    draws : int, default 10000000
        Noise vectors per cost vector in sampled mode.
    seed : int, default 0
        The seed of the sampled draws.
    cross_check : bool, default True
        Cross-check the costs against brute force where the cover of the data is complete.
    name : str or None, default None
        The learner's name in the result; None: its class name.
    n_jobs : int, default 1
        Worker processes for the oracle calls and the laws, or, inside
        :func:`oraclepriv.execution.execution` with dask, the cluster's workers (the results depend on
        neither).
    max_seconds : float, default DEFAULT_MAX_SECONDS
        The largest estimated time accepted, > 0; ``math.inf`` lifts the limit.
    max_memory : int or None, default None
        The largest estimated memory accepted, in bytes; None: half the memory available
        (:func:`~oraclepriv.verify.budget.default_max_memory`).
    progress : callable or None, default None
        ``progress(phase, done, total)``, called as each phase ("realisable labelings" by point,
        "costs c_D(L) per dataset", "laws" by cost vector) goes.

    Returns
    -------
    VerifyResult
        The privacy loss, the privacy profile at the claimed epsilon, where they are attained, and the
        verdict.

    Raises
    ------
    ValueError
        For bad arguments, or a learner that does not release a noisy argmin over labelings.
    TooLargeError
        When the estimated time or memory is over its limit (the message names the limit and what to
        change).
    """
    start = time.perf_counter()
    n_jobs = check_n_jobs(n_jobs)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}; got {mode!r}")
    if not (isinstance(max_seconds, (int, float)) and max_seconds > 0 and not math.isnan(max_seconds)):
        raise ValueError(f"max_seconds must be a number > 0 (math.inf for no limit); got {max_seconds!r}")
    memory_default = max_memory is None
    if max_memory is None:
        max_memory = default_max_memory()
    elif not (isinstance(max_memory, (int, np.integer)) and max_memory > 0):
        raise ValueError(f"max_memory must be a positive number of bytes; got {max_memory!r}")
    if mode == "sampled" and not (isinstance(draws, (int, np.integer)) and draws >= 1):
        raise ValueError(f"draws must be a positive integer; got {draws!r}")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int8)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array of private records; got shape {X.shape}")
    with reading_diagnostics():
        learner.fit(X, y, X_public=PublicData(X_public)) if X_public is not None else learner.fit(X, y)
    if not all(hasattr(learner, attr) for attr in ("noise_law", "_release", "noisy_points_")):
        raise ValueError(
            f"{type(learner).__name__} does not release a noisy argmin over labelings of its points; the "
            "verifier handles RRSPM, RSPM and SubsampleAggregate (PublicCoverEM and the PPM learner have "
            "exact laws of their own: oraclepriv audit public-cover, tests/test_ppm_privacy.py)"
        )
    points = np.asarray(learner.noisy_points_, dtype=np.float64)
    m, d = points.shape
    family, scale = learner.noise_law(m, d)
    if mode == "exact" and family != "laplace":
        raise ValueError(
            f"exact mode integrates Laplace noise; {type(learner).__name__} uses {family} noise: use mode='sampled'"
        )
    if mode == "exact" and m > MAX_EXACT_POINTS:
        raise ValueError(
            f"m = {m} noisy points is too large for exact mode (at most {MAX_EXACT_POINTS}): "
            "use mode='sampled' or fewer points"
        )
    backend_options = dict(backend_options or {})
    oracle = make_oracle(learner.hypothesis_class, backend=backend, **backend_options)
    restriction = oracle.restriction()
    if restriction is not None:
        raise ValueError(
            f"backend={backend!r} proves bounds only over {restriction}; the verifier needs an exact backend"
        )
    shares = effective_workers(n_jobs) if n_jobs != 1 or dask_active() else 1

    # 0. the estimate, before the verifier's first oracle call (module oraclepriv.verify.budget)
    def check(estimate: Estimate) -> Estimate:
        if estimate.seconds > max_seconds or estimate.memory_bytes > max_memory:
            raise TooLargeError(estimate, max_seconds, int(max_memory), memory_default)
        return estimate

    bound = labeling_count_bound(learner.hypothesis_class, m, d)
    counted = check(  # memory: counts alone, nothing measured yet
        Estimate(
            mode=mode,
            n=int(X.shape[0]),
            d=int(d),
            m=int(m),
            n_labelings=bound,
            labelings_known=False,
            n_datasets=1 + _family_size(X.shape[0], points, others),
            draws=int(draws),
            workers=shares,
            realisability_calls=realisability_calls(learner.hypothesis_class, m, d),
            spent_seconds=0.0,
            point_call_seconds=0.0,
            labeling_seconds=0.0,
            dataset_seconds=0.0,
            draw_seconds=0.0,
        )
    )
    zeros = np.zeros((1, m), dtype=np.int8)
    own = getattr(learner, "verification_costs", None)
    point_call = typical_seconds(lambda: oracle.solve(points, zeros[0], np.ones(m), caller="verify", step="estimate"))
    if own is not None:
        labeling_call, dataset_call = 0.0, typical_seconds(lambda: own(X, y, points, zeros, oracle), 0)
    else:
        labeling_call = typical_seconds(lambda: labeling_costs(X, y, points, zeros, oracle))
        dataset_call = (
            typical_seconds(lambda: brute_force_costs(X, y, points, zeros, learner.hypothesis_class), 1)
            if cross_check
            else 0.0
        )
    draw_seconds = {bound: calibrate_draw_seconds(m, bound, family, scale, draws) if mode == "sampled" else 0.0}
    estimate = check(
        dataclasses.replace(
            counted,
            point_call_seconds=point_call,
            labeling_seconds=labeling_call,
            dataset_seconds=dataset_call,
            draw_seconds=draw_seconds[bound],
            spent_seconds=time.perf_counter() - start,
        )
    )
    log.debug(
        "verify %s: estimated %.3g s, %d bytes before the run",
        type(learner).__name__,
        estimate.seconds,
        estimate.memory_bytes,
    )

    labelings = realisable_labelings(
        points, oracle, None if progress is None else lambda done, total: progress("realisable labelings", done, total)
    )
    neighbours = neighbour_family(X, y, points, others)
    K = len(labelings)
    if mode == "sampled" and K not in draw_seconds:
        draw_seconds[K] = calibrate_draw_seconds(m, K, family, scale, draws)
    estimate = check(
        dataclasses.replace(
            estimate,
            n_labelings=K,
            labelings_known=True,
            n_datasets=1 + len(neighbours),
            draw_seconds=draw_seconds.get(K, 0.0),
            spent_seconds=time.perf_counter() - start,
        )
    )

    # the release as a function of the winning labeling (and, if it reads them, of the data)
    release_oracle = learner._oracle()

    def release(labels: np.ndarray, data: tuple[np.ndarray, np.ndarray] | None) -> str:
        kwargs: dict[str, Any]
        if data is None:
            kwargs = {"fhat": _Watched("fhat", touched), "X": _Watched("X", touched), "y": _Watched("y", touched)}
        else:
            kwargs = {"fhat": None, "X": data[0], "y": data[1]}
        hypothesis = learner._release(
            release_oracle, points, labels.astype(np.int8), np.random.default_rng(0), **kwargs
        )
        return json.dumps(hypothesis.to_dict(), sort_keys=True)

    log.debug("verify: realisable labelings done at %.3f s", time.perf_counter() - start)
    touched: list[str] = []
    try:
        shared_outcomes = [release(L, None) for L in labelings]
    except _ReadPrivate:
        shared_outcomes = None
    reads_private = shared_outcomes is None
    log.debug("verify: releases done at %.3f s", time.perf_counter() - start)

    # 1. c_D(L) for D and every neighbour (oracle calls), cross-checked against brute force. The datasets are
    # built one at a time where their costs are computed; D is key None, a neighbour its own record (distinct
    # neighbours give distinct datasets: they differ from D, and from each other, at the record they replace)
    keys: list[Neighbour | None] = list(dict.fromkeys([None, *neighbours]))
    n_tasks = min(len(keys), max(shares, 4 * shares if shares > 1 else 20))
    chunks = [c for c in (keys[i::n_tasks] for i in range(n_tasks)) if c]
    log.debug(
        "verify %s: %d labelings, %d datasets in %d tasks",
        type(learner).__name__,
        K,
        len(keys),
        len(chunks),
    )
    snapshot = registry_snapshot()
    finished = [0]

    def datasets_done(index: int, _: Any) -> None:
        finished[0] += len(chunks[index])
        if progress is not None:
            progress("costs c_D(L) per dataset", finished[0], len(keys))

    parts = parallel_map(
        _costs_chunk,
        [
            (X, y, chunk, points, labelings, learner, backend, backend_options, cross_check, snapshot)
            for chunk in chunks
        ],
        n_jobs,
        on_result=datasets_done,
    )
    log.debug("verify: costs done at %.3f s", time.perf_counter() - start)
    cost_cache: dict[Neighbour | None, np.ndarray] = {}
    checked = 0
    for chunk, (costs_list, n_checked) in zip(chunks, parts):
        cost_cache.update(zip(chunk, costs_list))
        checked += n_checked

    # 2. the law of the winning labeling for every distinct cost vector (in parallel); the vectors are
    # taken in dataset order, not in the order the shares came back, so that each gets the same seed
    # whatever the number of shares
    distinct = {cost_cache[k].tobytes(): cost_cache[k] for k in keys}
    seeds = np.random.SeedSequence(seed).spawn(len(distinct))
    laws = parallel_map(
        _law,
        [(costs, labelings, mode, family, scale, draws, s) for costs, s in zip(distinct.values(), seeds)],
        n_jobs,
        None if progress is None else lambda done, total: progress("laws", done, total),
    )
    law_cache = dict(zip(distinct, laws))
    log.debug("verify: laws done at %.3f s", time.perf_counter() - start)

    n_tests = 2 * len(neighbours) * max(1, K)
    alpha = (1 - CONFIDENCE) / n_tests
    unseen = (0.0, float(clopper_pearson(np.zeros(1), int(draws), alpha)[1][0])) if mode == "sampled" else None

    def dataset_law(key: Neighbour | None) -> tuple[dict[str, float], dict[str, tuple[float, float]], float]:
        """The dataset's outcome probabilities and their intervals (exact: the law's error bound around each; sampled:
        Clopper-Pearson at the Bonferroni level), and the error bound (0 for a sampled law)."""
        law = law_cache[cost_cache[key].tobytes()]
        data = (X, y) if key is None else key.apply(X, y)
        outcomes = shared_outcomes if shared_outcomes is not None else [release(L, data) for L in labelings]
        index: dict[str, int] = {}
        for outcome in outcomes:
            index.setdefault(outcome, len(index))
        where = np.array([index[o] for o in outcomes])
        probabilities = np.bincount(where, weights=law.probabilities, minlength=len(index))
        if mode == "exact":
            error = law.error
            low, high = np.maximum(0.0, probabilities - error), np.minimum(1.0, probabilities + error)
        else:
            error = 0.0
            hits = np.bincount(where, weights=np.asarray(law.counts, dtype=np.float64), minlength=len(index))
            low, high = clopper_pearson(np.rint(hits), int(law.draws), alpha)
        return (
            {o: float(probabilities[i]) for o, i in index.items()},
            {o: (float(low[i]), float(high[i])) for o, i in index.items()},
            error,
        )

    base_p, base_ci, base_err = dataset_law(None)
    claim_eps = float(learner.epsilon_)
    claim_delta = float(learner.delta_)
    base_log = _log_law(base_p)
    worst_loss, worst_neighbour, worst_outcome = -1.0, "", ""
    # the ends bound the maxima over every outcome, neighbour and direction (module docstring), from the
    # bottom of the quantities' ranges: the loss is >= 0 and delta(eps) >= 0 whatever the data
    loss_low = loss_high = 0.0
    delta_max, delta_low_max, delta_high_max = -1.0, 0.0, 0.0
    error_bound = base_err
    e_eps = math.exp(claim_eps)
    for nb in neighbours:
        p2, ci2, err2 = dataset_law(nb)
        error_bound = max(error_bound, err2)
        found = privacy_loss(base_log, _log_law(p2))
        if found.loss > worst_loss:
            worst_loss, worst_neighbour = found.loss, nb.describe()
            worst_outcome = "" if found.outcome is None else found.outcome
        for first, first_ci, e1, second, second_ci, e2 in (
            (base_p, base_ci, base_err, p2, ci2, err2),
            (p2, ci2, err2, base_p, base_ci, base_err),
        ):
            delta_point = delta_low = delta_high = 0.0
            for outcome in set(first) | set(second):
                p, q = first.get(outcome, 0.0), second.get(outcome, 0.0)
                p_lo, p_hi = first_ci.get(outcome, unseen or (0.0, min(1.0, e1)))
                q_lo, q_hi = second_ci.get(outcome, unseen or (0.0, min(1.0, e2)))
                delta_point += max(0.0, p - e_eps * q)
                delta_low += max(0.0, p_lo - e_eps * q_hi)
                delta_high += max(0.0, p_hi - e_eps * q_lo)
                low, high = _log_ratio_interval(p_lo, p_hi, q_lo, q_hi)
                loss_low, loss_high = max(loss_low, low), max(loss_high, high)
            delta_max = max(delta_max, delta_point)
            delta_low_max = max(delta_low_max, min(1.0, delta_low))
            delta_high_max = max(delta_high_max, min(1.0, delta_high))
    return VerifyResult(
        learner=name or type(learner).__name__,
        hypothesis_class=learner.hypothesis_class,
        backend=oracle.backend or "default",
        mode=mode,
        epsilon=claim_eps,
        delta=claim_delta,
        n=int(X.shape[0]),
        m=int(m),
        n_labelings=int(K),
        n_neighbours=len(neighbours),
        loss=float(worst_loss),
        loss_low=float(loss_low),
        loss_high=float(loss_high),
        delta_at_epsilon=float(delta_max),
        delta_low=float(delta_low_max),
        delta_high=float(delta_high_max),
        worst_neighbour=worst_neighbour,
        worst_outcome=worst_outcome,
        release_reads_private_data=reads_private,
        brute_force_checked=checked,
        numerical_error=float(error_bound),
        seconds=time.perf_counter() - start,
        draws=int(draws) if mode == "sampled" else 0,
        estimate=estimate.to_dict(),
    )
