"""SIGTERM and SIGHUP handled as Ctrl-C is, for the commands that must not die without a
word."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

EXIT_TERMINATED = 128 + signal.SIGTERM  # 143, as a shell reports a process SIGTERM ended
EXIT_HUNG_UP = 128 + signal.SIGHUP  # 129: the terminal went away (a closed ssh session)
STOPPED: frozenset[int] = frozenset({130, EXIT_TERMINATED, EXIT_HUNG_UP})
"""The exit statuses of a command stopped by a signal it said in one line."""
_CAUGHT = (signal.SIGTERM, signal.SIGHUP)  # raised as KeyboardInterrupt, each said as itself


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[list[int]]:
    """SIGTERM (``kill``, ``timeout``, a service manager's stop) raises KeyboardInterrupt, so
    that a command ends as on Ctrl-C: an ingest commits what was checked and removes its
    staged files, `view` and `review` leave no half-written output, and one line says so. At
    its default action it killed the process without a word. SIGHUP (the terminal hung up) the
    same way. Yields the signals met (empty: none); one the process was set to ignore stays
    ignored, and a forked worker dies of it as it would have."""
    global _met
    if _met is not None:  # installed further out (``cli.main.run`` does, for every command)
        yield _met
        return
    met: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield met
        return

    global _owner
    _owner = os.getpid()

    def on_term(signum: int, _frame: object) -> None:
        if os.getpid() != _owner:  # a worker forked with it: die of it, as it would have
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        met.append(signum)
        raise KeyboardInterrupt

    # one the process was set to ignore (`nohup` ignores SIGHUP) stays ignored
    previous = {sig: signal.signal(sig, on_term) for sig in _CAUGHT
                if signal.getsignal(sig) == signal.SIG_DFL}
    _met = met
    _unsaid.clear()
    hook = sys.unraisablehook
    sys.unraisablehook = _redeliver(met, hook)
    try:
        yield met
    except SystemExit as exc:  # the command's end (``cli.entry`` around ``cli.main.run``)
        if exc.code not in STOPPED:
            _said_if_lost(met)
        raise
    finally:
        _met = None
        _owner = None
        sys.unraisablehook = hook
        for sig, handler in previous.items():
            if not _ended:  # held to the end (hold_late): not given back to the default
                signal.signal(sig, handler)


def lost(met: list[int]) -> bool:
    """Whether a command ending with a status that says no signal met one all the same: its
    KeyboardInterrupt was swallowed (inside a library's C code, or in a finalizer, whose one
    :func:`_redeliver` sends again a moment later, when the process may have ended): `report`
    sent SIGTERM as it ended ended 0 without a word."""
    return bool(met or _unsaid)


def _said_if_lost(met: list[int]) -> None:
    """Raise KeyboardInterrupt for a signal :func:`lost` on its way, as the command ends."""
    if lost(met):
        raise KeyboardInterrupt


def carried_on() -> None:
    """Said in a forked child that goes on with the command (``cli.supervise``'s) rather
    than working for it: SIGTERM and SIGHUP raise KeyboardInterrupt there too. As a worker
    it died of them without a word before the query's own handler took over, and its parent,
    seeing that, died of the same signal without a word (exit -15 rather than one line and
    143)."""
    global _owner
    if _owner is not None:
        _owner = os.getpid()


def _redeliver(met: list[int], fallback: Callable[[Any], object]) -> Callable[[Any], None]:
    """An unraisable hook that sends again a signal whose KeyboardInterrupt was swallowed.

    A signal handler runs wherever the main thread is, and a KeyboardInterrupt raised in an
    at-fork callback (logging's, as `audit -j 2` forked a worker) or a weakref callback is
    "ignored": a SIGTERM printed an "Exception ignored" traceback and the audit ran on to
    exit 1 (2 runs in 200). Sent again, the signal lands in the command's own code."""

    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            fallback(unraisable)
            return
        # sent from another thread a moment later: sent from here, its handler ran inside
        # this hook, where it was ignored again; noted, in case the command ends first
        _unsaid.append(met[0] if met else signal.SIGINT)
        while True:
            try:
                send = threading.Timer(0.01, os.kill, (os.getpid(), met[0] if met
                                                       else signal.SIGINT))
                send.daemon = True
                send.start()
                return
            except KeyboardInterrupt:  # another signal came meanwhile: it is sent again too
                continue

    return hook


_unsaid: list[int] = []
"""Signals whose KeyboardInterrupt a finalizer swallowed, sent again by :func:`_redeliver`."""
_owner: int | None = None
"""The process whose command :func:`terminate_as_interrupt` serves; any other is a worker."""
_met: list[int] | None = None
"""The SIGTERMs and SIGHUPs met while :func:`terminate_as_interrupt` is on; shared with the
commands that ask for it again inside (their own ``met`` then sees the one the process got)."""


def stopped_by(met: list[int] | None = None) -> tuple[str, int]:
    """What ended a command that met KeyboardInterrupt, and its exit status: Ctrl-C
    ("interrupted", 130), SIGTERM ("terminated (SIGTERM)", 143) or SIGHUP ("hung up
    (SIGHUP)", 129: it was "interrupted", 130, for `convert`, `seal` and `repair`, and a death
    without a word for the other commands). ``met``: the record a
    :func:`terminate_as_interrupt` block yielded, read after the block (which clears the
    shared one when it was the outermost)."""
    first = (met or _met or [signal.SIGINT])[0]
    return said_as(first)


def said_as(signum: int) -> tuple[str, int]:
    """The words and exit status of a command stopped by ``signum`` (SIGINT: Ctrl-C)."""
    if signum == signal.SIGTERM:
        return "terminated (SIGTERM)", EXIT_TERMINATED
    if signum == signal.SIGHUP:
        return "hung up (SIGHUP)", EXIT_HUNG_UP
    return "interrupted", 130


_ended: list[int] = []
"""The status of the command that ended, once :func:`hold_late` holds the signals."""
_late: list[int] = []
"""The signals that came after the command's end (:func:`hold_late`), said by :func:`_say_late`."""


def hold_late(status: int) -> None:
    """From the command's end (its status known, its output written) to the interpreter's,
    SIGINT, SIGTERM and SIGHUP are noted rather than raised, and the last exit hook says the
    first one in one line (:func:`_say_late`). Raised, a Ctrl-C as the process ended was a
    KeyboardInterrupt inside the interpreter's own exit (joining a pool's threads, an exit
    hook): "Exception ignored in: <module 'threading'>", its traceback, and exit 0 (a SIGTERM
    there: death without a word). A signal already come raises KeyboardInterrupt here, for
    the caller to say as any other. One the process ignores stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        for sig in held:
            if signal.getsignal(sig) not in (signal.SIG_IGN, None):
                signal.signal(sig, _note_late)
        _ended[:] = [status]
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # one that came meanwhile: noted


def _note_late(signum: int, _frame: object) -> None:
    _late.append(signum)


def _say_late() -> None:
    """The last exit hook (registered before any other module's): a signal that came after
    the command's end is said in one line, and the process ends with its status."""
    if not _late or not _ended:
        return
    how, code = said_as(_late[0])
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.write(f"buraco-log: error: {how} as it exited, after the command had "
                         f"ended (exit status {_ended[0]}): its work is done and its output "
                         "whole\n")
        sys.stderr.flush()
    os._exit(code)


atexit.register(_say_late)
