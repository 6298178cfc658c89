"""The generated README of the real-data comparison: findings, protocol, per-task figures and tables, seconds per
fit, fits that did not finish, and the runs' provenance. Every statement is computed from the stored cells, so the
text cannot claim what the run did not show."""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Any

from oraclepriv.experiments.real_data_cell import LEARNERS, REFERENCE
from oraclepriv.experiments.real_data_sets import RADIUS_QUANTILE

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMMAND", "readme"]

COMMAND = "oraclepriv experiment real-data --out results/real-data --jobs 2"
FALLBACK = (
    'python3 -c "from oraclepriv.experiments.real_data import run_real_data; '
    "run_real_data('results/real-data', jobs=2)\""
)


def _f(x: Any, spec: str = ".3f") -> str:
    return "–" if x is None or not math.isfinite(float(x)) else format(float(x), spec)


def _ci(mean: Any, low: Any, high: Any, spec: str = ".3f", signed: bool = False) -> str:
    if mean is None or not math.isfinite(float(mean)):
        return "–"
    sign = "+" if signed else ""
    text = format(float(mean), sign + spec)
    if low is None or high is None or not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return text
    return f"{text} [{format(float(low), sign + spec)}, {format(float(high), sign + spec)}]"


def _label(name: Any) -> str:
    return (
        "–"
        if name is None or (isinstance(name, float) and math.isnan(name))
        else LEARNERS[name].label
        if name in LEARNERS
        else str(name)
    )


def _lead_words(r: Any) -> str:
    """How far ahead the best learner is, and whether the seeds separate it from the runner-up."""
    if r.runner_up is None or (isinstance(r.runner_up, float) and math.isnan(r.runner_up)):
        return "the only private learner with every fit finished"
    separated = math.isfinite(r.lead_low) and r.lead_low > 0
    verdict = "ahead on these seeds" if separated else "not separated from it on these seeds"
    return f"{_ci(r.lead, r.lead_low, r.lead_high, signed=True)} over {_label(r.runner_up)} ({verdict})"


