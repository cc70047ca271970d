"""Probe 36, whole hands scored by hand from RULES.md §7 and §9, one preset's specifics each:

- `classic`: the relancinho that ends the hand (+100 and the going-out 50 on top), and the same
  cards laid over two turns (no relancinho, only the 50).
- `biriba`: a relancinho that takes the morto directly, then going out with no canastra at all
  (`biriba` is the one morto preset whose going out needs none).
- `thirteen`: a direct morto played out in the same turn, jokers at 50 on the table and in the
  opponent's hand, going out 100, the opponent's morto −100.
- `burraco`: the pinella (20) as a natural 2 of its own suit in a clean canastra, and a 2 of
  another suit making a run with a broken stretch dirty (100, not the semi-clean 150).

Every expected number is worked out by hand from RULES.md §9's tables (never read from the
engine); each hand is also refused with a score one reading off (`score.mismatch`).
"""

from __future__ import annotations

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

# 15 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 5 + 5 + 10 = 95 in the classic family's table.
HAND1 = "Ac Ad 3c 5d 7s 9d Jc Kc 4s 6c 8d"


# -- classic: relancinho and going out ---------------------------------------------------------

def test_classic_relancinho_ends_the_hand_with_the_going_out_bonus_on_top() -> None:
    s = Scenario("classic", hands={0: "5s 6s 7s 8s 9s Ts 2d Qh Qs Qd 4c", 1: HAND1},
                 stock="Qc")
    # 2d is a wild (not a spade): the run is 4-or-J..., seven cards, dirty.
    s.draw("Qc").meld("5s 6s 7s 8s 9s Ts 2d").meld("Qh Qs Qd Qc").discard("4c")
    s.go_out()
    assert s.state.melds[0][0].canastra == "dirty"
    assert spec_points("classic", HAND1) == 95
    # Run 5+5+5+10+10+10 + 2d 10 = 55, queens 40, dirty 100, relancinho 100, going out 50.
    side0 = 55 + 40 + 100 + 100 + 50
    side1 = -95  # classic has no morto to pay
    refused(s, "score.mismatch", ("side 0", "recomputed 345"), "end_hand", "went_out",
            (side0 - 100, side1))
    s.end_hand("went_out", (side0, side1))
    sc = s.state.results[0].scores[0]
    assert (sc.relancinho, sc.going_out) == (100, 50)


def test_classic_the_same_cards_over_two_turns_earn_no_relancinho() -> None:
    s = Scenario("classic", hands={0: "5s 6s 7s 8s 9s Ts 2d Qh Qs Qd 4c", 1: HAND1},
                 stock="Kh 6h Qc")
    s.draw("Kh").meld("Qh Qs Qd").discard("Kh")
    s.pass_turn()
    s.draw("Qc").meld("5s 6s 7s 8s 9s Ts 2d").layoff(0, "Qc").discard("4c")
    s.go_out()
    side0 = 55 + 40 + 100 + 50
    refused(s, "score.mismatch", ("side 0", "recomputed 245"), "end_hand", "went_out",
            (side0 + 100, -95))
    s.end_hand("went_out", (side0, -95))
    assert s.state.results[0].scores[0].relancinho == 0


# -- biriba: relancinho by the direct morto, out with no canastra ------------------------------

def test_biriba_direct_morto_relancinho_then_out_without_a_canastra() -> None:
    hand0 = "Qh Qs Qd 5c 5d 5h 9s 9d 9c Kh Ks"
    morto = "Jh Js Jd 4c 4d 4s 7h 7s 7d 8c 3c"
    s = Scenario("biriba", hands={0: hand0, 1: HAND1}, stock="Kd 4h Qc", mortos={0: morto})
    # Twelve cards laid in one turn, no discard: the morto directly, and a relancinho.
    s.draw("Kd").meld("Qh Qs Qd").meld("5c 5d 5h").meld("9s 9d 9c").meld("Kh Ks Kd")
    s.morto(direct=True)
    s.meld("Jh Js Jd").meld("4c 4d 4s").meld("7h 7s 7d").discard("3c")
    s.pass_turn()
    # No canastra on the table: biriba still lets the side go out (RULES.md §7).
    s.draw("Qc").layoff(0, "Qc").discard("8c")
    s.go_out()
    assert all(m.canastra is None for m in s.state.melds[0])
    # Queens 40, fives 15, nines 30, kings 30, jacks 30, fours 15, sevens 15 = 175.
    side0 = 175 + 100 + 50
    side1 = -95 - 100  # its hand, its morto never taken
    refused(s, "score.mismatch", ("side 0", "recomputed 325"), "end_hand", "went_out",
            (side0 - 100, side1))
    refused(s, "score.mismatch", ("side 1", "recomputed -195"), "end_hand", "went_out",
            (side0, -95))
    s.end_hand("went_out", (side0, side1))


