"""Progress of the long steps of reading one log (its bytes read, its events replayed), for
whoever shows it: the command line draws a bar from it on a terminal. The library calls
:func:`note` now and then (a few hundred times a log, not once an event); nothing happens
unless a watcher is installed (one at a time: a command reads one log at a time).

Core module: stdlib only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

Watcher = Callable[[str, int, int, str], None]
"""``watcher(what, done, total, unit)``: ``done`` of ``total`` ``unit`` (``bytes``, ``events``)
of the step ``what`` (``reading LOG``, ``replaying``); ``done == total`` when the step is over."""

_watcher: Watcher | None = None

STEPS = 256
"""About how many notes a step sends from start to end (a bar moves by its 256ths)."""


def active() -> bool:
    """Whether anyone watches: the readers ask once a log, not at each record."""
    return _watcher is not None


def note(what: str, done: int, total: int, unit: str) -> None:
    if _watcher is not None:
        _watcher(what, done, total, unit)


def every(total: int, least: int) -> int:
    """How far apart the notes of a step of ``total`` go: a 256th, and at least ``least``."""
    return max(total // STEPS, least)


@contextlib.contextmanager
def watching(watcher: Watcher | None) -> Iterator[None]:
    """Send the notes to ``watcher`` (None: to nobody, e.g. under a bar of its own) inside."""
    global _watcher
    before, _watcher = _watcher, watcher
    try:
        yield
    finally:
        _watcher = before
