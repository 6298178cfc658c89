"""The generated README of the oracle-cost experiment: protocol, figures, tables and data-driven findings (each
statement computed from the run, so the text cannot claim what the run did not show)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from oraclepriv.experiments.oracle_cost_cell import ADAPTIVE_MARGIN_MAX_N
from oraclepriv.experiments.oracle_cost_figures import panel_title
from oraclepriv.experiments.oracle_cost_report import LABELS, t_interval

__all__ = ["readme", "headline", "pooled_ratio"]

CANONICAL = "oraclepriv experiment oracle-cost --out results/figures/oracle-cost --jobs 2"
FALLBACK = (
    'python3 -c "from oraclepriv.experiments.oracle_cost import run_oracle_cost; '
    "run_oracle_cost('results/figures/oracle-cost', n_jobs=2)\""
)
#: the study at scale (``SCALE_CONFIG``): its own folder
CANONICAL_SCALE = "oraclepriv experiment oracle-cost --scale --out results/figures/oracle-cost-scale --jobs 2"
FALLBACK_SCALE = (
    'python3 -c "from oraclepriv.experiments.oracle_cost import run_oracle_cost; '
    "run_oracle_cost('results/figures/oracle-cost-scale', scale=True, n_jobs=2)\""
)


def _fmt(x: float, spec: str = ".2g") -> str:
    return "–" if x is None or not math.isfinite(float(x)) else format(float(x), spec)


def _ci(mean: float, low: float, high: float, spec: str = ".2g") -> str:
    if not math.isfinite(mean):
        return "–"
    if not (math.isfinite(low) and math.isfinite(high)):
        return _fmt(mean, spec)
    return f"{_fmt(mean, spec)} [{_fmt(low, spec)}, {_fmt(high, spec)}]"


def pooled_ratio(calls: pd.DataFrame, learner: str, kind: str, **where: Any) -> dict[str, Any]:
    """The per-fit geometric-mean cost-of-noise ratio pooled over every fit matching ``where`` (fits are independent
    samples), with a 95% t-interval on the log scale; censored fits counted (their ratios are lower bounds)."""
    sel = calls[(calls.learner == learner) & (calls.kind == kind) & (calls.twin_kind == "solved")]
    for column, value in where.items():
        sel = sel[sel[column].isin(value)] if isinstance(value, (list, tuple, set)) else sel[sel[column] == value]
    if sel.empty:
        return {"fits": 0, "ratio": math.nan, "low": math.nan, "high": math.nan, "censored": 0}
    sel = sel.assign(log_ratio=np.log(sel.noise_ratio.astype(float)))
    per_fit = sel.groupby(["class", "d", "n", "backend", "rep"]).agg(
        log_ratio=("log_ratio", "mean"), censored=("ratio_censored", lambda s: bool((s.fillna("") != "").any()))
    )
    gm, lo, hi = t_interval(np.exp(per_fit.log_ratio.to_numpy()), log=True)
    return {
        "fits": int(len(per_fit)),
        "ratio": gm,
        "low": lo,
        "high": hi,
        "censored": int(per_fit.censored.sum()),
        "min": float(np.exp(per_fit.log_ratio.min())),
        "max": float(np.exp(per_fit.log_ratio.max())),
    }


def _ratio_text(p: dict[str, Any]) -> str:
    if not p["fits"]:
        return "no fits"
    bound = " (a lower bound: " + f"{p['censored']} of {p['fits']} fits had a call at the cap)" if p["censored"] else ""
    return f"{_ci(p['ratio'], p['low'], p['high'])}× over {p['fits']} fits (per-fit range {p['min']:.2g}–{p['max']:.2g}){bound}"


def headline(calls: pd.DataFrame, cross: pd.DataFrame) -> str:
    """One line for the top README's benchmark table."""
    parts = []
    for backend in ("portfolio", "scip-bc"):
        hs = pooled_ratio(calls, "rrspm", "private", **{"class": "halfspace", "backend": backend})
        if not hs["fits"]:
            continue
        low_bound = "≥ " if hs["censored"] else ""
        ds = sorted({int(d) for d in calls[(calls["class"] == "halfspace") & (calls.backend == backend)].d})
        capped = f", {hs['censored']} of {hs['fits']} fits capped" if hs["censored"] else ""
        parts.append(
            f"RRSPM's private call costs {low_bound}{_fmt(hs['ratio'])}× (95% CI {_fmt(hs['low'])}–{_fmt(hs['high'])}"
            f"{capped}) its noise-free twin on {backend} (halfspaces, d = {ds[0]}–{ds[-1]})"
        )
    en = pooled_ratio(calls, "rrspm", "private", backend="enumerate")
    if en["fits"]:
        parts.append(f"{_fmt(en['ratio'])}× ({_fmt(en['low'])}–{_fmt(en['high'])}) on enumerate (d ≤ 3)")
    if not cross.empty:
        c = cross[np.isfinite(cross.crossover_d)]
        if len(c):
            r = c.sort_values("n").iloc[0]
            parts.append(
                f"RRSPM beats PublicCoverEM in wall-clock from d ≈ {r.crossover_d:.1f} (95% CI {r.low:.1f}–{r.high:.1f}) "
                f"at n = {int(r.n)}"
            )
    return "; ".join(parts)


