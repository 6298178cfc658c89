"""``oraclepriv erm``: one exact, certified weighted 0-1 ERM call on a CSV file."""

from pathlib import Path
from typing import Annotated

import typer

from oraclepriv.cli.common import (
    HypothesisClass,
    check_backend_options,
    check_backend_time_limit,
    check_input_file,
    check_threshold_features,
    check_time_limit,
    fail,
)
from oraclepriv.io import read_csv_problem, to_json

#: the exit code when the backend answers with status "error" (2 is bad input, as for every command)
EXIT_BACKEND_ERROR = 1


def erm(
    data: Annotated[
        Path, typer.Argument(help="CSV: header; feature columns; label column y in {0,1}; optional weight column.")
    ],
    hypothesis_class: Annotated[HypothesisClass, typer.Option("--hypothesis-class", help="Hypothesis class.")],
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            help="Oracle backend (default: chosen per problem), optionally with options: scip-bc:workers=2.",
        ),
    ] = None,
    time_limit: Annotated[
        float | None, typer.Option("--time-limit", help="Time limit in seconds (MIP backends).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Solve one weighted 0-1 ERM problem exactly and report whether the answer is certified.

    Exit code 0 when the backend answered (certified or not: a time limit leaves a best-known answer),
    1 when it answered with status "error" (the reason is printed, or is ``details.error`` in the JSON)."""
    from oraclepriv.backends import parse_backend_spec
    from oraclepriv.oracle import make_oracle

    check_input_file(data, "data file")
    check_time_limit(time_limit)
    check_backend_time_limit(backend, time_limit)
    check_backend_options(backend)
    try:
        problem = read_csv_problem(data)
        check_threshold_features(hypothesis_class.value, data, problem.feature_names)
        options = {} if time_limit is None else {"time_limit": time_limit}
        name = None
        if backend is not None:
            name, extra = parse_backend_spec(backend)
            options.update(extra)
        oracle = make_oracle(hypothesis_class.value, backend=name, **options)
        result = oracle.solve(problem.X, problem.y, problem.weights, caller="cli", step="erm")
    except (ValueError, ImportError) as exc:
        fail(str(exc))
    summary = result.to_dict()
    summary["data"] = str(data)
    summary["features"] = list(problem.feature_names)
    if as_json:
        typer.echo(to_json(summary))
    else:
        _print_summary(summary)
    if summary["status"] == "error":
        raise typer.Exit(code=EXIT_BACKEND_ERROR)


def _print_summary(summary: dict) -> None:
    """The answer as aligned lines (what ``--json`` gives as one object)."""
    typer.echo(f"class       {summary['class']}  (n={summary['n']}, d={summary['d']}, backend={summary['backend']})")
    typer.echo(f"hypothesis  {to_json(summary['hypothesis'], sort_keys=True)}")
    typer.echo(f"objective   {summary['objective']:.12g}   bound {summary['bound']:.12g}")
    typer.echo(f"status      {summary['status']}   certified={summary['certified']}   {summary['seconds']:.3f} s")
    if summary.get("restriction"):  # meets_bound without certified: say over what the bound holds
        typer.echo(f"restricted  the bound holds over {summary['restriction']} only")
    reason = summary.get("details", {}).get("error")
    if reason:  # a backend that answered with status "error" (or stopped early) says why
        typer.echo(f"reason      {reason}")
