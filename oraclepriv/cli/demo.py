"""``oraclepriv demo``: the toolkit end to end (:mod:`oraclepriv.demo`), ending with a picture."""

from pathlib import Path
from typing import Annotated

import typer

from oraclepriv.cli.common import check_output_file, check_seed, create_output_folders, fail, output_path


def demo(
    seed: Annotated[int, typer.Option("--seed", help="Random seed (>= 0).")] = 0,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Where to write the demo's picture; its extension names the format (png, pdf, svg, ...).",
            parser=output_path,
        ),
    ] = Path("oraclepriv-demo.png"),
) -> None:
    """Exact ERM, RRSPM with its two oracle calls, and a privacy audit that catches a broken learner; ends with a picture."""
    from oraclepriv.demo import run_demo

    check_seed(seed)
    check_output_file(out, "--out", create_folders=False)
    _check_picture_format(out)
    create_output_folders(out, "--out")  # as every command's output option does
    report = run_demo(seed=seed, echo=typer.echo, figure_path=out)
    wrong = [v for v in report["audit"] if v["passed"] != (v["learner"] == "RRSPM")]
    if wrong or not report["erm"]["certified"] or report["rrspm"]["oracle_calls"] != 2:
        typer.echo("demo: UNEXPECTED result (see above)", err=True)
        raise typer.Exit(code=1)


def _check_picture_format(out: Path) -> None:
    """The picture's format, named by --out's extension, must be one matplotlib writes (checked before the demo
    runs; without an extension matplotlib would write another file, ``NAME.png``)."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    extension = out.suffix.lower().removeprefix(".")
    if extension not in formats:
        shown = f"extension {out.suffix!r}" if out.suffix else "no extension"
        fail(f"--out {str(out)!r} has {shown}; the picture's format must be one of {formats}")
