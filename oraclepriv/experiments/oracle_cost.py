"""What oracle efficiency buys with real solvers: wall-clock, oracle calls and error of every private learner, and
what the privacy noise does to an oracle call.

The papers count oracle calls as if each cost one unit (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient
Differentially Private Learning with Public Data"). Here every call is timed on the exact backends, beside its
**noise-free twin** (the same call without the rows or the noise that the privacy mechanism adds; defined per call
kind in :mod:`oraclepriv.experiments.oracle_cost_cell`), and every learner is timed and scored on the same samples:

* classes: halfspaces in d in {2, 3, 4, 5, 6, 7, 8, 10} (mu = nu_x = N(0, I_d), target 1(u.x >= 0.3), u the
  normalised all-ones vector), thresholds (U[0,1]) and stumps (U[0,1]^3, target 1(x_0 >= 0.3)) as controls; 10%
  label noise; excess errors are exact population quantities (a bivariate-normal integral for halfspaces), except
  PPM's polytope-complement releases in d = 2 and the yardstick on stumps, scored on a fixed test set of 200,000
  points (column ``excess_method``);
* learners: the non-private ERM; RRSPM (Algorithm 4); Perturbation (Algorithm 2, J calls + 1); SubsampleAggregate
  (k teachers + 1); RSPM (Algorithm 5, thresholds and stumps on a grid); Regularization (Algorithm 3, its convex
  oracle; halfspaces through a positive rescaling into the l1 ball); PublicCoverEM (no oracle, cover of
  C(m, d) 2^(d+1) candidates); PPM (Bassily, Moran, Nandi, d <= 2, its own label-determined data model); and the
  outside yardstick, output-perturbation logistic regression (Chaudhuri, Monteleoni, Sarwate, Algorithm 1), which
  calls no 0-1 oracle and needs no public data; beside it, on halfspaces, the margin learners of Bassily, Mohri,
  Suresh, "Differentially Private Learning with Margin Guarantees" (MarginERM, Algorithm 2, also in our direct
  setting for small samples; AdaptiveMarginERM, Algorithm 6), which need neither. All at eps = 1; every learner runs at one setting fixed in advance
  by a rule of n and d (below), not tuned, so errors are indicative, not each learner's best;
* backends: every exact backend that applies and is installed (``installed_backends``): sweep (thresholds, stumps),
  enumerate (halfspaces, d <= 3), scip-bc, highs, and beside scip-bc the default ``portfolio`` and gurobi-bc when a
  backend of that name is installed; RRSPM's comparison with PublicCoverEM uses ``portfolio`` (``scip-bc`` in runs
  made before it was planned);
* sizes n: from 50-100 up to about where the backend's calls stop certifying within the call cap (FULL_CONFIG).

Rules (data-independent): m = max(ceil((eps n sqrt(v))^(2/5)), 2 v) public points, v the VC dimension (the optimum
of docs/theory/block-et-al.md, "Choosing m for RRSPM", floored at 2 v); Perturbation J = 3, eta = 0.1,
delta = 1e-6; SubsampleAggregate k = clip(n / 10, 2, 128) teachers on max(2, min(m, k / 4)) public points
(Laplace, so gamma = m / (k eps) <= 1/4); RSPM on the grid of 16 cell centres per feature; the yardstick with
lambda = 1 / sqrt(n) and a public norm bound R (sqrt(d) + 3 for N(0, I_d), sqrt(k) on the unit cube); the margin
learners at their class defaults (margin 0.1, weight norm bound 1, delta = 1e-6), and MarginERM also with
accounting="direct-gaussian", rounds=1, jl_dim=None, on the rows x / R clipped into the unit ball,
AdaptiveMarginERM up to n = ADAPTIVE_MARGIN_MAX_N.

Caps: every oracle call of a MIP backend has a time limit (``call_cap``); a private-data call that does not certify
within it aborts its fit (``on_uncertified="raise"``: no release; status "uncertified"), and the cell is kept with
the seconds it spent (enumerate stops at the cap too; sweep never comes near it). The learners without oracle calls
are kept within ``cell_cap`` by the grid and by size caps: PublicCoverEM is refused (status "refused") when its
cover would have more than ``max_candidates`` candidates, Regularization is skipped above ``regularization_max_n``.
Nothing is dropped: every planned cell has a row.

Cells: each (class, d, n, learner, backend, repetition) is one task (:func:`oraclepriv.experiments.cells.run_cells`),
seeded from SeedSequences keyed by the cell's coordinates (the data by (class, d, n, rep), shared by all learners
and backends of a repetition; the learner's noise by the whole key), so results do not depend on ``n_jobs`` or the
order. Each cell appends its JSON line to ``cells.jsonl`` in the output folder when it finishes; with
``resume=True`` cells already there or in the snapshot ``cells.jsonl.gz`` (same configuration) are not recomputed.
"""

