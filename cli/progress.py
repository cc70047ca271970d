"""Progress on stderr for the long commands (``simulate``, ``review``): a bar where someone
watches, plain lines where ``--progress`` is forced into a file, a pipe or a dumb terminal."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from typing import Final, Protocol

from cli.common import progress_shown


class Update(Protocol):
    """``update(done, total, rate)``: ``done`` of ``total`` (None: unchanged, or not yet
    known); ``rate`` is a short text (``"32,303 events/s"``) or empty."""

    def __call__(self, done: int, total: int | None = None, rate: str = "") -> None: ...

STEP: Final = 10
"""A plain line each time another tenth of the work is done..."""
EVERY: Final = 30.0
"""...or when this many seconds passed since the last line (a slow tenth still shows life)."""


def clock(seconds: float) -> str:
    """``H:MM:SS``, as the bar's elapsed and remaining columns say it."""
    s = max(0, int(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class ProgressLines:
    """Progress as whole lines on stderr, for a log file or a pipe: no carriage return, no
    escape sequence (a bar forced there wrote a bare newline, or its redraw codes). A line at
    the start, at each tenth done, at most ``EVERY`` seconds apart between them, and at the
    end: a long run leaves a dozen lines, not thousands."""

    def __init__(self, what: str, unit: str, total: int | None,
                 now: Callable[[], float] = time.monotonic) -> None:
        self._what = what
        self._unit = unit
        self._total = total
        self._now = now
        self._start = now()
        self._said_at: float | None = None
        self._said_step = -1
        self._said_done = -1

    def update(self, done: int, total: int | None = None, rate: str = "") -> None:
        if total is not None:
            self._total = total
        total = self._total
        now = self._now()
        step = done * STEP // total if total else -1
        due = (self._said_at is None or step > self._said_step
               or (now - self._said_at >= EVERY and done != self._said_done))
        if not due:
            return
        self._said_at, self._said_step, self._said_done = now, step, done
        elapsed = now - self._start
        parts = [f"{done:,}/{total:,} {self._unit} ({done * 100 // total}%)" if total else
                 f"{done:,} {self._unit}"]
        if done:
            parts.append(f"{clock(elapsed)} elapsed")
            if total and done < total:
                parts.append(f"ETA {clock(elapsed / done * (total - done))}")
            if rate:
                parts.append(rate)
        sys.stderr.write(f"buraco-log: progress: {self._what}: {', '.join(parts)}\n")
        sys.stderr.flush()  # a `tail -f` of the log file sees each line as it is written


@contextlib.contextmanager
def progress(what: str, unit: str, total: int | None, *, rate: bool = False) -> Iterator[Update]:
    """Progress of ``what`` (counted in ``unit``): a transient bar when stderr is a terminal
    that can redraw one, else :class:`ProgressLines`. Yields the update function; the
    caller shows progress only where asked (``--progress``, or a terminal by default)."""
    from buraco_log import watch

    # its own bar: no reading bar drawn over it
    with watch.watching(None), _progress(what, unit, total, rate=rate) as update:
        yield update


@contextlib.contextmanager
def _progress(what: str, unit: str, total: int | None, *, rate: bool) -> Iterator[Update]:
    if not progress_shown():
        lines = ProgressLines(what, unit, total)
        if total is not None:  # else the first update, which knows it, is the first line
            lines.update(0)
        yield lines.update
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = [TextColumn(what), BarColumn(), MofNCompleteColumn()]
    if rate:
        columns.append(TextColumn("{task.fields[rate]}"))
    columns += [TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=total, rate="")

        def update(done: int, total: int | None = None, rate: str = "") -> None:
            bar.update(task, completed=done, total=total, rate=rate)

        yield update


SHOW_AFTER: Final = 2.0
"""Seconds a command runs before its reading shows a bar: a short log shows none
(``BURACO_LOG_PROGRESS_AFTER`` sets another, as the tests do)."""


def _show_after() -> float:
    import os

    try:
        return float(os.environ.get("BURACO_LOG_PROGRESS_AFTER", SHOW_AFTER))
    except ValueError:
        return SHOW_AFTER


class ReadingBar:
    """The bar of a long read of one log (``buraco_log.watch``): one line on a terminal's
    stderr, redrawn in place at most ten times a second, drawn only once the command has run
    ``SHOW_AFTER`` seconds, and wiped when a step ends, so that what the command prints next
    (and ``--step``'s prompt) starts on a clean line. Notes from a forked worker draw nothing:
    the terminal is its parent's."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        import os

        self._now = now
        self._after = _show_after()
        self._start = now()
        self._drawn_at = 0.0
        self._shown = False
        self._pid = os.getpid()

    def __call__(self, what: str, done: int, total: int, unit: str) -> None:
        import os

        if os.getpid() != self._pid:
            return
        now = self._now()
        if done >= total:
            self.wipe()
            return
        if now - self._start < self._after or now - self._drawn_at < 0.1:
            return
        self._drawn_at = now
        self._shown = True
        sys.stderr.write(f"\r\x1b[K{self._line(what, done, total, unit, now)}")
        sys.stderr.flush()

    def _line(self, what: str, done: int, total: int, unit: str, now: float) -> str:
        import shutil

        width = shutil.get_terminal_size((80, 24)).columns - 1  # a wrapped line never redraws
        share = done / total if total else 0.0
        if unit == "bytes":
            digits = 1 if total < 10e6 else 0  # not "0/0 MB"
            counts = f"{done / 1e6:,.{digits}f}/{total / 1e6:,.{digits}f} MB"
        else:
            counts = f"{done:,}/{total:,} {unit}"
        tail = f" {int(share * 100):3d}% {counts} {clock(now - self._start)}"  # 99.6: 99%
        room = max(10, width - len(what) - len(tail) - 1)
        bar = "\u2501" * int(room * share) + " " * (room - int(room * share))
        return f"{what} {bar}{tail}"[:width]

    def wipe(self) -> None:
        if self._shown:
            self._shown = False
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


@contextlib.contextmanager
def reading_progress() -> Iterator[None]:
    """A bar of any long read of a log inside, on a terminal's stderr only (never in a pipe or
    a file, never on stdout); wiped at the end, however the command ends."""
    from buraco_log import watch

    if not progress_shown():
        yield
        return
    bar = ReadingBar()
    try:
        with watch.watching(bar):
            yield
    finally:
        bar.wipe()
