"""``oraclepriv bench``: the benchmarks of :mod:`oraclepriv.bench`, printed as they run and written as
JSON / Markdown (for results/) on request."""

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from oraclepriv.backends import split_backend_list
from oraclepriv.cli.common import (
    HypothesisClass,
    Jobs,
    JsonOut,
    MarkdownOut,
    ParallelBackend,
    Quiet,
    Resume,
    Scheduler,
    Seed,
    check_at_least,
    check_backend_options,
    check_backend_time_limit,
    check_out_and_report,
    check_output_dir,
    check_parallel_options,
    check_seed,
    check_time_limit,
    echo,
    fail,
    output_path,
    parallel,
    parallel_note,
    partial_outputs,
    progress_bar,
)

app = typer.Typer(no_args_is_help=True, help="Benchmarks (ratios against baselines measured in the same run).")


@app.command("oracles")
def bench_oracles(
    quick: Annotated[
        bool, typer.Option("--quick", help="Small sizes (a smoke run, not the documented figures).")
    ] = False,
    only: Annotated[
        str | None,
        typer.Option(
            "--only",
            help="One group of rows: stump (the stump oracle's first and repeat calls) or enumerate (its d = 2 and "
            "d = 3 calls); all of them when not given.",
        ),
    ] = None,
    out: JsonOut = None,
    report: MarkdownOut = None,
    quiet: Quiet = False,
) -> None:
    """Stump oracle at n=1e6: a first call and a repeat call with new weights, each / numpy's argsort of the same
    columns; enumerate's seconds in d=2 and d=3.

    Runs in this process, one benchmark after another (they are timings)."""
    from oraclepriv.bench.oracles import GROUPS, markdown_report
    from oraclepriv.bench.oracles import bench_oracles as run

    if only is not None and only not in GROUPS:
        fail(f"--only must be one of {', '.join(GROUPS)}; got {only!r}")
    check_out_and_report(out, report)
    with progress_bar(quiet) as bar:
        rows = run(quick=quick, progress=bar.phase("benchmarks"), only=only)
    for row in rows:
        if row["benchmark"] == "stump-repeat":
            typer.echo(
                f"stump repeat  n={row['n']:>8} d={row['d']}  repeat {row['seconds']:.4f} s / argsort "
                f"{row['argsort_seconds']:.4f} s = {row['ratio']:.3f}x (first call {row['first_ratio']:.2f}x; target "
                f"<= {row['target_ratio']}x)  same_as_fresh={row['same_as_fresh']}  certified={row['certified']}"
            )
        elif row["benchmark"] == "stump-sweep":
            typer.echo(
                f"stump first   n={row['n']:>8} d={row['d']}  oracle {row['oracle_seconds']:.4f} s / "
                f"argsort {row['argsort_seconds']:.4f} s = {row['ratio']:.2f}x  (target <= {row['target_ratio']}x)  "
                f"certified={row['certified']}"
            )
        else:
            target = row.get("target_seconds")
            target_text = f"  (target < {target} s)" if target else ""
            typer.echo(
                f"{row['benchmark']:<13} n={row['n']:>8}       {row['seconds']:.3f} s{target_text}  certified={row['certified']}"
            )
    command = "oraclepriv bench oracles" + (" --quick" if quick else "") + (f" --only {only}" if only else "")
    _write(rows, out, report, markdown_report, command)


