"""The report of the MIP oracle benchmark (``oraclepriv bench mip``): from the rows of a run
(:func:`oraclepriv.bench.mip.run_benchmark`) to the per-backend summary, the cross-backend agreement
check, the performance profile and the files a finished run leaves (:data:`OUTPUTS`).

Per backend, the summary follows MIPLIB conventions (Gleixner et al., "MIPLIB 2017", Math. Prog. Comp.
2021; Mittelmann's benchmarks):

* ``solved`` = number of answers that meet their proved bound (a run that stops at "optimal"
  without that is not solved); for a backend whose bound covers a restricted class only
  (``restriction``, e.g. the naive baseline), "solved" means optimal over that class, and is
  withdrawn when the agreement check shows the class missed the true optimum;
* shifted geometric mean of the time, ``SGM = exp(mean(ln(max(1, t_i + s)))) - s`` with shift
  s = 10 s, every unsolved run (time limit, uncertified, error) counted at the time limit;
* a Dolan-More performance profile (Dolan & More, "Benchmarking optimization software with
  performance profiles", Math. Prog. 91, 2002): rho_s(tau) = fraction of instances on which
  backend s is certified within tau times the fastest certified backend (PNG, matplotlib Agg).

Cross-backend consistency (the exactness check, printed loudly, and a non-zero exit code of the
CLI): on one instance, (1) any two certified objectives must be equal within a tolerance, and
(2) no backend's proved bound may exceed any hypothesis's re-scored objective (a bound above a
found objective is a false proof); for library instances the manifest's proved optimum is one
more certified answer and its best known objective one more hypothesis. A restricted-class
backend (the naive baseline, ``certify="margin"``) proves optimality over its class only; its
answers are checked the same way, a wrong one is a warning (documented behaviour) and does not
count as solved.

The primal side (:mod:`oraclepriv.bench.primal` sets the row fields): for backends that return an
incumbent trace, the time to their final incumbent and Berthold's primal integral; for every backend,
on how many instances it found the best objective known.

Performance variability: with ``--seeds`` K > 1 a backend that takes a random seed runs once per seed
(:func:`oraclepriv.bench.mip.seeded_backends`), each seed a backend of its own in the tables;
:func:`variability` compares the seeds of one backend (solved counts and SGM per seed, instances solved
by some seeds only, the slowest seed's time over the fastest's, final objectives that differ).

This module reads rows and runs nothing. It does not import :mod:`oraclepriv.bench.mip` (what it reads
of an instance is :class:`CheckedInstance`).
"""

from __future__ import annotations

import csv
import math
import os
import shlex
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from oraclepriv.bench.report import write_json
from oraclepriv.provenance import machine_description

__all__ = [
    "SGM_SHIFT",
    "OUTPUTS",
    "LEARNERS_OUTPUT",
    "CheckedInstance",
    "shifted_geometric_mean",
    "solved",
    "scored_time",
    "summarize",
    "agreement_problems",
    "performance_profile",
    "plot_performance_profile",
    "solver_versions",
    "markdown_summary",
    "variability",
    "unseeded",
    "write_outputs",
    "command_line",
]

#: the shift of the shifted geometric mean, in seconds (MIPLIB / Mittelmann)
SGM_SHIFT = 10.0
#: the files a finished run writes (:func:`write_outputs`)
OUTPUTS = ("rows.csv", "rows.json", "summary.json", "summary.md", "profile.png")
#: written only by ``--suite learners``: private call / noise-free twin per pair
#: (:func:`oraclepriv.bench.learner_calls.write_cost_of_noise`)
LEARNERS_OUTPUT = "cost-of-noise.md"


class CheckedInstance(Protocol):
    """What :func:`agreement_problems` reads of an instance (:class:`oraclepriv.bench.mip.BenchInstance`
    has it): its name, the agreement tolerance, and the library manifest's best known objective and
    whether (and by whom) it is proved optimal."""

    @property
    def name(self) -> str: ...

    @property
    def tolerance(self) -> float: ...

    @property
    def best_known(self) -> float | None: ...

    @property
    def proved(self) -> bool: ...

    @property
    def proved_by(self) -> str | None: ...


# ---------------------------------------------------------------------------------------------
# summaries


def shifted_geometric_mean(times: Iterable[float], shift: float = SGM_SHIFT) -> float:
    """exp(mean(ln(max(1, t + shift)))) - shift (MIPLIB / Mittelmann, shift 10 s)."""
    values = np.asarray(list(times), dtype=np.float64)
    if values.size == 0:
        return math.nan
    return float(math.exp(np.mean(np.log(np.maximum(1.0, values + shift)))) - shift)


def solved(row: dict[str, Any]) -> bool:
    """Meets its proved bound, and (after :func:`agreement_problems`) not a restricted certificate found wrong."""
    return bool(row["meets_bound"] and row.get("certificate_valid", True))


def scored_time(row: dict[str, Any]) -> float:
    """The time a row counts with: its seconds if solved, else the time limit."""
    return min(float(row["seconds"]), row["time_limit"]) if solved(row) else float(row["time_limit"])


