"""Probe 36, turns: what may be taken, laid and emptied, one preset's specifics each.

- `thirteen`: the pile under must-use-top (RULES.md §4): refused when no card of the hand can
  use the top, taken with two of its rank, and no discard before the top card is laid.
- `mega`: a seven-card set is no canastra (`canastra_from_sets` is off, RULES.md §6), so it
  does not let the side go out (RULES.md §7, `go_out_needs_canastra`).
- `burako`: going out with a clean canastra only (RULES.md §7, "any kind", over `004`'s "suja"),
  scored whole.
- `bossa-nova`: the canastra laid by the very meld before the emptying discard lets the side
  take its morto (`morto_needs_canastra`).
- `classic` with six players: two triangles (RULES.md §2); a partner lays off on the side's
  meld, an opponent cannot (the meld is not theirs).

Outcomes are worked out by hand from RULES.md, never read from the engine.
"""

from __future__ import annotations

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

# -- thirteen: must use the top card ---------------------------------------------------------

NO_NINES = "3c 4d 5s 6c 7d Jc Qd Kh Ac 3d 4s 5c 6d"


def test_thirteen_pile_refused_when_the_hand_cannot_use_its_top() -> None:
    # 9h on top; the hand holds no 9, no 7h 8h Th Jh, no joker and no 2.
    s = Scenario("thirteen", hands={0: NO_NINES}, upcard="9h")
    refused(s, "pile.must_use_top", (), "take_pile")
    s.draw()  # the stock stays open


def test_thirteen_pile_taken_with_two_of_its_rank_top_laid_before_the_discard() -> None:
    s = Scenario("thirteen", hands={0: "9s 9d 3c 4d 5s 6c 7d Jc Qd Kh Ac 3d 4s"},
                 upcard="9h")
    s.take_pile()
    assert len(s.hand(0)) == 14 and s.state.pile == ()
    refused(s, "pile.must_use_top", (), "discard", "3c")
    s.meld("9s 9d 9h").discard("3c")
    assert len(s.hand(0)) == 10 and s.turn == 1


# -- mega: a seven-card set is no canastra ----------------------------------------------------

def test_mega_seven_nines_are_no_canastra_and_do_not_let_the_side_go_out() -> None:
    hand0 = "9s 9h 9d 9c 9s 9h 9d 4c 4d 4s 4h"
    morto = "Th Ts Td Qh Qs Qd 5c 6c 7c Kc Ks"
    s = Scenario("mega", hands={0: hand0}, stock="Kd 5h Kh", mortos={0: morto},
                 upcard="8c")
    s.draw("Kd").meld("9s 9h 9d 9c 9s 9h 9d").meld("4c 4d 4s 4h").discard("Kd")
    s.morto(direct=False)  # mega's morto needs no canastra
    assert s.state.melds[0][0].canastra is None
    s.pass_turn()
    s.draw("Kh").meld("Th Ts Td").meld("Qh Qs Qd").meld("5c 6c 7c")
    refused(s, "go_out.needs_canastra", ("canastra",), "meld", "Kc Ks Kh")
    s.discard("Kh")  # two kings kept: the hand goes on


# -- burako: out with only a clean canastra, scored -----------------------------------------

def test_burako_goes_out_with_a_clean_canastra_only() -> None:
    hand0 = "3h 4h 5h 6h 7h 8h 9h Js Jd Jc 5c"
    morto = "Th Ts Td Qh Qs Qd Kh Ks Kc 8c 8d"
    hand1 = "JK Ad 3c 5d 7s 9d Jc Qc 4s 6c 8h"
    s = Scenario("burako", hands={0: hand0, 1: hand1}, stock="Jh 4h 8s", mortos={0: morto})
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("5c")
    s.morto(direct=False)
    s.pass_turn()
    s.draw("8s").meld("Th Ts Td").meld("Qh Qs Qd").meld("Kh Ks Kc").meld("8c 8d 8s")
    s.go_out()
    assert [m.canastra for m in s.state.melds[0]].count("clean") == 1
    assert [m.canastra for m in s.state.melds[0]].count("dirty") == 0
    held1 = 50 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 5 + 5 + 10
    assert spec_points("burako", s.hand(1)) == held1 == 130
    # Run 25 + 20 = 45, jacks 40, tens, queens, kings, eights 30 each: 205; clean 200, out 100.
    side0 = 205 + 200 + 100
    side1 = -held1 - 100
    refused(s, "score.mismatch", ("side 0", "recomputed 505"), "end_hand", "went_out",
            (side0 - 50, side1))
    s.end_hand("went_out", (side0, side1))


# -- bossa-nova: the canastra that comes with the last meld ---------------------------------

def test_bossa_nova_the_canastra_laid_just_before_the_emptying_discard_counts() -> None:
    s = Scenario("bossa-nova", hands={0: "3h 4h 5h 6h 7h 8h Js Jd Jc Jh Qc"}, stock="9h")
    s.draw("9h").meld("Js Jd Jc Jh").meld("3h 4h 5h 6h 7h 8h 9h").discard("Qc")
    s.morto(direct=False)
    assert s.state.morto_taken[0] and len(s.hand(0)) == 11


def test_bossa_nova_six_hearts_are_no_canastra_for_the_morto() -> None:
    s = Scenario("bossa-nova", hands={0: "3h 4h 5h 6h 7h 8h Js Jd Jc Qc Qd"}, stock="Qs")
    s.draw("Qs").meld("Js Jd Jc").meld("Qc Qd Qs")
    # Six hearts: laying them all empties the hand, five leave one card whose discard would;
    # either takes the morto, and the side has no canastra.
    refused(s, "morto.needs_canastra", ("canastra",), "meld", "3h 4h 5h 6h 7h 8h")
    refused(s, "morto.needs_canastra", ("canastra",), "meld", "3h 4h 5h 6h 7h")
    s.meld("3h 4h 5h 6h").discard("8h")
    assert not s.state.morto_taken[0] and len(s.hand(0)) == 1


# -- classic, six players: two triangles ----------------------------------------------------

def test_classic_six_players_partner_lays_off_opponent_cannot() -> None:
    s = Scenario("classic", players=6,
                 hands={0: "5h 6h 7h", 2: "8h", 3: "4h"}, stock="Kc Kd Ks Qc")
    s.draw("Kc").meld("5h 6h 7h").discard("Kc")
    s.pass_turn()  # seat 1
    s.draw("Ks").layoff(0, "8h").discard("Ks")  # seat 2, seat 0's partner
    assert len(s.state.melds[0][0].cards) == 4
    refused(s, "turn.must_draw_first", (), "layoff", 0, "4h")
    s.draw("Qc")
    refused(s, "layoff.no_such_meld", (), "layoff", 0, "4h")  # side 1 has no meld 0
