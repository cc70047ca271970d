"""`buraco-log convert|schema|seal|repair|fold|verify`: the match log's own commands."""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Generator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import msgspec
import typer

from buraco_log import audit, jsonl, log, schemafile
from buraco_log import events as ev
from buraco_log.errors import WRITE_FAILURES, IllegalMoveError, LogFormatError, ReplayError
from buraco_log.outpaths import open_in_place, own_descriptor, rename_target, written_in_place
from cli.common import (
    EXIT_USAGE,
    STDIN,
    STDOUT_NAME,
    Format,
    answer_open,
    emit_json,
    error_object,
    fail,
    from_stdin,
    guarded,
    json_text,
    progress_shown,
)
from cli.paths import directory_name, named_path
from cli.safetext import terminal_safe
from cli.signals import STOPPED, stopped_by, terminate_as_interrupt
from cli.streamout import ENDING_WAIT, write_whole

P = ParamSpec("P")
R = TypeVar("R")


def _terminable(func: Callable[P, R]) -> Callable[P, R]:
    """SIGTERM and SIGHUP stop a command that writes files as Ctrl-C does, so that its
    cleanup runs: by default they ended the process at once, and a `seal` or `convert` stopped
    so left its hidden temporary file beside the log. Both through :mod:`cli.signals`, which
    records them: a handler of its own took them over, and a `kill` or a hang-up was said as
    Ctrl-C ("interrupted", 130, not "terminated (SIGTERM)", 143, or "hung up (SIGHUP)",
    129)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with terminate_as_interrupt():
            return func(*args, **kwargs)

    return wrapper


class Target(StrEnum):
    jsonl = "jsonl"
    binary = "binary"


LogArg = Annotated[Path, typer.Argument(help="A match log ('-': standard input).",
                                        show_default=False, parser=named_path)]
InPlaceArg = Annotated[Path, typer.Argument(
    help="A match log file (rewritten in place: not '-').", show_default=False,
    parser=named_path)]
FormatOpt = Annotated[Format, typer.Option("--format", "-f",
                                           help="table for people, json for programs.")]




@guarded
@_terminable
def convert(
    source: LogArg,
    new_file: Annotated[str, typer.Option(
        "--output", "-o", metavar="PATH", help="The new file ('-': standard output; the "
        "report then goes to stderr).",
        show_default=False)],
    to: Annotated[Target | None, typer.Option(
        "--to", help="The form to write (default: by the new file's name, .jsonl or .blog; "
        "for '-', the other form of the source).", show_default=False)] = None,
    validate: Annotated[
        bool, typer.Option("--validate", help="Check every event against the rules, either "
                           "way: an illegal one is refused (exit 1), nothing written.")
    ] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace OUTPUT if it exists.")] = False,
    format: FormatOpt = Format.table,
) -> None:
    """Convert a log between the binary and JSON Lines forms, losslessly.

    The source's form is read from its first bytes; the new file is written whole (a temporary
    file renamed into place), so a failed conversion leaves nothing behind."""
    as_json = format is Format.json
    if not new_file:  # an unset variable: Path("") is ".", said to be "neither .jsonl nor .blog"
        raise fail("--output '': an empty name; name the new file (or '-' for standard output)",
                   EXIT_USAGE, as_json=as_json)
    if (refusal := directory_name(new_file, "the new file")) is not None:  # Path drops '/'
        raise fail(refusal, EXIT_USAGE, as_json=as_json)
    output = Path(new_file)
    source_form = _form_of(source)
    if source_form == "binary" and (short := _short_log(source)) is not None:
        _refuse_not_started(source, short, "convert", as_json)  # before any output is made
    if to is None:
        if output == STDIN:
            to = Target.jsonl if source_form == "binary" else Target.binary
        else:
            to = (Target.jsonl if _is_jsonl_name(output) else
                  Target.binary if output.suffix.lower() == ".blog" else None)
        if to is None:
            raise fail(f"{output}: say --to jsonl or --to binary (the name ends in neither "
                       ".jsonl nor .blog)", EXIT_USAGE, as_json=as_json)
    if to.value == source_form:
        _refuse_no_log(source, source_form)  # a gzip named .jsonl is no JSON Lines log
        raise fail(f"{source}: is already a {source_form} log; nothing to convert",
                   EXIT_USAGE, as_json=as_json)
    if to is Target.binary and _a_terminal(output):  # as gzip refuses: bytes, escapes among
        raise fail(f"{_shown_output(output)}: is a terminal: a binary log is not written to one "
                   "(redirect it: > FILE.blog, or --to jsonl)", EXIT_USAGE, as_json=as_json)
    # a file's name says its form to every reader; /dev/null, a FIFO or /dev/stdout is no
    # such name (JSON Lines into them were refused: "must not be named without .blog")
    if (output != STDIN and not written_in_place(output)
            and _is_jsonl_name(output) != (to is Target.jsonl)):
        wrong = (f"a JSON Lines log's name must end in .jsonl, not "
                 f"{output.suffix or 'without a suffix'}" if to is Target.jsonl
                 else "a binary log must not be named .jsonl")
        raise fail(f"{output}: {wrong} (readers take .jsonl files as JSON Lines and every "
                   "other name as binary)", EXIT_USAGE, as_json=as_json)
    if output != STDIN and os.path.isdir(output):  # --overwrite named its temporary
        raise fail(f"{output}: is a directory; name the new file", EXIT_USAGE, as_json=as_json)
    if output != STDIN and _replaces(output, source):  # through a link: --overwrite
        # replaced the log being read with its other form, under the log's own name
        raise fail(f"{output}: is the log being read ({source}); name another file",
                   EXIT_USAGE, as_json=as_json)
    special = output != STDIN and written_in_place(output)  # /dev/null, a FIFO, /dev/stdout
    try:
        _convert(source, output, to, validate, overwrite, special, as_json)
    except ReplayError as exc:  # --validate: an illegal move; say which file and line
        named = isinstance(exc, IllegalMoveError) and exc.path is not None  # it says both
        where = str(source)
        raise fail(str(exc) if named else f"{where}, {exc}" if exc.seq is not None
                   else f"{where}: {exc}", exc.exit_status, as_json=as_json, error=exc) from None


def _a_terminal(output: Path) -> bool:
    """Whether ``output`` (``-``, or a name of this process's own output) is a terminal: a
    binary log written there was bytes on the screen, escape sequences among them."""
    if output == STDIN:
        return sys.stdout.isatty()
    fd = own_descriptor(output) if written_in_place(output) else None
    return fd is not None and os.isatty(fd)


def _shown_output(output: Path) -> str:
    return "standard output" if output == STDIN else str(output)


def _convert(source: Path, output: Path, to: Target, validate: bool, overwrite: bool,
             special: bool, as_json: bool) -> None:
    if output != STDIN and os.path.lexists(output) and not overwrite and not special:
        raise fail(f"{output}: exists (--overwrite replaces it)", EXIT_USAGE, as_json=as_json)
    if output == STDIN or special:
        folder = tempfile.mkdtemp(prefix="buraco-log-convert-")
        try:
            temp = Path(folder) / ("stdout.jsonl" if to is Target.jsonl else "stdout.blog")
            try:
                info = jsonl.convert(source, temp, to.value, validate=validate)
            except LogFormatError as exc:
                if exc.path != str(temp):
                    raise
                if isinstance(exc, log.NotDurableError):  # the temporary is removed after all
                    exc = exc.as_failed(str(temp))
                asked = str(output) if special else "the log for standard output"
                raise type(exc)(  # name what the user asked for, not the temporary
                    f"{exc.message.replace('the new file', asked)} "
                    f"(it is made in {folder} first)", path=str(output), seq=exc.seq,
                    kind=exc.kind) from None  # a failed write stays one (exit 1)
            with open(temp, "rb") as f:
                if special:  # written into, never renamed over (as root, /dev/stdout itself
                    # became a regular file)
                    try:
                        with os.fdopen(_open_written_in_place(output, as_json), "wb") as out:
                            shutil.copyfileobj(f, out)
                    except OSError as exc:  # a full disk is a failed write (1); a place
                        # that cannot be written (/sys: EACCES, /proc: ENOENT) the caller's (2)
                        raise fail(f"{output}: {exc.strerror or exc}",
                                   1 if exc.errno in WRITE_FAILURES else EXIT_USAGE,
                                   as_json=as_json) from None
                else:
                    shutil.copyfileobj(f, sys.stdout.buffer)
                    sys.stdout.flush()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if not special or _is_stdout(output):  # stdout holds the log: the report goes to
            # stderr, in the form asked (-f json said nothing at all: the head was lost)
            _report(output, to, info, as_json, on_stderr=True)
            return
    elif os.path.lexists(output):  # --overwrite: the new file is renamed over the old one
        target = rename_target(output)  # a link to the output stays a link
        if _replaces(target, source):  # looked at again, on the name renamed over: a link to
            # the log put at OUTPUT since the look in convert() had the log replaced by its
            # other form, under its own name
            raise fail(f"{output}: is the log being read ({source}); name another file",
                       EXIT_USAGE, as_json=as_json)
        # a fresh name each time: a fixed one left by a killed run blocked every later one
        temp = target.with_name(f".{log.temp_stem(target.name)}.{os.urandom(6).hex()}"
                                f".converting{log.temp_stem(target.suffix)[:16]}")
        lock = log.lock_to_replace(target, output)  # held until the new one is in place
        try:
            info = jsonl.convert(source, temp, to.value, validate=validate)
            _refuse_swapped_in(output, temp, lock)
            os.replace(temp, target)
        except log.NotDurableError as exc:  # the temporary's: removed, the old file stays
            raise exc.as_failed(str(output)) from None
        except LogFormatError as exc:
            if exc.path != str(temp):
                raise
            raise type(exc)(exc.message, path=str(output), seq=exc.seq, kind=exc.kind
                            ) from None  # the file asked for, not the temporary
        except OSError as exc:  # renaming it into place: named as asked, never the temporary
            raise log.write_error(exc, str(output), f"writing the new file failed: "
                                  f"{exc.strerror or exc}") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            if lock is not None:
                lock.release()
        log.durable(str(target), "written", str(output))  # the replacement survives a crash
    else:
        info = jsonl.convert(source, output, to.value, validate=validate)
    _report(output, to, info, as_json, on_stderr=False)


def _refuse_swapped_in(output: Path, temp: Path, lock: log.LogLock | None) -> None:
    """Refuse to rename ``temp`` over OUTPUT if another program changed either name while
    converting: another file put at OUTPUT (a log a recorder writes, renamed there) was
    replaced without the look at its lock, and a link or another file's second name put at
    the temporary's was renamed into OUTPUT's place."""
    if lock is not None and not lock.current():
        raise LogFormatError("another file was put at this name while converting, which was "
                             "not looked at (nor at its writer's lock); nothing was written, "
                             "run it again", path=str(output), kind="io")
    st = os.lstat(temp)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        raise LogFormatError(f"the new file was replaced at its temporary name ({temp.name}) "
                             "by another program, and is not put in place; nothing was "
                             "written", path=str(output), kind="io")


def _report(output: Path, to: Target, info: log.LogInfo, as_json: bool, *,
            on_stderr: bool) -> None:
    """What was written: the new file, its form, its events and head digest. On stdout, or on
    stderr (one line) when stdout holds the log itself (``-o -``, ``-o /dev/stdout``)."""
    report = {"path": str(output), "form": to.value, "events": info.events, "head": info.head}
    if as_json and not on_stderr:
        emit_json(report)
        return
    if as_json:  # one line: a reader of stderr splits it on lines
        line = json.dumps(report, sort_keys=True)
    else:
        shown = STDOUT_NAME if output == STDIN else output
        line = terminal_safe(f"{shown}: {_events(info.events)}, head {info.head}")
    typer.echo(line, err=on_stderr)


FIFO_WAIT: float = 10.0
"""Seconds ``convert -o FIFO`` waits for a program to open the FIFO for reading."""


def _open_written_in_place(output: Path, as_json: bool) -> int:
    """Open ``output`` (/dev/null, a FIFO, /dev/stdout) for writing, as
    :func:`buraco_log.outpaths.open_in_place` says: our own standard output where it stands
    (not truncated under what the shell wrote), a FIFO no program reads refused after
    ``FIFO_WAIT`` seconds (a plain open waited for ever)."""
    try:
        return open_in_place(output, FIFO_WAIT)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        raise fail(f"{output}: {exc.strerror}", as_json=as_json) from None


def _replaces(output: Path, source: Path) -> bool:
    """Whether writing ``output`` (renamed over the file its links lead to) would replace the
    file ``source`` names. (A second hard link to the source is another name: replaced, the
    source keeps its own.)"""
    return os.path.lexists(output) and os.path.realpath(output) == os.path.realpath(source)


def _is_jsonl_name(path: Path) -> bool:
    """Whether readers take ``path`` as JSON Lines: its name ends in ``.jsonl``, in these
    letters, as for `audit`, `show` and every other reader (``.JSONL`` was JSON Lines to
    verify, which then took the head digest of an empty binary log from `audit`'s reading)."""
    return path.name.endswith(".jsonl")


def _is_stdout(path: Path) -> bool:
    """Whether ``path`` is the file standard output writes to (``/dev/stdout``, a link to it)."""
    try:
        a, b = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _refuse_no_log(path: Path, form: str) -> None:
    """Raise the reader's error when ``path`` is no log of ``form`` at all (its first line or
    header says so: exit 2), before a conversion to the form it has is called needless: "is
    already a jsonl log" was said of a gzip named .jsonl. Damage further on is left to the
    conversion's own reading."""
    try:
        if form == "jsonl":
            events = iter(jsonl.JsonlReader(path))
            try:
                next(events, None)
            finally:
                if isinstance(events, Generator):
                    events.close()
        else:
            with log.Reader(str(path)) as reader:
                reader.read_header()
    except LogFormatError as exc:
        if exc.exit_status == 2 and exc.kind != "io":
            raise
    except OSError:
        pass  # said by the conversion's own reading, as before


def _form_of(path: Path) -> str:
    """``binary`` when the file begins with the log magic, else ``jsonl`` for a .jsonl name;
    anything else is read as binary, whose reader names what is wrong at byte 0."""
    with os.fdopen(log.open_log_fd(str(path)), "rb") as f:  # regular files only, no blocking
        head = f.read(len(log.MAGIC))
    if head == log.MAGIC:
        return "binary"
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"#")
    return "jsonl" if _is_jsonl_name(path) or text else "binary"


@guarded
def schema(
    directory: Annotated[Path, typer.Option("--dir", "-d", help="Where to write.",
                                            parser=named_path)] = Path("schema"),
    check: Annotated[
        bool, typer.Option("--check", help="Only report files that are out of date.")
    ] = False,
) -> None:
    """Write the JSON Schema of every event into schema/."""
    if directory.is_symlink() and not directory.exists():  # a loop said "File exists", exit
        # 1, and --check "out of date"; a link to nowhere is made, as a missing --dir is
        try:
            rename_target(directory)
        except OSError as exc:
            raise fail(f"{directory}: {exc.strerror}", EXIT_USAGE) from None
    if directory.exists() and not directory.is_dir():
        raise fail(f"{directory}: exists and is not a directory; --dir names where the schema "
                   "files go", EXIT_USAGE)
    if check:
        names = schemafile.stale(directory)
        if names:
            raise fail(f"{directory}: out of date: {', '.join(names)} (run `{schemafile.COMMAND}`)")
        typer.echo(terminal_safe(f"{directory}: up to date"))
        return
    changed = schemafile.write(directory)
    typer.echo(terminal_safe(
        f"{directory}: {'wrote ' + ', '.join(changed) if changed else 'up to date'}"))


def _in_place(path: Path, command: str, as_json: bool) -> None:
    if path == STDIN:
        raise fail(f"{command} rewrites a log file in place: give its path, not '-'", EXIT_USAGE,
                   as_json=as_json)


def _refuse_not_started(path: Path, info: log.LogInfo, nothing_to: str, as_json: bool
                        ) -> None:
    """Refuse a log torn before its header was whole that holds no event: a match not
    started, as `verify` and `audit` say it (the same predicate, :func:`audit.log_not_started`).
    There is nothing to convert, seal or repair, and nothing is written. (It said "torn tail
    ... no event is intact", exit 1, or "the file header itself is incomplete", exit 1.)"""
    if info.torn is not None and audit.log_not_started(info):
        # standard input is no file to delete
        advice = "" if from_stdin(path) else "; delete the file"
        raise fail(f"{path}: a match not started (no whole header and no event): nothing to "
                   f"{nothing_to}{advice} [log.empty]", EXIT_USAGE, as_json=as_json)


def _short_log(path: Path) -> log.LogInfo | None:
    """What `verify` reads of a binary log file no longer than a whole header (None for a longer
    one, read once by the command itself, and for what cannot be read: the command's own
    reading names what is wrong with it)."""
    if path == STDIN:
        return None
    try:
        if os.stat(path).st_size > log.HEADER_SIZE:  # 20 zero bytes are not started too
            return None
        return log.verify(path)
    except (OSError, LogFormatError):
        return None


@guarded
@_terminable
def seal(path: InPlaceArg, format: FormatOpt = Format.table) -> None:
    """Add the integrity chain to a log (rewritten in place; the head digest is kept)."""
    _in_place(path, "seal", format is Format.json)
    if _is_jsonl_name(path):
        reader = jsonl.JsonlReader(path)
        for _ in reader:
            pass
        if not reader.sealed_by_end:
            raise fail(f"{path}: seal rewrites binary logs; convert this JSON Lines log "
                       f"(`buraco-log convert {path} -o LOG.blog`), seal LOG.blog, and convert "
                       "back if you need JSON Lines", EXIT_USAGE, as_json=format is Format.json)
        assert reader.end is not None  # sealed_by_end says it has one
        head = str(reader.end["head"]).lower()
        result = {"path": str(path), "events": reader.count, "head": head,
                  "sealed": True, "changed": False}
        message = (f"{path}: already sealed (its end line carries the head digest), "
                   f"{_events(reader.count)}, head {head}")
    else:
        before = log.verify(path)
        _refuse_not_started(path, before, "seal", format is Format.json)
        if before.sealed and before.version != ev.FORMAT_VERSION and before.torn is not None:
            # torn: no sealed log, whatever its header says (it said "already sealed", exit 0)
            t = before.torn
            torn = LogFormatError(f"torn tail: {t.reason}", path=str(path), offset=t.offset,
                                  kind="torn", seq=log.FIRST_SEQ + before.events)
            raise fail(f"{path}, byte {t.offset}: torn tail: {t.reason}; nothing was sealed "
                       "(`buraco-log verify` says what is intact, `buraco-log repair` cuts it "
                       "off)", as_json=format is Format.json, error=torn)
        if before.sealed and before.version != ev.FORMAT_VERSION:
            # an older format's sealed log stays as it is: rewriting it would change its bytes
            result = {"path": str(path), "events": before.events, "head": before.head,
                      "sealed": True, "changed": False}
            message = (f"{path}: already sealed (log format {before.version}), "
                       f"{_events(before.events)}, head {before.head}")
        else:
            info = log.seal(path)
            result = {"path": str(path), "events": info.events, "head": info.head,
                      "sealed": True, "changed": True}
            message = f"{path}: sealed, {_events(info.events)}, head {info.head}"
    if format is Format.json:
        emit_json(result)
    else:
        typer.echo(terminal_safe(message))  # the path is the user's: it may hold controls


@guarded
@_terminable
def repair(
    path: InPlaceArg,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would be cut.")] = False,
    backup: Annotated[
        bool, typer.Option("--backup/--no-backup", help="Keep the bytes cut off in LOG.bak "
                           "(cat LOG LOG.bak gives the original file back).")
    ] = True,
    force: Annotated[bool, typer.Option(
        "--force", help="Repair even when no event would be left.")] = False,
    format: FormatOpt = Format.table,
) -> None:
    """Cut a torn tail (an incomplete last record) off a log, keeping a backup.

    A repair that would leave no event at all is refused (exit 1) unless --force is given."""
    as_json = format is Format.json
    _in_place(path, "repair", as_json)
    if _is_jsonl_name(path):  # read as JSON Lines, as every command reads it: a binary log
        # under that name was cut as binary, where `verify` and `seal` refuse it (rename it)
        _refuse_no_log(path, "jsonl")  # a gzip named .jsonl is no JSON Lines log to edit
        raise fail(f"{path}: repair cuts the torn tail of a binary log; a JSON Lines log is "
                   "text: `buraco-log verify` names its bad line, which an editor can remove",
                   EXIT_USAGE, as_json=as_json)
    info = log.verify(path)
    _refuse_not_started(path, info, "repair", as_json)  # with --dry-run and --force too
    t = info.torn
    if t is not None and t.journal is None:
        # a live writer's record in progress, not a crash's: repair is refused while it holds
        # the log, so neither "would cut" nor "--force cuts them" may be offered
        with log.LogLock(path, write=False):
            pass
    if t is not None and info.events == 0 and not force and not dry_run:
        raise fail(f"{path}, byte {t.offset}: repair would cut every event of the log "
                   f"({t.size} bytes: {t.reason}); nothing was changed (--force cuts them)",
                   as_json=as_json, error=LogFormatError(  # the rule: [log.torn], as verify's
                       f"torn tail: {t.reason}", path=str(path), offset=t.offset, kind="torn"))
    if t is not None and t.journal is not None:  # refused by log.repair too, dry run or not
        raise fail(f"{path}, byte {t.offset}: {t.reason}; nothing was cut",
                   as_json=as_json, error=LogFormatError(
                       "acknowledged events in the recorder's journal", path=str(path),
                       offset=t.offset, kind="locked"))
    # one key set whatever happened (null where it does not apply): a program reads
    # `.would_cut_bytes` of a sound log, or `.backup` of a dry run, and meets null, not a
    # missing key
    result: dict[str, object] = {
        "path": str(path), "repaired": False, "events_kept": info.events, "reason": None,
        "would_cut_offset": None, "would_cut_bytes": None, "cut_offset": None,
        "cut_bytes": None, "backup": None}
    if dry_run or t is None:
        if t is None:
            message = f"{path}: nothing to repair ({_events(info.events)})"
        else:
            result.update(would_cut_offset=t.offset, would_cut_bytes=t.size, reason=t.reason)
            message = (f"{path}: would cut {t.size} bytes at byte {t.offset} ({t.reason}); "
                       f"{_events(info.events)} kept")
    else:
        report = log.repair(path, backup=backup, keep_none=force)  # looked at again, locked
        if report is None:  # mended behind our back between the check and the repair
            message = f"{path}: nothing to repair"
        else:
            result.update(repaired=True, cut_offset=report.cut_offset,
                          cut_bytes=report.cut_bytes, reason=report.reason,
                          events_kept=report.events_kept, backup=report.backup)
            # the backup holds the bytes cut off only ("original" read as a whole copy, one
            # a user might keep instead of the log: the events kept were in neither)
            kept = (f"; the bytes cut kept in {report.backup} (`cat LOG {report.backup}` "
                    "gives the original back)" if report.backup else "")
            message = (f"{path}: cut {report.cut_bytes} bytes at byte {report.cut_offset} "
                       f"({report.reason}); {report.events_kept} events kept{kept}")
    if as_json:
        emit_json(result)
    else:
        typer.echo(terminal_safe(message))  # the path is the user's: it may hold controls


@guarded
@_terminable
def fold(
    directory: Annotated[Path, typer.Argument(
        help="A recorder's directory of logs (Recorder(sync=\"journal\")).",
        show_default=False, parser=named_path)],
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Only say what would be written; nothing is changed.")] = False,
    format: FormatOpt = Format.table,
) -> None:
    """Fold the moves of the journals a recorder kept aside (.recorder.journal-N.unfolded)
    into their logs.

    A move a log lacks is appended where it continues the log, a log whose name is gone is
    made again, and a log that already holds them is left alone (folding twice writes nothing
    more). A log that disagrees with the journal (another move at a seq, a gap, a torn tail)
    is refused, naming the seq, and not written: exit 1, the journal kept. A journal all of
    whose logs hold its moves is removed. Refused while a recorder runs in the directory."""
    from buraco_log.fold import fold as fold_directory  # (only this command needs it)

    as_json = format is Format.json
    if not directory.is_dir():
        raise fail(f"{directory}: not a directory (fold takes a recorder's directory of logs)",
                   EXIT_USAGE, as_json=as_json)
    report = fold_directory(directory, dry_run=dry_run)
    status = 1 if report.refused or report.damaged else 0
    if as_json:
        emit_json(report)
        raise typer.Exit(status)
    would = "would be " if dry_run else ""
    if report.written_back:
        typer.echo(terminal_safe(f"{directory}: {report.written_back} records of a stopped "
                                 "recorder's journal written back first"))
    if not report.journals:
        typer.echo(terminal_safe(f"{directory}: no journal kept aside (*.unfolded); nothing "
                                 "to fold"))
        raise typer.Exit(status)
    for entry in report.logs:
        if entry.action == "refused":
            where = f"{entry.path}" + (f", seq {entry.seq}" if entry.seq is not None else "")
            typer.echo(terminal_safe(f"{where}: not folded: {entry.reason}; nothing of this "
                                     "log was written"), err=True)
        elif entry.action == "held":
            typer.echo(terminal_safe(f"{entry.path}: holds every move of the journal; nothing "
                                     "to fold"))
        else:
            assert entry.first_seq is not None
            last = entry.first_seq + entry.events - 1
            what = "made again from the journal" if entry.action == "created" else "appended"
            typer.echo(terminal_safe(f"{entry.path}: {entry.events} moves (seq "
                                     f"{entry.first_seq} to {last}) {would}{what}"))
    if report.damaged:
        typer.echo(terminal_safe(f"{directory}: {report.damaged} records of the journals are "
                                 "damaged and cannot be read; their moves are not known"),
                   err=True)
    gone = ", ".join(report.removed)
    kept = ", ".join(report.kept)
    if report.removed:
        typer.echo(terminal_safe(f"{directory}: folded and removed {gone}"))
    if report.kept and not dry_run:
        typer.echo(terminal_safe(f"{directory}: kept {kept} (a log refused or a record "
                                 "damaged: settle it, then fold again)"), err=True)
    raise typer.Exit(status)


@guarded
def verify(
    paths: Annotated[list[Path], typer.Argument(
        help="Match logs ('-': standard input), or an archive directory.", show_default=False,
        parser=named_path)],
    format: Annotated[Format, typer.Option(
        "--format", "-f", help="table for people, json for programs.")] = Format.table,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress",
        help="Progress of several logs on stderr: a bar on a terminal, plain lines elsewhere "
        "(a cron job's log, CI; default: only when stderr is a terminal, not TERM=dumb).")
    ] = None,
) -> None:
    """Check each log's framing, checksums, seqs and integrity chain (not the rules); or, given
    an archive directory, every file its batches committed against their SHA-256 and size.

    Several logs: a line each, a damaged one's on stderr, then one summary line; the exit
    status is the worst of them (-f json: a list)."""
    if len(paths) == 1:
        return _verify_one(paths[0], format)
    if progress_shown() if progress is None else progress:
        from cli.progress import progress as shown

        with shown("verify", "logs", len(paths)) as update:
            return _verify_several(paths, format, update)
    return _verify_several(paths, format, None)


