"""Probe 39, a run's own 2 read natural, then needed as the wild (RULES.md §5, §6):

RULES.md §5 reads a meld as "the set of its natural cards plus at most one wild", and a 2 as
natural "whenever the meld is valid with it read that way". So the 2 of the run's suit in its
own place is natural only while the run needs no wild: a natural card laid off beyond a gap
turns it into the wild standing in the gap, and a clean canastra 2..8 becomes dirty by taking
the 10 (docs/rules.md, "A run's own 2 becomes its wild again"). The 9 sends it home, clean;
so does another wild, which takes the gap in its place. A third wild is one too many, and a 2
cannot leave its place when the ace beside it needs it there (A-2-3 takes no 5).
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.rules import PRESETS
from buraco_log.wilds import wild_place
from tests.scenario import Scenario, refused

ALL = sorted(PRESETS)
HAND = "2s 3s 4s 5s 6s 7s 8s Ts 9s 2h 2d"


def _place(s: Scenario) -> tuple[int, str, tuple[int, ...]] | None:
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    return None if place is None else (place.card, place.kind, place.ranks)


def _open(name: str) -> Scenario:
    s = Scenario(name, hands={0: HAND}, stock="4c")
    s.draw("4c").meld("2s 3s 4s 5s 6s 7s 8s")
    assert s.state.melds[0][0].canastra == "clean" and _place(s) is None
    s.layoff(0, "Ts")  # 3..8, the 2♠ as the 9, the 10: seven naturals never in a row
    assert s.state.melds[0][0].canastra == "dirty"
    assert _place(s) == (parse_cards("2s")[0], "gap", (9,))
    return s


@pytest.mark.parametrize("name", ALL)
def test_a_natural_laid_beyond_a_gap_makes_the_runs_own_2_its_wild(name: str) -> None:
    s = _open(name)
    s.layoff(0, "9s")  # the 9 arrives: the 2♠ stands in its own place again
    assert s.state.melds[0][0].canastra == "clean" and _place(s) is None
    s.discard("4c")


@pytest.mark.parametrize("name", ALL)
def test_another_wild_takes_the_gap_and_sends_the_2_home(name: str) -> None:
    s = _open(name)
    s.layoff(0, "2h")  # 2♠ natural again, 2♥ the 9: still one wild
    assert _place(s) == (parse_cards("2h")[0], "gap", (9,))
    # 2..8 in a row beside the wild: seven naturals unbroken, semi-clean where there is one
    assert s.state.melds[0][0].canastra == ("semi_clean" if name == "burraco" else "dirty")
    refused(s, "meld.too_many_wilds", ("2 wild",), "layoff", 0, "2d")
    s.layoff(0, "9s")  # 2..10 unbroken: the 2♥ goes to an end, the ace or the jack
    assert _place(s) == (parse_cards("2h")[0], "end", (1, 11))
    assert s.state.melds[0][0].canastra == ("semi_clean" if name == "burraco" else "dirty")
    s.discard("4c")


@pytest.mark.parametrize("name", ALL)
def test_the_2_cannot_leave_its_place_when_the_ace_needs_it(name: str) -> None:
    s = Scenario(name, hands={0: "As 2s 3s 5s 4s Kd Qh 9c"}, stock="4c")
    s.draw("4c").meld("As 2s 3s")
    # A, 3 and 5 leave two holes (the 2 and the 4): the 2♠ fills only one of them.
    refused(s, "meld.run_not_consecutive", ("not consecutive",), "layoff", 0, "5s")
    s.layoff(0, "4s 5s")  # A..5 of spades, every card natural
    assert s.state.melds[0][0].canastra is None
    assert wild_place(s.state.melds[0][0].cards, s.rules) is None
    s.discard("Qh")


@pytest.mark.parametrize("name", ["classic", "burraco", "mega"])
def test_a_natural_2_moves_into_the_gap_and_its_twin_takes_its_place(name: str) -> None:
    s = Scenario(name, hands={0: "2s 3s 4s 6s 7s 2s 2h Qh"}, stock="4c")
    s.draw("4c").meld("2s 3s 4s").layoff(0, "6s")  # 3-4-[2♠ as the 5]-6
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and place.kind == "gap" and place.ranks == (5,)
    s.layoff(0, "7s 2s")  # the second 2♠ is the 2: one natural, one the 5
    assert len(s.state.melds[0][0].cards) == 6 and s.state.melds[0][0].canastra is None
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and place.kind == "gap" and place.ranks == (5,)
    refused(s, "meld.too_many_wilds", ("2 wild",), "layoff", 0, "2h")
    s.discard("Qh")
