"""The console script's first module: signal handling before the heavy imports.

Importing the CLI (typer, rich, msgspec, every command) takes 0.2 to 2 s. A Ctrl-C in that
time was a KeyboardInterrupt traceback (and death by SIGINT), a SIGTERM death without a word
(-15). This module imports only the standard library and :mod:`cli.signals`, turns SIGTERM
and SIGHUP into KeyboardInterrupt at once, then imports the CLI: an interrupt at any moment
is one line and exit 130 (Ctrl-C), 143 (SIGTERM) or 129 (SIGHUP), as it is while a command
runs.
"""

from __future__ import annotations

import os
import sys

try:
    import codecs
    import contextlib
    import io
    from typing import Any

    from cli.signals import stopped_by, terminate_as_interrupt
except KeyboardInterrupt:  # Ctrl-C before any handler: it was a traceback, and death by SIGINT
    try:
        sys.stderr.write("buraco-log: error: interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(130)


def argv_wants_json(argv: list[str]) -> bool:
    """Whether a command line asks for ``--format json`` (its last ``-f``/``--format``), read
    from the words themselves: a usage error or an interrupt comes before click has parsed
    the options."""
    fmt = None
    words = iter(argv)
    for word in words:
        if word == "--":
            break
        if word in ("-f", "--format"):
            fmt = next(words, None)
        elif word.startswith("--format="):
            fmt = word.partition("=")[2]
        elif word.startswith("-f") and not word.startswith("--"):
            fmt = word[2:]
    return fmt == "json"


def _stopped(met: list[int]) -> None:
    """Say how the start was cut short, and end now: the half-imported CLI runs no exit hook.
    With ``-f json``, the JSON error on stdout too, as ``cli.common.error_object`` makes it."""
    how, code = stopped_by(met)
    with contextlib.suppress(Exception):
        sys.stderr.write(f"buraco-log: error: {how}\n")
        sys.stderr.flush()
    if argv_wants_json(sys.argv[1:]):
        with contextlib.suppress(Exception):
            sys.stdout.write('{\n  "error": {\n    "code": "error",\n    "exit_status": '
                             f'{code},\n    "message": "{how}"\n  }}\n}}\n')
            sys.stdout.flush()
    os._exit(code)


def _keep_stderr() -> None:
    """A process started without standard error (``2>&-``: Python then has ``sys.stderr =
    None``) gets /dev/null there. Without it, asking whether stderr is a terminal (for a
    progress bar) was an internal error that lost `audit`'s, `review`'s and `simulate`'s
    output, ``--debug`` printed its traceback into stdout's data (``print`` to a None file
    writes to stdout), and the first file opened took descriptor 2, which worker processes
    inherit as their stderr."""
    if sys.stderr is not None:
        return
    try:
        os.fstat(2)
    except OSError:  # closed indeed: reserve it
        try:
            fd = os.open(os.devnull, os.O_WRONLY)
        except OSError:
            return
        if fd != 2:  # standard output is closed too: it took 1
            os.dup2(fd, 2)
            os.close(fd)
    else:
        return  # open, though Python set none: not ours to replace
    sys.stderr = open(2, "w", closefd=False, errors="backslashreplace")  # noqa: SIM115


class _Diagnostics(io.TextIOBase):
    """Standard error, whose failure (``2>/dev/full``, a closed pipe) loses only the lines: a
    failed error line made `show` of a missing file exit 1, not 2, and `view` exit 1 after
    writing its page. From the first failure on, the lines, and the interpreter's last flush,
    go to /dev/null."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def write(self, text: str) -> int:
        if self.closed:  # closed on purpose (`| head`: stop quietly): nothing more is said
            return len(text)
        try:
            self._real.write(text)
        except OSError:
            self._lost()
        return len(text)

    def flush(self) -> None:
        if self.closed:
            return
        try:
            self._real.flush()
        except OSError:
            self._lost()

    def _lost(self) -> None:
        with contextlib.suppress(OSError):
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, self._real.fileno())
            os.close(fd)
        with contextlib.suppress(OSError):
            self._real.flush()  # what it still held: now into /dev/null

    def close(self) -> None:
        super().close()  # flushes first
        with contextlib.suppress(OSError):
            self._real.close()

    def isatty(self) -> bool:
        return bool(self._real.isatty())

    def fileno(self) -> int:
        return int(self._real.fileno())

    @property
    def buffer(self) -> Any:
        return self._real.buffer

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(self._real.encoding)

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._real, "errors", None)


def _in_utf8_mode() -> None:
    """Start again in Python's UTF-8 mode where the C locale's ASCII would read the arguments
    (``LC_ALL=C PYTHONUTF8=0``; without ``PYTHONUTF8=0`` Python chooses UTF-8 mode there
    itself). Read as ASCII, each non-ASCII byte of an argument was a lone surrogate: ``--seed
    Zoë`` was refused as "not UTF-8 text" by `simulate` and `review` and was an internal error
    in `demo`, `query`'s SQL "not UTF-8 text", a name was shown ``'nope-\\udcc3\\udcab'``.
    In UTF-8 mode an argument that is UTF-8 is text, and one that is not keeps its bytes, so
    a file is opened by the same name."""
    if (sys.flags.utf8_mode or "utf8" in sys._xoptions  # asked for: never a second start
            or os.name != "posix" or not hasattr(sys, "orig_argv")
            or codecs.lookup(sys.getfilesystemencoding()).name != "ascii"
            or not sys.executable):
        return
    with contextlib.suppress(OSError):  # not started again: the arguments stay as they are
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
        os.execv(sys.executable, [sys.executable, "-X", "utf8", *sys.orig_argv[1:]])


def _version_only() -> int | None:
    """``--version`` (or ``-V``) and nothing else, said before the command line is imported
    (typer, msgspec and the option parser: four times the interpreter's own start, for one
    line), its failures as every command says them; None where the line was not written."""
    import errno

    import buraco_log

    line = f"buraco-log {buraco_log.__version__} (log format {buraco_log.FORMAT_VERSION})\n"
    try:
        os.write(1, line.encode())  # one write: no buffer left to flush (and fail) at exit
    except BlockingIOError:  # a descriptor left non-blocking, full: the CLI's own writer
        return None
    except BrokenPipeError:  # `| head` gone already: stop quietly, as commands do
        return 141
    except OSError as exc:  # `>&-`, `> /dev/full`: one line naming it, as commands do
        why = "standard output is closed" if exc.errno == errno.EBADF else exc.strerror
        sys.stderr.write(f"buraco-log: error: <stdout>: {why}\n")
        return 1
    return 0


def run() -> None:
    """``buraco-log`` and ``python -m cli``: :func:`cli.main.run`, interruptible from the
    first moment. ``cli.main.run`` keeps the SIGTERM handling installed here (it asks for it
    again, and is given this one)."""
    try:
        _in_utf8_mode()
    except KeyboardInterrupt:  # before the handlers: said as the start's other interrupts
        _stopped([])
    _keep_stderr()
    sys.stderr = _Diagnostics(sys.stderr)
    met: list[int] = []
    try:
        with terminate_as_interrupt() as met:
            if sys.argv[1:] in (["--version"], ["-V"]):
                code = _version_only()
                if code is not None:
                    sys.exit(code)
            from cli.main import run as main_run

            main_run()
    except KeyboardInterrupt:  # while importing, or between the CLI's own catches
        _stopped(met)


if __name__ == "__main__":
    run()
