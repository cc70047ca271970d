"""SIGTERM handled as Ctrl-C is, for the commands that must not die without a word."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

EXIT_TERMINATED = 128 + signal.SIGTERM  # 143, as a shell reports a process SIGTERM ended


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[list[int]]:
    """SIGTERM (``kill``, ``timeout``, a service manager's stop) raises KeyboardInterrupt, so
    that a command ends as on Ctrl-C: an ingest commits what was checked and removes its
    staged files, `view` and `review` leave no half-written output, and one line says so. At
    its default action it killed the process without a word. Yields the SIGTERMs met (empty:
    none); a SIGTERM the process was set to ignore stays ignored, and a forked worker dies of
    it as it would have."""
    global _met
    if _met is not None:  # installed further out (``cli.main.run`` does, for every command)
        yield _met
        return
    met: list[int] = []
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield met
        return

    me = os.getpid()

    def on_term(signum: int, _frame: object) -> None:
        if os.getpid() != me:  # a worker forked with it: die of it, as it would have
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        met.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    _met = met
    try:
        yield met
    finally:
        _met = None
        signal.signal(signal.SIGTERM, previous)


_met: list[int] | None = None
"""The SIGTERMs met while :func:`terminate_as_interrupt` is on; shared with the commands that
ask for it again inside (their own ``met`` then sees the one SIGTERM the process got)."""


def stopped_by(met: list[int] | None = None) -> tuple[str, int]:
    """What ended a command that met KeyboardInterrupt, and its exit status: Ctrl-C
    ("interrupted", 130) or SIGTERM ("terminated (SIGTERM)", 143). ``met``: the record a
    :func:`terminate_as_interrupt` block yielded, read after the block (which clears the
    shared one when it was the outermost)."""
    return ("terminated (SIGTERM)", EXIT_TERMINATED) if (met or _met) else ("interrupted", 130)
