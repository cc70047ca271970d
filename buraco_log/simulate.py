"""Simulated matches: bots play complete matches, every move checked by the reducer.

A match is a pure function of (rules, players, seed, index, bots): the server seed, the player
seeds, the match id and the bots' random choices are all derived from ``seed`` and ``index`` with
SHA-256, and no wall-clock time is recorded. So the same arguments give the same events, and the
same log bytes, in any process and for any number of worker processes.

Deals follow the fairness protocol of :mod:`buraco_log.dealer`: the commitment is published in
``MatchStarted``, every hand is dealt from the committed seeds, and ``MatchEnded`` reveals the
server seed, so :func:`buraco_log.dealer.check_deals` passes on every simulated match.

Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Sequence

import msgspec

from buraco_log.bots import Bot, HeuristicBot, MeldCache, make_bot
from buraco_log.dealer import FairDealer
from buraco_log.errors import BuracoLogError, IllegalMoveError
from buraco_log.events import AnyEvent, MatchEnded, MatchStarted, Player
from buraco_log.rules import Rules, check, side_of

GENERATOR = "buraco_log.simulate/v1"
"""Recorded in ``MatchStarted.metadata["generator"]``; bump when simulated play changes."""

MAX_HANDS = 400
"""A match still undecided after this many hands is an error (no bot should take so long)."""


MAX_HAND_EVENTS = 20_000
"""A hand longer than this is an error: a bot is going round in circles."""


class SimulationError(BuracoLogError):
    """A simulated match that could not be completed (a bot or engine defect)."""

    code = "simulate"


class MatchSummary(msgspec.Struct, frozen=True):
    """What one simulated match came to."""

    index: int
    match_id: str
    events: int
    hands: int
    totals: tuple[int, ...]
    winner: int  # winning side
    bots: tuple[str, ...]  # bot of each seat


def _derive(seed: str, index: int, what: str) -> str:
    return hashlib.sha256(f"buraco_log/sim/v1\x00{seed}\x00{index}\x00{what}".encode()).hexdigest()


def seat_bots(bots: Sequence[str], players: int) -> tuple[str, ...]:
    """The bot of each seat: ``bots`` repeated round the table (one name: everyone)."""
    if not bots:
        raise ValueError("at least one bot name")
    return tuple(bots[i % len(bots)] for i in range(players))


def match_id_of(rules: Rules, players: int, seed: str, index: int) -> str:
    return f"sim-{rules.name}-{players}p-{_derive(seed, index, 'id')[:12]}-{index:06d}"


def simulate_match(
    rules: Rules,
    players: int,
    *,
    seed: str,
    index: int = 0,
    bots: Sequence[str] = ("heuristic",),
    max_hands: int = MAX_HANDS,
) -> list[AnyEvent]:
    """Play one complete match and return its events, each one accepted by the reducer."""
    from buraco_log.moves import legal_moves as legal
    from buraco_log.reducer import Replayer

    check(rules, players)
    names = seat_bots(bots, players)
    cache = MeldCache()
    seat_bot: list[Bot] = [HeuristicBot(cache) if n == "heuristic" else make_bot(n) for n in names]
    rng = random.Random(int(_derive(seed, index, "bots"), 16))
    dealer = FairDealer(
        _derive(seed, index, "server"),
        tuple(_derive(seed, index, f"player{i}")[:16] for i in range(players)),
    )
    start = MatchStarted(
        match_id=match_id_of(rules, players, seed, index),
        rules=rules,
        players=tuple(Player(f"{n}-{i}") for i, n in enumerate(names)),
        sides=tuple(side_of(i, players) for i in range(players)),
        first_dealer=int(_derive(seed, index, "first_dealer"), 16) % players,
        commitment=dealer.commitment,
        player_seeds=dealer.player_seeds,
        metadata={
            "generator": GENERATOR,
            "bots": ",".join(names),
            "seed": seed,
            "index": str(index),
        },
        seq=0,
    )
    events: list[AnyEvent] = [start]
    r = Replayer()
    r.step(start)
    # The live table of the replayer, read (never changed) by the bots' fast path. Reading it
    # instead of a frozen State per event is what makes simulation fast.
    table = r._t
    hands = 0
    hand_start = 0
    while True:
        phase = table.phase
        seq = table.seq + 1
        ev: AnyEvent | None = None
        if phase == "between":
            if hands >= max_hands:
                raise SimulationError(f"{start.match_id}: still undecided after {hands} hands")
            ev = dealer.deal(rules, players, hands, (start.first_dealer + hands) % players, seq=seq)
            hands += 1
            hand_start = seq
        elif phase == "over":
            break
        else:
            if seq - hand_start > MAX_HAND_EVENTS:
                raise SimulationError(
                    f"{start.match_id}: hand {hands - 1} is still going at seq {seq}"
                )
            bot = seat_bot[table.turn]
            if isinstance(bot, HeuristicBot) and phase in ("draw", "play"):
                ev = bot.fast_move(table, table.stock[-1] if table.stock else None)
                if ev is not None:
                    try:
                        r.step(ev)
                    except IllegalMoveError:
                        ev = None  # a refused fast move changes nothing: use the full list
                    else:
                        events.append(ev)
                        continue
            st = r.state()
            moves = legal(st)
            if not moves:
                raise SimulationError(f"{start.match_id}: no legal move at seq {seq} ({phase})")
            if isinstance(moves[0], MatchEnded):
                ev = msgspec.structs.replace(moves[0], server_seed=dealer.server_seed)
            else:
                ev = bot.choose(st, moves, rng)
        r.step(ev)
        events.append(ev)
    return events


def write_match(path: str | os.PathLike[str], events: Sequence[AnyEvent]) -> None:
    """Write a sealed log. The events were validated as they were played, so not again here."""
    from buraco_log.log import write_log

    write_log(path, events, sealed=True, validate=False)


def summarize(events: Sequence[AnyEvent], index: int = 0) -> MatchSummary:
    start, end = events[0], events[-1]
    assert isinstance(start, MatchStarted) and isinstance(end, MatchEnded)
    return MatchSummary(
        index=index,
        match_id=start.match_id,
        events=len(events),
        hands=sum(1 for e in events if type(e).__name__ == "HandStarted"),
        totals=end.totals or (),
        winner=end.winner if end.winner is not None else -1,
        bots=tuple(start.metadata.get("bots", "").split(",")),
    )
