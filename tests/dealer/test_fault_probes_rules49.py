"""``deal_from_order`` deals only the preset's material.

It checked the length of the card order alone: a joker in a jokerless preset, or a third copy
of a card standing in for a missing one, made a ``HandStarted`` that only the reducer refused
later (``deal.material``). The dealer now refuses such an order itself, with the same rule.
"""

from __future__ import annotations

import random

import pytest

from buraco_log.cards import JOKER, deck, format_card, parse_card
from buraco_log.dealer import deal_from_order
from buraco_log.errors import DealError
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS, preset
from tests.play import start


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_any_order_of_the_presets_material_deals_a_hand_the_reducer_accepts(name: str) -> None:
    rules = preset(name)
    order = deck(rules.jokers)
    random.Random(name).shuffle(order)
    players = rules.player_counts[0]
    hs = deal_from_order(rules, players, 0, 0, order, seq=1)
    rep = Replayer()
    rep.step(start(rules, players))
    rep.step(hs)  # the reducer's material check agrees
    dealt = [c for h in (*hs.hands, *hs.mortos) for c in h] + list(hs.stock)
    if hs.upcard is not None:
        dealt.append(hs.upcard)
    assert sorted(dealt) == sorted(order)


def _refused(name: str, order: list[int]) -> str:
    rules = preset(name)
    with pytest.raises(DealError) as info:
        deal_from_order(rules, rules.player_counts[0], 0, 0, order, seq=1)
    text = str(info.value)
    assert text.startswith("[deal.material] "), text
    assert "\n" not in text
    return text


def test_a_joker_in_a_jokerless_preset_is_refused_by_the_dealer() -> None:
    order = deck(0)
    order[0] = JOKER  # same length: the length check alone let it through
    text = _refused("classic", order)
    assert "extra JK" in text and "missing Ac" in text


def test_a_third_copy_of_a_card_standing_in_for_a_missing_one_is_refused() -> None:
    order = deck(4)
    ace = parse_card("As")
    missing = order[0]
    order[0] = ace  # three aces of spades, one card short elsewhere
    text = _refused("thirteen", order)
    assert "extra As" in text and f"missing {format_card(missing)}" in text


def test_a_short_order_names_the_card_it_lacks() -> None:
    text = _refused("classic", deck(0)[:-1])
    assert "it has 103" in text and "missing Ks" in text


def test_an_order_with_a_value_that_is_no_card_is_refused_before_any_deal() -> None:
    order = deck(2)
    order[-1] = 0  # code 0 is no card
    text = _refused("burako", order)
    assert "no tile code" in text


def test_a_tile_order_speaks_of_tiles_and_tatus() -> None:
    order = deck(2)
    order[0] = order[5]
    text = _refused("burako", order)
    assert "106 tiles, 2 tatus" in text
