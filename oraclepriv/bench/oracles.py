"""Benchmarks of the exact combinatorial oracles (``oraclepriv bench oracles``).

Numbers are reported as ratios against a baseline measured in the same run (never as timed
tests): a new stump oracle's first call against numpy's argsort of the same columns, its repeat call with new
weights on the same points (the oracle keeps the sorted columns) against the same baseline (both after the stump
oracle's compiled weight pass is made ready, its seconds reported apart), the d = 2 enumeration
as absolute seconds next to its targets (< 1 s at n = 700, < 10 s at n = 5000, < 5 s at n = 10^4), and
the d = 3 enumeration next to its targets (< 5 s at n = 300, < 10 s at n = 1000) *and* the
``scip-bc`` branch-and-cut backend on the same instance in the same run (with a time limit), as
a ratio. Where both are certified their objectives must agree (a cross-check of exactness).
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from oraclepriv.execution import Progress
from oraclepriv.oracle import make_oracle
from oraclepriv.provenance import load_averages, machine_description
from oraclepriv.solvers.combinatorial import enumerate_compiled, sweep_compiled

__all__ = [
    "bench_stump_sweep",
    "bench_repeat_call",
    "bench_enumerate",
    "bench_enumerate_vs_mip",
    "enumerate_d3_crossover",
    "noisy_halfspace_instance",
    "unit_weight_instance",
    "bench_oracles",
    "GROUPS",
    "markdown_report",
]


def _median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _warm_up_sweep() -> float:
    """Seconds to make the stump oracle's compiled weight pass ready in this process (loaded from numba's disk cache,
    or compiled once per installation), which the timed calls should not carry; 0 without numba (the timed calls
    then run the numpy pass, and their rows say so in ``sweep``)."""
    start = time.perf_counter()
    try:
        sweep_compiled.warm()
    except ImportError:
        return 0.0
    return time.perf_counter() - start


def bench_stump_sweep(n: int = 1_000_000, d: int = 5, repeats: int = 5, seed: int = 0) -> dict[str, Any]:
    """A new stump oracle's first call (validation, the kept copy of the points, the sort, sign reduction, sweep,
    re-scoring) / argsort of the same columns.

    Each repeat builds a new oracle, so no call finds sorted columns kept from an earlier one (its repeat calls are
    :func:`bench_repeat_call`'s row); the calls are interleaved with the baseline so both see the same load.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 2, size=n)
    weights = rng.laplace(size=n)  # signed, as RRSPM produces them
    columns = [np.ascontiguousarray(X[:, j]) for j in range(d)]

    def argsort_columns() -> None:
        for column in columns:
            np.argsort(column)

    def first_call() -> Any:
        return make_oracle("stump", backend="sweep").solve(X, y, weights)

    warm_up = _warm_up_sweep()
    first_call()  # warm-up (imports, allocator)
    baseline, oracle_time = [], []
    for _ in range(repeats):
        baseline.append(_median_seconds(argsort_columns, 1))
        oracle_time.append(_median_seconds(first_call, 1))
    result = first_call()
    b, o = statistics.median(baseline), statistics.median(oracle_time)
    return {
        "benchmark": "stump-sweep",
        "n": n,
        "d": d,
        "argsort_seconds": b,
        "oracle_seconds": o,
        "ratio": o / b,
        "target_ratio": 3.0,
        "first_call": result.details["sorted_columns"] == "sorted" and not result.details["repeat_points"],
        "certified": result.certified,
        "sweep": result.details.get("sweep"),
        "warm_up_seconds": warm_up,
    }


def bench_repeat_call(n: int = 1_000_000, d: int = 2, repeats: int = 5, seed: int = 0) -> dict[str, Any]:
    """A stump oracle's first call on a point set, and its repeat call with new weights, each / argsort of the
    same columns.

    Each repeat builds a new oracle, calls it (it sorts and keeps the sorted columns) and calls it again on
    the same points with new signed weights (Laplace, as RRSPM draws them), interleaved with the baseline so
    all three see the same load. The last repeat call's answer is compared with a new oracle's on the same
    weights: objective, bound, hypothesis and certificate must be identical.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 2, size=n)
    weights = [rng.laplace(size=n) for _ in range(repeats + 1)]
    columns = [np.ascontiguousarray(X[:, j]) for j in range(d)]

    def argsort_columns() -> None:
        for column in columns:
            np.argsort(column)

    warm_up = _warm_up_sweep()
    make_oracle("stump", backend="sweep").solve(X, y, weights[0])  # warm-up (imports, allocator)
    baseline, first, repeat = [], [], []
    oracle = make_oracle("stump", backend="sweep")
    for i in range(repeats):
        baseline.append(_median_seconds(argsort_columns, 1))
        oracle = make_oracle("stump", backend="sweep")
        first.append(_median_seconds(functools.partial(oracle.solve, X, y, weights[i]), 1))
        repeat.append(_median_seconds(functools.partial(oracle.solve, X, y, weights[i + 1]), 1))
    result = oracle.solve(X, y, weights[-1])
    fresh = make_oracle("stump", backend="sweep").solve(X, y, weights[-1])
    same = (result.objective, result.bound, repr(result.hypothesis), result.certified) == (
        fresh.objective,
        fresh.bound,
        repr(fresh.hypothesis),
        fresh.certified,
    )
    b, f, r = statistics.median(baseline), statistics.median(first), statistics.median(repeat)
    return {
        "benchmark": "stump-repeat",
        "n": n,
        "d": d,
        "argsort_seconds": b,
        "first_seconds": f,
        "seconds": r,
        "first_ratio": f / b,
        "ratio": r / b,
        "target_ratio": 0.1,
        "kept": result.details["sorted_columns"] == "kept" and fresh.details["sorted_columns"] == "sorted",
        "same_as_fresh": same,
        "certified": result.certified,
        "sweep": result.details.get("sweep"),
        "warm_up_seconds": warm_up,
    }


def noisy_halfspace_instance(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian points, labels of a random halfspace with Gaussian noise, Laplace (signed) weights."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = ((X @ rng.normal(size=d)) + 0.3 * rng.normal(size=n) >= 0).astype(int)
    return X, y, rng.laplace(size=n)


def _warm_up_enumerate(d: int) -> float:
    """Seconds to make the compiled kernel of dimension d ready in this process (loaded from numba's disk cache,
    or compiled once per installation), which the timed calls should not carry; 0 without numba (the timed calls
    then run the numpy sweep, and their rows say so)."""
    start = time.perf_counter()
    try:
        enumerate_compiled.warm(d)
    except ImportError:
        return 0.0
    return time.perf_counter() - start


def bench_enumerate(n: int, d: int = 2, repeats: int = 1, seed: int = 0) -> dict[str, Any]:
    """Seconds for one exact ``enumerate`` halfspace call on a noisy-halfspace instance with signed weights
    (after a warm-up call, whose seconds the row reports as ``warm_up_seconds``)."""
    warm_up = _warm_up_enumerate(d)
    X, y, weights = noisy_halfspace_instance(n, d, seed)
    oracle = make_oracle("halfspace", backend="enumerate")
    results = []
    seconds = _median_seconds(lambda: results.append(oracle.solve(X, y, weights)), repeats)
    return {**_enumerate_row(n, d, seconds, results[-1]), "warm_up_seconds": warm_up}


def _enumerate_row(n: int, d: int, seconds: float, result: Any) -> dict[str, Any]:
    return {
        "benchmark": f"enumerate-d{d}",
        "n": n,
        "d": d,
        "seconds": seconds,
        "certified": result.certified,
        "objective": result.objective,
        "compiled": str(result.details.get("sweep", "")).startswith("compiled"),
        "sweep": result.details.get("sweep"),
    }


def bench_enumerate_vs_mip(
    n: int, d: int = 3, seed: int = 0, baseline: str = "scip-bc", time_limit: float = 120.0
) -> dict[str, Any]:
    """One ``enumerate`` call and one ``baseline`` call (time limit) on the same noisy-halfspace
    instance with signed weights; ratio = baseline seconds / enumerate seconds (a lower bound on
    the speed-up when the baseline stops at its time limit without a certificate)."""
    X, y, weights = noisy_halfspace_instance(n, d, seed)
    return _enumerate_vs_mip(X, y, weights, baseline, time_limit)


def _enumerate_vs_mip(
    X: np.ndarray, y: np.ndarray, weights: np.ndarray, baseline: str, time_limit: float
) -> dict[str, Any]:
    n, d = X.shape
    _warm_up_enumerate(d)
    start = time.perf_counter()
    result = make_oracle("halfspace", backend="enumerate").solve(X, y, weights)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    other = make_oracle("halfspace", backend=baseline, time_limit=time_limit).solve(X, y, weights)
    baseline_seconds = time.perf_counter() - start
    agree = None
    if result.certified and other.certified:
        agree = abs(result.objective - other.objective) <= 10 * max(result.tolerance, other.tolerance)
    return {
        **_enumerate_row(n, d, seconds, result),
        "baseline": baseline,
        "baseline_time_limit": time_limit,
        "baseline_seconds": baseline_seconds,
        "baseline_status": other.status,
        "baseline_certified": other.certified,
        "baseline_objective": other.objective,
        "baseline_bound": other.bound,
        "objectives_agree": agree,
        "ratio": baseline_seconds / seconds,
    }


def unit_weight_instance(
    n: int, d: int, seed: int = 0, noise: float = 0.1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian points, labels of a random halfspace with a fraction ``noise`` flipped, unit weights."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) >= 0).astype(int)
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y, np.ones(n)


def enumerate_d3_crossover(
    sizes: tuple[int, ...] = (50, 100, 150, 200, 300, 500, 1000),
    time_limit: float = 120.0,
    seed: int = 0,
    old_module_path: str | None = None,
    old_max_n: int = 300,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """``enumerate`` vs ``scip-bc`` (time limit) for d = 3 on two families per n: the signed
    noisy-halfspace instance of ``bench_oracles`` and a noisy unit-weight one.

    ``old_module_path``: a file holding an earlier ``solvers/combinatorial/enumerate.py`` (for example
    ``git show <commit>:solvers/combinatorial/enumerate.py > /tmp/old_enumerate.py``), whose
    ``best_separable_set`` is timed on the same merged points and gains for n <= ``old_max_n``
    (its gain is checked against the current one).
    """
    old = None
    if old_module_path is not None:
        import importlib.util

        spec = importlib.util.spec_from_file_location("old_enumerate", old_module_path)
        if spec is None or spec.loader is None:
            raise ValueError(f"old_module_path: no Python module can be loaded from {old_module_path!r}")
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
    families = {"signed": noisy_halfspace_instance, "unit": unit_weight_instance}
    rows = []
    for n in sizes:
        for family, make in families.items():
            X, y, weights = make(n, 3, seed)
            row = _enumerate_vs_mip(X, y, weights, "scip-bc", time_limit)
            row.update({"family": family, "n": n, "d": 3, "seed": seed})
            if old is not None and n <= old_max_n:
                from oraclepriv.solvers.combinatorial.enumerate import best_separable_set
                from oraclepriv.solvers.combinatorial.geometry import float_is_exact

                P, inverse = np.unique(X, axis=0, return_inverse=True)
                G = np.bincount(inverse.reshape(-1), weights=np.where(y == 1, weights, -weights), minlength=len(P))
                start = time.perf_counter()
                old_best = old.best_separable_set(P, G, float_is_exact(P))
                row["old_seconds"] = time.perf_counter() - start
                difference = abs(old_best.gain - best_separable_set(P, G).gain)
                row["old_gain_agrees"] = bool(difference <= 1e-9 * max(1.0, float(np.abs(G).sum())))
            rows.append(row)
            if progress is not None:
                progress(row)
    return rows


#: the targets, seconds, of enumerate in d = 2 and d = 3
ENUMERATE_TARGETS = {(700, 2): 1.0, (5000, 2): 10.0, (10_000, 2): 5.0, (300, 3): 5.0, (1000, 3): 10.0}


def _load_average_1min() -> float | None:
    averages = load_averages()
    return averages[0] if averages else None


#: the groups of rows :func:`bench_oracles` can run alone
GROUPS = ("stump", "enumerate")


def bench_oracles(
    quick: bool = False, progress: Progress | None = None, only: str | None = None
) -> list[dict[str, Any]]:
    """The oracle benchmark suite (``quick`` shrinks every size for smoke tests), one benchmark after
    another in this process. Every row records the 1-minute load average just before and just after
    it was measured; ``progress(benchmarks done, benchmarks)``. ``only``: one of :data:`GROUPS` (the stump
    oracle's two rows, or enumerate's), None for all."""
    if only is not None and only not in GROUPS:
        raise ValueError(f"only must be one of {GROUPS} or None; got {only!r}")
    runs: list[Callable[[], dict[str, Any]]] = []
    if only in (None, "stump"):
        runs.append(lambda: bench_stump_sweep(n=20_000 if quick else 1_000_000, repeats=3 if quick else 5))
        runs.append(lambda: bench_repeat_call(n=20_000 if quick else 1_000_000, repeats=3 if quick else 5))
    if only in (None, "enumerate"):
        for n, d in [(200, 2), (400, 2)] if quick else [(700, 2), (5000, 2), (10_000, 2)]:
            runs.append(functools.partial(bench_enumerate, n, d))
        for n in [40] if quick else [300, 1000]:
            runs.append(functools.partial(bench_enumerate_vs_mip, n, 3, time_limit=10.0 if quick else 120.0))
    rows = []
    for run in runs:
        before = _load_average_1min()
        row = run()
        row["load_average_1min"] = [before, _load_average_1min()]
        if not quick and row["benchmark"].startswith("enumerate"):
            row["target_seconds"] = ENUMERATE_TARGETS.get((row["n"], row["d"]))
        rows.append(row)
        if progress is not None:
            progress(len(rows), len(runs))
    return rows


def markdown_report(rows: list[dict[str, Any]], command: str) -> str:
    """The benchmark rows as a Markdown section, stating the command and machine that produced it."""
    lines = [
        "# Oracle benchmarks",
        "",
        f"Produced by `{command}` on: {machine_description()}.",
        "",
        "| benchmark | n | d | measured | baseline (same run) | ratio / target | certified |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        compiled = ", compiled weight pass" if str(row.get("sweep", "")).startswith("compiled") else ""
        if row["benchmark"] == "stump-sweep":
            lines.append(
                f"| stump oracle, first call of a new oracle (sweep{compiled}, signed weights) | {row['n']} | {row['d']} | {row['oracle_seconds']:.4f} s | "
                f"argsort of the same columns {row['argsort_seconds']:.4f} s | {row['ratio']:.2f}x (target <= "
                f"{row['target_ratio']:g}x) | {row['certified']} |"
            )
        elif row["benchmark"] == "stump-repeat":
            lines.append(
                f"| stump oracle, repeat call with new weights (sweep{compiled}, sorted columns kept: {row['kept']}) "
                f"| {row['n']} | {row['d']} | {row['seconds']:.4f} s (first call {row['first_seconds']:.4f} s) "
                f"| argsort of the same columns {row['argsort_seconds']:.4f} s | {row['ratio']:.3f}x, first call "
                f"{row['first_ratio']:.2f}x (target <= {row['target_ratio']:g}x) | {row['certified']} (same answer "
                f"as a new oracle: {row['same_as_fresh']}) |"
            )
        else:
            target = row.get("target_seconds")
            target_text = f"target < {target:g} s" if target else "-"
            baseline_text = "-"
            certified = f"{row['certified']}"
            if "baseline" in row:
                stopped = "" if row["baseline_certified"] else f", stopped: {row['baseline_status']}"
                baseline_text = f"{row['baseline']} {row['baseline_seconds']:.2f} s (limit {row['baseline_time_limit']:g} s{stopped})"
                bound = "" if row["baseline_certified"] else ">= "
                target_text = f"{bound}{row['ratio']:.1f}x faster; {target_text}"
                certified += f" / {row['baseline_certified']}"
                if row["objectives_agree"] is not None:
                    certified += f" (objectives agree: {row['objectives_agree']})"
            lines.append(
                f"| halfspace oracle ({row['benchmark']}{', compiled' if row.get('compiled') else ''}) | {row['n']} | "
                f"{row['d']} | {row['seconds']:.3f} s | "
                f"{baseline_text} | {target_text} | {certified} |"
            )
    loads = [value for row in rows for value in row.get("load_average_1min", []) if value is not None]
    if loads:
        lines += [
            "",
            f"1-minute load average before/after the rows: {min(loads):.2f}-{max(loads):.2f} "
            "(above 1: other processes were running next to the single-threaded benchmarks).",
        ]
    return "\n".join(lines) + "\n"
