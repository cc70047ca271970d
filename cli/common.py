"""Shared CLI plumbing: the --debug switch, one-line errors, output formats."""

from __future__ import annotations

import contextlib
import errno
import functools
import io
import json
import os
import re
import select
import shutil
import stat
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Final, ParamSpec, TypeVar

import msgspec
import typer

from buraco_log.errors import WRITE_FAILURES, BuracoLogError, LogFormatError
from buraco_log.gcpause import cyclic_gc as cyclic_gc
from buraco_log.gcpause import no_cyclic_gc as no_cyclic_gc
from buraco_log.log import MAGIC
from buraco_log.ruleids import RULES
from buraco_log.safetext import bytes_escaped
from cli.entry import argv_wants_json
from cli.paths import lost_directory, with_lost_directory
from cli.safetext import terminal_safe
from cli.signals import STOPPED, stopped_by

P = ParamSpec("P")
R = TypeVar("R")

EXIT_OK = 0
EXIT_FINDINGS = 1  # an error in the data, or an audit with findings
EXIT_USAGE = 2  # bad arguments (typer/click's own code too)


CONTEXT: Final = {"help_option_names": ["-h", "--help"]}
"""Every typer app and group: `-h` is `--help`, as in most tools."""


HIDDEN_ALIASES: Final = {"--out": "--output", "--seq": "--at", "--force": "--overwrite",
                         "--html": "--format html --output"}
"""Other spellings read, out of the help (cli.main reads each as the option it stands for,
in every command that has that option and not the alias itself): ``--out`` was `demo`'s and
`simulate`'s alone, every error line names a seq (``seq 23``), which a referee then types as
``--seq 23``, and ``--force`` was `keys new`'s ``--overwrite`` (`repair --force`, an option of
its own, keeps its meaning). ``--html FILE`` is `audit`'s (a page beside its report); where a
page is the answer itself (`review`, `report`) it is ``-f html -o FILE``, and ``--html FILE``
is read so there."""

OutAlias = Annotated[str | None, typer.Option("--out", hidden=True, help="--output.")]
"""``--out`` where a command declares it itself (typer's test runner reads no alias)."""


class Format(StrEnum):
    """``-f``: ``table`` (or ``text``: the same, the word ``review`` uses) for people, ``json``
    for programs. Code asks only ``format is Format.json``."""

    table = "table"
    json = "json"
    text = "text"


class Cards(StrEnum):
    """``--cards``: how cards are written in text. ``letters`` is the log's own notation
    (``7h Th JK``, Burako's ``12r``), what every command writes; ``symbols`` has suit symbols
    (``7♥ 10♥ 🃏``)."""

    letters = "letters"
    symbols = "symbols"


CardsOpt = Annotated[Cards, typer.Option(
    "--cards", help="How cards are written: letters (7h Th JK, as in the log) or symbols "
    "(7♥ 10♥ 🃏; letters under NO_COLOR or a locale that is not UTF-8, such as LC_ALL=C).")]


def symbols_shown(cards: Cards) -> bool:
    """Whether ``--cards symbols`` gets its symbols: not under ``NO_COLOR`` (a plain terminal
    asked for), nor in a locale that is not UTF-8 (``LC_ALL=C``: Python writes UTF-8 there
    anyway, which such a terminal shows as mojibake)."""
    if cards is not Cards.symbols or os.environ.get("NO_COLOR"):
        return False
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = os.environ.get(name)
        if value:  # the first one set decides, as the C library reads them
            return ".utf8" in value.replace("-", "").lower()
    return False  # no locale at all: the C locale


class State:
    debug = False
    # `--ignore-integrity`'s warning, not yet said on stderr: said once, inside the command's
    # error or note line when it has one (one line, not a warning and then the refusal), else
    # alone when the command ends
    warning: str | None = None
    # the command owns its process (the console script, not typer's test runner), so it may
    # fork a watcher (cli.supervise)
    own_process = False
    # a command said how it was stopped (Ctrl-C, SIGTERM): typer's own 130, for an interrupt
    # outside every command, says nothing, and cli.main then does
    stop_said = False
    # an answer streamed on stdout and not yet ended (a JSON list, JSON Lines): how to end it
    # with an error's object as its last item (:func:`answer_open`)
    open_answer: Callable[[dict[str, Any]], None] | None = None


