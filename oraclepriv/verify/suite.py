"""The verification suite behind ``oraclepriv verify suite`` and ``results/verify.md``.

Subjects: RRSPM (Laplace, exact; Gaussian with the derived safe calibration, sampled), RSPM and
SubsampleAggregate (for one fixed random split), on thresholds, stumps and halfspaces (d = 2 and 3,
through ``enumerate`` and ``scip-bc``); the tight constructions, where Theorem 8's bound is
attained, must show a loss of exactly eps. Near-miss controls the verifier must report as exceeding
their claim: Laplace scale x 0.9 and x 0.99, a projection call that sees one private record, a
Gaussian std x 0.35, and SubsampleAggregate teachers that all see every record. The Gaussian
calibration without its union bound (the sqrt(m)-only shape) is run too and reported as it measures.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from oraclepriv.audit.controls import (
    RRSPMGaussianSqrtMOnly,
    RRSPMProjectionSeesPrivatePoint,
    SubsampleAggregateSharedData,
    laplace_scaled,
)
from oraclepriv.audit.scenarios import teacher_flip_scenario, tight_construction, tight_halfspace_construction
from oraclepriv.execution import Progress
from oraclepriv.learners import RRSPM, RSPM, SubsampleAggregate

__all__ = [
    "SuiteCase",
    "explicit_law_rows",
    "natural_halfspace",
    "ppm_exact_rows",
    "run_suite",
    "suite_cases",
    "tight_halfspace",
]


def tight_halfspace(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tight halfspace instance in d dimensions, where RRSPM's loss is epsilon exactly.

    The instance of :func:`oraclepriv.audit.scenarios.tight_halfspace_construction`; its D' is the
    label flip of the last record, which the verifier's neighbour family contains.

    Parameters
    ----------
    d : int
        The dimension.

    Returns
    -------
    X : numpy.ndarray
        The private features.
    y : numpy.ndarray
        The private labels.
    Z : numpy.ndarray
        The public points.
    """
    sc = tight_halfspace_construction(d)
    return sc.X, sc.y, sc.X_public


