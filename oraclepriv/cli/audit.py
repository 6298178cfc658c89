"""``oraclepriv audit``: privacy audits on neighbouring datasets, each with the negative controls it must catch
(:mod:`oraclepriv.audit`; docs/theory/audits.md)."""

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from oraclepriv.cli.common import (
    Jobs,
    JsonOut,
    MarkdownOut,
    ParallelBackend,
    Quiet,
    Scheduler,
    Seed,
    check_at_least,
    check_epsilon,
    check_out_and_report,
    check_parallel_options,
    check_seed,
    echo,
    fail,
    parallel,
    parallel_note,
    progress_bar,
)

app = typer.Typer(no_args_is_help=True, help="Privacy audits on neighbouring datasets (with negative controls).")

DEFAULT_RUNS = 4000
DEFAULT_DRAWS = 1_000_000
#: the most runs and draws per neighbouring dataset (250 and 100 times the defaults): the samples are held
#: in memory, and 10^12 runs asked numpy for 14.6 TiB
MAX_RUNS = 1_000_000
MAX_DRAWS = 100_000_000

Runs = Annotated[
    int, typer.Option("--runs", help="Runs of the whole learner per neighbouring dataset (at most 1,000,000).")
]
Epsilon = Annotated[float, typer.Option("--epsilon")]
Draws = Annotated[
    int,
    typer.Option(
        "--draws",
        help="Runs of the reduced problem per neighbouring dataset (no oracle call per run; at most 100,000,000).",
    ),
]

_SAMPLED_NOTE = (
    "Claimed epsilon = {epsilon:g}. The audited outcome is the learner's whole release. eps_lower: 95% "
    "Clopper-Pearson lower confidence bound on the privacy loss (Bonferroni over events), never below 0: 0 means "
    "no evidence of any loss at this run count; an audit fails when eps_lower > epsilon. sampler: the whole "
    "learner per run, or the reduced problem (exact oracle costs once per dataset, bulk noise, the learner's own "
    "release step). detects: the loss that run count detects on the tight construction (the Clopper-Pearson bound "
    "at the expected counts). Controls are deliberately broken learners."
)
_SAMPLED_COLUMNS = [
    "scenario",
    "learner",
    "delta",
    "sampler",
    "n_runs",
    "eps_lower",
    "eps_point",
    "detects",
    "passed",
    "expected",
    "verdict",
]


