"""Probe 42, the stock running out in every preset (RULES.md §8): when the player who must
draw finds the stock at its floor (0 cards; 2 in `mega`) and does not (under must-use-top:
cannot) take the pile, the hand ends, and not a draw earlier; nobody went out, so every side
pays the cards in its hands and, where there is a morto, the morto it never took (§9).

Both seats hold the same cards, one of each rank but the 2 (and a second 4 with 13 cards),
no two of a suit within two ranks: no card on top of the pile goes into a meld with two of
them, so under must-use-top the pile cannot be taken and the floor ends the hand there too.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.events import CardDrawn, HandStarted
from buraco_log.reducer import Replayer
from tests.scenario import Scenario
from tests.unit.hand_scores import MORTO_NOT_TAKEN, PRESETS, points

HAND_13 = "Ac 4c 7c Tc 3d 6d 9d Qd 5h 8h Jh Ks 4s"
KING = parse_cards("Kd")[0]
FLOOR = {name: 2 if name == "mega" else 0 for name in PRESETS}


def _scenario(name: str, last: int = KING) -> tuple[Scenario, str]:
    cards = HAND_13 if name.startswith("thirteen") else " ".join(HAND_13.split()[:11])
    s = Scenario(name, hands={0: cards, 1: cards})
    # The last card drawn is ``last``; K♦ (beside Q♦ only): whoever faces it at the floor
    # cannot use it; 4♦ goes with the two 4s.
    deal = s.events[1]
    assert isinstance(deal, HandStarted)
    stock = list(deal.stock)
    stock.remove(last)
    stock.insert(len(stock) - FLOOR[name], last)
    s.rep = Replayer()
    s.events[1] = msgspec.structs.replace(deal, stock=tuple(stock))
    for ev in s.events:
        s.rep.step(ev)
    return s, cards


@pytest.mark.parametrize("name", PRESETS)
def test_the_hand_ends_at_the_stock_floor_and_not_before(name: str) -> None:
    s, cards = _scenario(name)
    floor = FLOOR[name]
    while len(s.state.stock) > floor:
        with s.illegal("hand.not_over"):
            s.end_hand("stock_out")
        s.pass_turn()
    assert s.state.pile[-1] == KING and s.state.phase == "draw"
    with s.illegal("stock.floor_reached"):  # a draw at the floor, of any card named
        s.push(CardDrawn(s.turn, s.state.stock[0] if floor else KING, seq=s.rep.seq + 1))
    lost = -points(name, cards) - MORTO_NOT_TAKEN[name]
    with s.illegal("score.mismatch"):
        s.end_hand("stock_out", (lost, lost - 1))
    s.end_hand("stock_out", (lost, lost))
    assert s.state.totals == (lost, lost)
    assert s.state.results[-1].went_out is None


@pytest.mark.parametrize("name", PRESETS)
def test_at_the_floor_a_pile_that_can_be_used_is_taken_under_must_use_top_only(
        name: str) -> None:
    four = parse_cards("4d")[0]
    s, cards = _scenario(name, four)
    while len(s.state.stock) > FLOOR[name]:
        s.pass_turn()
    assert s.state.pile[-1] == four
    if s.rules.pile_pickup == "free":  # the player chooses not to take it: the hand ends
        lost = -points(name, cards) - MORTO_NOT_TAKEN[name]
        s.end_hand("stock_out", (lost, lost))
        return
    with s.illegal("stock.pile_can_be_taken"):
        s.end_hand("stock_out")
    s.take_pile().meld("4c 4s 4d")
    assert s.state.pile_top is None
