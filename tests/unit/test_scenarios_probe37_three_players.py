"""Probe 37, three players (RULES.md §2: "2 or 3 players: each player is a side"; §3: "3
players: 3 mortos"), in the three presets that seat three (`classic`, `biriba`,
`bossa-nova`).

- `bossa-nova`: seat 0, with no canastra, may not lay the meld that would empty its hand
  (`morto.needs_canastra`); seat 1 lays its whole hand with a clean run and throws its last
  card (a relancinho that takes the morto); the stock runs out and three sides are scored,
  two paying their mortos.
- `classic`: play passes 0, 1, 2 and back to 0; seat 0 lays its whole hand in its second turn
  with no canastra (classic's going out needs none) and three sides are scored, none paying a
  morto (classic has none).
- `classic`: only seat 0's first draw of the hand may be refused (`first_turn_redraw`), not
  seat 1's or seat 2's first draws.
- `biriba`: the vulnerability of three sides is each side's own (RULES.md §10).

Every number is worked out by hand from RULES.md §9.
"""

from __future__ import annotations

from buraco_log.cards import parse_cards
from tests.scenario import Scenario, carried_in, refused
from tests.spec_points import spec_points

# 5 x 5 (3c 4d 5s 6c 7d) + 10 x 5 (8h 9h Th Jh Qh) + 10 (2d) = 85
HAND1 = "3c 4d 5s 6c 7d 8h 9h Th Jh Qh 2d"
# 5 x 5 (3h 4c 5d 6s 7c) + 10 x 4 (8s 9d Tc Kh) + 15 (Ah) + 10 (2h) = 90
HAND2 = "3h 4c 5d 6s 7c 8s 9d Tc Kh Ah 2h"


def run_out(s: Scenario) -> None:
    while s.state.stock:
        s.pass_turn()
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")


def test_bossa_nova_three_sides_one_morto_taken_two_paid_at_the_stock_out() -> None:
    hand0 = "Jc Jd Js Qc Qd Qs Kc Kd Ks Ac Ad"
    hand1 = "3s 4s 5s 6s 7s 8s 9s Th Tc Td 4d"
    morto1 = "Ah 5c 6d 8c Qh 9c 4h Kh 3c 7d 8d"  # 15 + 5 x 5 + 10 x 5 = 90
    s = Scenario("bossa-nova", 3, hands={0: hand0, 1: hand1}, stock="As Ts",
                 mortos={1: morto1})
    assert s.state.sides == (0, 1, 2) and [len(m) for m in s.state.mortos] == [11, 11, 11]
    s.draw("As").meld("Jc Jd Js").meld("Qc Qd Qs").meld("Kc Kd Ks")
    # Sets only, no canastra: the meld that would empty the hand takes no morto here.
    refused(s, "morto.needs_canastra", ("canastra",), "meld", "Ac Ad As")
    s.discard("As")
    s.draw("Ts").meld("3s 4s 5s 6s 7s 8s 9s").meld("Th Tc Td Ts").discard("4d")
    s.morto(direct=False)
    assert s.state.morto_taken == (False, True, False)
    run_out(s)
    assert spec_points("bossa-nova", s.hand(0)) == 30  # Ac Ad
    assert spec_points("bossa-nova", morto1) == 90
    # Side 0: three sets 90, less Ac Ad 30, less its morto 100.
    side0 = 90 - 30 - 100
    # Side 1: run 3s..9s 25 + 20 = 45, tens 40, clean canastra 200, less the morto held 90;
    # and its whole hand went down in one turn, the last card thrown: a relancinho, +100
    # (RULES.md §7: in bossa-nova that emptying takes the morto, and the +100 is noted).
    side1 = 45 + 40 + 200 + 100 - 90
    # Side 2: never laid, never took its morto.
    side2 = -spec_points("bossa-nova", s.hand(2)) - 100
    refused(s, "score.mismatch", ("side 1", "recomputed 295"), "end_hand", "stock_out",
            (side0, side1 - 100, side2))
    s.end_hand("stock_out", (side0, side1, side2))
    assert s.state.totals == (side0, side1, side2)
    assert s.state.results[0].scores[1].relancinho == 100


def test_classic_three_seats_take_turns_in_order_and_three_sides_are_scored() -> None:
    hand0 = "Jc Jd Js Qc Qd Qs Kc Kd Ks Ac Ad"
    s = Scenario("classic", 3, hands={0: hand0, 1: HAND1, 2: HAND2},
                 stock="5h 6h 7h As")
    s.pass_turn()
    refused(s, "turn.not_your_turn", ("seat 0", "seat 1"), "draw", None, 0)
    s.pass_turn()
    refused(s, "turn.not_your_turn", ("seat 1", "seat 2"), "draw", None, 1)
    s.pass_turn()
    assert s.turn == 0
    # Four sets, twelve cards, in one turn: out with no canastra, and a relancinho.
    s.draw("As").meld("Jc Jd Js").meld("Qc Qd Qs").meld("Kc Kd Ks").meld("Ac Ad As")
    s.go_out()
    assert all(m.canastra is None for m in s.state.melds[0])
    assert (spec_points("classic", HAND1), spec_points("classic", HAND2)) == (85, 90)
    # Side 0: 30 + 30 + 30 + 45 = 135, going out 50, relancinho 100. No morto in classic.
    scores = (135 + 50 + 100, -85, -90)
    refused(s, "score.mismatch", ("side 2", "recomputed -90"), "end_hand", "went_out",
            (scores[0], scores[1], -190))
    s.end_hand("went_out", scores)
    assert [sc.morto_penalty for sc in s.state.results[0].scores] == [0, 0, 0]


def test_classic_three_players_only_the_first_draw_of_the_hand_may_be_refused() -> None:
    s = Scenario("classic", 3, stock="9h 9c 4h 4c 5h")
    s.draw("9h").reject("9h").draw("9c")
    refused(s, "draw.redraw_only_first", ("first",), "reject", "9c")
    s.discard("9c")
    s.draw("4h")  # seat 1's first draw is no first turn of the hand
    refused(s, "draw.redraw_only_first", ("first",), "reject", "4h")
    s.discard("4h")
    s.draw("4c")
    refused(s, "draw.redraw_only_first", ("first",), "reject", "4c")
    s.discard("4c")
    assert s.turn == 0 and s.state.pile == parse_cards("9h 9c 4h 4c")



def test_biriba_three_sides_each_is_vulnerable_by_its_own_total() -> None:
    # Sides at 750 (vulnerable: half the 1500 target), 745 and 0.
    hands = {0: "Kc Kd Ks Qc Qd Qs 3c 3d 3h 9h 4s", 1: "5c 5d 5s 9c 8h Jd 6h 4h Ts 7c 2s",
             2: "6c 6d 6s Jh 8d Td 7h 4c Ah Tc 9s"}
    s = carried_in(Scenario("biriba", 3, hands=hands, stock="Jc Js Qh"), (750, 745, 0))
    assert s.state.vulnerable == (True, False, False)
    s.draw("Jc").meld("Kc Kd Ks").meld("Qc Qd Qs")
    # 60 points: short of 75, the turn cannot end.
    refused(s, "vulnerable.opening_too_low", ("75", "60"), "discard", "Jc")
    s.meld("3c 3d 3h")  # 75: enough
    s.discard("Jc")
    # Side 1, at 745, is not vulnerable: fifteen points open it.
    s.draw("Js").meld("5c 5d 5s").discard("Js")
    # Side 2, at 0: fifteen points too.
    s.draw("Qh").meld("6c 6d 6s").discard("Qh")
    assert s.state.opened == (True, True, True)