def summarize(rows: list[dict[str, Any]], baseline: str | None = "naive-highs") -> list[dict[str, Any]]:
    """One MIPLIB-style summary per backend (and the SGM speed-up over ``baseline`` if it ran).
    Instances a backend does not support (status "unsupported") are left out of its summary.
    Call :func:`agreement_problems` first so that wrong restricted certificates do not count."""
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    out = []
    for b in backends:
        mine = [r for r in rows if r["backend"] == b and r["status"] != "unsupported"]
        out.append(
            {
                "backend": b,
                "instances": len(mine),
                "solved": sum(solved(r) for r in mine),
                "wrong_certificates": sum(r["meets_bound"] and not solved(r) for r in mine),
                "time_limit_hits": sum(r["status"] == "time_limit" for r in mine),
                "uncertified_other": sum(
                    (not r["meets_bound"]) and r["status"] not in ("time_limit", "error") for r in mine
                ),
                "errors": sum(r["status"] == "error" for r in mine),
                "sgm_seconds": shifted_geometric_mean(scored_time(r) for r in mine),
                "max_seconds_certified": max((r["seconds"] for r in mine if r["meets_bound"]), default=math.nan),
                **_primal_summary(mine),
            }
        )
    # speed-up over the baseline, on the instances both ran (SGM ratio, baseline / backend)
    supported = {(r["backend"], r["instance"]): r for r in rows if r["status"] != "unsupported"}
    for s in out:
        common = [name for (b, name) in supported if b == s["backend"] and (baseline, name) in supported]
        s["speedup_vs_baseline"] = None
        s["baseline"] = baseline
        if baseline in backends and common:
            base_sgm = shifted_geometric_mean(scored_time(supported[(baseline, n)]) for n in common)
            mine_sgm = shifted_geometric_mean(scored_time(supported[(s["backend"], n)]) for n in common)
            s["speedup_vs_baseline"] = base_sgm / mine_sgm if mine_sgm > 0 else None
    return out


def unseeded(spec: str) -> tuple[str, int | None]:
    """A backend spec without its ``random_seed`` option, and that seed (None when it sets none):
    "scip-bc:local_search=0,random_seed=2" -> ("scip-bc:local_search=0", 2)."""
    from oraclepriv.backends import parse_backend_spec

    name, options = parse_backend_spec(spec)
    seed = options.pop("random_seed", None)
    if seed is None:
        return spec, None
    rest = [item for item in spec.partition(":")[2].split(",") if item and not item.startswith("random_seed=")]
    return (f"{name}:{','.join(rest)}" if rest else name), int(seed)


