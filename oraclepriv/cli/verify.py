"""``oraclepriv verify``: exact privacy verification on small instances (:mod:`oraclepriv.verify`).

oraclepriv verify instance PRIVATE.csv [--public PUBLIC.csv] --algorithm rrspm|rspm --hypothesis-class C --epsilon E
                  [--delta D] [--grid "0,1,2;0,1"] [--backend B] [--mode exact|sampled] [--draws N]
                  [--others OTHERS.csv] [--max-seconds T] [--max-memory SIZE] [--jobs J] [--seed S] [--json]
oraclepriv verify suite [--quick] [--jobs J] [--report results/verify.md] [--out rows.json]

``verify instance`` exits 0 when the claim is verified, 1 when it is exceeded, 3 when a sampled run is
inconclusive (its interval contains the claim: more --draws may decide it) and 2 on bad input (the verdicts:
:attr:`oraclepriv.verify.verifier.VerifyResult.verdict`). ``--backend NAME[:key=value,...]`` passes the
options to the backend (``scip-bc:workers=2``), which validates them. Before its first oracle call the run
is estimated (:mod:`oraclepriv.verify.budget`) and refused, exit 2, when it would take longer than
``--max-seconds`` (default one hour) or more memory than ``--max-memory`` (default half of what the machine has
available); on a terminal each phase shows its progress on stderr (never with ``--json``).

Both take the execution switch of every parallel command (--jobs, --parallel-backend, --scheduler).
"""

import math
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from oraclepriv.cli.common import (
    Jobs,
    JsonOut,
    ParallelBackend,
    Quiet,
    Scheduler,
    Seed,
    backend_oracle,
    check_at_least,
    check_delta,
    check_epsilon,
    check_input_file,
    check_out_and_report,
    check_parallel_options,
    check_seed,
    check_threshold_features,
    echo,
    fail,
    output_path,
    parallel,
    parallel_note,
    progress_bar,
    restricted_backend_problem,
)
from oraclepriv.io import read_csv_problem, to_json

app = typer.Typer(
    no_args_is_help=True, help="Exact privacy verification on small instances (privacy loss with error bars)."
)


class VerifyAlgorithm(str, Enum):
    rrspm = "rrspm"
    rspm = "rspm"


def _parse_grid(text: str) -> list[list[float]]:
    """``--grid "0,1,2;0,1"``: the values of each feature. A feature without values, or with a value that is not
    a finite number, is a one-line error naming --grid and the feature (counted from 1, as the file's columns)."""
    grid: list[list[float]] = []
    for j, part in enumerate(text.split(";"), start=1):
        tokens = [v.strip() for v in part.split(",") if v.strip()]
        try:
            values = [float(v) for v in tokens]
        except ValueError:
            fail(f"--grid {text!r}: expected comma-separated values per feature, features separated by ';'")
        if not values:
            fail(
                f"--grid {text!r}: feature {j} has no values (give comma-separated values per feature, features "
                "separated by ';')"
            )
        for token, value in zip(tokens, values, strict=True):
            if not math.isfinite(value):
                fail(f"--grid {text!r}: feature {j} has the value {token!r}; grid values must be finite numbers")
        grid.append(values)
    return grid


