"""``oraclepriv experiment``: the experiments of :mod:`oraclepriv.experiments`, which write the figures,
tables and READMEs under docs/figures/."""

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from oraclepriv.cli.common import Seed, check_seed, fail

app = typer.Typer(no_args_is_help=True, help="Experiments that produce the figures in docs/.")

Quick = Annotated[bool, typer.Option("--quick", help="Tiny sizes (a smoke run).")]
Jobs = Annotated[
    int, typer.Option("--jobs", help="Worker processes (joblib; -1: every CPU). Results do not depend on it.")
]
ComparisonOut = Annotated[Path, typer.Option("--out", help="Output folder (PNG + CSVs + README).")]


@app.command("ppm-curves")
def experiment_ppm_curves(
    out: Annotated[Path, typer.Option("--out", help="Output folder (PNG + CSVs).")] = Path("docs/figures/ppm"),
    quick: Quick = False,
    seed: Seed = 0,
) -> None:
    """Learning curves of the PPM learner (d in {1,2}, eps in {0.1,1,inf}, realizable and 10% noise) with slopes."""
    from oraclepriv.experiments.ppm_curves import run_ppm_curves

    check_seed(seed)
    kwargs = {"sizes": {1: [50, 100], 2: [30, 60]}, "repetitions": 2, "n_test": 2000, "draws": 2} if quick else {}
    result = run_ppm_curves(out, random_state=seed, **kwargs)
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
) -> None:
    """RRSPM (Block et al., Alg. 4): the m-n trade-off (U-shape), sigma-smooth shift, and a non-smooth control."""
    from oraclepriv.experiments.rrspm_tradeoff import run_rrspm_experiments

    check_seed(seed)
    run_rrspm_experiments(out, quick=quick, random_state=seed)
    typer.echo(f"wrote {out}")


@app.command("robust-tradeoff")
def experiment_robust_tradeoff(
    out: ComparisonOut = Path("docs/figures/robust"), quick: Quick = False, seed: Seed = 0, jobs: Jobs = 1
) -> None:
    """SubsampleAggregate (private for any oracle) vs RRSPM vs ERM: excess error vs n, and vs solver failure rate."""
    from oraclepriv.experiments.robust_tradeoff import run_robust_tradeoff

    _run_comparison(run_robust_tradeoff, out, quick, seed, jobs)


@app.command("cover-baseline")
def experiment_cover_baseline(
    out: ComparisonOut = Path("docs/figures/cover"), quick: Quick = False, seed: Seed = 0, jobs: Jobs = 1
) -> None:
    """PublicCoverEM (exponential mechanism over the public cover, no oracle call) vs RRSPM vs ERM: excess error vs n."""
    from oraclepriv.experiments.cover_baseline import run_cover_baseline

    _run_comparison(run_cover_baseline, out, quick, seed, jobs)


def _run_comparison(run: Callable, out: Path, quick: bool, seed: int, jobs: int) -> None:
    """A learner comparison: run it, print its slopes and ratios."""
    check_seed(seed)
    try:
        result = run(out, quick=quick, random_state=seed, n_jobs=jobs)
    except ValueError as exc:
        fail(str(exc))
    typer.echo(result["slopes"].to_string(index=False))
    typer.echo(result["ratio"].to_string(index=False))
    typer.echo(f"wrote {out}")
