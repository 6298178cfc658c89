"""The typer app: every command and command group, in the order ``oraclepriv --help`` lists them."""

from typing import Annotated

import typer

from oraclepriv.cli import audit, bench, demo, erm, experiment, instances, learn, model, verify, warm
from oraclepriv.cli.common import Group, configure_logging, configure_warnings

app = typer.Typer(
    cls=Group,
    add_completion=False,
    no_args_is_help=True,
    help="Exact ERM oracles and oracle-efficient private learners. Ctrl-C stops any command with exit code 130, "
    "SIGTERM with 143; a long command's output folder is then marked PARTIAL.",
)


@app.callback()
def options(
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="The library's DEBUG log on stderr (backend choices, cells dispatched, where they ran, clusters).",
        ),
    ] = False,
) -> None:
    """Exact ERM oracles and oracle-efficient private learners."""
    configure_logging(verbose)
    configure_warnings()


app.command("erm")(erm.erm)
app.command("learn", cls=learn.LearnCommand)(learn.learn)
app.command("predict")(model.predict)
app.command("score")(model.score)
app.command("demo")(demo.demo)
app.add_typer(bench.app, name="bench")
app.add_typer(instances.app, name="instances")
app.add_typer(audit.app, name="audit")
app.add_typer(experiment.app, name="experiment")
app.add_typer(verify.app, name="verify")
app.command("warm")(warm.warm)


def main() -> None:  # pragma: no cover - console entry point
    app()