def _verify_several(paths: list[Path], format: Format,
                    update: Callable[[int], None] | None) -> None:
    """``verify`` of several logs; ``update(done)``: its progress, as each log is done."""
    as_json = format is Format.json
    results: list[object] = []
    statuses: list[int] = []
    one = guarded(_verify_one)
    _TORN.clear()

    def cut(error: dict[str, Any]) -> None:
        """Ctrl-C, SIGTERM: the list of the logs verified, ended by the error's object (it
        printed nothing at all, no JSON)."""
        write_whole(json_text([*results, {"error": error}]) + "\n", wait=ENDING_WAIT)

    for path in paths:
        real, captured = sys.stdout, io.StringIO()
        if as_json:  # each log's object (or error object) goes into the one list
            sys.stdout = captured
        try:
            answer_open(None)  # a log's own error goes into its item
            one(path=path, format=format)  # by name: guarded reads -f json from them
            statuses.append(0)
        except typer.Exit as exc:
            statuses.append(exc.exit_code)
            if exc.exit_code in STOPPED:  # Ctrl-C, SIGTERM: said; the rest is not verified
                sys.stdout = real
                if as_json:
                    cut(error_object(*stopped_by()))
                raise
        finally:
            sys.stdout = real
            answer_open(cut if as_json else None)
        if as_json:
            got = json.loads(captured.getvalue())
            results.append({"path": str(path), **got})
        if update is not None:
            update(len(statuses))
    worst = max(statuses)
    answer_open(None)
    if as_json:
        emit_json(results)
    else:
        whole, found = statuses.count(0), sum(1 for c in statuses if c == 1)
        torn = len(_TORN)
        unread = len(statuses) - whole - found
        typer.echo(f"verified {_plural(len(paths), 'log')}: {whole} whole, "
                   + (f"{torn} torn, " if torn else "")
                   + f"{found - torn} damaged, {unread} not read as a log")
    if worst:
        raise typer.Exit(worst)
    return None


