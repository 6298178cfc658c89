"""Timings of the PPM learner (Bassily, Moran, Nandi, "Learning from Mixtures of Private and Public
Populations", Algorithm 2) at the sizes the issue targets: d = 2 with n_pub = 200 (|G| ~ 8e8, target
< 10 s on 2 cores) and d = 1 with n = 10^6 (``oraclepriv bench ppm``).
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from oraclepriv.bench.report import markdown_table
from oraclepriv.execution import Progress
from oraclepriv.provenance import load_averages

__all__ = ["bench_ppm", "BENCH_CASES", "make_case", "markdown_report"]

#: name -> (d, n_pub, n_priv)
BENCH_CASES: dict[str, tuple[int, int, int]] = {
    "d2_npub200": (2, 200, 200),
    "d2_npub100": (2, 100, 100),
    "d1_n1e6": (1, 500_000, 500_000),
}


def make_case(d: int, n_pub: int, n_priv: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Label-determined, realizable data with exactly n_pub public (label 0) and n_priv private points."""
    w = np.array([1.0, 0.5, -0.25][:d])
    negatives: list[np.ndarray] = []
    positives: list[np.ndarray] = []
    while sum(len(b) for b in negatives) < n_pub or sum(len(b) for b in positives) < n_priv:
        X = rng.uniform(-1, 1, size=(max(n_pub, n_priv) * 2 + 10, d))
        pos = X @ w >= 0.2
        negatives.append(X[~pos])
        positives.append(X[pos])
    X = np.vstack([np.concatenate(negatives)[:n_pub], np.concatenate(positives)[:n_priv]])
    y = np.r_[np.zeros(n_pub), np.ones(n_priv)].astype(np.int8)
    return X, y, y == 0


def bench_ppm(
    cases: Iterable[str] = ("d2_npub200", "d1_n1e6"),
    repeat: int = 1,
    random_state: int = 0,
    epsilon: float = 1.0,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Fit PPMHalfspaces ``repeat`` times per case; return wall/CPU seconds and the class sizes.
    ``progress(fits done, fits)``."""
    from oraclepriv.learners.ppm import PPMHalfspaces
    from oraclepriv.release import reading_diagnostics

    cases = list(cases)
    unknown = [c for c in cases if c not in BENCH_CASES]
    if unknown:
        raise ValueError(f"unknown bench case(s) {unknown}; available: {sorted(BENCH_CASES)}")
    if int(repeat) < 1:
        raise ValueError(f"repeat must be >= 1; got {repeat!r}")
    rng = np.random.default_rng(random_state)
    out: dict[str, Any] = {
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "load_average": load_averages(),
        },
        "epsilon": epsilon,
        "cases": {},
    }
    for name in cases:
        d, n_pub, n_priv = BENCH_CASES[name]
        X, y, public = make_case(d, n_pub, n_priv, rng)
        walls: list[float] = []
        cpus: list[float] = []
        parts: list[dict[str, float]] = []
        for r in range(int(repeat)):
            t, c = time.perf_counter(), time.process_time()
            clf = PPMHalfspaces(epsilon=epsilon, random_state=random_state + r).fit(X, y, public)
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
            with reading_diagnostics():  # timings: a measurement, not a release
                parts.append(clf.diagnostics_["seconds"])
            sizes = {"class_size": int(clf.class_size_), "n_candidates": int(clf.selection_["n_candidates"])}
            if progress is not None:
                progress(len(out["cases"]) * int(repeat) + r + 1, len(cases) * int(repeat))
        out["cases"][name] = {
            "d": d,
            "n": n_pub + n_priv,
            "n_pub": n_pub,
            **sizes,
            "wall_seconds": walls,
            "cpu_seconds": cpus,
            "best_wall_seconds": min(walls),
            "phases_best_run": parts[int(np.argmin(walls))],
        }
    return out


def markdown_report(result: dict[str, Any], command: str) -> str:
    """:func:`bench_ppm`'s cases as a Markdown table, stating the command and machine that produced it."""
    rows = [{"case": name, **case} for name, case in result["cases"].items()]
    columns = ["case", "d", "n", "n_pub", "class_size", "n_candidates", "best_wall_seconds"]
    note = (
        "PPM learner (Bassily, Moran, Nandi, Alg. 2) fit time; targets: d=2 with n_pub=200 < 10 s on 2 cores; "
        "d=1 at n=1e6."
    )
    return markdown_table("PPM learner", command, rows, columns, note)
