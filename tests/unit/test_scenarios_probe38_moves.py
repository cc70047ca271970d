"""Probe 38, the plain moves of a turn in every preset, each rule accepted once and refused with
its rule id (RULES.md §4, §5, §7): meld sizes and numbering, lay-offs on the side's own melds
only, the pile taken whole with its true top (a one-card upcard pile on the first turn where
the preset turns one up, nothing to take where it does not), the draw of the stock's top card,
the morto's card count, and a hand left empty that only the morto or going out may follow.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.events import MortoTaken
from tests.scenario import Scenario, refused

ALL = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
       "burako")
MORTO = ALL[1:]
UPCARD = ("thirteen", "thirteen-quick", "burraco", "mega")


@pytest.mark.parametrize("name", ALL)
def test_meld_size_shape_and_numbering(name: str) -> None:
    s = Scenario(name, hands={0: "Jh Js Jd 3h 5s 9d 4c 4d 4h Kc"}, stock="8c")
    s.draw("8c")
    refused(s, "meld.too_few_cards", ("at least 3",), "meld", "Jh Js")
    refused(s, "meld.not_a_meld", ("neither",), "meld", "3h 5s 9d")
    refused(s, "meld.wrong_id", ("next is 0",), "meld", "Jh Js Jd", meld=1)
    s.meld("Jh Js Jd", meld=0)
    refused(s, "meld.wrong_id", ("next is 1",), "meld", "4c 4d 4h", meld=0)
    s.meld("4c 4d 4h", meld=1)
    refused(s, "meld.cards_not_in_hand", ("does not hold",), "meld", "Kc Kd Kh")
    s.discard("Kc")
    assert [m.cards for m in s.state.melds[0]] == [parse_cards("Jh Js Jd"),
                                                   parse_cards("4c 4d 4h")]


@pytest.mark.parametrize("name", ALL)
def test_lay_offs_go_on_the_sides_own_melds_only(name: str) -> None:
    s = Scenario(name, hands={0: "Jh Js Jd 5c", 1: "Qh Qs Qd Qc Jc 6d"}, stock="8c 9d")
    s.draw("8c").meld("Jh Js Jd").discard("8c")
    s.draw("9d")
    refused(s, "layoff.no_such_meld", ("own melds",), "layoff", 0, "Jc")  # side 0's jacks
    s.meld("Qh Qs Qd")
    refused(s, "layoff.no_cards", ("nothing",), "layoff", 0, "")
    refused(s, "layoff.no_such_meld", ("no meld 1",), "layoff", 1, "Qc")
    s.layoff(0, "Qc")
    assert len(s.state.melds[1][0].cards) == 4 and len(s.state.melds[0][0].cards) == 3
    s.discard("9d")


@pytest.mark.parametrize("name", ALL)
def test_the_pile_is_taken_whole_with_its_true_top(name: str) -> None:
    s = Scenario(name, hands={0: "Qs Qc 5h", 1: "Qd 7c"}, stock="8c 9d")
    s.pass_turn()  # seat 0 throws the 8c
    s.draw("9d").discard("Qd")
    n = len(s.state.pile)
    assert n == (3 if name in UPCARD else 2)
    refused(s, "pile.whole_pile", ("never part",), "take_pile", n - 1)
    refused(s, "pile.whole_pile", ("never part",), "take_pile", n + 1)
    refused(s, "pile.wrong_top", ("named top " + s.text("5h"),), "take_pile", None, "5h")
    before = len(s.hand(0))
    s.take_pile().meld("Qs Qc Qd")  # under must-use-top the Qd is used at once
    assert s.state.pile == () and len(s.hand(0)) == before + n - 3


@pytest.mark.parametrize("name", ALL)
def test_the_first_turns_pile_is_the_upcard_or_nothing(name: str) -> None:
    upcard = "Qd" if name in UPCARD else None
    s = Scenario(name, hands={0: "Qs Qc 5h"}, upcard=upcard)
    if upcard is None:
        refused(s, "pile.empty", ("empty",), "take_pile", 1, "Qd")
        s.draw()
        return
    s.take_pile().meld("Qs Qc Qd")
    assert len(s.hand(0)) == (13 if name.startswith("thirteen") else 11) - 2


@pytest.mark.parametrize("name", ALL)
def test_the_draw_takes_the_stocks_top_and_the_discard_a_held_card(name: str) -> None:
    s = Scenario(name, hands={0: "5h 6c", 1: "7d"}, stock="8c 9d")
    refused(s, "draw.wrong_card", ("top of the stock is " + s.text("8c"),), "draw", "9d")
    s.draw("8c")
    refused(s, "discard.card_not_in_hand", ("does not hold " + s.text("7d"),), "discard", "7d")
    s.discard("5h")
    refused(s, "turn.not_your_turn", ("seat 1",), "draw", "9d", seat=0)
    s.draw("9d").discard("7d")


@pytest.mark.parametrize("name", MORTO)
def test_an_empty_hand_takes_the_morto_with_its_true_count(name: str) -> None:
    t13 = name.startswith("thirteen")
    hand = "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc Th" + (" 4s 4d" if t13 else "")
    s = Scenario(name, hands={0: hand}, stock="4c 8d" if t13 else "Kh 8d")
    s.draw("4c" if t13 else "Kh").meld("3h 4h 5h 6h 7h 8h 9h")
    if t13:
        s.meld("Ks Kd Kc").meld("4s 4d 4c")
    else:
        s.meld("Ks Kd Kc Kh")
    s.discard("Th")
    assert s.hand(0) == () and s.turn == 0
    refused(s, "turn.hand_emptied", ("taking the morto",), "discard", "Th")
    refused(s, "turn.hand_emptied", ("taking the morto",), "meld", "Th Jh Qh")
    refused(s, "turn.not_your_turn", ("seat 0",), "draw", "8d", seat=1)
    wrong = MortoTaken(0, False, 10, seq=s.rep.seq + 1)
    unit = "tiles" if s.rules.rendering == "tiles" else "cards"  # Burako's tiles (probe 41b)
    refused(s, "morto.wrong_count", (f"holds 11 {unit}, not 10",), "push", wrong)
    s.push(MortoTaken(0, False, 11, seq=s.rep.seq + 1))
    assert len(s.hand(0)) == 11 and s.turn == 1
