"""A hand that closes a match for one side, and that side, for the scenarios of match targets and
card points."""

from __future__ import annotations

from tests.scenario import Scenario, carried_in
from tests.spec_points import spec_points

HAND0 = "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh"  # a clean run of seven and four jacks
MORTO0 = "Ks Kd Kc Qs Qd Qc Qh As Ad Ac 5c"  # three sets and the card thrown to go out
HAND1 = "Ac Ad 3c 5d 7s 9d Jc Kc 4s 6c 8d"  # 15 + 15 + 5 * 5 + 10 * 4 = 95, no wild
HAND1_13 = HAND1 + " 3s 5s"  # thirteen cards: 105


# By hand, RULES.md §9 (none of these cards is a wild; 3..7 are 5, 8..K 10, ace 15 in every
# preset): the run 3..9 is 45 (3..10 is 55), four jacks 40, three kings 30, four queens 40,
# three aces 45 (four 60), three fours 15; a clean canastra 200.
SIDE0 = {
    # 3..10 and the jacks: 95, clean 200, relancinho 100, going out 50.
    "classic": 55 + 40 + 200 + 100 + 50,
    # The same, and the morto laid (kings, queens, aces: 115); the relancinho is noted when
    # the emptying takes the morto (RULES.md §7), the going out 50 comes after.
    "biriba": 55 + 40 + 115 + 200 + 100 + 50,
    "bossa-nova": 55 + 40 + 115 + 200 + 100 + 50,
    # Thirteen cards: 3..9, the jacks and three fours, then the morto; going out 100.
    "thirteen": 45 + 40 + 15 + 115 + 200 + 100,
    "thirteen-quick": 45 + 40 + 15 + 115 + 200 + 100,
    "burraco": 55 + 40 + 115 + 200 + 100,
    "mega": 55 + 40 + 115 + 200 + 100,
    # Indirect morto: 3..9 and the jacks, then kings, queens and four aces.
    "burako": 45 + 40 + 30 + 40 + 60 + 200 + 100,
}


def closing_hand(name: str, totals: tuple[int, int] = (0, 0), held1: str | None = None
                 ) -> tuple[Scenario, tuple[int, int]]:
    """Seat 0 closes the hand, seat 1 holds ``held1`` throughout; returns the scenario at the
    end of the hand and the scores (side 1's by spec_points)."""
    if held1 is None:
        held1 = HAND1_13 if name.startswith("thirteen") else HAND1
    if name == "classic":
        s = carried_in(Scenario(name, hands={0: HAND0, 1: held1}, stock="Th"), totals)
        s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh").go_out()
        return s, (SIDE0[name], -spec_points(name, held1))
    if name == "burako":
        s = carried_in(Scenario(name, hands={0: HAND0, 1: held1}, stock="5d Kh Ah",
                             mortos={0: MORTO0}), totals)
        s.draw("5d").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("5d")
        s.morto(direct=False)
        s.pass_turn()
        s.draw("Ah").meld("Ks Kd Kc").meld("Qs Qd Qc Qh").meld("As Ad Ac Ah").discard("5c")
        s.go_out()
        return s, (SIDE0[name], -spec_points(name, held1) - 100)
    if name.startswith("thirteen"):
        s = carried_in(Scenario(name, hands={0: HAND0 + " 4s 4d", 1: held1}, stock="4c",
                             mortos={0: MORTO0}), totals)
        s.draw("4c").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").meld("4s 4d 4c")
    else:
        s = carried_in(Scenario(name, hands={0: HAND0, 1: held1}, stock="Th",
                             mortos={0: MORTO0}), totals)
        s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh")
    s.morto(direct=True)
    s.meld("Ks Kd Kc").meld("Qs Qd Qc Qh").meld("As Ad Ac").discard("5c").go_out()
    return s, (SIDE0[name], -spec_points(name, held1) - 100)
