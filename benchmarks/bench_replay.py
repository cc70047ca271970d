"""Replay + validation throughput against a bare msgspec decode of the same bytes.

    python benchmarks/bench_replay.py [--matches N] [--repeat R]

Builds a corpus of simulated matches (heuristic bots, every preset), encodes each as one
MessagePack array, then times in the same run, on the same bytes:
  decode        msgspec decode into typed events only
  decode+apply  decode, then apply every event without validation
  decode+step   decode, then validate and apply every event (what replay does)
and prints events per second (CPU time, best of R repeats) and the ratio of each to the bare
decode (the machine is shared, so ratios are the figures to compare). The meld-reading memo is
warm after the first repeat, as it is in any long replay or archive ingest.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from buraco_log.events import decode_many, encode_many
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match


def corpus(matches: int) -> list[bytes]:
    blobs = []
    cases = [(name, n) for name, r in PRESETS.items() for n in r.player_counts]
    for i in range(matches):
        name, n = cases[i % len(cases)]
        blobs.append(encode_many(simulate_match(PRESETS[name], n, seed="bench", index=i)))
    return blobs


def turns_only(hands: int) -> bytes:
    """A legal classic match of hands in which every turn is a draw and a discard: the floor of
    the per-event cost, with no meld to read."""
    from buraco_log.dealer import deal_seeded
    from buraco_log.events import (
        AnyEvent,
        CardDiscarded,
        CardDrawn,
        HandEnded,
        MatchStarted,
        Player,
    )

    rules = PRESETS["classic"]
    events: list[AnyEvent] = [
        MatchStarted("turns", rules, (Player("a"), Player("b")), (0, 1), seq=0)
    ]
    r = Replayer()
    r.step(events[0])
    for h in range(hands):

        def push(ev: AnyEvent) -> None:
            r.step(ev)
            events.append(ev)

        push(deal_seeded(rules, 2, h, h % 2, f"turns-{h}", seq=len(events)))
        while r.table.stock:
            seat, card = r.table.turn, r.table.stock[-1]
            push(CardDrawn(seat, card, seq=len(events)))
            push(CardDiscarded(seat, card, seq=len(events)))
        scores = tuple(s.total for s in r.table.score())
        push(HandEnded("stock_out", scores, seq=len(events)))
    return encode_many(events)


def best(fn: Callable[[], None], repeat: int) -> float:
    # CPU time of this process: the machine is shared, and wall time counts the neighbours.
    times = []
    for _ in range(repeat):
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    t = time.perf_counter()
    blobs = corpus(args.matches)
    n_events = sum(len(decode_many(b)) for b in blobs)
    size = sum(map(len, blobs))
    print(
        f"corpus: {args.matches} matches, {n_events} events, {size / n_events:.1f} bytes/event "
        f"(built in {time.perf_counter() - t:.1f} s)"
    )

    def decode() -> None:
        for b in blobs:
            decode_many(b)

    def decode_apply() -> None:
        for b in blobs:
            r = Replayer()
            for e in decode_many(b):
                r.apply(e)

    def decode_step() -> None:
        for b in blobs:
            r = Replayer()
            for e in decode_many(b):
                r.step(e)

    base = best(decode, args.repeat)
    print(f"{'decode':<14}{n_events / base / 1e6:8.2f} M events/s   1.00x")
    for name, fn in (("decode+apply", decode_apply), ("decode+step", decode_step)):
        t = best(fn, args.repeat)
        print(f"{name:<14}{n_events / t / 1e6:8.2f} M events/s  {t / base:5.2f}x the decode time")

    blobs[:] = [turns_only(10)]
    n_events = len(decode_many(blobs[0]))
    base = best(decode, args.repeat * 4)
    t = best(decode_step, args.repeat * 4)
    print(
        f"draw/discard turns only ({n_events} events): decode {n_events / base / 1e6:.2f} M/s, "
        f"decode+step {n_events / t / 1e6:.2f} M/s, {t / base:.2f}x the decode time"
    )


if __name__ == "__main__":
    main()