def show_traceback(error: BaseException | None = None) -> None:
    """``--debug``: the traceback on stderr, before the error's one line (the exit status stays
    the one the error has without ``--debug``). The exception being handled, or ``error``; an
    error found by a check, with no exception, shows where it was raised."""
    current = sys.exc_info()[1]
    if isinstance(current, typer.Exit | SystemExit):
        current = None
    shown = current or error
    if shown is not None and shown.__traceback__ is not None:
        traceback.print_exception(shown, file=sys.stderr)
    else:
        sys.stderr.write("Traceback (most recent call last):\n")
        traceback.print_stack(sys._getframe(2), file=sys.stderr)
    sys.stderr.flush()


_REPR_OF_A_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])")


def bytes_shown(message: str) -> str:
    """``message`` with each byte that is not UTF-8 shown ``\\xNN``, as paths show it, where a
    ``repr`` of an argument wrote it ``\\udcNN`` (``--budget 'a\\udcff'``, ``'a\\udcff' is
    not one of 'table', ...``): the name the user typed, one way in every line."""
    return _REPR_OF_A_BYTE.sub(r"\\x\1", message)


def fail(message: str, code: int = EXIT_FINDINGS, *, as_json: bool = False,
         error: BaseException | None = None) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise. With ``as_json`` (the command
    was asked for ``--format json``) the error is also a JSON object on stdout, so a program
    reading stdout always gets JSON."""
    message = rule_last(bytes_shown(_named(message, _STDIN_NAMES)))
    ending, State.open_answer = State.open_answer, None
    if ending is not None and not _on_stdout(error):
        as_json = False  # the object goes inside the answer, as its last item
    elif as_json and getattr(sys.stdout, "written", None) is True:
        # part of the answer is out (`query -f json`'s rows, streamed before the query failed
        # part-way): the error's object glued after it made a second document follow a cut
        # one; stdout keeps only what was written (no parser takes it for whole), the line
        # says the rest
        as_json = False
        message = f"{message}; the JSON on standard output is cut short"
    elif not as_json and code in STOPPED and getattr(sys.stdout, "written", None) is False:
        # an interrupt said by a command's own clean-up (`query`, `report`): JSON too, when
        # the command line asked for it and nothing of the answer was written yet
        as_json = argv_wants_json(sys.argv[1:])
    if State.debug:
        show_traceback(error)
    # one line, whatever a name in the log holds (a newline, an ESC sequence), ending with the
    # rule a damaged log broke, as a refused move's line ends with its rule
    line, warning = _with_warning(_with_rule(message, error))
    line = rule_last(line)  # after --ignore-integrity's warning too: every line ends so
    typer.echo(f"buraco-log: error: {terminal_safe(line)}", err=True)
    if ending is not None and not _on_stdout(error):
        try:
            ending(_names_escaped(msgspec.to_builtins(error_object(message, code, error))))
        except (OSError, ValueError):  # stdout failed (full, gone, closed): the line says it
            drop_stdout()
    if as_json:
        try:
            obj = _names_escaped(msgspec.to_builtins(error_object(message, code, error)))
            emit_json({"error": obj} if warning is None else
                      {"error": obj, "integrity_warning": warning})
            sys.stdout.flush()
        except OSError:  # standard output is what failed (full, gone): the line on stderr says so
            drop_stdout()
    return typer.Exit(code)


def answer_open(ending: Callable[[dict[str, Any]], None] | None) -> None:
    """Say that a streamed answer is open on stdout (``ending``: how to end it with an error's
    object) or, with None, that it ended whole. A list cut by a failure or an interrupt was
    left cut ("[ {...}, {...},"), which no JSON reader parses, and JSON Lines ended as if
    whole (a reader could not tell the rows of a failed query from every row): now
    :func:`fail` ends it with the error's object as its last item, which is no row."""
    State.open_answer = ending


def _on_stdout(error: BaseException | None) -> bool:
    """Whether ``error`` is standard output's own (full, closed): nothing more can go there."""
    return isinstance(error, OSError) and error.filename == STDOUT_NAME


