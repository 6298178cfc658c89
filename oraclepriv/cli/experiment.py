"""``oraclepriv experiment``: the experiments of :mod:`oraclepriv.experiments` (figures, tables, READMEs).

One rule for every experiment: ``--out FOLDER`` is required, so no run writes where the user did not say (the
committed figures are regenerated with an explicit ``--out results/figures/...``). The folder is checked before any
work starts and holds a ``PARTIAL`` file until the run has written everything (an interrupted run leaves it)."""

import contextlib
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from oraclepriv.cli.common import (
    Jobs,
    ParallelBackend,
    Quiet,
    Resume,
    Scheduler,
    Seed,
    check_output_dir,
    check_parallel_options,
    check_seed,
    fail,
    output_path,
    parallel,
    partial_outputs,
    progress_bar,
)

app = typer.Typer(
    no_args_is_help=True,
    help="Experiments that produce the figures in results/. Each needs --out FOLDER (the committed figures: "
    "--out results/figures/NAME); the folder holds a PARTIAL file until the run has finished.",
)

Quick = Annotated[bool, typer.Option("--quick", help="Tiny sizes (a smoke run).")]


def _out(folder: str) -> object:
    """The required ``--out`` of an experiment whose committed figures live in results/figures/``folder``."""
    return typer.Option(
        "--out",
        help=f"Output folder (required; created if missing). The committed figures are regenerated with "
        f"--out results/figures/{folder}.",
        show_default=False,
        parser=output_path,
    )


PpmOut = Annotated[Path, _out("ppm")]
RrspmOut = Annotated[Path, _out("rrspm")]


def _command_line(name: str, out: Path, quick: bool, seed: int, extra: str = "") -> str:
    return (
        f"oraclepriv experiment {name} --out {shlex.quote(str(out))} --seed {seed}"
        + (" --quick" if quick else "")
        + extra
    )


def _resume_note(out: Path) -> str:
    return f"Rerun the same command to resume: the cells finished so far are kept in {out / 'cells.jsonl'}."


def _check(out: Path, seed: int) -> None:
    """The checks of every experiment's own options, before any work starts."""
    check_output_dir(out, "--out")
    check_seed(seed)


@contextlib.contextmanager
def _run(
    name: str, out: Path, quick: bool, seed: int, extra: str = "", resume: str = "Rerun the command to start again."
) -> Iterator[None]:
    """The block with ``out`` marked partial until it ends; a ValueError of the experiment is a one-line error."""
    command = _command_line(name, out, quick, seed, extra)
    with partial_outputs(out, command, resume=resume):
        try:
            yield
        except ValueError as exc:
            fail(str(exc))
    typer.echo(f"wrote {out}")


@app.command("ppm-curves")
def experiment_ppm_curves(
    out: PpmOut,
    quick: Quick = False,
    seed: Seed = 0,
    quiet: Quiet = False,
) -> None:
    """Learning curves of the PPM learner (d in {1,2}, eps in {0.1,1,inf}, realizable and 10% noise) with slopes.

    Runs in this process (one random stream feeds every sample in turn)."""
    from oraclepriv.experiments.ppm_curves import run_ppm_curves

    _check(out, seed)
    kwargs: dict[str, Any] = (
        {"sizes": {1: [50, 100], 2: [30, 60]}, "repetitions": 2, "n_test": 2000, "draws": 2} if quick else {}
    )
    with _run("ppm-curves", out, quick, seed), progress_bar(quiet) as bar:
        result = run_ppm_curves(out, random_state=seed, progress=bar.phase("samples"), **kwargs)
        slopes = result.get("slopes")
        if slopes is not None:
            typer.echo(slopes.to_string(index=False))


@app.command("margin-utility")
def experiment_margin_utility(
    out: Annotated[Path, _out("margin-utility")],
    quick: Quick = False,
    seed: Seed = 0,
    quiet: Quiet = False,
) -> None:
    """The shape of the margin bounds of Bassily, Mohri, Suresh (Theorem 3.2, Lemma 3.1): MarginERM (Algorithm 2,
    the paper's accounting) on a synthetic margin distribution (d = 20, rho = 0.25), test error and excess hinge loss
    against m and epsilon, the measured log-log slopes beside the predicted ones.

    Runs in this process (one random stream feeds every fit in turn)."""
    from oraclepriv.experiments.margin_utility import run_margin_utility

    _check(out, seed)
    with _run("margin-utility", out, quick, seed), progress_bar(quiet) as bar:
        result = run_margin_utility(out, quick=quick, random_state=seed, progress=bar.phase("fits"))
        typer.echo(result["slopes"].to_string(index=False))


