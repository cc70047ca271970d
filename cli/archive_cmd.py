"""`buraco-log ingest`, `buraco-log query`, `buraco-log report`: the match archive."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import datetime
import decimal
import errno
import io
import json
import math
import os
import re
import shutil
import signal
import stat
import struct
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING, Annotated, Any

import msgspec
import typer

from buraco_log import signalmask
from buraco_log.errors import ArchiveError
from buraco_log.log import RENAME_EXCHANGE, renameat2, temp_stem
from buraco_log.outpaths import no_directory, open_in_place, rename_target, written_in_place
from buraco_log.safetext import BEYOND_C0
from cli import archive_spark, streamout
from cli.archive_spark import CONF_HELP, ENGINE_HELP, MASTER_HELP, Engine, spark_options
from cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    Format,
    State,
    answer_open,
    emit_json,
    fail,
    guarded,
    note,
    progress_shown,
    refuse_log_as_output,
)
from cli.paths import directory_name, named_path, not_a_file, why_missing
from cli.safetext import terminal_safe
from cli.signals import said_as, stopped_by, terminate_as_interrupt
from cli.supervise import supervised

if TYPE_CHECKING:
    from buraco_log import archive

# Mirrors of archive.DEFAULT_THREADS, MAX_THREADS and DEFAULT_MEMORY_LIMIT (a test keeps
# them equal): importing the archive loads duckdb and pyarrow, which every other command can
# do without.
DEFAULT_THREADS = 2
MAX_THREADS = 1024
DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_TIMEOUT = 60.0  # seconds a query, or a whole report, may run


def _archive() -> ModuleType:
    import buraco_log.archive

    # a wait for another process's hold on the readers' lock or gate, said once it is long
    buraco_log.archive.store.on_wait = note
    if State.own_process:  # nothing here makes a pandas object: pyarrow need not import it
        from buraco_log.archive.nopandas import hide_pandas

        hide_pandas()
    return buraco_log.archive


class QueryFormat(StrEnum):
    table = "table"
    text = "text"  # the same as table: the word review uses for it
    json = "json"
    jsonl = "jsonl"
    csv = "csv"
    parquet = "parquet"


class ReportFormat(StrEnum):
    table = "table"
    text = "text"  # the same as table
    json = "json"
    html = "html"


def _jobs_default() -> int:
    return max(1, min(os.cpu_count() or 1, 8))


ARCHIVE_ENV = "BURACO_LOG_ARCHIVE"

ArchiveOpt = Annotated[Path | None, typer.Option(
    "--archive", "-a", envvar=ARCHIVE_ENV, show_envvar=True, show_default=False,
    parser=named_path,
    help="The archive directory (every archive command takes it the same way; query and "
    "report also take it as their first argument).")]


def _the_archive(option: Path | None, positional: Path | None, as_json: bool = False) -> Path:
    """The archive a command works on: --archive/-a (or BURACO_LOG_ARCHIVE), or the leading
    argument of query and report; naming two different ones is a usage error."""
    if option is not None and positional is not None and option != positional:
        raise fail(f"two archives named: {positional} and --archive {option}", EXIT_USAGE,
                   as_json=as_json)
    found = positional if positional is not None else option
    if found is None:
        raise fail(f"which archive? give --archive DIR (or set {ARCHIVE_ENV})", EXIT_USAGE,
                   as_json=as_json)
    if not found.is_dir():  # a mistyped name is the user's, not a damaged archive
        # a log named in its place (`report match.blog`) was "no such archive directory"
        # a FIFO was "is a file", a loop of links "no such archive directory"
        kind = not_a_file(found) or "a file"
        what = (f"is {kind}, not an archive directory (`buraco-log ingest LOG -a DIR` makes "
                "one)" if found.exists() else why_missing(found))
        if not found.exists() and what == "No such file or directory":
            what = "no such archive directory"
        raise fail(f"{found}: {what}", EXIT_USAGE, as_json=as_json)
    return found


MAX_MEMORY_LIMIT = 1 << 63
"""No --memory-limit reaches this: DuckDB counts it in 64 bits (through a float), and a limit
of 2^64 bytes or so was "cannot open DuckDB: Parser Error: Memory value out of range", exit 1,
once the archive was opened."""


def _check_memory_limit(memory_limit: str, as_json: bool) -> None:
    """Refuse a --memory-limit that is no size, or more than DuckDB takes, as a usage line."""
    if not _MEMORY.fullmatch(memory_limit.strip()):
        raise fail(f"--memory-limit {memory_limit!r}: a size such as 512MB, 4GB or 1.5GiB",
                   EXIT_USAGE, as_json=as_json)
    from buraco_log.archive.views import parse_size

    if (parse_size(memory_limit) or 0) >= MAX_MEMORY_LIMIT:
        raise fail(f"--memory-limit {memory_limit}: more than DuckDB can take (less than "
                   "8 EiB; a limit past the machine's memory is no limit)", EXIT_USAGE,
                   as_json=as_json)


def _output_file(name: str | None, as_json: bool) -> Path | None:
    """The file ``-o`` names, None for stdout ('-' or none). Refused before anything is read,
    in the words view and convert use: an empty name (an unset variable), or one that ends as
    a directory's does (``out/``: a Path drops the slash and wrote the file ``out``). They were
    typer's usage lines here ("Invalid value for '--output' / '-o': ...")."""
    if name is None or name == "-":  # '-': stdout, as in every command
        return None
    if name == "":
        raise fail("--output '': an empty name; name the file (or '-' for stdout)", EXIT_USAGE,
                   as_json=as_json)
    if (refusal := directory_name(name)) is not None:
        raise fail(refusal, EXIT_USAGE, as_json=as_json)
    output = Path(name)
    if not output.parent.is_dir():  # as view and convert: a usage error, before the query
        # runs (it was found after it, exit 1, with no JSON error object)
        raise fail(f"{output}: {no_directory(output.parent)}", EXIT_USAGE, as_json=as_json)
    return output


def _outside_archive(output: Path | None, archive_dir: Path, as_json: bool = False) -> None:
    """Refuse an ``--output`` inside the archive: query and report only read it. Written
    there, a result replaced archive.json (the archive no longer opened) or a batch record,
    and report's HTML pages went into the matches table's directory."""
    if output is None:
        return
    refuse_log_as_output(output, as_json=as_json)
    root = os.path.realpath(archive_dir)
    where = os.path.realpath(rename_target(output))  # through links, as the write would go
    if where == root or where.startswith(root.rstrip(os.sep) + os.sep):
        raise fail(f"{output}: inside the archive {archive_dir}: query and report never write "
                   "into an archive; write the result elsewhere", EXIT_USAGE, as_json=as_json)


@guarded
def ingest(
    ctx: typer.Context,
    sources: Annotated[list[Path], typer.Argument(help="Log files, or directories to search.",
                                                  parser=named_path)],
    archive_dir: Annotated[Path, typer.Option(
        "--archive", "-a", envvar=ARCHIVE_ENV, show_envvar=True, parser=named_path,
        help="The archive directory (created if missing).")],
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=0,
                                      help="Worker processes (0: one per CPU, at most 8).")] = 0,
    format: Annotated[Format, typer.Option(
        "--format", "-f", help="table for people, json for programs.")] = Format.table,
    require_commitment: Annotated[bool | None, typer.Option(
        "--require-commitment/--no-require-commitment",
        help="Set the archive's require_commitment setting (kept in its archive.json, for "
             "this and every later ingest): refuse matches whose deals no commitment backs."
    )] = None,
    keep_stored_copies: Annotated[bool, typer.Option(
        "--keep-stored-copies",
        help="Keep the archive's copy of a match when a stronger copy of it comes (sealed, or "
             "with more signature records): only name it. Without it, the stronger copy is "
             "stored in its place.")] = False,
    engine: Annotated[Engine, typer.Option(help=ENGINE_HELP)] = Engine.local,
    master: Annotated[str | None, typer.Option(help=MASTER_HELP, show_default=False)] = None,
    conf: Annotated[list[str] | None, typer.Option(help=CONF_HELP, metavar="KEY=VALUE",
                                                   show_default=False)] = None,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress",
        help="Progress on stderr: a bar on a terminal, plain lines elsewhere (a cron job's "
        "log, CI; default: only when stderr is a terminal, not TERM=dumb).")] = None,
) -> None:
    """Check logs fully and add the good ones to an archive; refused logs go to its errors."""
    if archive_dir.exists() and not archive_dir.is_dir():  # the user's slip, not a finding
        raise fail(f"{archive_dir}: is a file, not an archive directory", EXIT_USAGE,
                   as_json=format is Format.json)
    if archive_dir.is_symlink() and not archive_dir.exists():  # was "File exists", exit 1
        raise fail(f"{archive_dir}: a symbolic link that leads nowhere (to a missing path, or "
                   "a loop of links), not an archive directory", EXIT_USAGE,
                   as_json=format is Format.json)
    for s in sources:  # a mistyped path is a usage error, not a refused log in the archive
        if not s.exists():
            raise fail(f"{s}: {why_missing(s)}", EXIT_USAGE,  # as every command says it
                       as_json=format is Format.json)
    settings = spark_options(engine, master, conf)
    if engine is Engine.spark:
        archive_spark.check_local_size("--jobs", jobs, ctx, master, format is Format.json)
    # The SIGTERM handler stays on until the process exits: at its default action, a SIGTERM
    # that came while the summary was printed killed the process without a word.
    with terminate_as_interrupt() as met:
        try:
            if engine is Engine.spark:  # cut before its commit, a Spark run leaves nothing
                report = archive_spark.ingest([str(s) for s in sources], str(archive_dir),
                                              archive_spark.master_or(master, jobs or None),
                                              settings, require_commitment,
                                              not keep_stored_copies)
            else:
                report = _ingest_with_progress([str(s) for s in sources], str(archive_dir),
                                               jobs or _jobs_default(), require_commitment,
                                               not keep_stored_copies, progress)
        except KeyboardInterrupt:  # before anything was checked (the lock, a clean-up):
            # said alike for Ctrl-C (it was the bare "interrupted" every command says)
            how, status = stopped_by(met)
            raise fail(f"{how}: nothing was committed; run the same command again",
                       status) from None
        try:
            _say_ingested(report, format)
        except KeyboardInterrupt:  # the run is over and committed: only its summary is cut
            how, status = stopped_by(met)
            done = ("what was checked is committed; run the same command again to check "
                    "the rest" if report.interrupted else "every log of the run is checked "
                    "and committed, nothing is left to do")
            # an error line as every command's interrupt is (it lacked "error:")
            typer.echo(f"buraco-log: error: {how} while the summary was written: {done} (the "
                       "summary on stdout may be cut short)", err=True)
            _end(status)
        _ingest_exit(report, met)


