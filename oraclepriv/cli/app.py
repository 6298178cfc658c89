"""The typer app: every command and command group, in the order ``oraclepriv --help`` lists them."""

import typer

from oraclepriv.cli import audit, bench, demo, erm, experiment, instances, learn, verify

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Exact ERM oracles and oracle-efficient private learners."
)
app.command("erm")(erm.erm)
app.command("learn")(learn.learn)
app.command("demo")(demo.demo)
app.add_typer(bench.app, name="bench")
app.add_typer(instances.app, name="instances")
app.add_typer(audit.app, name="audit")
app.add_typer(experiment.app, name="experiment")
app.add_typer(verify.app, name="verify")


def main() -> None:  # pragma: no cover - console entry point
    app()