@app.command("rrspm")
def audit_rrspm(
    runs: Runs = DEFAULT_RUNS,
    epsilon: Epsilon = 1.0,
    seed: Seed = 0,
    out: JsonOut = None,
    report: MarkdownOut = None,
    jobs: Jobs = None,
    draws: Draws = DEFAULT_DRAWS,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """RRSPM on every audit scenario, and the negative controls each scenario must catch.

    The audited outcome is the whole release. The whole learner runs --runs times per neighbour; the
    tight constructions (thresholds, stumps, halfspaces through scip-bc) are also sampled --draws
    times through the reduced problem, which detects a loss of 1.2 eps. Each verdict is a 95%
    confidence statement (Clopper-Pearson, Bonferroni over events); a row's "detects" is the loss its
    run count detects on the tight construction. There the correct learner sits exactly at its bound,
    so a small fraction of seeds flags it: a false alarm is possible by design, a passing control is not.
    """
    from oraclepriv.audit.suite import rrspm_audit_suite

    _run_sampled_audit(
        "rrspm",
        "RRSPM privacy audit",
        rrspm_audit_suite,
        runs,
        epsilon,
        seed,
        out,
        report,
        (jobs, parallel_backend, scheduler),
        quiet,
        draws,
    )


@app.command("subsample")
def audit_subsample(
    runs: Runs = DEFAULT_RUNS,
    epsilon: Epsilon = 1.0,
    seed: Seed = 0,
    out: JsonOut = None,
    report: MarkdownOut = None,
    jobs: Jobs = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """SubsampleAggregate (private for any oracle) with an exact and a targeting solver, and its negative controls."""
    from oraclepriv.audit.suite import subsample_audit_suite

    _run_sampled_audit(
        "subsample",
        "SubsampleAggregate privacy audit",
        subsample_audit_suite,
        runs,
        epsilon,
        seed,
        out,
        report,
        (jobs, parallel_backend, scheduler),
        quiet,
        extra_note="Scenario teacher-flip: exact log-ratio of the correct learner ln((1-p)/p) = 0.83 with p = e^-0.5/2. "
        "The targeting solver fails (honestly uncertified) on every instance holding D's differing record.",
    )


@app.command("public-cover")
def audit_public_cover(
    epsilon: Epsilon = 1.0,
    seed: Seed = 0,
    others: Annotated[
        int,
        typer.Option(
            "--others",
            help="Public points (x2 labels) and private records tried at every position, besides the label flip.",
        ),
    ] = 4,
    out: JsonOut = None,
    report: MarkdownOut = None,
    quiet: Quiet = False,
) -> None:
    """PublicCoverEM: EXACT audit (output laws computed, not sampled) over neighbours at every position,
    and the negative controls it must catch."""
    from oraclepriv.audit.suite import max_useful_others, public_cover_audit_suite

    epsilon = check_epsilon(epsilon)
    check_seed(seed)
    check_out_and_report(out, report)
    if others < 1:  # label flips alone never move a point: a cover leaking private x's would go unseen
        fail(f"--others must be >= 1 (neighbours that replace a record's features); got {others}")
    if others > max_useful_others():
        fail(
            f"--others must be at most {max_useful_others()} (the audit's largest dataset has that many records; "
            f"every one of them is tried then); got {others}"
        )

    def show(row: dict) -> None:
        echo(
            f"{row['scenario']:<13} {row['learner']:<50} neighbours={row['n_neighbours']:<4} "
            f"eps_hat={row['epsilon_hat']:.4f} passed={str(row['passed']):<5} expected={row['expected']:<4} {row['verdict']}"
        )

    with progress_bar(quiet) as bar:
        rows = public_cover_audit_suite(
            epsilon=epsilon, seed=seed, on_row=show, progress=bar.phase("exact audits"), n_others=others
        )
    command = f"oraclepriv audit public-cover --epsilon {epsilon:g} --seed {seed} --others {others} --report {report}"
    columns = [
        "scenario",
        "learner",
        "n_private",
        "n_public",
        "n_neighbours",
        "epsilon_hat",
        "worst_pair",
        "passed",
        "expected",
        "verdict",
    ]
    note = (
        f"Claimed epsilon = {epsilon:g}. Exact audit: eps_hat is the largest |log p_D(c) - log p_D'(c)| over every "
        "output c and every audited neighbour D' of D (each private position replaced by its label flip, "
        f"{others} public points with either label and {others} other private records, or all of them where the "
        "dataset has fewer), computed from the "
        "mechanism's explicit output law; no sampling, so no confidence level. A learner fails when eps_hat > "
        "epsilon; inf means an output possible under one dataset only. Controls are deliberately broken learners. "
        "The label-DP row (cover of the private features, Bassily, Mohri, Suresh, Alg. 5) is audited on label flips "
        "only, its neighbouring notion; the row after it shows that it is not private for replacing a whole record."
    )
    _finish(rows, out, report, "PublicCoverEM exact privacy audit", command, columns, note)


@app.command("perturb")
def audit_perturb(
    samples: Annotated[
        int,
        typer.Option("--samples", help="Draws of the released vector under each centre (at most 100,000,000)."),
    ] = 200_000,
    epsilon: Epsilon = 1.0,
    seed: Seed = 0,
    out: JsonOut = None,
    report: MarkdownOut = None,
    quiet: Quiet = False,
) -> None:
    """Perturbation and Regularization (Block et al., Algorithms 2 and 3): stability + mechanism audit, and the
    controls that break their stability claims.

    The centres on both neighbours are computed by the learner's own code and must lie within the radius its
    noise was calibrated for; --samples draws of the released vector under each centre bound the loss from below.
    """
    from oraclepriv.audit.suite import perturb_audit_suite

    epsilon = check_epsilon(epsilon)
    check_seed(seed)
    check_at_least(samples, 1, "--samples", MAX_DRAWS)
    check_out_and_report(out, report)

    def show(row: dict) -> None:
        echo(
            f"{row['scenario']:<18} {row['learner']:<50} distance={row['distance_m']:.4g} rho={row['rho']:.4g} "
            f"stable={str(row['stability_ok']):<5} eps_lower={row['eps_lower']:.3f} passed={str(row['passed']):<5} "
            f"expected={row['expected']:<4} {row['verdict']}"
        )

    with progress_bar(quiet) as bar:
        rows = perturb_audit_suite(
            n_samples=samples, epsilon=epsilon, seed=seed, on_row=show, progress=bar.phase("audit cases")
        )
    command = f"oraclepriv audit perturb --samples {samples} --epsilon {epsilon:g} --seed {seed} --report {report}"
    columns = [
        "scenario",
        "learner",
        "delta",
        "sampler",
        "n_runs",
        "distance_m",
        "rho",
        "stability_ok",
        "eps_lower",
        "eps_point",
        "passed",
        "expected",
        "verdict",
    ]
    note = (
        f"Claimed epsilon = {epsilon:g}. Stability: distance_m is the distance between the centres the learner "
        "computes on the two neighbours, rho the radius its noise is calibrated for; a learner fails when "
        "distance_m > rho or when eps_lower (95% Clopper-Pearson lower bound on the loss of the released vector, "
        "from n_runs draws under each centre) exceeds epsilon. Controls are deliberately broken learners."
    )
    _finish(rows, out, report, "Perturbation and Regularization privacy audit", command, columns, note)


def _run_sampled_audit(
    name: str,
    title: str,
    suite: Callable,
    runs: int,
    epsilon: float,
    seed: int,
    out: Path | None,
    report: Path | None,
    where: tuple[int | None, str | None, str | None],
    quiet: bool,
    draws: int | None = None,
    extra_note: str = "",
) -> None:
    """Check the options, run ``suite`` where ``where`` (--jobs, --parallel-backend, --scheduler) says,
    printing each row, write the files, exit 1 on an unexpected verdict."""
    epsilon = check_epsilon(epsilon)
    check_seed(seed)
    check_parallel_options(*where)
    check_at_least(runs, 1, "--runs", MAX_RUNS)
    if draws is not None:
        check_at_least(draws, 1, "--draws", MAX_DRAWS)
    check_out_and_report(out, report)

    def show(row: dict) -> None:
        detects = row.get("detects")
        echo(
            f"{row['scenario']:<18} {row['learner']:<50} runs={row['n_runs']:<8} eps_lower={row['eps_lower']:.3f} "
            f"eps_point={row['eps_point']:.3f} "
            + (f"detects={detects:.3f} " if detects is not None else "")
            + f"passed={str(row['passed']):<5} expected={row['expected']:<4} {row['verdict']}"
        )

    extra = {} if draws is None else {"draws": draws}
    with parallel(*where) as environment, progress_bar(quiet) as bar:
        rows = suite(
            n_runs=runs,
            epsilon=epsilon,
            seed=seed,
            on_row=show,
            progress=bar.phase("audit cases"),
            n_jobs=environment.n_jobs,
            **extra,
        )
    command = (
        f"oraclepriv audit {name} --runs {runs}"
        + (f" --draws {draws}" if draws is not None else "")
        + f" --epsilon {epsilon:g} --seed {seed}{parallel_note(environment)} --report {report}"
    )
    note = _SAMPLED_NOTE.format(epsilon=epsilon) + (" " + extra_note if extra_note else "")
    _finish(rows, out, report, title, command, _SAMPLED_COLUMNS, note)


def _finish(
    rows: list[dict], out: Path | None, report: Path | None, title: str, command: str, columns: list[str], note: str
) -> None:
    """Write the rows (JSON) and the report (Markdown) where asked; exit 1 if a verdict is not "ok"."""
    from oraclepriv.bench.report import markdown_table, write_json

    if out is not None:
        write_json(out, rows)
    if report is not None:
        report.write_text(markdown_table(title, command, rows, columns, note), encoding="utf-8")
    unexpected = [row for row in rows if row["verdict"] != "ok"]
    if unexpected:
        typer.echo(f"UNEXPECTED: {len(unexpected)} verdict(s) differ from the expected ones", err=True)
        hint = _power_hint(unexpected)
        if hint:
            typer.echo(hint, err=True)
        raise typer.Exit(code=1)


def _power_hint(unexpected: list[dict]) -> str:
    """Why a negative control can pass: its run count has too little power (empty for the exact audit)."""
    uncaught = [row for row in unexpected if row["expected"] == "fail" and row.get("n_runs")]
    if not uncaught:
        return ""
    details = "; ".join(
        f"{row['learner']} ({row['scenario']}, {row['n_runs']} runs"
        + (f": detects a loss >= {row['detects']:.3g} only" if row.get("detects") is not None else "")
        + ")"
        for row in uncaught
    )
    return (
        f"hint: {len(uncaught)} negative control(s) went undetected, most likely because the run count is too "
        f"small for the audit to have the power to catch them (defaults: --runs {DEFAULT_RUNS}"
        f", --draws {DEFAULT_DRAWS} for rrspm's reduced sampler): {details}"
    )