def _say_ingested(report: archive.IngestReport, format: Format) -> None:
    """The ingest summary on stdout (and its refused logs)."""
    report = _as_stored(report)
    if format is Format.json:
        emit_json(report)
        return
    rate = report.events / report.seconds if report.seconds else 0.0
    workers = f"{report.jobs} job{'s' if report.jobs != 1 else ''}"
    typer.echo(f"{_n(report.files, 'log')}: {_n(report.added, 'match')} added "
               f"({_n(report.events, 'event')}, {rate:,.0f} events/s with {workers}), "
               + ", ".join(_tallies(report.already_stored, report.duplicates,
                                    report.known_errors, len(report.errors)))
               + ("; deals must be committed (the archive's require_commitment)"
                  if report.require_commitment else ""))
    for e in report.errors:
        where = f" seq {e.seq}" if e.seq is not None else ""
        typer.echo(terminal_safe(f"refused: {e.path}:{where} [{e.rule}] {e.message}"))
    _say_stronger(report.stronger_copies)
    _say_shared(report.shared_match_ids)
    _say_reused(report.reused_paths)
    if report.recovered:
        typer.echo(f"cleaned up after {_interrupted(report.cut_short)}: "
                   f"{len(report.recovered)} uncommitted file(s)")


def _tallies(already_stored: int, duplicates: int, known_errors: int, refused_now: int,
             *, zeros: bool = True) -> list[str]:
    """The counts of an ingest's files not added, as its summary line and its progress bar
    both say them (the bar said "1 refused" where the summary said "3 refused now", and
    nothing of the files skipped as already archived). ``zeros`` False leaves out the
    counts that are 0, but for "refused now"."""
    said = [(already_stored, f"{already_stored:,} already stored"),
            (duplicates, _n(duplicates, "duplicate")),
            (known_errors, f"{known_errors:,} refused before"),
            (1, f"{refused_now:,} refused now")]
    return [text for n, text in said if zeros or n]


STRONGER_SHOWN = 20
"""Stronger copies named one a line by the text summary; ``--format json`` lists them all."""


def _say_stronger(copies: list[archive.StrongerCopy]) -> None:
    """One line per copy met as a duplicate that holds more than the archive's copy (its seal,
    more signature records), stored in its place or not: a site that ingested live logs, then
    the sealed ones, was told "1 duplicate" and the archive kept the unsealed copy for ever."""
    for c in copies[:STRONGER_SHOWN]:
        sealed = "sealed " if "sealed" in c.stronger else ""
        signed = (f" with {_n(c.signatures, 'signature record')}"
                  if "signatures" in c.stronger else "")
        kept = [c.stored_integrity] if "sealed" in c.stronger else []
        if "signatures" in c.stronger:
            kept.append("unsigned" if not c.stored_signed else
                        f"with {c.stored_signatures:,}" if c.stored_signatures is not None
                        else "signed")
        then = (f"stored in its place (batch {c.replaced})" if c.replaced else
                "the archive keeps its copy: docs/archive.md says how to replace it")
        typer.echo(terminal_safe(
            f"{c.path}: a {sealed}copy{signed} of stored match {c.match_id}, stored "
            f"{' and '.join(kept)}; {then}"))
    if len(copies) > STRONGER_SHOWN:
        typer.echo(f"... and {len(copies) - STRONGER_SHOWN:,} more stronger copies "
                   "(--format json lists them all)")


def _say_shared(shared: list[archive.SharedMatchId]) -> None:
    """One line per match stored under an id another stored match holds (other content):
    both were stored without a word, and every report counted the one match id twice."""
    for s in shared[:STRONGER_SHOWN]:
        more = f", and {len(s.others) - 1:,} more" if len(s.others) > 1 else ""
        typer.echo(terminal_safe(
            f"{s.path}: stored, but match id {s.match_id} is held by another stored match "
            f"({s.others[0]}{more}): two matches under one id (`buraco-log diff` compares "
            "the logs)"))
    if len(shared) > STRONGER_SHOWN:
        typer.echo(f"... and {len(shared) - STRONGER_SHOWN:,} more matches under a shared "
                   "id (--format json lists them all)")


def _say_reused(reused: list[archive.ReusedPath]) -> None:
    """One line per match stored from a path an earlier run stored another match from: the
    log was written over, and the archive held both without a word."""
    for r in reused[:STRONGER_SHOWN]:
        more = f", and {len(r.earlier) - 1:,} more" if len(r.earlier) > 1 else ""
        typer.echo(terminal_safe(
            f"{r.path}: stored match {r.match_id}, but an earlier ingest stored match "
            f"{r.earlier[0]}{more} from this path: the log was written over, and the archive "
            "keeps both (docs/archive.md says how to keep only the new one)"))
    if len(reused) > STRONGER_SHOWN:
        typer.echo(f"... and {len(reused) - STRONGER_SHOWN:,} more logs written over "
                   "(--format json lists them all)")


def _interrupted(cut_short: list[str]) -> str:
    """"an interrupted drop", "an interrupted ingest and compact": what the intent records
    said was cut short (ingest said "an interrupted ingest" after a drop's leftovers too)."""
    return "an interrupted " + (" and ".join(cut_short) or "ingest or compact")


def _as_stored(report: archive.IngestReport) -> archive.IngestReport:
    """``report`` with its refused logs' paths and messages as the errors table holds them:
    a byte of a file name that is not UTF-8 as ``\\xNN``. Printed as they were, the line
    showed U+FFFD where the table keeps ``\\xfe``, and the JSON a lone ``\\udcfe``,
    which strict JSON parsers refuse."""
    from buraco_log.archive.schema import storable

    errors = [msgspec.structs.replace(e, path=storable(e.path), message=storable(e.message))
              for e in report.errors]
    stronger = [msgspec.structs.replace(c, path=storable(c.path))
                for c in report.stronger_copies]
    return msgspec.structs.replace(report, errors=errors, stronger_copies=stronger,
                                   recovered=[storable(p) for p in report.recovered])


def _ingest_exit(report: archive.IngestReport, terminated: list[int]) -> None:
    """End the ingest command with its status (raises)."""
    if report.interrupted:  # the summary alone (its counts short of the logs) did not say
        how, status = stopped_by(terminated)
        typer.echo(f"buraco-log: error: {how}: what was checked is committed; run the same "
                   "command again to check the rest", err=True)
        if status != 130:
            _end(status)
        raise typer.Exit(130)
    raise typer.Exit(EXIT_FINDINGS if report.errors else EXIT_OK)