from __future__ import annotations

import contextlib
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

from oraclepriv.experiments.cells import prepare_run, run_cells
from oraclepriv.experiments.oracle_cost_cell import (
    ADAPTIVE_MARGIN_MAX_N,
    ORACLE_LEARNERS,
    OTHER_LEARNERS,
    public_size,
    run_cell,
)
from oraclepriv.io import read_resume_file, to_json

__all__ = [
    "FULL_CONFIG",
    "QUICK_CONFIG",
    "SCALE_CONFIG",
    "TINY_CONFIG",
    "convex_backend_name",
    "plan_cells",
    "run_oracle_cost",
    "load_cells",
]

#: the backends whose calls are searches bounded by the call cap (ordered first for dispatch). Wherever scip-bc is
#: planned, so are ``portfolio`` (the default halfspace backend up to d = 8: direction-bb, or scip-bc's lead then one
#: of the two; scip-bc above) and gurobi-bc, each where a backend of that name is installed
_MIP = ("scip-bc", "highs", "gurobi-bc", "portfolio")
#: planned beside scip-bc, with its sizes
_BESIDE_SCIP_BC = ("portfolio", "gurobi-bc")

FULL_CONFIG: dict[str, Any] = {
    "epsilon": 1.0,
    "label_noise": 0.1,
    "repetitions": 3,
    "call_cap": 10.0,
    "cell_cap": 60.0,
    "perturbation": {"J": 3, "eta": 0.1, "delta": 1e-6},
    "subsample": {"records_per_teacher": 10, "max_teachers": 128},
    "rspm_grid": 16,
    "max_candidates": 4_000_000,
    "regularization_max_n": 400,
    "ppm_max_public": 60,
    # (class, d, {backend: sizes n}); a backend not installed is listed in the summary and gets no cells
    "grid": [
        ["threshold", 1, {"sweep": [100, 1000, 10_000, 100_000], "highs": [100, 1000]}],
        ["stump", 3, {"sweep": [100, 1000, 10_000, 100_000], "highs": [100, 1000]}],
        ["halfspace", 2, {"enumerate": [100, 300, 1000, 3000], "scip-bc": [50, 100, 200, 400], "highs": [50, 100]}],
        ["halfspace", 3, {"enumerate": [100, 200, 400], "scip-bc": [50, 100, 200], "highs": [50, 100]}],
        ["halfspace", 4, {"scip-bc": [50, 100, 200], "highs": [50, 100]}],
        ["halfspace", 5, {"scip-bc": [50, 100, 200]}],
        ["halfspace", 6, {"scip-bc": [50, 100, 200]}],
        ["halfspace", 7, {"scip-bc": [50, 100]}],
        ["halfspace", 8, {"scip-bc": [50, 100]}],
        ["halfspace", 10, {"scip-bc": [50, 100]}],
    ],
}

QUICK_CONFIG: dict[str, Any] = {
    **FULL_CONFIG,
    "repetitions": 2,
    "call_cap": 3.0,
    "cell_cap": 20.0,
    "perturbation": {"J": 2, "eta": 0.1, "delta": 1e-6},
    "grid": [
        ["threshold", 1, {"sweep": [100, 1000]}],
        ["halfspace", 2, {"enumerate": [100, 300], "scip-bc": [50]}],
        ["halfspace", 4, {"scip-bc": [50]}],
        ["halfspace", 6, {"scip-bc": [30]}],
    ],
}

#: the study at the sizes of researchers' data: halfspaces on the default backend only, n up to 5000 in d <= 5 and up
#: to 1000 in d <= 10, so that the cost of noise, the calls at the cap and the RRSPM / PublicCoverEM crossover are
#: measured at n = 200 and 1000 over the whole range of d (``oraclepriv experiment oracle-cost --scale``)
SCALE_CONFIG: dict[str, Any] = {
    **FULL_CONFIG,
    "grid": [
        *(["halfspace", d, {"portfolio": [200, 1000, 5000]}] for d in (2, 3, 4, 5)),
        *(["halfspace", d, {"portfolio": [200, 1000]}] for d in (6, 7, 8, 10)),
    ],
}

