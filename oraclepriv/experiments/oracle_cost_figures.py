"""The figures of the oracle-cost experiment (:mod:`oraclepriv.experiments.oracle_cost`), matplotlib with the Agg
backend: per-call time vs n (RRSPM's private call and its noise-free twin, per backend), the cost-of-noise ratio,
the error-vs-seconds frontier per (class, d), and the RRSPM / PublicCoverEM crossover in d."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["plot_all", "panel_title"]

BACKEND_COLORS = {
    "sweep": "#7f7f7f",
    "enumerate": "#2ca02c",
    "scip-bc": "#1f77b4",
    "portfolio": "#ff7f0e",
    "highs": "#d62728",
    "gurobi-bc": "#9467bd",
}
LEARNER_STYLE = {
    "erm": ("#000000", "*"),
    "rrspm": ("#1f77b4", "o"),
    "perturbation": ("#ff7f0e", "s"),
    "subsample": ("#2ca02c", "^"),
    "rspm": ("#8c564b", "v"),
    "public_cover_em": ("#d62728", "D"),
    "ppm": ("#e377c2", "P"),
    "regularization": ("#17becf", "X"),
    "output_perturbation": ("#7f7f7f", "h"),
    "margin_erm": ("#bcbd22", "p"),
    "margin_erm_direct": ("#aec7e8", "*"),
    "adaptive_margin_erm": ("#9467bd", "d"),
}


def panel_title(cls: str, d: int) -> str:
    return {"threshold": "thresholds", "stump": f"stumps (k = {d})"}.get(cls, f"halfspaces, d = {d}")


def _panels(frame) -> list[tuple[str, int]]:
    order = {"threshold": 0, "stump": 1, "halfspace": 2}
    return sorted({(c, int(d)) for c, d in zip(frame["class"], frame.d)}, key=lambda t: (order[t[0]], t[1]))


def _log_axes(ax, title: str, xlabel: str, ylabel: str, xticks=None) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    if xticks is not None and len(xticks):
        ax.xaxis.set_major_locator(FixedLocator(sorted(xticks)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(labelsize=7)


def _grid(count: int, width: float = 3.3, height: float = 2.9):
    import matplotlib.pyplot as plt

    cols = min(5, max(1, count))
    rows = math.ceil(count / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows + 0.8), squeeze=False)
    for ax in axes.flat[count:]:
        ax.set_visible(False)
    return fig, list(axes.flat)


def plot_call_time(calls, cfg: dict[str, Any], path: Path) -> None:
    """(a) RRSPM's private call (solid) and its noise-free twin, the non-private ERM on the same private rows
    (dashed), median seconds vs n per backend; an x marks a median call that did not certify within the cap."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    sel = calls[(calls.learner == "rrspm") & (calls.kind == "private")] if not calls.empty else calls
    panels = _panels(sel) if not sel.empty else []
    fig, axes = _grid(max(1, len(panels)))
    for ax, (cls, d) in zip(axes, panels):
        g = sel[(sel["class"] == cls) & (sel.d == d)]
        for backend, gb in g.groupby("backend", sort=True):
            color = BACKEND_COLORS.get(backend, "#bcbd22")
            med = gb.groupby("n").agg(
                noisy=("seconds", "median"), twin=("twin_seconds", "median"), cert=("certified", "mean")
            )
            ax.plot(med.index, med.noisy, "-o", color=color, ms=4)
            ax.plot(med.index, med.twin, "--", color=color, alpha=0.8)
            bad = med[med.cert < 0.5]
            ax.plot(bad.index, bad.noisy, "x", color="black", ms=8, mew=2)
        ax.axhline(cfg["call_cap"], color="gray", lw=0.8, ls=":")
        _log_axes(ax, panel_title(cls, d), "n (private records)", "seconds per call", sorted(set(g.n)))
    handles = [Line2D([], [], color=c, marker="o", label=b) for b, c in BACKEND_COLORS.items() if b in set(sel.backend)]
    handles += [
        Line2D([], [], color="k", ls="-", label="RRSPM's private call (m Laplace-weighted public rows)"),
        Line2D([], [], color="k", ls="--", label="its twin: non-private ERM on the same private rows"),
        Line2D([], [], color="k", ls="", marker="x", mew=2, label="median call not certified within the cap"),
        Line2D([], [], color="gray", ls=":", label=f"call cap {cfg['call_cap']:g} s"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("(a) What the privacy noise does to one oracle call: RRSPM's private call vs its noise-free twin")
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_noise_ratio(calls, cfg: dict[str, Any], path: Path) -> None:
    """Every call with private rows and noise rows against its noise-free twin: seconds of the call (y) vs seconds of
    the twin (x), one panel per learner, colour by backend; on the diagonal the noise costs nothing, a decade above it
    the call takes 10 times as long; calls that hit the cap sit on the dotted line (their ratio is a lower bound)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    sel = calls[(calls.kind == "private") & (calls.twin_kind == "solved")] if not calls.empty else calls
    learners = [k for k in ("rrspm", "perturbation", "rspm") if not sel.empty and k in set(sel.learner)]
    fig, axes = plt.subplots(1, max(1, len(learners)), figsize=(4.6 * max(1, len(learners)), 4.6), squeeze=False)
    markers = {"threshold": "^", "stump": "s", "halfspace": "o"}
    cap = float(cfg["call_cap"])
    for ax, learner in zip(axes.flat, learners):
        g = sel[sel.learner == learner]
        lo = max(1e-5, float(min(g.seconds.min(), g.twin_seconds.min())) / 2)
        hi = cap * 2
        line = np.array([lo, hi])
        for factor, text in ((1, "1x"), (10, "10x"), (100, "100x")):
            ax.plot(line, line * factor, color="gray", lw=0.7, ls="-" if factor == 1 else "--")
            if lo * factor < hi:
                ax.text(hi / (1.6 * factor) if factor > 1 else hi / 1.6, hi / 1.6, text, fontsize=7, color="gray")
        ax.axhline(cap, color="gray", ls=":", lw=0.8)
        for (backend, cls), gb in g.groupby(["backend", "class"]):
            capped = ~gb.certified.astype(bool)
            color = BACKEND_COLORS.get(backend, "#bcbd22")
            ax.scatter(gb.twin_seconds[~capped], gb.seconds[~capped], s=14, color=color, marker=markers[cls], alpha=0.7)
            ax.scatter(
                gb.twin_seconds[capped],
                gb.seconds[capped],
                s=22,
                facecolors="none",
                edgecolors=color,
                marker=markers[cls],
            )
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        _log_axes(ax, f"{_label(learner)}: its private calls", "seconds of the noise-free twin", "seconds of the call")
    handles = [
        Line2D([], [], color=c, marker="o", ls="", label=b) for b, c in BACKEND_COLORS.items() if b in set(sel.backend)
    ]
    handles += [Line2D([], [], color="k", marker=m, ls="", label=c + "s") for c, m in markers.items()]
    handles += [
        Line2D([], [], color="k", marker="o", mfc="none", ls="", label="hit the cap (ratio: lower bound)"),
        Line2D([], [], color="gray", ls=":", label=f"call cap {cap:g} s"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle("The cost of noise, call by call: seconds of each noisy call vs its noise-free twin")
    fig.tight_layout(rect=(0, 0.1, 1, 0.94))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_pareto(table, front, path: Path) -> None:
    """(b) Mean excess error vs mean wall seconds of every learner at each (n, backend), per (class, d), eps = 1;
    the line joins the private learners' frontier; the non-private ERM is the black star."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    panels = _panels(front) if not front.empty else []
    fig, axes = _grid(max(1, len(panels)))
    for ax, (cls, d) in zip(axes, panels):
        g = front[(front["class"] == cls) & (front.d == d)]
        for learner, gl in g.groupby("learner"):
            color, marker = LEARNER_STYLE.get(learner, ("#bcbd22", "o"))
            ax.scatter(gl.seconds, np.maximum(gl.excess, 1e-4), color=color, marker=marker, s=22, alpha=0.85)
        f = g[g.on_frontier].sort_values("seconds")
        if len(f):
            xs = np.repeat(f.seconds.to_numpy(), 2)[1:]
            ys = np.repeat(np.maximum(f.excess.to_numpy(), 1e-4), 2)[:-1]
            ax.plot(np.append(xs, xs[-1] * 3), np.append(ys, ys[-1]), color="black", lw=0.8, alpha=0.6)
        _log_axes(ax, panel_title(cls, d), "wall seconds per fit", "population excess error")
    present = set(front.learner) if not front.empty else set()
    handles = [
        Line2D(
            [], [], color=c, marker=m, ls="", label=_label(k) + (" (errors < 1e-4 drawn at 1e-4)" if k == "erm" else "")
        )
        for k, (c, m) in LEARNER_STYLE.items()
        if k in present
    ]
    handles.append(Line2D([], [], color="black", lw=0.8, label="frontier of the private learners"))
    fig.legend(handles=handles, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle("(b) Error vs wall-clock at eps = 1: every learner, every n and backend where it released in all runs")
    fig.tight_layout(rect=(0, 0.08, 1, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _label(learner: str) -> str:
    from oraclepriv.experiments.oracle_cost_report import LABELS

    return LABELS.get(learner, learner)


def plot_crossover(cross_d, cross, cfg: dict[str, Any], path: Path) -> None:
    """(c) Wall seconds (left) and excess error (right) vs d: RRSPM on the crossover's backend
    (:func:`~oraclepriv.experiments.oracle_cost_report.crossover_backend`) and PublicCoverEM (hollow:
    extrapolated from the run's seconds per cover candidate), one line style per n; the crossover d with its
    bootstrap interval."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = ["-", "--", ":", "-."]
    spans = cross_d.groupby("n").d.nunique() if not cross_d.empty else None
    shown = [] if spans is None else [n for n, k in spans.items() if k == spans.max()]
    for i, (n, g) in enumerate(cross_d[cross_d.n.isin(shown)].groupby("n") if shown else []):
        g = g.sort_values("d")
        ls = styles[i % len(styles)]
        left.plot(g.d, g.rrspm_seconds, ls, color="#1f77b4", marker="o", label=f"RRSPM ({g.backend.iloc[0]}), n = {n}")
        left.plot(g.d, g.em_seconds, ls, color="#d62728", label=f"PublicCoverEM, n = {n}")
        meas, extr = g[~g.em_extrapolated], g[g.em_extrapolated]
        left.plot(meas.d, meas.em_seconds, "D", color="#d62728")
        left.plot(extr.d, extr.em_seconds, "D", mfc="white", color="#d62728")
        partial = g[g.rrspm_released < g.reps]
        left.plot(partial.d, partial.rrspm_seconds, "x", color="black", ms=9, mew=2)
        right.plot(g.d, g.rrspm_excess, ls, color="#1f77b4", marker="o", label=f"RRSPM, n = {n}")
        right.plot(g.d, g.em_excess, ls, color="#d62728", marker="D", label=f"PublicCoverEM, n = {n}")
        c = cross[cross.n == n] if not cross.empty else cross
        if len(c) and math.isfinite(c.crossover_d.iloc[0]):
            r = c.iloc[0]
            left.axvspan(r.low, r.high, color="gray", alpha=0.12 + 0.08 * i)
            left.axvline(r.crossover_d, color="gray", ls=ls, lw=1)
            left.annotate(
                f"n = {n}: d* = {r.crossover_d:.1f} [{r.low:.1f}, {r.high:.1f}]",
                (r.crossover_d, left.get_ylim()[1]),
                xytext=(4, -12 - 11 * i),
                textcoords="offset points",
                ha="left",
                fontsize=8,
            )
    left.axhline(cfg["call_cap"], color="gray", lw=0.6, ls=":")
    from matplotlib.ticker import NullFormatter

    left.set_yscale("log")
    left.yaxis.set_minor_formatter(NullFormatter())
    right.set_ylim(bottom=0)
    for ax, ylabel, title in (
        (left, "wall seconds per fit", "seconds: hollow = extrapolated cover time, x = some RRSPM fits hit the cap"),
        (right, "population excess error (released fits)", "error at the same points"),
    ):
        ax.set_xlabel("d (halfspaces)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle(
        "(c) Where the oracle-efficient RRSPM becomes cheaper than PublicCoverEM (shaded: 95% bootstrap interval)"
    )
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_all(ratios, calls, table, front, cross_d, cross, cfg: dict[str, Any], out: Path) -> dict[str, Path]:
    """Every figure into ``out``; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    paths = {name: out / f"{name}.png" for name in ("call_time", "noise_ratio", "pareto", "crossover")}
    plot_call_time(calls, cfg, paths["call_time"])
    plot_noise_ratio(calls, cfg, paths["noise_ratio"])
    plot_pareto(table, front, paths["pareto"])
    plot_crossover(cross_d, cross, cfg, paths["crossover"])
    return paths
