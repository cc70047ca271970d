"""Shared helpers for the match-log tests: sample events and logs on disk (no pytest here:
the crash test's writer process imports this module)."""

from __future__ import annotations

import os
import random
from functools import cache
from pathlib import Path

from buraco_log import events as ev
from buraco_log import log
from buraco_log.rules import preset


def sample_events(n: int, seed: int = 0) -> list[ev.AnyEvent]:
    """``n`` events of every shape (not a legal game: the framing does not care)."""
    rng = random.Random(seed)
    out: list[ev.AnyEvent] = [
        ev.MatchStarted(
            f"m{seed}",
            preset("classic"),
            (ev.Player("ana"), ev.Player("bia", id="b7")),
            (0, 1),
            metadata={"club": "Clube São Paulo"},
            seq=0,
        )
    ]
    cards = [s * 16 + r for s in range(4) for r in range(1, 14)] + [64]
    while len(out) < n:
        seq = len(out)
        seat = rng.randrange(2)
        kind = rng.randrange(8)
        event: ev.AnyEvent
        if kind == 0:
            event = ev.HandStarted(
                seq,
                0,
                (tuple(rng.sample(cards, 11)), tuple(rng.sample(cards, 11))),
                stock=tuple(rng.sample(cards, 30)),
                upcard=rng.choice(cards),
                seq=seq,
            )
        elif kind == 1:
            event = ev.MeldLaid(seat, tuple(rng.sample(cards, 3)), meld=0, seq=seq)
        elif kind == 2:
            event = ev.CardDiscarded(seat, rng.choice(cards), seq=seq, at=1_700_000_000_000 + seq)
        elif kind == 3:
            event = ev.PileTaken(seat, rng.randrange(1, 20), rng.choice(cards), seq=seq)
        elif kind == 4:
            event = ev.HandEnded("went_out", (120, -35), seq=seq, note="conferido ✓")
        else:
            event = ev.CardDrawn(seat, rng.choice(cards), seq=seq)
        out.append(event)
    return out[:n]


@cache
def match_events(
    seed: str = "log-tests", players: int = 2, rules: str = "classic"
) -> tuple[ev.AnyEvent, ...]:
    """A complete legal match played by the simulator's bots."""
    from buraco_log.simulate import simulate_match

    return tuple(simulate_match(preset(rules), players, seed=seed))


def write(
    path: Path, events: list[ev.AnyEvent], *, mode: str = "durable", sealed: bool = True
) -> Path:
    """A log on disk: ``durable`` (one segment per event), ``batched`` (a few big segments)."""
    if mode == "durable":
        with log.Writer(path, sealed=sealed, validate=False) as w:
            for e in events:
                w.append(e)
    else:
        with log.Writer(path, sealed=sealed, validate=False, batched=True, batch_events=7) as w:
            w.append_many(events)
    return path


def segment_offsets(path: Path) -> list[tuple[int, int, int]]:
    """(offset, first seq, event count) of every segment, from a full read."""
    out = []
    with log.Reader(path) as reader:
        for offset, events in reader.segments():
            out.append((offset, events[0].seq, len(events)))
    return out


def put(path: Path, data: bytes) -> None:
    """Replace a scratch file's bytes in place (cheaper than truncating it to zero first)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
