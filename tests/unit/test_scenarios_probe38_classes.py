"""Probe 38, what a canastra is as cards are added, what counts as one for going out, and the
must-use-top pickup in partnerships and with a wild on top (RULES.md §4, §5, §6, §7):

- A 2 of the run's own suit is read natural as soon as the card it stood for arrives: 4♠..9♠
  with the 2♠ is dirty; the 3♠ makes it 2♠..9♠, clean. In `burraco` the T♠ first makes it
  semi-clean (4..10 unbroken, the 2♠ at an end).
- `mega` counts only runs as canastras (`canastra_from_sets` off): seven nines let no one go
  out there, while every other 11-card morto preset goes out on them.
- `thirteen` with four players: the pile's top card may be laid off on the partner's meld (the
  side's melds), never the opponents'; a joker on top must go into a meld that turn.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused

ALL = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
       "burako")


@pytest.mark.parametrize("name", ALL)
def test_a_same_suit_two_turns_natural_when_its_card_arrives(name: str) -> None:
    s = Scenario(name, hands={0: "4s 5s 6s 7s 8s 9s 2s Ts 3s Kd Qc"}, stock="8h 8c Kh")
    s.draw("8h").meld("4s 5s 6s 7s 8s 9s 2s").discard("8h")
    assert s.state.melds[0][0].canastra == "dirty"  # 6 naturals and the 2♠ as the 3 or the 10
    s.pass_turn()
    s.draw("Kh").layoff(0, "Ts")
    semi = name == "burraco"
    assert s.state.melds[0][0].canastra == ("semi_clean" if semi else "dirty")
    s.layoff(0, "3s")  # 2-3-4-...-10 of spades: the 2♠ stands in its own place
    assert s.state.melds[0][0].canastra == "clean"
    refused(s, "meld.cards_not_in_hand", ("does not hold",), "layoff", 0, "Js")
    s.discard("Kh")


NINES = "9s 9h 9d 9c 9s 9h 9d 4c 4d 4s Th"
MORTO_N = "Kc Kd Ks Qc Qd Qs 5c 5d 5s 8c 8d"
HAND1 = "Ac Ad 3c 5h 7s Jd Jc Kh 4h 6c 8h"  # 15+15+5+5+5+10+10+10+5+5+10 = 95
ELEVEN = ("biriba", "bossa-nova", "burraco", "mega", "burako")
GOING_OUT = {"biriba": 50, "bossa-nova": 50, "burraco": 100, "mega": 100, "burako": 100}
RELANCINHO = {"biriba": 100, "bossa-nova": 100}


@pytest.mark.parametrize("name", ELEVEN)
def test_seven_nines_let_the_side_go_out_except_in_mega(name: str) -> None:
    s = Scenario(name, hands={0: NINES, 1: HAND1}, mortos={0: MORTO_N}, stock="4h 7d 8s")
    s.draw("4h").meld("9s 9h 9d 9c 9s 9h 9d").meld("4c 4d 4s 4h").discard("Th")
    mega = name == "mega"
    assert s.state.melds[0][0].canastra == (None if mega else "clean")
    s.morto(direct=False)  # no preset here asks a canastra of the morto but bossa-nova
    s.pass_turn()
    s.draw("8s").meld("Kc Kd Ks").meld("Qc Qd Qs").meld("5c 5d 5s")
    if mega:
        refused(s, "go_out.needs_canastra", ("canastra",), "meld", "8c 8d 8s")
        s.discard("8s")
        assert len(s.hand(0)) == 2
        return
    s.meld("8c 8d 8s").go_out()
    # Nines 70, fours 20, kings 30, queens 30, fives 15, eights 30 = 195; the clean set 200.
    side0 = 195 + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (side0 - 200, -195))
    s.end_hand("went_out", (side0, -95 - 100))


# -- thirteen with four players: the side's melds, and a joker on top ---------------------------

NO_JACK = "3c 4d 5s 6h 7c 8d 9s Th Qh Kd As 4h 5c"  # no J, no 9/10/Q/K of clubs, no wild


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_the_top_card_may_go_on_the_partners_meld(name: str) -> None:
    s = Scenario(name, 4, hands={0: "Jh Js Jd 6c", 1: "Jc 6s", 2: NO_JACK}, stock="Ks Kh")
    s.draw("Ks").meld("Jh Js Jd").discard("6c")
    s.draw("Kh").discard("Jc")  # seat 1, an opponent, throws a jack
    s.take_pile()  # seat 2 holds no jack: the Jc can go only on its partner's jacks
    refused(s, "pile.must_use_top", ("not used",), "discard", "3c")
    s.layoff(0, "Jc").discard("3c")
    assert len(s.state.melds[0][0].cards) == 4


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_the_top_card_may_not_go_on_the_opponents_meld(name: str) -> None:
    s = Scenario(name, 4, hands={0: "Jh Js Jd Jc", 1: NO_JACK}, stock="Ks")
    s.draw("Ks").meld("Jh Js Jd").discard("Jc")
    refused(s, "pile.must_use_top", ("cannot use the top card Jc",), "take_pile")
    s.draw()


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_a_joker_on_top_goes_into_a_meld_that_turn(name: str) -> None:
    s = Scenario(name, hands={0: "7h 8h 5c 5d 5s 2c", 1: "JK 6s"}, stock="Ks Kh")
    s.draw("Ks").meld("5c 5d 5s 2c").discard("Ks")  # a dirty set of fives: it has its wild
    s.draw("Kh").discard("JK")
    s.take_pile()
    refused(s, "meld.too_many_wilds", (), "layoff", 0, "JK")
    refused(s, "pile.must_use_top", ("JK",), "discard", "Ks")
    s.meld("7h 8h JK").discard("Ks")  # the king it threw comes back with the pile
    assert s.turn == 1
