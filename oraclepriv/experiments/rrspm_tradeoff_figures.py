"""The figures of the RRSPM experiments (:mod:`oraclepriv.experiments.rrspm_tradeoff`), matplotlib with the Agg
backend: ``tradeoff.png`` (the m-n trade-off against the derived optima) and ``shift.png`` (sigma-smooth shift and
the non-smooth control)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["plot_tradeoff", "plot_shift"]


def _plt() -> Any:
    """matplotlib.pyplot on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_tradeoff(means: pd.DataFrame, optimum: pd.DataFrame, path: Path) -> None:
    """``tradeoff.png``: excess error against m per (class, n) row and eps column, with the measured optimum, the
    two derived optima and the non-private ERM's excess."""
    plt = _plt()
    settings = list(optimum[["hypothesis", "n"]].drop_duplicates().itertuples(index=False))
    epsilons = sorted(optimum.epsilon.unique())
    fig, axes = plt.subplots(
        len(settings), len(epsilons), figsize=(4.6 * len(epsilons), 3.7 * len(settings)), squeeze=False, sharey="row"
    )
    for i, (hyp, n) in enumerate(settings):
        sub = means[(means.hypothesis == hyp) & (means.n == n)]
        erm = sub[sub.method == "erm"]
        for j, eps in enumerate(epsilons):
            ax = axes[i][j]
            g = sub[(sub.method == "rrspm") & (sub.epsilon == eps)].sort_values("m")
            ax.errorbar(
                g.m,
                g.mean_excess,
                yerr=g.sem_excess.fillna(0),
                marker="o",
                ms=3,
                capsize=2,
                color="C0",
                label="RRSPM (mean ± s.e.)",
            )
            o = optimum[(optimum.hypothesis == hyp) & (optimum.n == n) & (optimum.epsilon == eps)].iloc[0]
            ax.plot(
                [o.best_m_grid],
                [o.best_excess],
                marker="*",
                ms=14,
                color="C3",
                linestyle="none",
                label=f"empirical best m = {o.best_m_grid:g} (bootstrap 10-90%: {o.best_m_p10:g}-{o.best_m_p90:g})",
            )
            ax.axvline(o.m_star_net, color="C2", linestyle="--", label=f"(εnd/σ)^(1/3) = {o.m_star_net:.0f}")
            ax.axvline(o.m_star_paper, color="C1", linestyle=":", lw=2, label=f"(εn√d/σ)^(2/5) = {o.m_star_paper:.0f}")
            if len(erm):
                ax.axhline(
                    float(erm.mean_excess.iloc[0]),
                    color="grey",
                    linestyle="-.",
                    lw=1,
                    label=f"non-private ERM = {float(erm.mean_excess.iloc[0]):.1e}",
                )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("public sample size m")
            if j == 0:
                ax.set_ylabel("excess test error")
            ax.set_title(f"{hyp}s (d_VC={int(o.d_vc)}), n={int(n):,}, ε={eps:g}", fontsize=10)
            ax.legend(fontsize=7, loc="lower left", framealpha=0.95)  # the empty region above the ERM line
            ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(
        "RRSPM (Block et al., Alg 4): excess error vs m at fixed n — U-shape (Lemma 22 ↓, Lemma 23 ↑).  "
        "Predicted m* use constant 1 (unspecified in the paper).",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_shift(
    means: pd.DataFrame, shift_table: pd.DataFrame, slopes: pd.DataFrame, cfg: dict[str, Any], path: Path
) -> None:
    """``shift.png``: (a) the excess at a fixed m and (b) the m needed for a target excess against 1/sigma, (c) the
    excess curves per sigma, (d) the non-smooth control's test error."""
    plt = _plt()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    (a, b), (c, dax) = axes
    _panel_fixed_m(a, shift_table, slopes, cfg)
    _panel_m_needed(b, shift_table, slopes, cfg)
    _panel_curves(c, means, cfg)
    _panel_nonsmooth(dax, means, cfg)
    for ax in (a, b, c):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="major", alpha=0.3)
    for ax in (a, b):
        ax.set_xlabel("1/σ (density ratio dν_x/dμ)")
    for ax in (a, c):
        ax.set_ylabel("excess test error")
    for ax in (a, b, c, dax):
        ax.legend(fontsize=7)
    fig.suptitle(
        f"RRSPM thresholds under σ-smooth shift: μ=U[0,1], ν_x=U[0,σ], target 0.3σ, label noise {cfg['label_noise']:g}",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _panel_fixed_m(ax: Any, shift_table: pd.DataFrame, slopes: pd.DataFrame, cfg: dict[str, Any]) -> None:
    """(a) The excess at the fixed m against 1/sigma, beside the non-private ERM and a slope-1 reference."""
    inv = shift_table.inv_sigma.to_numpy()
    s0 = slopes.measured_slope.iloc[0]
    ax.errorbar(
        inv,
        shift_table.excess_at_fixed_m,
        yerr=shift_table.sem_at_fixed_m.fillna(0),
        marker="o",
        capsize=2,
        label=f"RRSPM, m={cfg['shift_fixed_m']}: slope {s0:.2f}",
    )
    ax.plot(inv, shift_table.erm_excess, marker="s", linestyle="--", color="grey", label="non-private ERM")
    ref = float(shift_table.excess_at_fixed_m.iloc[0])
    ax.plot(inv, ref * inv / inv[0], color="k", linestyle=":", label="reference slope 1")
    ax.set_title(f"(a) excess error at fixed m={cfg['shift_fixed_m']} vs 1/σ", fontsize=10)


def _panel_m_needed(ax: Any, shift_table: pd.DataFrame, slopes: pd.DataFrame, cfg: dict[str, Any]) -> None:
    """(b) The m needed for each target excess against 1/sigma, beside slopes 1 (epsilon-net) and 2 (paper)."""
    inv = shift_table.inv_sigma.to_numpy()
    for k, tgt in enumerate(cfg["shift_targets"]):
        col = shift_table[f"m_needed_{tgt:g}"]
        ax.plot(
            inv,
            col,
            marker="o",
            color=f"C{k}",
            label=f"excess ≤ {tgt:g}: slope {slopes.measured_slope.iloc[k + 1]:.2f}",
        )
    first = shift_table[f"m_needed_{cfg['shift_targets'][0]:g}"].iloc[0]
    if np.isfinite(first):
        ax.plot(inv, first * inv / inv[0], color="k", linestyle=":", label="slope 1 (ε-net)")
        ax.plot(inv, first * (inv / inv[0]) ** 2, color="k", linestyle="--", label="slope 2 (paper)")
    ax.set_title("(b) public points m needed for a fixed excess error", fontsize=10)
    ax.set_ylabel("m needed")


def _panel_curves(ax: Any, means: pd.DataFrame, cfg: dict[str, Any]) -> None:
    """(c) The excess against m, one curve per sigma, with the target excesses as lines."""
    sh = means[(means.experiment == "shift") & (means.method == "rrspm")]
    for k, (sigma, g) in enumerate(sorted(sh.groupby("sigma"), key=lambda t: -t[0])):
        g = g.sort_values("m")
        ax.errorbar(
            g.m,
            g.mean_excess,
            yerr=g.sem_excess.fillna(0),
            marker="o",
            ms=3,
            capsize=2,
            color=f"C{k}",
            label=f"σ={sigma:g}",
        )
    for tgt in cfg["shift_targets"]:
        ax.axhline(tgt, color="k", linestyle=":", lw=1)
    ax.set_title(f"(c) excess vs m per σ (n={cfg['shift_n']:,}, ε={cfg['shift_epsilon']:g})", fontsize=10)
    ax.set_xlabel("public sample size m")


def _panel_nonsmooth(ax: Any, means: pd.DataFrame, cfg: dict[str, Any]) -> None:
    """(d) The non-smooth control's test error against m (nu_x = U[1, 2] beside nu_x = mu), its non-private ERM and
    the Bayes error."""
    ns = means[(means.experiment == "nonsmooth")]
    for (lo, hi), g in ns[ns.method == "rrspm"].groupby(["nu_lo", "nu_hi"]):
        g = g.sort_values("m")
        label = f"RRSPM, ν_x=U[{lo:g},{hi:g}]" + (" (not smooth)" if lo >= 1 else " (= μ, σ=1)")
        ax.errorbar(
            g.m,
            g.mean_test_error,
            yerr=g.sem_test_error.fillna(0),
            marker="o",
            capsize=2,
            label=label,
            color="C3" if lo >= 1 else "C0",
        )
    for (lo, hi), g in ns[ns.method == "erm"].groupby(["nu_lo", "nu_hi"]):
        ax.axhline(
            float(g.mean_test_error.iloc[0]),
            linestyle="--",
            color="C3" if lo >= 1 else "C0",
            lw=1,
            label=f"non-private ERM, ν_x=U[{lo:g},{hi:g}]",
        )
    ax.axhline(cfg["label_noise"], color="k", linestyle=":", lw=1, label=f"Bayes error {cfg['label_noise']:g}")
    ax.set_title("(d) non-smooth control: μ=U[0,1], ν_x=U[1,2] (test error)", fontsize=10)
    ax.set_xlabel("public sample size m")
    ax.set_ylabel("test error")
    ax.set_ylim(0, 1)
    ax.set_xscale("log")
