"""An outside referee's scenarios: corners of RULES.md that the other scenario files leave open,
each accepted where the rules allow it and refused by its exact rule id (at the seq of the
refused event) where they do not. Expected scores are worked out by hand from RULES.md §9 in
the comments, never read from the engine's presets."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.events import TotalsCarried
from buraco_log.reducer import Replayer
from tests.scenario import Scenario


def refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    """``move`` (a Scenario method) must be refused with ``rule`` at the next seq."""
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq, (s.last_error.seq, seq)


def carried(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    """The scenario's match resumed from ``totals`` (TotalsCarried right after the start)."""
    rep = Replayer()
    first, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    tc = TotalsCarried(totals, seq=1)
    for ev in (first, tc, deal):
        rep.step(ev)
    s.rep, s.events = rep, [first, tc, deal]
    return s


# -- the first-turn redraw (RULES.md §4) ----------------------------------------------------


@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova"])
def test_the_redraw_is_gone_once_cards_were_laid_even_if_a_short_opening_is_taken_back(
    name: str,
) -> None:
    # A vulnerable first player draws Kh, lays 3-3-3 (15 points, short of 75) and takes it
    # back. The redraw is "the first stock card drawn" rejected at once (000: "caso a primeira
    # não lhe sirva"); having played with it, the player may no longer reject it. The engine
    # used to accept the rejection, since taking the meld back emptied its list of cards laid.
    s = carried(Scenario(name, hands={0: "3h 3s 3d 9c"}, stock="Kh 4c"), (800, 0))
    s.draw("Kh").meld("3h 3s 3d").retract()
    refused(s, "draw.redraw_only_first", "reject", "Kh")
    s.discard("Kh")
    assert s.state.pile == parse_cards("Kh") and s.turn == 1
