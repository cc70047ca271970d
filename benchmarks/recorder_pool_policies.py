"""Which log the recorder's handle pool should close: a model of the pool, policies side by side.

    python benchmarks/recorder_pool_policies.py [--pool 500] [--round 20]

The recorder keeps at most ``max_open`` logs open and, to open another, closes the least
recently used (``Recorder._make_room``). Tables that move in turn (saturated, or paced on their
own schedule from a random phase) with more tables than the pool always come back to a log
closed since: every move reopens its log. This replays move orders through a model of the pool
(rounds of ``--round`` moves; a round's logs are opened together, and none of them is closed
to make room for another) and prints the reopenings a move of each policy:

- ``lru``: the recorder's: the least recently moved;
- ``mru``: the most recently moved that is not in the current round;
- ``pin F``: the first ``F * pool`` logs opened keep their descriptor until they are closed
  otherwise (idle, ended); the rest of the pool is LRU;
- ``rand F``: a random one of the least recently moved ``F`` of the pool;
- ``two``: the older of two picked at random.

The move orders: paced tables (each one move a period, a random phase, jitter as a share of the
period), a hot tenth of the tables taking 60% of the moves, and tables that start cold (they
fill the pool first, then move seldom) beside 300 hot ones taking 90% of the moves.
"""

from __future__ import annotations

import argparse
import random
from collections import OrderedDict
from collections.abc import Callable

Policy = tuple[str, float]


def paced(tables: int, periods: int, jitter: float, rng: random.Random) -> list[int]:
    moves = []
    for t in range(tables):
        phase = rng.random()
        moves += [(p + phase + rng.uniform(-jitter, jitter), t) for p in range(periods)]
    moves.sort()
    return [t for _, t in moves]


def hot_tenth(tables: int, length: int, rng: random.Random) -> list[int]:
    hot = max(1, tables // 10)
    return [rng.randrange(hot) if rng.random() < 0.6 else rng.randrange(hot, tables)
            for _ in range(length)]


def cold_first(rng: random.Random) -> list[int]:
    moves = list(range(1000, 1500))  # 500 tables start, then move seldom
    for _ in range(50_000):
        moves.append(rng.randrange(300) if rng.random() < 0.9 else rng.randrange(1000, 1500))
    return moves


def reopenings(moves: list[int], pool: int, size: int, policy: Policy, seed: int = 2) -> float:
    """Reopenings a move: a move whose log is not open when its round comes."""
    rng = random.Random(seed)
    kind, share = policy
    lru: OrderedDict[int, None] = OrderedDict()
    pinned: set[int] = set()
    reopened = total = 0
    for i in range(0, len(moves), size):
        now = list(dict.fromkeys(moves[i:i + size]))
        current = set(now)
        closed = [t for t in now if t not in lru]
        for t in now:
            if t in lru:
                lru.move_to_end(t)
        total += len(now)
        reopened += len(closed)
        while len(lru) + len(closed) > pool:
            victim = _pick(kind, share, lru, pinned, current, rng)
            del lru[victim]
            pinned.discard(victim)
        for t in closed:
            lru[t] = None
            if kind == "pin" and len(pinned) < int(share * pool):
                pinned.add(t)
    return reopened / total


def _pick(kind: str, share: float, lru: OrderedDict[int, None], pinned: set[int],
          current: set[int], rng: random.Random) -> int:
    if kind == "lru":
        return next(iter(lru))
    if kind == "mru":
        return next(t for t in reversed(lru) if t not in current)
    if kind == "pin":
        return next(t for t in lru if t not in pinned)
    order = [t for t in lru if t not in current]
    if kind == "rand":
        return rng.choice(order[:max(1, int(len(order) * share))])
    a, b = rng.randrange(len(order)), rng.randrange(len(order))
    return order[min(a, b)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--pool", type=int, default=500)
    ap.add_argument("--round", type=int, default=20, help="moves a round")
    args = ap.parse_args()
    rng = random.Random(1)
    orders: list[tuple[str, Callable[[], list[int]]]] = [
        ("paced, 600 tables", lambda: paced(600, 30, 0.05, rng)),
        ("paced, 1,000", lambda: paced(1000, 30, 0.05, rng)),
        ("paced, 1,000, jitter 0.3", lambda: paced(1000, 30, 0.3, rng)),
        ("paced, 5,000", lambda: paced(5000, 6, 0.05, rng)),
        ("paced, 400 (fits)", lambda: paced(400, 30, 0.05, rng)),
        ("hot tenth, 1,000", lambda: hot_tenth(1000, 30_000, rng)),
        ("hot tenth, 5,000", lambda: hot_tenth(5000, 60_000, rng)),
        ("cold first, 800", lambda: cold_first(rng)),
    ]
    policies: list[Policy] = [("lru", 0), ("mru", 0), ("pin", 0.5), ("pin", 0.9), ("rand", 0.5),
                              ("rand", 0.25), ("two", 0)]
    names = [k if not s else f"{k} {s:g}" for k, s in policies]
    print(f"pool {args.pool}, rounds of {args.round} moves: reopenings a move")
    print(f"{'moves':26}" + "".join(f"{n:>9}" for n in names))
    for label, make in orders:
        moves = make()
        print(f"{label:26}" + "".join(
            f"{reopenings(moves, args.pool, args.round, p):>9.3f}" for p in policies),
            flush=True)


if __name__ == "__main__":
    main()