def _names_escaped(value: Any) -> Any:
    """The error object with each file-name byte that is not UTF-8 as ``\\xNN``, as its line
    on stderr and the archive's tables show it (it held a lone surrogate, ``\\udcfd``, which
    strict JSON readers refuse)."""
    if isinstance(value, str):
        return bytes_escaped(value)
    if isinstance(value, dict):
        return {_names_escaped(k): _names_escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):  # to_builtins keeps a struct's tuples
        return [_names_escaped(v) for v in value]
    return value


def warn_at_end(warning: str) -> None:
    """Hold ``warning`` (``--ignore-integrity``'s) for stderr: see ``State.warning``."""
    State.warning = warning


def _with_warning(message: str) -> tuple[str, str | None]:
    """``message`` with the held warning after it (then no longer held), and the warning."""
    warning, State.warning = State.warning, None
    return (message if warning is None else f"{message}; {warning}"), warning


def say_pending_warning() -> None:
    """The held warning on stderr, alone: the command ended without an error or note."""
    warning, State.warning = State.warning, None
    if warning is not None:
        typer.echo(f"buraco-log: {terminal_safe(warning)}", err=True)


def note(message: str) -> None:
    """A note on stderr, with the held warning after it in the same line: what was noted,
    then that the log it is about failed its integrity check."""
    typer.echo(f"buraco-log: note: {terminal_safe(rule_last(_with_warning(message)[0]))}",
               err=True)


