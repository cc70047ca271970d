"""RULES.md §9's card table, written from the spec by hand (never read from the engine's
presets), and the points of cards by it: what the scoring scenarios check the engine against."""

from __future__ import annotations

from collections.abc import Iterable

from buraco_log.cards import JOKER, RANK, parse_cards

CARD_POINTS = {  # joker, 2, ace, 8..K, 3..7
    "classic": (10, 10, 15, 10, 5),
    "biriba": (10, 10, 15, 10, 5),
    "bossa-nova": (10, 10, 15, 10, 5),
    "thirteen": (50, 10, 15, 10, 5),
    "thirteen-quick": (50, 10, 15, 10, 5),
    "burraco": (30, 20, 15, 10, 5),
    "mega": (50, 10, 15, 10, 5),
    "burako": (50, 10, 15, 10, 5),
}


def spec_points(name: str, cards: str | Iterable[int]) -> int:
    """Points of ``cards`` (card text or codes) by the card table for preset ``name``."""
    joker, two, ace, high, low = CARD_POINTS[name]
    total = 0
    for c in parse_cards(cards) if isinstance(cards, str) else cards:
        if c == JOKER:
            total += joker
        elif RANK[c] == 2:
            total += two
        elif RANK[c] == 1:
            total += ace
        else:
            total += high if RANK[c] >= 8 else low
    return total
