"""Which private halfspace learner should a user pick at a given n, d and epsilon? Every private halfspace learner of
the toolkit on scikit-learn's bundled binary tasks, against the majority class and non-private baselines.

* tasks (:mod:`oraclepriv.experiments.real_data_sets`): breast cancer (30 features; 169 test rows, 100 public, 300
  private), digits 3 vs 8 and 1 vs 7 (64 pixels), wine class 0 vs rest (13 features), iris versicolor vs virginica
  (4 features); a fixed random split per seed into test rows, an unlabelled public sample and the private records;
  the features scaled into the unit ball by statistics of the public sample only, and a low-dimensional map fixed in
  advance for the learners that need an exact 0-1 oracle: the first ``components`` principal directions of the public
  sample (2 by default);
* learners (:data:`oraclepriv.experiments.real_data_cell.LEARNERS`): RRSPM, Perturbation, SubsampleAggregate,
  PublicCoverEM, PPM (label-determined privacy, shown apart), output perturbation (all features and low map), and the
  margin learners MarginERM and AdaptiveMarginERM (all features; MarginERM in the low map too) at the paper's defaults
  and, on all features, at the direct setting of ``margin_direct`` (our accounting, one round, no projection), each
  at a setting fixed by a rule of (n, d, epsilon); the references: majority class, exact non-private ERM in the low
  map, non-private logistic regression;
* epsilon in {0.25, 0.5, 1, 2, 4}, 5 seeds; test accuracy with 95% t-intervals over seeds and wall-clock per fit.
  Every fit has a time cap (``cell_cap``; oracle calls ``call_cap`` each): a capped, uncertified or failed fit keeps
  its row with its status.

Cells: each (task, seed, learner, epsilon) is one cell (the references: one per (task, seed)), seeded from
SeedSequences keyed by its coordinates (the split by (task, seed), shared by every learner; the learner's noise by the
whole key), so results do not depend on ``n_jobs`` or the order. Cells run through
:func:`oraclepriv.experiments.cells.run_cells` (an interrupted run resumes from ``cells.jsonl``); finished runs keep
their cells in the snapshot ``cells.jsonl.gz``, from which a rerun takes every cell it finds (same cell
configuration) and ``report_only`` regenerates the tables, figures and README without computing anything. A cell's
fingerprint covers the configuration it reads: the shared keys, and a learner's own settings
(:attr:`~oraclepriv.experiments.real_data_cell.Entry.own_settings`) for its cells alone.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.experiments.cells import CELLS, finish_cells, prepare_run, run_cells
from oraclepriv.experiments.real_data_cell import LEARNERS, REFERENCE, run_cell
from oraclepriv.experiments.real_data_sets import TASKS, stable_code

__all__ = [
    "FULL_CONFIG",
    "QUICK_CONFIG",
    "SNAPSHOT",
    "TINY_CONFIG",
    "cell_fingerprint",
    "code_version",
    "load_snapshot",
    "plan_cells",
    "run_real_data",
]

#: the finished cells, sorted by key, gzip-compressed (the stored cells the report regenerates from)
SNAPSHOT = "cells.jsonl.gz"
#: one line per run that computed cells: its wall time, processes and load (the README's provenance)
RUNS = "runs.jsonl"
#: the keys of a configuration that define the grid (which cells exist), not what a cell computes
GRID_KEYS = ("tasks", "epsilons", "repetitions", "learners")
#: the keys only some learners read (their entries' own_settings): outside the other learners' fingerprints
OWN_KEYS = tuple(dict.fromkeys(key for entry in LEARNERS.values() for key in entry.own_settings))

FULL_CONFIG: dict[str, Any] = {
    "tasks": list(TASKS),
    "epsilons": [0.25, 0.5, 1.0, 2.0, 4.0],
    "repetitions": 5,
    "learners": None,  # None: every learner of the table
    "components": 2,
    "backend": "portfolio",
    "call_cap": 20.0,
    "cell_cap": 120.0,
    "perturbation": {"J": 3, "eta": 0.1, "delta": 1e-6},
    "subsample": {"records_per_teacher": 10, "max_teachers": 128},
    "max_candidates": 4_000_000,
    "ppm_max_public": 60,
    "margin_learners": {"delta": 1e-6, "margin": 0.1, "norm_bound": 1.0},
    "margin_direct": {"accounting": "direct-gaussian", "rounds": 1, "jl_dim": None},
}

QUICK_CONFIG: dict[str, Any] = {
    **FULL_CONFIG,
    "tasks": ["wine-0", "iris-vv"],
    "epsilons": [0.5, 2.0],
    "repetitions": 2,
    "cell_cap": 30.0,
}

#: the test suite's configuration: seconds, every learner but the AdaptiveMarginERMs (seconds per fit on their own)
TINY_CONFIG: dict[str, Any] = {
    **QUICK_CONFIG,
    "tasks": ["iris-vv"],
    "epsilons": [1.0],
    "cell_cap": 20.0,
    "learners": [name for name in LEARNERS if not name.startswith("adaptive_margin_erm")],
}


def _seed(*key: int) -> int:
    return int(np.random.SeedSequence(key[0], spawn_key=key[1:]).generate_state(1, np.uint64)[0])


def cell_fingerprint(cfg: dict[str, Any], random_state: int, learner: str | None = None) -> str:
    """What makes two runs' cells interchangeable: the configuration that enters a cell (not the grid's extent: adding
    a task, an epsilon, a seed or a learner keeps the cells already computed) and the seed.

    The shared keys enter every cell's fingerprint; a key of :data:`OWN_KEYS` only the fingerprints of the cells of
    the ``learner`` whose entry reads it, so adding a learner with its own settings keeps the other cells valid.
    Without ``learner`` (or for a learner without own settings): the shared fingerprint."""
    inner = {k: v for k, v in cfg.items() if k not in GRID_KEYS and k not in OWN_KEYS}
    payload: dict[str, Any] = {"config": inner, "random_state": int(random_state)}
    own = LEARNERS[learner].own_settings if learner in LEARNERS else ()
    if own:
        payload["own"] = {key: cfg.get(key) for key in own}
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=10).hexdigest()


def _learners(cfg: dict[str, Any]) -> list[str]:
    names = list(LEARNERS) if cfg.get("learners") is None else list(cfg["learners"])
    unknown = [name for name in names if name not in LEARNERS]
    if unknown:
        raise ValueError(f"config['learners'] names unknown learners {unknown}; the table has {list(LEARNERS)}")
    return names


def plan_cells(cfg: dict[str, Any], random_state: int = 0) -> list[dict[str, Any]]:
    """Every cell of the configuration: its key, coordinates, seeds and the cell configuration."""
    for task in cfg["tasks"]:
        if task not in TASKS:
            raise ValueError(f"config['tasks'] must name tasks of {sorted(TASKS)}; got {task!r}")
    fingerprints = {name: cell_fingerprint(cfg, random_state, name) for name in _learners(cfg)}
    inner = {k: v for k, v in cfg.items() if k not in GRID_KEYS}
    specs = []
    for task in cfg["tasks"]:
        for rep in range(int(cfg["repetitions"])):
            split_seed = _seed(int(random_state), stable_code(task), rep)
            for name in _learners(cfg):
                epsilons = [math.nan] if LEARNERS[name].kind == REFERENCE else [float(e) for e in cfg["epsilons"]]
                for eps in epsilons:
                    label = "-" if math.isnan(eps) else f"{eps:g}"
                    specs.append(
                        {
                            "key": f"{task}|rep={rep}|{name}|eps={label}",
                            "fingerprint": fingerprints[name],
                            "task": task,
                            "rep": rep,
                            "learner": name,
                            "epsilon": eps,
                            "split_seed": split_seed,
                            "seed": _seed(
                                int(random_state), stable_code(task), rep, stable_code(name), stable_code(label)
                            ),
                            "config": inner,
                        }
                    )
    return specs


def load_snapshot(out: str | Path) -> list[dict[str, Any]]:
    """The rows stored in ``out``/cells.jsonl.gz (empty when there is none)."""
    from oraclepriv.io import read_resume_file

    text = read_resume_file(Path(out) / SNAPSHOT)
    if text is None:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _write_snapshot(out: Path, rows: list[dict[str, Any]]) -> None:
    """The rows, sorted by key, gzip-compressed without a timestamp (same rows, same bytes), written atomically."""
    text = "".join(json.dumps(r, sort_keys=True, default=_plain) + "\n" for r in sorted(rows, key=lambda r: r["key"]))
    target = out / SNAPSHOT
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as fh:
        fh.write(text.encode("utf-8"))
    os.replace(tmp, target)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serializable: {value!r}")


def _read_runs(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def code_version() -> dict[str, Any]:
    """The git commit of the code that ran (short hash) and whether the working tree differed from it (None where
    the package is not a git checkout): the cells depend on the learners' code, not only on the configuration."""
    import subprocess

    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        )
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", "oraclepriv", "solvers"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "modified": None}
    if head.returncode != 0:
        return {"commit": None, "modified": None}
    return {"commit": head.stdout.strip(), "modified": bool(status.stdout.strip())}


