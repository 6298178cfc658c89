"""Benchmarks of the exact combinatorial oracles (``oraclepriv bench oracles``).

Numbers are reported as ratios against a baseline measured in the same run (never as timed
tests): the stump sweep against numpy's argsort of the same columns, and the d = 2 enumeration
as absolute seconds next to the targets of issue #2 (< 1 s at n = 700, < 10 s at n = 5000).
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable

import numpy as np

from oraclepriv.oracle import make_oracle

__all__ = ["bench_stump_sweep", "bench_enumerate", "bench_oracles", "markdown_report", "markdown_table", "machine_description"]


def _median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_stump_sweep(n: int = 1_000_000, d: int = 5, repeats: int = 5, seed: int = 0) -> dict[str, Any]:
    """Full stump-oracle call (validation, sign reduction, sweep, re-scoring) / argsort of the same columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 2, size=n)
    weights = rng.laplace(size=n)  # signed, as RRSPM produces them
    oracle = make_oracle("stump", backend="sweep")
    columns = [np.ascontiguousarray(X[:, j]) for j in range(d)]

    def argsort_columns() -> None:
        for column in columns:
            np.argsort(column)

    oracle.solve(X, y, weights)  # warm-up (imports, allocator)
    # interleave baseline and oracle so both see the same machine load
    baseline, oracle_time = [], []
    for _ in range(repeats):
        baseline.append(_median_seconds(argsort_columns, 1))
        oracle_time.append(_median_seconds(lambda: oracle.solve(X, y, weights), 1))
    result = oracle.solve(X, y, weights)
    b, o = statistics.median(baseline), statistics.median(oracle_time)
    return {
        "benchmark": "stump-sweep",
        "n": n,
        "d": d,
        "argsort_seconds": b,
        "oracle_seconds": o,
        "ratio": o / b,
        "target_ratio": 3.0,
        "certified": result.certified,
    }


def bench_enumerate(n: int, d: int = 2, repeats: int = 1, seed: int = 0) -> dict[str, Any]:
    """Seconds for one exact ``enumerate`` halfspace call on a noisy-halfspace instance with signed weights."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = ((X @ rng.normal(size=d)) + 0.3 * rng.normal(size=n) >= 0).astype(int)
    weights = rng.laplace(size=n)
    oracle = make_oracle("halfspace", backend="enumerate")
    results = []
    seconds = _median_seconds(lambda: results.append(oracle.solve(X, y, weights)), repeats)
    result = results[-1]
    return {
        "benchmark": f"enumerate-d{d}",
        "n": n,
        "d": d,
        "seconds": seconds,
        "certified": result.certified,
        "objective": result.objective,
    }


def bench_oracles(quick: bool = False) -> list[dict[str, Any]]:
    """The issue-#2 oracle benchmark suite (``quick`` shrinks every size for smoke tests)."""
    rows = [bench_stump_sweep(n=20_000 if quick else 1_000_000, repeats=3 if quick else 5)]
    sizes = [(200, 2), (400, 2)] if quick else [(700, 2), (5000, 2), (100, 3)]
    for n, d in sizes:
        row = bench_enumerate(n, d)
        if not quick:
            row["target_seconds"] = {(700, 2): 1.0, (5000, 2): 10.0}.get((n, d))
        rows.append(row)
    return rows


def machine_description() -> str:
    """One line: CPU count, Python, numpy and scipy versions, date."""
    import datetime
    import os
    import platform

    import scipy

    return (
        f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}; {datetime.date.today().isoformat()}"
    )


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
        if row["benchmark"] == "stump-sweep":
            lines.append(
                f"| stump oracle (sweep, signed weights) | {row['n']} | {row['d']} | {row['oracle_seconds']:.4f} s | "
                f"argsort of the same columns {row['argsort_seconds']:.4f} s | {row['ratio']:.2f}x (target <= "
                f"{row['target_ratio']:g}x) | {row['certified']} |"
            )
        else:
            target = row.get("target_seconds")
            lines.append(
                f"| halfspace oracle ({row['benchmark']}) | {row['n']} | {row['d']} | {row['seconds']:.3f} s | - | "
                f"{'target < %g s' % target if target else '-'} | {row['certified']} |"
            )
    return "\n".join(lines) + "\n"


def markdown_table(title: str, command: str, rows: list[dict[str, Any]], columns: list[str], note: str = "") -> str:
    """A generic benchmark table: title, the command and machine that produced it, one row per dict."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    lines = [f"# {title}", "", f"Produced by `{command}` on: {machine_description()}.", ""]
    if note:
        lines += [note, ""]
    lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c, "")) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"
