"""`buraco-log rules list|show`."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

import msgspec
import typer

from buraco_log.errors import RulesError
from buraco_log.knobs import describe, did_you_mean
from buraco_log.rules import PRESET_SOURCES, PRESETS, Rules, load_toml, preset
from buraco_log.safetext import bytes_escaped
from cli.common import CONTEXT, EXIT_USAGE, Format, emit_json, fail, guarded
from cli.paths import names_a_directory, why_missing
from cli.safetext import terminal_safe

app = typer.Typer(help="The rules presets and house rules.",
                  context_settings=CONTEXT)


def _summary(r: Rules) -> dict[str, object]:
    """A preset's row of RULES.md's preset table (section 11), and its target and source."""
    return {
        "name": r.name,
        "players": "/".join(map(str, r.player_counts)),
        "jokers": r.jokers,
        "hand": r.hand_size,
        "morto": ("indirect" if not r.morto_direct else "yes") if r.morto else "no",
        "morto_needs_canastra": r.morto and r.morto_needs_canastra,
        "upcard": r.initial_upcard,
        "pile": r.pile_pickup,
        "redraw": r.first_turn_redraw,
        "vulnerable": r.vulnerability,
        "target": r.target_score,
        "source": PRESET_SOURCES.get(r.name, ""),
    }


def _row(summary: dict[str, object]) -> dict[str, str]:
    """The table's row: the morto as RULES.md words it, yes/no for every switch."""
    row = {k: human(v) for k, v in summary.items() if k != "morto_needs_canastra"}
    if summary["morto"] == "indirect":
        row["morto"] = "yes, indirect only"
    elif summary["morto_needs_canastra"]:
        row["morto"] = "yes, needs canastra"
    return row


@app.command("list")
@guarded
def list_presets(
    format: Annotated[Format, typer.Option("--format", "-f",
                                           help="table for people, json for programs.")
                      ] = Format.table,
) -> None:
    """List the rules presets."""
    summaries = [_summary(r) for r in PRESETS.values()]
    if format is Format.json:
        emit_json(summaries)
        return
    rows = [_row(s) for s in summaries]
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    typer.echo("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    for row in rows:
        typer.echo("  ".join(row[c].ljust(widths[c]) for c in cols).rstrip())


def load_rules(name: str, *, option: str = "", as_json: bool = False) -> Rules:
    """The rules a user names (``rules show NAME``, ``--rules NAME``): a preset, or a house-rules
    TOML file. Either way a bad name is the user's input at fault: one line, exit 2 (a missing
    or misspelt file too, as for a log the user names)."""
    where = f"{option} {name}: " if option else ""
    if name in PRESETS:
        return preset(name)
    if not (name.lower().endswith(".toml") or os.path.sep in name or Path(name).is_file()):
        # a byte that is not UTF-8 as \xNN, as `where` and every path shows it (not \udcff)
        raise fail(f"{where}unknown preset '{bytes_escaped(name)}'"
                   f"{did_you_mean(name, list(PRESETS))} "
                   f"(presets: {', '.join(PRESETS)}; or a house-rules .toml file)", EXIT_USAGE,
                   as_json=as_json)
    path = Path(name)
    if names_a_directory(name) and os.path.lexists(path) and not os.path.isdir(name):
        # Path() drops the slash: `h.toml/` read h.toml, where open() says "Not a directory"
        raise fail(f"{name}: Not a directory (its name ends as a directory's does)", EXIT_USAGE,
                   as_json=as_json)
    if not path.exists():
        raise fail(f"{name}: {why_missing(path)} (no house-rules file)", EXIT_USAGE,
                   as_json=as_json)
    if path.is_dir():
        raise fail(f"{name}: is a directory, not a house-rules file", EXIT_USAGE,
                   as_json=as_json)
    try:
        return load_toml(path)
    except RulesError as exc:
        message = str(exc)
        if exc.field == "file":  # the file unread or not TOML: say so, not "rules field 'file'"
            unread = re.match(r"\[Errno \d+\] ", exc.detail)
            detail = exc.detail[unread.end() if unread else 0:].removesuffix(f": {name!r}")
            message = (f"{name}: cannot be read: {detail}" if unread else
                       f"{name}: not a house-rules TOML file: {detail}")
        raise fail(message, EXIT_USAGE, as_json=as_json, error=exc) from None


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
    format: Annotated[Format, typer.Option("--format", "-f",
                                           help="table for people, json for programs.")
                      ] = Format.table,
) -> None:
    """Show every knob of a preset or house-rules file, with one line saying what it means."""
    rules = load_rules(name, as_json=format is Format.json)
    if format is Format.json:
        emit_json(msgspec.to_builtins(rules))
        return
    rows = [(knob, human(value)) for knob, value in knob_rows(rules)]
    tiles = rules.rendering == "tiles"  # Burako's lines speak of tiles, 1s and 13-1-2
    width = max(len(knob) for knob, _ in rows)
    value_width = min(24, max(len(value) for _, value in rows))
    for knob, value in rows:
        # a house-rules file's name is anyone's text: never terminal controls
        typer.echo(terminal_safe(f"{knob:<{width}}  {value:<{value_width}}  "
                                 f"{describe(knob, tiles)}".rstrip()))