def drop_stdout() -> None:
    """Forget what standard output could not take: the interpreter's last flush would fail on
    it again and print a traceback after the error line."""
    with contextlib.suppress(OSError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until the process ends


_LOG_RULES: Final = frozenset(
    kind for kind in ("header", "damage", "chain", "seq", "torn", "decode", "unknown", "version",
                      "limit", "format", "jsonl", "range", "filetype", "empty")
    if f"log.{kind}" in RULES)
"""The kinds of a damaged or unreadable log's error that are the rule an audit names (log.io,
a failed write, is no rule a missing file broke; a directory or a FIFO named as a log broke
log.filetype, as the audit's line says)."""


def log_rule(error: BaseException | None) -> str | None:
    """The rule a damaged or unreadable log's error broke (``log.KIND``), or None: the one
    source of it for the error's line and its JSON object."""
    return log_rule_of(error.kind) if isinstance(error, LogFormatError) else None


def log_rule_of(kind: str | None) -> str | None:
    """The rule of a reader's kind of damage (an audit's ``Integrity.kind`` too), or None."""
    return f"log.{kind}" if kind in _LOG_RULES else None


_RULE_TAG: Final = re.compile(r"\[([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)\]")


def rule_last(message: str) -> str:
    """``message`` with the rule it names (``[discard.card_not_in_hand]``) at its end, where
    a damaged log's line has it: ``FILE: seq 23: seat 1 (bruno) does not hold Ac [RULE]``,
    not ``FILE: seq 23 [RULE] seat 1 ...`` or ``seq 23 is illegal [RULE]; the table ...``.
    A line naming several rules, or none, is left as it is."""
    tags = [m for m in _RULE_TAG.finditer(message) if m.group(1) in RULES]
    if len(tags) != 1 or not message[tags[0].end():].strip():
        return message
    tag = tags[0]
    before, after = message[:tag.start()].rstrip(" "), message[tag.end():]
    if after.startswith(" ") and not before.endswith(":"):
        after = ":" + after  # the tag parted the place from what happened there: "seq 23: ..."
    return f"{before}{after}".rstrip() + f" [{tag.group(1)}]"


def _with_rule(message: str, error: BaseException | None) -> str:
    """``message`` ending with ``[log.KIND]`` for a damaged or unreadable log's error, unless
    it already ends with a rule (the JSON error carries it as ``rule``)."""
    rule = log_rule(error)
    if rule is not None and not message.rstrip().endswith("]"):
        return f"{message} [{rule}]"
    return message


def error_object(message: str, code: int, error: BaseException | None = None) -> dict[str, Any]:
    """The JSON form of an error: a stable code, the message, the exit status, and where."""
    obj: dict[str, Any] = {
        "code": getattr(error, "code", None) or ("usage" if code == EXIT_USAGE else "error"),
        "message": message,
        "exit_status": code,
    }
    for field in ("path", "seq", "offset", "line", "rule", "kind"):
        value = getattr(error, field, None)
        if value is not None and isinstance(value, str | int):
            obj[field] = value
    if "rule" not in obj and (rule := log_rule(error)) is not None:
        obj["rule"] = rule  # as an audit finding names it (code: the class)
    if isinstance(error, OSError) and error.filename is not None:
        obj["path"] = str(error.filename)
    if isinstance(obj.get("path"), str):  # <stdin>, not its temporary copy (removed by now)
        obj["path"] = _named(obj["path"], _STDIN_NAMES)
    return obj


def wants_json(values: dict[str, Any]) -> bool:
    """Whether a command's arguments ask for JSON output (``--format json``)."""
    return any(str(values.get(key, "")) == "json" for key in ("format", "fmt", "output_format"))


# A missing or unreadable path the user named: a usage error, not a finding in the data.
_USAGE_OS_ERRORS = (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError)
_USAGE_ERRNOS: Final = frozenset({errno.ENAMETOOLONG, errno.ELOOP, errno.EROFS})
"""A name no file can have, a loop of links, or an output on a read-only file system: the
name given is wrong, whatever the file was for (a house-rules file, a key, an output: they
exited 1, as a full disk does). A read-only place is refused as a directory without write
permission is (EACCES, 2): `convert` and `keys new` said 2 for it, `view`, `demo` and the
other writers 1."""


IN_PLACE: Final = frozenset({"seal", "repair"})
"""Commands that rewrite a log file in place: ``-`` is no file for them."""

_STDIN_NAMES: dict[str, str] = {}  # temporary file -> "<stdin>", for error messages

STDIN = Path("-")
"""``-`` in place of a log: read it from standard input."""

INPUT_PARAMETERS: Final = frozenset({"path", "paths", "source", "sources", "a", "b"})
"""The parameter names under which commands take logs to read (``-``: standard input)."""

@contextlib.contextmanager
def stdin_logs(kwargs: dict[str, Any]) -> Iterator[dict[str, str]]:
    """Put standard input where a command was given ``-`` as a log: the bytes go to a private
    temporary file (readers need a regular file they can seek), named ``stdin.blog`` or
    ``stdin.jsonl`` by the log magic. Yields the temporary names, to say ``<stdin>`` in
    errors; the file is removed afterwards."""
    names: dict[str, str] = {}
    wanted = [k for k in INPUT_PARAMETERS & kwargs.keys() if _has_stdin(kwargs[k])]
    if not wanted:
        yield names
        return
    folder = tempfile.mkdtemp(prefix="buraco-log-stdin-")
    try:
        if sys.stdin is None:  # started with standard input closed (`<&-`)
            raise fail("<stdin>: standard input is closed; give the log's path, or pipe the "
                       "log in", EXIT_USAGE, as_json=wants_json(kwargs))
        if sys.stdin.isatty():  # nobody types a log: `show -` waited in silence until Ctrl-D
            raise fail("<stdin>: standard input is a terminal; give the log's path, or pipe "
                       "the log in (- < LOG)", EXIT_USAGE, as_json=wants_json(kwargs))
        source = sys.stdin.buffer
        head = source.read(_STDIN_BLOCK)
        # JSON Lines begin with an object or a '#' comment (a byte order mark before them is
        # named by the JSON Lines reader); anything else goes to the binary reader, which names
        # what it found at byte 0 (not a log: exit 2)
        jsonl = head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"#")
        name = os.path.join(folder, "stdin.jsonl" if jsonl else "stdin.blog")
        with open(name, "wb") as f:
            f.write(head)
            # what does not begin like a log (/dev/zero, /dev/urandom) is not read on: its
            # first bytes are refused at byte 0, and an endless stream cannot hang the command
            # random bytes open with "{" or "#" one time in a hundred: JSON Lines are read on
            # only if their first line is UTF-8 (the reader names a bad one from the head)
            if (jsonl and _utf8_line(head)) or head.startswith(MAGIC):
                _copy_stdin(source, f, head, as_json=wants_json(kwargs), jsonl=jsonl)
        names[name] = "<stdin>"
        for key in wanted:
            value = kwargs[key]
            kwargs[key] = ([Path(name) if v == STDIN else v for v in value]
                           if isinstance(value, list) else Path(name))
        real, real_err = sys.stdout, sys.stderr
        sys.stdout = _Renaming(real, names)  # output names <stdin>, not the temporary file
        sys.stderr = _Renaming(real_err, names)  # and so do notes and warnings
        try:
            yield names
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.stdout, sys.stderr = real, real_err
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _utf8_line(head: bytes) -> bool:
    """Is the first line of ``head`` UTF-8 (a character cut by the end of the head allowed)?"""
    line, newline, _ = head.partition(b"\n")
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return not newline and exc.reason == "unexpected end of data"
    return True


