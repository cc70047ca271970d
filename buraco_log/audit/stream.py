"""A batch's verdicts one at a time, in the order of its paths, as they are ready.

:func:`buraco_log.audit.audit_many` returns when the last log is audited, holding every
verdict: a league's season of 100,000 small logs printed its first line after 113 of 136 s, a
program reading ``audit -f json`` had nothing to read until the end, and the process held 352 MB
(62 MB now, whatever the number of logs). Here the logs go to the pool in blocks, each block's
verdicts given out in order as soon as it is done and then dropped: the first verdict comes
after the first block (a few seconds), not the last.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from buraco_log.audit.files import AnyPath, path_text

if TYPE_CHECKING:
    from buraco_log.audit import SigningOptions, Verdict

FIRST_BLOCK = 16  # logs a worker in the first block: a first verdict within seconds
LAST_BLOCK = 2048  # logs a worker in a block at most: the verdicts held at once


def audit_iter(paths: Iterable[AnyPath], *, workers: int = 1,
               require_commitment: bool = False, signing: SigningOptions | None = None,
               deaths: list[tuple[str | None, int | None]] | None = None,
               on_no_pool: Callable[[OSError], None] | None = None) -> Iterator[Verdict]:
    """The verdict of each of ``paths``, in their order, given out as they are ready (as
    :func:`~buraco_log.audit.audit_many` gives them, but never all held at once).

    ``deaths``: a list each worker process that died is appended to, as
    ``audit_many``'s ``deaths`` (the log it was on, audited again alone; its exit status);
    complete once the iterator is exhausted. Worker processes that cannot be started (no file
    descriptor left for their pipes, ``ulimit -n``; no process left, ``ulimit -u``): the logs
    are audited in this process, and ``on_no_pool`` is told why (the batch was one line
    naming the directory given, "DIR: Too many open files", exit 2, where ``-j 1`` worked).
    Receipts are checked log by log here; a receipt
    for a match no log holds needs the whole batch: :func:`~buraco_log.audit.audit_many`."""
    from buraco_log import audit

    files = [path_text(p) for p in paths]
    if signing is not None and signing.by_match is None:  # as audit_many decides it
        import dataclasses

        signing = dataclasses.replace(signing, by_match=len(files) != 1)
    workers = max(1, min(workers, len(files)))
    if workers == 1:
        for p in files:
            yield audit._audit_safely(p, require_commitment, signing)
        return
    size = FIRST_BLOCK * workers
    start = 0
    while start < len(files):
        block = files[start:start + size]
        done: list[Verdict | None] = [None] * len(block)

        def put(i: int, v: Verdict, done: list[Verdict | None] = done) -> None:
            done[i] = v

        try:
            died: list[tuple[str | None, int | None]] | None = audit._audit_in_pools(
                block, min(workers, len(block)), require_commitment, signing, put)
        except OSError as exc:  # no pool to be had: this process audits what is left
            if on_no_pool is not None:
                on_no_pool(exc)
            died = None
        if died is None:
            # the half-made pool's pipes and locks hold descriptors until collected: every
            # log after it was "Too many open files"
            gc.collect()
            for p, v in zip(block, done, strict=True):
                yield v if v is not None else audit._audit_safely(p, require_commitment,
                                                                  signing)
            for p in files[start + len(block):]:
                yield audit._audit_safely(p, require_commitment, signing)
            return
        if deaths is not None:
            deaths += died
        for v in done:
            if v is not None:
                yield v
        start += len(block)
        size = min(size * 2, LAST_BLOCK * workers)