@app.command("rrspm-tradeoff")
def experiment_rrspm_tradeoff(
    out: RrspmOut,
    quick: Quick = False,
    seed: Seed = 0,
    jobs: Jobs = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """RRSPM (Block et al., Alg. 4): the m-n trade-off (U-shape), sigma-smooth shift, and a non-smooth control."""
    from oraclepriv.experiments.rrspm_tradeoff import run_rrspm_experiments

    _check(out, seed)
    check_parallel_options(jobs, parallel_backend, scheduler)
    with (
        parallel(jobs, parallel_backend, scheduler) as environment,
        _run("rrspm-tradeoff", out, quick, seed, resume=_resume_note(out)),
        progress_bar(quiet) as bar,
    ):
        run_rrspm_experiments(
            out, quick=quick, random_state=seed, n_jobs=environment.n_jobs, progress=bar.phase("repetitions")
        )


def _comparison_command(name: str, module: str, function: str, folder: str, doc: str) -> None:
    """Register ``oraclepriv experiment NAME``: a learner comparison run by ``module.function`` (lazily imported)."""

    def command(
        out: Annotated[Path, _out(folder)],
        quick: Quick = False,
        seed: Seed = 0,
        jobs: Jobs = None,
        parallel_backend: ParallelBackend = None,
        scheduler: Scheduler = None,
        quiet: Quiet = False,
    ) -> None:
        import importlib

        run = getattr(importlib.import_module(module), function)
        _run_comparison(name, run, out, quick, seed, (jobs, parallel_backend, scheduler), quiet)

    command.__doc__ = doc
    app.command(name)(command)


_comparison_command(
    "robust-tradeoff",
    "oraclepriv.experiments.robust_tradeoff",
    "run_robust_tradeoff",
    "robust",
    "SubsampleAggregate (private for any oracle) vs RRSPM vs ERM: excess error vs n, and vs solver failure rate.",
)
_comparison_command(
    "cover-baseline",
    "oraclepriv.experiments.cover_baseline",
    "run_cover_baseline",
    "cover",
    "PublicCoverEM (exponential mechanism over the public cover, no oracle call) vs RRSPM vs ERM: excess error vs n.",
)


def _run_comparison(
    name: str,
    run: Callable,
    out: Path,
    quick: bool,
    seed: int,
    where: tuple[int | None, str | None, str | None],
    quiet: bool,
) -> None:
    """A learner comparison: run it where ``where`` (--jobs, --parallel-backend, --scheduler) says, print
    its slopes and ratios."""
    _check(out, seed)
    check_parallel_options(*where)
    with (
        parallel(*where) as environment,
        _run(name, out, quick, seed, resume=_resume_note(out)),
        progress_bar(quiet) as bar,
    ):
        result = run(out, quick=quick, random_state=seed, n_jobs=environment.n_jobs, progress=bar.phase("cells"))
        typer.echo(result["slopes"].to_string(index=False))
        typer.echo(result["ratio"].to_string(index=False))


Scale = Annotated[
    bool,
    typer.Option(
        "--scale",
        help="The study at scale: halfspaces on the default backend, n up to 5000 in d <= 5 and up to 1000 in "
        "d <= 10 (committed in results/figures/oracle-cost-scale). Not with --quick.",
    ),
]


@app.command("oracle-cost")
def experiment_oracle_cost(
    out: Annotated[Path, _out("oracle-cost")],
    quick: Quick = False,
    scale: Scale = False,
    seed: Seed = 0,
    resume: Resume = True,
    jobs: Jobs = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """What oracle efficiency buys with real solvers: every private learner's error against wall-clock, each oracle
    call timed beside its noise-free twin (the cost of noise), and the RRSPM / PublicCoverEM crossover in d."""
    from oraclepriv.experiments.oracle_cost import run_oracle_cost

    _check(out, seed)
    if scale and quick:
        fail("--scale runs the study at scale and --quick a smoke run: give one of them")
    check_parallel_options(jobs, parallel_backend, scheduler)
    with (
        parallel(jobs, parallel_backend, scheduler) as environment,
        _run(
            "oracle-cost",
            out,
            quick,
            seed,
            (" --scale" if scale else "") + ("" if resume else " --no-resume"),
            resume=_resume_note(out),
        ),
        progress_bar(quiet) as bar,
    ):
        run_oracle_cost(
            out,
            quick=quick,
            scale=scale,
            random_state=seed,
            n_jobs=environment.n_jobs,
            progress=bar.phase("cells"),
            resume=resume,
        )


ReportOnly = Annotated[
    bool,
    typer.Option(
        "--report-only",
        help="Compute no cell: regenerate the tables, figures and README from the cells stored in --out "
        "(cells.jsonl.gz; every planned cell must be there).",
    ),
]


@app.command("real-data")
def experiment_real_data(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Output folder (required; created if missing). The committed comparison is regenerated with "
            "--out results/real-data.",
            show_default=False,
            parser=output_path,
        ),
    ],
    quick: Quick = False,
    seed: Seed = 0,
    resume: Resume = True,
    report_only: ReportOnly = False,
    jobs: Jobs = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """Which private halfspace learner? Every private halfspace learner on scikit-learn's bundled binary tasks
    (breast cancer, digit pairs, wine, iris) at eps 0.25-4 against the majority class and non-private baselines:
    test accuracy with intervals over seeds, seconds per fit, a figure per task, the best private learner named."""
    from oraclepriv.experiments.real_data import run_real_data

    _check(out, seed)
    check_parallel_options(jobs, parallel_backend, scheduler)
    extra = ("" if resume else " --no-resume") + (" --report-only" if report_only else "")
    with (
        parallel(jobs, parallel_backend, scheduler) as environment,
        _run("real-data", out, quick, seed, extra, resume=_resume_note(out)),
        progress_bar(quiet) as bar,
    ):
        result = run_real_data(
            out,
            quick=quick,
            jobs=environment.n_jobs,
            random_state=seed,
            progress=bar.phase("cells"),
            resume=resume,
            report_only=report_only,
        )
        best = result["best"]
        if not best.empty:
            typer.echo(
                best[["task", "epsilon", "best", "accuracy", "low", "high", "runner_up", "lead"]].to_string(index=False)
            )
