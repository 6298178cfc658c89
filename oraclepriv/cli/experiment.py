"""``oraclepriv experiment``: the experiments of :mod:`oraclepriv.experiments`, which write the figures,
tables and READMEs under docs/figures/."""

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from oraclepriv.cli.common import (
    Jobs,
    ParallelBackend,
    Quiet,
    Scheduler,
    Seed,
    check_parallel_options,
    check_seed,
    fail,
    parallel,
    progress_bar,
)

app = typer.Typer(no_args_is_help=True, help="Experiments that produce the figures in docs/.")

Quick = Annotated[bool, typer.Option("--quick", help="Tiny sizes (a smoke run).")]
ComparisonOut = Annotated[Path, typer.Option("--out", help="Output folder (PNG + CSVs + README).")]


@app.command("ppm-curves")
def experiment_ppm_curves(
    out: Annotated[Path, typer.Option("--out", help="Output folder (PNG + CSVs).")] = Path("docs/figures/ppm"),
    quick: Quick = False,
    seed: Seed = 0,
    quiet: Quiet = False,
) -> None:
    """Learning curves of the PPM learner (d in {1,2}, eps in {0.1,1,inf}, realizable and 10% noise) with slopes.

    Runs in this process (one random stream feeds every sample in turn)."""
    from oraclepriv.experiments.ppm_curves import run_ppm_curves

    check_seed(seed)
    kwargs = {"sizes": {1: [50, 100], 2: [30, 60]}, "repetitions": 2, "n_test": 2000, "draws": 2} if quick else {}
    with progress_bar(quiet) as bar:
        result = run_ppm_curves(out, random_state=seed, progress=bar.phase("samples"), **kwargs)
    slopes = result.get("slopes")
    if slopes is not None:
        typer.echo(slopes.to_string(index=False))
    typer.echo(f"wrote {out}")


@app.command("rrspm-tradeoff")
def experiment_rrspm_tradeoff(
    out: Annotated[Path, typer.Option("--out", help="Output folder (PNGs + CSVs + README).")] = Path(
        "docs/figures/rrspm"
    ),
    quick: Quick = False,
    seed: Seed = 0,
    jobs: Jobs = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """RRSPM (Block et al., Alg. 4): the m-n trade-off (U-shape), sigma-smooth shift, and a non-smooth control."""
    from oraclepriv.experiments.rrspm_tradeoff import run_rrspm_experiments

    check_seed(seed)
    check_parallel_options(jobs, parallel_backend, scheduler)
    with parallel(jobs, parallel_backend, scheduler) as environment, progress_bar(quiet) as bar:
        run_rrspm_experiments(
            out, quick=quick, random_state=seed, n_jobs=environment.n_jobs, progress=bar.phase("repetitions")
        )
    typer.echo(f"wrote {out}")


def _comparison_command(name: str, module: str, function: str, default_out: str, doc: str) -> None:
    """Register ``oraclepriv experiment NAME``: a learner comparison run by ``module.function`` (lazily imported)."""

    def command(
        out: ComparisonOut = Path(default_out),
        quick: Quick = False,
        seed: Seed = 0,
        jobs: Jobs = None,
        parallel_backend: ParallelBackend = None,
        scheduler: Scheduler = None,
        quiet: Quiet = False,
    ) -> None:
        import importlib

        run = getattr(importlib.import_module(module), function)
        _run_comparison(run, out, quick, seed, (jobs, parallel_backend, scheduler), quiet)

    command.__doc__ = doc
    app.command(name)(command)


_comparison_command(
    "robust-tradeoff",
    "oraclepriv.experiments.robust_tradeoff",
    "run_robust_tradeoff",
    "docs/figures/robust",
    "SubsampleAggregate (private for any oracle) vs RRSPM vs ERM: excess error vs n, and vs solver failure rate.",
)
_comparison_command(
    "cover-baseline",
    "oraclepriv.experiments.cover_baseline",
    "run_cover_baseline",
    "docs/figures/cover",
    "PublicCoverEM (exponential mechanism over the public cover, no oracle call) vs RRSPM vs ERM: excess error vs n.",
)


def _run_comparison(
    run: Callable, out: Path, quick: bool, seed: int, where: tuple[int | None, str | None, str | None], quiet: bool
) -> None:
    """A learner comparison: run it where ``where`` (--jobs, --parallel-backend, --scheduler) says, print
    its slopes and ratios."""
    check_seed(seed)
    check_parallel_options(*where)
    with parallel(*where) as environment, progress_bar(quiet) as bar:
        try:
            result = run(out, quick=quick, random_state=seed, n_jobs=environment.n_jobs, progress=bar.phase("cells"))
        except ValueError as exc:
            fail(str(exc))
    typer.echo(result["slopes"].to_string(index=False))
    typer.echo(result["ratio"].to_string(index=False))
    typer.echo(f"wrote {out}")


@app.command("oracle-cost")
def experiment_oracle_cost(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Output folder (required; the committed figures are regenerated with --out docs/figures/oracle-cost).",
        ),
    ],
    quick: Quick = False,
    seed: Seed = 0,
    resume: Annotated[
        bool, typer.Option("--resume/--no-resume", help="Keep the cells already in --out (default) or recompute all.")
    ] = True,
    jobs: Jobs = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """What oracle efficiency buys with real solvers: every private learner's error against wall-clock, each oracle
    call timed beside its noise-free twin (the cost of noise), and the RRSPM / PublicCoverEM crossover in d."""
    from oraclepriv.experiments.oracle_cost import run_oracle_cost

    check_seed(seed)
    check_parallel_options(jobs, parallel_backend, scheduler)
    with parallel(jobs, parallel_backend, scheduler) as environment, progress_bar(quiet) as bar:
        try:
            run_oracle_cost(
                out,
                quick=quick,
                random_state=seed,
                n_jobs=environment.n_jobs,
                progress=bar.phase("cells"),
                resume=resume,
            )
        except ValueError as exc:
            fail(str(exc))
    typer.echo(f"wrote {out}")
