"""The ``oraclepriv`` command line (typer).

    oraclepriv erm DATA.csv --hypothesis-class halfspace [--backend B] [--time-limit S] [--json]
    oraclepriv learn PRIVATE.csv --public PUBLIC.csv --algorithm rrspm --epsilon 1 --hypothesis-class halfspace [--json]
    oraclepriv demo
    oraclepriv audit rrspm [--runs N]
    oraclepriv bench oracles|learners [--quick] [--out FILE]
    oraclepriv instances build|check|list
    oraclepriv instances export-mps NAME [--backend highs|scip|pyomo] [--out FILE]
    oraclepriv bench mip [--suite issue|library] [--backends a,b] [--time-limit S] [--out DIR] [--quick]
    oraclepriv verify instance PRIVATE.csv --public PUBLIC.csv --algorithm rrspm --hypothesis-class C --epsilon E
    oraclepriv verify suite [--report docs/verify.md]

Errors in the input (bad CSV, NaN, labels outside {0,1}, unknown class/backend, ...) are
printed to stderr as one line naming the problem, with exit code 2.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from oraclepriv.io import read_csv_problem, to_json

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Exact ERM oracles and oracle-efficient private learners.")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks (ratios against baselines measured in the same run).")
instances_app = typer.Typer(no_args_is_help=True, help="The bundled benchmark instance library.")
app.add_typer(bench_app, name="bench")
app.add_typer(instances_app, name="instances")


class HypothesisClass(str, Enum):
    threshold = "threshold"
    stump = "stump"
    halfspace = "halfspace"


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


@app.command()
def erm(
    data: Path = typer.Argument(..., help="CSV: header; feature columns; label column y in {0,1}; optional weight column."),
    hypothesis_class: HypothesisClass = typer.Option(..., "--hypothesis-class", help="Hypothesis class."),
    backend: Optional[str] = typer.Option(
        None, "--backend", help="Oracle backend (default: chosen per problem), optionally with options: scip-bc:workers=2."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Time limit in seconds (MIP backends)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Solve one weighted 0-1 ERM problem exactly and report whether the answer is certified."""
    from oraclepriv.bench.mip import parse_backend_spec
    from oraclepriv.oracle import make_oracle

    try:
        problem = read_csv_problem(data)
        options = {} if time_limit is None else {"time_limit": time_limit}
        name = None
        if backend is not None:
            name, extra = parse_backend_spec(backend)
            options.update(extra)
        oracle = make_oracle(hypothesis_class.value, backend=name, **options)
        result = oracle.solve(problem.X, problem.y, problem.weights, caller="cli", step="erm")
    except (ValueError, ImportError) as exc:
        _fail(str(exc))
        return
    summary = result.to_dict()
    summary["data"] = str(data)
    summary["features"] = list(problem.feature_names)
    if as_json:
        typer.echo(to_json(summary))
        return
    typer.echo(f"class       {summary['class']}  (n={summary['n']}, d={summary['d']}, backend={summary['backend']})")
    typer.echo(f"hypothesis  {summary['hypothesis']}")
    typer.echo(f"objective   {summary['objective']:.12g}   bound {summary['bound']:.12g}")
    typer.echo(f"status      {summary['status']}   certified={summary['certified']}   {summary['seconds']:.3f} s")


