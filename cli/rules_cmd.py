"""`buraco-log rules list|show`."""

from __future__ import annotations

from typing import Annotated

import msgspec
import typer

from buraco_log.rules import PRESET_SOURCES, PRESETS, Rules, load_toml, preset
from cli.common import CONTEXT, Format, emit_json, guarded

app = typer.Typer(help="The rules presets and house rules.", no_args_is_help=True,
                  context_settings=CONTEXT)


def _summary(r: Rules) -> dict[str, object]:
    return {
        "name": r.name,
        "players": "/".join(map(str, r.player_counts)),
        "jokers": r.jokers,
        "hand": r.hand_size,
        "morto": ("indirect" if not r.morto_direct else "yes") if r.morto else "no",
        "upcard": r.initial_upcard,
        "pile": r.pile_pickup,
        "target": r.target_score,
        "source": PRESET_SOURCES.get(r.name, ""),
    }


@app.command("list")
@guarded
def list_presets(
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """List the rules presets."""
    rows = [_summary(r) for r in PRESETS.values()]
    if format is Format.json:
        emit_json(rows)
        return
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    typer.echo("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    for row in rows:
        typer.echo("  ".join(str(row[c]).ljust(widths[c]) for c in cols).rstrip())


@app.command("show")
@guarded
def show(
    name: Annotated[str, typer.Argument(help="A preset name, or a house-rules TOML file.")],
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Show every knob of a preset or house-rules file."""
    rules = load_toml(name) if name.endswith(".toml") else preset(name)
    data = msgspec.to_builtins(rules)
    if format is Format.json:
        emit_json(data)
        return
    for key, value in data.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                typer.echo(f"{key}.{sub:<24} {v}")
        else:
            typer.echo(f"{key:<31} {value}")
