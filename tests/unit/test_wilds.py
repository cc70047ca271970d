"""Where a meld's wild stands (issue 14 item 6): ``wild_place`` and ``describe_wild``."""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.rules import PRESETS
from buraco_log.timeline import table_view
from buraco_log.wilds import describe_wild, wild_place
from tests.scenario import Scenario

BURRACO = PRESETS["burraco"]


@pytest.mark.parametrize(
    ("cards", "words"),
    [
        ("3h 4h 2s 6h", "2♠ as the 5"),  # the gap
        ("9c 9d JK", "🃏 as a 9"),
        ("8c 8d 2h", "2♥ as an 8"),
        ("Ac Ad 2h", "2♥ as an A"),
        ("3h 4h 5h JK", "🃏 at either end, as the 2 or the 6"),
        ("Qh Kh Ah JK", "🃏 as the J, at the low end"),  # the ace high closes the top
        ("Ah 2h 3h JK", "🃏 as the 4, at the high end"),  # the ace low closes the bottom
        ("Kh Ah 2s", "2♠ as the Q, at the low end"),  # K-A-2 never wraps: the 2 is wild
        ("3c 4c 5c 2h 2c", "2♥ at either end, as the A or the 6"),  # 2♣ natural, 2♥ wild
    ],
)
def test_the_wild_is_named_with_the_rank_it_stands_for_or_the_end_it_extends(
    cards: str, words: str
) -> None:
    assert describe_wild(parse_cards(cards), BURRACO) == words


@pytest.mark.parametrize("cards", ["Ah 2h 3h 4h", "7c 7d 7s", "2h 3h 4h"])
def test_a_meld_without_a_wild_names_none(cards: str) -> None:
    assert wild_place(parse_cards(cards), BURRACO) is None
    assert describe_wild(parse_cards(cards), BURRACO) is None


def test_cards_that_form_no_meld_have_no_wild_place() -> None:
    assert wild_place(parse_cards("3h 9c JK"), BURRACO) is None


def test_burako_opens_both_ends_past_the_king_and_names_tiles_by_number() -> None:
    burako = PRESETS["burako"]
    assert wild_place(parse_cards("Qh Kh JK"), burako).ranks == (11, 14)  # type: ignore[union-attr]
    assert describe_wild(parse_cards("3h 4h 2s 6h"), burako, "tiles") == "2k as the 5"
    assert wild_place(parse_cards("Qh Kh JK"), PRESETS["burraco"]).ranks == (11, 14)  # type: ignore[union-attr]
    assert wild_place(parse_cards("Ah Qh Kh JK"), PRESETS["burraco"]).ranks == (11,)  # type: ignore[union-attr]


def test_the_table_view_names_each_wild_beside_its_meld() -> None:
    s = Scenario("burraco", hands={0: "3h 4h 2s 6h 9c 9d JK Kc Qd Js 5c"}, stock="Ac")
    s.draw("Ac").meld("3h 4h 2s 6h").meld("9c 9d JK")
    melds = table_view(s.state).sides[0].melds
    assert [m.wild for m in melds] == ["2s as the 5", "JK as a 9"]
