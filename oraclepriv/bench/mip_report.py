"""The report of the MIP oracle benchmark (``oraclepriv bench mip``): the files a finished run leaves
(:data:`OUTPUTS`): its rows as CSV and JSON, the summary as JSON and Markdown, and the performance profile
as a PNG. This module only formats: the per-backend summary, the seeds' variability and the profile's
ratios are computed by :mod:`oraclepriv.bench.mip_summary`, the cross-backend agreement check by
:mod:`oraclepriv.bench.mip_agreement`.

The performance profile (Dolan & More, "Benchmarking optimization software with performance profiles",
Math. Prog. 91, 2002) compares backends across instances: over fewer than :data:`MIN_PROFILE_INSTANCES`
instances it says nothing, so no figure is drawn and the summary says why (:func:`profile_note`).

This module runs nothing. It does not import :mod:`oraclepriv.bench.mip`.
"""

from __future__ import annotations

import csv
import math
import os
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.bench.mip_summary import SGM_SHIFT, performance_profile, variability
from oraclepriv.bench.report import write_json
from oraclepriv.provenance import machine_description

__all__ = [
    "OUTPUTS",
    "LEARNERS_OUTPUT",
    "MIN_PROFILE_INSTANCES",
    "profile_note",
    "plot_performance_profile",
    "solver_versions",
    "markdown_summary",
    "write_outputs",
    "command_line",
]

#: the files a finished run writes (:func:`write_outputs`; ``profile.png`` only over
#: :data:`MIN_PROFILE_INSTANCES` instances or more)
OUTPUTS = ("rows.csv", "rows.json", "summary.json", "summary.md", "profile.png")
#: written only by ``--suite learners``: private call / noise-free twin per pair
#: (:func:`oraclepriv.bench.learner_calls.write_cost_of_noise`)
LEARNERS_OUTPUT = "cost-of-noise.md"
#: the fewest instances a performance profile is drawn over: it ranks backends by how often each is within a
#: factor tau of the fastest, and over one instance every backend's curve is a single step that says nothing more
#: than that instance's row
MIN_PROFILE_INSTANCES = 2


def profile_note(rows: list[dict[str, Any]]) -> str | None:
    """Why a run has no performance profile (fewer than :data:`MIN_PROFILE_INSTANCES` instances), as a
    sentence for the summary and the command line; None when the profile is drawn."""
    instances = len(dict.fromkeys(r["instance"] for r in rows))
    if instances >= MIN_PROFILE_INSTANCES:
        return None
    return (
        f"No performance profile: it compares backends across instances and needs at least "
        f"{MIN_PROFILE_INSTANCES}; this run has {instances}."
    )


