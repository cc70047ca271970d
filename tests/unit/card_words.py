"""The words of cards and of tiles, and the refused moves whose explanations must use the right
ones."""

from __future__ import annotations

import re
from collections.abc import Iterator

from buraco_log.cards import JOKER
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandEnded,
    MatchEnded,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.state import State

# Words of playing cards a tile table must not say ("discard" is a move of tiles too).
CARD_WORDS = re.compile(r"\b(cards?|upcard|suits?|ranks?|aces?|kings?|decks?)\b|k-a-2", re.I)
TILE_WORDS = re.compile(r"\b(tiles?|colours?|numbers?)\b|13-1-2", re.I)


def _wrong_moves(s: State, seq: int) -> Iterator[AnyEvent]:
    """Moves to try after ``s``: most are refused, each for its own reason."""
    n = len(s.players)
    turn, other = s.turn, (s.turn + 1) % n
    hand = s.hands[turn] if s.hands else ()
    side = s.sides[turn] if s.sides else 0
    absent = next(c for c in range(1, 60) if c not in hand and c != JOKER)
    top = s.stock[0] if s.stock else absent
    yield CardDrawn(turn, top, seq=seq)
    yield CardDrawn(turn, absent, seq=seq)
    yield CardDrawn(other, top, seq=seq)
    yield CardDrawn(9, top, seq=seq)
    yield FirstDrawRejected(turn, s.drawn if s.drawn is not None else absent, seq=seq)
    yield FirstDrawRejected(turn, absent, seq=seq)
    pile_top = s.pile[-1] if s.pile else absent
    for count in (len(s.pile), len(s.pile) + 1, 1):
        yield PileTaken(turn, count, pile_top, seq=seq)
    yield PileTaken(turn, len(s.pile), absent, seq=seq)
    for k in range(0, max(1, len(hand) - 2), 2):
        yield MeldLaid(turn, hand[k:k + 3], seq=seq)
    yield MeldLaid(turn, (absent, absent, absent), seq=seq)
    yield MeldLaid(turn, hand, seq=seq)
    melds = s.melds[side] if s.melds else ()
    for i in range(len(melds) + 1):
        for c in hand[:4]:
            yield CardsLaidOff(turn, i, (c,), seq=seq)
    yield CardsLaidOff(turn, 0, (), seq=seq)
    yield CardsLaidOff(turn, len(melds) + 3, hand[:1], seq=seq)
    yield OpeningRetracted(turn, s.laid_this_turn or hand[:1], seq=seq)
    yield OpeningRetracted(turn, hand[:1], seq=seq)
    for c in (*hand[:3], absent):
        yield CardDiscarded(turn, c, seq=seq)
    yield CardDiscarded(other, hand[0] if hand else absent, seq=seq)
    for direct in (True, False):
        yield MortoTaken(turn, direct, seq=seq)
        yield MortoTaken(turn, direct, 99, seq=seq)
    yield WentOut(turn, seq=seq)
    yield HandEnded("stock_out", seq=seq)
    yield HandEnded("went_out", (1, 2), seq=seq)
    yield MatchEnded(seq=seq)