def run_real_data(
    out_dir: str | Path,
    quick: bool = False,
    jobs: int = 1,
    *,
    random_state: int = 0,
    progress: Callable[[int, int], None] | None = None,
    resume: bool = True,
    report_only: bool = False,
    config: dict[str, Any] | None = None,
    figures: bool = True,
) -> dict[str, Any]:
    """Run the real-data comparison into ``out_dir``.

    Writes ``cells.jsonl.gz`` (every finished cell), ``runs.jsonl`` (wall time, processes and load of each run that
    computed cells), ``fits.csv`` (one row per fit), ``accuracy.csv`` (per task, learner and epsilon: mean test
    accuracy and its 95% interval over seeds, fits by status, median seconds), ``best.csv`` (per task and epsilon:
    the best private learner, its lead over the runner-up and over the majority class, paired over seeds),
    ``heldout.csv`` (the best picked on even seeds, scored on odd ones), one figure per task (``<task>.png``),
    ``summary.json`` and a generated ``README.md``.

    Parameters
    ----------
    out_dir : str or Path
        The output folder (created if missing).
    quick : bool, default False
        Run :data:`QUICK_CONFIG` (two small tasks, two epsilons, two seeds: a smoke run) instead of
        :data:`FULL_CONFIG`.
    jobs : int, default 1
        Processes (or the active execution backend's workers); results other than timings do not depend on it.
    random_state : int, default 0
        The seed every split and learner seed derives from.
    progress : callable or None, default None
        ``progress(cells done, cells)``, called as cells finish (stored cells count as done).
    resume : bool, default True
        Take the cells already stored in the folder (same cell configuration and seed) instead of computing them;
        False computes every cell again.
    report_only : bool, default False
        Compute nothing: regenerate the tables, figures and README from the stored cells (every planned cell must be
        stored).
    config : dict or None, default None
        Replaces the configuration altogether (e.g. :data:`TINY_CONFIG`).
    figures : bool, default True
        False leaves the PNGs out (the tables and README are still written).

    Returns
    -------
    dict
        The frames (``fits``, ``accuracy``, ``best``, ``heldout``), the summary, the paths and the run's seconds.
    """
    from oraclepriv.experiments.real_data_report import write_report
    from oraclepriv.provenance import load_averages

    if config is not None and not isinstance(config, dict):
        raise ValueError(f"config must be a dict like FULL_CONFIG or None; got {config!r}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable progress(done, total) or None; got {progress!r}")
    for name, flag in (("resume", resume), ("report_only", report_only), ("quick", quick), ("figures", figures)):
        if not isinstance(flag, bool):
            raise ValueError(f"{name} must be True or False; got {flag!r}")
    cfg, out, n_jobs = prepare_run(out_dir, quick, random_state, jobs, config or FULL_CONFIG, QUICK_CONFIG)
    specs = plan_cells(cfg, random_state)
    planned = {s["key"]: s for s in specs}
    fp = cell_fingerprint(cfg, random_state)  # the shared keys': the runs' record
    snapshot = load_snapshot(out)
    stored = {
        r["key"]: r
        for r in snapshot
        if r["key"] in planned and r.get("fingerprint") == planned[r["key"]]["fingerprint"]
    }
    if not (resume or report_only):
        stored = {}
    todo = [s for s in specs if s["key"] not in stored]
    if report_only and todo:
        raise ValueError(
            f"report_only: {len(todo)} of {len(specs)} planned cells are not stored in {out / SNAPSHOT} "
            f"(e.g. {todo[0]['key']}); run without report_only to compute them"
        )
    report = None
    if progress is not None:
        done_before = len(specs) - len(todo)
        progress(done_before, len(specs))

        def report(k: int, _total: int) -> None:
            progress(done_before + k, len(specs))

    loads_before = load_averages()
    start = time.perf_counter()
    # longest first (the oracle learners and PublicCoverEM), so that the last cells dispatched are short
    order = sorted(todo, key=lambda s: LEARNERS[s["learner"]].kind != "private")
    computed = run_cells(run_cell, [(s,) for s in order], n_jobs, report, cache=out / CELLS) if order else []
    seconds = time.perf_counter() - start
    rows = list(stored.values()) + computed
    # cells of the same configuration outside this grid (e.g. a task or learner left out this time) are kept
    beyond = [
        r
        for r in snapshot
        if r["key"] not in planned and r.get("fingerprint") == cell_fingerprint(cfg, random_state, r.get("learner"))
    ]
    _write_snapshot(out, rows + beyond)
    finish_cells(out)
    runs_path = out / RUNS
    if order:
        loads_after = load_averages()
        record = {
            "seconds": seconds,
            "computed": len(order),
            "resumed": len(specs) - len(order),
            "cells": len(specs),
            "n_jobs": n_jobs,
            "load_before": loads_before,
            "load_after": loads_after,
            "quick": bool(quick),
            "random_state": int(random_state),
            "fingerprint": fp,
            **code_version(),
        }
        with open(runs_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
    runs = [r for r in _read_runs(runs_path) if r.get("fingerprint") == fp]
    return write_report(rows, cfg, runs, out, figures=figures)