def _protocol(cfg: dict[str, Any], run: dict[str, Any]) -> list[str]:
    p, s = cfg["perturbation"], cfg["subsample"]
    missing = sorted({b for bs in run["missing_backends"].values() for b in bs})
    return [
        "## Protocol",
        "",
        "Every (class, d, n, learner, backend, repetition) is one cell with its own seeds: the data by (class, d, n, "
        "repetition), shared by every learner and backend of a repetition (the comparisons are paired); the learner's "
        "noise by the whole key. Module: `oraclepriv/experiments/oracle_cost.py` (cells: `oracle_cost_cell.py`).",
        "",
        "* **Populations.** Halfspaces: mu = nu_x = N(0, I_d), target 1(u.x >= 0.3), u = (1, ..., 1)/sqrt(d). "
        "Thresholds: U[0,1], target 1(x >= 0.3). Stumps: U[0,1]^3, target 1(x_0 >= 0.3). "
        f"{cfg['label_noise']:.0%} label noise. Excess error = (1 - 2p) x disagreement with the target, exact (for "
        "halfspaces a bivariate-normal integral), except PPM in d = 2 and the yardstick on stumps (a fixed test set "
        "of 200,000 points; `excess_method` in `fits.csv`).",
        "* **Learners at eps = 1, one setting each, fixed by n and d in advance (not tuned):** m = max(ceil((eps n "
        "sqrt(v))^(2/5)), 2v) public points (v the VC dimension; the optimum of docs/theory/block-et-al.md, "
        '"Choosing m for RRSPM"); RRSPM (Laplace, pure eps); Perturbation (J = '
        f"{p['J']}, eta = {p['eta']}, delta = {p['delta']:g}); SubsampleAggregate (k = clip(n/{s['records_per_teacher']}, "
        f"2, {s['max_teachers']}) teachers, Laplace, on max(2, min(m, k/4)) public points); RSPM (thresholds, stumps; "
        f"data rounded to a grid of {cfg['rspm_grid']} cell centres per feature); Regularization (Algorithm 3, its convex "
        "oracle; halfspaces, rows mapped into the l1 ball by x -> (x, 1)/(|x|_1 + 1), Laplace; n <= "
        f"{cfg['regularization_max_n']}); PublicCoverEM (at most {cfg['max_candidates']:,} cover candidates); PPM "
        f"(Bassily, Moran, Nandi; thresholds and halfspaces in d = 2; label-determined privacy: the label-0 records are "
        f"its public examples, at most {cfg['ppm_max_public']} used: a different privacy model, shown for cost); the "
        "yardstick, output-perturbation logistic regression (Chaudhuri, Monteleoni, Sarwate, Algorithm 1; "
        "docs/theory/output-perturbation.md; lambda = 1/sqrt(n), a public norm bound), which calls no 0-1 oracle "
        "and uses no public data; on halfspaces the margin learners of Bassily, Mohri, Suresh, which need neither: "
        "MarginERM (Algorithm 2) and AdaptiveMarginERM (Algorithm 6, the margin chosen privately; n <= "
        f"{ADAPTIVE_MARGIN_MAX_N}), at their class defaults (margin 0.1, weight norm bound 1, delta = 1e-6), and "
        "MarginERM in our direct setting (accounting='direct-gaussian', one round, no projection: the setting for "
        "samples in the hundreds, docs/theory/margin-learners.md), all on the rows x / R clipped into the unit ball "
        "(R the public norm bound); and the non-private exact ERM.",
        "* **Backends:** every configured backend that is installed here. Not installed here: "
        + (
            f"{', '.join(missing)} (no new cells; the {run.get('kept_without_backend', 0)} cells of theirs that a run "
            "elsewhere stored are kept and reported)."
            if missing
            else "none."
        ),
        "* **Grid** (class, d: backend at sizes n): "
        + "; ".join(
            f"{cls} d = {d}: " + ", ".join(f"{b} n = {', '.join(str(n) for n in ns)}" for b, ns in per_backend.items())
            for cls, d, per_backend in cfg["grid"]
        )
        + (
            " (portfolio and gurobi-bc are also planned wherever scip-bc is, at its sizes)."
            if any("scip-bc" in per_backend for _, _, per_backend in cfg["grid"])
            else "."
        ),
        f"* **Caps.** Every oracle call has a time limit of {cfg['call_cap']:g} s (the MIP backends and enumerate stop "
        "at it; sweep never comes near it). A private-data call that does not certify within it aborts its fit "
        '(`on_uncertified="raise"`: nothing is released) and the cell is recorded as `uncertified` with the seconds '
        "it spent. The learners without oracle calls are kept within "
        f"{cfg['cell_cap']:g} s per cell by the sizes chosen: PublicCoverEM is `refused` above its candidate cap and "
        "Regularization `skipped` above its n. No cell is dropped.",
        "* **Timing.** `total_seconds` is the wall time of the fit; `oracle_seconds` the sum of its ledger records' "
        "seconds (the oracle protocol's own timing of each call: validation, reduction, backend, re-scoring); "
        "`non_oracle_seconds` the rest. Timings depend on the machine and its load (below).",
        "",
        "### The noise-free twin of each call (what the cost-of-noise ratio compares)",
        "",
        "| call | twin | ratio |",
        "|---|---|---|",
        "| RRSPM's private call (n private rows, weight 1, plus m public rows with Lap(2m/eps) weights) | the same n "
        "private rows with their labels and unit weights, the m noisy rows removed = the non-private ERM on the "
        "private rows | measured |",
        "| Perturbation's J perturbed calls (private rows plus m public rows with Gaussian weights) | the same: the "
        "private rows alone (one twin shared by the J calls) | measured |",
        "| RSPM's call (private rows plus the identification set with Laplace weights) | the private rows alone | "
        "measured |",
        "| Perturbation's and SubsampleAggregate's last call (Perturb on the public points, targets with noise gamma > 0) "
        "| the same public points with the targets before the noise (fbar(Z); the teachers' mean vote) | measured |",
        "| RRSPM's last call (Perturb with gamma = 0, public points only, realisable) | itself: it carries no noise | 1 by "
        "construction |",
        "| SubsampleAggregate's k teachers (a block of private rows, unit weights) | itself: no noise | 1 by construction |",
        "| non-private ERM; Regularization's convex calls | none | – |",
        "",
        "Twins are solved after the fit, outside its ledger and seconds, by a fresh oracle of the same backend and cap "
        "(no model or cores carried over from the noisy call). A ratio whose call hit the cap is a lower bound "
        "(`ratio_censored` in `calls.csv`).",
        "",
        "**Uncertainty.** The repetition is the unit (calls of one fit share its data): ratios are geometric means over "
        "repetitions of each fit's geometric-mean ratio with 95% Student-t intervals on the log scale; pooled figures "
        "treat every fit as one sample. Seconds: geometric means over repetitions, 95% t-intervals on the log scale; "
        "errors: means over the released fits, 95% t-intervals (lower end clipped at 0). With 3 repetitions "
        "(t = 4.3) these intervals are wide: read them as honest, not as sharp. The crossover "
        "d: linear interpolation in d of the mean log time ratio, 95% percentile bootstrap over repetitions "
        "(2000 draws).",
    ]