@app.command("mip")
def bench_mip(
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            help="noisy-halfspaces (the default: separable halfspaces with 10% flipped labels, n = 100-400, d = 2, 5, "
            "10) | library (bundled) | real (real-data tier) | learners (the private learners' oracle calls) | small-d "
            "(the noisy-halfspaces family at d = 2, 3 and n = 50-400, where E01Loss runs). 'issue' is a deprecated "
            "name of noisy-halfspaces.",
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Your own instances instead of a suite: a CSV file or a folder of them, in erm's format (feature "
            "columns, y, optional weight), each named by its file name.",
        ),
    ] = None,
    hypothesis_class: Annotated[
        HypothesisClass,
        typer.Option("--hypothesis-class", help="The class of the --data instances."),
    ] = HypothesisClass.halfspace,
    backends: Annotated[
        str | None,
        typer.Option(
            "--backends",
            help="Comma-separated backends, each with its options if any "
            "(scip-bc:strategy=partition,part_size=50,gurobi; default: every MIP backend registered).",
        ),
    ] = None,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Seconds per oracle call (default 60; --quick: 5).")
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Folder for rows.csv/json, summary.json/md and, over 2 or more instances, profile.png (an earlier "
            "run's are replaced when the run starts). While the run is incomplete it holds a PARTIAL file and the "
            "finished cells in cells.jsonl.",
            parser=output_path,
        ),
    ] = Path("mipbench-results"),
    quick: Annotated[
        bool, typer.Option("--quick", help="Tiny sizes and short limits (a smoke run, not the documented figures).")
    ] = False,
    repeat: Annotated[
        int,
        typer.Option(
            "--repeat",
            help="Runs of each cell's call, one after the other, when it ends optimal; its seconds are their median "
            "(for calls of a fraction of a second, e.g. --suite learners).",
        ),
    ] = 1,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            help="Run every backend that takes a random seed once per seed 0..K-1 (each seed its own row; "
            "summary.md adds a performance-variability table). 1: the solvers' default seeds.",
        ),
    ] = 1,
    instances_option: Annotated[
        str | None,
        typer.Option(
            "--instances",
            help="Comma-separated names of the suite's instances to run (default: all), e.g. --suite real "
            "--instances diabetes-10f.",
        ),
    ] = None,
    resume: Resume = True,
    jobs: Jobs = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """MIP backends side by side: solved (certified) counts, shifted geometric mean time, performance
    profile, and a cross-backend agreement check (a disagreement exits with code 1).

    Every (instance, backend) cell is one task with one solver thread; with --jobs or a dask cluster the
    cells run side by side, one per worker (for honest timings: one worker per core, docs/cluster.md).
    Each row records where it ran and the load when it started."""
    from oraclepriv.bench import mip, mip_report
    from oraclepriv.bench.mip_agreement import agreement_problems
    from oraclepriv.bench.mip_summary import summarize, unseeded
    from oraclepriv.bench.primal import add_primal_measures

    check_output_dir(out, "--out")
    check_time_limit(time_limit)
    chosen = _mip_backends(backends, time_limit)
    limit = time_limit if time_limit is not None else (mip.QUICK_TIME_LIMIT if quick else 60.0)
    data_class = hypothesis_class.value
    suite, instances, chosen, given, wanted_names = _mip_instances(
        suite, data, data_class, quick, instances_option, repeat, seeds, chosen, backends is None
    )
    # the speed-up column's baseline: the naive model, its first seed when it runs under several
    baseline = next((b for b in chosen if unseeded(b) == ("naive-highs", 0)), "naive-highs")
    check_parallel_options(jobs, parallel_backend, scheduler)

    width = max(12, *(len(b) for b in chosen))  # the backend column of the lines printed

    def show(row: dict) -> None:
        flag = "certified" if row["certified"] else ("restricted" if row["meets_bound"] else "NOT certified")
        echo(
            f"  {row['instance']:<28} {row['backend']:<{width}} {row['status']:<10} {flag:<13} objective {row['objective']:.10g}  "
            f"bound {row['bound']:.10g}  {row['seconds']:.3f} s" + (f"  [{row['error']}]" if row.get("error") else "")
        )

    cells, left = _mip_cells(out, resume)

    def record(row: dict) -> None:
        mip.append_cell(cells, row)
        show(row)

    with parallel(jobs, parallel_backend, scheduler) as environment:
        command = mip_report.command_line(
            suite,
            given if backends else None,
            time_limit,
            out,
            quick,
            parallel_note(environment).split(),
            repeat,
            None if wanted_names is None else [i.name for i in instances],
            seeds,
            data=data,
            data_class=data_class,
        )
        typer.echo(
            f"{command}\n{len(instances)} instances x {len(chosen)} backends, time limit {limit:g} s, "
            f"on {environment.describe()}"
        )
        resume_note = (
            f"Rerun the same command to resume: the cells finished so far are in {cells} (--no-resume runs them again)."
        )
        with partial_outputs(out, command, resume=resume_note):
            for name in (
                *mip_report.OUTPUTS,
                mip_report.LEARNERS_OUTPUT,
            ):  # an earlier run's: replaced, never mixed with this run's
                (out / name).unlink(missing_ok=True)
            wanted = set(mip.cell_keys(instances, chosen, limit, repeat))
            done = [r for r in left if mip.cell_key(r) in wanted]
            if not resume:
                cells.unlink(missing_ok=True)
            if done:
                typer.echo(f"resuming: {len(done)} of {len(wanted)} cells taken from {cells}")
                for row in done:
                    show(row)
            with progress_bar(quiet) as bar:
                rows = mip.run_benchmark(
                    instances,
                    chosen,
                    limit,
                    n_jobs=environment.n_jobs,
                    on_row=record,
                    progress=bar.phase("cells"),
                    done=done,
                    repeat=repeat,
                )
            problems, warnings = agreement_problems(rows, instances)
            add_primal_measures(rows, {instance.name: instance.best_known for instance in instances})
            summary = summarize(rows, baseline)
            paths = mip_report.write_outputs(
                out,
                rows,
                summary,
                problems,
                warnings,
                command=command,
                suite=suite,
                time_limit=limit,
                execution=environment.describe(),
                repeat=repeat,
            )
            cells.unlink(missing_ok=True)  # every row is in rows.json now
    _print_mip_summary(summary, rows, warnings, problems, paths, baseline, width)


