"""The first turn of a dealt hand, played to the point where going out is tried."""

from __future__ import annotations

from tests.scenario import Scenario, carried_in

HAND0 = "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Th"
HAND0_13 = "3h 4h 5h 6h 7h 8h 9h Js Jd Jc 4s 4d Th"
MORTO0 = "Ks Kd Kh Kc Qs Qd Qc As Ad Ac Ah"  # four kings 40, three queens 30, four aces 60
HAND1 = "Ac Ad 3c 5d 7s 9d Jc Kc 4s 6c 8d"  # 15+15+5+5+5+10+10+10+5+5+10 = 95, no wild
HAND1_13 = HAND1 + " 3s 5s"  # 95 + 5 + 5 = 105


def thirteen(name: str) -> bool:
    return name.startswith("thirteen")


def first_turn(name: str, stock: str, totals: tuple[int, int] | None = None) -> Scenario:
    """Seat 0 lays its whole hand but the Th (run 3..9 clean, the jacks, in `thirteen` the
    fours too), holding the Th; in a match carried in at ``totals`` when given."""
    t = thirteen(name)
    s = Scenario(name, hands={0: HAND0_13 if t else HAND0, 1: HAND1_13 if t else HAND1},
                 mortos={0: MORTO0}, stock=stock)
    if totals is not None:
        carried_in(s, totals)
    s.draw("4c" if t else "Jh").meld("3h 4h 5h 6h 7h 8h 9h")
    if t:
        s.meld("Js Jd Jc").meld("4s 4d 4c")
    else:
        s.meld("Js Jd Jc Jh")
    return s
