"""Probe 44: a morto taken in rules without a morto is named for the missing morto.

docs/rules.md ("Which rule a refusal names") puts a move the rules lack at all ahead of the
turn's place and phase: RULES.md §3 deals no morto in `classic` before §4 orders a turn, as a
redraw in rules without one is `draw.redraw_not_allowed` whoever sends it. So a `MortoTaken`
in `classic` is `morto.not_available` whoever sends it, before or after the draw (it was
`turn.must_draw_first` before the draw). Where the preset has a morto the move exists, and
the usual order holds: the turn's phase first, the morto already taken after it.
"""

from __future__ import annotations

import pytest

from tests.scenario import Scenario, refused

MORTO_PRESETS = ("biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
                 "burako")


@pytest.mark.parametrize("players", [2, 3, 4, 6])
@pytest.mark.parametrize("direct", [True, False])
def test_classic_names_the_missing_morto_in_every_phase_and_for_every_seat(
        players: int, direct: bool) -> None:
    s = Scenario("classic", players)
    words = ("classic has no morto", "going out")
    refused(s, "morto.not_available", words, "morto", direct)  # before the draw
    refused(s, "morto.not_available", (*words, "seat 1"), "morto", direct, seat=1)  # not its turn
    refused(s, "morto.not_available", (*words, "seat 9"), "morto", direct, seat=9)  # no seat 9
    s.draw()
    refused(s, "morto.not_available", words, "morto", direct)  # 12 cards still in hand
    assert s.last_error.seat == 0


def test_classic_the_hand_over_comes_before_the_missing_morto() -> None:
    """The match and the hand come first (docs/rules.md): after a going out, `hand.over`."""
    s = Scenario("classic", hands={0: "3h 4h 5h 6h 7h 8h 9h Kc Kd Ks 5s"}, stock="Kh")
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Kc Kd Ks Kh").discard("5s")
    refused(s, "morto.not_available", ("classic has no morto",), "morto", False)  # emptied
    s.go_out()
    refused(s, "hand.over", ("went out",), "morto", False)
    refused(s, "hand.over", ("went out",), "morto", True, seat=1)


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_where_the_morto_exists_the_turn_comes_first(name: str) -> None:
    s = Scenario(name)
    refused(s, "turn.must_draw_first", ("must draw",), "morto", True)
    refused(s, "turn.not_your_turn", ("seat 1",), "morto", False, seat=1)
    refused(s, "turn.no_such_seat", ("no seat 9",), "morto", True, seat=9)
    s.draw()
    refused(s, "turn.wrong_phase", ("still holds",), "morto", True)


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_a_side_that_took_its_morto_is_told_to_draw_first(name: str) -> None:
    """The morto taken by a discard; at the taker's next turn, before the draw, another
    `MortoTaken` breaks the phase (§4) before the morto already taken (§7)."""
    run = "3h 4h 5h 6h 7h 8h 9h" + (" Th Jh" if name.startswith("thirteen") else "")
    s = Scenario(name, hands={0: f"{run} Kc Kd Ks Qd"}, stock="Kh")
    s.draw("Kh").meld(run).meld("Kc Kd Ks Kh").discard("Qd").morto(direct=False)
    s.pass_turn()  # seat 1
    for direct in (True, False):
        refused(s, "turn.must_draw_first", ("must draw",), "morto", direct)
    refused(s, "turn.not_your_turn", ("seat 1",), "morto", False, seat=1)


@pytest.mark.parametrize("name", ["thirteen", "burraco", "mega", "burako"])
def test_a_retraction_without_vulnerability_keeps_the_turn_first(name: str) -> None:
    """Vulnerability is RULES.md §10, after §4's turn: the draw is named first, then, once
    drawn, that nothing is to be taken back."""
    s = Scenario(name, hands={0: "7h 7s 7d 4c 5d 6s 9c Tc Jd 3s Kd"})
    refused(s, "turn.must_draw_first", ("must draw",), "retract", "7h 7s 7d")
    s.draw().meld("7h 7s 7d")
    refused(s, "vulnerable.retract_not_needed", ("takes its",), "retract", "7h 7s 7d")
