"""`buraco-log demo`: the whole job on built-in defaults, for a first look.

Simulate one match with heuristic bots and provably fair deals, write it as a sealed log,
replay and audit every event, and print the match summary and the verdict.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from buraco_log import audit
from buraco_log.log import write_log
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from cli.common import EXIT_FINDINGS, guarded
from cli.dispute_cmd import render_summary, render_verdict


@guarded
def demo(
    rules: Annotated[str, typer.Option("--rules", help="Rules preset.")] = "biriba",
    players: Annotated[int, typer.Option("--players", help="Number of players.")] = 4,
    seed: Annotated[str, typer.Option("--seed", help="Seed of the simulated match.")] = "demo",
    out: Annotated[Path | None, typer.Option("--out", "-o",
                                             help="Keep the log here (default: a temp dir).")
                   ] = None,
) -> None:
    """Simulate a match, write it, replay and audit it, and print the result."""
    r = preset(rules)
    events = simulate_match(r, players, seed=seed)
    with tempfile.TemporaryDirectory(prefix="buraco-log-demo-") as tmp:
        path = out if out is not None else Path(tmp) / f"{rules}-{players}p.blog"
        write_log(path, events)
        summary = audit.show_log(path)
        verdict = audit.audit_log(path)
        for line in render_summary(summary):
            typer.echo(line)
        typer.echo("")
        for line in render_verdict(verdict):
            typer.echo(line)
        if out is not None:
            typer.echo(f"\nlog kept at {path}; try `buraco-log replay {path} --at 40`")
    if not verdict.ok:
        raise typer.Exit(EXIT_FINDINGS)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