def _variability_section(entries: list[dict[str, Any]]) -> list[str]:
    """:func:`variability` as Markdown lines (none without seeded runs)."""
    if not entries:
        return []
    lines = [
        "",
        "## Performance variability (random seeds)",
        "",
        "The same exact search under other random seeds (`--seeds`): each seed is a row of the tables above. "
        "*Some seeds only*: instances solved by some seeds and not by others. *Time ratio*: the slowest seed's "
        "seconds over the fastest's, on the instances every seed solved (median and largest). *Objectives differ*: "
        "instances whose final re-scored objectives differ between seeds, or where some seeds answered and others "
        "failed (only possible where some seed stopped at the time limit or errored).",
        "",
        "| backend | seeds | instances | solved per seed | SGM time per seed (s) | some seeds only | all seeds | "
        "time ratio median / max | objectives differ |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for v in entries:
        ratio = f"{_fmt(v['median_time_ratio'], 3)} / {_fmt(v['max_time_ratio'], 3)}" if v["median_time_ratio"] else "-"
        lines.append(
            f"| {v['backend']} | {', '.join(map(str, v['seeds']))} | {v['instances']} | "
            f"{', '.join(map(str, v['solved_per_seed']))} | {', '.join(_fmt(t, 4) for t in v['sgm_seconds_per_seed'])} | "
            f"{v['solved_by_some_seeds_only']} | {v['solved_by_all_seeds']} | {ratio} | {v['final_objectives_differ']} |"
        )
    return lines


def plot_performance_profile(rows: list[dict[str, Any]], path: Path | str, title: str = "") -> None:
    """Dolan-More profile rho_s(tau) on a log2 axis, written as PNG (matplotlib Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    backends, ratios = performance_profile(rows)
    finite = ratios[np.isfinite(ratios)]
    tau_max = max(2.0, float(finite.max()) * 1.5) if finite.size else 2.0
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    n = ratios.shape[0]
    for k, b in enumerate(backends):
        r = np.sort(ratios[:, k])
        r = r[np.isfinite(r)]
        xs = np.concatenate([[1.0], r, [tau_max]])
        ys = np.concatenate([[0.0], np.arange(1, r.size + 1) / n, [r.size / n]])
        ax.step(xs, ys, where="post", label=f"{b} ({r.size}/{n} certified)")
    ax.set_xscale("log", base=2)
    ax.set_xlim(1.0, tau_max)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("tau (time / fastest certified time)")
    ax.set_ylabel("fraction of instances certified within tau")
    ax.set_title(title or "performance profile (Dolan-More)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# reports


def solver_versions() -> dict[str, str]:
    """Versions of the solver packages (those importable)."""
    from importlib import metadata

    out = {}
    for package in ("highspy", "ortools", "pyscipopt", "pyomo", "scikit-learn", "matplotlib"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out


def _fmt(value: Any, digits: int = 6) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{digits}g}"
    return str(value)


def markdown_summary(
    rows: list[dict[str, Any]],
    summary: list[dict[str, Any]],
    problems: list[str],
    warnings: list[str],
    command: str,
    suite: str,
    time_limit: float,
    profile_png: str | None = None,
    execution: str | None = None,
    repeat: int = 1,
) -> str:
    """The benchmark as a Markdown section (for results/), stating command, machine, versions, where
    the cells ran (``execution``, e.g. "2 local processes (joblib)") and how many runs each cell's time
    is the median of (``repeat``)."""
    versions = ", ".join(f"{k} {v}" for k, v in solver_versions().items())
    loads = [r["load_1min"] for r in rows if r.get("load_1min") is not None]
    cores = os.cpu_count() or 1
    ready = [r["kernels_seconds"] for r in rows if r.get("kernels_seconds")]
    ran = (
        f"Each (instance, backend) cell ran as one task with one solver thread on {execution or 'this process'}, "
        f"the compiled kernels made ready untimed before a process's first cell ({sum(ready):.1f} s in all); "
    ) + (
        f"1-minute load average at the cells' start {min(loads):.2f}-{max(loads):.2f}"
        + (
            f" (above the {cores} cores at times: those cells shared cores, and their times are inflated)."
            if max(loads) > cores
            else f" (at most the {cores} cores)."
        )
        if loads
        else "no load average available."
    )
    lines = [
        "# MIP oracle benchmark: your own instances (`--data`)"
        if suite == "data"
        else f"# MIP oracle benchmark: suite `{suite}`",
        "",
        f"Produced by `{command}` on: {machine_description()}; {versions}.",
        "",
        ran,
        "",
        f"Time limit {time_limit:g} s per oracle call (model build included). *Solved* = the objective "
        f"re-scored by the hypothesis meets a proved bound (over the whole class, or over the restricted class "
        f"a backend states: then optimal over that class only, and not solved if a better halfspace exists). SGM = shifted geometric mean of the "
        f"time, shift {SGM_SHIFT:g} s, every unsolved run counted at the time limit."
        + (
            f" Each cell's call ran {repeat} times in a row when it ended optimal (a call stopped by the time limit "
            "ran once); its seconds are the median of the runs (each run's in rows.json, `seconds_runs`)."
            if repeat > 1
            else ""
        ),
        "",
        "| backend | instances | solved | wrong certificates | time-limit hits | uncertified (other) | errors | SGM time (s) "
        f"| speed-up vs {summary[0].get('baseline') or 'naive-highs' if summary else 'naive-highs'} (common instances) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| {s['backend']} | {s['instances']} | {s['solved']} | {s['wrong_certificates']} | {s['time_limit_hits']} | {s['uncertified_other']} | "
            f"{s['errors']} | {_fmt(s['sgm_seconds'], 4)} | {_fmt(s['speedup_vs_baseline'], 3) if s['speedup_vs_baseline'] else '-'} |"
        )
    lines += ["", "## Cross-backend agreement", ""]
    if problems:
        lines.append(f"**FAILED: {len(problems)} disagreement(s)**")
        lines += [f"- {p}" for p in problems]
    else:
        lines.append("All certified objectives agree; no proved bound exceeds any found objective.")
    if warnings:
        restricted = ", ".join(sorted({r["backend"] for r in rows if r.get("restriction") is not None}))
        lines += [
            "",
            f"Restricted-class certificates ({restricted}) that are wrong about the true optimum "
            "(documented behaviour of that model; counted as not solved):",
            "",
        ]
        lines += [f"- {w}" for w in warnings]
    note = profile_note(rows)
    if note is not None:
        lines += ["", note]
    elif profile_png:
        lines += ["", f"![performance profile]({profile_png})"]
    lines += _primal_section(summary, time_limit)
    lines += _variability_section(variability(rows, summary))
    lines += [
        "",
        "## Per instance",
        "",
        "| instance | class | n | d | backend | status | certified | objective | bound | seconds | nodes | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['instance']} | {r['class']} | {r['n']} | {r['d']} | {r['backend']} | {r['status']} | {_certified_cell(r)} | "
            f"{_fmt(r['objective'], 10)} | {_fmt(r['bound'], 10)} | {_fmt(r['seconds'], 4)} | {_fmt(r['nodes'])} | "
            f"{_fmt(r.get('load_1min'), 3)} |"
        )
    errors = [r for r in rows if r.get("error")]
    if errors:
        lines += ["", "## Errors and unsupported combinations", ""]
        lines += [f"- {r['instance']} / {r['backend']} ({r['status']}): {r['error']}" for r in errors]
    return "\n".join(lines) + "\n"


def _primal_section(summary: list[dict[str, Any]], time_limit: float) -> list[str]:
    """The summary's primal side as Markdown lines (empty before :func:`oraclepriv.bench.primal.add_primal_measures`)."""
    if not any("best_known_found" in s for s in summary):
        return []
    lines = [
        "",
        "## Primal side",
        "",
        "How early each backend found good halfspaces (`oraclepriv.bench.primal`). *Best known found*: instances on "
        "which its re-scored objective equals the best known (over this run and the library's manifest). For backends "
        "that keep an incumbent trace: the *primal integral* (Berthold 2013), the integral over the time limit "
        f"({time_limit:g} s) of the relative gap between its incumbent and the best known objective (1 before the "
        "first incumbent; lower is better, 0 = the best known from the start), averaged over its instances, and the "
        "SGM of the time at which it first held its final incumbent. Incumbents before the final one are the "
        "backend's own values, not re-scored. `-`: the backend keeps no trace.",
        "",
        "| backend | instances | best known found | traced | mean primal integral (s) | SGM time to final incumbent (s) |",
        "|---|---|---|---|---|---|",
    ]
    for s in summary:
        lines.append(
            f"| {s['backend']} | {s['instances']} | {s.get('best_known_found', '-')} | {s.get('traced', 0)} | "
            f"{_fmt(s.get('mean_primal_integral'), 4) if s.get('mean_primal_integral') is not None else '-'} | "
            f"{_fmt(s.get('sgm_best_found_seconds'), 4) if s.get('sgm_best_found_seconds') is not None else '-'} |"
        )
    return lines


def _certified_cell(row: dict[str, Any]) -> str:
    """ "True" / "False" for whole-class certificates; "restricted" when only a restricted bound is met."""
    if row.get("restriction") is not None and row["meets_bound"]:
        return "restricted"
    return _fmt(row["certified"])


def write_outputs(
    out: Path,
    rows: list[dict[str, Any]],
    summary: list[dict[str, Any]],
    problems: list[str],
    warnings: list[str],
    *,
    command: str,
    suite: str,
    time_limit: float,
    execution: str | None = None,
    repeat: int = 1,
) -> dict[str, Path]:
    """rows.csv, rows.json, summary.json, summary.md and, over :data:`MIN_PROFILE_INSTANCES` instances or more,
    profile.png in ``out`` (``execution``: where the cells ran, as
    :meth:`oraclepriv.execution.Execution.describe` words it), and for the learners' suite cost-of-noise.md.
    Returns the paths written, by file name: without a profile, summary.json's ``profile_note`` and
    summary.md say why (:func:`profile_note`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    note = profile_note(rows)
    paths = {name: out / name for name in OUTPUTS if not (name == "profile.png" and note is not None)}
    columns = [
        "instance",
        "class",
        "n",
        "d",
        "backend",
        "status",
        "certified",
        "meets_bound",
        "restriction",
        "objective",
        "bound",
        "gap",
        "seconds",
        "repeat",
        "nodes",
        "time_limit",
        "overrun_seconds",
        "certificate_valid",
        "best_known",
        "best_found_seconds",
        "primal_integral",
        "host",
        "pid",
        "worker",
        "load_1min",
        "error",
    ]
    with open(paths["rows.csv"], "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for r in rows:
            writer.writerow({k: r.get(k) for k in columns})
    write_json(paths["rows.json"], rows)
    meta = {
        "command": command,
        "suite": suite,
        "time_limit": time_limit,
        "repeat": repeat,
        "execution": execution,
        "sgm_shift": SGM_SHIFT,
        "versions": solver_versions(),
        "summary": summary,
        "variability": variability(rows, summary),
        "agreement_problems": problems,
        "restricted_certificate_warnings": warnings,
        "profile_note": note,
    }
    write_json(paths["summary.json"], meta)
    if "profile.png" in paths:
        source = "your own instances" if suite == "data" else f"suite {suite}"
        plot_performance_profile(rows, paths["profile.png"], title=f"{source}, time limit {time_limit:g} s")
    paths["summary.md"].write_text(
        markdown_summary(
            rows,
            summary,
            problems,
            warnings,
            command,
            suite,
            time_limit,
            profile_png="profile.png" if "profile.png" in paths else None,
            execution=execution,
            repeat=repeat,
        ),
        encoding="utf-8",
    )
    if suite == "learners":
        from oraclepriv.bench.learner_calls import write_cost_of_noise

        paths[LEARNERS_OUTPUT] = write_cost_of_noise(out)
    return paths


def command_line(
    suite: str,
    backends: list[str] | None,
    time_limit: float | None,
    out: Path | str | None,
    quick: bool,
    execution: Iterable[str] = (),
    repeat: int = 1,
    instances: Iterable[str] | None = None,
    seeds: int = 1,
    data: Path | str | None = None,
    data_class: str = "halfspace",
) -> str:
    """The ``oraclepriv bench mip`` command line that reproduces a run (for reports); ``execution``: its
    execution options (``["--jobs", "2"]``); ``instances``: the names given to ``--instances``; ``backends``:
    as given to ``--backends`` (before ``seeds`` expands them); ``data``: the ``--data`` path that replaced
    the suite, with its ``--hypothesis-class``."""
    if data is not None:  # the user's own instances (--data), not a suite
        parts = ["oraclepriv", "bench", "mip", "--data", str(data), *execution]
        if data_class != "halfspace":
            parts += ["--hypothesis-class", data_class]
    else:
        parts = ["oraclepriv", "bench", "mip", "--suite", suite, *execution]
    if instances is not None:
        parts += ["--instances", ",".join(instances)]
    if repeat != 1:
        parts += ["--repeat", str(repeat)]
    if seeds != 1:
        parts += ["--seeds", str(seeds)]
    if backends:
        parts += ["--backends", ",".join(backends)]
    if time_limit is not None:
        parts += ["--time-limit", f"{time_limit:g}"]
    if out is not None:
        parts += ["--out", str(out)]
    if quick:
        parts.append("--quick")
    return " ".join(shlex.quote(p) for p in parts)
