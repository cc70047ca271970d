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