#: the test suite's configuration: seconds, and every learner and call kind present
TINY_CONFIG: dict[str, Any] = {
    **FULL_CONFIG,
    "repetitions": 2,
    "call_cap": 5.0,
    "cell_cap": 10.0,
    "perturbation": {"J": 2, "eta": 0.1, "delta": 1e-6},
    "grid": [["stump", 3, {"sweep": [60]}], ["halfspace", 2, {"enumerate": [40]}]],
}

_CLASS_CODE = {"threshold": 1, "stump": 2, "halfspace": 3}
JSONL = "cells.jsonl"
#: one line per run that computed cells: its wall time, processes and load (the README's provenance)
RUNS = "runs.jsonl"


def _code(name: str) -> int:
    """A stable integer for a learner or backend name (seed keys; independent of any list's order)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "little")


def _seed(*key: int) -> int:
    return int(np.random.SeedSequence(key[0], spawn_key=key[1:]).generate_state(1, np.uint64)[0])


def fingerprint(cfg: dict[str, Any], random_state: int) -> str:
    """What makes two runs' cells interchangeable: the configuration and the seed."""
    text = json.dumps({"config": cfg, "random_state": int(random_state)}, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=10).hexdigest()


def convex_backend_name() -> str:
    """The name the convex oracle's default backend records for its calls (``call_backend``, e.g. "highs-qp+kkt"):
    the backend label of Regularization's cells, so it enters their keys and noise seeds (a renamed backend gets new
    cells; cells stored under an older label are not resumed, and the snapshot keeps only planned keys)."""
    from oraclepriv.convex_oracle import ConvexOracle

    return str(ConvexOracle().solver.backend)


def _applies(learner: str, cls: str, d: int) -> bool:
    if learner in ("margin_erm", "margin_erm_direct", "adaptive_margin_erm"):
        return cls == "halfspace"
    if learner == "rspm":
        return cls in ("threshold", "stump")
    if learner == "ppm":
        return cls == "threshold" or (cls == "halfspace" and d <= 2)
    if learner == "regularization":
        return cls == "halfspace"
    return True


