"""One enormous log: what reading a match of millions of events costs (the default run holds
small stand-ins; the slow ones build logs of a million events)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.audit.findings import NO_SNAPSHOTS
from buraco_log.events import AnyEvent
from buraco_log.reducer import Replayer
from buraco_log.timeline import Timeline
from tests.log import longmatch
from tests.log.cli_run import REPO


def _held(events: list[AnyEvent], every: int) -> int:
    gc.collect()  # nothing freed meanwhile counts against it
    tracemalloc.start()
    try:
        timeline = Timeline(events, snapshot_every=every)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert timeline.last_seq == len(events) - 1
    return held


def _bytes_a_snapshot(count: int, every: int) -> float:
    """What each snapshot of a Timeline of ``count`` events of the long match holds."""
    events = list(longmatch.events(count, hand_size=50))  # a hand every 10 events
    Timeline(events[:200], snapshot_every=every)  # the engine's caches filled, not counted
    return (_held(events, every) - _held(events, NO_SNAPSHOTS)) / (count // every)


def test_a_timeline_snapshot_holds_the_same_however_many_hands_came_before() -> None:
    # Each snapshot copied the results of every hand ended before it: a match of 100,000
    # hands held gigabytes (`replay --at` of a one-million-event log: 551 MB, quadratic).
    small, large = _bytes_a_snapshot(400, 4), _bytes_a_snapshot(2_400, 4)
    assert large < small * 1.1, (small, large)


def test_a_jump_from_a_snapshot_sees_every_hand_ended_before_it() -> None:
    events = list(longmatch.events(1_500, hand_size=50))
    timeline = Timeline(events, snapshot_every=16)
    table = Replayer()
    for event in events:
        table.step(event)
        if event.seq % 97 in (0, 16, 95) or event.seq % 16 == 0:
            assert timeline.state_at(event.seq) == table.state(), event.seq


def _peak_mb(*args: object) -> tuple[int, int]:
    """``buraco-log ARGS`` (this checkout) in a subprocess: its exit status and peak resident
    memory in MB."""
    measure = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], "
               "stdout=subprocess.DEVNULL).returncode; "
               "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)")
    done = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "cli.main",
                           *map(str, args)], capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), check=True)
    code, peak = done.stdout.split()
    return int(code), int(peak)


@pytest.mark.slow  # a log of a million events, read four times (minutes on 2 loaded cores)
def test_a_million_event_log_is_read_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "marathon.blog"
    with log.Writer(path, validate=False, batched=True) as writer:
        writer.append_many(longmatch.events(1_000_000))
    # streams: what one segment holds
    code, peak = _peak_mb("verify", path)
    assert code == 0 and peak < 60, peak
    # holds the events and a snapshot every 64: 186 MB (551 MB when each snapshot copied
    # the results of every hand before it)
    code, peak = _peak_mb("replay", path, "--at", 999_990)
    assert code == 0 and peak < 300, peak


def _engine_bytes_a_snapshot(count: int, every: int) -> float:
    events = list(longmatch.events(count, hand_size=50))
    Replayer(snapshot_every=every).run(events[:200])  # the engine's caches filled
    held = []
    for spacing in (every, NO_SNAPSHOTS):
        gc.collect()
        tracemalloc.start()
        try:
            table = Replayer(snapshot_every=spacing)
            table.run(events)
            held.append(tracemalloc.get_traced_memory()[0])
        finally:
            tracemalloc.stop()
        del table
    return (held[0] - held[1]) / (count // every)


def test_the_engine_snapshots_hold_the_same_however_many_hands_came_before() -> None:
    # Each snapshot froze the whole table, every ended hand's results included: memory
    # quadratic in the hands. They share one list of results now (state.Snapshots).
    small, large = _engine_bytes_a_snapshot(400, 4), _engine_bytes_a_snapshot(2_400, 4)
    assert large < small * 1.1, (small, large)