_STDIN_BLOCK: Final = 1024 * 1024
MAX_STDIN: Final = 1024 * 1024 * 1024
"""The most read from standard input as a log (a match log is well under a megabyte)."""


def _copy_stdin(source: Any, out: Any, head: bytes, *, as_json: bool,
                jsonl: bool = False) -> None:
    """The rest of standard input after ``head`` (already written to ``out``)."""
    from buraco_log.jsonl import MAX_LINE, MAX_SKIPPED

    total = out.tell()
    line = len(head) - head.rfind(b"\n") - 1  # bytes of the last line so far
    quiet = _quiet_lines(head, 0)
    while block := source.read(_STDIN_BLOCK):
        total += len(block)
        if total > MAX_STDIN:  # an endless stream: stop, do not fill the disk
            raise fail(f"<stdin>: more than {MAX_STDIN // 2**20:,} MiB on standard input; "
                       "save the log to a file and give its path", EXIT_USAGE, as_json=as_json)
        out.write(block)
        end = block.rfind(b"\n")
        line = line + len(block) if end < 0 else len(block) - end - 1
        quiet = _quiet_lines(block, quiet)
        # the JSON Lines reader refuses a line longer than MAX_LINE, or more than MAX_SKIPPED
        # blank or comment lines in a row, naming the line, from what is copied by then, and
        # reads nothing after it: such a stream (`{` or `#` lines without end) was copied on
        # to a gigabyte (4 to 7 s, and a gigabyte of memory where /tmp is tmpfs)
        if jsonl and (line > MAX_LINE + 2 or quiet > MAX_SKIPPED + _QUIET_SLACK):
            return


_CONTENT_LINE: Final = re.compile(rb"^[ \t\r\f\v]*[^#\s]", re.MULTILINE)
_QUIET_SLACK: Final = 1024
"""Lines counted as blank or comment lines that may not be: one a block, where a block cuts a
line whose rest starts with a blank or ``#`` (at most 1024 blocks: MAX_STDIN)."""


def _quiet_lines(block: bytes, before: int) -> int:
    """How many lines in a row end blank or a comment at the end of ``block``, ``before`` of
    them before it: the newlines after the start of its last line of content."""
    last = None
    for match in _CONTENT_LINE.finditer(block):
        last = match
    if last is None:
        return before + block.count(b"\n")
    return max(block.count(b"\n", last.end()) - 1, 0)  # not the content line's own end


class _Renaming(io.TextIOBase):
    """Standard output that says ``<stdin>`` where a temporary file's name was written."""

    def __init__(self, real: Any, names: dict[str, str]) -> None:
        self._real = real
        self._names = names

    def write(self, text: str) -> int:
        self._real.write(_named(text, self._names))
        return len(text)

    def flush(self) -> None:
        self._real.flush()

    @property
    def buffer(self) -> Any:  # bytes written here are a log, never a name to replace
        return self._real.buffer

    def isatty(self) -> bool:
        return bool(self._real.isatty())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(self._real.encoding)


STDOUT_NAME: Final = "<stdout>"
"""How errors name standard output when writing to it fails (``> /dev/full``)."""


class _ClosedStdout:
    """Standard output when the process was started without one (``>&-``: Python then has
    ``sys.stdout = None``): every write fails with one error naming it, flushing has nothing
    to do."""

    encoding = "utf-8"
    errors = "strict"

    @staticmethod
    def _closed() -> OSError:
        return OSError(errno.EBADF, "standard output is closed", STDOUT_NAME)

    def write(self, data: object) -> int:
        raise self._closed()

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise self._closed()

    @property
    def buffer(self) -> _ClosedStdout:
        return self


