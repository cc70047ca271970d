"""`buraco-log demo`: the whole job on built-in defaults, for a first look.

Simulate one match with heuristic bots and provably fair deals, write it as a sealed log that
is kept under a name it prints, replay and audit every event, print the match summary and the
verdict, and end with the next commands to try on that log.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Final

import typer

from buraco_log import audit, jsonl, log
from buraco_log.errors import LogFormatError
from buraco_log.events import AnyEvent
from buraco_log.log import write_log
from buraco_log.outpaths import no_directory, rename_target
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from cli.common import (
    EXIT_FINDINGS,
    EXIT_USAGE,
    Format,
    OutAlias,
    emit_json,
    fail,
    guarded,
)
from cli.dispute_cmd import render_summary, render_verdict
from cli.paths import directory_name, not_a_file, plural
from cli.rules_cmd import load_rules
from cli.safetext import terminal_safe
from cli.simulate_cmd import check_players, check_seed


def _free_path(directory: Path, stem: str) -> Path:
    """`stem.blog` in ``directory``, or `stem-2.blog`, ...: a demo never replaces a file."""
    path = directory / f"{stem}.blog"
    n = 2
    while path.exists():
        path = directory / f"{stem}-{n}.blog"
        n += 1
    return path


def _identity(path: Path) -> tuple[int, int] | None:
    """The file ``path`` names (through a link, as ``--overwrite`` replaces it), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _check_default_name(name: str, option: str, players: int, *, as_json: bool) -> None:
    """The default log name holds the rules' name: one of 100 CJK characters is over the 255
    bytes a file name may have (the match was played, then 'File name too long', exit 1)."""
    size = len(f"demo-{name}-{players}p-99.blog.tmp".encode("utf-8", "surrogatepass"))
    if size > 255:
        raise fail(f"--rules {option}: the name {name!r} is too long to name the demo's log "
                   f"({size} bytes in UTF-8 with the suffix; at most 255): give -o FILE",
                   EXIT_USAGE, as_json=as_json)


def next_steps(path: Path) -> list[str]:
    """The commands a newcomer tries next on the demo's log (the conversion to the other form:
    a JSON Lines log's suggested `-o` was its own name)."""
    other = path.with_suffix(".blog" if log.is_jsonl_name(path) else ".jsonl")
    return [
        f"buraco-log show {path}",
        f"buraco-log replay {path} --at 40",
        f"buraco-log explain {path} --at 40",
        f"buraco-log audit {path}",
        f"buraco-log convert {path} -o {other}",
    ]


def _say(line: str = "") -> None:
    """A line of the demo's story: the path is the user's and names come from the rules file,
    so either may hold terminal controls."""
    typer.echo(terminal_safe(line))


@guarded
def demo(
    rules: Annotated[str, typer.Option(
        "--rules", help="Rules preset, or a house-rules TOML file.",
        autocompletion=lambda: list(PRESETS))] = "biriba",
    players: Annotated[int, typer.Option("--players", help="Number of players.")] = 4,
    seed: Annotated[str, typer.Option("--seed", help="Seed of the simulated match.")] = "demo",
    output: Annotated[str | None, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Write the log here, as JSON Lines if the name ends in .jsonl (default: "
             "demo-RULES-Np.blog in the current directory, never replacing a file).")] = None,
    format: Annotated[Format, typer.Option("--format", "-f",
                                           help="table for people, json for programs.")
                      ] = Format.table,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace OUTPUT if it exists.")] = False,
    output_alias: OutAlias = None,
) -> None:
    """Simulate a match, write it, replay and audit every move, and print the result."""
    js = format is Format.json
    output = output if output_alias is None else output_alias
    r = load_rules(rules, option="--rules", as_json=js)
    check_players(r, players, as_json=js)
    check_seed(seed, as_json=js)  # bytes that are not UTF-8: an internal error, hashed
    if output == "":  # an unset variable: Path("") is ".", and it said ".: is a directory"
        raise fail("--output '': an empty name; name the log's file", EXIT_USAGE, as_json=js)
    if output is not None and (refusal := directory_name(output, "the log's file")):
        raise fail(refusal, EXIT_USAGE, as_json=js)  # Path drops the '/' and wrote `out`
    out = Path(output) if output is not None else None
    if out is not None:
        if str(out) == "-":  # the report is on stdout: the log needs a file of its own
            raise fail("--output -: the demo prints its report on standard output; name a file "
                       "for the log", EXIT_USAGE, as_json=js)
        if out.is_dir():
            raise fail(f"{out}: is a directory; name the log's file", EXIT_USAGE, as_json=js)
        if overwrite and (kind := not_a_file(out)):
            raise fail(f"{out}: is {kind}; --overwrite replaces a file, not {plural(kind)}",
                       EXIT_USAGE, as_json=js)
        if os.path.lexists(out) and not overwrite:
            raise fail(f"{out}: exists; the demo does not replace files (--overwrite replaces "
                       "it)", EXIT_USAGE, as_json=js)
        if not (out.parent or Path(".")).is_dir():  # in the words of every other writer
            raise fail(f"{out}: {no_directory(out.parent)}", EXIT_USAGE, as_json=js)
    if out is None:
        _check_default_name(r.name, rules, players, as_json=js)
    path = out if out is not None else _free_path(Path(), f"demo-{r.name}-{players}p")
    before = _identity(path)  # --overwrite: the file there, to tell whether it was replaced
    written = False
    try:
        events = simulate_match(r, players, seed=seed)
        _write(path, events, as_json=js)
        written = True
        summary = audit.show_log(path)
        verdict = audit.audit_log(path)
    except KeyboardInterrupt:  # it said "interrupted" alone: was a log kept, and is it whole?
        from cli.signals import stopped_by

        how, status = stopped_by()
        if written or _identity(path) not in (before, None):  # placed whole, then stopped
            left = ("after the log was written whole: it is kept; the replay and audit did "
                    "not finish")
        elif before is not None:
            left = "before the log was written: the file there was left as it was"
        else:
            left = "before the log was written: no log was kept"
        raise fail(f"{path}: {how} {left}", status, as_json=js) from None
    if format is Format.json:
        emit_json({"log": str(path), "rules": r.name, "players": players, "seed": seed,
                   "events": len(events), "summary": summary, "audit": verdict,
                   "next": next_steps(path)})
    else:
        _say(f"Simulated a {players}-player {r.name} match with heuristic bots and provably "
             f"fair deals ({len(events)} events), wrote it to {path}, then replayed and "
             "audited every move.")
        _say()
        for line in render_summary(summary):
            _say(line)
        _say()
        for line in render_verdict(verdict):
            _say(line)
        _say()
        _say(f"The log is kept at {path}. Try next:")
        for line in next_steps(path):
            _say(f"  {line}")
    if not verdict.ok:
        raise typer.Exit(EXIT_FINDINGS)


