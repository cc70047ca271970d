"""A streamed answer on stdout (``audit -f json`` of a batch, ``query -f json`` or ``jsonl``)
written so that an interrupt never cuts it where nobody knows.

Text written through Python's stream when Ctrl-C or SIGTERM came while standard output was
full (a reader a little behind: the usual case of a long answer into a pipe) lost the part
the interrupted ``write`` held: the list ended with its error item after half an item, and
no JSON reader took it. Here each piece goes out in one ``os.write`` of at most
:data:`PIECE` bytes, made only once the descriptor can take it, with the signals held for the
write and its bookkeeping alone (never while waiting): what was sent is known to the byte,
and what an interrupt left unsent is sent first by the next write, the answer's end.
"""

from __future__ import annotations

import io
import os
import select
import stat
import sys
import threading
from typing import Final

from buraco_log import signalmask

PIECE: Final = 4096
"""Bytes a write: a pipe that select calls writable takes this many without blocking."""

ENDING_WAIT: Final = 5.0
"""Seconds an answer's end waits for a reader that stopped reading (the command is ending)."""

_sending = threading.Lock()
_unsent = bytearray()  # queued, not yet sent; what an interrupt left is sent first next time


def put(text: str) -> None:
    """Queue ``text`` for standard output; :func:`drain` sends it. Call it with the signals
    held (``signalmask.held()``) together with the caller's own record of what it wrote, so
    that the two never disagree."""
    _unsent.extend(text.encode("utf-8", "surrogateescape"))


def write_whole(text: str, wait: float | None = None) -> None:
    """``text`` on standard output after what is queued: :func:`put` and :func:`drain`."""
    with signalmask.held():
        put(text)
    drain(wait)


def drain(wait: float | None = None) -> None:
    """Send what is queued, each byte once, in order, an interrupt or not (it is raised, and
    what it left unsent stays queued). ``wait``: seconds to wait for a reader that does not
    read (None: as long as it takes); past them the rest is dropped, as the process is ending
    anyway. A stdout without a descriptor (a test's) is written as any text is."""
    out = sys.stdout
    try:
        fd = out.fileno()
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        out.write(_unsent.decode("utf-8", "surrogateescape"))
        _unsent.clear()
        out.flush()
        return
    # one writer at a time: an answer's end may be written from another thread (a query's
    # time limit, a signal DuckDB does not heed), while the main thread sends rows
    if not _sending.acquire(timeout=-1 if wait is None else wait):
        return  # the main thread holds it, blocked on a reader gone quiet: the process ends
    try:
        out.flush()  # what went through the stream before: first
        if _unsent and hasattr(out, "written"):
            out.written = True  # as NamedStdout says it
        piece = _piece(fd)
        while _unsent:
            if not select.select([], [fd], [], wait)[1]:
                _unsent.clear()
                return  # a reader gone quiet past the wait: the rest is dropped
            with signalmask.held():  # the write and its bookkeeping, never one alone
                del _unsent[:_write(fd, bytes(_unsent[:piece]))]
    finally:
        _sending.release()


def _piece(fd: int) -> int:
    """Bytes a write may hold: :data:`PIECE`, or a MiB into a regular file, which never keeps
    a write waiting on a reader."""
    try:
        return 1 << 20 if stat.S_ISREG(os.fstat(fd).st_mode) else PIECE
    except OSError:
        return PIECE


def _write(fd: int, piece: bytes) -> int:
    from cli.common import STDOUT_NAME

    try:
        return os.write(fd, piece)
    except BlockingIOError:  # a descriptor another program left non-blocking: wait, again
        return 0
    except OSError as exc:  # named as every failed write of standard output is
        raise OSError(exc.errno, exc.strerror, STDOUT_NAME) from None
