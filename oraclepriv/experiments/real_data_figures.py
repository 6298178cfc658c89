"""The figures of the real-data comparison (:mod:`oraclepriv.experiments.real_data`), matplotlib with the Agg
backend: per task, test accuracy against epsilon, one line per private learner with its 95% interval over seeds, the
majority class and the non-private baselines as horizontal references."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from oraclepriv.experiments.real_data_cell import ALL, LABEL_DETERMINED, REFERENCE

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["plot_task", "plot_all"]

#: the references drawn as horizontal lines: (learner, colour, line style)
REFERENCE_LINES = (
    ("majority", "#7f7f7f", "--"),
    ("erm", "#000000", ":"),
    ("logistic_all", "#000000", "-."),
    ("logistic_low", "#a0a0a0", "-."),
)
#: the horizontal offset between learners at one epsilon (a factor on the log axis), so intervals do not overlap
JITTER = 2**0.04


def plot_task(table: pd.DataFrame, task: str, title: str, subtitle: str, path: Path) -> Path:
    """The accuracy-vs-epsilon figure of ``task`` from the accuracy table, saved to ``path``.

    Parameters
    ----------
    table : DataFrame
        :func:`oraclepriv.experiments.real_data_stats.accuracy_table`.
    task : str
        The task's name.
    title : str
        The figure's title.
    subtitle : str
        A second title line (sizes).
    path : Path
        Where the PNG goes.

    Returns
    -------
    Path
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = table[table.task == task]
    learners = rows[rows.kind != REFERENCE]
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    epsilons = sorted(e for e in learners.epsilon.unique() if math.isfinite(e))
    names = sorted(learners.learner.unique())
    palette = 10 if len(names) <= 10 else 20  # one colour per learner (tab20 beyond ten)
    colours = plt.get_cmap(f"tab{palette}")
    for i, learner in enumerate(names):
        group = learners[learners.learner == learner].sort_values("epsilon")
        shift = JITTER ** (i - (len(names) - 1) / 2)
        low = (group.accuracy - group.low).fillna(0.0).clip(lower=0.0)
        high = (group.high - group.accuracy).fillna(0.0).clip(lower=0.0)
        all_features = group.features.iloc[0] == ALL
        ax.errorbar(
            group.epsilon * shift,
            group.accuracy,
            yerr=[low, high],
            label=group.label.iloc[0],
            color=colours(i % palette),
            marker="s" if all_features else "o",
            markerfacecolor="white" if all_features else colours(i % palette),
            linestyle="--" if group.kind.iloc[0] == LABEL_DETERMINED else "-",
            capsize=2.5,
            linewidth=1.2,
            markersize=4,
        )
    for learner, colour, style in REFERENCE_LINES:
        ref = rows[rows.learner == learner]
        if not ref.empty and math.isfinite(ref.accuracy.iloc[0]):
            ax.axhline(ref.accuracy.iloc[0], color=colour, linestyle=style, linewidth=1.0, label=ref.label.iloc[0])
    ax.set_xscale("log", base=2)
    if epsilons:
        ax.set_xticks(epsilons)
        ax.set_xticklabels([f"{e:g}" for e in epsilons])
    ax.set_xlabel("epsilon", fontsize=9)
    ax.set_ylabel("test accuracy (mean over seeds, 95% interval)", fontsize=9)
    ax.set_title(f"{title}\n{subtitle}", fontsize=10)
    ax.set_ylim(max(0.0, min(0.4, float(rows.accuracy.min()) - 0.05)), 1.01)
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=8)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_all(table: pd.DataFrame, titles: dict[str, tuple[str, str]], out: Path) -> dict[str, Path]:
    """One figure per task of the table, ``out``/<task>.png.

    Parameters
    ----------
    table : DataFrame
        :func:`oraclepriv.experiments.real_data_stats.accuracy_table`.
    titles : dict
        Per task, (title, subtitle).
    out : Path
        The output folder.

    Returns
    -------
    dict
        Per task, the figure's path (keyed ``figure_<task>``).
    """
    return {
        f"figure_{task}": plot_task(table, task, *titles[task], out / f"{task}.png")
        for task in sorted(table.task.unique())
    }