def _check_grid_data(
    grid_text: str, grid: list[list[float]], data: Any, private: Path, hypothesis_class: str, mode: str
) -> None:
    """The data file against --grid, named by the flag, the file, its column names and 1-based data rows (the
    learner would say ``X_private`` and count rows and features from 0): one grid feature per feature column,
    every value on the grid, and, for --mode exact, an identification set small enough to integrate."""
    import numpy as np

    from oraclepriv.identification import identification_set
    from oraclepriv.noisy_argmin.laws import MAX_EXACT_POINTS

    names = data.feature_names
    if len(grid) != len(names):
        fail(
            f"--grid {grid_text!r} gives values for {len(grid)} feature(s) but the data file {str(private)!r} has "
            f"{len(names)} feature column(s) ({', '.join(names)}); give one ';'-separated part per column"
        )
    off = np.column_stack([~np.isin(data.X[:, j], np.asarray(values)) for j, values in enumerate(grid)])
    if off.any():
        i, j = (int(k) for k in np.argwhere(off)[0])  # the first row, then its first column, as the file reads
        fail(
            f"data file {str(private)!r}: column {names[j]!r} row {i + 1} has a value that is not a --grid value "
            f"of feature {j + 1} ({', '.join(f'{v:g}' for v in grid[j])}); an error message never echoes a private value"
        )
    if mode == "exact":
        m = len(identification_set(hypothesis_class, grid))
        if m > MAX_EXACT_POINTS:
            fail(
                f"--grid {grid_text!r} gives {m} noisy points (the identification set of the {hypothesis_class}s on "
                f"the grid): too large for exact mode (--mode exact handles at most {MAX_EXACT_POINTS}); use --mode "
                "sampled or a smaller grid"
            )


def _show(row: dict) -> None:
    echo(
        f"{row.get('instance', ''):<30} {row['learner']:<32} {row['backend']:<9} {row['mode']:<7} n={row['n']:<3} m={row['m']} "
        f"neighbours={row['n_neighbours']:<4} loss={row['loss']:.6f} [{row['loss_low']:.6f}, {row['loss_high']:.6f}] "
        f"delta(eps)={row['delta_at_epsilon']:.3g} claim=({row['epsilon']:g}, {row['delta']:g}) {row['verdict'].upper()}"
        + (f" expected={row['expected']}" if "expected" in row else "")
    )


#: --draws when it is not given (sampled mode)
DEFAULT_DRAWS = 10_000_000
#: a refusal's levers by this command's flags (oraclepriv.verify.budget.TooLargeError.render)
FLAG_NAMES = {
    "draws": "--draws ",
    "points": "fewer --public rows (rrspm) or a smaller --grid (rspm)",
    "records": "fewer private records or --others rows",
    "workers": "--jobs ",
    "max_seconds": "--max-seconds",
    "max_memory": "--max-memory",
}
#: the exit code of each verdict of ``verify instance`` (2 is bad input, as for every command)
EXIT_CODES = {"verified": 0, "exceeds": 1, "inconclusive": 3}


def _backend_spec(backend: str | None, hypothesis_class: str) -> tuple[str | None, dict[str, Any]]:
    """``--backend NAME[:key=value,...]`` split into the backend's name and options, as ``oraclepriv erm`` does;
    the options are validated by the backend itself, before any file is read, so that a bad one is a one-line
    error naming --backend, the spec and the option. A time limit is refused: the verifier needs every oracle
    call solved exactly, and this command has no --time-limit to give one."""
    if backend is None:
        return None, {}
    from oraclepriv.backends import parse_backend_spec

    try:
        name, options = parse_backend_spec(backend)
    except ValueError as exc:
        fail(f"--backend {backend!r}: {exc}")
    if "time_limit" in options:
        fail(
            f"--backend {backend!r}: sets time_limit, which verify does not take (every oracle call must be solved "
            "exactly)"
        )
    restriction = backend_oracle(backend, hypothesis_class, time_limit_flag=False).restriction()
    if restriction is not None:  # the learner would name its parameters (backend=, on_uncertified=)
        fail(
            f"{restricted_backend_problem(backend, restriction, hypothesis_class)}; verify needs an exact backend "
            "(omit --backend: one is chosen per problem)"
        )
    return name, options


