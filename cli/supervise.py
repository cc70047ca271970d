"""Run the rest of a command in a forked child, watched by the parent.

A query runs under a memory bound (``RLIMIT_DATA``). When DuckDB has used it all, a thread
that touches a native library's thread-local data for the first time makes glibc allocate it,
fail, print "cannot allocate memory for thread-local data: ABORT" and end the process with
status 127, before Python can say anything. No warm-up can promise that every thread has
touched it first, so the command runs in a child whose standard error passes through the
parent: the parent replaces that line with the command's own one-line error, exits 1 as any
other out-of-memory query does, and removes the files the child was writing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli.signals import carried_on

# glibc's own words when it cannot allocate a thread's TLS block (elf/dl-tls.c, oom())
NATIVE_ABORTS = (b"cannot allocate memory for thread-local data",)
_FORWARDED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}
_WAITED = _FORWARDED | {signal.SIGCHLD}


def supervised(on_abort: Callable[[], object], leftovers: Callable[[int], list[Path]],
               on_killed: Callable[[], object] | None = None) -> None:
    """Return in a child process that runs the rest of the command; the parent never returns.

    The parent relays the child's standard error, forwards the signals sent to it with
    ``kill`` (a terminal's Ctrl-C reaches both already), and exits as the child did. If the
    child ended in a native abort, the parent calls ``on_abort`` (to say it in the command's
    words) instead of relaying glibc's line, and exits 1. A child killed by SIGKILL (the
    system's out-of-memory killer, ``kill -9``) is said by ``on_killed``, and the parent dies
    of it too. If the child aborted or died of a
    signal, ``leftovers(child_pid)`` are removed. Does nothing where ``fork`` is missing.
    """
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return
    for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    read_end, write_end = os.pipe()
    # Held, not raised, from here on in the parent: blocking reaches the main thread only, and
    # a signal sent while another thread did not block it (numpy's OpenBLAS pool, until the
    # fork stops it) ran Python's handler after the fork, in the parent. Its KeyboardInterrupt
    # there ended the parent ("error: interrupted") and left the child running the query on,
    # to its time limit, holding the caller's standard output open.
    held: list[int] = []
    previous = _hold(held)
    # blocked before the fork: a child that ends at once must not be missed (SIGCHLD
    # unblocked at its default action is discarded)
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _WAITED)
    try:
        pid = os.fork()
    except OSError:  # no room for a process: run unwatched, as before
        _restore(previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.close(read_end)
        os.close(write_end)
        for signum in held:  # met meanwhile: acted on as it would have been
            os.kill(os.getpid(), signum)
        return
    if pid == 0:  # what the parent held it forwards: the child drops its copy
        carried_on()
        _restore(previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.close(read_end)
        os.dup2(write_end, 2)
        os.close(write_end)
        _stderr_reopened()
        return
    os.close(write_end)
    _watch(pid, read_end, on_abort, leftovers, held, on_killed)


def _hold(held: list[int]) -> dict[int, Any]:
    """Every forwarded signal's Python handler replaced by one that notes it in ``held``;
    one the process ignores stays ignored. Returns the handlers replaced."""

    def hold(signum: int, _frame: object) -> None:
        held.append(signum)

    previous: dict[int, Any] = {}
    try:
        for sig in sorted(_FORWARDED):
            handler = signal.getsignal(sig)
            if handler not in (signal.SIG_IGN, None):
                previous[sig] = handler
                signal.signal(sig, hold)
    except BaseException:  # interrupted meanwhile, by the handler it was replacing
        _restore(previous)
        raise
    return previous


def _restore(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def _stderr_reopened() -> None:
    """``sys.stderr`` anew on descriptor 2, now the pipe to the parent. The stream opened on
    the file it was still held that it could seek: a wrapper made over it (click does so for
    each error line on an ASCII stream, LC_ALL=C PYTHONUTF8=0) asked its position, failed with
    "Illegal seek", and a query's error was two tracebacks."""
    old: Any = sys.stderr
    real = getattr(old, "_real", old)  # inside cli.entry's wrapper, when it is there
    try:
        fresh = open(2, "w", buffering=1 if real.line_buffering else -1,  # noqa: SIM115
                     encoding=real.encoding, errors=real.errors, closefd=False)
    except (AttributeError, OSError, ValueError):
        return
    if real is old:
        sys.stderr = fresh
    else:
        old._real = fresh


def _watch(pid: int, read_end: int, on_abort: Callable[[], object],
           leftovers: Callable[[int], list[Path]], held: list[int],
           on_killed: Callable[[], object] | None = None) -> None:
    aborted: list[bytes] = []
    relay = threading.Thread(target=_relay, args=(read_end, aborted), daemon=True)
    relay.start()
    status = None
    while status is None:
        while held:  # taken by another thread, so its handler noted it: passed on
            with contextlib.suppress(OSError):
                os.kill(pid, held.pop(0))
        # not waited for ever: a handler that noted one after the look above runs only
        # when the main thread runs Python again
        info = signal.sigtimedwait(_WAITED, 0.05)  # blocked; the relay thread too
        if info is None:
            continue
        if info.si_signo == signal.SIGCHLD:
            done, raw = os.waitpid(pid, os.WNOHANG)
            status = raw if done == pid else None
        elif info.si_code <= 0:  # sent by a process (kill, timeout): pass it on
            os.kill(pid, info.si_signo)
        # else from the terminal, which signalled the child too
    relay.join()
    code = os.waitstatus_to_exitcode(status)
    if aborted or code < 0:
        for path in leftovers(pid):
            with contextlib.suppress(OSError):
                path.unlink()
    if aborted:
        with contextlib.suppress(OSError, ValueError):
            on_abort()
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(1)
    if code == -signal.SIGKILL:  # no handler to reset: it said "error: Invalid argument"
        if on_killed is not None:
            with contextlib.suppress(OSError, ValueError):
                on_killed()
                sys.stdout.flush()
                sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    if code < 0:  # die of the same signal, so the caller sees what the child met
        signal.signal(-code, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {-code})
        os.kill(os.getpid(), -code)
        os._exit(128 - code)
    os._exit(code)


def _relay(read_end: int, aborted: list[bytes]) -> None:
    """Copy the child's standard error to ours line by line, holding back a native abort."""
    pending = b""
    while True:
        try:
            chunk = os.read(read_end, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            _pass(line + b"\n", aborted)
    if pending:
        _pass(pending, aborted)
    os.close(read_end)


def _pass(line: bytes, aborted: list[bytes]) -> None:
    if any(marker in line for marker in NATIVE_ABORTS):
        aborted.append(line)
    else:
        _write_err(line)


def _write_err(data: bytes) -> None:
    try:
        while data:
            data = data[os.write(2, data):]
    except OSError:  # standard error closed: nothing more to say
        pass
