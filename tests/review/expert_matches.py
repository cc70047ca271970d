"""Matches the review tests read: one played by a known expert, and its twin with the seats
swapped."""

from __future__ import annotations

import msgspec

from buraco_log.events import AnyEvent, CardDrawn, HandStarted
from buraco_log.reducer import replay
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match

_MATCHES: dict[tuple[str, int, int], list[AnyEvent]] = {}


def match(preset: str = "classic", players: int = 2, index: int = 0) -> list[AnyEvent]:
    key = (preset, players, index)
    if key not in _MATCHES:
        _MATCHES[key] = simulate_match(PRESETS[preset], players, seed="expert-tests",
                                       index=index)
    return _MATCHES[key]


def swapped_twin(events: list[AnyEvent], seat: int) -> tuple[list[AnyEvent], int]:
    """The same match up to a decision of ``seat`` in its first hand, with one card of the next
    player's hand (never played before the cut) swapped with a stock card not yet drawn."""
    cut = next(e.seq for e in events[8:] if getattr(e, "seat", None) == seat
               and isinstance(e, CardDrawn))
    prefix = events[:cut + 1]
    hs = prefix[1]
    assert isinstance(hs, HandStarted)
    other = (seat + 1) % len(hs.hands)
    shown = {c for e in prefix[2:] for c in (getattr(e, "cards", ()) or (getattr(e, "card", -1),))}
    drawn = sum(isinstance(e, CardDrawn) for e in prefix) + 2
    mine = next(c for c in hs.hands[other] if c not in shown)
    pos = next(i for i in range(drawn, len(hs.stock)) if hs.stock[i] != mine
               and hs.stock[i] not in hs.hands[other])
    stock = list(hs.stock)
    hand = list(hs.hands[other])
    hand[hand.index(mine)], stock[pos] = stock[pos], mine
    hands = tuple(tuple(hand) if i == other else h for i, h in enumerate(hs.hands))
    twin = [prefix[0], msgspec.structs.replace(hs, hands=hands, stock=tuple(stock)), *prefix[2:]]
    replay(twin)  # still legal
    return twin, cut
