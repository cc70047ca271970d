"""Probe 39, a morto of one card (house rules) whose card would make the canastra (RULES.md §7,
docs/rules.md "A morto of one card"):

`thirteen` with `morto_size = 1`, a run 3♥..8♥ on the table and no canastra; the morto is the
9♥, which would make the run a canastra. Taking it directly (the hand emptied by melding) is
refused all the same: the morto lies face down, and whether a move is allowed does not turn
on a card nobody has seen. Taken indirectly (the last card thrown), it is played from the next
turn: the 9♥ goes on the run, a canastra, and the player goes out by throwing the card drawn.
"""

from __future__ import annotations

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

HAND = "3h 4h 5h 6h 7h 8h Qc Qd Qs Jc Jd Js Jh"


def _scenario() -> Scenario:
    return Scenario("thirteen", hands={0: HAND}, mortos={0: "9h"}, stock="Jc 4d 7c",
                    morto_size=1)


def test_a_one_card_morto_is_not_taken_directly_even_if_its_card_makes_the_canastra() -> None:
    s = _scenario()
    s.draw("Jc").meld("3h 4h 5h 6h 7h 8h").meld("Qc Qd Qs")
    refused(s, "go_out.needs_canastra", ("one card", "canastra"), "meld", "Jc Jd Js Jh Jc")
    s.meld("Jc Jd Js Jh").discard("Jc").morto(direct=False)
    assert s.state.morto_taken == (True, False) and s.turn == 1


def test_the_one_card_morto_taken_indirectly_makes_the_canastra_and_goes_out() -> None:
    s = _scenario()
    s.draw("Jc").meld("3h 4h 5h 6h 7h 8h").meld("Qc Qd Qs").meld("Jc Jd Js Jh")
    s.discard("Jc").morto(direct=False)
    s.pass_turn()
    s.draw("7c")
    s.layoff(0, "9h")
    assert s.state.melds[0][0].canastra == "clean"
    s.discard("7c").go_out()
    table = spec_points("thirteen", "3h 4h 5h 6h 7h 8h 9h Qc Qd Qs Jc Jd Js Jh")
    side1 = -spec_points("thirteen", s.hand(1)) - 100
    s.end_hand("went_out", (table + 200 + 100, side1))
