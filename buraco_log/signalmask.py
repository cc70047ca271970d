"""Signals held back while a block runs that must not be cut in the middle.

Python runs signal handlers in the main thread only, between bytecodes, so a handler's
exception (KeyboardInterrupt, a SIGTERM handler's SystemExit) can land anywhere in a block:
between two ``os.close`` calls, or while a pool starts its workers. Blocking the signals at
the thread's mask defers them to the block's end, where they are delivered as usual."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterable, Iterator
from typing import Final

#: The signals an interactive or supervised process is usually sent.
USUAL: Final = tuple(getattr(signal, name) for name in (
    "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGALRM", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, name))


@contextlib.contextmanager
def held(signals: Iterable[int] = USUAL) -> Iterator[None]:
    """``signals`` held while the block runs, then delivered. Off the main thread (no handler
    can run there) and where the platform has no ``pthread_sigmask`` it does nothing."""
    if (not hasattr(signal, "pthread_sigmask")
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    # The mask is read first and set back in any case: pthread_sigmask runs the handlers of
    # signals already arrived once it has changed the mask, so the call that blocks them can
    # raise (KeyboardInterrupt) with them blocked, and they stayed blocked for good: the
    # process then took no Ctrl-C or SIGTERM.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, tuple(signals))
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
