"""`buraco-log rules list|show`."""

from __future__ import annotations

from typing import Annotated

import msgspec
import typer

from buraco_log.knobs import describe, did_you_mean
from buraco_log.rules import PRESET_SOURCES, PRESETS, Rules, load_toml, preset
from cli.common import CONTEXT, EXIT_USAGE, Format, emit_json, fail, guarded

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


def _complete_rules(incomplete: str) -> list[str]:
    return [name for name in PRESETS if name.startswith(incomplete)]


def human(value: object) -> str:
    """A knob's value for people: `yes`/`no`, `2, 3, 4, 6`, never a Python repr."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return str(value)


def knob_rows(rules: Rules) -> list[tuple[str, object]]:
    """(knob, value) for every knob, nested ones as ``points.two``."""
    rows: list[tuple[str, object]] = []
    for key, value in msgspec.to_builtins(rules).items():
        if isinstance(value, dict):
            rows.extend((f"{key}.{sub}", v) for sub, v in value.items())
        else:
            rows.append((key, value))
    return rows


@app.command("show")
@guarded
def show(
    name: Annotated[str, typer.Argument(help="A preset name, or a house-rules TOML file.",
                                        autocompletion=_complete_rules)],
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Show every knob of a preset or house-rules file, with one line saying what it means."""
    if not name.endswith(".toml") and name not in PRESETS:
        raise fail(f"unknown preset {name!r}{did_you_mean(name, list(PRESETS))} "
                   f"(presets: {', '.join(PRESETS)}; or a house-rules .toml file)", EXIT_USAGE)
    rules = load_toml(name) if name.endswith(".toml") else preset(name)
    if format is Format.json:
        emit_json(msgspec.to_builtins(rules))
        return
    rows = [(knob, human(value)) for knob, value in knob_rows(rules)]
    width = max(len(knob) for knob, _ in rows)
    value_width = min(24, max(len(value) for _, value in rows))
    for knob, value in rows:
        typer.echo(f"{knob:<{width}}  {value:<{value_width}}  {describe(knob)}".rstrip())