def _mip_backends(backends: str | None, time_limit: float | None) -> list[str]:
    """The specs of ``--backends`` (every installed MIP backend when it is left out), each checked on its own
    (its options, and no time limit of its own: the benchmark's is ``--time-limit``)."""
    from oraclepriv.bench import mip

    chosen = split_backend_list(backends) if backends is not None else mip.default_backends()
    if backends is not None and not chosen:  # an empty list names no backend (the default list is --backends left out)
        fail(f"--backends must name at least one backend; got {backends!r}")
    for spec in chosen:  # the benchmark's own time limit is --time-limit
        check_backend_time_limit(spec, time_limit, "--backends")
        check_backend_options(spec, "--backends")
    return chosen


def _mip_instances(
    suite: str | None,
    data: Path | None,
    data_class: str,
    quick: bool,
    instances_option: str | None,
    repeat: int,
    seeds: int,
    chosen: list[str],
    default_backends: bool,
) -> tuple[str, list, list[str], list[str], list[str] | None]:
    """What ``bench mip`` runs: (the suite's name, or "data" for ``--data``; its instances, those named by
    ``--instances``; the backend specs, one per seed; the specs as given; the names given to ``--instances``).
    A deprecated suite name runs its new name with a note on stderr. Bad input fails by option name."""
    from oraclepriv.bench import mip

    if data is not None and suite is not None:
        fail(f"--data and --suite exclude each other (the instances come from one of them); got --suite {suite}")
    if data is None and data_class != "halfspace":
        fail(
            f"--hypothesis-class {data_class} applies to --data instances only (a suite's instances carry their class)"
        )
    if suite in mip.SUITE_ALIASES:
        typer.echo(
            f"note: --suite {suite} is deprecated and will be removed in the next release; "
            f"it runs --suite {mip.SUITE_ALIASES[suite]}",
            err=True,
        )
        suite = mip.SUITE_ALIASES[suite]
    suite = "data" if data is not None else (suite if suite is not None else mip.DEFAULT_SUITE)
    try:
        if data is None and suite not in mip.SUITES:
            raise ValueError(f"--suite must be one of {list(mip.SUITES)}; got {suite!r}")
        if repeat < 1:
            raise ValueError(f"--repeat must be an integer >= 1; got {repeat!r}")
        mip.check_backends(chosen)
        wanted_names = None if instances_option is None else instances_option.split(",")
        loaded = mip.load_files(data, data_class) if data is not None else mip.load_suite(suite, quick=quick)
        instances = mip.select_instances(loaded, wanted_names)
        if default_backends:  # the default list, narrowed to the backends that take the instances' classes
            chosen = _backends_for(chosen, instances)
            if not chosen:
                raise ValueError(
                    f"no installed default backend takes the class {data_class!r} of the --data instances; "
                    "name one with --backends"
                )
        _check_backends_fit_suite(chosen, instances, suite)
        given = chosen
        chosen = mip.check_backends(mip.seeded_backends(chosen, seeds))
    except (ValueError, ImportError) as exc:
        fail(str(exc))
    return suite, instances, chosen, given, wanted_names


def _mip_cells(out: Path, resume: bool) -> tuple[Path, list[dict[str, Any]]]:
    """The cells file of ``--out`` and, with ``resume``, the rows an interrupted run left there; checked before
    any cell runs, like every file the run will write (a folder in the way of one fails by name)."""
    from oraclepriv.bench import mip, mip_report

    cells = out / mip.CELLS
    for name in (*mip_report.OUTPUTS, mip_report.LEARNERS_OUTPUT):
        if (out / name).exists() and not (out / name).is_file():
            fail(f"--out {str(out)!r}: {str(out / name)!r} is not a file; the run writes its {name} there (remove it)")
    try:
        left = mip.load_cells(cells) if resume else []
        if not resume and cells.exists() and not cells.is_file():
            raise ValueError(f"{str(cells)!r} is not a file: the run keeps its finished cells there; delete it")
    except ValueError as exc:
        fail(str(exc))
    return cells, left


