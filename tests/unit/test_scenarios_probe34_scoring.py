"""Probe 34, the end of a hand scored whole (RULES.md §7-§9), one preset's specifics at a time:

- `biriba`: a relancinho that takes the morto indirectly, the morto then standing as the
  taker's hand at the stock-out, the other side's morto never taken.
- `mega`: the hand ends at two stock cards; a morto taken directly and kept counts its
  joker (50) and 2 (10) as cards left in hand.
- `burraco`: a semi-clean canastra (150) and the going out (100) in one turn with the morto
  taken "em vôo"; the opponent's jolly (30) and pinella (20) in hand.
- `burako`: a royal canastra (500) gone out by a discard, an ace-to-ace one (1000) gone out by
  the last meld, each after the indirect morto.

Every expected number is worked out by hand from RULES.md §9's tables, never read from the
engine; each hand is also refused with a score one reading off (the exact rule id).
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points


def to_floor(s: Scenario, floor: int) -> None:
    """Draw and throw the card drawn until the stock is at ``floor``."""
    while len(s.state.stock) > floor:
        s.pass_turn()


# -- biriba: relancinho, the indirect morto standing at the stock-out -----------------------

def test_biriba_stock_out_a_relancinho_morto_stands_as_the_hand_the_other_unpaid() -> None:
    morto = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd 5c"  # 40 + 30 + 30 + 5 = 105
    hand1 = "Ac Ad As 3s 4c 5d 6s 7c 8d 9s Tc"  # 45 + 25 + 30 = 100
    s = Scenario("biriba", hands={0: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Qc", 1: hand1},
                 stock="Jh", mortos={0: morto})
    # Eleven of the twelve cards down in one turn, the twelfth thrown: relancinho (RULES.md §7,
    # "a final discard is allowed"), and the morto taken indirectly.
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("Qc")
    s.morto(direct=False)
    s.pass_turn()
    s.pass_turn()  # the taker's own next turn: the morto stands
    to_floor(s, 0)
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")
    assert len(s.hand(0)) == 11 and s.state.mortos[0] == ()  # the morto is seat 0's hand
    assert spec_points("biriba", s.hand(0)) == 105 and spec_points("biriba", s.hand(1)) == 100
    # Side 0: run 45, jacks 40, clean canastra 200, relancinho 100, the morto in hand -105.
    side0 = 45 + 40 + 200 + 100 - 105
    # Side 1: its hand -100, its morto never taken -100.
    side1 = -100 - 100
    # Read as voided, the morto would cost 100 and its cards nothing: 285.
    refused(s, "score.mismatch", ("side 0", "recomputed 280"), "end_hand", "stock_out",
            (45 + 40 + 200 + 100 - 100, side1))
    s.end_hand("stock_out", (side0, side1))
    sc = s.state.results[0].scores
    assert (sc[0].relancinho, sc[0].going_out, sc[0].morto_penalty) == (100, 0, 0)
    assert (sc[1].hand_penalty, sc[1].morto_penalty) == (100, 100)


# -- mega: the floor of two, a kept morto with its wilds --------------------------------------

def test_mega_stock_out_at_two_counts_a_kept_mortos_joker_and_2() -> None:
    morto = "JK 2c Kh Ks Kd Ac 5c 6d 8s Qd Qs"
    hand1 = "JK 2d Ad 3c 5d 7s 9d Jc Kc 4s 6c"
    s = Scenario("mega", hands={0: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh", 1: hand1},
                 stock="Th", mortos={0: morto})
    # An eight-card clean run and four jacks empty the hand: the morto, directly; its Qs
    # thrown, the rest kept.
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").morto(direct=True)
    s.discard("Qs")
    to_floor(s, 3)
    refused(s, "hand.not_over", ("floor 2",), "end_hand", "stock_out")
    s.pass_turn()
    assert len(s.state.stock) == 2
    refused(s, "stock.floor_reached", ("floor 2",), "draw", "4c")
    # RULES.md §9, mega: joker 50, 2 10, ace 15, 8..K 10, 3..7 5.
    kept = 50 + 10 + 30 + 15 + 5 + 5 + 10 + 10  # JK 2c Kh Ks Kd Ac 5c 6d 8s Qd
    held1 = 50 + 10 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 5 + 5
    assert spec_points("mega", s.hand(0)) == kept == 135
    assert spec_points("mega", s.hand(1)) == held1 == 130
    side0 = (45 + 10) + 40 + 200 - kept  # run 3..10, jacks, clean canastra: 160
    side1 = -held1 - 100
    # A joker counted at the classic family's 10: 40 more for side 0.
    refused(s, "score.mismatch", ("side 0", "recomputed 160"), "end_hand", "stock_out",
            (side0 + 40, side1))
    s.end_hand("stock_out", (side0, side1))
    assert s.state.results[0].scores[0].canastras == {"clean": 1}


# -- burraco: semi-clean and going out in the turn of the morto "em vôo" ---------------------

def test_burraco_semi_clean_and_going_out_the_opponent_pays_jolly_and_pinella() -> None:
    hand0 = "Ah 2h 3h 4h 5h 6h 7h JK Js Jd Jc"
    morto = "Th Ts Td Kh Ks Kd Kc Qh Qs Qd Qc"
    hand1 = "JK 2d Ad 3c 5d 7s 9d Jc Kc 4s 6c"
    s = Scenario("burraco", hands={0: hand0, 1: hand1}, stock="Jh", mortos={0: morto})
    s.draw("Jh").meld("Ah 2h 3h 4h 5h 6h 7h JK")  # A..7 unbroken, the joker as the 8
    assert s.state.melds[0][0].canastra == "semi_clean"
    s.meld("Js Jd Jc Jh").morto(direct=True)
    s.meld("Th Ts Td").meld("Kh Ks Kd Kc").meld("Qh Qs Qd Qc").go_out()
    # RULES.md §9, burraco: joker 30, 2 20, ace 15, 8..K 10, 3..7 5.
    run = 15 + 20 + 25 + 30
    table = run + 40 + 30 + 40 + 40
    side0 = table + 150 + 100  # semi-clean 150, going out 100: 490
    held1 = 30 + 20 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 5 + 5
    assert spec_points("burraco", s.hand(1)) == held1 == 120
    side1 = -held1 - 100
    # The canastra read as dirty (100), or the jolly in hand at 50: one reading off each.
    refused(s, "score.mismatch", ("side 0", "recomputed 490"), "end_hand", "went_out",
            (side0 - 50, side1))
    refused(s, "score.mismatch", ("side 1", "recomputed -220"), "end_hand", "went_out",
            (side0, side1 - 20))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[0].scores[0].canastras == {"semi_clean": 1}


# -- burako: royal and ace-to-ace, after the indirect morto ---------------------------------

@pytest.mark.parametrize("ace_to_ace", [False, True])
def test_burako_royal_out_by_discard_ace_to_ace_out_by_the_last_meld(ace_to_ace: bool) -> None:
    hand0 = "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th 5c"
    hand1 = "JK Ad 3c 5d 7s 9h Jc Qc 4s 6c 8d"
    if ace_to_ace:
        morto, last = "Qh Kh Ah Ts Td Tc Ks Kd Kc 4s 4d", "4c"
    else:
        morto, last = "Qh Kh Ts Td Tc Ks Kd Kc 9s 9d 9c", "4d"
    s = Scenario("burako", hands={0: hand0, 1: hand1}, stock=f"Jh 8c {last}",
                 mortos={0: morto})
    # Burako takes its morto only indirectly (RULES.md §7).
    s.draw("Jh").meld("Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh").discard("5c").morto(direct=False)
    s.pass_turn()
    s.draw(last)
    if ace_to_ace:
        s.layoff(0, "Qh Kh")
        assert s.state.melds[0][0].canastra == "royal"
        s.layoff(0, "Ah").meld("Ts Td Tc").meld("Ks Kd Kc")
        s.meld("4s 4d 4c")  # the last meld empties the hand: out, with no discard
        refused(s, "turn.hand_emptied", ("going out comes next",), "discard", "4c")
        s.go_out()
        assert s.state.melds[0][0].canastra == "ace_to_ace"
        table = (15 + 10 + 25 + 60 + 15) + 30 + 30 + 15  # A..K..A, tens, kings, fours
        bonus = 1000
    else:
        s.layoff(0, "Qh Kh").meld("Ts Td Tc").meld("Ks Kd Kc").meld("9s 9d 9c")
        s.discard("4d").go_out()  # out by the last discard
        assert s.state.melds[0][0].canastra == "royal"
        table = (15 + 10 + 25 + 60) + 30 + 30 + 30  # A..K, tens, kings, nines
        bonus = 500
    side0 = table + bonus + 100
    # RULES.md §9, burako: joker 50, ace 15, 8..K 10, 3..7 5.
    held1 = 50 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 5 + 5 + 10
    assert spec_points("burako", s.hand(1)) == held1 == 130
    side1 = -held1 - 100
    # The royal or ace-to-ace canastra paid as a clean one besides, or instead (RULES.md §6:
    # one class, one bonus).
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (side0 + 200, side1))
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (side0 - bonus + 200, side1))
    s.end_hand("went_out", (side0, side1))
    assert s.state.totals == (side0, side1)
    assert side0 == (1300 if ace_to_ace else 800)