def _end(status: int) -> None:
    """Exit at once with ``status``, as main does for 130: skip the interpreter's exit hooks,
    where the process pool's cleanup waited for ever on the workers it had just stopped."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


def _ingest_with_progress(sources: list[str], root: str, jobs: int,
                          require_commitment: bool | None,
                          replace_stored: bool = True,
                          show: bool | None = None) -> archive.IngestReport:
    """``ingest``, with its progress on stderr where ``show`` (None: on a terminal): a bar,
    or plain lines where no bar can be drawn (``--progress`` in a cron job's log)."""
    from buraco_log.archive import ingest

    _archive()  # its waits said
    if not (progress_shown() if show is None else show):
        return ingest(sources, root, jobs=jobs, require_commitment=require_commitment,
                      replace_stored=replace_stored, on_no_pool=_no_pool)
    from cli.progress import progress

    with progress("ingest", "logs", None, rate=True) as shown:

        def update(p: archive.Progress) -> None:
            # Every file found is one step: checked, or skipped once hashed (already stored,
            # refused before, a copy, unreadable).
            shown(p.done + p.hashed - p.files, p.found, _bar_text(p))

        return ingest(sources, root, jobs=jobs, on_progress=update,
                      require_commitment=require_commitment, replace_stored=replace_stored,
                      on_no_pool=_no_pool)


def _no_pool(exc: OSError) -> None:
    """Said when ``-j N``'s workers cannot be started (``ulimit -n``, ``ulimit -u``)."""
    note(f"worker processes could not be started ({exc.strerror or exc}): the logs are "
         "checked in this process, as with -j 1")


def _bar_text(p: archive.Progress) -> str:
    """The ingest bar's counts: its rate, and the summary's counts so far (those not 0)."""
    rate = p.events / p.elapsed if p.elapsed else 0.0
    return ", ".join([f"{rate:,.0f} events/s", *_tallies(
        p.already_stored, p.duplicates, p.known_errors, p.errors, zeros=False)])


_MEMORY = re.compile(r"\d+(\.\d+)?\s*([KMGT]i?B|B)", re.IGNORECASE)


@contextlib.contextmanager
def _opened(output: Path, mode: str,
            before_rename: Callable[[], None] | None = None) -> Iterator[IO[Any]]:
    """``output`` open for writing (``mode`` "w" or "wb"), whole or not at all: a temporary
    file beside it, renamed over it only when writing succeeded. /dev/null, a FIFO or
    /dev/stdout is written into, never renamed over (as root, the device or the link itself
    became a regular file), and opened as outpaths.open_in_place says: our own standard
    output where it stands (opened again by name, it was cut to nothing under what the shell
    had written there), a FIFO no program reads refused after a while (it was waited for for
    ever). ``before_rename`` runs once the file is whole, just before it is renamed into
    place (an HTML report's pages go in then)."""
    if not output.parent.is_dir():
        raise fail(f"{output}: no such directory: {output.parent}")
    text = "b" not in mode
    if written_in_place(output):
        with os.fdopen(open_in_place(output), mode, encoding="utf-8" if text else None) as f:
            yield f
        return
    target = rename_target(output)  # a link to the output stays a link
    tmp = _temporary(target)
    # The file it replaces keeps its mode and group: a report kept private (0600) became
    # 0644, readable by every user, once written again. Private from the start when the
    # old one was, and on disk before the rename (a power cut left an empty file).
    try:
        old = os.stat(target)
    except OSError:
        old = None
    kept = old.st_mode & 0o777 if old is not None and stat.S_ISREG(old.st_mode) else None
    made = False
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o666 if kept is None else 0o600)
        made = True
        with os.fdopen(fd, mode, encoding="utf-8" if text else None) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
            if kept is not None and old is not None:
                with contextlib.suppress(OSError):  # another group of the user's, or none
                    os.fchown(f.fileno(), -1, old.st_gid)
                os.fchmod(f.fileno(), kept)
        if before_rename is not None:
            before_rename()
        os.replace(tmp, target)
        _PUT_IN_PLACE.add(output)
    except BaseException:
        if made and not os.path.lexists(tmp):  # a signal just after the rename: it is whole
            _PUT_IN_PLACE.add(output)
        tmp.unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


_PUT_IN_PLACE: set[Path] = set()
"""The outputs :func:`_opened` renamed into place, whole: a signal after that is said as
coming after them (it said "nothing was written to FILE", FILE written whole)."""


def _temporary(target: Path) -> Path:
    """The temporary file :func:`_opened` writes beside ``target`` before renaming it."""
    return target.with_name(f".{temp_stem(target.name)}.{os.getpid()}.tmp")


_ERRNO = re.compile(r"\[errno (\d+)\]", re.IGNORECASE)

# A place that cannot be written at all, named by the user: a usage error, as for every other
# writer (cli.common.guarded); a write that failed part-way (a full disk) stays 1.
_UNWRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.EISDIR})


@contextlib.contextmanager
def _writing(command: str, output: Path | None, as_json: bool) -> Iterator[None]:
    """A write of ``output`` (or of a file beside it) that fails, on a full disk or past a
    file size limit, is one line naming the file, exit 1 (on a read-only file system or
    without write permission, where nothing can be written at all, exit 2). It was
    "No space left on device" alone, or Arrow's "Error writing bytes to file. Detail: [errno
    28] ...". :func:`_opened` has removed the temporary file by then. Standard output
    (``output`` None) is named as every command names it (cli.common.guarded)."""
    if output is None:
        yield
        return
    try:
        yield
    except BrokenPipeError:  # a FIFO's reader went away: quiet, as on stdout
        raise
    except OSError as exc:
        code = exc.errno or next((int(m) for m in _ERRNO.findall(str(exc))), None)
        reason = os.strerror(code) if code else (str(exc).strip().splitlines() or ["?"])[0]
        named = exc.filename if isinstance(exc.filename, str) else str(output)
        if not written_in_place(output) and named == str(_temporary(rename_target(output))):
            named = str(output)  # it said "cannot write DIR/.q.csv.4242.tmp"
        if code == errno.ENXIO and exc.strerror:  # a FIFO nobody reads: its own sentence
            raise fail(f"{command}: cannot write {named}: {exc.strerror}", as_json=as_json,
                       error=exc) from None
        left = ("the output may be cut short" if written_in_place(output) else
                "nothing was written" + ("" if named == str(output) else f" to {output}"))
        raise fail(f"{command}: cannot write {named}: {reason}; {left}",
                   EXIT_USAGE if code in _UNWRITABLE else EXIT_FINDINGS, as_json=as_json,
                   error=exc) from None


def _refuse_a_directory(command: str, output: Path | None, as_json: bool) -> None:
    """An ``--output`` naming a directory is refused as its write would be (exit 2), before
    the query runs: the kernel's confinement (:func:`_confined`) turned the rename's "Is a
    directory" into "Permission denied"."""
    if output is None or written_in_place(output) or not rename_target(output).is_dir():
        return
    with _writing(command, output, as_json):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(output))


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list | dict):
        return _json(v)
    return str(v)


