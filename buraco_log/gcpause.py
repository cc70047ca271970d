"""The cyclic garbage collector switched off, or on, around a piece of work.

Events, tables and page frames hold no reference cycles, and a command is one short process:
each full pass of the collector walks every list held (a log of 20 million events: seconds a
pass, more passes as the heap grows; 30 % of the CPU time of `replay` at 5 million events, a
sixth of a long page's build), and a Ctrl-C waits for a pass. A run over many logs turns it
back on around them: their refusals' tracebacks are cycles that would pile up.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["cyclic_gc", "no_cyclic_gc"]


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector off inside, as it was after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextlib.contextmanager
def cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector on inside, as it was after."""
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        if not was:
            gc.disable()
