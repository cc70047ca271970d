"""`buraco-log convert|schema|seal|repair|verify`: the match log's own commands."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from buraco_log import jsonl, log, schemafile
from cli.common import EXIT_USAGE, Format, emit_json, fail, guarded


class Target(StrEnum):
    jsonl = "jsonl"
    binary = "binary"


LogArg = Annotated[Path, typer.Argument(help="A match log.", show_default=False)]


@guarded
def convert(
    source: LogArg,
    output: Annotated[Path, typer.Option("--output", "-o", help="The new file.")],
    to: Annotated[Target | None, typer.Option(
        "--to", help="The form to write (default: by the new file's name, .jsonl or .blog).",
        show_default=False)] = None,
    validate: Annotated[
        bool, typer.Option("--validate", help="Check every event against the rules (binary).")
    ] = False,
) -> None:
    """Convert a log between the binary and JSON Lines forms, losslessly."""
    if to is None:
        to = {".jsonl": Target.jsonl, ".blog": Target.binary}.get(output.suffix.lower())
        if to is None:
            raise fail(f"{output}: say --to jsonl or --to binary (the name ends in neither "
                       ".jsonl nor .blog)", EXIT_USAGE)
    info = jsonl.convert(source, output, to.value, validate=validate)
    typer.echo(f"{output}: {info.events} events, head {info.head}")


@guarded
def schema(
    directory: Annotated[Path, typer.Option("--dir", "-d", help="Where to write.")] = Path(
        "schema"
    ),
    check: Annotated[
        bool, typer.Option("--check", help="Only report files that are out of date.")
    ] = False,
) -> None:
    """Write the JSON Schema of every event into schema/."""
    if check:
        names = schemafile.stale(directory)
        if names:
            raise fail(f"{directory}: out of date: {', '.join(names)} (run `{schemafile.COMMAND}`)")
        typer.echo(f"{directory}: up to date")
        return
    changed = schemafile.write(directory)
    typer.echo(f"{directory}: {'wrote ' + ', '.join(changed) if changed else 'up to date'}")


@guarded
def seal(path: LogArg) -> None:
    """Add the integrity chain to a log (rewritten in place; the head digest is kept)."""
    info = log.seal(path)
    typer.echo(f"{path}: sealed, {info.events} events, head {info.head}")


@guarded
def repair(
    path: LogArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would be cut.")] = False,
    backup: Annotated[
        bool, typer.Option("--backup/--no-backup", help="Keep the original bytes in LOG.bak.")
    ] = True,
) -> None:
    """Cut a torn tail (an incomplete last record) off a log, keeping a backup."""
    if dry_run:
        info = log.verify(path)
        if info.torn is None:
            typer.echo(f"{path}: nothing to repair ({info.events} events)")
        elif info.torn.offset < log.HEADER_SIZE:  # what the real run says, without running it
            raise fail(f"{path}, byte 0: the file header itself is incomplete: there are no "
                       "events to keep; delete the file")
        else:
            t = info.torn
            typer.echo(
                f"{path}: would cut {t.size} bytes at byte {t.offset} ({t.reason}); "
                f"{info.events} events kept"
            )
        return
    report = log.repair(path, backup=backup)
    if report is None:
        typer.echo(f"{path}: nothing to repair")
        return
    kept = f"; original kept in {report.backup}" if report.backup else ""
    typer.echo(
        f"{path}: cut {report.cut_bytes} bytes at byte {report.cut_offset} "
        f"({report.reason}); {report.events_kept} events kept{kept}"
    )


@guarded
def verify(
    path: LogArg,
    format: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Check a log's framing, checksums, seqs and integrity chain (not the rules)."""
    info = log.verify(path)
    if info.torn is not None:  # an error like damage: one line on stderr, stdout empty
        advice = ("no event is intact: delete the file" if info.torn.offset < log.HEADER_SIZE
                  else f"the {info.events} events before it are intact; `buraco-log repair` "
                  "cuts it off")
        raise fail(f"{path}, byte {info.torn.offset}: torn tail: {info.torn.reason} ({advice})")
    if format is Format.json:
        emit_json(info)
    else:
        state = "sealed" if info.sealed else "unsealed (no integrity chain; `buraco-log seal`)"
        typer.echo(
            f"{path}: {info.events} events in {info.segments} segments, {state}, "
            f"format version {info.version}, head {info.head}"
        )


def register(app: typer.Typer) -> None:
    """Add these commands to the top level of ``app``."""
    for command in (convert, schema, seal, repair, verify):
        app.command()(command)