def variability(rows: list[dict[str, Any]], summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For every backend run under two or more random seeds (rows labelled by their seeded specs), how
    much the seed changed (module docstring): per seed its solved count and SGM time (from ``summary``),
    on the instances every seed ran: how many some seeds solve and others do not, the median and the
    largest ratio slowest / fastest seed's seconds where all solve, and how many end with different
    re-scored objectives. Empty when no backend ran under several seeds."""
    by_spec = {s["backend"]: s for s in summary}
    groups: dict[str, list[tuple[int, str]]] = {}
    for spec in by_spec:
        base, seed = unseeded(spec)
        if seed is not None:
            groups.setdefault(base, []).append((seed, spec))
    out = []
    for base, members in groups.items():
        if len(members) < 2:
            continue
        members.sort()
        specs = [spec for _, spec in members]
        cells: dict[str, dict[str, dict[str, Any]]] = {}
        for r in rows:
            if r["backend"] in specs and r["status"] != "unsupported":
                cells.setdefault(r["instance"], {})[r["backend"]] = r
        common = {name: runs for name, runs in cells.items() if len(runs) == len(specs)}
        unstable = 0
        time_ratios: list[float] = []
        objectives_differ = 0
        for runs in common.values():
            done = [solved(r) for r in runs.values()]
            if any(done) and not all(done):
                unstable += 1
            if all(done):
                seconds = [max(float(r["seconds"]), 1e-3) for r in runs.values()]
                time_ratios.append(max(seconds) / min(seconds))
            values = [float(r["objective"]) for r in runs.values()]
            finite = [v for v in values if math.isfinite(v)]  # a seed that errored has no objective
            tol = 1e-9 * max(1.0, max((abs(v) for v in finite), default=1.0))
            objectives_differ += len(finite) < len(values) or max(finite) - min(finite) > tol
        out.append(
            {
                "backend": base,
                "seeds": [seed for seed, _ in members],
                "instances": len(common),
                "solved_per_seed": [by_spec[spec]["solved"] for spec in specs],
                "sgm_seconds_per_seed": [by_spec[spec]["sgm_seconds"] for spec in specs],
                "solved_by_some_seeds_only": unstable,
                "solved_by_all_seeds": len(time_ratios),
                "median_time_ratio": float(np.median(time_ratios)) if time_ratios else None,
                "max_time_ratio": max(time_ratios) if time_ratios else None,
                "final_objectives_differ": objectives_differ,
            }
        )
    return out


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


def _primal_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One backend's primal side (:func:`oraclepriv.bench.primal.add_primal_measures` sets the row fields;
    rows without them count as untraced)."""
    traced = [r for r in rows if r.get("primal_integral") is not None]
    found = [
        r
        for r in rows
        if r.get("best_known") is not None
        and math.isfinite(r["objective"])
        and r["objective"] <= r["best_known"] + 1e-9 * max(1.0, abs(r["best_known"]))
    ]
    return {
        "best_known_found": len(found),
        "traced": len(traced),
        "mean_primal_integral": float(np.mean([r["primal_integral"] for r in traced])) if traced else None,
        "sgm_best_found_seconds": (shifted_geometric_mean(r["best_found_seconds"] for r in traced) if traced else None),
    }


def agreement_problems(rows: list[dict[str, Any]], instances: Iterable[CheckedInstance]) -> tuple[list[str], list[str]]:
    """Cross-backend consistency (module docstring): (problems, warnings) for ``rows`` of ``instances``.

    ``problems`` are violations among backends whose certificate covers *all* hypotheses of the
    class (two certified objectives differ, or a proved bound exceeds some found objective): a
    bug, and the CLI exits non-zero. Rows with a ``restriction`` prove optimality over a
    restricted class only (the naive model: margin 1e-4, unit box); their answers are
    checked against the others too, but a mismatch is a *warning* (the
    restricted certificate is wrong about the true optimum, as documented) and the row is marked
    ``certificate_valid = False`` so it does not count as solved. Rows gain that key.
    """
    by_name = {inst.name: inst for inst in instances}
    problems: list[str] = []
    warnings: list[str] = []
    for r in rows:
        r["certificate_valid"] = bool(r["meets_bound"])
    for name in dict.fromkeys(r["instance"] for r in rows):
        inst = by_name[name]
        tol = inst.tolerance
        mine = [r for r in rows if r["instance"] == name and r["status"] not in ("error", "unsupported")]
        full = [r for r in mine if r.get("restriction") is None]
        restricted = [r for r in mine if r.get("restriction") is not None]
        certified = [(r["backend"], r["objective"]) for r in full if r["certified"]]
        objectives = [(r["backend"], r["objective"]) for r in mine if math.isfinite(r["objective"])]
        if inst.best_known is not None:
            objectives.append(("manifest best known", inst.best_known))
            if inst.proved:
                certified.append((f"manifest (proved by {inst.proved_by})", inst.best_known))
        for i, (a, va) in enumerate(certified):
            for b, vb in certified[i + 1 :]:
                if abs(va - vb) > tol:
                    problems.append(
                        f"{name}: certified objectives disagree: {a} = {va!r} vs {b} = {vb!r} (tolerance {tol:.3g})"
                    )
        for r in full:
            for b, value in objectives:
                if math.isfinite(r["bound"]) and r["bound"] > value + tol:
                    problems.append(
                        f"{name}: {r['backend']} proved a lower bound {r['bound']!r} above the objective {value!r} of a "
                        f"hypothesis found by {b} (tolerance {tol:.3g}): a false proof"
                    )
        best_found = min((v for _, v in objectives), default=math.inf)
        for r in restricted:
            if not r["meets_bound"]:
                continue
            wrong = [f"{b} = {v!r}" for b, v in certified if abs(r["objective"] - v) > tol]
            if r["objective"] > best_found + tol:
                wrong.append(f"a better hypothesis exists (objective {best_found!r})")
            if wrong:
                r["certificate_valid"] = False
                warnings.append(
                    f"{name}: {r['backend']} certified {r['objective']!r} over its restricted class, but the true optimum "
                    f"differs ({'; '.join(wrong)}); counted as not solved"
                )
    return problems, warnings


def performance_profile(rows: list[dict[str, Any]]) -> tuple[list[str], np.ndarray]:
    """(backends, ratios[instance, backend]): time / fastest certified time; inf when uncertified."""
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    names = list(dict.fromkeys(r["instance"] for r in rows))
    t = np.full((len(names), len(backends)), np.inf)
    for r in rows:
        if solved(r):
            t[names.index(r["instance"]), backends.index(r["backend"])] = max(float(r["seconds"]), 1e-3)
    best = t.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        ratios = np.where(np.isfinite(best), t / best, np.inf)
    return backends, ratios


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
    ran = f"Each (instance, backend) cell ran as one task with one solver thread on {execution or 'this process'}; " + (
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
    if profile_png:
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
    """rows.csv, rows.json, summary.json, summary.md and profile.png in ``out`` (``execution``: where the
    cells ran, as :meth:`oraclepriv.execution.Execution.describe` words it), and for the learners' suite
    cost-of-noise.md."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in OUTPUTS}
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
    }
    write_json(paths["summary.json"], meta)
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
            profile_png=paths["profile.png"].name,
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
