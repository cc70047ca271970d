"""Probe 40, the last card of the stock under must-use-top, with partners (RULES.md §4, §8, §9;
`001`: "Se o monte acabar e a carta de cima do descarte não puder ser usada, a mão termina").

`thirteen` with four players. Side 0 (seats 0 and 2) lays a set of sixes; in one game seat 3
lays 3h 4h 5h for side 1. Seat 0 draws the stock's last card and throws the 6h. Seat 1 holds
nothing that goes with the 6h:

- with its partner's run on the table the top can be laid off there (RULES.md §4.1: "laid off
  on one of the side's melds"), so the hand may not end (`stock.pile_can_be_taken`): seat 1
  takes the pile, lays the 6h on the run and throws a king nobody can use; seat 2, at the
  floor in turn, ends the hand;
- without it the 6h fits only the opponents' sixes, which never counts: the pile cannot be
  taken (`pile.must_use_top`) and the hand ends there.

Nobody went out: every hand left counts and both mortos are paid (RULES.md §9), by hand.
"""

from __future__ import annotations

from buraco_log.cards import format_card
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

HANDS = {
    0: "6s 6d 6c 6h Qh Qd 9c Jc 7d 8h Ah Ts 3c",
    1: "Ac Ad Kc Kd Qs Js 9d 8s 7c Tc Td 4s 3s",  # no heart near the 6, no 6, no wild
    2: "3d 5s 7d 9h Jd 4c 8c Ts Qd 5d 7s 9s Jh",  # nothing that takes the Kc
    3: "3h 4h 5h Kh Ks 4d 8d Qc Jc 9c 7h Th 5c",
}


def _drawn(s: Scenario) -> str:
    card = s.rep._t.drawn
    assert card is not None
    return format_card(card)


def _to_the_floor(partner_run: bool) -> Scenario:
    s = Scenario("thirteen", 4, hands=HANDS)
    s.draw()
    s.meld("6s 6d 6c").discard(_drawn(s))
    s.pass_turn().pass_turn()  # seats 1 and 2
    s.draw()
    if partner_run:
        s.meld("3h 4h 5h")
    s.discard(_drawn(s))
    while len(s.state.stock) > 1:
        s.pass_turn()
    assert s.turn == 0
    s.draw()
    s.discard("6h")  # the stock is empty: seat 1 faces the floor with the 6h on top
    return s


def _scores(s: Scenario, partner_run: bool) -> tuple[int, int]:
    side0 = spec_points("thirteen", "6s 6d 6c") - spec_points(
        "thirteen", s.hand(0) + s.hand(2)) - 100
    table1 = spec_points("thirteen", "3h 4h 5h 6h") if partner_run else 0
    side1 = table1 - spec_points("thirteen", s.hand(1) + s.hand(3)) - 100
    return side0, side1


def test_the_partners_run_makes_the_pile_takeable_at_the_floor() -> None:
    s = _to_the_floor(partner_run=True)
    refused(s, "stock.pile_can_be_taken", ("6h",), "end_hand", "stock_out")
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")
    s.take_pile()
    refused(s, "pile.must_use_top", ("6h",), "discard", "Kc")  # the top first
    s.layoff(0, "6h")  # side 1's meld 0 is seat 3's run
    assert s.state.melds[1][0].laid_by == 3
    s.discard("Kc")
    assert s.turn == 2 and s.state.stock == ()
    s.end_hand("stock_out", _scores(s, True))
    assert s.state.results[0].went_out is None


def test_an_opponents_meld_does_not_make_the_pile_takeable() -> None:
    s = _to_the_floor(partner_run=False)
    refused(s, "pile.must_use_top", ("6h",), "take_pile")
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")
    s.end_hand("stock_out", _scores(s, False))
    assert s.state.phase == "between" and s.state.results[0].reason == "stock_out"
