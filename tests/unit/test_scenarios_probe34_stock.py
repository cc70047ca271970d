"""Probe 34, stock-outs with every morto taken, and with one of three (RULES.md §7-§9), and the
wild that has no room left in a run (RULES.md §5: "Max run length: 13 (14 with
`ace_both_ends`)").

- `burraco`: one side took its morto directly, the other indirectly; the stock runs out after
  the indirect taker played again. Both mortos stand as hands, nobody pays the morto.
- `biriba` with three players: the one side that took its morto scores its table, canastra and
  relancinho less the morto's rest; the two others pay their hands and their mortos.
- A run of 2..K with a joker (13 cards, the joker as the ace at either end) takes no ace in
  a preset whose runs stop at 13, and takes one in `burako` (A..K..A, dirty).

Every expected number is worked out by hand from RULES.md §9's tables.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points


def run_out(s: Scenario) -> None:
    while s.state.stock:
        s.pass_turn()
    refused(s, "stock.floor_reached", ("floor 0",), "draw", "4c")


def test_burraco_stock_out_with_both_mortos_taken_nobody_pays_a_morto() -> None:
    morto0 = "Ac Ad 5d 6d 8s Qd Qs Kh Ks Kd 9c"
    morto1 = "Ah As 4c 6c 7c 8d 9d Td Jd 2d JK"
    s = Scenario("burraco", hands={0: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh",
                                   1: "3s 4s 5s 6s 7s 8s 9s Qc Qh Qd Qs"},
                 stock="Th 5c", mortos={0: morto0, 1: morto1})
    # Seat 0 empties by melding: the morto directly; it lays the kings and throws the 9c.
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").morto(direct=True)
    s.meld("Kh Ks Kd").discard("9c")
    # Seat 1 empties by its last discard: the morto indirectly.
    s.draw("5c").meld("3s 4s 5s 6s 7s 8s 9s").meld("Qc Qh Qd Qs").discard("5c")
    s.morto(direct=False)
    run_out(s)
    assert s.state.morto_taken == (True, True)
    # RULES.md §9, burraco: joker 30, 2 20, ace 15, 8..K 10, 3..7 5.
    held0 = 15 + 15 + 5 + 5 + 10 + 10 + 10  # Ac Ad 5d 6d 8s Qd Qs
    held1 = 15 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 10 + 20 + 30  # the whole morto
    assert (spec_points("burraco", s.hand(0)), spec_points("burraco", s.hand(1))) == \
        (held0, held1) == (70, 135)
    side0 = (25 + 30) + 40 + 30 + 200 - held0  # 3..10 of hearts, jacks, kings, clean: 255
    side1 = (25 + 20) + 40 + 200 - held1  # 3..9 of spades, queens, clean: 150
    # The indirect morto read as voided: 100 to pay, its cards not counted (185).
    refused(s, "score.mismatch", ("side 1", "recomputed 150"), "end_hand", "stock_out",
            (side0, side1 + held1 - 100))
    s.end_hand("stock_out", (side0, side1))
    assert [sc.morto_penalty for sc in s.state.results[0].scores] == [0, 0]


def test_biriba_three_players_one_morto_taken_two_paid() -> None:
    held = {0: "3c 4d 5s 6c 7d 8d 9d Td Js Qc Kc",  # 25 + 60 = 85
            2: "Ac Ad As 3s 4c 5d 6s 7c 8c 9s Tc"}  # 45 + 25 + 30 = 100
    morto1 = "Kh Ks Kd Ah 5c 6d 8s Qh Qs 9c 4s"
    s = Scenario("biriba", 3, hands={**held, 1: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh"},
                 stock="Kd Th", mortos={1: morto1})
    s.pass_turn()
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").morto(direct=True)
    s.meld("Kh Ks Kd").discard("9c")
    run_out(s)
    assert s.state.morto_taken == (False, True, False)
    rest = 15 + 5 + 5 + 10 + 10 + 10 + 5  # Ah 5c 6d 8s Qh Qs 4s
    assert spec_points("biriba", s.hand(1)) == rest == 60
    assert spec_points("biriba", s.hand(0)) == 85 and spec_points("biriba", s.hand(2)) == 100
    # Side 1: 3..10 of hearts 55, jacks 40, kings 30, clean 200, relancinho 100, less 60.
    scores = (-85 - 100, 55 + 40 + 30 + 200 + 100 - rest, -100 - 100)
    refused(s, "score.mismatch", ("side 2", "recomputed -200"), "end_hand", "stock_out",
            (scores[0], scores[1], -100))
    s.end_hand("stock_out", scores)
    assert s.state.totals == (-185, 365, -200)


@pytest.mark.parametrize(("name", "cls"), [
    ("thirteen", "dirty"), ("mega", "dirty"), ("burraco", "semi_clean"), ("burako", "dirty"),
])
def test_the_ace_onto_two_to_king_and_a_joker_only_where_runs_reach_14(
    name: str, cls: str
) -> None:
    run = "2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh JK"
    s = Scenario(name, hands={0: f"{run} Ah 4c 5c"}, stock="Kc", hand_size=16)
    s.draw("Kc").meld(run)
    # Twelve naturals in a row: semi-clean in burraco (RULES.md §6), dirty elsewhere.
    assert s.state.melds[0][0].canastra == cls
    if name != "burako":
        refused(s, "meld.run_too_long", ("13",), "layoff", 0, "Ah")
        return
    s.layoff(0, "Ah")  # A..K with the joker as the other ace: 14 cards, one wild
    m = s.state.melds[0][0]
    assert (len(m.cards), m.canastra) == (14, "dirty")