_TORN: list[Path] = []
"""The logs `verify` of several found torn (exit 1 as damage, counted apart: a live log's
record being written is no damage)."""


def _verify_one(path: Path, format: Format) -> None:
    """``verify`` of one log, or of an archive directory."""
    # any archive.json, regular or not: the archive's check names one that is no regular
    # file (a FIFO was "not a regular file (a directory)", of the directory)
    if path.is_dir() and os.path.lexists(path / "archive.json"):
        from cli.archive_cmd import verify_archive

        return verify_archive(path, as_json=format is Format.json)
    try:
        info, why = _verify_jsonl(path) if _is_jsonl_name(path) else (log.verify(path), None)
    except LogFormatError as exc:
        if exc.kind == "torn":  # a JSON Lines log's last line cut short
            _TORN.append(path)
        raise
    # no whole header (an empty file) and no event: a match not started, as `audit` says
    # (exit 0, by the same predicate), not a torn tail; a header alone is one too
    not_started = audit.log_not_started(info)
    if not_started and info.torn is not None:
        if format is Format.json:
            emit_json({**msgspec.to_builtins(info), "not_started": True})
        else:
            typer.echo(terminal_safe(_not_started_line(path, info.torn)))
        return
    if info.torn is not None:  # an error like damage: one line on stderr, stdout empty
        advice = ("no event is intact: delete the file" if info.torn.offset < log.HEADER_SIZE
                  else f"the {info.events} events before it are intact; the recorder writes "
                  "the rest back from its journal" if info.torn.journal is not None
                  else f"the {_events(info.events)} before it "
                  f"{'is' if info.events == 1 else 'are'} intact"
                  if info.torn.reason.endswith(log.WRITER_HOLDS)  # repair is refused then
                  else "no event before it is intact; `buraco-log repair --force` cuts it "
                  "off, leaving a log of no events" if info.events == 0
                  else f"the {_events(info.events)} before it "
                  f"{'is' if info.events == 1 else 'are'} intact; `buraco-log repair` "
                  "cuts it off")
        _TORN.append(path)
        # where and what, for programs: the seq of the event cut, none for a signature record
        # cut (it holds no seq, and said the next event's), the same in the line and the JSON
        seq = info.torn.seq
        torn = LogFormatError(f"torn tail: {info.torn.reason}", path=str(path),
                              offset=info.torn.offset, kind="torn", seq=seq)
        place = f"byte {info.torn.offset}" + ("" if seq is None else f", seq {seq}")
        raise fail(f"{path}, {place}: torn tail: {info.torn.reason} ({advice})",
                   as_json=format is Format.json, error=torn)
    if format is Format.json:
        emit_json({**msgspec.to_builtins(info), "not_started": not_started})
    else:
        state = ("sealed" if info.sealed
                 else f"unsealed ({why}; convert it to binary and `buraco-log seal` it)"
                 if why is not None
                 else "unsealed (no integrity chain; `buraco-log seal`)")
        # a header alone (or an empty JSON Lines file) is whole, and still no match yet
        empty = " (a match not started)" if not_started else ""
        typer.echo(terminal_safe(
            f"{path}: {_events(info.events)} in {_plural(info.segments, 'record')}{empty}, "
            f"{state}, format version {info.version}, head {info.head}"
        ))


