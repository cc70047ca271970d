"""A process pool that takes its workers down with it.

``with ProcessPoolExecutor()`` waits for the running tasks when the block ends by an exception:
a SIGINT sent to the main process alone (``kill -INT``, a supervisor) ended the main process
while its workers searched on, orphaned, holding the caller's stdout and stderr open (so a
``| cat`` reading them never ended).

A main process that dies without a word (SIGKILL, the OOM killer) runs no cleanup at all, so
on Linux each worker also asks the kernel to kill it when its parent dies
(``PR_SET_PDEATHSIG``): the orphans of an ``audit -j 2 | cat`` killed with SIGKILL waited for
work for ever, holding the pipe open (``cat`` never ended), and those of an ``ingest`` held
the archive's lock, so every later ingest was refused as "another ingest is running".

A worker says what it is on (:func:`working_on`) in memory it shares with the pool's process,
so that the one line of a worker killed mid-run names the log it was on, and the logs the
other workers were on (cut short with it), rather than only "while auditing 600 logs"."""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Final, ParamSpec, TypeVar

from buraco_log import signalmask
from buraco_log.errors import BuracoLogError

_P = ParamSpec("_P")
_T = TypeVar("_T")

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_SLOT: Final = 1024  # bytes of one worker's label (a path; a longer one is cut)
_NAMED: Final = 3  # labels named in the one line; the rest are counted


class WorkerDied(BuracoLogError, BrokenProcessPool):
    """A worker of the pool ended abruptly (SIGKILL, the OOM killer): not a defect of this
    tool, and not a finding about any input. Still a :class:`BrokenProcessPool`, for callers
    that catch that (``review``). Every command said "internal error: BrokenProcessPool ...
    (a defect of buraco-log)"."""

    code = "pool.worker_died"
    exit_status = 1
    # For a caller that goes on without the dead worker's item (audit_many): each worker that
    # died, as (the label it held, "" between items; its exit status, -N for signal N).
    died: tuple[tuple[str, int], ...] = ()


class NoWorkers(OSError):
    """The pool's worker processes could not be started: no file descriptor left for their
    pipes (``ulimit -n``), no process left (``ulimit -u``), no memory to fork. Nothing was
    done yet; the caller does the work in its own process (as ``-j 1`` does). It was the
    bare OSError, which each command blamed on its input ("DIR: Too many open files", exit
    2, where ``-j 1`` worked). Still an OSError, with the system's errno and words."""


class _Board:
    """What each worker of one pool is on, in memory shared with the pool's process: a slot
    a worker, holding its pid and the label of the item it works on (empty between items).
    Written by the workers, read by the pool's process once they are all stopped."""

    def __init__(self, context: Any, slots: int) -> None:
        self.pids = context.RawArray("q", slots)
        self.labels = context.RawArray("c", slots * _SLOT)
        self.next = context.Value("i", 0)

    def claim(self) -> int:
        """A slot for this worker process."""
        with self.next.get_lock():
            slot = int(self.next.value) % len(self.pids)
            self.next.value += 1
        self.pids[slot] = os.getpid()
        return slot

    def put(self, slot: int, label: str) -> None:
        data = os.fsencode(label)[:_SLOT - 1] + b"\0"
        self.labels[slot * _SLOT:slot * _SLOT + len(data)] = data

    def held(self) -> list[tuple[int, str]]:
        """(pid, label) of each worker that was on an item."""
        out = []
        for slot, pid in enumerate(self.pids):
            raw = bytes(self.labels[slot * _SLOT:(slot + 1) * _SLOT]).split(b"\0", 1)[0]
            if pid and raw:
                out.append((int(pid), os.fsdecode(raw)))
        return out


_board: _Board | None = None  # in a worker: its pool's board, and its slot on it
_slot = -1


@contextlib.contextmanager
def working_on(label: str) -> Iterator[None]:
    """In a pool worker, say that the block works on ``label`` (a log's path): a worker killed
    inside it is named by it in :class:`WorkerDied`'s line. Elsewhere (``-j 1``) nothing."""
    board = _board
    if board is None:
        yield
        return
    board.put(_slot, label)
    try:
        yield
    finally:
        board.put(_slot, "")


def die_with_parent(parent: int | None, mask: frozenset[int] | None = None,
                    board: _Board | None = None) -> None:
    """Worker initializer: be killed (SIGKILL) when the process that started this worker dies,
    and end at once if ``parent`` (the pool's process, when it forks its workers itself) is no
    longer this worker's parent. Linux only; elsewhere a no-op. ``mask``: the signal mask to
    restore (a forked worker inherits the one ``submit`` set while it started).
    ``board``: where this worker says what it is on (:func:`working_on`)."""
    global _board, _slot
    if board is not None:
        _slot, _board = board.claim(), board
    # a terminal's Ctrl-C reaches the workers too: the pool's process stops them; here it was
    # a traceback from each idle worker ("Process ForkProcess-1: ... KeyboardInterrupt")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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


