"""``oraclepriv instances``: the bundled benchmark instance library (:mod:`oraclepriv.instances`)."""

import os
from pathlib import Path
from typing import Annotated

import typer

from oraclepriv.cli.common import (
    HypothesisClass,
    Quiet,
    check_input_file,
    check_output_dir,
    check_output_file,
    check_threshold_features,
    check_time_limit,
    fail,
    output_path,
    progress_bar,
)

app = typer.Typer(no_args_is_help=True, help="The bundled benchmark instance library.")


@app.command("build")
def instances_build(
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Target folder (default: the repo's instances/).", parser=output_path),
    ] = None,
    time_limit: Annotated[
        float, typer.Option("--time-limit", help="Seconds per instance for the best-known objective / proved bound.")
    ] = 60.0,
    quiet: Quiet = False,
) -> None:
    """Regenerate every bundled instance and learning task from its generator and seed; rewrite the manifests.

    Best objectives and bounds proved earlier are kept when this run does worse (see build_library)."""
    from oraclepriv.instances import build_learning_tasks, build_library

    check_time_limit(time_limit)
    check_output_dir(out, "--out")
    with progress_bar(quiet) as bar:
        library = build_library(out, time_limit=time_limit, progress=bar.phase("instances"))
    for entry in library:
        typer.echo(
            f"{entry['name']:<24} {entry['class']:<10} n={entry['n']:<6} d={entry['d']}  best={entry['best_objective']}  proved={entry['proved_optimal']}"
        )
    for entry in build_learning_tasks(out):
        typer.echo(f"{entry['name']:<24} learning task: n={entry['n']} private, m={entry['m']} public, d={entry['d']}")


def _check_library_dir(directory: Path | None) -> None:
    """``--dir``: a folder holding a manifest.json (None: the bundled library), or a clear error."""
    if directory is None:
        return
    try:
        found = (directory / "manifest.json").is_file()
    except OSError as exc:  # a name too long, a folder that cannot be searched
        fail(f"--dir {str(directory)!r}: {exc.strerror or exc}")
    if not found:
        fail(f"--dir {str(directory)!r} holds no manifest.json")


@app.command("check")
def instances_check(directory: Annotated[Path | None, typer.Option("--dir")] = None) -> None:
    """Verify the manifest's fields, every instance file against its checksum, every entry against its file
    and itself (n and d, best bound <= best objective, gap, proved_optimal), and every best known objective
    against its witness (the stored hypothesis, re-scored on the instance).

    Exit 1 with one line per problem on stderr; exit 2 when the manifest cannot be read as a list of
    entries naming their files."""
    from oraclepriv.instances import check_library, check_witnesses

    _check_library_dir(directory)
    try:
        problems = check_library(directory)
        if not problems:  # the witnesses are read from the files just checked
            problems = check_witnesses(directory)
    except ValueError as exc:  # a manifest that is not what build writes
        fail(str(exc))
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise typer.Exit(code=1)
    typer.echo("all instances match the manifest; every best known objective is attained by its stored hypothesis")


