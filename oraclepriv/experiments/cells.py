"""How the learner comparisons run: the checks every run starts with, and the cell runner (each cell
with its own SeedSequence, run where :mod:`oraclepriv.execution` says: in this process, in local
processes or on a dask cluster, so results do not depend on where or on how many workers).

Interrupted runs lose no cells: with a ``cache`` file (an experiment's ``cells.jsonl``, :data:`CELLS`), each
cell's rows are appended to it as the cell finishes, keyed by a hash of the cell's function and task (its
configuration, data and seeds); a rerun takes the cells found there instead of computing them again, and the
experiment removes the file once it has written its outputs (:func:`finish_cells`)."""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.execution import Progress, check_n_jobs, parallel_map
from oraclepriv.io import read_resume_file

__all__ = ["CELLS", "finish_cells", "prepare_run", "run_cell_groups", "run_cells"]

#: the cells a run has finished, one JSON line each, while its outputs are not all written
CELLS = "cells.jsonl"

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


def _key(task: tuple) -> str | None:
    """A cell's identity across runs: its function (by name) and its arguments, hashed; None for a cell whose
    arguments do not pickle by value (a local class: such a cell is always computed)."""
    function, *arguments = task
    try:
        payload = pickle.dumps((function.__module__, function.__qualname__, arguments), protocol=4)
    except (pickle.PicklingError, AttributeError, TypeError):
        return None
    return hashlib.sha256(payload).hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {value!r}")


def _load(cache: Path) -> dict[str, list[dict[str, Any]]]:
    """The cells in a cache file (a truncated last line, from a run killed mid-write, is ignored; a file that
    cannot be read is a ValueError naming it)."""
    found: dict[str, list[dict[str, Any]]] = {}
    text = read_resume_file(cache)
    if text is None:
        return found
    for line in text.splitlines():
        try:
            record = json.loads(line)
            found[record["key"]] = record["rows"]
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    return found


def run_cell_groups(
    groups: Sequence[tuple[Callable[..., list[dict[str, Any]]], Sequence[tuple]]],
    n_jobs: int,
    progress: Progress | None = None,
    cache: Path | None = None,
) -> list[list[dict[str, Any]]]:
    """Several kinds of cells in one dispatch: ``groups`` holds (function, tasks) pairs; returns, per
    group, the rows of ``function(*task)`` over its tasks, in task order. ``progress(cells done, cells)``.
    ``cache``: the file that keeps finished cells across interrupted runs (module docstring)."""
    tasks = [(function, *task) for function, group in groups for task in group]
    log.debug("%d cells in %d groups", len(tasks), len(groups))
    done: dict[str, list[dict[str, Any]]] = {}
    keys: list[str | None] = [None] * len(tasks)
    if cache is not None:
        done = _load(cache)
        keys = [_key(task) for task in tasks]
    todo = [i for i, key in enumerate(keys) if key is None or key not in done]
    skipped = len(tasks) - len(todo)
    if skipped:
        log.debug("%d of %d cells taken from %s", skipped, len(tasks), cache)
    report = progress
    if progress is not None and skipped:
        progress(skipped, len(tasks))

        def report(k: int, _total: int) -> None:
            progress(skipped + k, len(tasks))

    def record(index: int, rows: list[dict[str, Any]]) -> None:
        assert cache is not None
        if keys[todo[index]] is None:
            return
        with open(cache, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"key": keys[todo[index]], "rows": rows}, default=_plain) + "\n")
            fh.flush()

    computed = parallel_map(
        _call, [tasks[i] for i in todo], n_jobs, report, on_result=None if cache is None else record
    )
    parts: dict[int, list[dict[str, Any]]] = dict(zip(todo, computed, strict=True))
    parts.update({i: done[key] for i, key in enumerate(keys) if i not in parts and key is not None})
    out, start = [], 0
    for _, group in groups:
        out.append([row for i in range(start, start + len(group)) for row in parts[i]])
        start += len(group)
    return out


def run_cells(
    function: Callable[..., list[dict[str, Any]]],
    tasks: list[tuple],
    n_jobs: int,
    progress: Progress | None = None,
    cache: Path | None = None,
) -> list[dict[str, Any]]:
    """Run ``function(*task)`` for every task (each returns rows); the rows in task order."""
    return run_cell_groups([(function, tasks)], n_jobs, progress, cache)[0]


def finish_cells(out: Path) -> None:
    """A run has written all its outputs: its cells file goes (the next run computes every cell again)."""
    (out / CELLS).unlink(missing_ok=True)
