"""A process pool that takes its workers down with it.

``with ProcessPoolExecutor()`` waits for the running tasks when the block ends by an exception:
a SIGINT sent to the main process alone (``kill -INT``, a supervisor) ended the main process
while its workers searched on, orphaned, holding the caller's stdout and stderr open (so a
``| cat`` reading them never ended).

A main process that dies without a word (SIGKILL, the OOM killer) runs no cleanup at all, so
on Linux each worker also asks the kernel to kill it when its parent dies
(``PR_SET_PDEATHSIG``): the orphans of an ``audit -j 2 | cat`` killed with SIGKILL waited for
work for ever, holding the pipe open (``cat`` never ended), and those of an ``ingest`` held
the archive's lock, so every later ingest was refused as "another ingest is running"."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Final, ParamSpec, TypeVar

from buraco_log.errors import BuracoLogError

_P = ParamSpec("_P")
_T = TypeVar("_T")

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class WorkerDied(BuracoLogError, BrokenProcessPool):
    """A worker of the pool ended abruptly (SIGKILL, the OOM killer): not a defect of this
    tool, and not a finding about any input. Still a :class:`BrokenProcessPool`, for callers
    that catch that (``review``). Every command said "internal error: BrokenProcessPool ...
    (a defect of buraco-log)"."""

    code = "pool.worker_died"
    exit_status = 1


def die_with_parent(parent: int | None, mask: frozenset[int] | None = None) -> None:
    """Worker initializer: be killed (SIGKILL) when the process that started this worker dies,
    and end at once if ``parent`` (the pool's process, when it forks its workers itself) is no
    longer this worker's parent. Linux only; elsewhere a no-op. ``mask``: the signal mask to
    restore (a forked worker inherits the one :func:`_signals_held` set while it started)."""
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # no libc to ask: the pool's own cleanup still runs
        return
    if parent is not None and os.getppid() != parent:  # it died before the request took effect
        os._exit(1)


_HELD: Final = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM held while the block runs, then delivered. A pool starts
    its workers in ``submit``: a SIGTERM that landed in an at-fork callback (logging's) was
    "Exception ignored" and `audit -j 2` ran on to exit 1, and one that landed mid-start left
    the pool half made. Only the main thread runs Python's signal handlers."""
    if not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _Pool(ProcessPoolExecutor):
    """A pool whose ``submit`` (which starts the workers) is never cut by a signal."""

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args,
               **kwargs: _P.kwargs) -> Future[_T]:
        with _signals_held():
            return super().submit(fn, *args, **kwargs)


def new_pool(max_workers: int) -> ProcessPoolExecutor:
    """A pool whose workers die with the process that made it (:func:`die_with_parent`)."""
    context = multiprocessing.get_context()
    direct = context.get_start_method() in ("fork", "spawn")  # else a fork server's child
    mask = (frozenset(signal.pthread_sigmask(signal.SIG_BLOCK, ()))
            if hasattr(signal, "pthread_sigmask") else None)
    return _Pool(max_workers=max_workers, mp_context=context, initializer=die_with_parent,
                 initargs=(os.getpid() if direct else None, mask))


@contextlib.contextmanager
def worker_pool(max_workers: int, doing: str = "the work") -> Iterator[ProcessPoolExecutor]:
    """A :class:`ProcessPoolExecutor` shut down normally after the block, and on any exception
    (KeyboardInterrupt included) stopped at once: queued work cancelled, workers terminated.
    A worker that died (:class:`BrokenProcessPool`) comes out as :class:`WorkerDied`, its
    message saying what the pool was ``doing`` (its one line in the CLI)."""
    pool = new_pool(max_workers)
    try:
        yield pool
    except BrokenProcessPool as exc:
        _stop(pool)
        if isinstance(exc, WorkerDied):
            raise
        raise WorkerDied(f"a worker process ended abruptly while {doing} (killed, or out of "
                         f"memory); -j 1 works in this process") from None
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown(wait=True)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` at once: queued work cancelled, workers terminated and waited for."""
    workers = list((pool._processes or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()
    for process in workers:
        process.join(5)
    # the pool's manager thread sees its workers gone and ends; waiting for it here keeps
    # the interpreter's exit from writing to the pool's closed wake-up pipe (a traceback)
    pool.shutdown(wait=True)