# A pool starts its workers in ``submit``: a SIGTERM that landed in an at-fork callback
# (logging's) was "Exception ignored" and `audit -j 2` ran on to exit 1, and one that landed
# mid-start left the pool half made. Held there, they are delivered once it has started.
_HELD: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _Pool(ProcessPoolExecutor):
    """A pool whose ``submit`` (which starts the workers) is never cut by a signal, whose
    workers say what they are on (``board``), and that can be freed when a worker died while
    it sent a result (:meth:`unjam`)."""

    board: _Board | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        queue = getattr(self, "_result_queue", None)
        self._writer_end: Any = getattr(queue, "_writer", None)  # shutdown() forgets it
        self._unjam_lock = threading.Lock()

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args,
               **kwargs: _P.kwargs) -> Future[_T]:
        with signalmask.held(_HELD):
            try:
                return super().submit(fn, *args, **kwargs)
            except OSError as exc:  # starting the workers (the first submit starts them all)
                raise NoWorkers(exc.errno, exc.strerror) from exc

    def unjam(self) -> None:
        """End every worker, then close this process's end of the result pipe.

        A worker killed while it sent a result leaves half a message in the pipe: the pool's
        manager thread waited for the rest for ever (the pipe stays open while this process
        holds a writing end), the other workers waited for the pipe's lock the dead one held,
        and `ingest -j 2` with a worker killed hung (every ``as_completed`` or ``wait`` on
        the futures too). With every writing end closed, the read ends (EOF), and the pool
        breaks as for any dead worker."""
        for process in list((self._processes or {}).values()):
            with contextlib.suppress(Exception):
                process.terminate()
        with self._unjam_lock:
            writer, self._writer_end = self._writer_end, None
            if writer is not None:
                with contextlib.suppress(OSError):
                    writer.close()


_GRACE: Final = 0.5  # seconds the pool gets to see a dead worker itself


def _watch(pool: _Pool, stop: threading.Event) -> None:
    """Watchdog thread: a worker that ended while the pool is in use means the pool is broken;
    if it is not seen as broken after :data:`_GRACE` (stuck reading the dead worker's half a
    result), :meth:`_Pool.unjam` frees it."""
    died: float | None = None
    while not stop.wait(0.1):
        if getattr(pool, "_broken", False):
            return
        if died is None:
            if _any_ended(pool):
                died = time.monotonic()
        elif time.monotonic() - died >= _GRACE:
            pool.unjam()
            return


def _any_ended(pool: ProcessPoolExecutor) -> bool:
    sentinels = []
    for process in list((pool._processes or {}).values()):
        with contextlib.suppress(ValueError):  # closed: it ended and was cleaned up
            sentinels.append(process.sentinel)
    return bool(sentinels) and bool(multiprocessing.connection.wait(sentinels, 0))


def new_pool(max_workers: int) -> ProcessPoolExecutor:
    """A pool whose workers die with the process that made it (:func:`die_with_parent`)."""
    context = multiprocessing.get_context()
    direct = context.get_start_method() in ("fork", "spawn")  # else a fork server's child
    mask = (frozenset(signal.pthread_sigmask(signal.SIG_BLOCK, ()))
            if hasattr(signal, "pthread_sigmask") else None)
    board = _Board(context, max_workers)
    pool = _Pool(max_workers=max_workers, mp_context=context, initializer=die_with_parent,
                 initargs=(os.getpid() if direct else None, mask, board))
    pool.board = board
    return pool


@contextlib.contextmanager
def worker_pool(max_workers: int, doing: str = "the work",
                after: str = "") -> Iterator[ProcessPoolExecutor]:
    """A :class:`ProcessPoolExecutor` shut down normally after the block, and on any exception
    (KeyboardInterrupt included) stopped at once: queued work cancelled, workers terminated.
    A worker that died (:class:`BrokenProcessPool`) comes out as :class:`WorkerDied`, its
    message saying what the pool was ``doing``, what the workers were on (:func:`working_on`)
    and ``after``: what became of the work (its one line in the CLI)."""
    pool = new_pool(max_workers)
    stop = threading.Event()
    if isinstance(pool, _Pool):
        threading.Thread(target=_watch, args=(pool, stop), name="pool-watchdog",
                         daemon=True).start()
    try:
        try:
            yield pool
        finally:
            stop.set()
    except BrokenProcessPool as exc:
        codes = _stop(pool)
        if isinstance(exc, WorkerDied):
            raise
        board = pool.board if isinstance(pool, _Pool) else None
        held = board.held() if board is not None else []
        died = WorkerDied(died_line(doing, after, held, codes))
        labels = dict(held)
        died.died = tuple((labels.get(pid, ""), code) for pid, code in codes.items()
                          if code not in (-signal.SIGTERM, None, 0))
        raise died from None
    except NoWorkers:
        _stop(pool)
        # the half-made pool's pipes and locks hold descriptors until collected: the work
        # done in this process instead met "Too many open files" at its every file
        import gc

        gc.collect()
        raise
    except BaseException:
        _stop(pool)
        raise
    pool.shutdown(wait=True)


