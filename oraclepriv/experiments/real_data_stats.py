"""The statistics of the real-data comparison (:mod:`oraclepriv.experiments.real_data`): accuracy with 95%
Student-t intervals over seeds, and per task and epsilon the best private learner, with its lead paired over seeds
(every learner of a seed sees the same split, so differences are paired), and a held-out check of the pick
(:func:`oraclepriv.experiments.stats.select_even_report_odd`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from oraclepriv.experiments.real_data_cell import LEARNERS, PRIVATE
from oraclepriv.experiments.stats import select_even_report_odd

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["accuracy_table", "best_private", "fit_frame", "heldout_pick", "t_interval"]

#: the column that keeps the references' rows (no epsilon) apart in group-bys
NO_EPSILON = -1.0


def t_interval(values: Any) -> tuple[float, float, float]:
    """(mean, low, high): a 95% Student-t interval of the mean of the finite ``values`` (nan bounds with fewer than
    two values; the mean's own interval has zero width when every value is equal)."""
    from scipy import stats

    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(v.mean())
    if v.size < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return mean, mean - half, mean + half


def _unit(bound: float) -> float:
    """An interval bound of an accuracy clipped to [0, 1] (nan stays nan)."""
    return float(np.clip(bound, 0.0, 1.0))


def fit_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per fit, sorted by task, learner, epsilon and seed, with the learner's label."""
    import pandas as pd

    fits = pd.DataFrame(rows)
    fits["label"] = [LEARNERS[name].label if name in LEARNERS else name for name in fits.learner]
    return fits.sort_values(["task", "learner", "epsilon", "rep"], na_position="first").reset_index(drop=True)


def _eps_key(fits: pd.DataFrame) -> pd.Series:
    return fits.epsilon.fillna(NO_EPSILON)


def accuracy_table(fits: pd.DataFrame) -> pd.DataFrame:
    """Per task, learner and epsilon (nan for the references): fits, fits by status, the mean test accuracy over the
    "ok" fits with its 95% interval, and the median seconds per fit (every fit, whatever its status)."""
    import pandas as pd

    out = []
    frame = fits.assign(eps_key=_eps_key(fits))
    for (task, learner, eps_key), group in frame.groupby(["task", "learner", "eps_key"], sort=True):
        ok = group[group.status == "ok"]
        mean, low, high = t_interval(ok.accuracy)
        low, high = _unit(low), _unit(high)
        statuses = group.status.value_counts()
        out.append(
            {
                "task": task,
                "learner": learner,
                "label": group.label.iloc[0],
                "kind": group.kind.iloc[0],
                "features": group.features.iloc[0],
                "d": int(group.d.iloc[0]),
                "epsilon": math.nan if eps_key == NO_EPSILON else float(eps_key),
                "fits": int(len(group)),
                "ok": int(len(ok)),
                "not_ok": ", ".join(f"{s} {c}" for s, c in statuses.items() if s != "ok"),
                "accuracy": mean,
                "low": low,
                "high": high,
                "sd": float(ok.accuracy.std(ddof=1)) if len(ok) > 1 else math.nan,
                "median_seconds": float(group.seconds.median()),
                "max_seconds": float(group.seconds.max()),
            }
        )
    return pd.DataFrame(out)


def _per_rep(fits: pd.DataFrame, task: str, learner: str, eps: float | None) -> pd.Series:
    """A learner's accuracy per seed on a task (at ``eps``; None for a reference), "ok" fits only."""
    sel = fits[(fits.task == task) & (fits.learner == learner) & (fits.status == "ok")]
    sel = sel[sel.epsilon.isna()] if eps is None else sel[sel.epsilon == eps]
    return sel.set_index("rep").accuracy


def _paired(a: pd.Series, b: pd.Series) -> tuple[float, float, float]:
    """The mean of a - b over the seeds both have, with its 95% interval."""
    common = a.index.intersection(b.index)
    return t_interval((a.loc[common] - b.loc[common]).to_numpy())


def best_private(fits: pd.DataFrame) -> pd.DataFrame:
    """Per task and epsilon: the private learner (record-level DP; PPM's label-determined model is not ranked) with
    the highest mean test accuracy among those whose every seed's fit is "ok", its accuracy and interval, the
    runner-up, the lead over it and over the majority class (paired over seeds, 95% intervals), the learners the seeds
    do not separate from the best (``tied``: the lower end of their paired difference's interval is not above 0), the
    gap of the
    non-private exact ERM (low map) and logistic regression (all features) over it; ``excluded`` lists the private
    learners with a fit that is not "ok" (never ranked on fewer seeds)."""
    import pandas as pd

    out = []
    reps = sorted(int(r) for r in fits.rep.unique())
    private = fits[fits.kind == PRIVATE]
    for task in sorted(fits.task.unique()):
        majority = _per_rep(fits, task, "majority", None)
        references = {name: _per_rep(fits, task, name, None) for name in ("erm", "logistic_all")}
        for eps in sorted(private[private.task == task].epsilon.unique()):
            sel = private[(private.task == task) & (private.epsilon == eps)]
            complete, excluded = {}, []
            for learner, group in sel.groupby("learner"):
                if (group.status == "ok").sum() == len(reps):
                    complete[learner] = group.set_index("rep").accuracy
                else:
                    excluded.append(f"{learner} ({', '.join(sorted(set(group.status) - {'ok'}))})")
            if not complete:
                out.append({"task": task, "epsilon": float(eps), "best": None, "excluded": "; ".join(excluded)})
                continue
            ranked = sorted(complete, key=lambda name: (-complete[name].mean(), name))
            best = ranked[0]
            mean, low, high = t_interval(complete[best])
            low, high = _unit(low), _unit(high)
            row: dict[str, Any] = {
                "task": task,
                "epsilon": float(eps),
                "best": best,
                "best_label": LEARNERS[best].label if best in LEARNERS else best,
                "accuracy": mean,
                "low": low,
                "high": high,
                "runner_up": ranked[1] if len(ranked) > 1 else None,
                "runner_up_accuracy": float(complete[ranked[1]].mean()) if len(ranked) > 1 else math.nan,
                "seeds": len(reps),
                "excluded": "; ".join(excluded),
            }
            tied = [name for name in ranked[1:] if not _paired(complete[best], complete[name])[1] > 0]
            row["tied"] = ", ".join(tied)
            lead = _paired(complete[best], complete[ranked[1]]) if len(ranked) > 1 else (math.nan,) * 3
            row.update(lead=lead[0], lead_low=lead[1], lead_high=lead[2])
            over = _paired(complete[best], majority)
            row.update(over_majority=over[0], over_majority_low=over[1], over_majority_high=over[2])
            for name, series in references.items():
                gap = _paired(series, complete[best])
                row.update({f"{name}_gap": gap[0], f"{name}_gap_low": gap[1], f"{name}_gap_high": gap[2]})
            out.append(row)
    return pd.DataFrame(out)


def heldout_pick(fits: pd.DataFrame) -> pd.DataFrame:
    """Per task and epsilon, the private learner picked on the even seeds (highest mean accuracy among the learners
    whose every fit is "ok") and its accuracy on the odd seeds (mean, sem, seeds): the pick without the selection
    bias of choosing and reporting on the same seeds. Empty with fewer than two seeds."""
    import pandas as pd

    if fits.rep.nunique() < 2:
        return pd.DataFrame()
    private = fits[fits.kind == PRIVATE]
    complete = private.groupby(["task", "epsilon", "learner"]).status.transform(lambda s: bool((s == "ok").all()))
    runs = private[complete.astype(bool)].assign(excess=lambda f: 1.0 - f.accuracy)
    if runs.empty:
        return pd.DataFrame()
    picked = select_even_report_odd(runs, ["task", "epsilon", "learner"], ["task", "epsilon"])
    return picked.assign(
        heldout_accuracy=1.0 - picked.mean_excess,
        even_accuracy=1.0 - picked.select_excess,
    )[["task", "epsilon", "learner", "even_accuracy", "heldout_accuracy", "sem_excess", "runs"]].rename(
        columns={"sem_excess": "heldout_sem", "runs": "odd_seeds"}
    )
