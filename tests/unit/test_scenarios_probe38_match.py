"""Probe 38, from one hand to the next in one log (RULES.md §2, §10):

- The deal rotates: the second hand's dealer is the seat after the first's, and the seat after
  that dealer plays first, with 2, 3, 4 and 6 players (`classic`).
- Vulnerability follows the totals the hands made: a `classic` side carried in at 700 opens
  with 30 points (not vulnerable), goes out for 345 and is vulnerable in the next hand (1045 is
  at least half of 1500): its 30-point opening is refused there; carried in at 350 it reaches
  only 695 and is not.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.events import HandStarted
from tests.scenario import Scenario, build_deal, carried_in, refused
from tests.spec_points import spec_points


def deal(s: Scenario, hands: dict[int, str] | None = None, dealer: int | None = None
         ) -> HandStarted:
    ev = build_deal(s.rules, s.players, hands or {}, "", {}, None, hand_no=1, dealer=dealer)
    return msgspec.structs.replace(ev, seq=s.rep.seq + 1)


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_the_second_hand_is_dealt_by_the_next_seat(players: int) -> None:
    s = Scenario("classic", players)
    while s.state.stock:
        s.pass_turn()
    scores = [0] * s.rules.sides(players)
    for seat in range(players):
        scores[seat if players <= 3 else seat % 2] -= spec_points("classic", s.hand(seat))
    s.end_hand("stock_out", tuple(scores))
    # The first dealer is the last seat: the deal passes to seat 0, and seat 1 plays first.
    refused(s, "deal.dealer_rotation", ("rotates to 0",), "push", deal(s, dealer=1))
    s.push(deal(s))
    assert (s.state.dealer, s.turn) == (0, 1)
    refused(s, "turn.not_your_turn", ("seat 1",), "draw", None, 0)
    s.pass_turn()
    assert s.turn == 2 % players


HAND0 = "Js Jd Jc 3h 4h 5h 6h 7h 8h 9h Th"
HAND1 = "Ac Ad 3c 5d 7s 9d Kc Kd 4s 6c 8d"  # 15+15+5+5+5+10+10+10+5+5+10 = 95


@pytest.mark.parametrize(("carried", "vulnerable"), [(700, True), (350, False)])
def test_the_hand_that_crosses_half_the_target_makes_the_side_vulnerable(
    carried: int, vulnerable: bool
) -> None:
    s = carried_in(Scenario("classic", hands={0: HAND0, 1: HAND1}, stock="Kh 8c Jh"),
                   (carried, 0))
    s.draw("Kh").meld("Js Jd Jc").discard("Kh")  # 30 points: below 750, no minimum
    s.pass_turn()
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h Th").layoff(0, "Jh").go_out()
    # Jacks 40, run 3..10 55, clean 200, going out 50; laid in an earlier turn: no relancinho.
    s.end_hand("went_out", (345, -95))
    assert tuple(s.state.totals) == (carried + 345, -95)
    s.push(deal(s, {0: "Qs Qd Qc 5c 9h", 1: "4c 4d 4h 9c"}))
    s.draw().meld("4c 4d 4h").discard("9c")  # seat 1 first; side 1 at -95 needs nothing
    s.draw().meld("Qs Qd Qc")
    if vulnerable:
        refused(s, "vulnerable.opening_too_low", ("75",), "discard", "5c")
        s.retract()
    s.discard("5c")
    assert len(s.state.melds[0]) == (0 if vulnerable else 1)
