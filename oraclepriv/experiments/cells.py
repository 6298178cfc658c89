"""How the learner comparisons run: the checks every run starts with, and the cell runner (each cell
with its own SeedSequence, run where :mod:`oraclepriv.execution` says: in this process, in local
processes or on a dask cluster, so results do not depend on where or on how many workers)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.execution import Progress, check_n_jobs, parallel_map

__all__ = ["prepare_run", "run_cell_groups", "run_cells"]

log = logging.getLogger(__name__)


def prepare_run(output_dir, quick: bool, random_state: Any, n_jobs: Any, full: dict[str, Any], small: dict[str, Any]):
    """The checks and set-up every experiment run starts with: (config, output folder (created), n_jobs)."""
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
        raise ValueError(f"random_state must be a non-negative integer; got {random_state!r}")
    n_jobs = check_n_jobs(n_jobs)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    return (small if quick else full), out, n_jobs


def _call(function: Callable[..., list[dict[str, Any]]], *task: Any) -> list[dict[str, Any]]:
    return function(*task)


def run_cell_groups(
    groups: Sequence[tuple[Callable[..., list[dict[str, Any]]], Sequence[tuple]]],
    n_jobs: int,
    progress: Progress | None = None,
) -> list[list[dict[str, Any]]]:
    """Several kinds of cells in one dispatch: ``groups`` holds (function, tasks) pairs; returns, per
    group, the rows of ``function(*task)`` over its tasks, in task order. ``progress(cells done, cells)``."""
    tasks = [(function, *task) for function, group in groups for task in group]
    log.debug("%d cells in %d groups", len(tasks), len(groups))
    parts = parallel_map(_call, tasks, n_jobs, progress)
    out, start = [], 0
    for _, group in groups:
        out.append([row for part in parts[start : start + len(group)] for row in part])
        start += len(group)
    return out


def run_cells(
    function: Callable[..., list[dict[str, Any]]], tasks: list[tuple], n_jobs: int, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """Run ``function(*task)`` for every task (each returns rows); the rows in task order."""
    return run_cell_groups([(function, tasks)], n_jobs, progress)[0]
