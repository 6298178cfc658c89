"""Negative controls: deliberately broken variants the audits must catch.

Each is a minimal change to a correct component, mirroring a real implementation mistake. The table of
controls, the scenario that catches each and the pitfall of docs/theory/block-et-al.md it
re-introduces: docs/theory/audits.md, section "Negative controls". The learners are those of Block,
Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data", and the
baselines.

* :class:`RRSPMRateAsScale` — Laplace *rate* eps/(2m) passed as the scale (noise m^2-ish too small;
  docs/theory/block-et-al.md, pitfall P2);
* :class:`RRSPMScaleTwoOverEps` — scale 2/eps instead of 2m/eps (the per-coordinate sensitivity
  bound forgetting the m coordinates; loss m*eps on the tight construction);
* :class:`RRSPMGaussianVariance` — the Gaussian variant reading the printed N(0, C sqrt(m log(1/delta))/eps)
  as a *variance* (std = its square root, far too little noise; docs/theory/block-et-al.md, pitfall P2);
* :class:`RRSPMReturnsFhat` — releases the first oracle call's fhat instead of ftilde
  (docs/theory/block-et-al.md, pitfall P1);
* :class:`RegularizationEtaNotScaled` — Algorithm 3 with the sum objective but eta NOT multiplied
  by n, while gamma is calibrated with the averaged-form radius 2/sqrt(eta n)
  (docs/theory/block-et-al.md, pitfall P9);
* :class:`PerturbationWithoutNoise` — Algorithm 2 with gamma = 0 (Perturb's noise forgotten);
* :class:`QuantileSplitBackend` — a non-exact "histogram/quantile split-finding" ERM heuristic (as in
  gradient-boosting libraries): only cuts at the training quantiles are tried. With
  ``claim_optimal=True`` it reports its own objective as the bound (a backend that wrongly claims
  exactness; :class:`ClaimingQuantileSplitBackend` has it on by default), so the protocol
  certifies it and only the audit can catch it (docs/theory/block-et-al.md, pitfall P4). Register
  either for a block with :func:`oraclepriv.backends.registered_backend`.

* :class:`TargetingBackend` — a *certifiable* heuristic (exact, or honestly uncertified) that fails
  adversarially: on instances containing a target record, optionally only when the exact answer
  would label given points a given way (the targeting solver of docs/theory/robustification.md,
  after Neel, Roth, Wu, "How to Use Heuristics for Differential Privacy"). Used to test the
  ``on_uncertified`` modes of :mod:`oraclepriv.robust`;
* :class:`RRSPMRetryOnFailure` — BROKEN robustification: after an uncertified call, refit with fresh
  noise ("Las Vegas" retry; docs/theory/robustification.md shows it is not private);
* :class:`SubsampleAggregateSharedData` — BROKEN subsample-and-aggregate: every teacher trains on
  the whole private set (bootstrap-style "ensembles" do this) while the noise is still calibrated
  for one teacher's vote, rho = 1/k;
* :class:`PublicCoverEMHalfSensitivity` — BROKEN exponential mechanism: weights exp(-eps * err), i.e.
  the mistake count's sensitivity taken as 1/2 (the factor 2 of McSherry-Talwar forgotten; loss up to 2 eps);
* :class:`PublicCoverEMPrivateCover` — BROKEN cover: built from the public *and the private* points
  (the label-DP cover of Bassily, Mohri, Suresh, "Differentially Private Learning with Margin
  Guarantees", Alg. 5, used under record-level neighbours; docs/theory/public-cover-em.md): replacing
  a record changes the candidate set itself.

These exist for tests and audits only; nothing else imports them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from oraclepriv.cover import PublicCover, public_cover
from oraclepriv.hypotheses import Stump, Threshold
from oraclepriv.learners.perturbation import Perturbation
from oraclepriv.learners.public_cover_em import PublicCoverEM
from oraclepriv.learners.regularization import Regularization
from oraclepriv.learners.rrspm import RRSPM
from oraclepriv.learners.subsample import SubsampleAggregate
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem, Status

__all__ = [
    "RRSPMRateAsScale",
    "RRSPMScaleTwoOverEps",
    "RRSPMGaussianVariance",
    "RRSPMReturnsFhat",
    "QuantileSplitBackend",
    "ClaimingQuantileSplitBackend",
    "RegularizationEtaNotScaled",
    "PerturbationWithoutNoise",
    "TargetingBackend",
    "targeting_backend",
    "RRSPMRetryOnFailure",
    "RRSPMLaplaceScaled",
    "RRSPMGaussianSqrtMOnly",
    "RRSPMProjectionSeesPrivatePoint",
    "laplace_scaled",
    "SubsampleAggregateSharedData",
    "PublicCoverEMHalfSensitivity",
    "PublicCoverEMPrivateCover",
]


class RRSPMRateAsScale(RRSPM):
    """BROKEN: xi ~ Lap(scale eps/(2m)) — the rate passed as the scale."""

    def noise_law(self, m: int, n_features: int) -> tuple[str, float]:
        return "laplace", self.epsilon_ / (2.0 * m)


class RRSPMScaleTwoOverEps(RRSPM):
    """BROKEN: xi ~ Lap(scale 2/eps) — missing the factor m."""

    def noise_law(self, m: int, n_features: int) -> tuple[str, float]:
        return "laplace", 2.0 / self.epsilon_


class RRSPMGaussianVariance(RRSPM):
    """BROKEN: Gaussian weights with std sqrt(sqrt(m log(1/delta))/eps) (variance/std confusion, C = 1)."""

    def noise_law(self, m: int, n_features: int) -> tuple[str, float]:
        return "gaussian", math.sqrt(math.sqrt(m * math.log(1.0 / self.delta_)) / self.epsilon_)


class RRSPMLaplaceScaled(RRSPM):
    """BROKEN (near miss): Laplace weights of scale factor * 2m/eps; the true loss can reach eps / factor.
    Build one with :func:`laplace_scaled`."""

    factor: float = 0.9

    def noise_law(self, m: int, n_features: int) -> tuple[str, float]:
        return "laplace", self.factor * 2.0 * m / self.epsilon_


def laplace_scaled(factor: float) -> type[RRSPMLaplaceScaled]:
    """An :class:`RRSPMLaplaceScaled` whose noise scale is ``factor`` times the correct one."""
    return type(f"RRSPMLaplaceScaled{factor:g}", (RRSPMLaplaceScaled,), {"factor": float(factor)})


class RRSPMGaussianSqrtMOnly(RRSPM):
    """BROKEN (near miss): the Gaussian calibration without the union bound over the labelings of Z
    (A = 2 sqrt(m) sqrt(2 ln(1/delta)), i.e. N = 1): the sqrt(m log(1/delta))/eps shape, made precise."""

    def noise_law(self, m: int, n_features: int) -> tuple[str, float]:
        from oraclepriv.learners.rrspm import gaussian_noise_std

        return "gaussian", gaussian_noise_std(self.epsilon_, self.delta_, m, 0.0)


class RRSPMProjectionSeesPrivatePoint(RRSPM):
    """BROKEN: the second (projection) call also sees the first private record, with its label."""

    def _release(self, oracle, Z, projection, rng, *, fhat, X, y):
        from oraclepriv.learners.perturb import least_squares_weights

        labels, weights = least_squares_weights(projection.astype(np.float64))
        rows = np.vstack([Z, np.asarray(X)[:1]])
        result = oracle.solve(
            rows, np.r_[labels, np.asarray(y)[:1]], np.r_[weights, 1.0], caller=self.algorithm, step="perturb"
        )
        return result.hypothesis


class RRSPMReturnsFhat(RRSPM):
    """BROKEN: releases fhat (the private ERM's model) instead of the public-only projection ftilde."""

    def _release(self, oracle, Z, projection, rng, *, fhat, X, y):
        return fhat


class RegularizationEtaNotScaled(Regularization):
    """BROKEN (docs/theory/block-et-al.md, pitfall P9): objective sum_i l + eta ||f||_m^2 with the
    per-sample eta, radius 2/sqrt(eta n)."""

    def regularized_erm(self, X, y, Z):
        result = self._oracle().regularized_erm(
            X, 2.0 * y - 1.0, Z, float(self.eta), caller=self.algorithm, step="regularized-erm"
        )
        return Z @ result.w


class PerturbationWithoutNoise(Perturbation):
    """BROKEN: Algorithm 2 whose Perturb step adds no noise (gamma = 0)."""

    def _gamma(self, rho, m, mech_delta):
        return 0.0


def _quantile_cuts(n: int, bins: int) -> list[int]:
    return sorted({min(n, max(0, round(q * n / bins))) for q in range(bins + 1)})


class QuantileSplitBackend(Backend):
    """NON-EXACT heuristic for thresholds/stumps: tries only cuts at the training-set quantiles."""

    name = "quantile-heuristic"
    classes = frozenset({"threshold", "stump"})
    options = frozenset({"bins", "claim_optimal"})
    certificate = "none (heuristic); with claim_optimal=True it falsely reports its objective as a bound"

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        bins = int(self.config.get("bins", 2))
        X, y, w = problem.X, problem.y, problem.w
        n, d = X.shape
        signs = (1,) if problem.hypothesis_class == "threshold" else (1, -1)
        best = None  # (loss, feature, sign, threshold)
        for j in range(d):
            xs = np.sort(X[:, j])
            for k in _quantile_cuts(n, bins):
                theta = -math.inf if k == 0 else (math.inf if k == n else xs[k - 1] / 2 + xs[k] / 2)
                for s in signs:
                    pred = (X[:, j] >= theta) if s == 1 else (X[:, j] <= theta)
                    loss = float(w[pred.astype(np.int8) != y].sum())
                    if best is None or loss < best[0]:
                        best = (loss, j, s, theta)
        assert best is not None
        loss, j, s, theta = best
        hyp = Threshold(theta) if problem.hypothesis_class == "threshold" else Stump(j, theta, s)
        bound = loss if self.config.get("claim_optimal", False) else -math.inf
        status: Status = "optimal" if self.config.get("claim_optimal", False) else "time_limit"
        return BackendAnswer(
            hyp, bound=bound, status=status, nodes=0, details={"method": f"quantile cuts, bins={bins}"}
        )


class ClaimingQuantileSplitBackend(QuantileSplitBackend):
    """BROKEN: the quantile heuristic, wrongly claiming its answers are optimal (so they certify)."""

    name = "quantile-heuristic-claiming"

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        options.setdefault("claim_optimal", True)
        super().__init__(time_limit=time_limit, **options)


class TargetingBackend(Backend):
    """A certifiable heuristic that fails on purpose: exact sweep, except on targeted instances.

    Options: ``target_x`` (coordinates of the targeted private record), ``target_label`` (its label
    in the *reduced* problem the backend sees; private records have weight +1, so that is their
    label), and optionally ``when_points``/``when_labels``: fail only if the exact answer labels
    ``when_points`` as ``when_labels``. On failure it answers the constant-0 hypothesis with status
    "time_limit" and no bound (honestly uncertified); otherwise the exact sweep answer, certified.
    """

    name = "targeting-heuristic"
    classes = frozenset({"threshold", "stump"})
    options = frozenset({"target_x", "target_label", "when_points", "when_labels"})
    defaults: dict[str, Any] = {}

    def __init__(self, time_limit: float | None = None, **options: Any) -> None:
        super().__init__(time_limit, **{**self.defaults, **options})
        if "target_x" not in self.config or "target_label" not in self.config:
            raise ValueError("TargetingBackend needs the options target_x and target_label")

    certificate = "exact (sort + prefix sums) unless it fails on a targeted instance (then no bound)"

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        from oraclepriv.solvers.combinatorial.sweep import SweepBackend

        exact = SweepBackend().solve(problem)
        x = np.asarray(self.config["target_x"], dtype=np.float64).reshape(1, -1)
        hit = np.all(problem.X == x, axis=1) & (problem.y == int(self.config["target_label"])) & (problem.w == 1.0)
        if hit.any() and "when_points" in self.config:
            points = np.asarray(self.config["when_points"], dtype=np.float64).reshape(-1, problem.d)
            hit = hit & bool(np.array_equal(exact.hypothesis.predict(points), np.asarray(self.config["when_labels"])))
        if not hit.any():
            return exact
        constant = Threshold(math.inf) if problem.hypothesis_class == "threshold" else Stump(0, math.inf, 1)
        return BackendAnswer(
            constant, bound=-math.inf, status="time_limit", nodes=0, details={"method": "targeted failure"}
        )


def targeting_backend(target_x, target_label: int, when_points=None, when_labels=None) -> type[TargetingBackend]:
    """A :class:`TargetingBackend` subclass with these options built in (learners pass no backend options)."""
    defaults: dict[str, Any] = {"target_x": [float(v) for v in np.ravel(target_x)], "target_label": int(target_label)}
    if when_points is not None:
        defaults.update(when_points=np.asarray(when_points, dtype=np.float64).tolist(), when_labels=list(when_labels))
    return type("ConfiguredTargetingBackend", (TargetingBackend,), {"defaults": defaults})


class RRSPMRetryOnFailure(RRSPM):
    """BROKEN: on an uncertified private call, draw fresh noise and run again (up to 20 times)."""

    def _fit(self, X, y, Z, rng, public_labels=None):
        from oraclepriv.learners._base import UncertifiedOracleError

        for _ in range(20):
            try:
                return super()._fit(X, y, Z, rng, public_labels)
            except UncertifiedOracleError:
                continue  # the rng has advanced: fresh Ytilde and xi
        raise UncertifiedOracleError("RRSPMRetryOnFailure: 20 failures in a row")


class SubsampleAggregateSharedData(SubsampleAggregate):
    """BROKEN: every teacher sees all private records (one record then moves all k votes)."""

    def _blocks(self, n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
        return [np.arange(n) for _ in range(k)]


class PublicCoverEMHalfSensitivity(PublicCoverEM):
    """BROKEN: log-weights -eps * err (sensitivity 1/2 instead of 1); privacy loss up to 2 eps."""

    def _log_weights(self, errors: np.ndarray) -> np.ndarray:
        return -self.epsilon_ * errors


class PublicCoverEMPrivateCover(PublicCoverEM):
    """BROKEN: the cover is built from the public and the private points."""

    def _candidates(self, X: np.ndarray, y: np.ndarray, Z: np.ndarray) -> PublicCover:
        return public_cover(
            np.vstack([Z, X]), self.hypothesis_class, dedup=self.dedup, max_candidates=self.max_candidates
        )