def _check_instance_options(
    algorithm: VerifyAlgorithm,
    epsilon: float,
    delta: float | None,
    grid: str | None,
    mode: str,
    draws: int | None,
    hypothesis_class: str,
) -> None:
    """The options of ``verify instance``, named by their flags, before any file is read: values in range, and
    options that do not apply to the algorithm or mode refused rather than silently ignored."""
    from oraclepriv.learners import RRSPM, RSPM
    from oraclepriv.verify.verifier import MODES

    check_epsilon(epsilon)
    check_delta(delta)
    if mode not in MODES:
        fail(f"--mode must be one of {list(MODES)}; got {mode!r}")
    if draws is not None:
        if mode != "sampled":
            fail(f"--draws {draws} does not apply to --mode {mode} (it counts the noise draws of --mode sampled)")
        check_at_least(draws, 1, "--draws")
    if algorithm is VerifyAlgorithm.rspm and delta is not None:
        fail(f"--delta {delta:g} does not apply to --algorithm rspm (Laplace noise, pure epsilon-DP)")
    if algorithm is VerifyAlgorithm.rrspm and grid is not None:
        fail(f"--grid {grid!r} does not apply to --algorithm rrspm (it takes --public points, not a grid)")
    if algorithm is VerifyAlgorithm.rrspm and delta and mode == "exact":
        fail(
            f"--delta {delta:g} selects RRSPM's Gaussian variant, which --mode exact cannot verify (it integrates "
            "Laplace noise): add --mode sampled"
        )
    supported = (RSPM if algorithm is VerifyAlgorithm.rspm else RRSPM).supported_classes
    if hypothesis_class not in supported:
        fail(
            f"--hypothesis-class {hypothesis_class!r} is not supported by --algorithm {algorithm.value}; "
            f"expected one of {list(supported)}"
        )


def _check_limits(max_seconds: float | None, max_memory: str | None) -> int | None:
    """--max-seconds (a number > 0; inf for none) and --max-memory (a size such as 2G) named by their flags;
    returns --max-memory in bytes (None: the verifier's default)."""
    from oraclepriv.verify.budget import parse_bytes

    if max_seconds is not None and not (max_seconds > 0):  # NaN is refused too
        fail(f"--max-seconds must be a number > 0 (inf for no limit); got {max_seconds!r}")
    if max_memory is None:
        return None
    try:
        return parse_bytes(max_memory)
    except ValueError as exc:
        fail(f"--max-memory {max_memory!r}: {exc}")


def _same_features(names: tuple[str, ...], expected: tuple[str, ...], option: str, path: Path, private: Path) -> None:
    if names != expected:
        raise ValueError(
            f"{option} {str(path)!r} has the feature columns {list(names)} but the data file {str(private)!r} has "
            f"{list(expected)}; they must be the same"
        )


