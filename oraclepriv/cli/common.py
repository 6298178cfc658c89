"""What the commands share: the one-line error exit, argument checks, and options that read alike."""

from pathlib import Path
from typing import Annotated, NoReturn

import typer

#: ``--out FILE`` of the commands that print rows
JsonOut = Annotated[Path | None, typer.Option("--out", help="Also write the rows as JSON to this file.")]
#: ``--report FILE`` of the commands that print rows
MarkdownOut = Annotated[
    Path | None, typer.Option("--report", help="Also write a Markdown table (for docs/) to this file.")
]
Seed = Annotated[int, typer.Option("--seed")]


def fail(message: str) -> NoReturn:
    """Bad input: one line on stderr, exit code 2 (never a traceback)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def check_seed(seed: int) -> None:
    """Seeds feed numpy's SeedSequence, which takes non-negative integers only."""
    if seed < 0:
        fail(f"--seed must be >= 0; got {seed}")