def _print_mip_summary(
    summary: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    warnings: list[str],
    problems: list[str],
    paths: dict[str, Path],
    baseline: str,
    width: int,
) -> None:
    """The per-backend table, the restricted-certificate warnings, the files written (and why there is no
    performance profile, if there is none), and the agreement check: a disagreement on stderr, exit code 1."""
    from oraclepriv.bench import mip_report

    typer.echo(
        f"\n{'backend':<{width}} {'solved':>8} {'wrong':>6} {'TL hits':>8} {'errors':>7} {'SGM(s)':>9}  "
        f"speed-up vs {baseline}"
    )
    for s in summary:
        speedup = f"{s['speedup_vs_baseline']:.2f}x" if s["speedup_vs_baseline"] else "-"
        typer.echo(
            f"{s['backend']:<{width}} {s['solved']:>4}/{s['instances']:<3} {s['wrong_certificates']:>6} {s['time_limit_hits']:>8} "
            f"{s['errors']:>7} {s['sgm_seconds']:>9.3f}  {speedup}"
        )
    for warning in warnings:
        typer.echo(f"warning (restricted certificate): {warning}")
    typer.echo(f"wrote {', '.join(str(p) for p in paths.values())}")
    note = mip_report.profile_note(rows)
    if note is not None:
        typer.echo(note)
    if problems:
        banner = "!" * 78
        typer.echo(
            f"{banner}\nCROSS-BACKEND DISAGREEMENT ({len(problems)}): certified answers are inconsistent\n{banner}",
            err=True,
        )
        for problem in problems:
            typer.echo(f"DISAGREEMENT: {problem}", err=True)
        raise typer.Exit(code=1)
    typer.echo("agreement: all certified objectives agree; no proved bound exceeds a found objective")


def _backends_for(chosen: list[str], instances: list) -> list[str]:
    """The backends of ``chosen`` that support at least one of the instances' hypothesis classes."""
    from oraclepriv.backends import backend_class, parse_backend_spec

    classes = {instance.hypothesis_class for instance in instances}
    return [spec for spec in chosen if classes & set(backend_class(parse_backend_spec(spec)[0]).classes)]


def _check_backends_fit_suite(chosen: list[str], instances: list, suite: str) -> None:
    """A backend that supports none of the suite's hypothesis classes would only add "unsupported" rows (and
    a summary of 0/0): refused before the run."""
    from oraclepriv.backends import backend_class, parse_backend_spec

    classes = sorted({instance.hypothesis_class for instance in instances})
    for spec in chosen:
        supported = tuple(backend_class(parse_backend_spec(spec)[0]).classes)
        if not set(classes) & set(supported):
            raise ValueError(
                f"--backends: {spec!r} supports the classes {list(supported)}, none of the "
                f"{'--data' if suite == 'data' else f'--suite {suite}'} instances' classes {classes}; leave it out"
            )


