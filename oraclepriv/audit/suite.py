"""The audit suites behind ``oraclepriv audit rrspm``, ``audit subsample`` and ``audit public-cover``, and the
stability + mechanism audit of Perturbation and Regularization (:func:`perturb_audit_suite`): every
scenario is run on the correct learner (must pass) and on the deliberately broken variants it is
built to catch (must fail).

A row's ``verdict`` is "ok" when the audit's outcome is the expected one (pass for the correct
learner, fail for a negative control) and "UNEXPECTED" otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from oraclepriv.audit.controls import (
    ClaimingQuantileSplitBackend,
    PublicCoverEMHalfSensitivity,
    PublicCoverEMPrivateCover,
    RegularizationEtaNotScaled,
    RRSPMRateAsScale,
    RRSPMRetryOnFailure,
    RRSPMReturnsFhat,
    RRSPMScaleTwoOverEps,
    SubsampleAggregateSharedData,
    laplace_scaled,
    targeting_backend,
)
from oraclepriv.audit.exact import audit_exact_distribution
from oraclepriv.audit.mechanism import audit_perturb_learner
from oraclepriv.audit.runner import Neighbours, audit_learner, audit_reduced, detectable_loss
from oraclepriv.audit.scenarios import (
    flip_scenario,
    leak_scenario,
    linear_flat_scenario,
    quantile_scenario,
    teacher_flip_scenario,
    tight_construction,
    tight_halfspace_construction,
)
from oraclepriv.backends import registered_backend
from oraclepriv.execution import Progress
from oraclepriv.learners.perturbation import Perturbation
from oraclepriv.learners.public_cover_em import PublicCoverEM
from oraclepriv.learners.regularization import Regularization
from oraclepriv.learners.rrspm import RRSPM
from oraclepriv.learners.subsample import SubsampleAggregate

__all__ = [
    "rrspm_audit_suite",
    "subsample_audit_suite",
    "public_cover_audit_suite",
    "perturb_audit_suite",
    "em_audit_data",
]


#: one audited case: (label, scenario, learner class, extra params, must_pass)
Case = tuple[str, Neighbours, type, dict[str, Any], bool]


def _cases() -> list[Case]:
    """(label, scenario, learner class, extra params, must_pass)."""
    tight1 = tight_construction(1)
    tight2 = tight_construction(2)
    flip, leak, quantile = flip_scenario(), leak_scenario(), quantile_scenario()
    return [
        ("RRSPM", tight1, RRSPM, {}, True),
        ("RRSPM", tight2, RRSPM, {}, True),
        ("control: Laplace scale 2/eps", tight2, RRSPMScaleTwoOverEps, {}, False),
        ("RRSPM", flip, RRSPM, {}, True),
        ("control: Laplace scale eps/(2m)", flip, RRSPMRateAsScale, {}, False),
        ("RRSPM", leak, RRSPM, {}, True),
        ("control: returns fhat", leak, RRSPMReturnsFhat, {}, False),
        ("RRSPM", quantile, RRSPM, {}, True),
        ("control: non-exact oracle claiming optimality", quantile, RRSPM, {"backend": "claiming-quantile"}, False),
        # robustification (oraclepriv/robust.py) against a solver that fails only on instances holding the record
        # that differs between the neighbours ("targeting" always; "targeting-when" only if the answer labels Z (0, 0))
        (
            "RRSPM, on_uncertified=fallback, targeting solver",
            leak,
            RRSPM,
            {"backend": "targeting", "on_uncertified": "fallback"},
            True,
        ),
        (
            "RRSPM, on_uncertified=fallback, targeting-when solver",
            leak,
            RRSPM,
            {"backend": "targeting-when", "on_uncertified": "fallback"},
            True,
        ),
        (
            "control: retry with fresh noise after a failure",
            leak,
            RRSPMRetryOnFailure,
            {"backend": "targeting-when"},
            False,
        ),
        (
            "control: on_uncertified=flag, targeting solver",
            leak,
            RRSPM,
            {"backend": "targeting", "on_uncertified": "flag"},
            False,
        ),
    ]


OnRow = Callable[[dict[str, Any]], None]


def _counter(progress: Progress | None, total: int) -> Callable[[], None]:
    """A tick() that reports one more case done to ``progress(done, total)``."""
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    return tick


def _record(
    rows: list[dict[str, Any]],
    row: dict[str, Any],
    passed: bool,
    must_pass: bool,
    seconds: float,
    on_row: OnRow | None,
    tick: Callable[[], None],
) -> None:
    """Add the verdict columns (ok = the expected outcome: pass for a learner, fail for a control); report the row."""
    row.update(
        {
            "passed": passed,
            "expected": "pass" if must_pass else "fail",
            "verdict": "ok" if passed == must_pass else "UNEXPECTED",
            "seconds": seconds,
        }
    )
    rows.append(row)
    if on_row is not None:
        on_row(row)
    tick()


def _seeded(cls: type, epsilon: float, hypothesis_class: str, params: dict[str, Any]) -> Callable[[int], Any]:
    """The audit's learner factory: a fresh ``cls`` with the claimed epsilon, the scenario's class and ``params``
    for every run's seed."""

    def make(seed: int) -> Any:
        return cls(**{"epsilon": epsilon, "hypothesis_class": hypothesis_class, "random_state": seed, **params})

    return make


