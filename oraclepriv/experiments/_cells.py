"""Shared pieces of the learner-comparison experiments (:mod:`~oraclepriv.experiments.robust_tradeoff`,
:mod:`~oraclepriv.experiments.cover_baseline`): the scenario by name, the exact population excess error,
the cell runner (one SeedSequence per cell, joblib processes) and the select-on-even / report-on-odd
protocol."""

from __future__ import annotations

from typing import Any

from oraclepriv.experiments.rrspm_tradeoff import HalfspaceScenario, StumpScenario, ThresholdScenario

__all__ = ["scenario", "excess", "run_cells", "select_even_report_odd", "prepare_run"]


def prepare_run(output_dir, quick: bool, random_state: Any, n_jobs: Any, full: dict[str, Any], small: dict[str, Any]):
    """The checks and set-up every experiment run starts with: (config, output folder (created), n_jobs)."""
    from pathlib import Path

    import numpy as np

    from oraclepriv.audit.runner import check_n_jobs

    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
        raise ValueError(f"random_state must be a non-negative integer; got {random_state!r}")
    n_jobs = check_n_jobs(n_jobs)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    return (small if quick else full), out, n_jobs


def scenario(name: str) -> ThresholdScenario | StumpScenario | HalfspaceScenario:
    """The scenario of :mod:`~oraclepriv.experiments.rrspm_tradeoff` for "threshold", "stump" or "halfspace"."""
    return {"threshold": ThresholdScenario, "stump": StumpScenario, "halfspace": HalfspaceScenario}[name]()


def excess(scen, h, p: float) -> float:
    """Exact population excess error of ``h`` under label noise ``p``: (1 - 2p) * disagreement with the target."""
    return (1 - 2 * p) * scen.disagreement(h)


def run_cells(function, tasks: list[tuple], n_jobs: int) -> list[dict[str, Any]]:
    """Run ``function(*task)`` for every task, in ``n_jobs`` processes (joblib); rows in task order."""
    if n_jobs == 1:
        parts = [function(*task) for task in tasks]
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n_jobs)(delayed(function)(*task) for task in tasks)
    return [row for part in parts for row in part]


def select_even_report_odd(runs, cells: list[str], group: list[str]):
    """Per ``group`` (e.g. class, n, method), the configuration ``cells`` (group + config columns) with the
    lowest mean ``excess`` over the even repetitions, reported (mean, sem, runs) over the odd ones.

    Choosing the best of a large grid on the same runs that are reported would favour the larger grid
    (selection bias); the held-out odd repetitions remove it."""
    select = runs[runs.rep % 2 == 0].groupby(cells, as_index=False).agg(select_excess=("excess", "mean"))
    chosen = select.loc[select.groupby(group).select_excess.idxmin()]
    held_out = runs[runs.rep % 2 == 1].groupby(cells, as_index=False).agg(
        mean_excess=("excess", "mean"), sem_excess=("excess", "sem"), runs=("excess", "size"))
    return chosen.merge(held_out, on=cells)
