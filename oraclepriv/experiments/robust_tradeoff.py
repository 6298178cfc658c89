"""What oracle-independent privacy costs: SubsampleAggregate vs RRSPM vs non-private ERM.

RRSPM (Block, Bun, Desai, Shetty, Wu, "Oracle-Efficient Differentially Private Learning with Public Data",
Algorithm 4) is eps-DP only if its private oracle call is exact; SubsampleAggregate
(:mod:`oraclepriv.learners.subsample`; docs/theory/robustification.md, "Subsample-and-aggregate") is
eps-DP for any oracle, because each teacher sees one block of n/k records. This experiment measures the accuracy
price of that robustness, and how SubsampleAggregate degrades when its solver fails.

1. **Excess error vs n** at eps = 1 (both learners pure eps-DP, Laplace noise), thresholds and stumps
   (the scenarios of :mod:`oraclepriv.experiments.scenarios`: public mu = private nu_x = U[0,1]^k,
   target 1(x_0 >= 0.3), 10% label noise; errors are exact population quantities). Each learner is
   reported at its best configuration on the grid (RRSPM: m public points; SubsampleAggregate:
   k teachers and m public points), chosen by the mean over repetitions -- optimistic for both, in
   the same way; the choice is made on the even repetitions and the error reported on the odd ones (no
   selection bias from the grids' different sizes). The non-private exact ERM on the same samples is
   the baseline.
2. **Failing solver.** SubsampleAggregate at one (n, k, m) with a solver that fails (answers the
   constant 0, honestly uncertified) on a fraction q of its calls, decided by a hash of the call's
   data: excess error vs q with ``teacher_failure="abstain"`` and ``"keep"``. Privacy is the same for
   every q. (The learner's last call, on public data only, falls back to an exact solve when it fails.) (RRSPM with such a solver must raise, or fall back to an exact solve: its accuracy is
   then unchanged, its running time is not bounded.)
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from oraclepriv.execution import Progress
from oraclepriv.experiments.cells import CELLS, finish_cells, prepare_run, run_cell_groups
from oraclepriv.experiments.scenarios import RRSPM_M_GRID, excess, scenario
from oraclepriv.experiments.stats import fit_slope, select_even_report_odd
from oraclepriv.hypotheses import Stump, Threshold
from oraclepriv.learners.rrspm import RRSPM
from oraclepriv.learners.subsample import SubsampleAggregate
from oraclepriv.oracle import make_oracle
from oraclepriv.public_data import PublicData
from oraclepriv.release import reading_diagnostics
from oraclepriv.solvers.base import Backend, BackendAnswer, ReducedProblem

__all__ = ["run_robust_tradeoff", "FlakyBackend", "FULL_CONFIG", "QUICK_CONFIG"]

FULL_CONFIG: dict[str, Any] = {
    "epsilon": 1.0,
    "label_noise": 0.1,
    "scenarios": {"threshold": (1000, 3000, 10_000, 30_000, 100_000), "stump": (1000, 3000, 10_000, 30_000)},
    "repetitions": 16,
    "rrspm_ms": RRSPM_M_GRID,
    "teachers": (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096),
    "sa_ms": (2, 4, 8, 16, 32, 64, 128, 256),
    "failure": {
        "scenario": "threshold",
        "n": 30_000,
        "teachers": 512,
        "m": 32,
        "rates": (0.0, 0.1, 0.2, 0.3, 0.5),
        "repetitions": 24,
    },
}

QUICK_CONFIG: dict[str, Any] = {
    **FULL_CONFIG,
    "scenarios": {"threshold": (1000, 4000), "stump": (1000,)},
    "repetitions": 2,
    "rrspm_ms": (4, 16, 64),
    "teachers": (16, 64),
    "sa_ms": (4, 16),
    "failure": {"scenario": "threshold", "n": 2000, "teachers": 32, "m": 8, "rates": (0.0, 0.5), "repetitions": 2},
}


class FlakyBackend(Backend):
    """Exact sweep, except on a fraction ``rate`` of the instances (chosen by a hash of X, y, w): there it
    answers the constant 0 with no bound (honestly uncertified). A stand-in for a time-limited heuristic."""

    name = "flaky"
    classes = frozenset({"threshold", "stump"})
    options = frozenset({"rate"})
    rate = 0.0
    certificate = "exact (sweep) except on a hash-chosen fraction of instances (no bound there)"

    def solve(self, problem: ReducedProblem) -> BackendAnswer:
        from oraclepriv.solvers.combinatorial.sweep import SweepBackend

        digest = hashlib.blake2b(
            problem.X.tobytes() + problem.y.tobytes() + problem.w.tobytes(), digest_size=8
        ).digest()
        if int.from_bytes(digest, "little") / 2.0**64 >= float(self.config.get("rate", self.rate)):
            return SweepBackend().solve(problem)
        constant = Threshold(math.inf) if problem.hypothesis_class == "threshold" else Stump(0, math.inf, 1)
        return BackendAnswer(
            constant, bound=-math.inf, status="time_limit", nodes=0, details={"method": "flaky failure"}
        )


def _main_cell(cfg: dict[str, Any], name: str, n: int, rep: int, seed: np.random.SeedSequence) -> list[dict[str, Any]]:
    """One (class, n, repetition): one private and one public sample, the ERM baseline, every RRSPM and
    every SubsampleAggregate configuration. Its own SeedSequence, so cells can run in any order or process."""
    rng = np.random.default_rng(seed)
    eps, p = cfg["epsilon"], cfg["label_noise"]
    scen = scenario(name)
    m_max = max(max(cfg["rrspm_ms"]), max(cfg["sa_ms"]))
    X, y = scen.sample_private(int(n), p, rng)
    Z = scen.sample_public(m_max, rng)
    base = {"hypothesis": name, "n": int(n), "rep": rep}
    erm = make_oracle(name).solve(X, y, caller="robust_tradeoff", step="erm-baseline")
    rows = [{**base, "method": "erm", "k": 0, "m": 0, "excess": excess(scen, erm.hypothesis, p)}]
    for m in cfg["rrspm_ms"]:
        clf = RRSPM(epsilon=eps, hypothesis_class=name, m=m, random_state=int(rng.integers(2**63))).fit(
            X, y, X_public=PublicData(Z)
        )
        rows.append({**base, "method": "rrspm", "k": 0, "m": m, "excess": excess(scen, clf.hypothesis_, p)})
    for k in cfg["teachers"]:
        if k > n // 2:
            continue
        for m in cfg["sa_ms"]:
            clf = SubsampleAggregate(
                n_teachers=k,
                noise="laplace",
                delta=0.0,
                epsilon=eps,
                hypothesis_class=name,
                random_state=int(rng.integers(2**63)),
            ).fit(X, y, X_public=PublicData(Z[:m]))
            rows.append({**base, "method": "subsample", "k": k, "m": m, "excess": excess(scen, clf.hypothesis_, p)})
    return rows


def _failure_cell(cfg: dict[str, Any], rate: float, rep: int, seed: np.random.SeedSequence) -> list[dict[str, Any]]:
    """One (failure rate, repetition) of the failing-solver panel, both ``teacher_failure`` modes."""
    from oraclepriv.backends import registered_backend

    rng = np.random.default_rng(seed)
    f, p = cfg["failure"], cfg["label_noise"]
    scen = scenario(f["scenario"])
    X, y = scen.sample_private(int(f["n"]), p, rng)
    Z = scen.sample_public(int(f["m"]), rng)
    rows = []
    flaky = type("ConfiguredFlaky", (FlakyBackend,), {"rate": float(rate)})
    with registered_backend("flaky", flaky):
        for mode in ("abstain", "keep"):
            clf = SubsampleAggregate(
                n_teachers=f["teachers"],
                noise="laplace",
                delta=0.0,
                epsilon=cfg["epsilon"],
                hypothesis_class=f["scenario"],
                backend="flaky",
                teacher_failure=mode,
                random_state=int(rng.integers(2**63)),
            ).fit(X, y, X_public=PublicData(Z))
            with reading_diagnostics():  # a research measurement, not a release
                failed = len(clf.diagnostics_["uncertified_teachers"])
            rows.append(
                {
                    "rate": float(rate),
                    "rep": rep,
                    "teacher_failure": mode,
                    "failed_teachers": failed,
                    "excess": excess(scen, clf.hypothesis_, p),
                }
            )
    return rows


def run_robust_tradeoff(
    output_dir: str | Path,
    *,
    quick: bool = False,
    random_state: int = 0,
    n_jobs: int = 1,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Run both experiments; write ``runs.csv``, ``best.csv``, ``failure.csv``, ``robust.png``,
    ``summary.json`` and a generated ``README.md`` into ``output_dir``. ``n_jobs`` workers
    (:mod:`oraclepriv.execution`); every (class, n, repetition) cell has its own seed, so the results do
    not depend on it. ``progress(cells done, cells)`` over the cells of both experiments."""
    import pandas as pd

    cfg, out, n_jobs = prepare_run(output_dir, quick, random_state, n_jobs, FULL_CONFIG, QUICK_CONFIG)
    main_seed, failure_seed = np.random.SeedSequence(int(random_state)).spawn(2)
    main_tasks = [
        (cfg, name, int(n), rep)
        for name, ns in cfg["scenarios"].items()
        for n in ns
        for rep in range(cfg["repetitions"])
    ]
    f = cfg["failure"]
    failure_tasks = [(cfg, float(rate), rep) for rate in f["rates"] for rep in range(f["repetitions"])]
    main_seeded = [(*t, s) for t, s in zip(main_tasks, main_seed.spawn(len(main_tasks)))]
    failure_seeded = [(*t, s) for t, s in zip(failure_tasks, failure_seed.spawn(len(failure_tasks)))]
    start = time.perf_counter()
    main_rows, failure_rows = run_cell_groups(
        [(_main_cell, main_seeded), (_failure_cell, failure_seeded)], n_jobs, progress, cache=out / CELLS
    )
    runs, failure = pd.DataFrame(main_rows), pd.DataFrame(failure_rows)
    seconds = time.perf_counter() - start

    # the configuration is chosen on the even repetitions and reported on the odd ones: picking the best of
    # SubsampleAggregate's many (k, m) cells and of RRSPM's m cells on the same runs that are reported
    # would favour the larger grid (selection bias)
    cells = ["hypothesis", "n", "method", "k", "m"]
    best = select_even_report_odd(runs, cells, ["hypothesis", "n", "method"]).sort_values(["hypothesis", "method", "n"])
    slopes = []
    for (hyp, method), g in best.groupby(["hypothesis", "method"]):
        slopes.append(
            {
                "hypothesis": hyp,
                "method": method,
                "slope_vs_n": fit_slope(g.n.to_numpy(), g.mean_excess.to_numpy()),
                "points": len(g),
            }
        )
    slopes = pd.DataFrame(slopes)
    ratio = []
    for (hyp, n), g in best.groupby(["hypothesis", "n"]):
        e = dict(zip(g.method, g.mean_excess))
        ratio.append(
            {
                "hypothesis": hyp,
                "n": n,
                "subsample_over_rrspm": e.get("subsample", math.nan) / e["rrspm"] if e.get("rrspm") else math.nan,
            }
        )
    ratio = pd.DataFrame(ratio)
    fail = failure.groupby(["teacher_failure", "rate"], as_index=False).agg(
        mean_excess=("excess", "mean"), sem_excess=("excess", "sem"), mean_failed=("failed_teachers", "mean")
    )

    paths = {
        k: out / v
        for k, v in [
            ("runs", "runs.csv"),
            ("best", "best.csv"),
            ("failure", "failure.csv"),
            ("png", "robust.png"),
            ("summary", "summary.json"),
            ("readme", "README.md"),
        ]
    }
    runs.to_csv(paths["runs"], index=False, float_format="%.6g")
    best.merge(ratio, on=["hypothesis", "n"], how="left").to_csv(paths["best"], index=False, float_format="%.6g")
    fail.to_csv(paths["failure"], index=False, float_format="%.6g")
    _plot(best, fail, cfg, paths["png"])
    summary = {
        "config": {k: v for k, v in cfg.items()},
        "seconds": seconds,
        "n_jobs": n_jobs,
        "slopes": slopes.to_dict("records"),
        "ratio": ratio.to_dict("records"),
        "failure": fail.to_dict("records"),
        "random_state": int(random_state),
        "quick": bool(quick),
    }
    paths["summary"].write_text(json.dumps(summary, indent=2, default=float) + "\n", encoding="utf-8")
    paths["readme"].write_text(
        _readme(best, slopes, ratio, fail, cfg, quick, random_state, seconds, n_jobs, out), encoding="utf-8"
    )
    finish_cells(out)
    return {"runs": runs, "best": best, "slopes": slopes, "ratio": ratio, "failure": fail, "paths": paths}