def _csv_cell(v: Any) -> str:
    """A csv cell: every value exact, for programs. A double as the shortest text that reads
    back as the same number (the table's six digits wrote 123456789.123 as 1.23457e+08), a
    blob as hex like json (not Python's ``b'...'``), nested values as json."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, list | dict):
        return _json(v)
    return str(v)


def _csv_cell_shown(v: Any) -> str:
    """A csv cell on a terminal: :func:`_csv_cell` with control and bidi characters escaped."""
    return terminal_safe(_csv_cell(v))


MIN_COLUMN = 8  # a truncated column keeps at least this many characters


def table_width(wide: bool) -> int | None:
    """How wide a table may be: the terminal's width on a terminal ($COLUMNS first, as
    shutil reads it), unlimited with --wide or when the output goes to a pipe or file ($COLUMNS
    exported in a shell's profile cut a table redirected to a file)."""
    if wide or not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def _fit(widths: list[int], limit: int) -> list[int]:
    """Column widths that fit ``limit`` characters with two-space gaps: the widest columns are
    cut first, down to MIN_COLUMN, never the narrow ones."""
    room = limit - 2 * (len(widths) - 1)
    if sum(widths) <= room:
        return widths
    lo, hi = MIN_COLUMN, max(widths)
    while lo < hi:  # the largest cap whose capped widths still fit
        cap = (lo + hi + 1) // 2
        if sum(min(w, cap) for w in widths) <= room:
            lo = cap
        else:
            hi = cap - 1
    return [min(w, lo) for w in widths]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _text_table(columns: list[str], rows: list[list[Any]], width: int | None = None) -> str:
    """Rows as a table for people. Text from the logs (names, match ids, paths) is shown
    with control and bidi characters escaped: an ESC sequence in a player's name cleared the
    screen, a newline forged a row (csv, json and parquet keep every value exact)."""
    columns = [terminal_safe(c) for c in columns]
    cells = [[terminal_safe(_cell(v)) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    if width is not None:
        fitted = _fit(widths, width)
        if fitted != widths:
            widths = fitted
            columns = [_clip(c, w) for c, w in zip(columns, widths, strict=True)]
            cells = [[_clip(v, w) for v, w in zip(r, widths, strict=True)] for r in cells]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()
              for r in cells]
    return "\n".join(lines) + "\n"


def _json_default(v: Any) -> Any:
    """JSON for what DuckDB hands back beyond JSON's own types."""
    if isinstance(v, decimal.Decimal):  # HUGEINT and DECIMAL(p, 0) arrive as scale-0 decimals
        exponent = v.as_tuple().exponent
        return int(v) if isinstance(exponent, int) and exponent >= 0 else float(v)
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, datetime.timedelta):
        return v.total_seconds()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


# One for every row. allow_nan=False: NaN and Infinity are not JSON (a reader such as jq or
# JSON.parse refuses the whole document), so a row holding one is encoded again with null.
_ENCODER = json.JSONEncoder(default=_json_default, ensure_ascii=False, allow_nan=False)


# On a terminal json and jsonl are read by a person: a C1 control or a bidi mark from a log
# would recolour or reorder the screen. Written as \u escapes they stay the same JSON (C0
# controls json escapes already; outside strings JSON is ASCII).
_JSON_UNSAFE = re.compile("[" + BEYOND_C0 + "]")


def _json_shown(text: str) -> str:
    """JSON text with each character :data:`_JSON_UNSAFE` names written ``\\uXXXX``."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def _finite(v: Any) -> Any:
    """``v`` with every NaN or infinite float (at any depth) replaced by None."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_finite(x) for x in v]
    return v


def _json(v: Any, indent: int | None = None) -> str:
    try:
        if indent is None:
            return _ENCODER.encode(v)
        return json.dumps(v, indent=indent, default=_json_default, ensure_ascii=False,
                          allow_nan=False)
    except ValueError:  # a NaN or an infinity: rare, so only such a row pays for the walk
        return _json(_finite(v), indent)


# DuckDB's infinite timestamps and dates, as Arrow hands them over (the largest magnitudes).
_INFINITE = {2**63 - 1: "infinity", -(2**63 - 1): "-infinity",
             2**31 - 1: "infinity", -(2**31 - 1): "-infinity"}


def _py(s: Any) -> Any:
    """One Arrow scalar as a Python value; one Python cannot hold (an infinite timestamp, a
    date after year 9999) as text, at any depth, instead of an OverflowError."""
    try:
        return s.as_py()
    except (OverflowError, ValueError):
        pass
    import pyarrow as pa  # type: ignore[import-untyped]

    t = s.type
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [_py(x) for x in s.values]
    if pa.types.is_map(t):
        return [(_py(e["key"]), _py(e["value"])) for e in s.values]
    if pa.types.is_struct(t):
        return {t.field(i).name: _py(s[i]) for i in range(t.num_fields)}
    for raw_type in (pa.int64(), pa.int32()):
        try:
            raw = s.cast(raw_type).as_py()
        except pa.ArrowException:
            continue
        if raw in _INFINITE:
            return _INFINITE[raw]
        break
    return str(s.cast(pa.string()).as_py())  # Arrow's text: "<value out of range: N>"


def _pylist(column: Any) -> list[Any]:
    """A column's values as Python objects (see :func:`_py` for those Python cannot hold)."""
    try:
        values = list(column.to_pylist())
    except (OverflowError, ValueError):
        values = [_py(s) for s in column]
    if _has_float32(column.type):
        values = [_narrow(v, column.type) for v in values]
    if "interval" in str(column.type):  # at any depth
        values = [_interval(v) for v in values]
    return values


def _has_float32(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_float32(t) or any(_has_float32(t.field(i).type)
                                              for i in range(getattr(t, "num_fields", 0))))


def _short32(v: float) -> float:
    """A FLOAT (REAL) as the shortest decimal that reads back as the same float32: Arrow
    hands it out widened to a double, so ``SELECT 0.1::FLOAT`` printed 0.10000000149011612."""
    if not math.isfinite(v):
        return v
    exact = struct.pack("<f", v)
    for digits in range(1, 10):
        short = float(f"{v:.{digits}g}")
        try:
            if struct.pack("<f", short) == exact:
                return short
        except OverflowError:  # rounded past the float32 range (near 3.4e38): more digits
            continue
    return v


def _narrow(v: Any, t: Any) -> Any:
    """``v`` of Arrow type ``t`` with every float32 in it at any depth as :func:`_short32`."""
    import pyarrow as pa

    if v is None:
        return v
    if pa.types.is_float32(t):
        return _short32(v) if isinstance(v, float) else v
    if pa.types.is_map(t) and isinstance(v, list):
        return [(_narrow(k, t.key_type), _narrow(x, t.item_type)) for k, x in v]
    if (pa.types.is_list(t) or pa.types.is_large_list(t)
            or pa.types.is_fixed_size_list(t)) and isinstance(v, list):
        return [_narrow(x, t.value_type) for x in v]
    if pa.types.is_struct(t) and isinstance(v, dict):
        return {k: _narrow(x, t.field(i).type) for i, (k, x) in enumerate(v.items())}
    return v


def _interval(v: Any) -> Any:
    """``v`` with every INTERVAL (Arrow's MonthDayNano, a tuple) as an object naming its
    parts: json wrote ``[1, 3, 0]``, csv and the table Python's ``MonthDayNano(...)``."""
    parts = ("months", "days", "nanoseconds")
    if isinstance(v, tuple) and all(hasattr(v, n) for n in parts):
        return {n: getattr(v, n) for n in parts}
    if isinstance(v, list):
        return [_interval(x) for x in v]
    if isinstance(v, tuple):  # a map's (key, value)
        return tuple(_interval(x) for x in v)
    if isinstance(v, dict):
        return {k: _interval(x) for k, x in v.items()}
    return v


def _unique(names: list[str]) -> list[str]:
    """Column names made unique for JSON keys (``SELECT 1 AS a, 2 AS a``: a and a_1), so no
    column silently overwrites another in a row object. A new name never takes one the query
    itself uses."""
    taken: set[str] = set()
    out: list[str] = []
    for name in names:
        key, n = name, 0
        while key in taken or (key != name and key in names):
            n += 1
            key = f"{name}_{n}"
        taken.add(key)
        out.append(key)
    return out


def _rows(keys: list[str], batch: Any) -> list[dict[str, Any]]:
    """A batch's rows as objects keyed by ``keys`` (:func:`_unique`)."""
    return [dict(zip(keys, r, strict=True))
            for r in zip(*(_pylist(c) for c in batch.columns), strict=True)]


TABLE_MAX_ROWS = 100_000  # a table needs every row for its widths; other formats stream


@guarded
def query(
    ctx: typer.Context,
    first: Annotated[str | None, typer.Argument(
        metavar="[ARCHIVE]", show_default=False,
        help="The archive directory (or --archive), then one read-only SELECT over the views "
        "matches, hands, events, melds, players, errors.")] = None,
    second: Annotated[str | None, typer.Argument(metavar="SQL", show_default=False,
                                                 help="The SQL, when ARCHIVE comes first.")] = None,
    archive: ArchiveOpt = None,
    format: Annotated[QueryFormat, typer.Option(
        "--format", "-f", help="table for people, json for programs, jsonl, csv or parquet for "
        "other tools.")] = QueryFormat.table,
    output_name: Annotated[str | None, typer.Option("--output", "-o", metavar="PATH",
                                                   help="Write here instead of stdout ('-': "
                                                   "stdout).", show_default=False)] = None,
    threads: Annotated[int, typer.Option(min=1, max=MAX_THREADS,
                                         help="DuckDB's worker threads.")] = DEFAULT_THREADS,
    memory_limit: Annotated[str, typer.Option(help="Memory limit of the whole query, DuckDB "
                                              "and output, e.g. 512MB or 4GB."
                                              )] = DEFAULT_MEMORY_LIMIT,
    timeout: Annotated[float, typer.Option(min=0.0, metavar="SECONDS",
                                           help="Seconds before the query is stopped "
                                           "(0: no limit).")] = DEFAULT_TIMEOUT,
    wide: Annotated[bool, typer.Option(
        "--wide", help="Table: never cut a column to the terminal's width.")] = False,
    engine: Annotated[Engine, typer.Option(help=ENGINE_HELP)] = Engine.local,
    master: Annotated[str | None, typer.Option(help=MASTER_HELP, show_default=False)] = None,
    conf: Annotated[list[str] | None, typer.Option(help=CONF_HELP, metavar="KEY=VALUE",
                                                   show_default=False)] = None,
) -> None:
    """Run read-only SQL over an archive, sandboxed (no files outside it, no settings).

    Rows stream out as DuckDB produces them (csv, jsonl, json, parquet); the table format
    holds at most 100,000 rows. With --output nothing is written unless the query finishes;
    on stdout, a query that fails part-way leaves the rows already written and exits 1.
    csv keeps every value exact, but on a terminal shows control characters escaped, as the
    table does."""
    format = QueryFormat.table if format is QueryFormat.text else format
    as_json = format is QueryFormat.json
    output = _output_file(output_name, as_json)
    _refuse_no_sql(first, second, as_json)
    assert first is not None
    if second is None:
        archive_dir, sql = _the_archive(archive, None, as_json), first
    else:  # ARCHIVE SQL: the first is a path, and refused empty as every path is
        if first == "":
            raise typer.BadParameter("an empty name (an unset variable?)",
                                     param_hint="'[ARCHIVE]'")
        archive_dir = _the_archive(archive, Path(first), as_json)
        sql = second
    _outside_archive(output, archive_dir, as_json)
    if format is QueryFormat.parquet and output is None:
        if sys.stdout.isatty():  # bytes on the screen, as `convert` refuses a binary log
            raise fail("--format parquet is not written to a terminal: give --output FILE, "
                       "or redirect standard output", EXIT_USAGE)
        # a pipe or a file: written as `-o /dev/stdout` writes it (`-o -` was refused with
        # "needs --output FILE", though -o - names standard output for every writer)
        output = Path("/dev/stdout")
    _check_memory_limit(memory_limit, as_json)
    _check_timeout(timeout, as_json)
    if engine is Engine.spark and memory_limit != DEFAULT_MEMORY_LIMIT:  # it was ignored
        raise fail(f"--memory-limit {memory_limit}: bounds DuckDB's query; Spark's memory is "
                   "its own (--conf spark.driver.memory=4g)", EXIT_USAGE, as_json=as_json)
    settings = spark_options(engine, master, conf)
    if engine is Engine.spark:
        archive_spark.check_local_size("--threads", threads, ctx, master, as_json)
    _refuse_a_directory("query", output, as_json)
    if engine is Engine.local and State.own_process:  # DuckDB runs under a memory bound,
        supervised(lambda: _native_abort(memory_limit, as_json),  # where glibc may end it
                   lambda pid: _temporary_output(output, pid),
                   lambda: _killed(output))
    if format is QueryFormat.jsonl and output is None:  # any failure from here: its line
        answer_open(_jsonl_error)
    with _stopped_by_signal("query", output, at_once=True), \
            _confined(output, archive_dir, engine is Engine.local and State.own_process):
        if engine is Engine.spark:  # the statement is checked, then run on Spark SQL
            opened: Any = contextlib.nullcontext(archive_spark.query(
                str(archive_dir), sql, archive_spark.master_or(master, threads), settings,
                timeout))
        else:
            opened = _archive().open_query(str(archive_dir), sql, threads=threads,
                                           memory_limit=memory_limit, timeout=timeout,
                                           on_overrun=lambda: _overrun(timeout, output,
                                                                       as_json))
        _write_result(opened, format, output, wide, memory_limit)
    _note_unrecorded(archive_dir, "query")


def _refuse_no_sql(first: str | None, second: str | None, as_json: bool) -> None:
    """A query given no SQL, said as such: `query` alone said "Missing argument '[ARCHIVE]'"
    (with BURACO_LOG_ARCHIVE set too), `query ARCHIVE` "which archive? give --archive DIR",
    and with BURACO_LOG_ARCHIVE set it ran the archive's name as SQL ("Parser Error")."""
    if second is not None:
        return
    if first is not None and (len(first.split()) != 1 or not os.path.isdir(first)):
        return  # one word that is no directory: SQL, checked as SQL
    where = f"{first}: an archive, and " if first is not None else ""
    raise fail(f"{where}no SQL to run: give it last, as in buraco-log query ARCHIVE "
               "\"SELECT count(*) FROM matches\"", EXIT_USAGE, as_json=as_json)


def _note_unrecorded(archive_dir: Path, command: str) -> None:
    """One line on stderr when the archive holds part files of no batch record: every reader
    leaves their rows out, and only verify named them (query and report said nothing)."""
    lost = _archive().store.unrecorded_parts(str(archive_dir))
    if lost:
        note(f"{archive_dir}: {_n(len(lost), 'part file')} of no batch record left out of this "
             f"{command} (their records were deleted or lost): `buraco-log verify "
             f"{archive_dir}` names them")


def _write_result(opened: Any, format: QueryFormat, output: Path | None, wide: bool,
                  memory_limit: str) -> None:
    """Write an opened query's rows: to ``output`` whole or not at all, or to stdout."""
    with opened as stream:
        try:
            if format is QueryFormat.parquet:
                import pyarrow as pa
                import pyarrow.parquet as pq  # type: ignore[import-untyped]

                assert output is not None  # checked above
                try:
                    with _writing("query", output, False), _opened(output, "wb") as f, \
                            pq.ParquetWriter(f, stream.schema, compression="zstd") as w:
                        for batch in stream:  # no half-written file on a failure
                            w.write_batch(batch)
                except (pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                    # a column Parquet has no type for (an INTERVAL, a UNION): the user's SQL
                    raise fail("query: --format parquet cannot hold this result: "
                               f"{str(exc).strip().splitlines()[0]}; cast the column in the "
                               "SQL (to VARCHAR, say) or use another --format") from None
            elif output is not None:
                with _writing("query", output, format is QueryFormat.json), \
                        _opened(output, "w") as f:
                    _write_rows(f, stream, format, None)
            else:
                _write_rows(sys.stdout, stream, format, table_width(wide))
        except MemoryError:  # the Python side of a batch, under the same bound
            raise fail(f"query: out of memory under the {memory_limit} limit while writing "
                       "the result; a larger limit may let it finish (--memory-limit)"
                       ) from None


@contextlib.contextmanager
def _stopped_by_signal(command: str, output: Path | None, at_once: bool = False
                       ) -> Iterator[Callable[[], None]]:
    """Ctrl-C (SIGINT), SIGTERM or SIGHUP ends ``command`` with one line and 130, 143 or
    129, and no output file. DuckDB turns the KeyboardInterrupt into ``RuntimeError: Query
    interrupted`` (said as a defect) or an INTERRUPT error (said as the time limit), Py4J
    into its own error: whatever comes out once a signal came, the signal is what is said. A
    second copy (the terminal's and the supervising parent's) is dropped, so the clean-up
    runs whole; a signal the process was set to ignore stays ignored. ``at_once``: a query
    DuckDB does not stop within :data:`SIGNAL_GRACE` seconds ends the process from the
    signal's watcher (a `report` runs only its own SQL, and cleans up its pages)."""
    met: list[int] = []

    def stop_if_signalled() -> None:
        """Called before the output is written: a signal whose KeyboardInterrupt was dropped
        on its way (inside DuckDB) still stops the command, instead of ending it 0."""
        if met:
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield stop_if_signalled
        return

    def on_signal(signum: int, _frame: object) -> None:
        if not met:
            met.append(signum)
            raise KeyboardInterrupt

    ending = threading.Lock()  # the main thread's end or stuck()'s, never both

    def stuck(signum: int) -> None:
        """The signal unheeded :data:`SIGNAL_GRACE` seconds on (DuckDB inside a scalar
        function building one huge value: Ctrl-C took 15 s on a `repeat` of 900 MB): the
        command ends here, as the main thread would have ended it."""
        if not ending.acquire(blocking=False):
            return
        how, status = said_as(signum)
        written = "" if output is None else _left_by_signal(output)
        for leftover in _temporary_output(output, os.getpid()):
            leftover.unlink(missing_ok=True)
        # said from a thread of its own, waited for a moment only (as _overrun says it)
        said = threading.Thread(target=lambda: fail(f"{command}: {how}{written}", status),
                                daemon=True)
        said.start()
        said.join(2.0)
        _end(status)

    # taken over from Python's and from cli.signals' (SIGTERM as Ctrl-C, which knows nothing
    # of DuckDB); one the process was set to ignore stays
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM,
                                                         signal.SIGHUP)
                if signal.getsignal(s) in (signal.default_int_handler, signal.SIG_DFL)
                or getattr(signal.getsignal(s), "__module__", None) == "cli.signals"}
    try:
        with _interrupting_duckdb(stuck if at_once else None):
            yield stop_if_signalled
    except BaseException:
        if not met:
            raise
        ending.acquire()  # held by stuck(): it ends the process
        how, status = said_as(met[0])
        written = "" if output is None else _left_by_signal(output)
        fail(f"{command}: {how}{written}", status)  # its status: -f json answers in JSON
        _end(status)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _left_by_signal(output: Path) -> str:
    """What a signal left of ``output``, said after the command's "interrupted"."""
    if output in _PUT_IN_PLACE:
        return f" after {output} was written whole"
    if written_in_place(output):  # standard output, a FIFO, a device: written as it came
        return f"; what went to {output} may be cut short"
    return f"; nothing was written to {output}"


