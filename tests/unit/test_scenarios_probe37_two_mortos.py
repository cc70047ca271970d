"""Probe 37, both sides take their mortos indirectly in one hand (RULES.md §7), in every
11-card morto preset (`biriba`, `bossa-nova`, `burraco`, `mega`, `burako`):

- Seat 0 lays its whole hand (a clean run of hearts and four kings) and throws its last card:
  the morto, indirectly. Seat 1 does the same with spades and queens.
- Seat 0 plays its morto (its own next turn) and goes out by melding it all.
- If seat 1 has not played since it took its morto, the opponent's going out voids it: side 1
  pays the morto and its untouched cards are not counted. If seat 1 had a turn in between,
  its morto stands as its hand: the cards count, no morto is paid.

Relancinho (RULES.md §7, `biriba`, `bossa-nova`): both seats laid their whole hands in one
turn with a final discard, so each side notes +100, and side 1 keeps it though its morto is
voided ("logo anotados"). Every number below is RULES.md §9 worked out by hand.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

HAND0 = "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc 4c"
HAND1 = "3s 4s 5s 6s 7s 8s 9s Qc Qd Qh 4d"
MORTO0 = "Jc Jd Js 5c 5d 5s 8c 8d 8s Tc Td"

GOING_OUT = {"biriba": 50, "bossa-nova": 50, "burraco": 100, "mega": 100, "burako": 100}
RELANCINHO = {"biriba": 100, "bossa-nova": 100, "burraco": 0, "mega": 0, "burako": 0}

# Side 0's table: run 3h..9h 5 x 5 + 10 + 10 = 45; four kings 40; then from the morto three
# jacks 30, three fives 15, three eights 30, three tens 30: 190.
TABLE0 = 45 + 40 + 30 + 15 + 30 + 30
# Side 1's table: run 3s..9s 45, four queens 40.
TABLE1 = 45 + 40


def _both_mortos(name: str, stock: str) -> Scenario:
    s = Scenario(name, hands={0: HAND0, 1: HAND1}, mortos={0: MORTO0}, stock=stock)
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Ks Kd Kc Kh").discard("4c")
    s.morto(direct=False)
    s.draw("Qs").meld("3s 4s 5s 6s 7s 8s 9s").meld("Qc Qd Qh Qs").discard("4d")
    s.morto(direct=False)
    assert s.state.morto_pending == (None, 1)  # seat 0's own turn has begun
    return s


def _out(s: Scenario) -> None:
    s.draw("Th").meld("Jc Jd Js").meld("5c 5d 5s").meld("8c 8d 8s").meld("Tc Td Th")
    s.go_out()


@pytest.mark.parametrize("name", list(GOING_OUT))
def test_the_opponent_out_before_the_takers_next_turn_voids_its_morto(name: str) -> None:
    s = _both_mortos(name, "Kh Qs Th")
    _out(s)
    side0 = TABLE0 + 200 + GOING_OUT[name] + RELANCINHO[name]
    side1 = TABLE1 + 200 + RELANCINHO[name] - 100  # the morto voided, its cards not counted
    held1 = spec_points(name, s.hand(1))
    refused(s, "score.mismatch", ("side 1", f"recomputed {side1}"), "end_hand", "went_out",
            (side0, side1 + 100 - held1))  # as if its morto stood
    s.end_hand("went_out", (side0, side1))
    sc1 = s.state.results[0].scores[1]
    assert (sc1.morto_penalty, sc1.hand_penalty, sc1.relancinho) == (100, 0, RELANCINHO[name])


@pytest.mark.parametrize("name", list(GOING_OUT))
def test_a_morto_its_taker_has_played_stands_when_the_opponent_goes_out(name: str) -> None:
    s = _both_mortos(name, "Kh Qs 9c 9d Th")
    s.draw("9c").discard("9c")
    s.draw("9d").discard("9d")  # seat 1's turn: its morto is played
    assert s.state.morto_pending == (None, None)
    _out(s)
    held1 = spec_points(name, s.hand(1))
    side0 = TABLE0 + 200 + GOING_OUT[name] + RELANCINHO[name]
    side1 = TABLE1 + 200 + RELANCINHO[name] - held1  # its morto is its hand, no penalty
    refused(s, "score.mismatch", ("side 1", f"recomputed {side1}"), "end_hand", "went_out",
            (side0, TABLE1 + 200 + RELANCINHO[name] - 100))  # as if voided
    s.end_hand("went_out", (side0, side1))
    sc1 = s.state.results[0].scores[1]
    assert (sc1.morto_penalty, sc1.hand_penalty) == (0, held1)


@pytest.mark.parametrize("name", list(GOING_OUT))
def test_a_side_takes_its_morto_once_the_second_emptying_goes_out(name: str) -> None:
    s = _both_mortos(name, "Kh Qs Th")
    s.draw("Th").meld("Jc Jd Js").meld("5c 5d 5s").meld("8c 8d 8s").meld("Tc Td Th")
    refused(s, "morto.not_available", ("already took its morto",), "morto", True)
    s.go_out()
    assert s.state.phase == "out" and s.state.went_out == 0