def _raw_stdout(real: Any) -> io.RawIOBase | None:
    """Standard output's descriptor, where every write must go straight to it and be finished
    there: PYTHONUNBUFFERED=1 (set in many containers) puts the text layer straight on it, and
    a write it took in part (`view -o -` over a file size limit, or into `| head`) lost the
    rest, a cut file and exit 0; a descriptor left non-blocking by the program that started
    this one (node, some CI runners) failed a long write ("write could not complete without
    blocking", exit 1, the page cut). None: the usual buffered stream, whose writes loop."""
    buffer = getattr(real, "buffer", None)
    if isinstance(buffer, io.RawIOBase):
        return buffer
    try:
        blocking = os.get_blocking(real.fileno())
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None
    raw = getattr(buffer, "raw", None)
    if blocking or not isinstance(raw, io.RawIOBase):
        return None
    return raw


class NamedStdout(io.TextIOBase):
    """Standard output whose write errors name it: ``<stdout>: No space left on device``, not
    a bare "No space left on device" that names no file (the console script installs it)."""

    def __init__(self, real: Any) -> None:
        self._real = _ClosedStdout() if real is None else real
        self.written = False  # whether the command has written anything here yet
        self._raw = _raw_stdout(self._real)

    def write(self, text: str) -> int:
        self.written = self.written or bool(text)
        try:
            if self._raw is not None:
                try:
                    data = text.encode(self._real.encoding, self._real.errors or "strict")
                except UnicodeEncodeError:  # an ASCII stdout: UTF-8, as below
                    data = _utf8(text)
                _write_all(self._raw, data)
                return len(text)
            try:
                self._real.write(text)
            except UnicodeEncodeError:  # an ASCII stdout (LC_ALL=C PYTHONUTF8=0): UTF-8, as
                # click writes every other command's text (`review` failed, "internal error")
                self._real.flush()
                self._real.buffer.write(_utf8(text))
        except OSError as exc:
            raise _named_error(exc) from None
        return len(text)

    def flush(self) -> None:
        try:
            self._real.flush()
        except OSError as exc:
            raise _named_error(exc) from None

    @property
    def buffer(self) -> Any:  # bytes (convert -o -): their errors name <stdout> too
        self.written = True  # bytes may follow
        return _NamedBuffer(self._raw if self._raw is not None else self._real.buffer)

    def isatty(self) -> bool:
        return bool(self._real.isatty())

    def fileno(self) -> int:
        return int(self._real.fileno())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(self._real.encoding)

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._real, "errors", None)


def _write_all(raw: io.RawIOBase, data: bytes) -> None:
    """Every byte of ``data`` written to an unbuffered stream: one write may take only part
    (a pipe whose reader left, a signal, a file size limit), and the text layer above it drops
    the rest without a word."""
    view = memoryview(data)
    while view:
        done = raw.write(view)
        if done is None:  # a non-blocking descriptor that is full: wait until it takes more
            select.select([], [raw], [])
            continue
        view = view[done:]