SIGNAL_GRACE = 0.8
"""Seconds a command interrupted by a signal waits for DuckDB to stop before it ends itself
(:func:`_interrupting_duckdb`): Ctrl-C is answered within a second."""


@contextlib.contextmanager
def _interrupting_duckdb(stuck: Callable[[int], None] | None = None) -> Iterator[None]:
    """Interrupt this process's DuckDB queries once SIGINT or SIGTERM comes, from a thread
    woken by the signal itself (``signal.set_wakeup_fd``), and again every 50 ms until the
    process ends (it is ending). The Python handler's KeyboardInterrupt did not stop them:
    DuckDB dropped it about half the time while it ran a query, and while it prepared a
    streaming result it never ran the handler at all, so a `report` ran its query to the end
    and a `query` to its time limit (or for ever, with --timeout 0), the signal unheeded. An
    interrupt that comes before a query starts is dropped, hence again. Only while DuckDB is
    loaded does it do anything (not for Spark). ``stuck(signum)`` is called once if DuckDB
    still runs :data:`SIGNAL_GRACE` seconds after the signal (it heeds no interrupt inside a
    scalar function building one huge value)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        os.close(read_end)
        os.close(write_end)
        yield
        return
    wanted = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}

    def watch() -> None:
        while True:
            try:
                data = os.read(read_end, 64)
            except OSError:
                data = b""
            if not data:  # the command ended without a signal
                os.close(read_end)
                return
            if wanted & set(data):
                break
        signum = next(s for s in data if s in wanted)
        views = sys.modules.get("buraco_log.archive.views")
        late = time.monotonic() + SIGNAL_GRACE
        while views is not None:
            views.interrupt_all()
            time.sleep(0.05)
            if stuck is not None and time.monotonic() > late:
                stuck(signum)

    threading.Thread(target=watch, name="buraco-log interrupt", daemon=True).start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        os.close(write_end)  # the watcher reads the end of the pipe, or interrupts on


def _native_abort(memory_limit: str, as_json: bool) -> None:
    """Said for a query process that glibc ended at the memory bound (cli.supervise)."""
    fail(f"query: out of memory under the {memory_limit} limit; a larger limit may let it "
         "finish (--memory-limit): a thread could not get its thread-local data",
         as_json=as_json)


def _killed(output: Path | None) -> None:
    """Said for a query process killed by SIGKILL (cli.supervise), which the command then dies
    of too: the out-of-memory killer's kill was "error: Invalid argument", exit 1. On stderr
    alone: the child may have begun an answer on stdout, which a second document would
    follow."""
    fail("query: its process was killed (SIGKILL: the system's out-of-memory killer, or kill "
         "-9)" + ("" if output is None else f"; nothing was written to {output}"),
         128 + signal.SIGKILL)


def _overrun(timeout: float, output: Path | None, as_json: bool) -> None:
    """End a query still running well past its time limit, from the watchdog's thread: DuckDB
    heeds no interrupt inside some scalar functions (``lpad`` of 400 MB ran 26 s past a 2 s
    limit), so the process ends here, its unfinished ``--output`` removed, with the line the
    time limit always gives."""
    for leftover in _temporary_output(output, os.getpid()):
        leftover.unlink(missing_ok=True)
    # said from a thread of its own, waited for a moment only: the main thread may hold
    # standard output, blocked on a pipe nobody reads, and the process must end all the same
    line = f"query: stopped after the {timeout} s time limit"  # as the interrupt says it
    said = threading.Thread(target=lambda: fail(line, as_json=as_json,
                                                error=ArchiveError(line)), daemon=True)
    said.start()
    said.join(2.0)
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(1)


@contextlib.contextmanager
def _confined(output: Path | None, archive_dir: Path, confining: bool) -> Iterator[None]:
    """With ``confining`` (the query's own child, before DuckDB starts its threads), let the
    kernel refuse this process every file write but ``output``'s, every read outside the
    archive and the code it runs (:func:`_libraries`), and every TCP connection
    (:mod:`buraco_log.archive.confine`, Linux Landlock; nothing where there is none). The
    threads running already (the signal watcher's) stay free, and run no SQL. A renamed
    output's temporary file is made now, so that a rule can name that one file (one on its
    directory would let the query write an archive inside it), and removed on the way out
    unless it was renamed into place: inside _stopped_by_signal, whose end skips every exit
    hook (a kill leaves it to the supervising parent)."""
    if not confining:
        yield
        return
    # imported now (pandas hidden first), while their folders can be read wherever they lie
    _archive()
    from buraco_log.archive import confine, views  # noqa: F401

    dirs: list[tuple[str, int]] = []
    files: list[str] = []
    made = False
    tmp = None if output is None or written_in_place(output) else _temporary(
        rename_target(output))
    try:
        if output is not None and tmp is None:
            files.append(str(output))  # a FIFO, /dev/null (standard output is open already)
        elif tmp is not None:
            try:  # as _opened makes it: private where the file it replaces was
                kept = stat.S_ISREG(os.stat(rename_target(output or tmp)).st_mode)
            except OSError:
                kept = False
            with contextlib.suppress(OSError):  # an unwritable place: _opened says so later
                os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW,
                                 0o600 if kept else 0o666))
                made = True
                files.append(str(tmp))
                # the rename over the old output: a name made and one removed, no file written
                dirs.append((str(tmp.parent), confine.MAKE_REG | confine.REMOVE_FILE))
        try:
            confine.confine(dirs, files, [str(archive_dir), *_libraries()])
        except OSError as exc:  # Landlock there but refusing: the sandbox's other walls
            note(f"query: the kernel's confinement could not be set ({exc.strerror}); the "
                 "query runs in DuckDB's sandbox alone")
        yield
    finally:
        if made and tmp is not None:  # only ours: a read-only place said EROFS a second time
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)


# What a query's process reads besides the archive: the system's libraries, time zones and
# locales (beneath /usr and /lib), what the kernel shows (/proc, /sys, /dev), and the loader's
# cache and the local time zone of /etc, of which nothing else is read
SYSTEM_READS = ("/usr", "/lib", "/lib32", "/lib64", "/proc", "/sys", "/dev",
                "/etc/ld.so.cache", "/etc/localtime")


def _libraries() -> list[str]:
    """Where this process reads code from: Python's prefixes (its standard library and
    site-packages), each entry of ``sys.path`` that holds a module already imported (a user's
    site-packages: `pip install --user`), the folder of each package already imported (or
    the file of a module) wherever it lies (an editable install), and
    :data:`SYSTEM_READS`. Not the directory the command runs in (``sys.path``'s '')."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    files: list[str] = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or "." in name:
            continue  # a submodule lies in its top package's folder
        files.append(path)
        found.add(os.path.dirname(path) if hasattr(module, "__path__") else path)
    for entry in {os.path.abspath(e) for e in sys.path if e}:
        if any(f.startswith(os.path.join(entry, "")) for f in files):
            found.add(entry)
    found = {p for p in found if os.path.isabs(p)}  # not "<frozen>", "<stdin>"

    def beneath_another(path: str) -> bool:  # one rule for a folder and what it holds
        parent = os.path.dirname(path)
        while parent != path:
            if parent in found:
                return True
            path, parent = parent, os.path.dirname(parent)
        return False

    return sorted(p for p in found if not beneath_another(p)) + list(SYSTEM_READS)


def _temporary_output(output: Path | None, pid: int) -> list[Path]:
    """The file :func:`_opened` was writing in process ``pid``, if any."""
    if output is None or written_in_place(output):
        return []
    target = rename_target(output)
    return [target.with_name(f".{temp_stem(target.name)}.{pid}.tmp")]


def _write_rows(out: IO[str], stream: archive.QueryStream, format: QueryFormat,
                width: int | None) -> None:
    """Write the stream's rows batch by batch; only the table format holds them all."""
    columns = list(stream.schema.names)
    keys = _unique(columns)
    if format is QueryFormat.table:
        held: list[list[Any]] = []
        for batch in stream:
            if len(held) + batch.num_rows > TABLE_MAX_ROWS:
                raise fail(f"query: more than {TABLE_MAX_ROWS:,} rows for --format table, "
                           "which holds them all in memory: use --format csv, jsonl, json or "
                           "parquet, or add a LIMIT")
            held += map(list, zip(*(_pylist(c) for c in batch.columns), strict=True))
        out.write(_text_table(columns, held, width))
        return
    # One write per batch: with PYTHONUNBUFFERED set, csv's one write per row cost 5 us a row.
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cr = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    # csv is exact for programs; on a terminal a person reads it, and an ESC sequence from a
    # log would be run, not shown: escaped there as the table escapes it
    cell = _csv_cell_shown if out.isatty() else _csv_cell
    shown = _json_shown if out.isatty() and format is not QueryFormat.csv else str
    if format is QueryFormat.csv:
        w.writerow(map(terminal_safe, columns) if out.isatty() else columns)
    first = True
    whole = out is sys.stdout  # else a file, written whole or not at all anyway

    def cut(error: dict[str, Any]) -> None:  # a failure or an interrupt after the first row
        with signalmask.held():
            streamout.put(",\n" + textwrap.indent(json.dumps({"error": error}, indent=2,
                                                             sort_keys=True), "  ") + "\n]\n")
        streamout.drain(wait=streamout.ENDING_WAIT)

    for batch in stream:
        if format is QueryFormat.csv:  # by column: no dict per row
            cols = [[cell(v) for v in _pylist(c)] for c in batch.columns]
            if not any("\r" in "".join(col) for col in cols):
                w.writerows(zip(*cols, strict=True))
            else:  # csv quotes a bare CR only in QUOTE_ALL; unquoted, a reader split the row
                for row in zip(*cols, strict=True):
                    (cr if any("\r" in v for v in row) else w).writerow(row)
        elif format is QueryFormat.json:  # the same text as json.dumps(rows, indent=2)
            for r in _rows(keys, batch):
                buf.write(("[\n" if first else ",\n") + textwrap.indent(_json(r, indent=2),
                                                                        "  "))
                first = False
        else:
            buf.write("".join(_json(r) + "\n" for r in _rows(keys, batch)))
        if not whole:
            out.write(shown(buf.getvalue()))
        else:  # each byte once, whatever interrupts it: no half row before the error's object
            with signalmask.held():
                streamout.put(shown(buf.getvalue()))
                if format is QueryFormat.json and not first:
                    answer_open(cut)  # the list begun: a failure ends it with the error
            streamout.drain()
        buf.seek(0)
        buf.truncate()
    if format is QueryFormat.json:
        buf.write("[]\n" if first else "\n]\n")
    if not whole:
        out.write(shown(buf.getvalue()))
        return
    with signalmask.held():
        streamout.put(shown(buf.getvalue()))
        answer_open(_drained)  # whole: an interrupt now only sends the rest
    streamout.drain()
    answer_open(None)


def _drained(_error: dict[str, Any]) -> None:
    """The end of an answer already whole, sent (a few seconds at most)."""
    streamout.drain(wait=streamout.ENDING_WAIT)


def _jsonl_error(error: dict[str, Any]) -> None:
    """JSON Lines' last line when the query fails or is interrupted, before its first row or
    after its last: ``{"error": {...}}``, which no row is (a row holds the query's columns),
    so that a reader can tell the rows of a query cut short from all of them."""
    streamout.write_whole(json.dumps({"error": error}, sort_keys=True) + "\n",
                          wait=streamout.ENDING_WAIT)


def _check_timeout(timeout: float, as_json: bool) -> None:
    # typer's min=0 passes inf (and 1e309, read as inf), which ran with no limit: a mistyped
    # limit must not remove the limit; 0 is the one way to ask for none
    if not math.isfinite(timeout):
        raise fail(f"--timeout {timeout}: not a number of seconds (0 for no limit)",
                   EXIT_USAGE, as_json=as_json)


@contextlib.contextmanager
def _nothing_written(output: Path | None, as_json: bool) -> Iterator[None]:
    """A report that failed before its text was made (the time limit, a damaged file) says
    that its ``--output`` was not written: the file is written only once the report is whole."""
    try:
        yield
    except ArchiveError as exc:
        if output is None:
            raise
        raise fail(f"{exc}; nothing was written to {output}",
                   getattr(exc, "exit_status", EXIT_FINDINGS), as_json=as_json,
                   error=exc) from None


@contextlib.contextmanager
def _working(what: str) -> Iterator[None]:
    """A spinner on stderr while a long step runs, only when someone watches a terminal."""
    if not progress_shown():
        yield
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(stderr=True)
    # the words as they are: an archive named `club[bold]` lost its brackets to rich markup,
    # and `a[/b]` was an internal error (MarkupError); braille dots on a terminal that is not
    # UTF-8 were printed as `\u280b`
    spinner = "dots" if console.encoding.lower().startswith("utf") else "line"
    with console.status(Text(terminal_safe(what)), spinner=spinner):
        yield


@guarded
def report(
    archive_dir: Annotated[Path | None, typer.Argument(
        metavar="[ARCHIVE]", show_default=False, parser=named_path,
        help="The archive directory (or --archive).")] = None,
    archive: ArchiveOpt = None,
    format: Annotated[ReportFormat, typer.Option(
        "--format", "-f",
        help="table for people, json for programs, html for a browser.")] = ReportFormat.table,
    output_name: Annotated[str | None, typer.Option("--output", "-o", metavar="PATH",
                                                   help="Write here instead of stdout ('-': "
                                                   "stdout).", show_default=False)] = None,
    top: Annotated[int, typer.Option(min=0, max=1_000_000,
                                     help="Players in the leaderboard (0: all).")] = 20,
    timings: Annotated[bool, typer.Option(
        "--timings", help="JSON: say how long each section's query took (ms).")] = False,
    timeout: Annotated[float | None, typer.Option(
        min=0.0, metavar="SECONDS", show_default=False,
        help=f"Seconds before the report is stopped (0: no limit) [default: "
             f"{DEFAULT_TIMEOUT:g}; none with --engine spark].")] = None,
    wide: Annotated[bool, typer.Option(
        "--wide", help="Table: never cut a column to the terminal's width.")] = False,
    engine: Annotated[Engine, typer.Option(help=ENGINE_HELP)] = Engine.local,
    master: Annotated[str | None, typer.Option(help=MASTER_HELP, show_default=False)] = None,
    conf: Annotated[list[str] | None, typer.Option(help=CONF_HELP, metavar="KEY=VALUE",
                                                   show_default=False)] = None,
) -> None:
    """The canned analyses: win rates, canastras, pile pickups, hands, morto, leaderboard."""
    format = ReportFormat.table if format is ReportFormat.text else format
    as_json = format is ReportFormat.json
    output = _output_file(output_name, as_json)
    archive_dir = _the_archive(archive, archive_dir, as_json)
    _outside_archive(output, archive_dir, as_json)
    if timeout is None:  # a Spark report over a cluster's archive takes minutes: no limit
        timeout = 0.0 if engine is Engine.spark else DEFAULT_TIMEOUT  # unless one is asked
    _check_timeout(timeout, as_json)
    settings = spark_options(engine, master, conf)
    # outside the signal's handling, which says a signal itself (once)
    with _nothing_written(output, as_json), _stopped_by_signal("report", output) as stop_if:
        if engine is Engine.spark:
            rep = archive_spark.report(str(archive_dir), top,
                                       archive_spark.master_or(master, None), settings, timeout)
        else:
            with _working(f"report: running the canned queries over {archive_dir}"):
                rep = _archive().report(str(archive_dir), top=top, timeout=timeout)
        stop_if()  # a signal DuckDB's last query swallowed ended the report 0, nothing said
        html = format is ReportFormat.html
        with _writing("report", output, format is ReportFormat.json), \
                _new_pages(output if html else None) as pages:
            text = _report_text(rep, format, timings, output, wide, pages)
            _write_report(text, output, pages.swap if pages is not None else None)
    _note_unrecorded(archive_dir, "report")


def _report_text(rep: Any, format: ReportFormat, timings: bool, output: Path | None,
                 wide: bool, pages: _Pages | None = None) -> str:
    """The report as ``format`` (an HTML report writes its match pages into ``pages``)."""
    if format is ReportFormat.json:
        data = msgspec.to_builtins(rep)
        if not timings:  # the same archive gives the same JSON, run after run
            for section in data["sections"]:
                section.pop("ms", None)
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    if format is ReportFormat.html:
        return str(_archive().render_html(rep, pages.write(rep.sections) if pages else {}))
    parts = [f"{_n(rep.matches, 'match')}, {_n(rep.events, 'event')}\n"]
    for s in rep.sections:
        parts.append(f"\n{s.title}\n")
        width = None if output else table_width(wide)
        parts.append(_text_table(s.columns, s.rows, width) if s.rows else "(no data)\n")
    return "".join(parts)


def _write_report(text: str, output: Path | None,
                  before_rename: Callable[[], None] | None = None) -> None:
    if output is not None:
        with _opened(output, "w", before_rename) as f:
            f.write(text)
    else:
        sys.stdout.write(text)


class _Pages:
    """The match pages of an HTML report, written into a new folder beside the report's
    ``matches/`` (``.matches.PID.new``) and swapped in whole just before the report itself is
    renamed into place: a reader of the report never meets a folder of old and new pages
    mixed, as when the pages were written over the old ones one by one, and a report cut short
    (a crash, a full disk, a signal) leaves the old report and its pages as they were."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder  # where the pages go: matches/, or the folder it links to
        self.new = _beside(folder, f"{os.getpid()}.new")
        self.old = _beside(folder, f"{os.getpid()}.old")
        self.links: dict[str, str] = {}
        self.swapped = ""  # how swap put the new folder in: "", "made", "exchanged", "renamed"

    def write(self, sections: Any) -> dict[str, str]:
        from buraco_log.view.links import match_pages  # the viewer only for an HTML report
        from cli.view_cmd import MATCH_PAGES

        if self.folder.exists() and not self.folder.is_dir():  # never swapped out of sight
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR),
                                     str(self.folder))
        self.new.mkdir(mode=0o700)  # its mode once whole (see swap)
        try:
            found = match_pages(sections, self.new)
        except OSError as exc:  # a full disk: the page named where it goes, not the new folder
            named = exc.filename if isinstance(exc.filename, str) else None
            if named is None or not named.startswith(f"{self.new}{os.sep}"):
                raise
            raise OSError(exc.errno, exc.strerror,
                          str(self.folder / named[len(str(self.new)) + 1:])) from None
        self.links = {src: f"{MATCH_PAGES}/{name}" for src, name in found.items()}
        return self.links

    def swap(self) -> None:
        """Put the new folder where the old one is, in one step where the system can
        (``renameat2`` with ``RENAME_EXCHANGE``: at every moment one whole folder is there),
        else in two renames. The folder keeps the mode and group of the one it replaces (a
        private folder of pages stayed private); nothing to link leaves the old one alone."""
        if not self.links:
            return
        try:
            old = os.stat(self.folder)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            with contextlib.suppress(OSError):  # another group of the user's, or none
                os.chown(self.new, -1, old.st_gid)
            os.chmod(self.new, stat.S_IMODE(old.st_mode))
        else:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(self.new, 0o777 & ~mask)  # a folder as mkdir makes it
        _fsync_dir(self.new)
        if old is None:
            os.rename(self.new, self.folder)
            self.swapped = "made"
        elif _exchange(self.new, self.folder):
            self.swapped = "exchanged"
        else:
            os.rename(self.folder, self.old)
            os.rename(self.new, self.folder)
            self.swapped = "renamed"
        _fsync_dir(self.folder.parent)

    def undo(self) -> None:
        """The old folder back in place: the report itself could not be renamed over the old
        one (``-o`` names a directory, say), so its pages must not stay in either."""
        with contextlib.suppress(OSError):
            if self.swapped == "exchanged":
                _exchange(self.new, self.folder)
            elif self.swapped in ("made", "renamed"):
                os.rename(self.folder, self.new)
                if self.swapped == "renamed":
                    os.rename(self.old, self.folder)
        self.swapped = ""

    def clean(self) -> None:
        """The folder not swapped in (the report was not written), or the old one out."""
        for leftover in (self.new, self.old):
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)


def _beside(folder: Path, what: str) -> Path:
    return folder.with_name(f".{folder.name}.{what}")


@contextlib.contextmanager
def _new_pages(output: Path | None) -> Iterator[_Pages | None]:
    """The match pages of the HTML report written to ``output`` (None: no pages, on stdout,
    or into /dev/null, a FIFO or /dev/stdout, whose "beside" is /dev). Leftovers of a run
    cut short by a crash or SIGKILL (``.matches.PID.new`` or ``.old`` of a process that is
    gone) are removed first."""
    from cli.view_cmd import MATCH_PAGES

    if output is None or written_in_place(output):
        yield None
        return
    folder = output.parent / MATCH_PAGES
    if folder.is_symlink() and folder.is_dir():  # a link to the pages' folder stays a link
        folder = Path(os.path.realpath(folder))
    _remove_leftovers(folder)
    pages = _Pages(folder)
    try:
        yield pages
    except BaseException:
        pages.undo()
        raise
    finally:
        pages.clean()


_LEFTOVER = re.compile(r"\.(\d+)\.(new|old)")


def _remove_leftovers(folder: Path) -> None:
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder.parent):
            name = entry.name
            prefix = f".{folder.name}"
            if not name.startswith(prefix) or not entry.is_dir(follow_symlinks=False):
                continue
            m = _LEFTOVER.fullmatch(name[len(prefix):])
            if m is None or _alive(int(m.group(1))):
                continue
            shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # a leftover of an earlier process that had this id
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step (Linux ``renameat2``, ``RENAME_EXCHANGE``); False
    where the system or its file system cannot."""
    try:
        renameat2(a, b, RENAME_EXCHANGE)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            return False
        raise OSError(exc.errno, exc.strerror, str(b)) from None
    return True


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@guarded
def compact(
    archive_dir: Annotated[Path | None, typer.Argument(
        metavar="[ARCHIVE]", show_default=False, parser=named_path,
        help="The archive directory (or --archive).")] = None,
    archive: ArchiveOpt = None,
    before: Annotated[datetime.datetime | None, typer.Option(
        formats=["%Y-%m-%d"], metavar="YYYY-MM-DD", show_default=False,
        help="Merge only batches committed before this day (UTC): later ones stay apart, to "
        "be dropped and ingested again on their own.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Say what would be merged; write nothing.")] = False,
    format: Annotated[Format, typer.Option(
        "--format", "-f", help="table for people, json for programs.")] = Format.table,
) -> None:
    """Merge small batches into few: the same rows in fewer, larger files, so queries open
    fewer files. Every file merged is first checked against its batch record."""
    as_json = format is Format.json
    archive_dir = _the_archive(archive, archive_dir, as_json)
    with terminate_as_interrupt() as met:  # SIGTERM killed it without a word
        try:
            rep = _compact_with_progress(str(archive_dir), before.date() if before else None,
                                         dry_run)
        except KeyboardInterrupt:
            how, status = stopped_by(met)
            fail(f"compact: {how}: the merges already committed stay, and readers see every "
                 "row once; run the same command again to finish (it removes what the merge "
                 "under way left)", as_json=as_json)
            _end(status)
    if as_json:
        from buraco_log.archive.schema import storable

        rep.recovered = [storable(p) for p in rep.recovered]  # no lone surrogate in JSON
        rep.postponed = [storable(p) for p in rep.postponed]
        emit_json(rep)
    else:
        where = terminal_safe(str(archive_dir))
        merged = sum(len(m.replaces) for m in rep.merges)
        if rep.recovered:
            typer.echo(f"cleaned up after {_interrupted(rep.cut_short)}: "
                       f"{len(rep.recovered)} file(s)")
        if not rep.merges:
            until = f" before {before.date()}" if before else ""
            why = (f"none small enough to merge{until}" if not rep.small else
                   f"merging the {rep.small:,} small ones{until} would make no fewer files "
                   "(their rows are in different partitions)")
            typer.echo(f"{where}: nothing to compact: {_n(rep.batches_before, 'batch')} "
                       f"({_n(rep.files_before, 'file')}), {why}")
        else:
            verb = "would merge" if dry_run else "merged"
            typer.echo(f"{where}: {verb} {merged:,} batches into {len(rep.merges):,} "
                       f"({rep.files_before:,} files to {rep.files_after:,}; "
                       f"{_n(rep.batches_after, 'batch')} {'would be ' if dry_run else ''}"
                       "left), "
                       + ("nothing written" if dry_run else
                          f"every row kept, in {rep.seconds:.1f} s"))
        if rep.ratings_refreshed:
            typer.echo(f"{where}: the stored ratings did not cover the committed batches: "
                       + ("they would be computed again" if dry_run else "computed again"))
        if rep.postponed:  # a query still read them: removed under it, it stopped
            typer.echo(f"{_n(len(rep.postponed), 'replaced file')} left in place for the "
                       "queries still reading them: the next ingest or compact removes them")


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "es" if noun.endswith("ch") else "s")