def _run_cases(
    cases: list[Case],
    n_runs: int,
    epsilon: float,
    seed: int,
    on_row: OnRow | None,
    tick: Callable[[], None],
    n_jobs: int = 1,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for label, scenario, cls, params, must_pass in cases:
        result = audit_learner(
            _seeded(cls, epsilon, scenario.hypothesis_class, params),
            scenario,
            epsilon=epsilon,
            delta=float(params.get("delta", 0.0)),
            n_runs=n_runs,
            seed=seed,
            learner_name=label,
            n_jobs=n_jobs,
        )
        row = {
            "scenario": scenario.name,
            "learner": label,
            "epsilon": epsilon,
            "delta": result.delta,
            "n_runs": n_runs,
            "sampler": "whole learner",
            "eps_lower": result.eps_lower,
            "eps_point": result.eps_point,
            "detects": detectable_loss(n_runs, len(scenario.X_public), epsilon)
            if scenario.name.startswith("tight")
            else None,
        }
        _record(rows, row, result.passed, must_pass, result.seconds, on_row, tick)
    return rows


def _reduced_cases() -> list[Case]:
    """(label, scenario, learner class, extra params, must_pass) audited with the reduced sampler."""
    tight1, tight2, half = tight_construction(1), tight_construction(2), tight_halfspace_construction(2)
    return [
        ("RRSPM (reduced sampler)", tight1, RRSPM, {}, True),
        ("RRSPM (reduced sampler)", tight2, RRSPM, {}, True),
        ("control: true loss 1.2 eps (Laplace scale / 1.2)", tight1, laplace_scaled(1 / 1.2), {}, False),
        ("control: true loss 1.2 eps (Laplace scale / 1.2)", tight2, laplace_scaled(1 / 1.2), {}, False),
        ("RRSPM, scip-bc (reduced sampler)", half, RRSPM, {"backend": "scip-bc"}, True),
        ("control: Laplace scale x 0.9, scip-bc", half, laplace_scaled(0.9), {"backend": "scip-bc"}, False),
    ]


def _run_reduced_cases(
    cases: list[Case], draws: int, epsilon: float, seed: int, on_row: OnRow | None, tick: Callable[[], None]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for label, scenario, cls, params, must_pass in cases:
        result = audit_reduced(
            _seeded(cls, epsilon, scenario.hypothesis_class, params),
            scenario,
            epsilon=epsilon,
            n_runs=draws,
            seed=seed,
            learner_name=label,
        )
        row = {
            "scenario": scenario.name,
            "learner": label,
            "epsilon": epsilon,
            "delta": 0.0,
            "n_runs": draws,
            "sampler": "reduced",
            "eps_lower": result.eps_lower,
            "eps_point": result.eps_point,
            "detects": detectable_loss(draws, len(scenario.X_public), epsilon),
        }
        _record(rows, row, result.passed, must_pass, result.seconds, on_row, tick)
    return rows


def rrspm_audit_suite(
    n_runs: int = 4000,
    epsilon: float = 1.0,
    seed: int = 0,
    *,
    on_row: OnRow | None = None,
    progress: Progress | None = None,
    n_jobs: int = 1,
    draws: int = 1_000_000,
) -> list[dict[str, Any]]:
    """Audit RRSPM and its negative controls; one row per (scenario, learner), each handed to ``on_row``
    as it is done, and ``progress(cases done, cases)`` after it.

    The whole learner runs ``n_runs`` times per neighbour on every scenario (the robustification rows
    need it: their solver behaviour is part of the mechanism); the tight constructions are also
    audited with ``draws`` runs of the reduced problem, which is what detects a loss of 1.2 eps. A
    row's ``detects`` is the loss its run count detects (:func:`~oraclepriv.audit.runner.detectable_loss`).
    """
    target = f"{ClaimingQuantileSplitBackend.__module__}:{ClaimingQuantileSplitBackend.__name__}"
    leak = leak_scenario()
    always = targeting_backend(leak.X_prime[0], int(leak.y_prime[0]))
    when = targeting_backend(leak.X_prime[0], int(leak.y_prime[0]), when_points=leak.X_public, when_labels=[0, 0])
    cases, reduced = _cases(), _reduced_cases()
    tick = _counter(progress, len(cases) + len(reduced))
    with (
        registered_backend("claiming-quantile", target),
        registered_backend("targeting", always),
        registered_backend("targeting-when", when),
    ):
        rows = _run_cases(cases, n_runs, epsilon, seed, on_row, tick, n_jobs)
    return rows + _run_reduced_cases(reduced, draws, epsilon, seed, on_row, tick)


def _subsample_cases() -> list[Case]:
    """(label, scenario, learner class, extra params, must_pass) for SubsampleAggregate (k = 9, Laplace)."""
    flip = teacher_flip_scenario()
    base = {"n_teachers": 9, "noise": "laplace", "delta": 0.0}
    gauss = {"noise": "gaussian", "delta": 1e-6}
    return [
        ("SubsampleAggregate", flip, SubsampleAggregate, base, True),
        ("control: every teacher sees all records", flip, SubsampleAggregateSharedData, base, False),
        # a solver that fails (honestly uncertified) on every instance holding D's differing record
        (
            "SubsampleAggregate, targeting solver, abstain",
            flip,
            SubsampleAggregate,
            {**base, "backend": "targeting"},
            True,
        ),
        (
            "SubsampleAggregate, targeting solver, keep",
            flip,
            SubsampleAggregate,
            {**base, "backend": "targeting", "teacher_failure": "keep"},
            True,
        ),
        (
            "control: all records per teacher, targeting solver",
            flip,
            SubsampleAggregateSharedData,
            {**base, "backend": "targeting"},
            False,
        ),
        # the (eps, delta) variant: Gaussian noise, audited with the same delta
        ("SubsampleAggregate, Gaussian, delta 1e-6", flip, SubsampleAggregate, {**base, **gauss}, True),
        (
            "control: every teacher sees all records, Gaussian",
            flip,
            SubsampleAggregateSharedData,
            {**base, **gauss},
            False,
        ),
    ]


def subsample_audit_suite(
    n_runs: int = 4000,
    epsilon: float = 1.0,
    seed: int = 0,
    *,
    on_row: OnRow | None = None,
    progress: Progress | None = None,
    n_jobs: int = 1,
) -> list[dict[str, Any]]:
    """Audit SubsampleAggregate (exact and targeting solvers) and its negative controls (``on_row`` and
    ``progress`` as in :func:`rrspm_audit_suite`)."""
    flip = teacher_flip_scenario()
    target = targeting_backend(flip.X[-1], int(flip.y[-1]))
    cases = _subsample_cases()
    with registered_backend("targeting", target):
        return _run_cases(cases, n_runs, epsilon, seed, on_row, _counter(progress, len(cases)), n_jobs)


#: (d, private records, public points) of :func:`em_audit_data` per class
EM_AUDIT_SIZES = {"threshold": (1, 40, 30), "stump": (3, 40, 20), "halfspace": (2, 30, 16)}


def max_useful_others() -> int:
    """The largest ``n_others`` that changes :func:`public_cover_audit_suite`: beyond it every dataset has
    fewer public points and private records than asked for, and all of them are tried."""
    return max(max(n, m) for _, n, m in EM_AUDIT_SIZES.values())


def em_audit_data(hypothesis_class: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Small private/public data for the exact audit of PublicCoverEM: (X_private, y_private, X_public).

    Private labels follow a halfspace (a cut of feature 0 for thresholds/stumps) with 10% flipped,
    so a few candidates hold most of the mass and a label flip moves it: the regime where the
    exponential mechanism's loss approaches eps."""
    d, n, m = EM_AUDIT_SIZES[hypothesis_class]
    rng = np.random.default_rng(np.random.SeedSequence([seed, n, m, d]))
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + (0.5 * X[:, 1] if d > 1 else 0.0) >= 0).astype(np.int8)
    flip = rng.choice(n, size=n // 10, replace=False)
    y[flip] = 1 - y[flip]
    return X, y, rng.normal(size=(m, d))


def _em_cases() -> list[tuple[str, str, type, dict[str, Any], bool]]:
    """(label, hypothesis, learner class, extra params, must_pass) for the exact EM audit. Params
    starting with "_" configure the audit: ``_labels_only`` audits label flips only (label-DP)."""
    label_dp = {"cover": "private-features", "_labels_only": True}
    return [
        ("PublicCoverEM", "halfspace", PublicCoverEM, {}, True),
        ("PublicCoverEM, sensitivity=paper", "halfspace", PublicCoverEM, {"sensitivity": "paper"}, True),
        ("PublicCoverEM", "stump", PublicCoverEM, {}, True),
        ("PublicCoverEM, dedup=False", "stump", PublicCoverEM, {"dedup": False}, True),
        ("PublicCoverEM", "threshold", PublicCoverEM, {}, True),
        ("control: sensitivity 1/2 (weights exp(-eps err))", "halfspace", PublicCoverEMHalfSensitivity, {}, False),
        ("control: sensitivity 1/2 (weights exp(-eps err))", "threshold", PublicCoverEMHalfSensitivity, {}, False),
        ("control: cover built from private points too", "halfspace", PublicCoverEMPrivateCover, {}, False),
        ("control: cover built from private points too", "stump", PublicCoverEMPrivateCover, {}, False),
        # Bassily, Mohri, Suresh, "Differentially Private Learning with Margin Guarantees", Alg. 5: the
        # cover of the private features protects labels only (docs/theory/public-cover-em.md)
        ("PublicCoverEM, cover=private-features, label flips (label-DP)", "halfspace", PublicCoverEM, label_dp, True),
        (
            "PublicCoverEM, cover=private-features, records (not record-DP)",
            "halfspace",
            PublicCoverEM,
            {"cover": "private-features"},
            False,
        ),
    ]


def public_cover_audit_suite(
    epsilon: float = 1.0,
    seed: int = 0,
    *,
    on_row: OnRow | None = None,
    progress: Progress | None = None,
    n_others: int = 4,
) -> list[dict[str, Any]]:
    """Exact audit (:mod:`oraclepriv.audit.exact`) of PublicCoverEM and its negative controls over
    every position of the private data, each replaced by its label flip and 3 n_others other records
    (``on_row`` and ``progress`` as in :func:`rrspm_audit_suite`)."""
    if isinstance(n_others, bool) or not isinstance(n_others, int) or n_others < 1:
        raise ValueError(f"n_others must be an integer >= 1 (label flips alone never move a point); got {n_others!r}")
    rows: list[dict[str, Any]] = []
    cases = _em_cases()
    tick = _counter(progress, len(cases))
    for label, hypothesis, cls, params, must_pass in cases:
        X, y, Z = em_audit_data(hypothesis, seed)
        labels_only = params.get("_labels_only", False)
        learner_params = {k: v for k, v in params.items() if not k.startswith("_")}
        public = None if learner_params.get("cover") == "private-features" else Z
        result = audit_exact_distribution(
            functools.partial(cls, epsilon=epsilon, hypothesis_class=hypothesis, **learner_params),
            X,
            y,
            public,
            epsilon=epsilon,
            n_others=0 if labels_only else n_others,
            seed=seed,
            learner_name=label,
            scenario=f"em-{hypothesis}",
        )
        row = {
            "scenario": result.scenario,
            "learner": label,
            "epsilon": epsilon,
            "n_private": int(X.shape[0]),
            "n_public": 0 if public is None else int(Z.shape[0]),
            "n_neighbours": result.n_neighbours,
            "epsilon_hat": result.epsilon_hat,
            "worst_pair": f"position {result.worst.get('position')}: {result.worst.get('replacement')}",
        }
        _record(rows, row, result.passed, must_pass, result.seconds, on_row, tick)
    return rows


def _perturb_cases(epsilon: float) -> list[tuple[str, Neighbours, Any, bool]]:
    """(label, scenario, unfitted learner, must_pass) for :func:`perturb_audit_suite`: Regularization with either
    noise law on the scenario whose shift is as large as strong convexity allows, and Perturbation on the flip
    scenario, each beside the control that breaks its stability claim."""
    flat, flip = linear_flat_scenario(200), flip_scenario()
    cases: list[tuple[str, Neighbours, Any, bool]] = []
    for noise, delta in (("gaussian", 1e-3), ("laplace", 0.0)):
        cases += [
            (
                f"Regularization, {noise} noise",
                flat,
                Regularization(epsilon=epsilon, delta=delta, noise=noise, eta=0.2),
                True,
            ),
            (
                f"control: eta not scaled to the sum objective, {noise} noise",
                flat,
                RegularizationEtaNotScaled(epsilon=epsilon, delta=delta, noise=noise, eta=0.2),
                False,
            ),
        ]
    return cases + [
        (
            "Perturbation",
            flip,
            Perturbation(epsilon=epsilon, delta=1e-3, hypothesis_class="threshold", eta=0.01, J=5),
            True,
        ),
        (
            "control: a claimed stability radius below the true one (rho = 0.05)",
            flip,
            Perturbation(
                epsilon=epsilon, delta=1e-3, hypothesis_class="threshold", eta=0.01, J=5, rho=0.05, rho_delta=1e-4
            ),
            False,
        ),
    ]


def perturb_audit_suite(
    n_samples: int = 200_000,
    epsilon: float = 1.0,
    seed: int = 0,
    *,
    on_row: OnRow | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Stability + mechanism audit (:mod:`oraclepriv.audit.mechanism`) of Perturbation and Regularization (Block,
    Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data", Algorithms 2 and
    3) and of the controls that break their stability claims: the centres fbar(Z) on both neighbours, computed
    by the learner's own code, must lie within the radius rho the learner calibrated gamma with, and ``n_samples``
    draws of the released vector under each centre bound the loss from below (``on_row`` and ``progress`` as in
    :func:`rrspm_audit_suite`)."""
    rows: list[dict[str, Any]] = []
    cases = _perturb_cases(epsilon)
    tick = _counter(progress, len(cases))
    for label, scenario, learner, must_pass in cases:
        result = audit_perturb_learner(learner, scenario, n_samples=n_samples, seed=seed)
        row = {
            "scenario": scenario.name,
            "learner": label,
            "epsilon": result.epsilon,
            "delta": result.delta,
            "n_runs": n_samples,
            "sampler": f"stability + mechanism ({result.noise} noise)",
            "eps_lower": result.eps_lower,
            "eps_point": result.estimate.eps_point,
            "distance_m": result.distance_m,
            "rho": result.rho,
            "stability_ok": result.stability_ok,
        }
        _record(rows, row, result.passed, must_pass, result.seconds, on_row, tick)
    return rows
