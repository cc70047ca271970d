"""The meld memo's shortcuts answer exactly as reading the whole meld again."""

from __future__ import annotations

import functools

import pytest

from buraco_log.cards import deck
from buraco_log.events import CardsLaidOff, HandEnded, MeldLaid
from buraco_log.melds import MeldCache, MeldError, read_meld
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match


@functools.cache
def melds_on_tables(name: str) -> list[tuple[int, ...]]:
    """Every meld as it stood right after each meld or lay-off of two simulated matches."""
    rules = PRESETS[name]
    out: set[tuple[int, ...]] = set()
    for players in rules.player_counts[:2]:
        r = Replayer()
        for ev in simulate_match(rules, players, seed="meld-cache"):
            r.step(ev)
            if isinstance(ev, MeldLaid | CardsLaidOff | HandEnded):
                out.update(m.cards for side in r.table.melds for m in side)
    return sorted(out)


def truth(cards: tuple[int, ...], name: str) -> bool:
    try:
        read_meld(cards, PRESETS[name])
    except MeldError:
        return False
    return True


@pytest.mark.parametrize("name", list(PRESETS))
def test_extends_answers_as_reading_the_grown_meld_for_every_card(name: str) -> None:
    cache = MeldCache(PRESETS[name])
    material = sorted(set(deck(PRESETS[name].jokers)))
    melds = melds_on_tables(name)
    assert len(melds) > 20
    checked = accepted = 0
    for cards in melds:
        reading = cache.read(cards)
        for c in material:
            got = cache.extends(reading, (c,), cards)
            assert got == truth((*cards, c), name), (cards, c)
            checked += 1
            accepted += got
    assert accepted and accepted < checked  # both answers were exercised


@pytest.mark.parametrize("name", ["classic", "burraco", "thirteen"])
def test_extended_and_read_agree_in_any_order_of_the_cards(name: str) -> None:
    cache = MeldCache(PRESETS[name])
    for cards in melds_on_tables(name):
        if len(cards) < 4:
            continue
        head, add = cards[:-1], cards[-1:]
        grown = cache.extended(cache.read(head), add, cards)
        assert grown is cache.read(tuple(reversed(cards)))  # one reading per multiset
        assert grown.canastra == read_meld(cards, PRESETS[name]).canastra
