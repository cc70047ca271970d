"""Probe 34, the match (RULES.md §10) played out, not carried in: both sides crossing the
target in the one hand, the side that went out losing it, and the hand after a tie.

- "It ends after the hand in which a side reaches target_score ... Highest total wins; a tie
  plays another hand": whoever went out, the highest total at the target wins; equal highest
  totals at the target play on.
- The hand after a tie decides only as every hand does: a side at the target with the unique
  highest total wins; when that hand leaves both sides below the target, nobody reached it in
  that hand and the match plays on (docs/rules.md, "The match").

Every expected number is worked out by hand from RULES.md §9's tables.
"""

from __future__ import annotations

import msgspec
import pytest

from tests.scenario import Scenario, build_deal, carried_in, refused
from tests.spec_points import spec_points

TARGET = 1500  # classic (RULES.md §10)


def next_deal(s: Scenario) -> None:
    deal = build_deal(s.rules, s.players, {}, "", {}, None, hand_no=1)
    s.push(msgspec.structs.replace(deal, seq=s.rep.seq + 1))


# Seat 0: a clean run of hearts and three jacks; seat 1: a clean run of spades and three kings.
HAND0 = "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Qc"
HAND1 = "3s 4s 5s 6s 7s 8s 9s Ks Kh Kd 4c"
# RULES.md §9, classic: 3..7 are 5, 8..K 10.
RUN = 5 * 5 + 2 * 10  # 3..9 of a suit: 45
SIDE0 = RUN + 40 + 200 + 50 + 100  # run, four jacks, clean canastra, going out, relancinho: 435
SIDE1 = RUN + 30 + 200 - 5  # run, three kings, clean canastra, less the 4c kept: 270


def crossing_hand(totals: tuple[int, int]) -> Scenario:
    """Both sides vulnerable (at least 750): seat 1 opens with 75 (its run and three kings)
    and keeps the 4c; seat 0 then lays its whole hand in one turn (85 points of opening),
    throws the Qc and goes out."""
    s = carried_in(Scenario("classic", hands={0: HAND0, 1: HAND1}, stock="Qd Kc Jh"), totals)
    s.draw("Qd").discard("Qd")
    s.draw("Kc").meld("3s 4s 5s 6s 7s 8s 9s").meld("Ks Kh Kd").discard("Kc")
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("Qc").go_out()
    return s


def test_the_hand_scores_as_rules_md_adds_it() -> None:
    s = crossing_hand((0, 0))
    refused(s, "score.mismatch", ("side 1",), "end_hand", "went_out", (SIDE0, SIDE1 + 5))
    s.end_hand("went_out", (SIDE0, SIDE1))
    sc = s.state.results[0].scores
    assert (sc[0].going_out, sc[0].relancinho, sc[0].canastra_bonus) == (50, 100, 200)
    assert (sc[1].going_out, sc[1].hand_penalty) == (0, spec_points("classic", "4c"))


@pytest.mark.parametrize(("totals", "after", "winner"), [
    ((1070, 1300), (1505, 1570), 1),  # the side that did not go out has the higher total
    ((1100, 1260), (1535, 1530), 0),  # the side that went out, by five points
])
def test_both_sides_cross_the_target_in_one_hand_the_highest_wins(
    totals: tuple[int, int], after: tuple[int, int], winner: int
) -> None:
    s = crossing_hand(totals)
    refused(s, "match.not_over", ("phase 'out'",), "end_match")
    s.end_hand("went_out", (SIDE0, SIDE1))
    assert s.state.totals == after
    assert s.state.phase == "decided" and s.state.winner == winner
    refused(s, "match.wrong_winner", (f"side {winner} won",), "end_match", winner=1 - winner)
    refused(s, "score.mismatch", ("recomputed",), "end_match", totals=(after[1], after[0]))
    s.end_match(totals=after, winner=winner)
    assert s.state.phase == "over"


def test_both_sides_tied_at_the_target_after_one_hand_play_another() -> None:
    # 1100 + 435 = 1535 = 1265 + 270: a tie at the target, whoever went out.
    s = crossing_hand((1100, 1265))
    s.end_hand("went_out", (SIDE0, SIDE1))
    assert s.state.totals == (1535, 1535)
    assert s.state.phase == "between" and s.state.winner is None
    refused(s, "match.not_over", ("another hand",), "end_match")
    next_deal(s)
    assert s.state.hand == 1 and s.turn == 1  # dealt by seat 0, seat 1 plays first


# -- the hand after a tie ------------------------------------------------------------------

# Nobody lays a card: each side loses its eleven cards at the stock-out (RULES.md §8, §9).
STILL0 = "3c 4d 5s 6c 7d 8s 9c Td Js Qc Kd"  # 25 + 60 = 85
STILL1 = "Ac Ad As 3s 4c 5d 6s 7c 8d 9s Tc"  # 45 + 25 + 30 = 100
LOSS0, LOSS1 = 85, 100


def stock_out_hand(totals: tuple[int, int]) -> Scenario:
    s = carried_in(Scenario("classic", hands={0: STILL0, 1: STILL1}), totals)
    while s.state.stock:
        s.pass_turn()
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")
    s.end_hand("stock_out", (-LOSS0, -LOSS1))
    return s


def test_the_hands_of_the_stock_out_are_what_rules_md_counts() -> None:
    assert (spec_points("classic", STILL0), spec_points("classic", STILL1)) == (LOSS0, LOSS1)


@pytest.mark.parametrize(("totals", "after", "winner"), [
    ((1500, 1500), (1415, 1400), None),  # both fall below the target: nobody reached it
    ((1600, 1600), (1515, 1500), 0),  # both still at the target: the higher wins
    ((1580, 1580), (1495, 1480), None),  # both below again
    ((1590, 1590), (1505, 1490), 0),  # only side 0 still at the target
])
def test_the_hand_after_a_tie_decides_only_at_the_target(
    totals: tuple[int, int], after: tuple[int, int], winner: int | None
) -> None:
    assert totals[0] == totals[1] >= TARGET  # a tie at the target: the match went on
    s = stock_out_hand(totals)
    assert s.state.totals == after
    assert s.state.winner == winner
    if winner is None:
        assert s.state.phase == "between"
        refused(s, "match.not_over", (f"target {TARGET}", "another hand"), "end_match")
        next_deal(s)
        assert s.state.hand == 1
    else:
        assert s.state.phase == "decided"
        refused(s, "match.wrong_winner", (f"side {winner} won",), "end_match", winner=1)
        s.end_match(totals=after, winner=winner)
