"""The figure and the README of the margin-utility experiment (:mod:`oraclepriv.experiments.margin_utility`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["plot_margin_utility", "write_margin_utility_readme"]

_QUANTITIES = (
    ("test_error", "test 0-1 error (Theorem 3.2; min hinge = 0)", "Theorem 3.2"),
    ("hinge_excess", "excess empirical rho-hinge loss (Lemma 3.1)", "Lemma 3.1 (k = d)"),
)


def plot_margin_utility(means: Any, slopes: Any, path: Path) -> None:
    """Two rows (the two quantities) by two columns (against m, against epsilon), log-log, with each bound's shape
    drawn through the first measured point and both slopes in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from oraclepriv.experiments.margin_utility_design import lemma_3_1_shape, theorem_3_2_shape

    shapes = {"test_error": theorem_3_2_shape, "hinge_excess": lemma_3_1_shape}
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.4), squeeze=False)
    for row, (quantity, label, bound) in enumerate(_QUANTITIES):
        for col, sweep in enumerate(("m", "epsilon")):
            ax = axes[row][col]
            sub = means[means["sweep"] == sweep]
            key = "epsilon" if sweep == "m" else "m"
            for fixed, g in sub.groupby(key):
                g = g.sort_values(sweep)
                x = g[sweep].to_numpy(dtype=float)
                y = g[quantity].to_numpy(dtype=float)
                tag = f"epsilon={fixed:g}" if sweep == "m" else f"m={int(fixed)}"
                slope = slopes[
                    (slopes["against"] == sweep) & (slopes["fixed"] == tag) & (slopes["quantity"] == quantity)
                ].iloc[0]
                drawn = ax.errorbar(
                    x,
                    np.where(y > 0, y, np.nan),
                    yerr=g[f"{quantity}_sem"].fillna(0).to_numpy(),
                    marker="o",
                    capsize=2,
                    label=f"{tag}: measured slope {slope['measured_slope']:.2f}",
                )
                shape = shapes[quantity](g["m"].to_numpy(dtype=float), g["epsilon"].to_numpy(dtype=float))
                first = next((i for i, v in enumerate(y) if v > 0), None)
                if first is not None:
                    ax.plot(
                        x,
                        shape * y[first] / shape[first],
                        linestyle=":",
                        color=drawn[0].get_color(),
                        label=f"{bound} shape: slope {slope['predicted_slope']:.2f}",
                    )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("sample size m" if sweep == "m" else "epsilon")
            ax.set_ylabel(label)
            ax.legend(fontsize=7)
    fig.suptitle("MarginERM (Bassily-Mohri-Suresh Alg. 2 with Alg. 4, paper accounting): margin rho = 0.25, d = 20")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_margin_utility_readme(path: Path, slopes: Any, *, quick: bool, random_state: int) -> None:
    """README.md: what was run, the command that regenerates it, and the slope table."""
    from oraclepriv.experiments.margin_utility_design import CONFIDENCE, DELTA, DIMENSION, MARGIN, N_STEPS, N_TEST

    flag = " --quick" if quick else ""
    lines = [
        "# Margin learners: the shape of the bounds",
        "",
        "MarginERM (Bassily, Mohri, Suresh, *Differentially Private Learning with Margin Guarantees*, Algorithm 2 with",
        "Algorithm 4; the DP solver is the toolkit's stand-in for the phased SGD, accounting 'paper') on a synthetic",
        f"margin distribution: d = {DIMENSION}, every record with margin >= 0.999 rho = {0.999 * MARGIN:g} against",
        f"w* = e_1 and norm < 1; rho = {MARGIN:g}, Lambda = r = 1, delta = {DELTA:g}, beta = {CONFIDENCE:g}, "
        f"{N_STEPS} descent steps a round,",
        f"no intercept; test error on {N_TEST} fresh records. Predicted slopes are those of the bounds with their",
        "constants set to 1 (docs/theory/margin-learners.md, 'Utility'); the bounds are upper bounds, so a measured",
        "slope steeper than the predicted one agrees with them.",
        "",
        "Regenerate:",
        "",
        "```",
        f"oraclepriv experiment margin-utility --out results/margin-utility --seed {random_state}{flag}",
        "```",
        "",
        "Files: `margin_utility_runs.csv` (one row a run), `margin_utility.csv` (means), `margin_utility_slopes.csv`, "
        f"`margin_utility.png`. This run: the {'quick' if quick else 'full'} grid.",
        "",
        "| against | fixed | quantity | bound | measured slope | predicted slope | range |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in slopes.itertuples(index=False):
        lines.append(
            f"| {row.against} | {row.fixed} | {row.quantity} | {row.bound} | {row.measured_slope:.2f} | "
            f"{row.predicted_slope:.2f} | {row.range} |"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
