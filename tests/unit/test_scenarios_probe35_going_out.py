"""Probe 35, what each preset asks before a side may go out (RULES.md §6, §7):

- `mega`: seven nines are no canastra (`canastra_from_sets` off), so a side whose only 7+
  meld is a set may take its morto but not go out (`go_out.needs_canastra`); the same cards
  go out in `burraco`, where a set of seven is a clean canastra.
- `classic`: no morto and no canastra needed; going out by the last meld, no discard, with no
  canastra on the table, scores the cards and the 50 only (no relancinho: a meld was laid in an
  earlier turn).
- `thirteen`: after the indirect morto, the meld that would empty the hand is refused without
  a canastra; with a seven-card run on the table the last discard goes out.
- `bossa-nova`: a lay-off that would leave one card, whose discard would empty the hand and
  take the morto with no canastra, is refused (`morto_needs_canastra`); `biriba` allows it.

Every expected number is worked out by hand from RULES.md §9's tables.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

NINES = "9s 9h 9d 9c 9s 9h 9d 4c 4d 4s 4h"
MORTO_SETS = "Th Ts Td Qh Qs Qd 5c 6c 7c Kc Ks"
HAND1 = "Ac Ad 3c 5d 7s Td Jc Kc 4s 6c 8d"  # 95 in both tables (no wild)


@pytest.mark.parametrize("name", ["mega", "burraco"])
def test_a_set_of_seven_lets_the_side_go_out_only_where_sets_make_canastras(name: str) -> None:
    s = Scenario(name, hands={0: NINES, 1: HAND1}, stock="Kd 8h Kh",
                 mortos={0: MORTO_SETS}, upcard="2c")
    s.draw("Kd").meld("9s 9h 9d 9c 9s 9h 9d").meld("4c 4d 4s 4h").discard("Kd")
    s.morto(direct=False)  # no canastra is needed to take the morto in either preset
    assert s.state.melds[0][0].canastra == (None if name == "mega" else "clean")
    s.pass_turn()
    s.draw("Kh").meld("Th Ts Td").meld("Qh Qs Qd").meld("5c 6c 7c")
    if name == "mega":
        refused(s, "go_out.needs_canastra", ("canastra",), "meld", "Kc Ks Kh")
        s.discard("Kh")
        assert s.turn == 1 and len(s.hand(0)) == 2
        return
    s.meld("Kc Ks Kh").go_out()
    assert spec_points(name, HAND1) == 95
    # Nines 70, fours 20, tens 30, queens 30, 5-6-7 of clubs 15, kings 30: 195;
    # the clean set canastra 200, going out 100. The opponent: hand and morto.
    side0 = 195 + 200 + 100
    side1 = -95 - 100
    refused(s, "score.mismatch", ("side 0", "recomputed 495"), "end_hand", "went_out",
            (side0 - 200, side1))
    s.end_hand("went_out", (side0, side1))


def test_classic_goes_out_by_the_last_meld_with_no_canastra() -> None:
    hand0 = "5s 6s 7s Qh Qs Qd 9c 9d 9h Kh Ks"
    s = Scenario("classic", hands={0: hand0, 1: HAND1}, stock="8c 4d Kd")
    s.draw("8c").meld("5s 6s 7s").discard("8c")
    s.pass_turn()
    s.draw("Kd").meld("Qh Qs Qd").meld("9c 9d 9h")
    refused(s, "turn.already_drew", (), "draw", "Kc")
    s.meld("Kh Ks Kd")
    refused(s, "turn.hand_emptied", (), "discard", "Kd")
    s.go_out()
    assert all(m.canastra is None for m in s.state.melds[0])
    # 5-6-7 15, queens 30, nines 30, kings 30; going out 50; no canastra, no relancinho.
    side0 = 15 + 30 + 30 + 30 + 50
    refused(s, "score.mismatch", ("side 0", "recomputed 155"), "end_hand", "went_out",
            (side0 + 100, -95))
    s.end_hand("went_out", (side0, -95))
    assert s.state.results[0].scores[0].relancinho == 0


@pytest.mark.parametrize("canastra", [False, True])
def test_thirteen_emptying_the_hand_after_the_morto_needs_a_canastra(canastra: bool) -> None:
    hand0 = "Ts Td Tc Qs Qd Qc Ks Kd Kc 5h 6h 7h 4c"
    hand1 = "Ac Ad 3c 5d 7s Td Jc Kc 4s 6c 8d 3s 5s"  # 95 + 5 + 5 = 105
    morto = ("8h 9h Th Jh 8d" if canastra else "8h 9h 8s 8d 8c") + " 3d 3s 3c Ad Ac As"
    s = Scenario("thirteen", hands={0: hand0, 1: hand1}, stock="Kh 6d 3h",
                 mortos={0: morto}, upcard="2c")
    # Thirteen of the fourteen cards laid, the 4c thrown: the morto, indirectly, with no
    # canastra (thirteen has no morto_needs_canastra).
    s.draw("Kh").meld("Ts Td Tc").meld("Qs Qd Qc").meld("Ks Kd Kc Kh").meld("5h 6h 7h")
    s.discard("4c").morto(direct=False)
    s.pass_turn()
    s.draw("3h").meld("3d 3s 3c 3h").meld("Ad Ac As")
    if not canastra:
        s.layoff(3, "8h 9h")  # 5h..9h: five cards, no canastra on the table
        refused(s, "go_out.needs_canastra", ("canastra",), "meld", "8s 8d 8c")
        s.discard("8c")
        assert s.turn == 1 and len(s.hand(0)) == 2
        return
    s.layoff(3, "8h 9h Th Jh")  # 5h..Jh: seven cards, clean
    assert s.state.melds[0][3].canastra == "clean"
    s.discard("8d").go_out()
    assert spec_points("thirteen", hand1) == 105
    # Tens 30, queens 30, kings 40, 5h..Jh 55, threes 20, aces 45: 220; clean 200, out 100.
    side0 = 220 + 200 + 100
    side1 = -105 - 100
    refused(s, "score.mismatch", ("side 0", "recomputed 520"), "end_hand", "went_out",
            (side0 - 50, side1))
    s.end_hand("went_out", (side0, side1))


@pytest.mark.parametrize("name", ["bossa-nova", "biriba"])
def test_the_lay_off_leaving_one_card_to_throw_needs_a_canastra_in_bossa_nova(name: str) -> None:
    hand0 = "5s 6s 7s Qh Qs Qd 9c 9d 9h 8s Kc"
    s = Scenario(name, hands={0: hand0}, stock="4s")
    s.draw("4s").meld("5s 6s 7s").meld("Qh Qs Qd").meld("9c 9d 9h")
    if name == "bossa-nova":
        # 4s..8s would leave the Kc, whose discard empties the hand and would take the morto
        # with no canastra on the table (RULES.md §7, morto_needs_canastra).
        refused(s, "morto.needs_canastra", ("canastra",), "layoff", 0, "4s 8s")
        s.layoff(0, "8s").discard("Kc")
        assert len(s.hand(0)) == 1
        assert not s.state.morto_taken[0]
        return
    s.layoff(0, "4s 8s").discard("Kc").morto(direct=False)  # biriba: no canastra needed
    assert s.state.morto_taken[0] and s.turn == 1
