"""RRSPM experiments (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning
with Public Data", Algorithm 4; docs/theory/block-et-al.md, "Experiment designs"): the public/private
trade-off in m, sigma-smooth distribution shift, and a non-smooth negative control. Every oracle call is
exact (the default "sweep" backend for thresholds and stumps), so the privacy proof (Theorem 8) applies
to every run.

1. **m–n trade-off**. For fixed n and eps, sweep the number m of public points on a log grid. Theorem 10's error decomposition predicts a U-shape:
       excess <= O(sqrt(d/(m sigma^2)))   [Lemma 22, projection f~ vs f^: decreasing in m]
               + O(m^2 log(m/beta)/(eps n)) [Lemma 23, Laplace weights of scale 2m/eps: increasing in m].
   Two derived optima ([D]: our derivation, docs/theory/block-et-al.md, "Choosing m for RRSPM"; NOT
   printed in the paper; their unspecified constants are set to 1 here): m*_net = (eps n d/sigma)^(1/3) (epsilon-net version of Lemma 22) and
   m*_paper = (eps n sqrt(d)/sigma)^(2/5) (paper rate). d is the VC dimension: 1 for thresholds,
   4 for stumps on 3 features (both signs; checked by brute force: 4 points shattered, 5 never).
   A third, sharper heuristic for thresholds ([D], ours, not in the paper): moving the
   threshold across one public gap costs about (1 - 2p) n/(m sigma) private errors, and a single
   public weight Lap(2m/eps) beats that with probability exp(-(1 - 2p) eps n/(2 m^2 sigma)); Lemma 23's
   worst-case m^2/(eps n) is therefore loose and the noise term switches on sharply near
   m ~ sqrt((1 - 2p) eps n/(2 sigma)) (up to a log factor): m* ~ (eps n/sigma)^(1/2), best excess
   ~ 1/(sigma m*) ~ sigma^(-1/2) (eps n)^(-1/2). The tables report the measured exponents next to all three.
2. **sigma-smooth shift**. mu = U[0,1], nu_x = U[0, sigma] (density ratio exactly 1/sigma on the
   support), thresholds. The target threshold is 0.3 sigma, so the private problem
   is the same up to rescaling and only the overlap of the public sample with supp(nu_x) changes.
   Reported: excess error vs 1/sigma at a fixed m (Lemma 22 predicts slope 1), and the m needed to
   reach a fixed excess error vs 1/sigma (slope 2 for the paper's m ~ 1/sigma^2, 1 for the
   epsilon-net bound), plus the optimum m and the best excess at fixed n vs 1/sigma.
3. **non-smooth control**. mu = U[0,1], nu_x = U[1,2]: no public point lands where the
   private data live, so the projection step cannot place the threshold correctly and accuracy
   fails. Privacy is untouched (Theorem 8 holds for every Z; audited in ``oraclepriv.audit``); only
   accuracy is reported here.
4. **the default m on real data**. RRSPM with ``public_size="auto"`` (the default of ``oraclepriv
   learn``) on breast cancer (halfspaces on 4 features, n = 300, 100 public points, eps = 1, 5 seeds)
   beside the majority class and the non-private exact ERM (:mod:`oraclepriv.experiments.public_size`).

Labels everywhere: y = target(x) flipped with probability ``label_noise`` (default 0.1, agnostic).
Errors are exact population quantities (interval arithmetic, no test set):
test error = p + (1 - 2p) P_nu(h != target), excess = (1 - 2p) P_nu(h != target) (the best
hypothesis in the class is the target). The non-private exact ERM on the same private data is the
baseline of every setting.

This module draws the grids and runs them; the statistics are :mod:`~oraclepriv.experiments.rrspm_tradeoff_stats`,
the figures :mod:`~oraclepriv.experiments.rrspm_tradeoff_figures`, the CSV files and the generated README
:mod:`~oraclepriv.experiments.rrspm_tradeoff_report`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from oraclepriv.execution import Progress, parallel_map
from oraclepriv.experiments.cells import CELLS, finish_cells, prepare_run, run_cells
from oraclepriv.experiments.public_size import REAL_DATA_CONFIG, public_size_rows, public_size_table
from oraclepriv.experiments.rrspm_tradeoff_figures import plot_shift, plot_tradeoff
from oraclepriv.experiments.rrspm_tradeoff_report import output_paths, readme, real_data_section, write_tables
from oraclepriv.experiments.rrspm_tradeoff_stats import (
    optimum_table,
    run_means,
    scaling_table,
    shift_slopes,
    shift_table,
)
from oraclepriv.experiments.scenarios import ThresholdScenario, scenario
from oraclepriv.learners.rrspm import RRSPM
from oraclepriv.oracle import make_oracle
from oraclepriv.public_data import PublicData
from oraclepriv.release import reading_diagnostics
from oraclepriv.validation import check_epsilon

__all__ = [
    "run_rrspm_experiments",
    "run_grid",
    "GridScenario",
    "GRID_PARTS",
    "FULL_CONFIG",
    "QUICK_CONFIG",
]


class GridScenario(Protocol):
    """What :func:`run_grid` reads of a population (:mod:`oraclepriv.experiments.scenarios`): its hypothesis
    class and smoothness sigma, its two samplers, and the exact disagreement of a hypothesis with its target."""

    @property
    def hypothesis_class(self) -> str: ...

    @property
    def sigma(self) -> float: ...

    def sample_private(self, n: int, label_noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]: ...

    def sample_public(self, m: int, rng: np.random.Generator) -> np.ndarray: ...

    def disagreement(self, h: Any) -> float: ...


def run_grid(
    scenario: GridScenario,
    *,
    n: int,
    epsilons: Sequence[float],
    ms: Sequence[int],
    repetitions: int,
    rng: np.random.Generator,
    label_noise: float = 0.1,
    learner_cls: type = RRSPM,
    erm_baseline: bool = True,
    n_jobs: int = 1,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """RRSPM on a (repetition x eps x m) grid; one row per fit (plus one "erm" row per repetition).

    Each repetition draws one private sample of size n and one public sample of size max(ms); the
    fit with m public points uses its first m (nested samples: common random numbers across m).
    Every fit gets its own seed, drawn from ``rng``. ``learner_cls`` lets the tests swap in a
    deliberately broken variant (``oraclepriv.audit.controls``). The samples and seeds are drawn here
    first, in the order of a serial run; the repetitions then run as separate tasks on ``n_jobs``
    workers (:mod:`oraclepriv.execution`), so the rows do not depend on where they ran.
    ``progress(repetitions done, repetitions)``.
    """
    tasks = _plan_grid(scenario, n, epsilons, ms, repetitions, rng, label_noise, learner_cls, erm_baseline)
    return [row for part in parallel_map(_grid_repetition, tasks, n_jobs, progress) for row in part]


def _plan_grid(
    scenario: GridScenario,
    n: int,
    epsilons: Sequence[float],
    ms: Sequence[int],
    repetitions: int,
    rng: np.random.Generator,
    label_noise: float = 0.1,
    learner_cls: type = RRSPM,
    erm_baseline: bool = True,
) -> list[tuple]:
    """One task per repetition of :func:`run_grid`: its samples and its fits' seeds, drawn from ``rng``
    in the order the fits use them (the fits themselves draw nothing from ``rng``)."""
    n = int(n)
    ms = sorted({int(m) for m in ms})
    if n < 1 or not ms or ms[0] < 1:
        raise ValueError(f"n and every m must be >= 1; got n={n!r}, ms={ms!r}")
    if not 0 <= label_noise < 0.5:
        raise ValueError(f"label_noise must be in [0, 0.5); got {label_noise!r}")
    epsilons = [check_epsilon(e) for e in epsilons]
    p = float(label_noise)
    tasks = []
    for rep in range(int(repetitions)):
        X, y = scenario.sample_private(n, p, rng)
        Z = scenario.sample_public(ms[-1], rng)
        seeds = [int(rng.integers(2**63)) for _ in epsilons for _ in ms]
        tasks.append((scenario, n, epsilons, ms, rep, p, learner_cls, erm_baseline, X, y, Z, seeds))
    return tasks


def _grid_repetition(
    scenario: GridScenario,
    n: int,
    epsilons: list[float],
    ms: list[int],
    rep: int,
    p: float,
    learner_cls: type,
    erm_baseline: bool,
    X: np.ndarray,
    y: np.ndarray,
    Z: np.ndarray,
    seeds: list[int],
) -> list[dict[str, Any]]:
    """The rows of one repetition of :func:`run_grid` (a task of :func:`_plan_grid`)."""
    base = {
        "hypothesis": scenario.hypothesis_class,
        "sigma": scenario.sigma,
        "nu_lo": getattr(scenario, "lo", 0.0),
        "nu_hi": getattr(scenario, "hi", 1.0),
        "n": n,
        "label_noise": p,
    }
    rows: list[dict[str, Any]] = []
    if erm_baseline:
        res = make_oracle(scenario.hypothesis_class).solve(X, y, caller="rrspm_tradeoff", step="erm-baseline")
        dis = scenario.disagreement(res.hypothesis)
        rows.append(
            {
                **base,
                "method": "erm",
                "epsilon": math.inf,
                "m": 0,
                "rep": rep,
                "excess": (1 - 2 * p) * dis,
                "test_error": p + (1 - 2 * p) * dis,
                "agreement": 1.0,
            }
        )
    fits = iter(seeds)
    for eps in epsilons:
        for m in ms:
            clf = learner_cls(
                epsilon=eps, hypothesis_class=scenario.hypothesis_class, m=m, random_state=next(fits)
            ).fit(X, y, X_public=PublicData(Z))
            dis = scenario.disagreement(clf.hypothesis_)
            with reading_diagnostics():  # a research measurement, not a release
                agreement = clf.diagnostics_["projection_agreement"]
            rows.append(
                {
                    **base,
                    "method": "rrspm",
                    "epsilon": eps,
                    "m": m,
                    "rep": rep,
                    "excess": (1 - 2 * p) * dis,
                    "test_error": p + (1 - 2 * p) * dis,
                    "agreement": agreement,
                }
            )
    return rows


def _grid(k_lo: int, k_hi: int) -> tuple[int, ...]:
    """Log grid 10^(k/5), k = k_lo..k_hi, rounded (contains 10, 100, 1000)."""
    return tuple(int(v) for v in np.unique(np.round(10.0 ** (np.arange(k_lo, k_hi + 1) / 5.0))))


FULL_CONFIG: dict[str, Any] = {
    "label_noise": 0.1,
    "tradeoff": [  # (scenario, n, repetitions)
        ("threshold", 20_000, 60),
        ("threshold", 100_000, 60),
        ("stump", 50_000, 40),
    ],
    "tradeoff_epsilons": (0.5, 1.0, 2.0),
    "tradeoff_ms": _grid(1, 18),  # 2 .. 3981
    "shift_sigmas": (1.0, 0.5, 0.2, 0.1, 0.05),
    "shift_n": 100_000,
    "shift_epsilon": 1.0,
    "shift_ms": _grid(1, 17),  # 2 .. 2512
    "shift_fixed_m": 100,
    "shift_targets": (0.05, 0.02),
    "shift_repetitions": 60,
    "nonsmooth_n": 20_000,
    "nonsmooth_epsilon": 1.0,
    "nonsmooth_ms": (10, 100, 1000),
    "nonsmooth_repetitions": 40,
    "real_data": REAL_DATA_CONFIG,
}

QUICK_CONFIG: dict[str, Any] = {
    **FULL_CONFIG,
    "tradeoff": [("threshold", 5_000, 6), ("stump", 5_000, 4)],
    "tradeoff_epsilons": (1.0, 2.0),
    "tradeoff_ms": (2, 8, 32, 128, 512),
    "shift_sigmas": (1.0, 0.2, 0.05),
    "shift_n": 20_000,
    "shift_ms": (4, 16, 64, 256, 1024),
    "shift_fixed_m": 64,
    "shift_targets": (0.05,),
    "shift_repetitions": 6,
    "nonsmooth_n": 5_000,
    "nonsmooth_ms": (10, 100),
    "nonsmooth_repetitions": 4,
    "real_data": {**REAL_DATA_CONFIG, "seeds": 2, "fixed_public_sizes": (25,)},
}


#: the parts of a run whose repetitions are RRSPM grids (:func:`_plan_parts`), in the order they run
GRID_PARTS = ("tradeoff", "shift", "nonsmooth")


def _plan_parts(cfg: dict[str, Any], seeds: list[np.random.SeedSequence]) -> dict[str, list[tuple]]:
    """The tasks of the three grid parts (:data:`GRID_PARTS`), each part's samples and seeds drawn from its own
    seed in ``seeds``, in the order of a serial run: 1. the m-n trade-off on the configured classes and sizes;
    2. sigma-smooth shift, thresholds with nu_x = U[0, sigma]; 3. the non-smooth control nu_x = U[1, 2] beside
    the smooth reference nu_x = mu = U[0, 1]."""
    p = cfg["label_noise"]
    plans: dict[str, list[tuple]] = {part: [] for part in GRID_PARTS}
    rng = np.random.default_rng(seeds[0])
    for name, n, reps in cfg["tradeoff"]:
        plans["tradeoff"] += _plan_grid(
            scenario(name), n, cfg["tradeoff_epsilons"], cfg["tradeoff_ms"], reps, rng, label_noise=p
        )
    rng = np.random.default_rng(seeds[1])
    for sigma in cfg["shift_sigmas"]:
        plans["shift"] += _plan_grid(
            ThresholdScenario(0.0, float(sigma)),
            cfg["shift_n"],
            (cfg["shift_epsilon"],),
            cfg["shift_ms"],
            cfg["shift_repetitions"],
            rng,
            label_noise=p,
        )
    rng = np.random.default_rng(seeds[2])
    for scen in (ThresholdScenario(1.0, 2.0), ThresholdScenario(0.0, 1.0)):
        plans["nonsmooth"] += _plan_grid(
            scen,
            cfg["nonsmooth_n"],
            (cfg["nonsmooth_epsilon"],),
            cfg["nonsmooth_ms"],
            cfg["nonsmooth_repetitions"],
            rng,
            label_noise=p,
        )
    return plans


def _run_parts(
    plans: dict[str, list[tuple]], n_jobs: int, progress: Progress | None, total: int, cache: Path
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """The rows of every grid part's repetitions (each row tagged with its part as ``experiment``) and each
    part's seconds; ``progress(repetitions done, total)`` counts on across the parts."""
    rows: list[dict[str, Any]] = []
    part_seconds: dict[str, float] = {}
    done = 0
    for part, tasks in plans.items():
        t0 = time.perf_counter()

        def step(k: int, _: int, before: int = done) -> None:
            if progress is not None:
                progress(before + k, total)

        rows += [{**r, "experiment": part} for r in run_cells(_grid_repetition, tasks, n_jobs, step, cache=cache)]
        part_seconds[part] = time.perf_counter() - t0
        done += len(tasks)
    return rows, part_seconds


