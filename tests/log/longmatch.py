"""One long legal match, built cheaply: two hands of bots that only draw and discard (each hand
ends with the stock run out, both sides below zero, so the match never ends), repeated with
their seqs and hand numbers renumbered. For probes of logs of millions of events."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import msgspec

from buraco_log.dealer import FairDealer
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    HandEnded,
    HandStarted,
    MatchStarted,
    Player,
)
from buraco_log.moves import quick_moves
from buraco_log.reducer import Replayer
from buraco_log.rules import derive, side_of


@functools.cache
def pattern(hand_size: int = 11) -> tuple[MatchStarted, tuple[AnyEvent, ...]]:
    """The match start and two hands of draws and discards, each event checked: 332 events
    with the classic 11 cards a hand, 20 with 50 (a stock of 4 cards, many short hands)."""
    rules = derive("classic", target_score=1_000_000, hand_size=hand_size, player_counts=(2,))
    dealer = FairDealer("long-match", ("p0", "p1"))
    start = MatchStarted(match_id="marathon", rules=rules, players=(Player("a"), Player("b")),
                         sides=(side_of(0, 2), side_of(1, 2)), seq=0)
    table = Replayer()
    table.step(start)
    played: list[AnyEvent] = []
    while True:
        state = table.state()
        seq = state.seq + 1
        event: AnyEvent
        if state.phase == "between":
            if state.hand == 1:  # two hands dealt and ended
                break
            event = msgspec.structs.replace(
                dealer.deal(rules, 2, len(state.results), len(state.results), seq=seq),
                shuffle=None, seed=None)  # repeated deals come from no seed
        else:
            moves = quick_moves(state)
            event = next((m for kind in (CardDrawn, CardDiscarded, HandEnded) for m in moves
                          if isinstance(m, kind)), moves[0])
        table.step(event)
        played.append(event)
    return start, tuple(played)


def events(count: int, hand_size: int = 11) -> Iterator[AnyEvent]:
    """The first ``count`` events of the long match (seqs 0 to count - 1)."""
    start, hands = pattern(hand_size)
    if count > 0:
        yield start
    seq, hand = 1, 0
    replace = msgspec.structs.replace
    while seq < count:
        for event in hands:
            if seq >= count:
                return
            if isinstance(event, HandStarted):
                event = replace(event, seq=seq, hand=hand)
                hand += 1
            else:
                event = replace(event, seq=seq)
            yield event
            seq += 1
