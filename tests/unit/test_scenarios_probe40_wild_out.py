"""Probe 40, going out by throwing a wild (RULES.md §4.3, §7, §9), in the very turn the morto is
taken where the preset allows it.

RULES.md §4.3 names no card that may not be discarded, and §7 lets the last card leave the hand
by a discard (`001`: "Baixe ou descarte a última carta para bater"). So a wild (a joker, or a 2
in the presets without jokers) may be the last card, thrown to go out:

- every preset that takes the morto directly: seat 0 lays a set in its first turn; in the next
  it lays a run of seven (a clean canastra) and lays off the 10 and a king (`thirteen`: melds
  three fours), which empties the hand and takes the morto at once; from the morto it lays
  three sets and goes out by throwing the wild left over, all in that one turn;
- `burako` takes its morto only by a discard: the last card is thrown for it, and the wild goes
  out in the next turn;
- `classic` has no morto: the 2 drawn in the first turn is thrown to go out.

Scores are worked out from RULES.md §9 by hand (tests/spec_points.py), never read from the
engine. The wild thrown lies on the pile: it counts for nobody.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from tests.scenario import Scenario
from tests.spec_points import spec_points

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
GOING_OUT = {"classic": 50, "biriba": 50, "bossa-nova": 50, "thirteen": 100,
             "thirteen-quick": 100, "burraco": 100, "mega": 100, "burako": 100}
MORTO_PENALTY = {"classic": 0, "biriba": 100, "bossa-nova": 100, "thirteen": 100,
                 "thirteen-quick": 100, "burraco": 100, "mega": 100, "burako": 100}
CLEAN = 200  # the run 3h..Th, eight naturals: the one canastra on the table
RUN = "3h 4h 5h 6h 7h 8h 9h"
MORTO_SETS = ("Qs Qd Qc Qh", "5s 5d 5c", "Jh Jd Js")  # one set per rank: `mega` takes them


def _wild(name: str) -> str:
    return "2c" if name in ("classic", "biriba", "bossa-nova") else "JK"


def _stock(name: str) -> str:
    """Seat 0's draws, with seat 1's between them (seat 1 throws what it draws)."""
    if name == "classic":
        return f"{_wild(name)} Qs Th"  # the wild comes from the stock: no morto holds it
    if name == "burako":
        return "Th Qs Kh Jc Kd"  # Kd: seat 0's draw in the turn after the indirect morto
    if name.startswith("thirteen"):
        return "Th Qs 4c"  # 13 cards: the 4c makes a set with the 4s 4d held
    return "Th Qs Kh"


def _play_to_the_wild(name: str) -> tuple[Scenario, list[str]]:
    """Play until seat 0 holds the wild alone; returns the scenario and every card seat 0 laid."""
    t13 = name.startswith("thirteen")
    wild = _wild(name)
    hand0 = f"Ks Kd Kc {RUN} 9c" + (" 4s 4d" if t13 else "")
    s = Scenario(name, hands={0: hand0}, stock=_stock(name),
                 mortos={0: " ".join([*MORTO_SETS, wild])})
    s.draw().meld("Ks Kd Kc").discard("9c").pass_turn()
    laid = ["Ks Kd Kc", RUN, "Th"]
    if name == "classic":
        s.draw("Th").meld(RUN).layoff(1, "Th")
        return s, laid
    s.draw().meld(RUN).layoff(1, "Th")
    if t13:
        s.meld("4s 4d 4c")  # the hand is empty: the morto is taken at once
        s.morto(direct=True)
        laid.append("4s 4d 4c")
    elif name == "burako":
        s.discard("Kh").morto(direct=False)  # the only way burako takes its morto
        s.pass_turn()
        s.draw("Kd").layoff(0, "Kd")
        laid.append("Kd")
    else:
        s.layoff(0, "Kh")  # the hand is empty: the morto is taken at once
        assert s.state.phase == "emptied"
        s.morto(direct=True)
        laid.append("Kh")
    for cards in MORTO_SETS:
        s.meld(cards)
    laid += MORTO_SETS
    return s, laid


@pytest.mark.parametrize("name", PRESETS)
def test_the_last_card_thrown_to_go_out_may_be_a_wild(name: str) -> None:
    s, laid = _play_to_the_wild(name)
    wild = _wild(name)
    assert s.hand(0) == parse_cards(wild)
    assert s.state.phase == "play" and s.turn == 0
    if name not in ("classic", "burako"):
        # The direct morto: seat 0 is still in the turn it emptied its hand in.
        assert s.state.morto_taken == (True, False) and s.state.laid_this_turn
    s.discard(wild).go_out()
    assert s.state.pile[-1] == parse_cards(wild)[0]
    side0 = spec_points(name, " ".join(laid)) + CLEAN + GOING_OUT[name]
    side1 = -spec_points(name, s.hand(1)) - MORTO_PENALTY[name]
    s.end_hand("went_out", (side0, side1))
    assert s.state.results[-1].scores[0].relancinho == 0  # seat 0 laid a set a turn before
    assert s.state.results[-1].scores[0].canastras == {"clean": 1}
