"""Rule scenarios for the knobs: each knob's other value switched on (or off) over a preset
that has the first, accepted where the knob allows a move and refused by its exact rule id where
it does not (RULES.md §4–§10 describe every knob; docs/rules.md lists them)."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import JOKER, RANK, parse_cards
from buraco_log.events import TotalsCarried
from buraco_log.melds import MeldError, read_meld
from buraco_log.reducer import Replayer
from buraco_log.rules import derive, preset
from tests.scenario import Scenario

MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"


def refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq


def carried(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    rep = Replayer()
    start, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    tc = TotalsCarried(totals, seq=1)
    for ev in (start, tc, deal):
        rep.step(ev)
    s.rep, s.events = rep, [start, tc, deal]
    return s


def reading(name: str, text: str, **knobs: object) -> tuple[str, int, str | None] | str:
    try:
        r = read_meld(parse_cards(text), derive(name, **knobs) if knobs else preset(name))
    except MeldError as exc:
        return exc.rule
    return (r.kind, r.size, r.canastra)


def card_points(cards: tuple[int, ...], joker: int, two: int) -> int:
    return sum(joker if c == JOKER else two if RANK[c] == 2 else 15 if RANK[c] == 1
               else 10 if RANK[c] >= 8 else 5 for c in cards)


# -- vulnerability: half the target (RULES.md §10) -----------------------------------------


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick", "burraco", "mega", "burako"])
def test_vulnerability_switched_on_is_at_half_the_presets_target(name: str) -> None:
    # thirteen 2005 -> 1003, thirteen-quick 1005 -> 503, burraco 2005 -> 1003, mega and burako
    # 3000 -> 1500: the same as when the target is named too (it used to stay at 750).
    half = (preset(name).target_score + 1) // 2
    r = derive(name, vulnerability=True)
    assert r.vulnerable_at == half
    assert derive(name, vulnerability=True, target_score=r.target_score) == r
    assert derive(name, vulnerability=True, vulnerable_at=750).vulnerable_at == 750


@pytest.mark.parametrize("below", [True, False])
def test_thirteen_with_vulnerability_asks_75_from_half_its_target(below: bool) -> None:
    rules = derive("thirteen", vulnerability=True)
    total = 1002 if below else 1003
    s = carried(Scenario(rules, hands={0: "3h 3s 3d 9c"}, stock="4c"), (total, 0))
    s.draw("4c").meld("3h 3s 3d")
    if below:
        s.discard("4c")
        return
    refused(s, "vulnerable.opening_too_low", "discard", "4c")
    s.retract()
    refused(s, "vulnerable.retract_not_needed", "retract", "3h 3s 3d")