@app.command("learners")
def bench_learners(
    repeats: Annotated[int, typer.Option("--repeats", help="Minimum number of fits per learner.")] = 3,
    min_seconds: Annotated[
        float, typer.Option("--min-seconds", help="Keep fitting until this much fit time has accumulated.")
    ] = 2.0,
    out: JsonOut = None,
    report: MarkdownOut = None,
    jobs: Jobs = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """Each learner's total fit time divided by the time of its oracle calls (target <= 1.2).

    One task per learner; with --jobs or a dask cluster they run side by side (each ratio is measured
    within its own process)."""
    from oraclepriv.bench.learners import bench_learners as run
    from oraclepriv.bench.learners import markdown_report

    check_at_least(repeats, 1, "--repeats")
    check_out_and_report(out, report)
    if not (0 <= min_seconds < float("inf")):
        fail(f"--min-seconds must be a finite number >= 0; got {min_seconds!r}")
    check_parallel_options(jobs, parallel_backend, scheduler)
    with parallel(jobs, parallel_backend, scheduler) as environment, progress_bar(quiet) as bar:
        rows = run(repeats=repeats, min_seconds=min_seconds, n_jobs=environment.n_jobs, progress=bar.phase("learners"))
    for row in rows:
        typer.echo(
            f"{row['learner']:<24} n={row['n']:<6} m={row['m']:<4} calls={row['oracle_calls']:<3} fit {row['fit_seconds']:.4f} s "
            f"/ oracle {row['oracle_seconds']:.4f} s: ratio {row['ratio']:.3f} (IQR {row['ratio_q25']:.3f}-{row['ratio_q75']:.3f}, {row['fits']} fits)"
        )
    _write(
        rows,
        out,
        report,
        markdown_report,
        f"oraclepriv bench learners --repeats {repeats} --min-seconds {min_seconds:g}",
    )


@app.command("convex")
def bench_convex(
    quick: Annotated[
        bool, typer.Option("--quick", help="Small sizes (a smoke run, not the documented figures).")
    ] = False,
    methods: Annotated[
        str | None,
        typer.Option(
            "--methods",
            help="Comma-separated: highs-qp+kkt (the project's, always run), highs-qp+kkt-epigraph, scipy-slsqp, "
            "gurobi-box-qp (default: all).",
        ),
    ] = None,
    slsqp_max_n: Annotated[
        int, typer.Option("--slsqp-max-n", help="Run SLSQP (O(n^3) per iteration) only up to this many points.")
    ] = 1000,
    seed: Seed = 0,
    out: JsonOut = None,
    report: MarkdownOut = None,
    quiet: Quiet = False,
) -> None:
    """The regularization learner's convex oracle (Algorithm 3) against SLSQP and Gurobi, n = 500 to 50,000:
    seconds as ratios to the project's backend, every answer's gap to the best proved bound, and an
    agreement check (an objective below a certified bound exits with code 1).

    Runs in this process, one method after another (they are timings)."""
    from oraclepriv.bench import convex

    check_out_and_report(out, report)
    check_seed(seed)
    check_at_least(slsqp_max_n, 0, "--slsqp-max-n")
    chosen = tuple(m.strip() for m in methods.split(",") if m.strip()) if methods is not None else convex.METHODS
    try:
        convex.check_methods(chosen, "--methods")
    except ValueError as exc:
        fail(str(exc))
    sizes = convex.QUICK_SIZES if quick else convex.DEFAULT_SIZES
    with progress_bar(quiet) as bar:
        rows = convex.bench_convex(sizes, chosen, seed=seed, slsqp_max_n=slsqp_max_n, progress=bar.phase("instances"))
    for row in rows:
        typer.echo(convex.row_line(row))
    command = "oraclepriv bench convex" + (" --quick" if quick else "")
    command += (f" --methods {methods}" if methods is not None else "") + (f" --seed {seed}" if seed else "")
    command += f" --slsqp-max-n {slsqp_max_n}" if slsqp_max_n != 1000 else ""
    _write(rows, out, report, convex.markdown_report, command)
    problems = convex.disagreements(rows)
    if problems:
        for row in problems:
            typer.echo(
                f"DISAGREEMENT: {row['method']} on {row['instance']} found objective {row['objective']!r} below "
                "the project's certified bound",
                err=True,
            )
        raise typer.Exit(code=1)
    typer.echo("agreement: no objective below a certified bound")


@app.command("ppm")
def bench_ppm(
    repeat: Annotated[int, typer.Option("--repeat")] = 1,
    out: Annotated[
        Path | None, typer.Option("--out", help="Also write the result as JSON to this file.", parser=output_path)
    ] = None,
    report: MarkdownOut = None,
    quiet: Quiet = False,
) -> None:
    """PPM learner (Bassily, Moran, Nandi): d=2 with n_pub=200 (target < 10 s) and d=1 at n=1e6."""
    from oraclepriv.bench.ppm import bench_ppm as run
    from oraclepriv.bench.ppm import markdown_report

    check_at_least(repeat, 1, "--repeat")
    check_out_and_report(out, report)
    with progress_bar(quiet) as bar:
        result = run(repeat=repeat, progress=bar.phase("fits"))
    for name, case in result["cases"].items():
        typer.echo(
            f"{name:<12} d={case['d']} n={case['n']:<8} n_pub={case['n_pub']:<5} |G|={case['class_size']:.3g} "
            f"best wall {case['best_wall_seconds']:.2f} s"
        )
    _write(result, out, report, markdown_report, f"oraclepriv bench ppm --repeat {repeat}")


def _write(
    data: Any, out: Path | None, report: Path | None, markdown_report: Callable[[Any, str], str], command: str
) -> None:
    """``--out``: the data as JSON; ``--report``: its Markdown report, naming the command that wrote it."""
    from oraclepriv.bench.report import write_json

    if out is not None:
        write_json(out, data)
    if report is not None:
        report.write_text(markdown_report(data, f"{command} --report {report}"), encoding="utf-8")
