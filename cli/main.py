"""The `buraco-log` application: one typer app, one module per command group."""

from __future__ import annotations

from typing import Annotated

import typer

from cli import archive_cmd, demo_cmd, dispute_cmd, log_cmd, rules_cmd, simulate_cmd
from cli.common import State

app = typer.Typer(
    name="buraco-log",
    help="Replay, audit and query Buraco match logs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def main(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    State.debug = debug


app.add_typer(rules_cmd.app, name="rules")
log_cmd.register(app)
dispute_cmd.register(app)
archive_cmd.register(app)
demo_cmd.register(app)
simulate_cmd.register(app)


def run() -> None:
    app()


if __name__ == "__main__":
    run()
