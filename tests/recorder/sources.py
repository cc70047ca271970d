"""Matches to feed a recorder: complete legal matches played by the simulator's bots."""

from __future__ import annotations

import functools
import os
import zlib

from buraco_log import events as ev
from buraco_log import log
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match


@functools.cache
def matches(count: int = 6) -> tuple[tuple[ev.AnyEvent, ...], ...]:
    """``count`` distinct legal matches (2 and 4 players), the same on every call."""
    out = []
    for i in range(count):
        players = 2 if i % 2 else 4
        out.append(tuple(simulate_match(PRESETS["classic"], players, seed="recorder", index=i)))
    return tuple(out)


def source_of(match: str, sources: tuple[tuple[ev.AnyEvent, ...], ...]) -> tuple[ev.AnyEvent, ...]:
    """The source match a table named ``match`` replays (fixed by its name)."""
    return sources[zlib.crc32(match.encode()) % len(sources)]


def write_sources(directory: str, count: int = 6) -> list[str]:
    """Write the sources as logs (for a child process to read); returns their paths."""
    paths = []
    for i, events in enumerate(matches(count)):
        path = os.path.join(directory, f"src{i}.blog")
        if not os.path.exists(path):
            log.write_log(path, events, validate=False)
        paths.append(path)
    return paths


def on_disk(path: str) -> list[ev.AnyEvent]:
    """The intact events of a log (a torn tail is not counted)."""
    return log.read_events(path, allow_torn=True)