def _ratio_rows(ratios) -> list[str]:
    lines = [
        "| class, d | backend | learner: call | n: ratio [95% CI] (calls at the cap / calls) | median call s / twin s "
        "at the largest n |",
        "|---|---|---|---|---|",
    ]
    if ratios.empty:
        return lines
    order = {"threshold": 0, "stump": 1, "halfspace": 2}
    sel = ratios[ratios.kind == "private"]
    keys = sorted(
        {(c, int(d), b, lrn, k) for c, d, b, lrn, k in zip(sel["class"], sel.d, sel.backend, sel.learner, sel.kind)},
        key=lambda t: (order[t[0]], t[1], t[2], t[3], t[4]),
    )
    for cls, d, backend, learner, kind in keys:
        g = sel[
            (sel["class"] == cls)
            & (sel.d == d)
            & (sel.backend == backend)
            & (sel.learner == learner)
            & (sel.kind == kind)
        ]
        g = g.sort_values("n")
        cells = [
            f"{int(r.n)}: {'≥ ' if r.ratio_is_lower_bound else ''}{_ci(r.ratio, r.ratio_low, r.ratio_high)} "
            f"({r.censored_calls}/{r.calls})"
            for r in g.itertuples()
        ]
        last = g.iloc[-1]
        lines.append(
            f"| {panel_title(cls, d)} | {backend} | {LABELS[learner]}: {kind} | {'; '.join(cells)} | "
            f"{_fmt(last.median_call_seconds, '.3g')} / {_fmt(last.median_twin_seconds, '.3g')} |"
        )
    return lines


