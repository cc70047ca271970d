"""Probe 35, the points of every kind of card in every preset (RULES.md §9's card table), as
the opponent's hand at a going out: a joker (where the material has one), a 2, an ace, a
low and some high cards, and the morto not taken where there is one.

The totals below are added up by hand from RULES.md §9 (joker / 2 / ace / 8..K / 3..7:
classic family 10 / 10 / 15 / 10 / 5 but no jokers in the material, thirteen 50 / 10, burraco
30 / 20, mega and burako 50 / 10), not with tests/spec_points.py and never from the engine.
"""

from __future__ import annotations

import pytest

from tests.scenario import refused
from tests.unit.closing_hands import SIDE0, closing_hand

NO_JOKER = "2c 2d Ad Kc 7s 3c 8d 9d Td Jc Qc"
WITH_JOKER = "JK 2d Ad Kc 7s 3c 8d 9d Td Jc Qc"
HELD = {
    # 2c 10 + 2d 10 + Ad 15 + Kc 10 + 7s 5 + 3c 5 + 8d 9d Td Jc Qc 50
    "classic": (NO_JOKER, 105, 0),
    "biriba": (NO_JOKER, 105, 100),
    "bossa-nova": (NO_JOKER, 105, 100),
    # JK 50 + 2d 10 + 15 + 10 + 5 + 5 + 50, and 3s 5s: 10 more
    "thirteen": (WITH_JOKER + " 3s 5s", 155, 100),
    "thirteen-quick": (WITH_JOKER + " 3s 5s", 155, 100),
    # jolly 30, pinella 20
    "burraco": (WITH_JOKER, 135, 100),
    "mega": (WITH_JOKER, 145, 100),
    "burako": (WITH_JOKER, 145, 100),
}


@pytest.mark.parametrize("name", sorted(HELD))
def test_every_kind_of_card_left_in_hand(name: str) -> None:
    held, points, morto = HELD[name]
    s, _ = closing_hand(name, held1=held)
    side1 = -points - morto
    # Every card at the classic family's values (joker 10, 2 10) is one reading off where the
    # preset has other values; a 2 at 20 is one reading off everywhere but burraco.
    classic_values = 105 if "JK" in held else None
    if classic_values is not None and not name.startswith("thirteen"):
        refused(s, "score.mismatch", ("side 1",), "end_hand", "went_out",
                (SIDE0[name], -classic_values - morto))
    if name != "burraco":
        refused(s, "score.mismatch", ("side 1",), "end_hand", "went_out",
                (SIDE0[name], side1 - 10))
    s.end_hand("went_out", (SIDE0[name], side1))
    sc = s.state.results[0].scores[1]
    assert (sc.hand_penalty, sc.morto_penalty) == (points, morto)