def natural_halfspace(n: int = 12, m: int = 4, d: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A small natural instance: Gaussian points, labels from a halfspace with 10% flipped.

    Parameters
    ----------
    n : int, default 12
        The number of private records.
    m : int, default 4
        The number of public points (Gaussian too).
    d : int, default 2
        The dimension.
    seed : int, default 0
        The seed of the draw.

    Returns
    -------
    X : numpy.ndarray
        The private features, rounded to 3 decimals.
    y : numpy.ndarray
        The private labels.
    Z : numpy.ndarray
        The public points, rounded to 3 decimals.
    """
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 3)
    y = ((X[:, 0] - 0.5 * X[:, 1] > 0) ^ (rng.random(n) < 0.1)).astype(np.int8)
    return X, y, np.round(rng.normal(size=(m, d)), 3)


@dataclass
class SuiteCase:
    """One row of the suite: a learner on an instance, with the verdict it must get.

    Parameters
    ----------
    name : str
        The instance's name.
    learner : callable
        Builds the unfitted learner.
    X : numpy.ndarray
        The private features.
    y : numpy.ndarray
        The private labels.
    X_public : numpy.ndarray or None
        The public points (None for RSPM).
    backend : str or None
        The verifier's backend.
    mode : {"exact", "sampled"}
        The verifier's mode.
    expected : str
        The verdict the case must get: "verified", or "exceeds" for a near-miss control.
    note : str, default ""
        What the case shows.
    draws : int, default 10000000
        Noise vectors per cost vector in sampled mode.
    """

    name: str
    learner: Callable[[], Any]
    X: np.ndarray
    y: np.ndarray
    X_public: np.ndarray | None
    backend: str | None
    mode: str
    expected: str  # a verdict of oraclepriv.verify.verifier.VERDICTS: "verified" or "exceeds" in the suite
    note: str = ""
    draws: int = 10_000_000


def suite_cases(quick: bool = False) -> list[SuiteCase]:
    """The cases of ``oraclepriv verify suite`` (module docstring).

    Parameters
    ----------
    quick : bool, default False
        Leave out the slowest instance (the natural halfspace) and draw 2 million rather than 10
        million noise vectors per cost vector in sampled mode.

    Returns
    -------
    list of SuiteCase
        The cases, in the report's order.
    """
    cases: list[SuiteCase] = []
    for m in (1, 2, 3):
        sc = tight_construction(m)
        cases.append(
            SuiteCase(
                f"tight-{sc.hypothesis_class}-m{m}",
                functools.partial(RRSPM, epsilon=1.0, hypothesis_class=sc.hypothesis_class),
                sc.X,
                sc.y,
                sc.X_public,
                None,
                "exact",
                "verified",
                "tight: loss must be eps",
            )
        )
    for d, backends in ((2, ("enumerate", "scip-bc")), (3, ("enumerate", "scip-bc"))):
        X, y, Z = tight_halfspace(d)
        for backend in backends:
            cases.append(
                SuiteCase(
                    f"tight-halfspace-d{d}",
                    functools.partial(RRSPM, epsilon=1.0, hypothesis_class="halfspace", backend=backend),
                    X,
                    y,
                    Z,
                    backend,
                    "exact",
                    "verified",
                    "tight: loss must be eps",
                )
            )
    if not quick:
        X, y, Z = natural_halfspace(n=12)
        cases.append(
            SuiteCase(
                "natural-halfspace-d2-n12-m4",
                lambda: RRSPM(epsilon=1.0, hypothesis_class="halfspace", backend="scip-bc"),
                X,
                y,
                Z,
                "scip-bc",
                "exact",
                "verified",
            )
        )
    grid = [np.arange(4.0)]
    Xg = np.array([[1.0], [1.0], [2.0], [3.0], [0.0]])
    yg = np.array([0, 1, 1, 1, 0], dtype=np.int8)
    cases.append(
        SuiteCase(
            "grid-threshold-k4",
            lambda: RSPM(epsilon=1.0, hypothesis_class="threshold", grid=grid),
            Xg,
            yg,
            None,
            None,
            "exact",
            "verified",
            "RSPM, identification set = the 4 grid points",
        )
    )
    grid2 = [np.arange(2.0), np.arange(3.0)]
    Xs = np.array([[0.0, 1.0], [1.0, 2.0], [1.0, 0.0], [0.0, 2.0]])
    ys = np.array([0, 1, 1, 0], dtype=np.int8)
    cases.append(
        SuiteCase(
            "grid-stump-2x3",
            lambda: RSPM(epsilon=1.0, hypothesis_class="stump", grid=grid2),
            Xs,
            ys,
            None,
            None,
            "exact",
            "verified",
            "RSPM, identification set of 4 points",
        )
    )
    flip = teacher_flip_scenario()

    def laplace_teachers(
        cls: type[SubsampleAggregate], hypothesis_class: str = flip.hypothesis_class
    ) -> Callable[[], SubsampleAggregate]:
        """k = 9 teachers, Laplace votes, one fixed random split."""
        return functools.partial(
            cls,
            n_teachers=9,
            noise="laplace",
            delta=0.0,
            epsilon=1.0,
            hypothesis_class=hypothesis_class,
            random_state=0,
        )

    cases.append(
        SuiteCase(
            flip.name,
            laplace_teachers(SubsampleAggregate),
            flip.X,
            flip.y,
            flip.X_public,
            None,
            "exact",
            "verified",
            "SubsampleAggregate, k = 9, Laplace; one fixed random split",
        )
    )
    cases.append(
        SuiteCase(
            flip.name,
            laplace_teachers(SubsampleAggregateSharedData),
            flip.X,
            flip.y,
            flip.X_public,
            None,
            "exact",
            "exceeds",
            "control: every teacher sees every record",
        )
    )
    Xh, yh, Zh = natural_halfspace(n=12, m=3, seed=1)
    cases.append(
        SuiteCase(
            "natural-halfspace-d2-n12-m3",
            lambda: SubsampleAggregate(
                n_teachers=3,
                noise="laplace",
                delta=0.0,
                epsilon=1.0,
                hypothesis_class="halfspace",
                backend="scip-bc",
                random_state=0,
            ),
            Xh,
            yh,
            Zh,
            "scip-bc",
            "exact",
            "verified",
            "SubsampleAggregate, k = 3 teachers through scip-bc",
        )
    )
    draws = 2_000_000 if quick else 10_000_000
    sc = tight_construction(2)

    def gaussian(cls: type[RRSPM], hypothesis_class: str = sc.hypothesis_class) -> Callable[[], RRSPM]:
        """RRSPM (or a variant) with Gaussian noise at delta = 0.01 on the tight construction's class."""
        return functools.partial(cls, epsilon=1.0, delta=1e-2, noise="gaussian", hypothesis_class=hypothesis_class)

    cases.append(
        SuiteCase(
            "tight-stump-m2",
            gaussian(RRSPM),
            sc.X,
            sc.y,
            sc.X_public,
            None,
            "sampled",
            "verified",
            "Gaussian, derived safe calibration, delta = 0.01",
            draws,
        )
    )
    # near-miss controls
    sc1 = tight_construction(1)
    for factor in (0.9, 0.99):
        cases.append(
            SuiteCase(
                "tight-threshold-m1",
                functools.partial(laplace_scaled(factor), epsilon=1.0, hypothesis_class="threshold"),
                sc1.X,
                sc1.y,
                sc1.X_public,
                None,
                "exact",
                "exceeds",
                f"control: Laplace scale x {factor:g} (true loss {1 / factor:.4g})",
            )
        )
    X, y, Z = tight_halfspace(2)
    cases.append(
        SuiteCase(
            "tight-halfspace-d2",
            lambda: laplace_scaled(0.9)(epsilon=1.0, hypothesis_class="halfspace", backend="scip-bc"),
            X,
            y,
            Z,
            "scip-bc",
            "exact",
            "exceeds",
            "control: Laplace scale x 0.9",
        )
    )
    cases.append(
        SuiteCase(
            "tight-threshold-m1",
            lambda: RRSPMProjectionSeesPrivatePoint(epsilon=1.0, hypothesis_class="threshold"),
            sc1.X,
            sc1.y,
            sc1.X_public,
            None,
            "exact",
            "exceeds",
            "control: the projection call sees one private record",
        )
    )
    cases.append(
        SuiteCase(
            "tight-stump-m2",
            gaussian(_gaussian_scaled(0.35)),
            sc.X,
            sc.y,
            sc.X_public,
            None,
            "sampled",
            "exceeds",
            "control: Gaussian std x 0.35",
            draws,
        )
    )
    cases.append(
        SuiteCase(
            "tight-stump-m2",
            gaussian(RRSPMGaussianSqrtMOnly),
            sc.X,
            sc.y,
            sc.X_public,
            None,
            "sampled",
            "verified",
            "the sqrt(m)-only Gaussian calibration (no union bound): measured, not a violation at m <= 3",
            draws,
        )
    )
    return cases


def _gaussian_scaled(factor: float) -> type[RRSPM]:
    """RRSPM whose Gaussian std is ``factor`` times the derived safe one (a control)."""

    def noise_law(self: RRSPM, m: int, n_features: int) -> tuple[str, float]:
        family, std = RRSPM.noise_law(self, m, n_features)
        return family, factor * std

    return type(f"RRSPMGaussianStd{factor:g}", (RRSPM,), {"noise_law": noise_law})


def run_suite(
    quick: bool = False,
    n_jobs: int = 1,
    seed: int = 0,
    *,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Verify every case of the suite; each row says whether the verdict is the expected one.

    Parameters
    ----------
    quick : bool, default False
        Only the fast cases (:func:`suite_cases`).
    n_jobs : int, default 1
        Worker processes per verification.
    seed : int, default 0
        The seed of the sampled cases' draws.
    on_row : callable or None, default None
        Called with each row as soon as it is done.
    progress : callable or None, default None
        ``progress(cases done, cases)``, after each case.

    Returns
    -------
    list of dict
        One row per case: the instance, :meth:`VerifyResult.to_dict`, the expected verdict, the note,
        the seconds and ``ok``.
    """
    from oraclepriv.verify.verifier import verify_learner

    rows = []
    cases = suite_cases(quick)
    for case in cases:
        start = time.perf_counter()
        learner = case.learner()
        result = verify_learner(
            learner,
            case.X,
            case.y,
            case.X_public,
            backend=case.backend,
            mode=case.mode,
            draws=case.draws,
            seed=seed,
            n_jobs=n_jobs,
            name=type(learner).__name__,
        )
        row = {
            "instance": case.name,
            **result.to_dict(),
            "expected": case.expected,
            "note": case.note,
            "seconds": time.perf_counter() - start,
        }
        row["ok"] = row["verdict"] == case.expected
        rows.append(row)
        if on_row is not None:
            on_row(row)
        if progress is not None:
            progress(len(rows), len(cases))
    return rows


def ppm_exact_rows(epsilon: float = 1.0, seed: int = 4) -> list[dict[str, Any]]:
    """The PPM learner's privacy loss through its exact output law; no sampling.

    The PPM learner of Bassily, Moran, Nandi, "Learning from Mixtures of Private and Public
    Populations" (Algorithm 2): the largest ``abs(log p_D(g) - log p_D'(g))`` over every g in G, for
    neighbours that replace one private record by its label flip, by each public point with label 0,
    and by a far-away point with either label (privacy bits and public records fixed); and the
    exponential mechanism with weights exp(-eps m(g)) (sensitivity 1/2, a control).

    Parameters
    ----------
    epsilon : float, default 1.0
        The learner's epsilon.
    seed : int, default 4
        The seed of the instance.

    Returns
    -------
    list of dict
        One row per learner, in the verify report's format.
    """
    import math

    from oraclepriv.learners.ppm import exact_log_probabilities

    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(14, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] >= 0.1).astype(np.int8)
    y[:2] ^= 1
    public = y == 0
    private = np.flatnonzero(~public)
    candidates = [(X[j], 0) for j in np.flatnonzero(public)] + [
        (np.array([50.0, -40.0]), 1),
        (np.array([50.0, -40.0]), 0),
    ]
    rows = []
    for label, scale, expected in (
        ("PPMHalfspaces", 1.0, "verified"),
        ("control: weights exp(-eps mistakes)", 2.0, "exceeds"),
    ):
        start = time.perf_counter()
        base, _, _ = exact_log_probabilities(X, y, public, scale * epsilon)
        worst, where, count = 0.0, "", 0
        for i in private:
            for x_new, y_new in [(X[i], 1 - int(y[i]))] + candidates:
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = x_new, y_new
                other, _, _ = exact_log_probabilities(X2, y2, public, scale * epsilon)
                count += 1
                loss = math.inf if set(base) != set(other) else max(abs(base[g] - other[g]) for g in base)
                if loss > worst:
                    worst, where = loss, f"record {int(i)} -> ({', '.join(f'{v:g}' for v in x_new)}; y={y_new})"
        verdict = "exceeds" if worst > epsilon * (1 + 1e-9) else "verified"
        rows.append(
            {
                "subject": label,
                "class": "halfspace",
                "method": "exact law over G (|G| enumerated)",
                "n_neighbours": count,
                "epsilon": epsilon,
                "loss": worst,
                "worst_neighbour": where,
                "verdict": verdict,
                "expected": expected,
                "ok": verdict == expected,
                "seconds": time.perf_counter() - start,
            }
        )
    return rows


def explicit_law_rows(epsilon: float = 1.0, seed: int = 0, *, progress: Progress | None = None) -> list[dict[str, Any]]:
    """The learners with an explicit output law, in the verify report's format.

    PublicCoverEM (the exact audit over its explicit law,
    :func:`oraclepriv.audit.suite.public_cover_audit_suite`) and the PPM learner (:func:`ppm_exact_rows`).

    Parameters
    ----------
    epsilon : float, default 1.0
        The learners' epsilon.
    seed : int, default 0
        The seed of the instances.
    progress : callable or None, default None
        ``progress(done, total)``, counting the PublicCoverEM cases and then the PPM rows as one more
        step.

    Returns
    -------
    list of dict
        One row per case.
    """
    from oraclepriv.audit.suite import public_cover_audit_suite

    def cover_progress(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total + 1)

    rows = []
    for r in public_cover_audit_suite(epsilon=epsilon, seed=seed, progress=cover_progress):
        verdict = "verified" if r["passed"] else "exceeds"
        rows.append(
            {
                "subject": r["learner"],
                "class": r["scenario"],
                "method": "exact law over the public cover",
                "n_neighbours": r["n_neighbours"],
                "epsilon": epsilon,
                "loss": r["epsilon_hat"],
                "worst_neighbour": str(r.get("worst_pair", "")),
                "verdict": verdict,
                "expected": "verified" if r["expected"] == "pass" else "exceeds",
                "ok": r["verdict"] == "ok",
                "seconds": r["seconds"],
            }
        )
    steps = len(rows) + 1  # the PublicCoverEM cases, then the PPM rows
    rows += ppm_exact_rows(epsilon, seed=4)
    if progress is not None:
        progress(steps, steps)
    return rows
