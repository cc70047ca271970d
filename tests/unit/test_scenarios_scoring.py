"""Outside-checker scenarios: whole hands played move by move, scores recomputed by hand.

Every expected number below comes from RULES.md §9 (its card and bonus tables, copied into
``tests/spec_points.py`` and ``_BONUS`` here, never from the engine's presets), worked out in
the comments.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from tests.scenario import Scenario
from tests.spec_points import spec_points

# RULES.md §9, bonus table: going out, relancinho, morto not taken ("–" is 0).
_BONUS = {
    "classic": (50, 100, 0),
    "biriba": (50, 100, 100),
    "bossa-nova": (50, 100, 100),
    "thirteen": (100, 0, 100),
    "thirteen-quick": (100, 0, 100),
    "burraco": (100, 0, 100),
    "mega": (100, 0, 100),
    "burako": (100, 0, 100),
}
MORTO_PRESETS = ("biriba", "bossa-nova", "thirteen", "burraco", "mega", "burako")


# Seat 0's first hand: a clean seven-card run (3h..9h: 5 x 5 + 2 x 10 = 45 points) and a set of
# jacks; the drawn Kd is thrown, so the hand empties by a discard (the indirect morto).
RUN = "3h 4h 5h 6h 7h 8h 9h"
JACKS = {"thirteen": "Jc Jd Js Jh Jc Jd"}  # 13 cards: six jacks (60)
JACKS_11 = "Jc Jd Js Jh"  # 11 cards: four jacks (40)
# The morto: tens, kings and queens (no 2, no joker: nothing wild), 110 points.
MORTO = "Th Ts Td Tc Kh Ks Kc Qh Qs Qd Qc"


def _first_turn(name: str, stock: str) -> Scenario:
    jacks = JACKS.get(name, JACKS_11)
    s = Scenario(name, hands={0: f"{RUN} {jacks}"}, stock=stock, mortos={0: MORTO})
    s.draw().meld(RUN).meld(jacks).discard("Kd")
    assert s.state.phase == "emptied"
    s.morto(direct=False)
    return s


@pytest.mark.parametrize("name", MORTO_PRESETS)
@pytest.mark.parametrize("by", ["discard", "meld"])
def test_a_whole_morto_hand_scores_exactly_as_rules_md_adds_it(name: str, by: str) -> None:
    # Seat 0 draws Kd, lays everything else and throws Kd (indirect morto). Seat 1 draws and
    # throws 4c. Seat 0 plays the morto: by a discard (draws 8c, throws it) or by melding
    # (draws Kd, four kings: no discard).
    last = "8c" if by == "discard" else "Kd"
    s = _first_turn(name, f"Kd 4c {last}")
    s.draw().discard("4c")
    s.draw().meld("Th Ts Td Tc").meld("Qh Qs Qd Qc")
    if by == "discard":
        s.meld("Kh Ks Kc").discard("8c")
    else:
        s.meld("Kh Ks Kc Kd")
    assert s.state.phase == "emptied"
    s.go_out().end_hand("went_out")
    side0, side1 = s.state.results[0].scores
    jacks = 60 if name == "thirteen" else 40
    kings = 30 if by == "discard" else 40
    going_out, relancinho, morto_not_taken = _BONUS[name]
    assert side0.table_points == 45 + jacks + 40 + kings + 40
    assert side0.canastras == {"clean": 1} and side0.canastra_bonus == 200
    assert side0.going_out == going_out
    # Seat 0 laid the whole first hand in one turn with a final discard: a relancinho where
    # the preset has one (RULES.md §7), noted when that emptying took the morto.
    assert side0.relancinho == relancinho
    assert (side0.hand_penalty, side0.morto_penalty) == (0, 0)
    assert side0.total == 45 + jacks + 40 + kings + 40 + 200 + going_out + relancinho
    assert side1.hand_penalty == spec_points(name, s.hand(1))
    assert side1.morto_penalty == morto_not_taken
    assert side1.total == -spec_points(name, s.hand(1)) - morto_not_taken
    assert s.state.totals == (side0.total, side1.total)


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_a_recorded_score_one_point_off_is_refused_at_the_hand_end(name: str) -> None:
    s = _first_turn(name, "Kd 4c Kd")
    s.draw().discard("4c")
    s.draw().meld("Th Ts Td Tc").meld("Qh Qs Qd Qc").meld("Kh Ks Kc Kd").go_out()
    jacks = 60 if name == "thirteen" else 40
    going_out, relancinho, morto_not_taken = _BONUS[name]
    right = (45 + jacks + 120 + 200 + going_out + relancinho,
             -spec_points(name, s.hand(1)) - morto_not_taken)
    end_seq = s.rep.seq + 1
    with s.illegal("score.mismatch"):
        s.end_hand("went_out", (right[0] + 1, right[1]))
    assert s.last_error.seq == end_seq
    s.end_hand("went_out", right)


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_a_morto_taken_indirectly_that_stands_counts_as_cards_left_in_hand(name: str) -> None:
    # Seat 0 takes the morto by a discard, then everybody only draws and throws the card drawn
    # until the stock reaches its floor (0; 2 in mega) and the hand ends there. Seat 0 has
    # played again, so the morto stands (RULES.md §7) and is seat 0's hand.
    s = _first_turn(name, "Kd")
    t = s.rep._t
    while len(t.stock) > s.rules.stock_floor:
        s.pass_turn()
    s.end_hand("stock_out")
    side0, side1 = s.state.results[0].scores
    _, relancinho, morto_not_taken = _BONUS[name]
    jacks = 60 if name == "thirteen" else 40
    assert sorted(s.hand(0)) == sorted(parse_cards(MORTO))
    assert side0.hand_penalty == spec_points(name, s.hand(0)) == 110
    assert (side0.morto_penalty, side0.going_out) == (0, 0)
    assert side0.total == 45 + jacks + 200 + relancinho - 110
    assert side1.total == -spec_points(name, s.hand(1)) - morto_not_taken


def test_classic_three_players_each_side_is_scored_on_its_own() -> None:
    hands = {0: "7h 7s 7d 8c 8d 8s 9h 9s 9d Kc Kd", 1: "5c 6c 7c 3d 3s Jh Qh Qs 4d 5d Ts",
             2: "Ah Ac 4s 6s 9c Tc Jc Jd Th 6h 4h"}
    s = Scenario("classic", 3, hands=hands, stock="4c Qd Ad 9c 5h 5s 8h")
    s.draw("4c").meld("7h 7s 7d").meld("8c 8d 8s").meld("9h 9s 9d").discard("4c")
    s.draw("Qd").meld("Qh Qs Qd").discard("Ts")  # seat 1 lays three queens
    s.draw("Ad").discard("Ad")  # seat 2
    s.draw("9c").layoff(2, "9c").discard("Kc")
    s.pass_turn().pass_turn()  # seats 1 and 2 throw 5h and 5s
    s.draw("8h").layoff(1, "8h").discard("Kd")  # seat 0 goes out by a discard
    s.go_out().end_hand()
    sc = s.state.results[0].scores
    assert len(sc) == 3 and s.state.n_sides == 3
    # Seat 0: 7s 15 + 8s 40 + 9s 40 on the table, going out 50; no relancinho (it laid cards
    # in an earlier turn); nothing in hand.
    assert (sc[0].table_points, sc[0].going_out, sc[0].relancinho) == (95, 50, 0)
    assert sc[0].total == 145
    assert sc[1].table_points == 30 and sc[1].going_out == 0
    assert sc[1].total == 30 - spec_points("classic", s.hand(1))
    assert sc[1].hand_penalty == spec_points("classic", parse_cards("5c 6c 7c 3d 3s Jh 4d 5d"))
    assert sc[2].total == -spec_points("classic", s.hand(2))
    assert sc[0].morto_penalty == sc[1].morto_penalty == sc[2].morto_penalty == 0
