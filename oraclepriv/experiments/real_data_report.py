"""The outputs of the real-data comparison (:mod:`oraclepriv.experiments.real_data`), all regenerated from the stored
cells: the tables (``fits.csv``, ``accuracy.csv``, ``best.csv``, ``heldout.csv``), one figure per task,
``summary.json`` and the generated ``README.md``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.experiments.real_data_sets import task_sizes
from oraclepriv.experiments.real_data_stats import accuracy_table, best_private, fit_frame, heldout_pick

__all__ = ["write_report"]


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(float(value)) else None
    raise TypeError(f"not JSON serializable: {value!r}")


def _records(frame: Any) -> list[dict[str, Any]]:
    """A frame's rows with nan as None (JSON null)."""
    return [
        {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
        for r in frame.to_dict("records")
    ]


def write_report(
    rows: list[dict[str, Any]], cfg: dict[str, Any], runs: list[dict[str, Any]], out: Path, *, figures: bool = True
) -> dict[str, Any]:
    """Write every output of ``rows`` (the cells of one configuration) into ``out``.

    Parameters
    ----------
    rows : list of dict
        The cells' rows (:func:`oraclepriv.experiments.real_data_cell.run_cell`).
    cfg : dict
        The configuration they were computed with.
    runs : list of dict
        The runs that computed them (seconds, processes, load), oldest first.
    out : Path
        The output folder.
    figures : bool, default True
        False leaves the PNGs out.

    Returns
    -------
    dict
        The frames (``fits``, ``accuracy``, ``best``, ``heldout``), the summary, the paths and the last run's
        seconds (nan when no run computed cells).
    """
    from oraclepriv.experiments.real_data_figures import plot_all
    from oraclepriv.experiments.real_data_readme import readme
    from oraclepriv.provenance import machine_description

    if not rows:
        raise ValueError(f"no cells to report in {out}")
    fits = fit_frame(rows)
    table = accuracy_table(fits)
    best = best_private(fits)
    heldout = heldout_pick(fits)
    sizes = {task: task_sizes(task) for task in sorted(fits.task.unique())}
    paths = {name: out / f"{name}.csv" for name in ("fits", "accuracy", "best", "heldout")}
    fits.drop(columns=["fingerprint"]).to_csv(paths["fits"], index=False)
    table.to_csv(paths["accuracy"], index=False, float_format="%.6g")
    best.to_csv(paths["best"], index=False, float_format="%.6g")
    heldout.to_csv(paths["heldout"], index=False, float_format="%.6g")
    if figures:
        titles = {
            task: (
                s["title"],
                f"n = {s['private']} private, {s['public']} public, {s['test']} test rows; "
                f"d = {s['features']}, low map d = {cfg['components']}",
            )
            for task, s in sizes.items()
        }
        paths.update(plot_all(table, titles, out))
    statuses = {str(k): int(v) for k, v in fits.status.value_counts().items()}
    summary = {
        "config": cfg,
        "runs": runs,
        "machine": machine_description(),
        "cells": int(len(fits)),
        "cells_by_status": statuses,
        "tasks": sizes,
        "best": _records(best),
    }
    paths["summary"] = out / "summary.json"
    paths["summary"].write_text(json.dumps(summary, indent=1, default=_json_default) + "\n", encoding="utf-8")
    paths["readme"] = out / "README.md"
    paths["readme"].write_text(readme(fits, table, best, heldout, sizes, cfg, runs, summary), encoding="utf-8")
    return {
        "fits": fits,
        "accuracy": table,
        "best": best,
        "heldout": heldout,
        "summary": summary,
        "paths": paths,
        "seconds": float(runs[-1]["seconds"]) if runs else math.nan,
    }
