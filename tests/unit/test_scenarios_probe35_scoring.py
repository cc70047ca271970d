"""Probe 35, whole hands scored by hand from RULES.md §6-§9 (never read from the engine), each
also refused one reading off (`score.mismatch`):

- `classic`: seven queens are a clean canastra; the 2 laid on the set makes it dirty (100),
  the same 2 laid on the run instead leaves it clean (200). Relancinho and going out on top.
- `burako`: a set canastra made dirty by a 2 (10 on the table), gone out by the last meld after
  the indirect morto; the tatu in the opponent's hand is 50.
- `mega`: a run canastra with a joker in a gap (dirty, the joker 50 on the table) and seven
  aces that are no canastra (sets never are in `mega`).
- The last stock card: the player who draws the last card above the floor empties the hand by
  the discard and takes the morto indirectly; the next player cannot draw and the hand ends.
  The stock running out does not void the morto (RULES.md §7): it stands as the taker's hand,
  its cards are counted, and no morto penalty is paid.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import format_card
from tests.scenario import Scenario, refused

HAND1 = "Ac Ad 3c 5s 7s 9d Jc Kd 4s 6c 8d"  # 15 + 15 + 5 * 5 + 10 * 4 = 95, no wild


@pytest.mark.parametrize(("onto", "cls"), [("set", "dirty"), ("run", "clean")])
def test_classic_the_2_on_the_set_makes_it_dirty_on_the_run_leaves_it_clean(
    onto: str, cls: str
) -> None:
    s = Scenario("classic", hands={0: "Qh Qs Qd Qc Qh Qs 5c 6c 7c 2d 9s", 1: HAND1},
                 stock="Qd")
    s.draw("Qd").meld("Qh Qs Qd Qc Qh Qs Qd").meld("5c 6c 7c")
    assert s.state.melds[0][0].canastra == "clean"
    s.layoff(0 if onto == "set" else 1, "2d")
    assert s.state.melds[0][0].canastra == cls
    s.discard("9s").go_out()
    # Queens 70, the 2 10, 5-6-7 15: 95; relancinho 100 (eleven of twelve cards laid in one
    # turn), going out 50; the canastra 100 dirty or 200 clean.
    side0 = 95 + (100 if cls == "dirty" else 200) + 100 + 50
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (side0 + (100 if cls == "dirty" else -100), -95))
    s.end_hand("went_out", (side0, -95))
    assert s.state.totals == ((345, -95) if cls == "dirty" else (445, -95))


def test_burako_a_dirty_set_canastra_and_out_by_the_last_meld() -> None:
    hand0 = "Kh Ks Kd Kc Kh Ks 2c 9d 9c 9h 5s"
    morto = "Ah Ad Ac 5d 6d 7d Jh Js Jd 8c 8s"
    hand1 = "JK Ad 3c 5s 7s 9s Jc Kc 4s 6c Qd"  # 50 + 15 + 5 * 5 + 10 * 4 = 130
    s = Scenario("burako", hands={0: hand0, 1: hand1}, stock="Kd 4d 8d", mortos={0: morto})
    s.draw("Kd").meld("Kh Ks Kd Kc Kh Ks 2c").meld("9d 9c 9h").layoff(0, "Kd")
    assert s.state.melds[0][0].canastra == "dirty"
    s.discard("5s").morto(direct=False)
    s.pass_turn()
    s.draw("8d").meld("Ah Ad Ac").meld("5d 6d 7d").meld("Jh Js Jd").meld("8c 8s 8d")
    s.go_out()  # the hand emptied by melding: out, no discard needed after the morto
    # Seven kings 70 and the 2c 10, nines 30, aces 45, 5-6-7 15, jacks 30, eights 30: 230;
    # dirty 100, going out 100. Side 1: its hand and the morto it never took.
    side0 = 230 + 100 + 100
    side1 = -130 - 100
    refused(s, "score.mismatch", ("side 0", "recomputed 430"), "end_hand", "went_out",
            (side0 + 100, side1))
    refused(s, "score.mismatch", ("side 1", "recomputed -230"), "end_hand", "went_out",
            (side0, side1 + 40))  # the tatu at 10
    s.end_hand("went_out", (side0, side1))


def test_mega_a_joker_in_a_gap_and_seven_aces_with_no_bonus() -> None:
    hand0 = "5h 6h 7h 8h 9h JK Jh Ac Ad As 4c"
    morto = "Ah Ac Ad Qs Qd Qc 3d 4d 5d Kc Kh"
    hand1 = "JK 2d 3c 5s 7s 9s Jc Kc 4s 6c Qd"  # 50 + 10 + 5 * 5 + 10 * 4 = 125
    s = Scenario("mega", hands={0: hand0, 1: hand1}, stock="Ah 8c Ks", mortos={0: morto})
    s.draw("Ah").meld("5h 6h 7h 8h 9h JK Jh").meld("Ac Ad As Ah").discard("4c")
    assert s.state.melds[0][0].canastra == "dirty"  # the joker as the ten
    s.morto(direct=False)
    s.pass_turn()
    s.draw("Ks").layoff(1, "Ah Ac Ad").meld("Qs Qd Qc").meld("3d 4d 5d")
    assert len(s.state.melds[0][1].cards) == 7 and s.state.melds[0][1].canastra is None
    s.meld("Kc Kh Ks").go_out()
    # 5..9 35, the joker 50, Jh 10: 95; seven aces 105, queens 30, 3-4-5 15, kings 30: 275;
    # dirty 100 (the aces earn none), going out 100.
    side0 = 275 + 100 + 100
    side1 = -125 - 100
    refused(s, "score.mismatch", ("side 0", "recomputed 475"), "end_hand", "went_out",
            (side0 + 200, side1))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[0].scores[0].canastras == {"dirty": 1}


# -- the last stock card and an indirect morto never played -----------------------------------

OUT = "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh"  # a clean run 3..9 (45) and four jacks (40)
MORTO = "Ac Ad 5d 6d 8s Qc 9s Kc 7d 3d 6s"  # 15 + 15 + 5 + 5 + 10 + 10 + 10 + 10 + 5 + 5 + 5


@pytest.mark.parametrize(("name", "floor", "extra"), [
    ("mega", 2, 0), ("burraco", 0, 0), ("biriba", 0, 100), ("burako", 0, 0),
])
def test_the_last_stock_card_an_indirect_morto_stands_at_the_stock_out(
    name: str, floor: int, extra: int
) -> None:
    # Who draws the last card above the floor: the seat to move after the stock's parity.
    probe = Scenario(name)
    taker = (len(probe.state.stock) - floor - 1) % 2
    other = 1 - taker
    s = Scenario(name, hands={taker: OUT, other: HAND1}, mortos={taker: MORTO})
    while len(s.state.stock) > floor + 1:
        s.pass_turn()
    assert s.turn == taker
    s.draw()  # the last card above the floor
    drawn = s.rep._t.drawn
    assert drawn is not None and len(s.state.stock) == floor
    s.meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh")
    s.discard(format_card(drawn)).morto(direct=False)
    refused(s, "stock.floor_reached", (f"floor {floor}",), "draw", "4c")
    # The taker's side: run 45, jacks 40, clean 200, the biriba relancinho (eleven of twelve
    # cards laid in one turn), less the standing morto (95) as cards in hand.
    side_t = 45 + 40 + 200 + extra - 95
    side_o = -95 - 100
    scores = [0, 0]
    scores[taker], scores[other] = side_t, side_o
    voided = list(scores)
    voided[taker] = side_t + 95 - 100  # the morto read as voided by the stock-out
    refused(s, "score.mismatch", (f"side {taker}",), "end_hand", "stock_out", tuple(voided))
    s.end_hand("stock_out", tuple(scores))
    sc = s.state.results[0].scores
    assert (sc[taker].morto_penalty, sc[other].morto_penalty) == (0, 100)