def _not_started_line(path: Path, torn: log.Torn) -> str:
    """What `verify` says of a log not started. Empty standard input is no file whose header
    was cut short (it was said in those words: "file header cut short (0 of 20 bytes)"), nor
    a file to delete."""
    if from_stdin(path):
        if torn.size == 0:
            return (f"{path}: NOT STARTED: standard input was empty (0 bytes): no log and so no "
                    "event")
        return (f"{path}: NOT STARTED: no whole header ({torn.reason}) and no event: a match "
                "that never received an event")
    return (f"{path}: NOT STARTED: no whole header ({torn.reason}) and no event: a match that "
            "never received an event; delete the file")


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _events(n: int) -> str:
    return f"{n} event{'' if n == 1 else 's'}"  # no thousands separator, as ever


def _verify_jsonl(path: Path) -> tuple[log.LogInfo, str | None]:
    """What `verify` says of a JSON Lines log: its lines, seqs, end line and chain, and why
    it is unsealed (None: sealed)."""
    reader = jsonl.JsonlReader(path, refuse_repeats=True)
    for _ in reader:  # raises, naming the line, at the first problem
        pass
    # Sealed as `audit` and `show` say it: the end line carries the head digest, checked
    # against the events, and the first line does not call the log unsealed (its flag is the
    # binary form's, which convert keeps both ways). All of it from this one read: a second
    # read of a file that grew meanwhile gave a head and count of other events.
    return log.LogInfo(path=str(path), version=reader.version, sealed=reader.sealed_by_end,
                       events=reader.count, segments=reader.count, valid_bytes=reader.size,
                       head=reader.head, signatures=len(reader.signatures)
                       ), reader.unsealed_because


def register(app: typer.Typer) -> None:
    """Add these commands to the top level of ``app``."""
    for command in (convert, schema, seal, repair, fold, verify):
        app.command()(command)