def died_line(doing: str, after: str, held: list[tuple[int, str]],
              codes: dict[int, int | None]) -> str:
    """The line of a broken pool: what it was ``doing``, the label the dead worker held, the
    labels the others held (terminated by the pool, SIGTERM: cut short with it), ``after``."""
    dead = [label for pid, label in held if codes.get(pid) not in (-signal.SIGTERM, None)]
    cut = [label for pid, label in held if codes.get(pid) in (-signal.SIGTERM, None)]
    line = f"a worker process ended abruptly (killed, or out of memory) while {doing}"
    if dead:
        line += f": it was on {_names(dead)}"
    elif cut:
        line += ": it was between logs"
    if cut:
        line += f" ({_names(cut)} {'was' if len(cut) == 1 else 'were'} cut short with it)"
    return line + (f"; {after}" if after else "") + "; -j 1 works in this process"


def _names(labels: list[str]) -> str:
    named = ", ".join(labels[:_NAMED])
    more = len(labels) - _NAMED
    return named if more <= 0 else f"{named} and {more} more"


_TERM_GRACE: Final = 2.0  # seconds the workers get to end of SIGTERM before SIGKILL
_REAP_WAIT: Final = 5.0  # seconds to wait for the killed workers and the manager thread


def _stop(pool: ProcessPoolExecutor) -> dict[int, int | None]:
    """Stop ``pool`` at once: queued work cancelled, workers terminated (SIGTERM, then SIGKILL
    for one still there after :data:`_TERM_GRACE`: a worker that holds SIGTERM blocked, or
    handles it, outlived its terminate and the pool's process), the workers and the pool's
    manager thread waited for. Their exit statuses, by pid (None: the pool had to kill it)."""
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    processes = pool._processes
    pool.shutdown(wait=False, cancel_futures=True)  # from here, no worker is started
    workers = dict(processes or {})  # taken after: one started meanwhile is in it
    for process in workers.values():
        with contextlib.suppress(ValueError):  # closed: it ended and was cleaned up
            process.terminate()
    killed = _kill_survivors(workers, time.monotonic() + _TERM_GRACE)
    if isinstance(pool, _Pool):  # a worker killed mid-result left the manager thread stuck
        pool.unjam()
    # The manager thread joins the workers too, and one waitpid of the two takes a worker's
    # status: the other saw it running (exitcode None) until that thread had set it. A
    # second shutdown() does not wait for it (the first forgot it): wait here, which also
    # keeps the interpreter's exit from writing to the pool's closed wake-up pipe (a traceback).
    if manager is not None and manager is not threading.current_thread():
        manager.join(_REAP_WAIT)
    pool.shutdown(wait=True)
    return {pid: None if pid in killed else process.exitcode
            for pid, process in workers.items()}


def _kill_survivors(workers: dict[int, Any], deadline: float) -> set[int]:
    """Wait until ``deadline`` for the terminated ``workers`` to end; SIGKILL each still
    running and wait for it. The pids killed. Whether one ended is asked of its sentinel (a
    pipe the worker holds open), not of waitpid: the manager thread may have reaped it, and
    its pid may be another process's by now."""
    running = _running(workers, deadline)
    for pid in running:
        with contextlib.suppress(ValueError, OSError):
            workers[pid].kill()
    _running({pid: workers[pid] for pid in running}, time.monotonic() + _REAP_WAIT)
    return running


def _running(workers: dict[int, Any], deadline: float) -> set[int]:
    """The pids of ``workers`` still running at ``deadline`` (waiting for them until then)."""
    left: dict[Any, int] = {}
    for pid, process in workers.items():
        with contextlib.suppress(ValueError):  # closed: it ended and was cleaned up
            left[process.sentinel] = pid
    while left and (remaining := deadline - time.monotonic()) > 0:
        for ended in multiprocessing.connection.wait(list(left), remaining):
            del left[ended]
    return set(left.values())