def _findings(best: pd.DataFrame, heldout: pd.DataFrame, sizes: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["## Findings", ""]
    ranked = best[best.best.notna()]
    if ranked.empty:
        return lines + ["No private learner finished every seed of any (task, epsilon).", ""]
    wins = Counter(ranked.best)
    level = Counter(ranked.best) + Counter(name for tied in ranked.tied.fillna("") for name in tied.split(", ") if name)
    lines += [
        "Best private learner per (task, epsilon), by mean test accuracy over the seeds among the record-level DP "
        "learners whose every fit finished (PPM's label-determined privacy is not ranked): "
        + ", ".join(f"{_label(name)} {count} of {len(ranked)}" for name, count in wins.most_common())
        + ". Best or not separated from the best by the seeds (the paired difference's 95% interval reaches 0): "
        + ", ".join(f"{_label(name)} {count}" for name, count in level.most_common())
        + ". Leads are paired over seeds (every learner of a seed sees the same split), with 95% t-intervals; the "
        "best is chosen on the same seeds it is reported on, so its lead is optimistic: the held-out column picks on "
        "the even seeds and scores on the odd ones.",
        "",
    ]
    picks = {} if heldout.empty else {(r.task, r.epsilon): r for r in heldout.itertuples()}
    for task in sorted(ranked.task.unique()):
        s = sizes[task]
        lines += [
            f"**{s['title']}** (n = {s['private']} private records, {s['features']} features; majority class "
            f"{s['majority_rate']:.3f} of all rows):",
            "",
            "| epsilon | best private learner | test accuracy [95% CI] | lead over the runner-up | over the majority "
            "class | exact ERM (low map) minus best | logistic regression (all features) minus best | held-out pick: "
            "accuracy on odd seeds |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in ranked[ranked.task == task].sort_values("epsilon").itertuples():
            pick = picks.get((task, r.epsilon))
            pick_text = "–" if pick is None else f"{_label(pick.learner)}: {_f(pick.heldout_accuracy)}"
            lines.append(
                f"| {r.epsilon:g} | {_label(r.best)} | {_ci(r.accuracy, r.low, r.high)} | {_lead_words(r)} | "
                f"{_ci(r.over_majority, r.over_majority_low, r.over_majority_high, signed=True)} | "
                f"{_ci(r.erm_gap, r.erm_gap_low, r.erm_gap_high, signed=True)} | "
                f"{_ci(r.logistic_all_gap, r.logistic_all_gap_low, r.logistic_all_gap_high, signed=True)} | "
                f"{pick_text} |"
            )
        excluded = [f"epsilon {r.epsilon:g}: {r.excluded}" for r in best[best.task == task].itertuples() if r.excluded]
        if excluded:
            lines += ["", "Not ranked (a fit did not finish): " + "; ".join(excluded) + "."]
        lines.append("")
    return lines


def _protocol(cfg: dict[str, Any], sizes: dict[str, dict[str, Any]], seeds: int) -> list[str]:
    p, s = cfg["perturbation"], cfg["subsample"]
    lines = [
        "## Protocol",
        "",
        "| task | rows | features | test | public (unlabelled) | private | majority class |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {v['title']} | {v['rows']} | {v['features']} | {v['test']} | {v['public']} | {v['private']} | "
        f"{v['majority_rate']:.3f} |"
        for v in sizes.values()
    ]
    lines += [
        "",
        f"* **Splits.** {seeds} seeds; per seed a random permutation of the rows (seeded by the task and the seed only) "
        "gives the test split, then the public sample (the first rows of the train split, labels dropped) and the "
        "private records (the rest). Every learner of a seed sees the same split.",
        "* **Scaling fixed without the private data.** Centred and divided by the public sample's feature means and "
        f"standard deviations, divided by the {RADIUS_QUANTILE:.0%} quantile of the public rows' norms, every row "
        "clipped into the unit ball (one record at a time). The datasets' documented feature ranges are statistics "
        "of the whole data set (test and private rows included) except the digits' 0..16 pixels, so they are not used. "
        "The rows lie in the ball of radius 1, the data norm the margin learners and output perturbation assume.",
        f"* **Low map** for the learners that need an exact 0-1 oracle (an exact oracle cannot run in d = 30 or 64): "
        f"the scaled rows projected on the first {cfg['components']} principal directions of the scaled public sample. "
        f"Exact oracle: `{cfg['backend']}`, {cfg['call_cap']:g} s per call; a private-data call not certified "
        "within it aborts the fit (status `uncertified`).",
        "* **Learners, one setting each fixed by a rule of (n, d, epsilon), not tuned** (tuning on the private data "
        "would spend privacy the comparison does not account): RRSPM (Block, Bun, Desai, Shetty, Wu, Algorithm 4; "
        'Laplace, pure epsilon-DP, `public_size="auto"`: the theory\'s m); Perturbation (Algorithm 2; '
        f'J = {p["J"]}, eta = {p["eta"]}, delta = {p["delta"]:g}, `public_size="auto"`, rho = 2: unconditional '
        f"(epsilon, delta)); SubsampleAggregate (k = clip(n/{s['records_per_teacher']}, 2, {s['max_teachers']}) "
        "teachers, Laplace, on max(2, min(public, k/4)) public points); PublicCoverEM (the exponential mechanism over "
        f'the public cover, `public_size="auto"`, at most {cfg["max_candidates"]:,} candidates); output-perturbation '
        "logistic regression (Chaudhuri, Monteleoni, Sarwate, Algorithm 1; lambda = 1/sqrt(n), data norm 1) on all "
        "features and in the low map; PPM (Bassily, Moran, Nandi, Algorithm 2; low map, at most "
        f"{cfg['ppm_max_public']} public examples) under its own label-determined privacy (the class-0 records are "
        "public): shown dashed, never ranked." + _margin_sentence(cfg),
        "* **References (non-private, one fit per seed):** the majority class of the private labels; the exact 0-1 "
        "ERM in the low map; L2 logistic regression (scikit-learn, C = 1) on all features and in the low map.",
        f"* **Caps and statuses.** Every fit runs under a wall-clock cap of {cfg['cell_cap']:g} s (status `capped`); "
        "exceptions are `error`, uncertified oracle calls `uncertified`; such fits keep their rows and seconds "
        "(`fits.csv`) and have no accuracy. A learner with a fit that is not `ok` at some (task, epsilon) is not "
        "ranked there.",
        "* **Uncertainty.** Means over seeds with 95% Student-t intervals (t = 2.78 for 5 seeds): read them as honest, "
        "not sharp; the test splits are small (30–169 rows).",
        "",
    ]
    return lines


def _margin_sentence(cfg: dict[str, Any]) -> str:
    p = cfg["margin_learners"]
    text = (
        " The margin learners of Bassily, Mohri, Suresh (no public data, no oracle; data radius 1, weight norm bound "
        f"Lambda = {p['norm_bound']:g}, delta = {p['delta']:g}, the toolkit's stand-in DP solver for the phased SGD): "
        f"MarginERM (Algorithm 2 with Algorithm 4, margin rho = {p['margin']:g} fixed in advance) on all features and "
        "in the low map, AdaptiveMarginERM (Algorithm 6: rho chosen privately) on all features, both at the paper's "
        "defaults (Lemma 3.1's accounting, M = ceil(log(2/beta)) resampled rounds and the final selection, the JL "
        "dimension of Theorem 3.2's proof)."
    )
    direct = cfg.get("margin_direct")
    if not direct:
        return text
    settings = ", ".join(f"{key}={value!r}" for key, value in direct.items())
    return text + (
        f" Both again on all features at the direct setting, fixed in advance (`{settings}`): our accounting, not the "
        "paper's (the stand-in is a full-batch DP-ERM solver, so it runs on the records themselves, without the "
        "resampling the paper's one-pass solver needs; with one round the final selection is a constant map and "
        "all of epsilon goes to the solver; no projection): labelled `(direct, ...)`; derivation in "
        "docs/theory/margin-learners.md."
    )


def _task_table(table: pd.DataFrame, task: str) -> list[str]:
    rows = table[table.task == task]
    epsilons = sorted(e for e in rows.epsilon.unique() if math.isfinite(e))
    lines = [
        "| learner | map (d) | " + " | ".join(f"epsilon = {e:g}" for e in epsilons) + " | median s per fit |",
        "|---|---|" + "---|" * (len(epsilons) + 1),
    ]
    learners = rows[rows.kind != REFERENCE].sort_values(["kind", "learner"])
    for learner in dict.fromkeys(learners.learner):
        g = rows[rows.learner == learner].set_index("epsilon")
        cells = []
        for e in epsilons:
            if e not in g.index:
                cells.append("–")
                continue
            r = g.loc[e]
            note = f" ({r.not_ok})" if r.not_ok else ""
            cells.append(_ci(r.accuracy, r.low, r.high) + note)
        first = g.iloc[0]
        lines.append(
            f"| {first.label} | {first.features} ({first.d}) | "
            + " | ".join(cells)
            + f" | {_f(g.median_seconds.median(), '.3g')} |"
        )
    for r in rows[rows.kind == REFERENCE].sort_values("learner").itertuples():
        note = f" ({r.not_ok})" if r.not_ok else ""
        value = _ci(r.accuracy, r.low, r.high) + note
        lines.append(
            f"| {r.label} | {r.features} ({r.d}) | {value} (every epsilon) |"
            + " |" * (len(epsilons) - 1)
            + f" {_f(r.median_seconds, '.3g')} |"
        )
    return lines


def _not_ok(fits: pd.DataFrame) -> list[str]:
    bad = fits[fits.status != "ok"]
    lines = ["## Fits that did not finish", ""]
    if bad.empty:
        return lines + [f"None: all {len(fits)} fits finished within their caps.", ""]
    lines += [
        f"{len(bad)} of {len(fits)} fits (rows kept in `fits.csv`):",
        "",
        "| task | learner | status | fits | a reason |",
        "|---|---|---|---|---|",
    ]
    for (task, learner, status), g in bad.groupby(["task", "learner", "status"]):
        lines.append(f"| {task} | {_label(learner)} | {status} | {len(g)} | {str(g.reason.iloc[0])[:160]} |")
    return lines + [""]


def _runs(runs: list[dict[str, Any]], summary: dict[str, Any]) -> list[str]:
    lines = ["## Runs", ""]
    if not runs:
        lines.append("No run recorded (the cells came from a snapshot).")
    for r in runs:
        loads = [x for x in (r.get("load_before"), r.get("load_after")) if x]
        load = " to ".join(f"{x[0]:.1f}" for x in loads) if loads else "unknown"
        code = "code not recorded"
        if r.get("commit"):
            code = f"code of commit {r['commit']}" + (" with uncommitted changes" if r.get("modified") else "")
        lines.append(
            f"* {r['computed']} cells computed ({r['resumed']} taken from the stored cells) in {r['seconds']:.0f} s "
            f"wall-clock with {r['n_jobs']} process(es), {code}; 1-minute load average {load} (the machine was "
            "shared: seconds per fit are inflated when the load is above the core count)."
        )
    lines += ["", f"Machine: {summary['machine']}.", ""]
    return lines


def readme(
    fits: pd.DataFrame,
    table: pd.DataFrame,
    best: pd.DataFrame,
    heldout: pd.DataFrame,
    sizes: dict[str, dict[str, Any]],
    cfg: dict[str, Any],
    runs: list[dict[str, Any]],
    summary: dict[str, Any],
) -> str:
    """The README's text.

    Parameters
    ----------
    fits : DataFrame
        One row per fit (:func:`oraclepriv.experiments.real_data_stats.fit_frame`).
    table : DataFrame
        The accuracy table (:func:`oraclepriv.experiments.real_data_stats.accuracy_table`).
    best : DataFrame
        The best private learner per task and epsilon (:func:`oraclepriv.experiments.real_data_stats.best_private`).
    heldout : DataFrame
        The held-out pick (:func:`oraclepriv.experiments.real_data_stats.heldout_pick`).
    sizes : dict
        Per task, its sizes (:func:`oraclepriv.experiments.real_data_sets.task_sizes`).
    cfg : dict
        The configuration.
    runs : list of dict
        The runs that computed the cells.
    summary : dict
        The summary written to ``summary.json`` (the machine line).

    Returns
    -------
    str
        Markdown.
    """
    seeds = int(fits.rep.nunique())
    lines = [
        "# Which private halfspace learner? A comparison on real data",
        "",
        f"Generated from the stored cells (`cells.jsonl.gz`) by `{COMMAND}` (or, from Python, `{FALLBACK}`); "
        "`--report-only` regenerates the tables, figures and this README from them without computing a cell, and a "
        "rerun computes only the cells not stored. Module: `oraclepriv/experiments/real_data.py`.",
        "",
        f"Every private halfspace learner of the toolkit on {len(sizes)} of scikit-learn's bundled binary tasks at "
        f"epsilon in {{{', '.join(f'{e:g}' for e in cfg['epsilons'])}}}, {seeds} seeds: test accuracy with 95% "
        "intervals over the seeds and wall-clock per fit, against the majority class and non-private baselines.",
        "",
    ]
    lines += _findings(best, heldout, sizes)
    lines += _protocol(cfg, sizes, seeds)
    lines += ["## Results per task", ""]
    for task, s in sizes.items():
        lines += [f"### {s['title']}", "", f"![{s['title']}]({task}.png)", ""]
        lines += _task_table(table, task) + [""]
    lines += _not_ok(fits)
    lines += _runs(runs, summary)
    lines += [
        "Files: `fits.csv` (one row per fit: task, seed, learner, epsilon, map, sizes, status, seconds, accuracy, the "
        "guarantee the learner states), `accuracy.csv`, `best.csv`, `heldout.csv`, `summary.json`, `runs.jsonl`, "
        "`cells.jsonl.gz` (the stored cells).",
        "",
    ]
    return "\n".join(lines)
