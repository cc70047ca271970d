"""The writing processes of the live-log probes (tests/log/test_fault_probes_live52.py): a log
written while other processes read it.

    python -m tests.log.live_writers writer SOURCE LOG COUNT PAUSE
    python -m tests.log.live_writers recorder SOURCE DIR TABLES COUNT PAUSE [SYNC]
    python -m tests.log.live_writers jsonl SOURCE LOG COUNT PAUSE SEED

``writer`` appends the first COUNT events of the log SOURCE (a whole match: read, not
simulated again in every process) with :class:`log.Writer` (fsync on) and prints ``ack SEQ``
once each append returns. ``recorder`` appends them to TABLES tables ``t0``... of a
:class:`Recorder` in DIR (SYNC: its ``sync``, ``fsync`` by default), a move of each table in
turn, and prints ``ack TABLE SEQ``. ``jsonl`` appends the JSON Lines form line by line, as a
program that logs to a text file does: each line in a few pieces (split at random, inside UTF-8
characters too), each piece flushed and fsynced on its own, and prints ``ack SEQ`` once its
line end is on disk.
Every process sleeps PAUSE seconds between events.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

from buraco_log import events as ev
from buraco_log import jsonl, log


def _ack(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def jsonl_lines(events: list[ev.AnyEvent]) -> list[bytes]:
    """The JSON Lines form of ``events`` (a first line, then one per event;
    no end line: the match is still going on). Non-ASCII text as UTF-8, as people write it."""
    lines = [b'{"log": "buraco-log", "version": 2, "sealed": true}\n']
    for event in events:
        obj = jsonl.event_to_json(event)
        lines.append(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    return lines


def writer(events: list[ev.AnyEvent], path: str, pause: float) -> None:
    with log.Writer(path, validate=False) as w:
        for event in events:
            w.append(event)
            _ack(f"ack {event.seq}")
            time.sleep(pause)


def recorder(events: list[ev.AnyEvent], directory: str, tables: int, pause: float,
             sync: str = "fsync") -> None:
    from buraco_log.recorder import Recorder  # the other processes do without its imports

    with Recorder(directory, save_every=0, sync=sync, checkpoint_every=0.5) as rec:
        for event in events:
            for t in range(tables):
                rec.append(f"t{t}", event)
                _ack(f"ack t{t} {event.seq}")
            time.sleep(pause)


def appender(events: list[ev.AnyEvent], path: str, pause: float, seed: int) -> None:
    rng = random.Random(seed)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for number, line in enumerate(jsonl_lines(events)):
            cuts = sorted(rng.sample(range(1, len(line)), 2))
            for piece in (line[: cuts[0]], line[cuts[0] : cuts[1]], line[cuts[1] :]):
                os.write(fd, piece)
                os.fsync(fd)
                time.sleep(pause / 3)
            if number:
                _ack(f"ack {number - 1}")
    finally:
        os.close(fd)


def main(args: list[str]) -> None:
    what, source = args[0], args[1]
    if what == "recorder":
        events = log.read_events(source)[: int(args[4])]
        recorder(events, args[2], int(args[3]), float(args[5]), *args[6:7])
        return
    events = log.read_events(source)[: int(args[3])]
    if what == "writer":
        writer(events, args[2], float(args[4]))
    elif what == "jsonl":
        appender(events, args[2], float(args[4]), int(args[5]))
    else:
        raise SystemExit(f"unknown process {what!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