@app.command("instance")
def verify_instance(
    private: Annotated[Path, typer.Argument(help="CSV of private records: feature columns and label column y.")],
    algorithm: Annotated[
        VerifyAlgorithm, typer.Option("--algorithm", help="rrspm (Algorithm 4) or rspm (Algorithm 5).")
    ],
    public: Annotated[
        Path | None, typer.Option("--public", help="rrspm: CSV of public points (at most 5 for exact mode).")
    ] = None,
    hypothesis_class: Annotated[
        str, typer.Option("--hypothesis-class", help="threshold | stump | halfspace (rspm: threshold | stump).")
    ] = "halfspace",
    epsilon: Annotated[float, typer.Option("--epsilon")] = 1.0,
    delta: Annotated[
        float | None,
        typer.Option("--delta", help="rrspm: in [0, 1); a delta > 0 selects the Gaussian variant (sampled mode)."),
    ] = None,
    grid: Annotated[
        str | None, typer.Option("--grid", help='rspm: the grid, e.g. "0,1,2,3;0,1" (values per feature).')
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            help="Exact backend for c_D(L) and the learner (default: per problem), optionally with options: "
            "scip-bc:workers=2.",
        ),
    ] = None,
    mode: Annotated[str, typer.Option("--mode", help="exact (Laplace) | sampled.")] = "exact",
    draws: Annotated[
        int | None,
        typer.Option("--draws", help=f"sampled mode: noise vectors per cost vector (default {DEFAULT_DRAWS:,})."),
    ] = None,
    others: Annotated[
        Path | None, typer.Option("--others", help="CSV of extra candidate records for the neighbour family.")
    ] = None,
    max_seconds: Annotated[
        float | None,
        typer.Option(
            "--max-seconds",
            help="Refuse a run estimated to take longer (checked before it starts; default one hour; inf: no limit).",
        ),
    ] = None,
    max_memory: Annotated[
        str | None,
        typer.Option(
            "--max-memory",
            help="Refuse a run estimated to need more memory, e.g. 2G or 512M (default: half of the available).",
        ),
    ] = None,
    jobs: Jobs = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sampled mode.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
) -> None:
    """The privacy loss of RRSPM / RSPM on one small instance, over every neighbour, against its claim.

    Exit codes: 0 verified; 1 exceeds (the claim is exceeded beyond the error bars);
    3 inconclusive (sampled mode: the interval contains the claim, which the run
    neither refutes nor supports; more --draws may decide it); 2 bad input.
    """
    from oraclepriv.learners import RRSPM, RSPM
    from oraclepriv.noisy_argmin.laws import MAX_EXACT_POINTS
    from oraclepriv.verify.verifier import TooLargeError, verify_learner

    check_seed(seed)
    check_parallel_options(jobs, parallel_backend, scheduler)
    _check_instance_options(algorithm, epsilon, delta, grid, mode, draws, hypothesis_class)
    memory_limit = _check_limits(max_seconds, max_memory)
    backend_name, backend_options = _backend_spec(backend, hypothesis_class)
    check_input_file(private, "data file")
    check_input_file(public, "--public")
    check_input_file(others, "--others")
    delta = 0.0 if delta is None else delta
    try:
        data = read_csv_problem(private)
        if data.weights is not None:
            raise ValueError(
                f"data file {str(private)!r} has a 'weight' column; the learners verified take unweighted data"
            )
        if delta and delta >= 1.0 / len(data.y):
            raise ValueError(
                f"--delta {delta:g} is >= 1/n = {1.0 / len(data.y):.3g} for the n={len(data.y)} records of "
                f"{str(private)!r}: use --delta < 1/n"
            )
        check_threshold_features(hypothesis_class, private, data.feature_names)
        extra = None
        if others is not None:
            other = read_csv_problem(others, require_labels=False)
            _same_features(other.feature_names, data.feature_names, "--others", others, private)
            extra = other.X
        if algorithm is VerifyAlgorithm.rspm:
            if public is not None:
                raise ValueError(
                    "--algorithm rspm uses its identification set, not public points: do not pass --public"
                )
            if grid is None:
                raise ValueError("--algorithm rspm needs --grid (the data domain)")
            values = _parse_grid(grid)
            _check_grid_data(grid, values, data, private, hypothesis_class, mode)
            learner = RSPM(
                epsilon=epsilon,
                hypothesis_class=hypothesis_class,
                grid=values,
                backend=backend_name,
                backend_options=backend_options,
            )
            Z = None
        else:
            if public is None:
                raise ValueError("--algorithm rrspm needs --public (the public points)")
            points = read_csv_problem(public, require_labels=False)
            _same_features(points.feature_names, data.feature_names, "--public", public, private)
            Z = points.X
            if mode == "exact" and Z.shape[0] > MAX_EXACT_POINTS:  # RRSPM's noisy points: every public row
                fail(
                    f"--public {str(public)!r} has {Z.shape[0]} rows, each a noisy point: too large for exact mode "
                    f"(--mode exact handles at most {MAX_EXACT_POINTS}); use --mode sampled or fewer points"
                )
            oracle_params: dict[str, Any] = {
                "hypothesis_class": hypothesis_class,
                "backend": backend_name,
                "backend_options": backend_options,
            }
            learner = (
                RRSPM(epsilon=epsilon, delta=delta, noise="gaussian", **oracle_params)
                if delta > 0
                else RRSPM(epsilon=epsilon, **oracle_params)
            )
    except (ValueError, ImportError) as exc:
        fail(str(exc))
    with parallel(jobs, parallel_backend, scheduler) as environment, progress_bar(quiet=as_json) as bar:
        phases: dict[str, Any] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in phases:
                phases[phase] = bar.phase(phase)
            phases[phase](done, total)

        try:
            limits: dict[str, Any] = {} if max_seconds is None else {"max_seconds": max_seconds}
            result = verify_learner(
                learner,
                data.X,
                data.y,
                Z,
                backend=backend_name,
                backend_options=backend_options,
                others=extra,
                mode=mode,
                draws=DEFAULT_DRAWS if draws is None else draws,
                seed=seed,
                n_jobs=environment.n_jobs,
                max_memory=memory_limit,
                progress=progress,
                **limits,
            )
        except TooLargeError as exc:
            fail(exc.render(FLAG_NAMES))
        except (ValueError, ImportError, RuntimeError) as exc:
            fail(str(exc))
    row = result.to_dict()
    if as_json:
        typer.echo(to_json(row, sort_keys=True))
    else:
        _show(row)
        typer.echo(f"  worst neighbour: {row['worst_neighbour']}; worst outcome: {row['worst_outcome']}")
        typer.echo(
            f"  numerical error of the exact law: {row['numerical_error']:.2g}; brute-force cross-checks: "
            f"{row['brute_force_checked']}; {row['seconds']:.1f} s"
        )
        typer.echo(f"  {row['verdict']}: {row['verdict_reason']}")
    if EXIT_CODES[result.verdict]:
        raise typer.Exit(code=EXIT_CODES[result.verdict])