# -- thirteen: jokers at 50, going out 100 ----------------------------------------------------

def test_thirteen_direct_morto_and_out_in_one_turn_jokers_at_fifty() -> None:
    hand0 = "3h 4h 5h 6h 7h 8h JK Js Jd Jc Ks Kd Kc"
    hand1 = "JK 2d Ad 3c 5d 7s 9d Jc Kc 4s 6c 8d Qc"
    morto = "Th Ts Td Tc Qh Qs Qd Ah As Ad 5c"
    s = Scenario("thirteen", hands={0: hand0, 1: hand1}, stock="9h", mortos={0: morto},
                 upcard="4d")
    s.draw("9h").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc JK").meld("Ks Kd Kc")
    s.morto(direct=True)
    s.meld("Th Ts Td Tc").meld("Qh Qs Qd").meld("Ah As Ad").discard("5c")
    s.go_out()
    held1 = 50 + 10 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 5 + 5 + 10 + 10
    assert spec_points("thirteen", s.hand(1)) == held1 == 150
    # Run 25 + 20 = 45, jacks 30 + JK 50, kings 30, tens 40, queens 30, aces 45: 270;
    # clean 200, going out 100.
    side0 = 45 + 80 + 30 + 40 + 30 + 45 + 200 + 100
    side1 = -held1 - 100
    # The jokers at the classic family's 10: side 0 40 less, side 1 40 less to pay.
    refused(s, "score.mismatch", ("side 0", "recomputed 570"), "end_hand", "went_out",
            (side0 - 40, side1 + 40))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[0].scores[0].canastras == {"clean": 1}


# -- burraco: the pinella natural in a clean canastra, a 2 making another dirty --------------

def test_burraco_pinella_natural_clean_and_a_broken_stretch_dirty() -> None:
    hand0 = "Ah 2h 3h 4h 5h 6h 7h 3s 4s 5s 2d"
    morto = "Kh Ks Kd Kc Qh Qs Qd Qc 8s 9s 9c"
    hand1 = "JK 2c Ad 3c 5d 7s 9d Jc Kc 4d 6c"
    s = Scenario("burraco", hands={0: hand0, 1: hand1}, stock="6s",
                 mortos={0: morto}, upcard="Tc")
    s.draw("6s").meld("Ah 2h 3h 4h 5h 6h 7h")
    assert s.state.melds[0][0].canastra == "clean"  # the 2h stands as itself
    s.meld("3s 4s 5s 6s 2d").morto(direct=True)  # twelve cards laid, no discard
    # 8s 9s leave the 7 to the 2d: 3-4-5-6-W-8-9, no seven naturals in a row: dirty.
    s.layoff(1, "8s 9s")
    assert s.state.melds[0][1].canastra == "dirty"
    s.meld("Kh Ks Kd Kc").meld("Qh Qs Qd Qc").discard("9c")
    s.go_out()
    held1 = 30 + 20 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 5 + 5
    assert spec_points("burraco", s.hand(1)) == held1 == 120
    # Hearts 15 + 20 + 25 = 60, spades 20 + 20 (2d) + 20 = 60, kings 40, queens 40: 200;
    # clean 200, dirty 100, going out 100.
    side0 = 200 + 200 + 100 + 100
    side1 = -held1 - 100
    # The spade run read as semi-clean (150): 50 more.
    refused(s, "score.mismatch", ("side 0", "recomputed 600"), "end_hand", "went_out",
            (side0 + 50, side1))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[0].scores[0].canastras == {"clean": 1, "dirty": 1}
