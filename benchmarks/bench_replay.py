"""Replay + validation throughput against a bare msgspec decode of the same bytes.

    python benchmarks/bench_replay.py [--matches N] [--repeat R] [--plain]

Builds a corpus of simulated matches (heuristic bots, every preset), encodes each as one
MessagePack array, then times in the same run, on the same bytes:
  decode        msgspec decode into typed events only
  decode+run    decode, then validate and apply every event with Replayer.run (what replay(),
                audit and ingest do): the headline figure
  decode+step   the same through Replayer.step, one call per event (simulation, flattening)
  decode+apply  decode, then apply every event without validation
and prints events per second (CPU time, best of R interleaved repeats) and the ratio of each to
the bare decode (the machine is shared, so ratios are the figures to compare). The meld-reading
memo is warm after the first repeat, as it is in any long replay or archive ingest; the cold
first pass is printed too.

The engine runs compiled when the install compiled it (setup.py, mypyc). Then the same
benchmark is also run in a child process on the plain Python modules (``--plain``), so the two
are compared in one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ("buraco_log.melds", "buraco_log.scoring", "buraco_log.reducer")


class _PlainFinder:
    """Import the engine's modules from their .py sources, never a compiled copy."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name in ENGINE:
            return importlib.util.spec_from_file_location(
                name, ROOT / (name.replace(".", "/") + ".py")
            )
        return None


if "--plain" in sys.argv:
    sys.meta_path.insert(0, _PlainFinder())

from buraco_log.events import decode_many, encode_many  # noqa: E402 (after the --plain finder)
from buraco_log.reducer import Replayer  # noqa: E402 (after the --plain finder)
from buraco_log.rules import PRESETS  # noqa: E402 (after the --plain finder)
from buraco_log.simulate import simulate_match  # noqa: E402 (after the --plain finder)


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


def best_of(fns: dict[str, Callable[[], None]], repeat: int) -> dict[str, float]:
    """CPU time of this process, best of ``repeat`` rounds; the functions take turns in each
    round, so a noisy neighbour slows them alike."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.process_time()
            fn()
            times[name].append(time.process_time() - t)
    return {name: min(ts) for name, ts in times.items()}


def engine() -> str:
    from buraco_log import reducer

    return "plain Python" if str(reducer.__file__).endswith(".py") else "compiled (mypyc)"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--matches", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--plain", action="store_true", help="run on the plain Python modules")
    ap.add_argument("--no-plain", action="store_true", help="skip the plain Python comparison")
    args = ap.parse_args()
    from buraco_log import melds

    t = time.perf_counter()
    blobs = corpus(args.matches)
    n_events = sum(len(decode_many(b)) for b in blobs)
    size = sum(map(len, blobs))
    print(
        f"engine: {engine()}; corpus: {args.matches} matches, {n_events} events, "
        f"{size / n_events:.1f} bytes/event (built in {time.perf_counter() - t:.1f} s)"
    )

    def decode() -> None:
        for b in blobs:
            decode_many(b)

    def decode_run() -> None:
        for b in blobs:
            Replayer().run(decode_many(b))

    def decode_step() -> None:
        for b in blobs:
            r = Replayer()
            for e in decode_many(b):
                r.step(e)

    def decode_apply() -> None:
        for b in blobs:
            r = Replayer()
            for e in decode_many(b):
                r.apply(e)

    melds._CACHES.clear()  # the cold first pass: every meld read for the first time
    t = time.process_time()
    decode_run()
    cold = time.process_time() - t
    fns = {
        "decode": decode,
        "decode+run": decode_run,
        "decode+step": decode_step,
        "decode+apply": decode_apply,
    }
    times = best_of(fns, args.repeat)
    base = times["decode"]
    for name, secs in times.items():
        print(f"{name:<14}{n_events / secs / 1e6:8.2f} M events/s  {secs / base:6.2f}x the decode")
    print(
        f"{'cold memo':<14}{n_events / cold / 1e6:8.2f} M events/s  {cold / base:6.2f}x "
        "(decode+run, first pass, every meld read anew)"
    )

    blobs[:] = [turns_only(10)]
    n_events = len(decode_many(blobs[0]))
    times = best_of({"decode": decode, "decode+run": decode_run}, args.repeat * 4)
    print(
        f"draw/discard turns only ({n_events} events): decode "
        f"{n_events / times['decode'] / 1e6:.2f} M/s, decode+run "
        f"{n_events / times['decode+run'] / 1e6:.2f} M/s, "
        f"{times['decode+run'] / times['decode']:.2f}x the decode"
    )
    if engine() != "plain Python" and not args.no_plain:
        print("-- the same on the plain Python modules (child process):")
        cmd = [
            sys.executable,
            __file__,
            "--plain",
            "--matches",
            str(args.matches),
            "--repeat",
            str(args.repeat),
        ]
        subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
