"""Probe 38, partnerships of 4 and 6 players (RULES.md §2, §7, §9): partners sit on alternate
seats, lay off on each other's melds (never the opponents'), take the side's one morto once, and
are scored as one side, every partner's hand counted.

- 4 players, every morto preset: seat 0 lays its hand and throws its last card (the morto,
  indirectly); the turn passes to seat 1, an opponent. Seat 2, the partner, then lays its whole
  hand and goes out on the canastra seat 0 laid. The partner's going out does not void seat 0's
  morto: it stands as seat 0's hand and its cards count against the side.
- 6 players (`classic`): three partners build one set of jacks over a round, and seat 0 goes
  out on the next; both partners' hands count against side 0, all three opponents' against
  side 1.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

MORTO_PRESETS = ("biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
                 "burako")
GOING_OUT = {"biriba": 50, "bossa-nova": 50, "thirteen": 100, "thirteen-quick": 100,
             "burraco": 100, "mega": 100, "burako": 100}
# The relancinho is per player: seat 0 (by its morto) and seat 2 (by going out) both laid the
# whole hand in one turn.
RELANCINHO = {"biriba": 200, "bossa-nova": 200}

MORTO0 = "Ac Ad 3c 5c 7s 9d Jc Kc 4s 6d 8d"  # 15+15+5+5+5+10+10+10+5+5+10 = 95


def hands(t13: bool) -> dict[int, str]:
    if t13:
        return {0: "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc Th 4s 4d",
                1: "Ah Ad 3c 3d 7s 7d Tc Td 8s 8c 6d 3s 7c",  # 95 + 5 + 5 = 105
                2: "Qh Qs Qd Jc Jd Js Jh 5c 5d 5s 9c 9d 6c",
                3: "As Ac 4h 4c 6s 6h 9h Ts 8h 8d 3h 5h 6c"}  # 95 + 5 + 5 = 105
    return {0: "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc Th",
            1: "Ah Ad 3c 3d 7s 7d Tc Td 8s 8c 6d",  # 15+15+5+5+5+5+10+10+10+10+5 = 95
            2: "Qh Qs Qd Jc Jd Js Jh 5c 5d 5s 6c",
            3: "As Ac 4h 4c 6s 6h 9h Ts 8h 8d 3h"}  # 15+15+5+5+5+5+10+10+10+10+5 = 95


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_four_players_the_partner_goes_out_and_the_morto_stands(name: str) -> None:
    t13 = name.startswith("thirteen")
    s = Scenario(name, 4, hands=hands(t13), mortos={0: MORTO0},
                 stock=f"{'4c' if t13 else 'Kh'} 7h {'9s' if t13 else 'Qc'}")
    s.draw().meld("3h 4h 5h 6h 7h 8h 9h")
    if t13:
        s.meld("Ks Kd Kc").meld("4s 4d 4c")
    else:
        s.meld("Ks Kd Kc Kh")
    s.discard("Th").morto(direct=False)
    assert s.turn == 1  # an opponent plays next, not the partner
    s.draw("7h")
    refused(s, "layoff.no_such_meld", ("own melds",), "layoff", 0, "7h")  # side 0's run
    s.discard("7h")
    s.draw()  # seat 2, the partner
    if t13:
        s.meld("Qh Qs Qd").meld("Jc Jd Js Jh").meld("5c 5d 5s").meld("9c 9d 9s")
    else:
        s.meld("Qh Qs Qd Qc").meld("Jc Jd Js Jh").meld("5c 5d 5s")
    s.discard("6c")
    refused(s, "morto.not_available", ("already took its morto",), "morto", False)
    s.go_out()
    assert s.state.went_out == 2 and s.state.morto_pending[0] == 0
    # Side 0's table: seat 0's run 45 and kings 40 (thirteen: three kings 30, fours 15), seat
    # 2's queens 40, jacks 40, fives 15 (thirteen: queens 30, jacks 40, fives 15, nines 30).
    table = 45 + 30 + 15 + 30 + 40 + 15 + 30 if t13 else 45 + 40 + 40 + 40 + 15
    assert table == (205 if t13 else 180)
    # The morto stands as seat 0's hand (95); the clean run 200; going out; relancinho.
    side0 = table + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0) - 95
    side1 = -(105 + 105 if t13 else 95 + 95) - 100  # both hands, its morto never taken
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (side0 + 95 - 100, side1))  # as if the partner's going out voided the morto
    refused(s, "score.mismatch", ("side 1",), "end_hand", "went_out",
            (side0, side1 + 95))  # one opponent's hand forgotten
    s.end_hand("went_out", (side0, side1))
    sc = s.state.results[0].scores
    assert (sc[0].hand_penalty, sc[0].morto_penalty) == (95, 0)


# -- six players -------------------------------------------------------------------------------

SIX = {0: "Jh Js Jd 3h 4h 5h 6h 7h 8h 9h Th",
       1: "As 3s 4d 6d 8s Ts Qd 5c 7c 9c Kd",  # 15+5+5+5+10+10+10+5+5+10+10 = 90
       2: "Jc Ad 3d 5d 7d 9d Ks 4c 6c 8c Tc",  # less the Jc: 15+5+5+5+10+10+5+5+10+10 = 80
       3: "Ac 3c 4s 6s 8d Td Qc 5s 7s 9s Kh",  # 90
       4: "Jc Ah 3h 5h 7h 9h Kd 4d 6d 8d Th",  # less the Jc: 80
       5: "As 3s 4h 6h 8h Ts Qd 5d 7c 9c Ks"}  # 90


def test_six_players_three_partners_build_one_meld_and_the_first_goes_out() -> None:
    s = Scenario("classic", 6, hands=SIX, stock="Kc Qs Qh Qs Qh Kc Jh")
    s.draw("Kc").meld("Jh Js Jd").discard("Kc")
    s.draw("Qs")
    refused(s, "layoff.no_such_meld", ("own melds",), "layoff", 0, "As")
    s.discard("Qs")
    s.draw("Qh").layoff(0, "Jc").discard("Qh")  # seat 2, a partner of seat 0
    s.pass_turn()
    s.draw("Qh").layoff(0, "Jc").discard("Qh")  # seat 4, the third partner
    s.pass_turn()
    assert s.turn == 0  # the round wraps from seat 5 to seat 0
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h Th").layoff(0, "Jh")
    s.go_out()
    # Six jacks 60 (no canastra), run 3..10 55 and its clean 200, going out 50; seat 0 laid in
    # an earlier turn: no relancinho. Partners' hands 80 + 80: 365 - 160 = 205.
    # Side 1: 90 + 90 + 90 = -270.
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out", (285, -270))
    refused(s, "score.mismatch", ("side 1",), "end_hand", "went_out", (205, -180))
    s.end_hand("went_out", (205, -270))
    sc = s.state.results[0].scores
    assert (sc[0].hand_penalty, sc[1].hand_penalty, sc[0].relancinho) == (160, 270, 0)


# -- three players, three sides ------------------------------------------------------------------

def test_three_players_the_third_seats_going_out_voids_seat_0s_morto() -> None:
    hands = {0: "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc Th",
             1: "Ah Ah 3s 4s 6d 8d Tc Tc 4h 6c 9h",  # 15+15+5+5+5+10+10+10+5+5+10 = 95
             2: "Qh Qs Qd Jc Jd Js Jh 5c 5d 5s 5h"}
    s = Scenario("biriba", 3, hands=hands, mortos={2: "Ac Ad As 9c 9d 9s 7c 7d 7s 7h 3c"},
                 stock="Kh 8c Qc")
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Ks Kd Kc Kh").discard("Th")
    s.morto(direct=False)
    s.pass_turn()
    # Seat 2 lays twelve cards (its morto, directly) and the morto but the 3c: out at once.
    s.draw("Qc").meld("Qh Qs Qd Qc").meld("Jc Jd Js Jh").meld("5c 5d 5s 5h").morto(direct=True)
    s.meld("Ac Ad As").meld("9c 9d 9s").meld("7c 7d 7s 7h").discard("3c").go_out()
    # Side 0: run 45 + kings 40, clean 200, relancinho 100; its morto voided (seat 2 is an
    # opponent, seat 0 has not played since): -100 and its cards not counted: 285.
    # Side 1: -95 - 100. Side 2: 40 + 40 + 20 + 45 + 30 + 20 = 195, going out 50 (biriba needs
    # no canastra), relancinho 100 (noted once, at the morto): 345.
    refused(s, "score.mismatch", ("side 0",), "end_hand", "went_out",
            (385 - spec_points("biriba", s.hand(0)), -195, 345))  # as if the morto stood
    refused(s, "score.mismatch", ("side 2",), "end_hand", "went_out", (285, -195, 445))
    s.end_hand("went_out", (285, -195, 345))
    sc = s.state.results[0].scores
    assert [x.relancinho for x in sc] == [100, 0, 100]
    assert [x.morto_penalty for x in sc] == [100, 100, 0]
