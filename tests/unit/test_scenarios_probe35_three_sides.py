"""Probe 35, the match end with three sides (RULES.md §10: "Highest total wins; a tie plays
another hand"), `classic` with three players, target 1500.

The match is carried in with the two highest totals tied (so it is undecided) and the hand ends
at a stock-out with nobody laying a card: each side loses its hand (RULES.md §9, classic: ace
15, 8..K 10, 3..7 5). Whether the match ends depends only on the highest totals afterwards:

- sides 0 and 1 tied at the top, at the target: another hand, though side 2 is below them;
- side 0 alone highest at the target: side 0 wins, though side 1 is at the target too.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, carried_in, refused

HANDS = {0: "3c 4d 5s 6c 7d 8s 9c Td Js Qc Kd",  # 25 + 60 = 85
         1: "Ac Ad As 3s 4c 5d 6s 7c 8d 9s Tc",  # 45 + 25 + 30 = 100
         2: "Ah Ac 9h Th Jh Qh Kh 8c Qd Kc Jd"}  # 30 + 90 = 120
LOSS = (85, 100, 120)


def stock_out(totals: tuple[int, int, int]) -> Scenario:
    s = carried_in(Scenario("classic", 3, hands=HANDS), totals)
    while s.state.stock:
        s.pass_turn()
    refused(s, "score.mismatch", ("side 2",), "end_hand", "stock_out", (-85, -100, -90))
    s.end_hand("stock_out", (-85, -100, -120))
    return s


@pytest.mark.parametrize(("totals", "after", "winner"), [
    ((1600, 1615, 1615), (1515, 1515, 1495), None),  # 0 and 1 tied at the top
    ((1600, 1600, 1590), (1515, 1500, 1470), 0),  # 0 alone highest; 1 at the target too
    ((1615, 1640, 1640), (1530, 1540, 1520), 1),  # the smaller loss breaks the carried tie
])
def test_three_sides_the_highest_total_wins_a_tie_at_the_top_plays_on(
    totals: tuple[int, int, int], after: tuple[int, int, int], winner: int | None
) -> None:
    assert tuple(t - loss for t, loss in zip(totals, LOSS, strict=True)) == after
    s = stock_out(totals)
    assert s.state.totals == after and s.state.winner == winner
    if winner is None:
        assert s.state.phase == "between"
        refused(s, "match.not_over", ("another hand",), "end_match")
        return
    assert s.state.phase == "decided"
    refused(s, "match.wrong_winner", (f"side {winner} won",), "end_match",
            winner=(winner + 1) % 3)
    s.end_match(totals=after, winner=winner)