def _learner_rows(table) -> list[str]:
    """Per (class, d, learner, backend): the largest n at which every run released, and what happened above it."""
    lines = [
        "| class, d | learner | backend | largest n released in every run | seconds [95% CI] | oracle share | calls "
        "(by design) | excess [95% CI] | above that n |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    order = {"threshold": 0, "stump": 1, "halfspace": 2}
    groups = table.groupby(["class", "d", "learner", "backend"], sort=False)
    keys = sorted(groups.groups, key=lambda k: (order[k[0]], k[1], list(LABELS).index(k[2]), k[3]))
    for cls, d, learner, backend in keys:
        g = groups.get_group((cls, d, learner, backend)).sort_values("n")
        full = g[(g.released == g.reps) & (g.reps > 0)]
        above = g[g.n > (full.n.max() if len(full) else -1)]
        notes = "; ".join(
            f"n = {r.n}: "
            + (
                "refused (cover cap)"
                if "cover" in r.reason
                else "skipped"
                if r.refused_or_skipped
                else f"{r.released}/{r.reps} released" + (f", {r.uncertified} capped" if r.uncertified else "")
            )
            for r in above.itertuples()
        )
        if not len(full):
            lines.append(f"| {panel_title(cls, d)} | {LABELS[learner]} | {backend} | none | – | – | – | – | {notes} |")
            continue
        r = full.iloc[-1]
        design = "" if not math.isfinite(r.calls_by_design) else f" ({int(r.calls_by_design)})"
        lines.append(
            f"| {panel_title(cls, d)} | {LABELS[learner]} | {backend} | {int(r.n)} | "
            f"{_ci(r.total_seconds, r.total_low, r.total_high, '.3g')} | {_fmt(r.oracle_share, '.0%')} | "
            f"{_fmt(r.calls, '.3g')}{design} | {_ci(r.excess, r.excess_low, r.excess_high)} | {notes or '–'} |"
        )
    return lines


def _cap(g) -> str:
    return f"{float(g.call_cap.iloc[0]):g}" if "call_cap" in g else "call"


def _list(values: list[int]) -> str:
    return ", ".join(str(v) for v in values) if values else "none"


def _findings(fits, calls, ratios, table, front, cross_d, cross) -> list[str]:
    out = []
    for backend in ("enumerate", "portfolio", "scip-bc", "highs", "gurobi-bc", "sweep"):
        for cls in ("halfspace", "threshold", "stump"):
            p = pooled_ratio(calls, "rrspm", "private", backend=backend, **{"class": cls})
            if p["fits"]:
                out.append(f"* **Cost of noise, RRSPM's private call, {cls}s on {backend}:** {_ratio_text(p)}.")
    private = calls[(calls.kind == "private") & (calls.twin_kind == "solved") & (calls["class"] == "halfspace")]
    for backend, g in private.groupby("backend"):
        out.append(
            f"* **Certified within the {_cap(g)} s cap, halfspaces on {backend}:** {int(g.certified.sum())} of {len(g)} "
            f"private calls (RRSPM, Perturbation) and {int(g.twin_certified.sum())} of their {len(g)} noise-free twins "
            "(the same private rows, same backend and cap)."
        )
    for learner, kind, what in (
        ("perturbation", "private", "Perturbation's perturbed calls"),
        ("rspm", "private", "RSPM's call"),
        ("perturbation", "public-noisy", "Perturbation's last (public) call"),
        ("subsample", "public-noisy", "SubsampleAggregate's last (public) call"),
    ):
        p = pooled_ratio(calls, learner, kind)
        if p["fits"]:
            out.append(f"* **{what}, all classes and backends pooled:** {_ratio_text(p)}.")
    hs = cross_d[cross_d.rrspm_released < cross_d.reps] if not cross_d.empty else cross_d
    for r in cross.itertuples() if not cross.empty else []:
        g = cross_d[cross_d.n == r.n].sort_values("d")
        if math.isfinite(r.crossover_d):
            lo_d = int(math.floor(r.crossover_d))
            near = g[g.d >= lo_d].head(2)
            errs = "; ".join(
                f"d = {int(x.d)}: RRSPM {x.rrspm_seconds:.3g} s, excess {_fmt(x.rrspm_excess)}, PublicCoverEM "
                f"{x.em_seconds:.3g} s{' (extrapolated)' if x.em_extrapolated else ''}, excess {_fmt(x.em_excess)}"
                for x in near.itertuples()
            )
            out.append(
                f"* **Crossover, n = {r.n} ({r.backend}):** from d = {r.crossover_d:.2f} on, RRSPM's total time stays "
                f"below PublicCoverEM's at every larger d of the grid where it is determined "
                f"(95% bootstrap interval {r.low:.2f}–{r.high:.2f}; "
                f"{r.bootstrap_share_with_crossing:.0%} of the draws cross in d = {r.d_range}). Around it: {errs}."
            )
        else:
            open_ds = [int(x) for x in g[g.log_time_ratio.isna()].d]
            em_ds = [int(x) for x in g[g.log_time_ratio > 0].d]
            rr_ds = [int(x) for x in g[g.log_time_ratio <= 0].d]
            parts = [f"PublicCoverEM is cheaper at d = {_list(em_ds)}"] if em_ds else []
            parts += [f"RRSPM at d = {_list(rr_ds)}"] if rr_ds else []
            if open_ds:
                parts.append(
                    f"at d = {_list(open_ds)} the order is undetermined (RRSPM's fits hit the cap, so its time is only "
                    "a lower bound, below PublicCoverEM's)"
                )
            out.append(
                f"* **Crossover, n = {r.n} ({r.backend}):** not established in d = {r.d_range}: "
                + "; ".join(parts)
                + "."
            )
    if len(hs):
        out.append(
            "* RRSPM fits that hit the cap (nothing released) enter the crossover with the seconds they spent, a lower "
            "bound on their cost: "
            + ", ".join(f"n = {x.n}, d = {x.d}: {x.reps - x.rrspm_released} of {x.reps}" for x in hs.itertuples())
            + "."
        )
    if not front.empty:
        wins: dict[str, int] = {}
        for (_, _), g in front[front.on_frontier].groupby(["class", "d"]):
            for learner in set(g.learner):
                wins[learner] = wins.get(learner, 0) + 1
        panels = front.groupby(["class", "d"]).ngroups
        out.append(
            f"* **Frontier (b):** over {panels} (class, d) panels, the private learners on the error-vs-seconds frontier: "
            + ", ".join(f"{LABELS[k]} in {v}" for k, v in sorted(wins.items(), key=lambda t: -t[1]))
            + "."
        )
        best = []
        for (cls, d), g in front[front.learner != "erm"].groupby(["class", "d"]):
            r = g.sort_values("excess").iloc[0]
            best.append(
                f"{panel_title(cls, int(d))}: {LABELS[r.learner]} ({r.excess:.2g} at {r.seconds:.2g} s, n = {r.n})"
            )
        out.append("* **Lowest excess error per panel:** " + "; ".join(best) + ".")
    oracle_fits = fits[fits.learner.isin(["rrspm", "perturbation", "subsample", "rspm"]) & (fits.status == "ok")]
    if len(oracle_fits):
        share = (oracle_fits.oracle_seconds / oracle_fits.total_seconds).to_numpy()
        slow = oracle_fits[oracle_fits.total_seconds >= 1.0]
        slow_text = (
            f" and {np.median(slow.oracle_seconds / slow.total_seconds):.0%} in the {len(slow)} fits that took at least 1 s"
            if len(slow)
            else ""
        )
        out.append(
            f"* **Where the time goes:** in the released fits of the oracle learners the oracle calls take a median "
            f"{np.median(share):.0%} of the wall time (all {len(share)} fits){slow_text}; the rest (sampling noise, "
            "building the union, the learner's bookkeeping) matters only for fits of milliseconds."
        )
    teach = calls[(calls.learner == "subsample") & (calls.kind == "teacher")]
    if len(teach):
        per_fit = teach.groupby(["class", "d", "n", "backend", "rep"]).seconds.sum()
        out.append(
            f"* **SubsampleAggregate's teachers** carry no privacy noise (ratio 1 by construction): their cost is that "
            f"of k small non-private ERMs, {per_fit.median():.2g} s per fit in total (median; max {per_fit.max():.2g} s)."
        )
    return out


def _provenance(run: dict[str, Any], load_text: str) -> str:
    """Which runs computed the cells (``runs.jsonl``), with their wall time, processes and load."""
    history = run.get("history") or []

    def one(r: dict[str, Any]) -> str:
        loads = " / ".join(
            "–" if x is None else ", ".join(f"{v:.2f}" for v in x) for x in (r.get("load_before"), r.get("load_after"))
        )
        return (
            f"{r['computed']} cells in {r['seconds']:.0f} s of wall time with {r['n_jobs']} process(es), load averages "
            f"(1, 5, 15 min) before / after: {loads}"
        )

    if not history:
        return (
            f"This run: {run['computed']} cells computed in {run['seconds']:.0f} s; load before / after: {load_text}."
        )
    runs = "one run" if len(history) == 1 else f"{len(history)} runs"
    text = f"The cells were computed by {runs}: " + "; ".join(one(r) for r in history) + "."
    if not run["computed"]:
        text += " This report was rewritten from the stored cells without recomputing any."
    return text


def readme(
    fits: pd.DataFrame,
    calls: pd.DataFrame,
    ratios: pd.DataFrame,
    table: pd.DataFrame,
    front: pd.DataFrame,
    cross_d: pd.DataFrame,
    cross: pd.DataFrame,
    cfg: dict[str, Any],
    run: dict[str, Any],
    summary: dict[str, Any],
) -> str:
    """The README of a run: provenance, headline, figures, findings, protocol and tables."""
    loads = run.get("load_before"), run.get("load_after")
    load_text = " / ".join("–" if x is None else ", ".join(f"{v:.2f}" for v in x) for x in loads)
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary["cells_by_status"].items()))
    command, fallback = (CANONICAL_SCALE, FALLBACK_SCALE) if run.get("scale") else (CANONICAL, FALLBACK)
    lines = [
        "# What oracle efficiency buys with real solvers" + (", at scale" if run.get("scale") else ""),
        "",
        f"Generated by `{command}` (the same run from Python: `{fallback}`). Random seed {run['random_state']}{', quick configuration' if run['quick'] else ''}. "
        f"{_provenance(run, load_text)} Machine: {summary['machine']}. Cells by status: {statuses}. Oracle calls "
        f"recorded: {summary['calls']}.",
        "",
        f"**Headline:** {headline(calls, cross)}.",
        "",
        "![per-call time](call_time.png)",
        "",
        "![cost of noise](noise_ratio.png)",
        "",
        "![error vs wall-clock](pareto.png)",
        "",
        "![crossover](crossover.png)",
        "",
        "## Findings",
        "",
        *_findings(fits, calls, ratios, table, front, cross_d, cross),
        "",
        *_protocol(cfg, run),
        "",
        "## Cost of noise per call kind",
        "",
        "Geometric mean over repetitions of seconds(call) / seconds(twin); `≥`: some calls hit the cap, so the value "
        "is a lower bound. The calls with private rows and noise rows are listed here; the public calls (Perturb) are "
        "pooled in the findings. The full table: `noise_ratio.csv`; every call: `calls.csv` (nodes, cores, cut "
        "rounds, twin).",
        "",
        *_ratio_rows(ratios),
        "",
        f"## RRSPM vs PublicCoverEM in d ({cross_d.backend.iloc[0] if not cross_d.empty else 'no RRSPM fits'})",
        "",
        "| n | d | m | RRSPM s, geometric mean (released / runs) | RRSPM excess | cover candidates | PublicCoverEM s | "
        "PublicCoverEM excess |",
        "|---|---|---|---|---|---|---|---|",
        *[
            f"| {r.n} | {r.d} | {r.m} | {r.rrspm_seconds:.3g} ({r.rrspm_released}/{r.reps}) | {_fmt(r.rrspm_excess)} | "
            f"{r.em_candidates:,} | {r.em_seconds:.3g}{' (extrapolated)' if r.em_extrapolated else ''} | "
            f"{_fmt(r.em_excess)} |"
            for r in (cross_d.itertuples() if not cross_d.empty else [])
        ],
        "",
        "PublicCoverEM's refused covers are extrapolated at this run's seconds per candidate (the median over the "
        "repetitions of its largest measured cover), a model, not a measurement.",
        "",
        "## Every learner",
        "",
        "Each learner on each backend at the largest n where it released in every repetition (seconds: geometric "
        "mean over the runs; oracle share: the ledger's seconds over the fits' wall seconds, summed over the runs; "
        "errors over the released fits), and "
        "what happened at the larger n tried (`capped`: fits aborted at the call cap, nothing released). Every "
        "(n, learner, backend): `learners.csv`; every run: `fits.csv`.",
        "",
        *_learner_rows(table),
        "",
        "## Files",
        "",
        "`cells.jsonl.gz`: every cell (its spec, fit and calls), sorted, the snapshot a run resumes from (the "
        "uncompressed `cells.jsonl` the cells append to while running is a working file); `runs.jsonl`: the runs that "
        "computed cells (wall time, processes, load); `fits.csv`: one row per learner fit; `calls.csv`: one row per "
        "oracle call with its twin; `noise_ratio.csv`, `learners.csv`, `pareto.csv`, `crossover.csv`, "
        "`crossover_by_d.csv`: the tables above in full; `summary.json`: configuration, run and headline numbers.",
        "",
        "## Caveats",
        "",
        "* Every learner runs at one setting fixed by rules of n and d, not tuned: the errors say what these settings "
        "reach, not each learner's best. At the small n the MIP backends allow in higher d, every private learner's "
        "error is large.",
        "* Seconds are wall-clock on a shared 2-CPU machine (the load averages above); a loaded machine also makes "
        "calls hit the cap earlier. Ratios are less sensitive to load than seconds, since a call and its twin run "
        "within seconds of each other in the same process.",
        "* PPM is private in a different model (label-determined privacy) and is shown for its cost.",
        "",
    ]
    return "\n".join(lines)