@app.command("suite")
def verify_suite(
    quick: Annotated[bool, typer.Option("--quick", help="Fewer cases and draws (a smoke run).")] = False,
    jobs: Jobs = None,
    seed: Seed = 0,
    out: JsonOut = None,
    report: Annotated[
        Path | None,
        typer.Option("--report", help="Also write a Markdown report (for results/) to this file.", parser=output_path),
    ] = None,
    parallel_backend: ParallelBackend = None,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
) -> None:
    """Every subject and near-miss control of the verification suite; exit 1 if any verdict is unexpected."""
    from oraclepriv.bench.report import write_json
    from oraclepriv.verify.report import markdown_report
    from oraclepriv.verify.suite import explicit_law_rows, run_suite

    check_seed(seed)
    check_parallel_options(jobs, parallel_backend, scheduler)
    check_out_and_report(out, report)
    with parallel(jobs, parallel_backend, scheduler) as environment, progress_bar(quiet) as bar:
        rows = run_suite(
            quick=quick, n_jobs=environment.n_jobs, seed=seed, on_row=_show, progress=bar.phase("verified cases")
        )
        explicit = explicit_law_rows(seed=seed, progress=bar.phase("explicit laws"))
    for row in explicit:
        typer.echo(
            f"{row['class']:<30} {row['subject']:<60} neighbours={row['n_neighbours']:<4} loss={row['loss']:.6f} "
            f"{row['verdict'].upper()} expected={row['expected']}"
        )
    if out is not None:
        write_json(out, {"noisy_argmin": rows, "explicit_laws": explicit})
    if report is not None:
        command = (
            f"oraclepriv verify suite{' --quick' if quick else ''}{parallel_note(environment)} --seed {seed} "
            f"--report {report}"
        )
        report.write_text(markdown_report(rows, command, explicit), encoding="utf-8")
    bad = [r for r in rows + explicit if not r["ok"]]
    if bad:
        typer.echo(f"UNEXPECTED: {len(bad)} verdict(s) differ from the expected ones", err=True)
        raise typer.Exit(code=1)
