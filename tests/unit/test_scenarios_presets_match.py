"""Rule scenarios of the match (RULES.md §10): each preset's target, the tie that plays on,
the winner, and carried-over totals, accepted and refused by their exact rule ids."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from buraco_log.errors import IllegalMoveError
from buraco_log.events import TotalsCarried
from buraco_log.reducer import Replayer
from tests.scenario import Scenario, build_deal

# RULES.md §10: "classic family 1500, thirteen 2005, thirteen-quick 1005, burraco 2005, mega
# and burako: the texts give none; presets use 3000 and 3000".
TARGET = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
          "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}


def resumed(name: str, totals: tuple[int, ...], players: int = 2, **kw: Any) -> Scenario:
    """A hand of ``name`` in a match resumed from ``totals``."""
    s = Scenario(name, players, **kw)
    rep = Replayer()
    start, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    tc = TotalsCarried(totals, seq=1)
    for ev in (start, tc, deal):
        rep.step(ev)
    s.rep, s.events = rep, [start, tc, deal]
    return s


def carry(name: str, totals: tuple[int, ...], players: int = 2) -> str | None:
    """The rule id refusing ``TotalsCarried(totals)`` right after the start, or None."""
    rep = Replayer()
    rep.step(Scenario(name, players).events[0])
    try:
        rep.step(TotalsCarried(totals, seq=1))
    except IllegalMoveError as exc:
        return exc.rule
    return None


@pytest.mark.parametrize("name", sorted(TARGET))
def test_each_presets_target_decides_the_match_and_one_point_less_does_not(name: str) -> None:
    t = TARGET[name]
    assert carry(name, (t - 1, 0)) is None
    assert carry(name, (0, t - 1)) is None
    # At the target with the unique highest total the match is decided: nothing to carry on.
    assert carry(name, (t, 0)) == "match.carried_totals"
    assert carry(name, (t - 1, t)) == "match.carried_totals"
    # A tie at the top plays another hand (RULES.md §10), even at or above the target.
    assert carry(name, (t, t)) is None
    assert carry(name, (t + 40, t + 40)) is None


@pytest.mark.parametrize(("name", "players"), [("classic", 3), ("biriba", 3), ("classic", 6)])
def test_three_sides_carry_three_totals(name: str, players: int) -> None:
    sides = 3 if players == 3 else 2
    totals = (1499, 1499, 0)[:sides]
    assert carry(name, totals, players) is None
    assert carry(name, (*totals, 0), players) == "match.carried_totals"
    assert carry(name, (1500, 1500, 1600)[:sides], players) == (
        "match.carried_totals" if sides == 3 else None)


# A hand that side 0 wins: in classic the whole hand in one turn (sets and a run, 90 points of
# cards, relancinho and going out); with a morto, the first hand down in one turn (a clean run
# and jacks), the drawn Kc thrown for the morto, then the morto down and out.
MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"


def _won_hand(name: str, totals: tuple[int, int]) -> Scenario:
    if name == "classic":
        s = resumed(name, totals, hands={0: "3h 4h 5h 7c 7d 7s 9s 9d 9h Qc Qd"}, stock="Qs")
        s.draw("Qs").meld("3h 4h 5h").meld("7c 7d 7s").meld("9s 9d 9h").meld("Qc Qd Qs")
    else:
        jacks = "Jc Jd Js Jh Jc Jd" if s_size(name) == 13 else "Jc Jd Js Jh"
        s = resumed(name, totals, hands={0: f"3h 4h 5h 6h 7h 8h 9h {jacks}"}, stock="Kc 4c Kc",
                    mortos={0: MORTO})
        s.draw("Kc").meld("3h 4h 5h 6h 7h 8h 9h").meld(jacks).discard("Kc").morto(direct=False)
        s.pass_turn()
        s.draw("Kc").meld("Th Ts Td Tc").meld("Qh Qs Qd Qc").meld("Kh Ks Kd Kc")
    s.go_out().end_hand()
    return s


def s_size(name: str) -> int:
    return 13 if name.startswith("thirteen") else 11


@pytest.mark.parametrize("name", ["classic", "thirteen-quick", "thirteen", "mega", "burako"])
@pytest.mark.parametrize("short", [False, True])
def test_the_match_ends_after_the_hand_that_reaches_the_target(name: str, short: bool) -> None:
    t = TARGET[name]
    gain = _won_hand(name, (0, 0)).state.totals[0]  # the same hand from zero
    assert gain > 0
    start = t - gain - (1 if short else 0)
    s = _won_hand(name, (start, 0))
    total0 = s.state.totals[0]
    assert total0 == (t - 1 if short else t)
    if short:
        assert s.state.phase == "between" and s.state.winner is None
        with s.illegal("match.not_over"):
            s.end_match()
        return
    assert s.state.phase == "decided" and s.state.winner == 0
    with s.illegal("match.wrong_winner"):
        s.end_match(winner=1)
    with s.illegal("score.mismatch"):
        s.end_match(totals=(total0 + 1, s.state.totals[1]))
    with s.illegal("match.decided"):
        s.push(msgspec.structs.replace(s.events[2], hand=1, seq=s.rep.seq + 1))
    s.end_match(totals=s.state.totals, winner=0)
    assert s.state.phase == "over"


@pytest.mark.parametrize(("name", "before", "vulnerable"), [
    ("classic", 0, True), ("classic", -1, False), ("biriba", 0, True), ("bossa-nova", -1, False),
])
def test_a_side_is_vulnerable_in_the_next_hand_once_its_total_reaches_half_the_target(
    name: str, before: int, vulnerable: bool
) -> None:
    # The won hand is worth ``gain``; from 750 - gain (+ before) the side ends the hand at 750
    # (vulnerable in the next, RULES.md §10) or at 749 (not).
    gain = _won_hand(name, (0, 0)).state.totals[0]
    s = _won_hand(name, (750 - gain + before, 0))
    assert s.state.totals[0] == 750 + before and s.state.phase == "between"
    deal = build_deal(s.rules, 2, {}, "", {}, None, hand_no=1)
    s.push(msgspec.structs.replace(deal, seq=s.rep.seq + 1))
    assert s.state.vulnerable == (vulnerable, False)
