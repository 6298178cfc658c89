"""How the learner comparisons run: the checks every run starts with, and the cell runner (each cell
with its own SeedSequence, spread over joblib processes, so results do not depend on the process count)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["prepare_run", "run_cells"]


def prepare_run(output_dir, quick: bool, random_state: Any, n_jobs: Any, full: dict[str, Any], small: dict[str, Any]):
    """The checks and set-up every experiment run starts with: (config, output folder (created), n_jobs)."""
    from oraclepriv.audit.runner import check_n_jobs

    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)) or random_state < 0:
        raise ValueError(f"random_state must be a non-negative integer; got {random_state!r}")
    n_jobs = check_n_jobs(n_jobs)
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    return (small if quick else full), out, n_jobs


def run_cells(function, tasks: list[tuple], n_jobs: int) -> list[dict[str, Any]]:
    """Run ``function(*task)`` for every task, in ``n_jobs`` processes (joblib); rows in task order."""
    if n_jobs == 1:
        parts = [function(*task) for task in tasks]
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n_jobs)(delayed(function)(*task) for task in tasks)
    return [row for part in parts for row in part]