@bench_app.command("oracles")
def bench_oracles_command(
    quick: bool = typer.Option(False, "--quick", help="Small sizes (a smoke run, not the issue's figures)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the rows as JSON to this file."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a Markdown table (for docs/) to this file."),
) -> None:
    """Stump sweep vs argsort at n=1e6 (ratio), and enumerate d=2 at n=700 and n=5000 (seconds)."""
    from oraclepriv.bench.oracles import bench_oracles, markdown_report

    rows = bench_oracles(quick=quick)
    for row in rows:
        if row["benchmark"] == "stump-sweep":
            typer.echo(
                f"stump sweep   n={row['n']:>8} d={row['d']}  oracle {row['oracle_seconds']:.4f} s / "
                f"argsort {row['argsort_seconds']:.4f} s = {row['ratio']:.2f}x  (target <= {row['target_ratio']}x)  "
                f"certified={row['certified']}"
            )
        else:
            target = row.get("target_seconds")
            target_text = f"  (target < {target} s)" if target else ""
            typer.echo(
                f"{row['benchmark']:<13} n={row['n']:>8}       {row['seconds']:.3f} s{target_text}  certified={row['certified']}"
            )
    if out is not None:
        out.write_text(to_json(rows, indent=2) + "\n", encoding="utf-8")
    if report is not None:
        command = "oraclepriv bench oracles" + (" --quick" if quick else "") + f" --report {report}"
        report.write_text(markdown_report(rows, command), encoding="utf-8")


@instances_app.command("build")
def instances_build(
    out: Optional[Path] = typer.Option(None, "--out", help="Target folder (default: the repo's instances/)."),
    time_limit: float = typer.Option(60.0, "--time-limit", help="Seconds per instance for the best-known objective / proved bound."),
) -> None:
    """Regenerate every bundled instance and learning task from its generator and seed; rewrite the manifests.

    Best objectives and bounds proved earlier are kept when this run does worse (see build_library)."""
    from oraclepriv.instances import build_learning_tasks, build_library

    if not (time_limit > 0):
        raise typer.BadParameter(f"--time-limit must be > 0; got {time_limit!r}")
    for entry in build_library(out, time_limit=time_limit):
        typer.echo(f"{entry['name']:<24} {entry['class']:<10} n={entry['n']:<6} d={entry['d']}  best={entry['best_objective']}  proved={entry['proved_optimal']}")
    for entry in build_learning_tasks(out):
        typer.echo(f"{entry['name']:<24} learning task: n={entry['n']} private, m={entry['m']} public, d={entry['d']}")


@instances_app.command("check")
def instances_check(directory: Optional[Path] = typer.Option(None, "--dir")) -> None:
    """Verify every instance file against the manifest checksum."""
    from oraclepriv.instances import check_library

    problems = check_library(directory)
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise typer.Exit(code=1)
    typer.echo("all instances match the manifest")


@instances_app.command("list")
def instances_list() -> None:
    """List the bundled instances."""
    import json

    from oraclepriv.instances import instances_dir

    for entry in json.loads((instances_dir() / "manifest.json").read_text(encoding="utf-8")):
        typer.echo(f"{entry['file']:<30} {entry['class']:<10} n={entry['n']:<6} d={entry['d']}  best={entry['best_objective']}")


@instances_app.command("export-mps")
def instances_export_mps(
    name: str = typer.Argument(..., help="Instance name (see `oraclepriv instances list`)."),
    backend: str = typer.Option("highs", "--backend", help="MPS writer: highs | scip | pyomo."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output .mps file (default: NAME.mps in the current folder)."),
    formulation: Optional[str] = typer.Option(
        None, "--formulation", help="Halfspaces: relaxed (default, margin-free) | margin; stumps/thresholds: staircase."
    ),
) -> None:
    """Write an instance's MIP model (objective = signed loss, offset included) as MPS."""
    from oraclepriv.instances import export_mps

    try:
        info = export_mps(name, out if out is not None else Path(f"{name}.mps"), backend=backend, formulation=formulation)
    except (ValueError, ImportError) as exc:
        _fail(str(exc))
        return
    typer.echo(
        f"wrote {info['path']}  ({info['formulation']}, {info['num_cols']} columns of which {info['num_integer']} integer, "
        f"{info['num_rows']} rows, objective offset {info['objective_offset']:.12g}; writer {info['backend']})"
    )


@bench_app.command("mip")
def bench_mip_command(
    suite: str = typer.Option("issue", "--suite", help="issue (halfspace suite of issue #3) | library (bundled instances)."),
    backends: Optional[str] = typer.Option(None, "--backends", help="Comma-separated backends (default: every MIP backend registered)."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Seconds per oracle call (default 60; --quick: 5)."),
    out: Path = typer.Option(Path("mipbench-results"), "--out", help="Folder for rows.csv/json, summary.json/md, profile.png."),
    quick: bool = typer.Option(False, "--quick", help="Tiny sizes and short limits (a smoke run, not the issue's figures)."),
) -> None:
    """MIP backends side by side: solved (certified) counts, shifted geometric mean time, performance
    profile, and a cross-backend agreement check (a disagreement exits with code 1)."""
    from oraclepriv.bench import mip as mipbench

    chosen = [b.strip() for b in backends.split(",") if b.strip()] if backends else mipbench.default_backends()
    limit = time_limit if time_limit is not None else (mipbench.QUICK_TIME_LIMIT if quick else 60.0)
    try:
        if suite not in mipbench.SUITES:
            raise ValueError(f"unknown suite {suite!r}; expected one of {list(mipbench.SUITES)}")
        if time_limit is not None and not (time_limit > 0 and time_limit < float("inf")):
            raise ValueError(f"--time-limit must be a finite number > 0; got {time_limit!r}")
        mipbench.check_backends(chosen)
        instances = mipbench.load_suite(suite, quick=quick)
    except (ValueError, ImportError) as exc:
        _fail(str(exc))
        return
    command = mipbench.command_line(suite, backends.split(",") if backends else None, time_limit, out, quick)
    typer.echo(f"{command}\n{len(instances)} instances x {len(chosen)} backends, time limit {limit:g} s")

    def progress(row: dict) -> None:
        flag = "certified" if row["certified"] else ("restricted" if row["meets_bound"] else "NOT certified")
        typer.echo(
            f"  {row['instance']:<28} {row['backend']:<12} {row['status']:<10} {flag:<13} objective {row['objective']:.10g}  "
            f"bound {row['bound']:.10g}  {row['seconds']:.3f} s" + (f"  [{row['error']}]" if row.get("error") else "")
        )

    rows = mipbench.run_benchmark(instances, chosen, limit, progress=progress)
    problems, warnings = mipbench.agreement_problems(rows, instances)
    summary = mipbench.summarize(rows)
    paths = mipbench.write_outputs(out, rows, summary, problems, warnings, command=command, suite=suite, time_limit=limit)
    typer.echo(f"\n{'backend':<12} {'solved':>8} {'wrong':>6} {'TL hits':>8} {'errors':>7} {'SGM(s)':>9}  speed-up vs naive-highs")
    for s in summary:
        speedup = f"{s['speedup_vs_baseline']:.2f}x" if s["speedup_vs_baseline"] else "-"
        typer.echo(
            f"{s['backend']:<12} {s['solved']:>4}/{s['instances']:<3} {s['wrong_certificates']:>6} {s['time_limit_hits']:>8} "
            f"{s['errors']:>7} {s['sgm_seconds']:>9.3f}  {speedup}"
        )
    for warning in warnings:
        typer.echo(f"warning (restricted certificate): {warning}")
    typer.echo(f"wrote {', '.join(str(p) for p in paths.values())}")
    if problems:
        banner = "!" * 78
        typer.echo(f"{banner}\nCROSS-BACKEND DISAGREEMENT ({len(problems)}): certified answers are inconsistent\n{banner}", err=True)
        for problem in problems:
            typer.echo(f"DISAGREEMENT: {problem}", err=True)
        raise typer.Exit(code=1)
    typer.echo("agreement: all certified objectives agree; no proved bound exceeds a found objective")


from oraclepriv import cli_learners  # noqa: E402  (learner commands live in their own module)
from oraclepriv.cli_verify import verify_app  # noqa: E402

app.command("learn")(cli_learners.learn)
app.command("demo")(cli_learners.demo)
app.add_typer(cli_learners.audit_app, name="audit")
bench_app.command("learners")(cli_learners.bench_learners)
bench_app.command("ppm")(cli_learners.bench_ppm)
app.add_typer(cli_learners.experiment_app, name="experiment")
app.add_typer(verify_app, name="verify")


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
