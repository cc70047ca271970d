"""Probe 40, Burako's tiles in the engine's refusals (RULES.md §1: Burako is "the same model",
tile 1 = ace, 11/12/13 = J/Q/K, colour = suit; "Only the rendering differs (numbers and
colours, not A/K and suits)").

A refusal's text is what `audit`, `replay` and `moves` print beside the table, which they draw
in tiles for `burako`. The refusals named the cards as playing cards all the same ("does not
hold Ks" beside a hand of 13r 12r ...): now they name tiles (13k, 12r, 5y), as every other line
does, and the presets with cards keep the card names.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import format_cards, parse_cards
from tests.scenario import Scenario, refused

HAND0 = "Kh Qh Jh 5c 6c 7c 9s 9d 4s 3d 8c"


def _scenario(name: str) -> Scenario:
    hand = HAND0 + (" Tc Td" if name == "thirteen" else "")
    return Scenario(name, hands={0: hand, 1: "Ks"}, stock="2c Ad")


def _tiles(cards: str) -> str:
    return format_cards(parse_cards(cards), "tiles")


def test_burako_refusals_name_tiles_not_cards() -> None:
    s = _scenario("burako")
    # The stock's top is the 2 of yellow (clubs): a draw of another tile names both as tiles.
    refused(s, "draw.wrong_card", ("drew 1b", "top of the stock is 2y"), "draw", "Ad")
    s.draw("2c")
    refused(s, "discard.card_not_in_hand", ("does not hold 13k",), "discard", "Ks")
    refused(s, "meld.run_not_consecutive", ("5y 6y 8y: not consecutive",), "meld", "5c 6c 8c")
    refused(s, "meld.not_a_meld", ("13r 12r 9k:",), "meld", "Kh Qh 9s")
    refused(s, "meld.too_few_cards", ("13r 12r:",), "meld", "Kh Qh")
    s.meld("Kh Qh Jh")
    refused(s, "meld.not_a_meld", ("laying off on meld 0: 13r 12r 11r 9k:",), "layoff", 0,
            "9s")
    s.discard("9s")  # seat 1 to move: the pile is the 9 of black
    refused(s, "pile.wrong_top", ("named top 5y", "the top is 9k"), "take_pile", None, "5c")
    for card in ("Ks", "Kh", "9s", "5c", "Ad", "2c"):  # no playing card named anywhere
        assert card.lower() not in str(s.last_error).lower().split()


@pytest.mark.parametrize("name", ["classic", "thirteen", "burraco", "mega"])
def test_the_presets_with_cards_name_cards(name: str) -> None:
    s = _scenario(name)
    refused(s, "draw.wrong_card", ("drew ad", "top of the stock is 2c"), "draw", "Ad")
    s.draw("2c")
    refused(s, "discard.card_not_in_hand", ("does not hold ks",), "discard", "Ks")
    refused(s, "meld.run_not_consecutive", ("5c 6c 8c: not consecutive",), "meld", "5c 6c 8c")
    assert _tiles("5c 6c 8c") not in str(s.last_error)
