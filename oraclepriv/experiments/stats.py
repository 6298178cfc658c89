"""The statistics the experiments share: the log-log slope of a curve, and the select-on-even /
report-on-odd protocol that keeps a larger tuning grid from looking better by selection alone."""

from __future__ import annotations

import numpy as np

__all__ = ["fit_slope", "select_even_report_odd"]


def fit_slope(n: np.ndarray, err: np.ndarray) -> float:
    """Least-squares slope of log(err) on log(n) over the points with err > 0 (nan if < 2 points)."""
    n, err = np.asarray(n, float), np.asarray(err, float)
    ok = err > 0
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(n[ok]), np.log(err[ok]), 1)[0])


def select_even_report_odd(runs, cells: list[str], group: list[str]):
    """Per ``group`` (e.g. class, n, method), the configuration ``cells`` (group + config columns) with the
    lowest mean ``excess`` over the even repetitions, reported (mean, sem, runs) over the odd ones.

    Choosing the best of a large grid on the same runs that are reported would favour the larger grid
    (selection bias); the held-out odd repetitions remove it."""
    select = runs[runs.rep % 2 == 0].groupby(cells, as_index=False).agg(select_excess=("excess", "mean"))
    chosen = select.loc[select.groupby(group).select_excess.idxmin()]
    held_out = (
        runs[runs.rep % 2 == 1]
        .groupby(cells, as_index=False)
        .agg(mean_excess=("excess", "mean"), sem_excess=("excess", "sem"), runs=("excess", "size"))
    )
    return chosen.merge(held_out, on=cells)