@app.command("record")
def instances_record(
    rows: Annotated[Path, typer.Argument(help="rows.json of an `oraclepriv bench mip --suite library` (or real) run.")],
    directory: Annotated[
        Path | None, typer.Option("--dir", help="Library folder (default: the repo's instances/).")
    ] = None,
) -> None:
    """Merge a benchmark run's answers into the manifest: better objectives (only with the hypothesis that
    attains them, re-scored first) and higher bounds proved over the whole class replace the recorded ones;
    nothing regresses. A bad row refuses the whole file (the manifest is left as it was)."""
    import json

    from oraclepriv.instances import ManifestError, record_results

    check_input_file(rows, "rows file")
    _check_library_dir(directory)
    try:
        data = json.loads(rows.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        fail(f"rows file {str(rows)!r} is not readable JSON: {exc}")
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        fail(f"rows file {str(rows)!r} must hold a list of rows (objects), as bench mip writes rows.json")
    if not data:
        fail(f"rows file {str(rows)!r} holds no rows (an empty list): nothing recorded")
    try:
        manifest = record_results(data, directory)
    except ManifestError as exc:  # the library's manifest, not the rows, is at fault: it names itself
        fail(str(exc))
    except (ValueError, KeyError) as exc:
        fail(f"rows file {str(rows)!r}: {exc}")
    except OSError as exc:  # an instance file the manifest names is missing or unreadable
        fail(f"library {str(directory or 'instances/')!r}: {exc}")
    names = {r.get("instance") for r in data}
    for entry in manifest:
        if entry["name"] in names:
            typer.echo(
                f"{entry['name']:<24} best={entry['best_objective']} ({entry['solved_by']})  "
                f"bound={entry['best_bound']} ({entry.get('bound_by')})  proved={entry['proved_optimal']}"
            )


@app.command("list")
def instances_list() -> None:
    """List the bundled instances by the names the other commands take (export-mps NAME), with the best known
    objective, the best proved bound, and whether the instance is closed (proved optimal) or open."""
    from oraclepriv.instances import load_manifest

    for entry in load_manifest():
        state = "proved" if entry.get("proved_optimal") else f"OPEN (gap {entry.get('gap')})"
        typer.echo(
            f"{entry['name']:<30} {entry['class']:<10} n={entry['n']:<6} d={entry['d']:<3} "
            f"best={entry['best_objective']}  bound={entry.get('best_bound')}  {state}"
        )


def _own_file(name: str) -> Path | None:
    """The user's own CSV file that ``export-mps NAME`` names, or None for a library instance: a path with a
    folder part is always a file (which must exist); a bare NAME.csv is the library's instance when the
    library has one of that name, else a file in the current folder when there is one."""
    from oraclepriv.instances import load_manifest

    path = Path(name)
    if "/" in name or os.sep in name:  # "./NAME.csv" too: Path would drop its "./"
        if not path.is_file():
            fail(
                f"{name!r} does not exist (or is not a file); give a CSV file, or a name `oraclepriv instances list` prints"
            )
        return path
    library = {entry["name"] for entry in load_manifest()}
    if name.removesuffix(".csv") in library or not (name.endswith(".csv") and path.is_file()):
        return None
    return path


@app.command("export-mps")
def instances_export_mps(
    name: Annotated[
        str,
        typer.Argument(
            help="Instance name as `oraclepriv instances list` prints it (NAME.csv works too), or the path of your "
            "own CSV file in erm's format (feature columns, y, optional weight)."
        ),
    ],
    backend: Annotated[str, typer.Option("--backend", help="MPS writer: highs | scip | pyomo.")] = "highs",
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Output .mps file (default: NAME.mps in the current folder).", parser=output_path),
    ] = None,
    formulation: Annotated[
        str | None,
        typer.Option(
            "--formulation", help="Halfspaces: relaxed (default, margin-free) | margin; stumps/thresholds: staircase."
        ),
    ] = None,
    hypothesis_class: Annotated[
        HypothesisClass | None,
        typer.Option(
            "--hypothesis-class",
            help="The class of your own CSV file (default halfspace; a library instance carries its class).",
        ),
    ] = None,
) -> None:
    """Write an instance's MIP model (objective = signed loss, offset included) as MPS."""

    from oraclepriv.instances import EXPORT_BACKENDS, export_mps, load_instance
    from oraclepriv.instances.export import formulations_of
    from oraclepriv.io import read_csv_problem

    own = _own_file(name)
    if own is None and hypothesis_class is not None:
        fail(
            f"--hypothesis-class {hypothesis_class.value} applies to your own CSV file only (a library instance carries its class)"
        )
    name = own.stem if own is not None else name.removesuffix(".csv")  # the instance's file name names it too
    if not name.strip():
        fail(f"the instance name is empty (got {name!r}); `oraclepriv instances list` prints the names")
    target = out if out is not None else Path(f"{name}.mps")
    check_output_file(target, "--out")
    if backend not in EXPORT_BACKENDS:  # named by the flags here (the library's messages name its parameters)
        fail(f"--backend must be one of {list(EXPORT_BACKENDS)} for MPS export; got {backend!r}")
    try:
        problem = None
        if own is not None:
            cls = hypothesis_class.value if hypothesis_class is not None else "halfspace"
            data = read_csv_problem(own)
            check_threshold_features(cls, own, data.feature_names)
            problem = (data.X, data.y, data.weights_or_ones(), cls)
        else:
            cls = load_instance(name)[0]["class"] if formulation is not None else ""
        if formulation is not None and formulation not in formulations_of(cls):
            raise ValueError(
                f"--formulation must be one of {list(formulations_of(cls))} for the {cls} instance {name!r}; "
                f"got {formulation!r}"
            )
        info = export_mps(name, target, backend=backend, formulation=formulation, problem=problem)
    except (ValueError, ImportError) as exc:
        fail(str(exc))
    typer.echo(
        f"wrote {info['path']}  ({info['formulation']}, {info['num_cols']} columns of which {info['num_integer']} integer, "
        f"{info['num_rows']} rows, objective offset {info['objective_offset']:.12g}; writer {info['backend']})"
    )
