"""A process pool that takes its workers down with it.

``with ProcessPoolExecutor()`` waits for the running tasks when the block ends by an exception:
a SIGINT sent to the main process alone (``kill -INT``, a supervisor) ended the main process
while its workers searched on, orphaned, holding the caller's stdout and stderr open (so a
``| cat`` reading them never ended)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor


@contextlib.contextmanager
def worker_pool(max_workers: int) -> Iterator[ProcessPoolExecutor]:
    """A :class:`ProcessPoolExecutor` shut down normally after the block, and on any exception
    (KeyboardInterrupt included) stopped at once: queued work cancelled, workers terminated."""
    pool = ProcessPoolExecutor(max_workers=max_workers)
    try:
        yield pool
    except BaseException:
        workers = list((pool._processes or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in workers:
            process.terminate()
        for process in workers:
            process.join(5)
        # the pool's manager thread sees its workers gone and ends; waiting for it here keeps
        # the interpreter's exit from writing to the pool's closed wake-up pipe (a traceback)
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)