def plan_cells(
    cfg: dict[str, Any], random_state: int = 0, *, installed_only: bool = True
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """Every cell of the configuration (specs with their seeds), and per class the configured backends that are
    not installed here. With ``installed_only`` (the cells this machine can compute) those backends get no cells;
    without it they do too (the cells a stored run may hold, which a run here keeps but cannot recompute)."""
    from oraclepriv.backends import installed_backends
    from oraclepriv.cover import candidate_count

    specs: list[dict[str, Any]] = []
    missing: dict[str, list[str]] = {}
    eps = float(cfg["epsilon"])
    convex = convex_backend_name()  # Regularization's cells are labelled with the backend its convex oracle runs
    for cls, d, per_backend in cfg["grid"]:
        if "scip-bc" in per_backend:  # the default portfolio and Gurobi's branch-and-cut, where installed
            per_backend = {**per_backend, **{b: per_backend.get(b, per_backend["scip-bc"]) for b in _BESIDE_SCIP_BC}}
        installed = set(installed_backends(cls))
        missing[cls] = sorted(set(missing.get(cls, [])) | {b for b in per_backend if b not in installed})
        backends = {b: list(ns) for b, ns in per_backend.items() if b in installed or not installed_only}
        ns_all = sorted({n for ns in backends.values() for n in ns})
        for n in ns_all:
            m = public_size(cls, d, n, eps)
            k = int(min(cfg["subsample"]["max_teachers"], max(2, n // cfg["subsample"]["records_per_teacher"])))
            common = {
                "hypothesis_class": cls,
                "d": int(d),
                "n": int(n),
                "m": m,
                "epsilon": eps,
                "label_noise": float(cfg["label_noise"]),
                "call_cap": float(cfg["call_cap"]),
                "perturbation": dict(cfg["perturbation"]),
                "teachers": k,
                "subsample_m": max(2, min(m, k // 4)),
                "rspm_grid": int(cfg["rspm_grid"]),
                "max_candidates": int(cfg["max_candidates"]),
                "ppm_max_public": int(cfg["ppm_max_public"]),
                "op_lambda": 1.0 / math.sqrt(n),
                "data_norm": math.sqrt(d) + 3.0 if cls == "halfspace" else math.sqrt(d),
            }
            cells = [(learner, b) for b, ns in backends.items() if n in ns for learner in ORACLE_LEARNERS]
            cells += [(learner, convex if learner == "regularization" else "none") for learner in OTHER_LEARNERS]
            for learner, backend in cells:
                if not _applies(learner, cls, d):
                    continue
                skip = None
                if learner == "public_cover_em" and cls == "halfspace":
                    count = candidate_count(m, d)
                    if count > cfg["max_candidates"]:
                        skip = [
                            "refused",
                            f"cover of C({m}, {d}) 2^{d + 1} = {count:,} candidates > {cfg['max_candidates']:,}",
                        ]
                if learner == "regularization" and n > cfg["regularization_max_n"]:
                    skip = ["skipped", f"n = {n} > regularization_max_n = {cfg['regularization_max_n']}"]
                if learner == "adaptive_margin_erm" and n > ADAPTIVE_MARGIN_MAX_N:
                    skip = ["skipped", f"n = {n} > ADAPTIVE_MARGIN_MAX_N = {ADAPTIVE_MARGIN_MAX_N}"]
                for rep in range(int(cfg["repetitions"])):
                    key = f"{cls}|d={d}|n={n}|{learner}|{backend}|rep={rep}"
                    data = _seed(int(random_state), _CLASS_CODE[cls], int(d), int(n), rep)
                    noise = _seed(
                        int(random_state), _CLASS_CODE[cls], int(d), int(n), rep, _code(learner), _code(backend)
                    )
                    specs.append(
                        {
                            **common,
                            "key": key,
                            "learner": learner,
                            "backend": backend,
                            "rep": rep,
                            "skip": skip,
                            "seeds": [data, noise],
                        }
                    )
    return specs, missing


def _predicted_cost(spec: dict[str, Any]) -> float:
    """A rough cost order for dispatch (longest first, so the last cells are short): not a result."""
    if spec["skip"]:
        return 0.0
    calls = {"perturbation": spec["perturbation"]["J"] + 2, "rrspm": 3, "subsample": 2, "rspm": 2, "erm": 1}
    weight = calls.get(spec["learner"], 1)
    if spec["backend"] in _MIP:
        return weight * spec["call_cap"] * min(1.0, spec["n"] * spec["d"] / 400.0)
    if spec["backend"] == "enumerate":
        return weight * 3.3e-8 * spec["n"] ** spec["d"] * (1 if spec["d"] == 3 else 1e3 * math.log(spec["n"]))
    return 0.01 * weight * spec["n"] / 1000.0


# ------------------------------------------------------------------------------------------ the cells file
@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on ``path`` + ".lock" (POSIX flock; a no-op where there is none)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(str(path) + ".lock", "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _append(path: Path, records: list[dict[str, Any]]) -> None:
    text = "".join(to_json(r) + "\n" for r in records)
    with _locked(path), open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()


def load_cells(path: str | Path, fingerprint_: str | None = None) -> list[dict[str, Any]]:
    """The cell records in a ``cells.jsonl`` and its compressed snapshot ``cells.jsonl.gz`` (those of one
    configuration if ``fingerprint_``), the plain file's and then the last record per key winning; a truncated last
    line (a run killed mid-write) is ignored. The snapshot lets a checkout without the plain file resume."""
    path = Path(path)
    out: dict[str, dict[str, Any]] = {}
    for source in (_snapshot(path), path):
        text = read_resume_file(source)  # a file that cannot be read: a ValueError naming it
        if text is None:
            continue
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if fingerprint_ is None or record.get("fingerprint") == fingerprint_:
                out[record["key"]] = record
    return list(out.values())


def _snapshot(path: Path) -> Path:
    return path.with_name(path.name + ".gz")


def _write_snapshot(path: Path, records: list[dict[str, Any]]) -> None:
    """The records, sorted by key, gzip-compressed without a timestamp (same records, same bytes), written atomically."""
    text = "".join(to_json(r) + "\n" for r in sorted(records, key=lambda r: r["key"]))
    target = _snapshot(path)
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as fh:
        fh.write(text.encode("utf-8"))
    os.replace(tmp, target)


def _task(spec: dict[str, Any], fp: str, path: str) -> list[dict[str, Any]]:
    """One cell in a worker: run it, append its line to the cells file, return it."""
    record = run_cell(spec, fp, tuple(spec["seeds"]))
    # a worker on another machine (a dask cluster) may not see the output folder: the parent then appends the record
    with contextlib.suppress(OSError):
        _append(Path(path), [record])
    return [record]


def run_oracle_cost(
    output_dir: str | Path,
    *,
    quick: bool = False,
    scale: bool = False,
    random_state: int = 0,
    n_jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    resume: bool = True,
    config: dict[str, Any] | None = None,
    figures: bool = True,
) -> dict[str, Any]:
    """Run the oracle-cost experiment into ``output_dir``: ``cells.jsonl`` (one line per cell, written as cells
    finish) and its sorted compressed snapshot ``cells.jsonl.gz`` (enough to resume from), ``runs.jsonl`` (the wall
    time, processes and load of every run that computed cells), ``fits.csv`` and ``calls.csv`` (one row per learner fit and per oracle call), the summary tables
    ``noise_ratio.csv``, ``learners.csv``, ``pareto.csv``, ``crossover.csv``, ``summary.json``, the figures
    ``call_time.png``, ``noise_ratio.png``, ``pareto.png``, ``crossover.png`` and a generated ``README.md``.

    ``quick`` runs :data:`QUICK_CONFIG` (about a minute); ``scale`` runs :data:`SCALE_CONFIG` (halfspaces on the
    default backend at n up to 5000; its own output folder, e.g. ``results/figures/oracle-cost-scale``); ``config`` replaces the configuration altogether (the
    tests' :data:`TINY_CONFIG`); ``figures=False`` leaves the PNGs out (the tables and README are still written). ``n_jobs`` processes (or the active execution backend); results other than
    timings do not depend on it. ``progress(done, total)`` is called as cells finish (cells found in the output
    folder count as done). ``resume=False`` recomputes every cell (the old lines stay in the file; the newest line
    of a key wins). Returns the frames, the summary and the paths."""
    from oraclepriv.provenance import load_averages

    if config is not None and not isinstance(config, dict):
        raise ValueError(f"config must be a dict like FULL_CONFIG or None; got {config!r}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable progress(done, total) or None; got {progress!r}")
    if not isinstance(resume, bool):
        raise ValueError(f"resume must be True or False; got {resume!r}")
    if not isinstance(scale, bool):
        raise ValueError(f"scale must be True or False; got {scale!r}")
    if scale and (quick or config is not None):
        raise ValueError("scale=True runs SCALE_CONFIG; it cannot be combined with quick=True or a config")
    full = config or (SCALE_CONFIG if scale else FULL_CONFIG)
    cfg, out, n_jobs = prepare_run(output_dir, quick, random_state, n_jobs, full, QUICK_CONFIG)
    fp = fingerprint(cfg, random_state)
    specs, missing = plan_cells(cfg, random_state)
    path = out / JSONL
    done = {r["key"] for r in load_cells(path, fp)} if resume else set()
    todo = sorted((s for s in specs if s["key"] not in done), key=_predicted_cost, reverse=True)
    skipped = len(specs) - len(todo)
    report = None
    if progress is not None:
        progress(skipped, len(specs))

        def report(k: int, _total: int) -> None:
            progress(skipped + k, len(specs))

    loads_before = load_averages()
    start = time.perf_counter()
    returned = run_cells(_task, [(s, fp, str(path)) for s in todo], n_jobs, progress=report)
    seconds = time.perf_counter() - start
    loads_after = load_averages()
    present = {r["key"] for r in load_cells(path, fp)}
    lost = [r for r in returned if r["key"] not in present]  # cells that ran where this folder is not (a cluster)
    if lost:
        _append(path, lost)
    Path(str(path) + ".lock").unlink(missing_ok=True)  # every writer has finished
    if progress is not None:
        progress(len(specs), len(specs))
    # cells of a backend not installed here are not computed, but the stored ones are kept (a run on a machine
    # without gurobipy must not drop another machine's gurobi-bc cells from the snapshot and the report)
    every, _ = plan_cells(cfg, random_state, installed_only=False)
    wanted = {s["key"] for s in every}
    records = [r for r in load_cells(path, fp) if r["key"] in wanted]
    computable = {s["key"] for s in specs}
    kept_without_backend = sum(1 for r in records if r["key"] not in computable)
    _write_snapshot(path, records)
    run: dict[str, Any] = {
        "seconds": seconds,
        "computed": len(todo),
        "resumed": skipped,
        "cells": len(specs),
        "n_jobs": n_jobs,
        "load_before": loads_before,
        "load_after": loads_after,
        "missing_backends": missing,
        "kept_without_backend": kept_without_backend,
        "quick": bool(quick),
        "scale": bool(scale),
        "random_state": int(random_state),
        "fingerprint": fp,
    }
    if todo:  # the runs that computed cells, for the README's provenance (a report-only rerun adds nothing)
        _append(out / RUNS, [{**run, "machine_load_mean": _mean_load(loads_before, loads_after)}])
    Path(str(out / RUNS) + ".lock").unlink(missing_ok=True)
    run["history"] = [r for r in _read_jsonl(out / RUNS) if r.get("fingerprint") == fp]
    return write_report(records, cfg, run, out, figures=figures)


def _mean_load(before: list[float] | None, after: list[float] | None) -> float | None:
    """The mean of the 1-minute load averages at the start and the end of a run (None where there are none)."""
    return None if before is None or after is None else (before[0] + after[0]) / 2.0


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            out.append(json.loads(line))
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return float(value)


def write_report(
    records: list[dict[str, Any]], cfg: dict[str, Any], run: dict[str, Any], out: Path, *, figures: bool = True
) -> dict[str, Any]:
    """Write the tables, figures (unless ``figures`` is False), summary and README of ``records`` into ``out``;
    returns them."""
    from oraclepriv.experiments.oracle_cost_figures import plot_all
    from oraclepriv.experiments.oracle_cost_readme import readme
    from oraclepriv.experiments.oracle_cost_report import (
        call_frame,
        crossover,
        crossover_backend,
        fit_frame,
        learner_table,
        noise_ratio_table,
        pareto,
    )
    from oraclepriv.provenance import machine_description

    fits, calls = fit_frame(records), call_frame(records)
    ratios = noise_ratio_table(calls)
    table = learner_table(fits)
    front = pareto(table)
    cross_d, cross = crossover(fits, backend=crossover_backend(fits))
    paths = {
        name: out / file
        for name, file in [
            ("cells", "cells.jsonl"),
            ("fits", "fits.csv"),
            ("calls", "calls.csv"),
            ("noise_ratio", "noise_ratio.csv"),
            ("learners", "learners.csv"),
            ("pareto", "pareto.csv"),
            ("crossover", "crossover.csv"),
            ("crossover_by_d", "crossover_by_d.csv"),
            ("summary", "summary.json"),
            ("readme", "README.md"),
        ]
    }
    fits.drop(columns=["private_digest"], errors="ignore").to_csv(paths["fits"], index=False, float_format="%.6g")
    calls.to_csv(paths["calls"], index=False, float_format="%.6g")
    for name, frame in (
        ("noise_ratio", ratios),
        ("learners", table),
        ("pareto", front),
        ("crossover", cross),
        ("crossover_by_d", cross_d),
    ):
        frame.to_csv(paths[name], index=False, float_format="%.6g")
    if figures:
        paths.update(plot_all(ratios, calls, table, front, cross_d, cross, cfg, out))
    statuses = fits.status.value_counts().to_dict()
    summary = {
        "config": cfg,
        "run": run,
        "machine": machine_description(),
        "cells_by_status": statuses,
        "calls": int(len(calls)),
        "noise_ratio": ratios.to_dict("records"),
        "crossover": cross.to_dict("records"),
    }
    paths["summary"].write_text(json.dumps(summary, indent=1, default=_json_default) + "\n", encoding="utf-8")
    paths["readme"].write_text(
        readme(fits, calls, ratios, table, front, cross_d, cross, cfg, run, summary), encoding="utf-8"
    )
    return {
        "fits": fits,
        "calls": calls,
        "noise_ratio": ratios,
        "learners": table,
        "pareto": front,
        "crossover": cross,
        "crossover_by_d": cross_d,
        "summary": summary,
        "paths": paths,
        "seconds": run["seconds"],
    }
