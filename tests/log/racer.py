"""The processes of the writer-versus-rewriter race tests (tests/log/test_race.py).

    python -m tests.log.racer writer LOG COUNT [--pause POINT] [--timeout T]
    python -m tests.log.racer seal LOG [--pause POINT] [--timeout T]
    python -m tests.log.racer random-writer DIR RUNS SEED
    python -m tests.log.racer random-sealer DIR RUNS SEED

``writer`` appends ``sample_events(COUNT)`` from the log's next seq and prints ``ack SEQ``
(flushed) after each durable append returns. ``--pause POINT`` stops the process the first
time it reaches that point of ``buraco_log.log`` (``lock.opened``, ``seal.locked``,
``seal.before-rename``, ...): it creates ``LOG.POINT.reached`` and waits for ``LOG.POINT.go``,
so the test decides what the other process does meanwhile. The random pair works through
``DIR/r{i}.blog`` in step (a barrier per log), with random pauses at every point, and prints
``ack i SEQ`` (writer) or ``sealed i`` (sealer).
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.log.samples import sample_events

SEED = 7
"""The events of every race log are ``sample_events(n, SEED)``."""


def _pause_at(point: str, base: str) -> None:
    done: set[str] = set()

    def hook(name: str) -> None:
        if name == point and name not in done:
            done.add(name)
            Path(f"{base}.{name}.reached").touch()
            while not os.path.exists(f"{base}.{name}.go"):
                time.sleep(0.002)

    log._hook = hook


def _option(args: list[str], name: str) -> str | None:
    if name in args:
        return args[args.index(name) + 1]
    return None


def _ack(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def writer(path: str, count: int, timeout: float) -> None:
    events = sample_events(count, SEED)
    with log.Writer(path, validate=False, lock_timeout=timeout) as w:
        _ack(f"open {w.next_seq}")
        for event in events[w.next_seq :]:
            w.append(event)
            _ack(f"ack {event.seq}")


def seal(path: str, timeout: float) -> None:
    info = log.seal(path, lock_timeout=timeout)
    _ack(f"sealed {info.events}")


def _barrier(directory: str, i: int, me: str, other: str) -> None:
    Path(directory, f"r{i}.{me}").touch()
    while not os.path.exists(os.path.join(directory, f"r{i}.{other}")):
        time.sleep(0.001)


def _jitter(rng: random.Random) -> None:
    def hook(name: str) -> None:
        time.sleep(rng.choice((0.0, 0.0, 0.0005, 0.002, 0.005)))

    log._hook = hook


ROUNDS = 4
"""Writer sessions per random log; each appends 1 to 5 events."""


def random_writer(directory: str, runs: int, seed: int) -> None:
    rng = random.Random(seed)
    _jitter(rng)
    events = sample_events(ROUNDS * 5 + 3, SEED)
    for i in range(runs):
        _barrier(directory, i, "writer", "sealer")
        path = os.path.join(directory, f"r{i}.blog")
        for _ in range(ROUNDS):
            try:
                with log.Writer(path, validate=False, lock_timeout=rng.choice((0.0, 1.0))) as w:
                    start = w.next_seq
                    for event in events[start : start + rng.randint(1, 5)]:
                        w.append(event)
                        _ack(f"ack {i} {event.seq}")
            except LogFormatError as exc:
                if exc.kind != "locked":
                    raise
            time.sleep(rng.choice((0.0, 0.001, 0.003)))
        _ack(f"done {i}")


def random_sealer(directory: str, runs: int, seed: int) -> None:
    rng = random.Random(seed)
    _jitter(rng)
    for i in range(runs):
        _barrier(directory, i, "sealer", "writer")
        path = os.path.join(directory, f"r{i}.blog")
        for _ in range(ROUNDS):
            time.sleep(rng.choice((0.0, 0.001, 0.004)))
            try:
                log.seal(path, lock_timeout=rng.choice((0.0, 0.01, 0.5)))
                _ack(f"sealed {i}")
            except LogFormatError as exc:
                if exc.kind != "locked":
                    raise


def main() -> None:
    args = sys.argv[1:]
    mode = args[0]
    pause = _option(args, "--pause")
    timeout = float(_option(args, "--timeout") or 0)
    if pause:
        _pause_at(pause, args[1])
    if mode == "writer":
        writer(args[1], int(args[2]), timeout)
    elif mode == "seal":
        seal(args[1], timeout)
    elif mode == "random-writer":
        random_writer(args[1], int(args[2]), int(args[3]))
    elif mode == "random-sealer":
        random_sealer(args[1], int(args[2]), int(args[3]))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
