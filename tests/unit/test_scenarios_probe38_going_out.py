"""Probe 38, going out with the last card melded or discarded, and whose turn it is after the
morto (RULES.md §4, §7, §9), in every preset:

- `classic` (no morto): the whole hand down in the first turn goes out at once, the last card
  laid off (the run grows to 3..10) or thrown; relancinho and the going-out 50 both ways.
- The morto presets: seat 0 lays its hand and throws the Th, taking the morto indirectly: the
  turn passes to seat 1 (seat 0 may not move). From its next turn seat 0 lays the morto and
  goes out, the last card laid off (Qh onto the queens) or thrown (9c).
- Taking the morto directly (the Th laid off on the run) keeps the turn with the taker, who
  may not draw; `burako` refuses the direct morto (`morto.indirect_only`).

Scores are RULES.md §9 by hand: a card laid counts for the side, a card thrown counts nothing.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.events import HandStarted
from tests.scenario import Scenario, build_deal, refused
from tests.unit.first_turns import HAND0, HAND0_13, HAND1, MORTO0, first_turn, thirteen

MORTO_PRESETS = ("biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
                 "burako")
GOING_OUT = {"biriba": 50, "bossa-nova": 50, "thirteen": 100, "thirteen-quick": 100,
             "burraco": 100, "mega": 100, "burako": 100}
RELANCINHO = {"biriba": 100, "bossa-nova": 100}  # the classic family's morto presets only


# Side 0's first turn on the table: run 3..9 45 and four jacks 40 = 85; in `thirteen` the
# run 45, three jacks 30, three fours 15 = 90.
def first_table(name: str) -> int:
    return 90 if thirteen(name) else 85


# -- classic: out in the first turn ------------------------------------------------------------

@pytest.mark.parametrize("last", ["laid", "thrown"])
def test_classic_goes_out_at_once_by_the_last_card_laid_or_thrown(last: str) -> None:
    s = Scenario("classic", hands={0: HAND0, 1: HAND1}, stock="Jh")
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh")
    if last == "laid":
        s.layoff(0, "Th")
    else:
        s.discard("Th")
    refused(s, "morto.not_available", ("no morto",), "morto", last == "laid")
    s.go_out()
    # laid: run 3..10 55 + jacks 40 = 95; thrown: 45 + 40 = 85. Clean 200, relancinho 100,
    # going out 50. Side 1: its hand, 95; classic has no morto to pay.
    side0 = (95 if last == "laid" else 85) + 200 + 100 + 50
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (side0 - 100, -95))
    s.end_hand("went_out", (side0, -95))
    assert s.state.results[0].scores[0].relancinho == 100


# -- the morto presets: the indirect morto passes the turn ---------------------------------------

@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_the_indirect_morto_ends_the_takers_turn(name: str) -> None:
    s = first_turn(name, "Jh 8c" if not thirteen(name) else "4c 8c")
    s.discard("Th")
    refused(s, "go_out.morto_first", ("morto",), "go_out")
    refused(s, "morto.wrong_kind", ("discarding",), "morto", True)
    s.morto(direct=False)
    assert s.turn == 1
    assert sorted(s.hand(0)) == sorted(parse_cards(MORTO0))  # the morto is the hand now
    refused(s, "turn.not_your_turn", ("seat 1",), "draw", "8c", seat=0)
    s.draw("8c", seat=1)


@pytest.mark.parametrize("name", MORTO_PRESETS)
@pytest.mark.parametrize("last", ["laid", "thrown"])
def test_out_from_the_morto_by_the_last_card_laid_or_thrown(name: str, last: str) -> None:
    t = thirteen(name)
    x = "Qh" if last == "laid" else "9c"
    s = first_turn(name, f"{'4c' if t else 'Jh'} 8c {x}")
    s.discard("Th").morto(direct=False)
    s.pass_turn()  # seat 1 draws the 8c and throws it
    s.draw(x).meld("Ks Kd Kh Kc").meld("Qs Qd Qc").meld("As Ad Ac Ah")
    if last == "laid":
        s.layoff(s.state.melds[0][-2].id, "Qh")
    else:
        s.discard("9c")
    refused(s, "morto.not_available", ("already took its morto",), "morto", last == "laid")
    s.go_out()
    # The morto laid: kings 40 + queens 30 (40 with the Qh) + aces 60 = 130 (140).
    morto_table = 140 if last == "laid" else 130
    side0 = first_table(name) + morto_table + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)
    side1 = -(105 if t else 95) - 100  # its hand, and its morto never taken
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (side0 + (-10 if last == "laid" else 10), side1))
    refused(s, "score.mismatch", ("side 1",), "end_hand", "went_out", (side0, side1 + 100))
    s.end_hand("went_out", (side0, side1))
    sc = s.state.results[0].scores
    assert (sc[0].hand_penalty, sc[0].morto_penalty, sc[1].morto_penalty) == (0, 0, 100)


# -- the direct morto keeps the turn --------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in MORTO_PRESETS if n != "burako"])
def test_the_direct_morto_keeps_the_turn_without_a_draw(name: str) -> None:
    s = first_turn(name, "4c" if thirteen(name) else "Jh")
    s.layoff(0, "Th")  # the run becomes 3..10: the hand is empty, no discard
    refused(s, "morto.wrong_kind", ("melding",), "morto", False)
    s.morto(direct=True)
    assert s.turn == 0 and len(s.hand(0)) == 11
    refused(s, "turn.already_drew", ("already drew",), "draw")
    refused(s, "turn.already_drew", ("already drew",), "take_pile")
    s.meld("Ks Kd Kh Kc").discard("Qs")
    assert s.turn == 1


def test_burako_refuses_the_direct_morto_at_the_emptying_lay_off() -> None:
    s = first_turn("burako", "Jh")
    refused(s, "morto.indirect_only", ("indirect",), "layoff", 0, "Th")
    s.discard("Th").morto(direct=False)
    assert s.turn == 1


# -- the stock runs out with the morto standing in the taker's hand ------------------------------

FREE_MORTO = ("biriba", "bossa-nova", "burraco", "mega", "burako")
FLOOR = {"mega": 2}


@pytest.mark.parametrize("name", FREE_MORTO)
def test_a_stock_out_after_the_indirect_morto(name: str) -> None:
    s = first_turn(name, "Jh")
    s.discard("Th").morto(direct=False)
    floor = FLOOR.get(name, 0)
    while len(s.state.stock) > floor + 1:
        s.pass_turn()
    unit = "tile" if s.rules.rendering == "tiles" else "card"  # Burako's tiles (probe 41b)
    many = f"{floor + 1} {unit}{'s' if floor else ''}"  # "1 card", "3 tiles" (probe 41b)
    refused(s, "hand.not_over", (f"holds {many} (floor",), "end_hand", "stock_out")
    s.pass_turn()
    refused(s, "stock.floor_reached", (f"floor {floor}",), "draw", "4c")
    # Side 0: run 45 + jacks 40, clean 200, the relancinho where there is one; no going out.
    # The morto stands as seat 0's hand: kings 40 + queens 30 + aces 60 = 130.
    side0 = 85 + 200 + RELANCINHO.get(name, 0) - 130
    side1 = -95 - 100
    refused(s, "score.mismatch", ("side 0",), "end_hand", "stock_out", (side0 + 130 - 100, side1))
    s.end_hand("stock_out", (side0, side1))
    sc = s.state.results[0].scores
    assert (sc[0].going_out, sc[0].hand_penalty, sc[0].morto_penalty) == (0, 130, 0)


# -- the hand that reaches the target ends the match ---------------------------------------------

def next_deal(s: Scenario) -> HandStarted:
    deal = build_deal(s.rules, s.players, {}, "", {}, None, hand_no=1)
    return msgspec.structs.replace(deal, seq=s.rep.seq + 1)


TARGET = {"biriba": 1500, "bossa-nova": 1500, "thirteen": 2005, "thirteen-quick": 1005,
          "burraco": 2005, "mega": 3000, "burako": 3000}


@pytest.mark.parametrize("name", MORTO_PRESETS)
@pytest.mark.parametrize("short", [0, 1])
def test_going_out_to_the_target_ends_the_match(name: str, short: int) -> None:
    t = thirteen(name)
    side0 = first_table(name) + 140 + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)
    side1 = -(105 if t else 95) - 100
    s = first_turn(name, f"{'4c' if t else 'Jh'} 8c Qh", (TARGET[name] - side0 - short, 500))
    s.discard("Th").morto(direct=False)
    s.pass_turn()
    s.draw("Qh").meld("Ks Kd Kh Kc").meld("Qs Qd Qc Qh").meld("As Ad Ac Ah").go_out()
    s.end_hand("went_out", (side0, side1))
    totals = (TARGET[name] - short, 500 + side1)
    if short:
        refused(s, "match.not_over", ("another hand",), "end_match", totals=totals)
        return
    refused(s, "match.decided", ("side 0 won",), "push", next_deal(s))
    refused(s, "score.mismatch", ("recomputed",), "end_match", totals=(totals[0] + 1, totals[1]))
    refused(s, "match.wrong_winner", ("side 0 won",), "end_match", totals=totals, winner=1)
    s.end_match(totals=totals, winner=0)
    assert s.state.phase == "over"


# -- wilds left in hand cost what the preset's card table says -----------------------------------

# 7s 5 + 9d 10 + Jc 10 + Kc 10 + 4s 5 + 6c 5 + 8d 10 = 55, beside four wilds.
WILDS1 = {"biriba": "2c 2d 2h 2s", "bossa-nova": "2c 2d 2h 2s"}
HELD1 = {  # RULES.md §9 by hand: the four wilds, 55, and in thirteen the 3s 5s (10)
    "biriba": 4 * 10 + 55, "bossa-nova": 4 * 10 + 55,
    "thirteen": 2 * 10 + 2 * 50 + 55 + 10, "thirteen-quick": 2 * 10 + 2 * 50 + 55 + 10,
    "burraco": 2 * 20 + 2 * 30 + 55, "mega": 2 * 10 + 2 * 50 + 55, "burako": 2 * 10 + 2 * 50 + 55,
}


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_the_loser_pays_its_wilds_at_the_presets_values(name: str) -> None:
    t = thirteen(name)
    hand1 = WILDS1.get(name, "2c 2d JK JK") + " 7s 9d Jc Kc 4s 6c 8d" + (" 3s 5s" if t else "")
    s = Scenario(name, hands={0: HAND0_13 if t else HAND0, 1: hand1}, mortos={0: MORTO0},
                 stock=f"{'4c' if t else 'Jh'} 8c 9c")
    s.draw("4c" if t else "Jh").meld("3h 4h 5h 6h 7h 8h 9h")
    if t:
        s.meld("Js Jd Jc").meld("4s 4d 4c")
    else:
        s.meld("Js Jd Jc Jh")
    s.discard("Th").morto(direct=False)
    s.pass_turn()
    s.draw("9c").meld("Ks Kd Kh Kc").meld("Qs Qd Qc").meld("As Ad Ac Ah").discard("9c")
    s.go_out()
    side0 = first_table(name) + 130 + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)
    side1 = -HELD1[name] - 100
    refused(s, "score.mismatch", ("side 1",), "end_hand", "went_out", (side0, side1 - 10))
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[0].scores[1].hand_penalty == HELD1[name]