def run_rrspm_experiments(
    output_dir: str | Path,
    *,
    quick: bool = False,
    random_state: int = 0,
    n_jobs: int = 1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run the four RRSPM experiments (module docstring); write the CSVs, ``tradeoff.png``, ``shift.png``,
    ``summary.json`` and a generated ``README.md`` into ``output_dir``
    (:data:`~oraclepriv.experiments.rrspm_tradeoff_report.OUTPUT_FILES`). Returns the frames, the summary and
    the paths.

    ``quick=True``: tiny grids (a smoke run). The repetitions run on ``n_jobs`` workers
    (:mod:`oraclepriv.execution`; the results do not depend on it); ``progress(repetitions done,
    repetitions)`` over the experiments. Finished repetitions are kept in the output folder's cells file until
    every output is written, so an interrupted run resumes (:mod:`oraclepriv.experiments.cells`).
    """
    import pandas as pd

    cfg, out, n_jobs = prepare_run(output_dir, quick, random_state, n_jobs, FULL_CONFIG, QUICK_CONFIG)
    seeds = np.random.SeedSequence(int(random_state)).spawn(4)  # one per part: the three grids, then real data
    start = time.perf_counter()
    # every part's samples and seeds are drawn first (serial order), then its repetitions run as tasks
    plans = _plan_parts(cfg, seeds[:3])
    real = cfg["real_data"]
    total = sum(len(tasks) for tasks in plans.values()) + int(real["seeds"])
    rows, part_seconds = _run_parts(plans, n_jobs, progress, total, out / CELLS)
    before_real = total - int(real["seeds"])
    t0 = time.perf_counter()

    def real_step(k: int, _: int) -> None:
        if progress is not None:
            progress(before_real + k, total)

    real_runs = pd.DataFrame(public_size_rows(real, seeds[3], n_jobs, real_step, cache=out / CELLS))
    real_table = public_size_table(real_runs)
    part_seconds["real_data"] = time.perf_counter() - t0

    runs = pd.DataFrame(rows)
    means = run_means(runs)
    boot_rng = np.random.default_rng(seeds[0].spawn(1)[0])  # the bootstrap of the trade-off, then of the shift
    optimum = optimum_table(runs, boot_rng)
    scaling = scaling_table(optimum)
    shift = shift_table(runs, means, cfg, boot_rng)
    slopes = shift_slopes(shift, cfg)
    nonsmooth = means[means.experiment == "nonsmooth"].drop(columns=["experiment"]).reset_index(drop=True)

    paths = output_paths(out)
    tables = {
        "runs": runs,
        "means": means,
        "optimum": optimum,
        "scaling": scaling,
        "shift": shift,
        "shift_slopes": slopes,
        "nonsmooth": nonsmooth,
        "real_data": real_table,
        "real_data_runs": real_runs,
    }
    write_tables(paths, tables)
    plot_tradeoff(means[means.experiment == "tradeoff"], optimum, paths["tradeoff_png"])
    plot_shift(means, shift, slopes, cfg, paths["shift_png"])
    seconds = time.perf_counter() - start
    summary = _summary(tables, cfg, quick, random_state, seconds, part_seconds)
    paths["summary_json"].write_text(json.dumps(summary, indent=2, default=float) + "\n")
    paths["readme"].write_text(
        readme(summary, optimum, scaling, slopes, shift, nonsmooth, cfg, out) + real_data_section(real_table, real)
    )
    finish_cells(out)
    return {
        "runs": runs,
        "means": means,
        "optimum": optimum,
        "scaling": scaling,
        "shift": shift,
        "slopes": slopes,
        "nonsmooth": nonsmooth,
        "real_data": real_table,
        "summary": summary,
        "paths": {k: str(v) for k, v in paths.items()},
        "seconds": seconds,
    }


def _summary(
    tables: dict[str, Any],
    cfg: dict[str, Any],
    quick: bool,
    random_state: int,
    seconds: float,
    part_seconds: dict[str, float],
) -> dict[str, Any]:
    """``summary.json``: the run's settings and seconds, and every table as records."""
    return {
        "quick": bool(quick),
        "random_state": int(random_state),
        "label_noise": cfg["label_noise"],
        "seconds": round(seconds, 1),
        "seconds_by_part": {
            "tradeoff": round(part_seconds["tradeoff"], 1),
            "shift": round(part_seconds["shift"], 1),
            "real_data": round(part_seconds["real_data"], 1),
        },
        "oracle": "exact: sweep backend (default for threshold/stump); every private-erm call certified",
        "tradeoff_optimum": tables["optimum"].to_dict(orient="records"),
        "tradeoff_scaling": tables["scaling"].to_dict(orient="records"),
        "shift_slopes": tables["shift_slopes"].to_dict(orient="records"),
        "shift": tables["shift"].to_dict(orient="records"),
        "nonsmooth": tables["nonsmooth"].to_dict(orient="records"),
        "real_data": tables["real_data"].to_dict(orient="records"),
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()},
    }
