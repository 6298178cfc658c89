"""Overhead benchmark of the private learners: total fit time / time spent in oracle calls.

The papers count oracle calls; the claim "oracle-efficient" also means the learner's own work
around the calls is negligible. For each learner we fit on the bundled learning tasks
(``instances/learning_tasks.json``) and report fit seconds, the ledger's oracle seconds, their
ratio (target <= 1.2: the work around the calls is at most a fifth of the calls') and the call count.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from oraclepriv.bench.report import markdown_table
from oraclepriv.execution import Progress, parallel_map
from oraclepriv.instances import load_learning_task
from oraclepriv.learners.perturbation import Perturbation
from oraclepriv.learners.regularization import Regularization
from oraclepriv.learners.rrspm import RRSPM
from oraclepriv.public_data import PublicData
from oraclepriv.release import reading_diagnostics

__all__ = ["default_cases", "bench_learners", "synthetic_instance", "markdown_report"]


def synthetic_instance(
    n: int, m: int, d: int, seed: int = 0, *, l1_ball: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Private (X, y) with a noisy linear rule and public Z from the same marginal."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, d))
    Z = rng.uniform(-1, 1, (m, d))
    if l1_ball:
        X /= np.maximum(1.0, np.abs(X).sum(axis=1, keepdims=True))
        Z /= np.maximum(1.0, np.abs(Z).sum(axis=1, keepdims=True))
    w = np.linspace(1.0, -0.5, d)
    y = ((X @ w > 0) ^ (rng.random(n) < 0.1)).astype(np.int8)
    return X, y, Z


def default_cases() -> list[dict[str, Any]]:
    """Every oracle learner of Block, Bun, Desai, Shetty, Wu ("Oracle-Efficient Differentially Private Learning
    with Public Data") on a bundled learning task (``instances/learning_tasks.json``)."""
    return [
        {
            "name": "rrspm-stump",
            "task": "task-5d-n20000",
            "make": lambda s: RRSPM(epsilon=1.0, hypothesis_class="stump", random_state=s),
        },
        {
            "name": "rrspm-halfspace-d2",
            "task": "task-2d-n2000",
            "make": lambda s: RRSPM(epsilon=1.0, hypothesis_class="halfspace", random_state=s),
        },
        {
            "name": "perturbation-stump",
            "task": "task-5d-n20000",
            "make": lambda s: Perturbation(epsilon=1.0, delta=1e-6, hypothesis_class="stump", J=10, random_state=s),
        },
        {
            "name": "regularization-linear",
            "task": "task-l1-3d-n300",
            "make": lambda s: Regularization(epsilon=1.0, delta=1e-6, random_state=s),
        },
    ]


def bench_learners(
    cases: list[dict[str, Any]] | None = None,
    repeats: int = 3,
    seed: int = 0,
    progress: Progress | None = None,
    min_seconds: float = 0.0,
    n_jobs: int = 1,
) -> list[dict[str, Any]]:
    """One row per case: median fit seconds, oracle seconds, ratio, oracle calls.

    Each case is fitted at least ``repeats`` times and until ``min_seconds`` of fitting have
    accumulated (a 3 ms fit needs hundreds of repeats for a stable median). ``ratio`` is the median
    of the per-fit ratios; ``ratio_q25``/``ratio_q75`` give its spread. Each case is one task on
    ``n_jobs`` workers (:mod:`oraclepriv.execution`): fit and oracle time are measured in the same
    process, so the ratio stays meaningful when cases run side by side. ``progress(cases done, cases)``.
    """
    tasks = [(case, repeats, seed, min_seconds) for case in (cases or default_cases())]
    return parallel_map(_bench_case, tasks, n_jobs, progress)


def _bench_case(case: dict[str, Any], repeats: int, seed: int, min_seconds: float) -> dict[str, Any]:
    """The row of one case of :func:`bench_learners`."""
    if "task" in case:
        X, y, Z = load_learning_task(case["task"])
    else:
        X, y, Z = synthetic_instance(case["n"], case["m"], case["d"], seed, l1_ball=case.get("l1_ball", False))
    fits: list[float] = []
    oracles: list[float] = []
    calls: list[int] = []
    case["make"](seed).fit(X, y, X_public=PublicData(Z))  # warm-up: imports, caches (e.g. the Gaussian calibration)
    r = 0
    while r < repeats or sum(fits) < min_seconds:
        learner = case["make"](seed + r)
        start = time.perf_counter()
        learner.fit(X, y, X_public=PublicData(Z))
        fits.append(time.perf_counter() - start)
        with reading_diagnostics():  # timings: a measurement, not a release
            oracles.append(learner.ledger_.total_seconds())
            calls.append(len(learner.ledger_))
        r += 1
    fit_s, oracle_s = float(np.median(fits)), float(np.median(oracles))
    ratios = np.array(fits) / np.maximum(np.array(oracles), 1e-12)
    return {
        "learner": case["name"],
        "instance": case.get("task", "synthetic"),
        "n": X.shape[0],
        "m": Z.shape[0],
        "d": X.shape[1],
        "oracle_calls": int(calls[0]),
        "fit_seconds": fit_s,
        "oracle_seconds": oracle_s,
        "fits": len(fits),
        "ratio": float(np.median(ratios)),
        "ratio_q25": float(np.quantile(ratios, 0.25)),
        "ratio_q75": float(np.quantile(ratios, 0.75)),
    }


def markdown_report(rows: list[dict[str, Any]], command: str) -> str:
    """:func:`bench_learners`' rows as a Markdown table, stating the command and machine that produced it."""
    columns = [
        "learner",
        "instance",
        "n",
        "m",
        "d",
        "oracle_calls",
        "fits",
        "fit_seconds",
        "oracle_seconds",
        "ratio",
        "ratio_q25",
        "ratio_q75",
    ]
    note = (
        "ratio = total fit time / time inside the fit's oracle calls, median over the fits (q25/q75: its "
        "quartiles); fit_seconds and oracle_seconds are medians; target <= 1.2."
    )
    return markdown_table("Learner overhead", command, rows, columns, note)