def _write(path: Path, events: list[AnyEvent], *, as_json: bool = False) -> None:
    """The log (JSON Lines for a ``.jsonl`` name) written whole beside ``path``, then put in
    its place, so a failed write (a full disk) leaves what was there, or nothing: written in
    place, a header alone was left. A new name is linked, never renamed over, so a file made
    there meanwhile is not replaced. ``--overwrite`` of a symbolic link replaces the file it
    names and keeps the link, as every other output (docs/cli.md's conventions)."""
    replace = os.path.lexists(path)
    target = rename_target(path) if replace else path
    try:
        folder = tempfile.mkdtemp(prefix=f".{log.temp_stem(target.name)}.",
                                  dir=target.parent or Path("."))
    except OSError as exc:  # a read-only directory: it named the temporary folder
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    lock = None
    try:
        temp = Path(folder) / target.name
        binary = Path(folder) / "log.blog"
        try:
            if replace:  # a log a writer holds is not replaced under it
                lock = log.lock_to_replace(target, path)
            if log.is_jsonl_name(path):  # JSON Lines, as every reader takes the name: the
                write_log(binary, events)  # checked binary log, converted whole
                jsonl.binary_to_jsonl(binary, temp)
            else:
                write_log(temp, events)
            if replace:  # --overwrite
                os.replace(temp, target)
            else:  # a link, or a rename that never replaces where no hard link is made
                log.place_new(str(temp), str(path))
        except FileExistsError:  # made between the look and the link: never replaced
            raise fail(f"{path}: exists; the demo does not replace files (--overwrite "
                       "replaces it)", EXIT_USAGE, as_json=as_json) from None
        except log.NotDurableError as exc:  # the temporary's, in a folder that is removed
            raise exc.as_failed(str(path)) from None
        except (LogFormatError, OSError) as exc:  # a full disk: named as asked, in the words
            raise _as_asked(exc, path, temp, binary) from None  # of convert's failed write
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if lock is not None:
            lock.release()  # the new file is in place, or the old one stays
    log.durable(str(target), "written", str(path))  # as convert's: the new name survives a crash


_FAILED: Final = "writing the new file failed"
"""What convert says of a new file it could not write; the demo says it too."""


def _as_asked(exc: LogFormatError | OSError, path: Path, *temps: Path) -> Exception:
    """A failed write on a temporary file as the error of ``path``, the file asked for: its
    byte, seq and "the log ends whole at byte 20" were the temporary's, which is removed."""
    for temp in temps:
        if isinstance(exc, LogFormatError) and exc.path == str(temp) and \
                exc.message.startswith(f"{_FAILED}: "):  # the JSON Lines writer's own words
            return type(exc)(exc.message, path=str(path), kind=exc.kind)
        mapped = log.temp_error(exc, str(temp), str(path), _FAILED)
        if mapped is not None:
            return mapped
    return exc


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