def _compact_with_progress(root: str, before: datetime.date | None, dry_run: bool) -> Any:
    from buraco_log.archive.compact import compact

    _archive()  # its waits said

    if not progress_shown() or dry_run:
        return compact(root, before=before, dry_run=dry_run)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("compact"), BarColumn(), MofNCompleteColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("compact", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, total=total, completed=done)

        return compact(root, before=before, on_progress=update)


def register(app: typer.Typer) -> None:
    """Add these commands to the top level of ``app``."""
    app.command("ingest")(ingest)
    app.command("query")(query)
    app.command("report")(report)
    app.command("compact")(compact)


def verify_archive(path: Path, as_json: bool) -> None:
    """`verify ARCHIVE`: every committed file read back against its batch record's SHA-256
    and size. Exit 1 when a file is missing or changed: one stderr line each, naming the
    file, its batch and the rule."""
    from buraco_log.archive.schema import storable

    report = _verify_with_progress(str(path))
    # names as the archive's other messages and tables give them: a byte of a file name
    # that is not UTF-8 as \xNN (it was \udcff here, and a lone surrogate in the JSON)
    report.problems = [dataclasses.replace(p, path=storable(p.path), batch=storable(p.batch))
                       for p in report.problems]
    report.leftovers = [storable(rel) for rel in report.leftovers]
    for p in report.problems:
        fix = ("" if not p.batch or p.rule == "archive.part_unrecorded"  # no batch to drop
               else f" (batch {p.batch}: let the user who reads the "
               "archive read it)" if p.message.endswith("Permission denied") else
               f" (batch {p.batch}: restore the file from a backup, or drop the batch and "
               "ingest its logs again)")
        # an error line on stderr, the rule last as every command's error line has it
        typer.echo(f"buraco-log: error: {terminal_safe(os.path.join(str(path), p.path))}: "
                   f"{terminal_safe(p.message)}{fix} [{p.rule}]", err=True)
    if as_json:
        emit_json({"archive": report.archive, "ok": report.ok, "files": report.files,
                   "bytes": report.bytes, "verified": report.verified,
                   "unrecorded": report.unrecorded, "leftovers": report.leftovers,
                   "leftover_bytes": report.leftover_bytes, "writer": report.writer,
                   "problems": [dataclasses.asdict(p) for p in report.problems]})
    else:
        links = sum(p.rule == "archive.link" for p in report.problems)
        lost = sum(p.rule == "archive.part_unrecorded" for p in report.problems)
        bad = len(report.problems) - links - lost
        state = (f"{bad:,} missing or changed" if bad
                 else "every file as committed" if report.verified == report.files
                 else "none missing") + (f", {_n(links, 'symbolic link')} in the archive"
                                         if links else "") + (
            f", {_n(lost, 'part file')} of no batch record" if lost else "")
        old = (f"; {report.unrecorded:,} from batches committed before records kept "
               "fingerprints (read, not verifiable)" if report.unrecorded else "")
        later = f"{_archive().store.BATCHES}/{_archive().store.POSTPONED}.intent"
        whose = ("of an interrupted run, or left for the queries that were reading them"
                 if later in report.leftovers else "of an interrupted ingest or compact")
        first = (f"{terminal_safe(report.leftovers[0])}"
                 + (", ..." if len(report.leftovers) > 1 else "") if report.leftovers else "")
        left = (f"; {_n(len(report.leftovers), 'leftover file')} "
                f"({report.leftover_bytes:,} bytes) {whose}, which no reader "
                f"reads and the next ingest or compact removes ({first})"
                if report.leftovers else "")
        if report.writer and report.leftovers:  # a run at work, not one cut short
            left = (f"; {_n(len(report.leftovers), 'file')} ({report.leftover_bytes:,} "
                    f"bytes) of the {report.writer} at work on the archive now, not "
                    f"committed yet, which no reader reads ({first})")
        typer.echo(f"{terminal_safe(str(path))}: archive, {report.files:,} committed files "
                   f"({report.bytes:,} bytes), {report.verified:,} verified, {state}{old}"
                   f"{left}")
    if report.problems:
        raise typer.Exit(EXIT_FINDINGS)


def _verify_with_progress(root: str) -> Any:
    from buraco_log.archive import fixity

    _archive()  # its waits said

    if not progress_shown():
        return fixity.verify_archive(root)
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("verify"), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("verify", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, total=total, completed=done)

        return fixity.verify_archive(root, on_progress=update)