class _NamedBuffer:
    """Standard output's bytes, whose write errors name it."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def write(self, data: bytes) -> int:
        try:
            if isinstance(self._real, io.RawIOBase):  # PYTHONUNBUFFERED: no buffer loops
                _write_all(self._real, data)
                return len(data)
            return int(self._real.write(data))
        except OSError as exc:
            raise _named_error(exc) from None

    def flush(self) -> None:
        try:
            self._real.flush()
        except OSError as exc:
            raise _named_error(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")  # a name's undecodable bytes, as read
    except UnicodeEncodeError:  # a lone surrogate no decoding made
        return text.encode("utf-8", "backslashreplace")


def _named_error(exc: OSError) -> OSError:
    if exc.filename is not None or exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror, STDOUT_NAME)  # BrokenPipeError stays one


def progress_shown() -> bool:
    """Whether a progress bar is drawn by default: only where someone watches (stderr a
    terminal), and never on a dumb one (TERM=dumb: Emacs' shell, some CI consoles), which
    cannot redraw a bar in place: it was hidden, and its end left an empty line."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


def from_stdin(path: Path | str) -> bool:
    """Whether ``path`` is the temporary file that holds a log read from ``-``."""
    return str(path) in _STDIN_NAMES


def _has_stdin(value: Any) -> bool:
    return value == STDIN or (isinstance(value, list) and STDIN in value)


def _named(message: str, names: dict[str, str]) -> str:
    for temp, shown in names.items():
        message = message.replace(temp, shown)
    return message


_INTERRUPTED: list[BaseException] = []
"""The interrupts of commands, kept with their tracebacks (see ``guarded``)."""

READS_A_LOG = frozenset({"verify", "replay", "show", "explain", "moves", "diff", "audit_cmd",
                         "convert", "seal", "repair", "view"})
"""The commands whose read of one log of millions of events shows a bar on a terminal."""


@contextlib.contextmanager
def _reading_bar(command: str) -> Iterator[None]:
    if command not in READS_A_LOG:
        yield
        return
    from cli.progress import reading_progress  # not at start-up: cli.progress imports this

    with reading_progress(), no_cyclic_gc():
        yield


def guarded(func: Callable[P, R]) -> Callable[P, R]:
    """Turn library errors into one line on stderr (traceback only with --debug), and read
    ``-`` given as a log from standard input."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        State.warning = None  # one command's (typer's test runner runs many in one process)
        State.open_answer = None
        try:
            with stdin_logs(kwargs if func.__name__ not in IN_PLACE else {}) as names, \
                    _reading_bar(func.__name__):
                _STDIN_NAMES.update(names)
                result = func(*args, **kwargs)
            say_pending_warning()
            return result
        except (typer.Exit, typer.Abort, SystemExit) as exc:
            say_pending_warning()
            State.stop_said |= getattr(exc, "exit_code", None) in STOPPED
            raise
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, as other tools do.
            sys.stderr.close()
            raise typer.Exit(141) from None
        except BuracoLogError as exc:
            path = getattr(exc, "path", None)
            message = str(exc) if path is None else with_lost_directory(str(exc), path)
            raise fail(message, getattr(exc, "exit_status", EXIT_FINDINGS),
                       as_json=wants_json(kwargs), error=exc) from None
        except OSError as exc:
            on_stdout = exc.filename == STDOUT_NAME
            if on_stdout:
                drop_stdout()
            if exc.filename is None and (lost := lost_directory()) is not None:
                # a relative name made absolute (os.getcwd failed): it was blamed on the log
                # read, named by its absolute path and right there
                raise fail(f".: {lost}", EXIT_USAGE, as_json=wants_json(kwargs),
                           error=exc) from None
            if exc.filename is not None and not on_stdout:
                exc.strerror = with_lost_directory(exc.strerror or str(exc), exc.filename)
            # a read that failed in a reader that named no file (EIO): the command's one log
            named = exc.filename or (None if exc.errno in _WRITE_ERRNOS else _sole_input(kwargs))
            where = f"{named}: " if named else ""
            # an input that cannot be read (missing, a directory, EIO) is not readable as a
            # log: 2, whichever command reads it; a failed write (a full disk) is 1
            read = exc.errno not in _WRITE_ERRNOS and named is not None and (
                exc.filename is None or str(exc.filename) in _inputs(kwargs))
            code = EXIT_USAGE if isinstance(exc, _USAGE_OS_ERRORS) or read or \
                exc.errno in _USAGE_ERRNOS else EXIT_FINDINGS
            raise fail(f"{where}{exc.strerror or exc}", code,
                       as_json=wants_json(kwargs) and not on_stdout, error=exc) from None
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (cli.main.run turns it into this)
            State.stop_said = True
            # what the command held (a log of 20 million events) stays held to the end, which
            # drops it at once (os._exit): freed object by object, it kept the line and the
            # exit waiting seconds
            _INTERRUPTED.append(exc)
            # JSON on stdout as for any failure (`show`, `audit`, `simulate` wrote none), but
            # never after part of a document (fail sees to both)
            raise fail(*stopped_by()) from None
        except Exception as exc:  # a defect of this tool: one line too, --debug shows where
            if any(c.__name__ == "ClickException" for c in type(exc).__mro__):
                raise  # a usage error raised in a command (BadParameter): main says it
            raise fail(f"internal error: {type(exc).__name__}: {exc} (a defect of buraco-log; "
                       "--debug shows its traceback)", EXIT_FINDINGS,
                       as_json=wants_json(kwargs), error=exc) from None

    return wrapper


_WRITE_ERRNOS: Final = (WRITE_FAILURES - {errno.EIO}) | {errno.EPIPE, errno.EROFS}
"""Errors only a write gives: never put on the log being read. The log writers' own list
(a full disk, a quota, a file size limit), and a closed pipe or a read-only file system; not
EIO, which a read gives too (/proc/self/mem): a writer names its file on an EIO (the
directory's fsync did not, and a conversion's blamed the log it read, exit 2)."""


def _inputs(kwargs: dict[str, Any]) -> list[str]:
    """The logs a command was given to read."""
    found: list[str] = []
    for key in INPUT_PARAMETERS & kwargs.keys():
        value = kwargs[key]
        found.extend(str(v) for v in (value if isinstance(value, list) else [value])
                     if isinstance(v, str | Path))
    return found


def _sole_input(kwargs: dict[str, Any]) -> str | None:
    """The one log a command was given to read, or None (none, or several)."""
    found = _inputs(kwargs)
    return found[0] if len(found) == 1 else None


def refuse_input_as_output(output: Path | str | None, *inputs: Path,
                           as_json: bool = False) -> None:
    """Refuse an output that is one of the logs being read (the same name, a link to it): the
    new file would be renamed over the log and the match lost. Any other file holding a match
    log is refused too (:func:`refuse_log_as_output`)."""
    if output is None or str(output) == "-":
        return
    for source in inputs:
        try:
            same = os.path.samefile(output, source)
        except (OSError, ValueError):  # one of them does not exist (yet): not the same file
            continue
        if same:
            raise fail(f"{output}: is the log being read ({source}); name another file",
                       EXIT_USAGE, as_json=as_json)
    refuse_log_as_output(output, as_json=as_json)


def holds_a_log(path: Path | str) -> bool:
    """Does the regular file at ``path`` begin as a match log: the binary magic, or a JSON
    Lines log's header or match start? (Not opened if not a regular file: no FIFO blocks.)"""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(_LOG_SNIFF)
    except (OSError, ValueError):
        return False
    if head.startswith(MAGIC):
        return True
    first = head.removeprefix(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0]
    try:
        obj = json.loads(first)
    except ValueError:  # a first line longer than the sniff: a match start begins so
        return first.replace(b" ", b"").startswith(b'{"t":"ms"')
    return isinstance(obj, dict) and (obj.get("log") == "buraco-log" or obj.get("t") == "ms")


_LOG_SNIFF = 1 << 16  # a JSON Lines log's first line (its header, or MatchStarted) fits


def refuse_log_as_output(output: Path | str | None, as_json: bool = False) -> None:
    """A page or a report replaces the file it is told to write, but never a match log: a
    log is the record of a match, and `-o` naming one by mistake would lose it."""
    if output is None or str(output) == "-":
        return
    if holds_a_log(output):
        raise fail(f"{output}: holds a match log; a page or a report never replaces a log: "
                   "name another file", EXIT_USAGE, as_json=as_json)


def emit_json(data: Any) -> None:
    """Stable JSON on stdout: sorted keys, two-space indent."""
    sys.stdout.write(json_text(data))
    sys.stdout.write("\n")


def json_text(data: Any) -> str:
    """``data`` as stable JSON (sorted keys, two-space indent), each file-name byte that is not
    UTF-8 written ``\\xNN`` as the error lines and the archive's tables write it: as a lone
    surrogate (``\\udcff``) strict JSON readers refuse the whole document."""
    obj = msgspec.to_builtins(data)
    text = _dumps(obj)
    if "\\ud" in text:  # a surrogate, paired (an emoji) or not: only then is the walk paid
        text = _dumps(_names_escaped(obj))
    return text


def _dumps(obj: Any) -> str:
    """``json.dumps(obj, indent=2, sort_keys=True)``, its pieces written into one buffer: with
    an indent the encoder is Python's, and dumps joined a list of every piece (`show -f json`
    of a 20-million-event match: 300 MB for 50 MB of text)."""
    buf = io.StringIO()
    for piece in json.JSONEncoder(indent=2, sort_keys=True).iterencode(obj):
        buf.write(piece)
    return buf.getvalue()