def _plot(best, fail, cfg, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hyps = list(cfg["scenarios"])
    fig, axes = plt.subplots(1, len(hyps) + 1, figsize=(5 * (len(hyps) + 1), 4))
    labels = {
        "erm": "non-private ERM",
        "rrspm": "RRSPM (exact oracle needed)",
        "subsample": "SubsampleAggregate (any oracle)",
    }
    for ax, hyp in zip(axes, hyps):
        for method, g in best[best.hypothesis == hyp].groupby("method"):
            ax.errorbar(g.n, g.mean_excess, yerr=g.sem_excess, marker="o", capsize=3, label=labels[method])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (private records)")
        ax.set_ylabel("excess error (best configuration)")
        ax.set_title(f"{hyp}s, eps = {cfg['epsilon']:g}")
        ax.legend(fontsize=8)
    ax = axes[-1]
    f = cfg["failure"]
    for mode, g in fail.groupby("teacher_failure"):
        ax.errorbar(g.rate, g.mean_excess, yerr=g.sem_excess, marker="o", capsize=3, label=f"teacher_failure={mode}")
    ax.set_xlabel("fraction of failing oracle calls q")
    ax.set_ylabel("excess error")
    ax.set_title(
        f"SubsampleAggregate with a failing solver\n{f['scenario']}s, n={f['n']}, k={f['teachers']}, m={f['m']}",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _readme(best, slopes, ratio, fail, cfg, quick, seed, seconds, n_jobs, out: Path) -> str:
    cmd = (
        f"oraclepriv experiment robust-tradeoff --out {out.as_posix()} --seed {seed}"
        + (" --quick" if quick else "")
        + (f" --jobs {n_jobs}" if n_jobs != 1 else "")
    )
    lines = [
        "# What oracle-independent privacy costs: SubsampleAggregate vs RRSPM",
        "",
        f"Generated by `{cmd}` ({seconds:.0f} s on this machine). Module: `oraclepriv/experiments/robust_tradeoff.py`.",
        "",
        "![excess error vs n, and vs solver failure rate](robust.png)",
        "",
        f"Both learners are pure eps-DP at eps = {cfg['epsilon']:g} (Laplace noise). RRSPM's proof needs an exact private "
        "oracle call; SubsampleAggregate's holds for any oracle. Each is shown at its best grid configuration "
        f"(RRSPM m in {list(cfg['rrspm_ms'])}; SubsampleAggregate k in {list(cfg['teachers'])} with k <= n/2, "
        f"m in {list(cfg['sa_ms'])}), chosen by the mean over the even-numbered of {cfg['repetitions']} repetitions and "
        "reported (mean, sem) over the odd-numbered ones; errors are exact "
        f"population excess errors with {cfg['label_noise']:g} label noise.",
        "",
        "## Best configuration per n",
        "",
        "| class | n | method | k | m | mean excess | sem |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in best.itertuples():
        lines.append(
            f"| {r.hypothesis} | {r.n} | {r.method} | {r.k or '-'} | {r.m or '-'} | {r.mean_excess:.4g} | {r.sem_excess:.2g} |"
        )
    lines += ["", "## Slopes of log excess vs log n", "", "| class | method | slope | points |", "|---|---|---|---|"]
    for r in slopes.itertuples():
        lines.append(f"| {r.hypothesis} | {r.method} | {r.slope_vs_n:.2f} | {r.points} |")
    lines += ["", "## SubsampleAggregate / RRSPM excess-error ratio", "", "| class | n | ratio |", "|---|---|---|"]
    for r in ratio.itertuples():
        lines.append(f"| {r.hypothesis} | {r.n} | {r.subsample_over_rrspm:.2f} |")
    f = cfg["failure"]
    lines += [
        "",
        f"## Failing solver (SubsampleAggregate, {f['scenario']}s, n = {f['n']}, k = {f['teachers']}, m = {f['m']})",
        "",
        "A fraction q of oracle calls (chosen by a hash of the call's data) answers the constant 0 without a bound. "
        "The privacy guarantee is the same for every q.",
        "",
        "| teacher_failure | q | mean failed teachers | mean excess | sem |",
        "|---|---|---|---|---|",
    ]
    for r in fail.itertuples():
        lines.append(
            f"| {r.teacher_failure} | {r.rate:g} | {r.mean_failed:.1f} | {r.mean_excess:.4g} | {r.sem_excess:.2g} |"
        )
    return "\n".join(lines) + "\n"
