"""Probe 32, melds (RULES.md §5): the 2 of a run's own suit, natural where it can stand in its
own place and a wild where it cannot, played move by move in every preset; a refusal is checked
for its rule id, its seq and its words.

RULES.md §5: "At most one wild card per meld" and "a 2 is read as natural whenever the meld is
valid with it read that way". 5♠ 6♠ 7♠ 2♠ cannot hold the 2♠ in its own place, so the 2♠ is its
wild; one more wild is two. The engine used to report the failed natural reading instead
("not consecutive even with the wild filling one gap", meld.run_not_consecutive) though 5-6-7 is
consecutive and either 2 alone makes a run.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.rules import PRESETS, preset
from buraco_log.wilds import describe_wild, wild_place
from tests.scenario import Scenario, refused

ALL = sorted(PRESETS)
JOKER_PRESETS = ("thirteen", "thirteen-quick", "burraco", "mega", "burako")  # RULES.md §11


def _wild(s: Scenario, meld: int) -> int | None:
    """The wild of side 0's meld ``meld`` as the engine reads it (None: every card natural)."""
    place = wild_place(s.state.melds[0][meld].cards, s.rules)
    return None if place is None else place.card


@pytest.mark.parametrize("name", ALL)
def test_a_runs_own_2_out_of_its_place_is_its_wild_so_another_2_is_one_wild_too_many(
    name: str,
) -> None:
    s = Scenario(name, hands={0: "5s 6s 7s 2s 2h 3s 4s"}, stock="Kd")
    s.draw("Kd")
    refused(s, "meld.too_many_wilds", ("2 wild", "at most one"), "meld", "5s 6s 7s 2s 2h")
    s.meld("5s 6s 7s 2s")
    assert _wild(s, 0) == parse_cards("2s")[0]  # the 2♠ stands as the 4 or the 8
    refused(s, "meld.too_many_wilds", ("2 wild",), "layoff", 0, "2h")
    # The 3♠ and 4♠ bring the run down to the 2♠'s own place: it is natural, the run has no
    # wild, and the 2♥ may join as its one wild.
    s.layoff(0, "3s 4s")
    assert _wild(s, 0) is None
    s.layoff(0, "2h")
    assert _wild(s, 0) == parse_cards("2h")[0]
    s.discard("Kd")
    assert s.turn == 1


@pytest.mark.parametrize("name", JOKER_PRESETS)
def test_a_joker_beside_a_runs_own_2_out_of_its_place_is_one_wild_too_many(name: str) -> None:
    s = Scenario(name, hands={0: "5s 6s 7s 2s JK Js Ks"}, stock="Kd")
    s.draw("Kd")
    refused(s, "meld.too_many_wilds", ("2 wild",), "meld", "5s 6s 7s 2s JK")
    # J K with a joker and the 2♠: J-Q-K-A with two wilds (the 2♠ natural would need the
    # queen and the ace filled: no reading holds, and the wilds are what is wrong).
    refused(s, "meld.too_many_wilds", ("2 wild",), "meld", "Js Ks JK 2s")
    s.meld("Js Ks 2s")  # one wild: the 2♠ as the queen
    assert _wild(s, 0) == parse_cards("2s")[0]


@pytest.mark.parametrize("name", ALL)
def test_the_wrap_stays_the_wrap_when_the_runs_own_2_would_turn_the_corner(name: str) -> None:
    # RULES.md §5 and docs/rules.md "Which rule a wrap breaks": held by this probe.
    s = Scenario(name, hands={0: "Qs Ks As 2s 2h Js"}, stock="Kd")
    s.draw("Kd")
    refused(s, "meld.run_wraps", ("wraps",), "meld", "Qs Ks As 2s 2h")
    s.meld("Qs Ks As 2s")  # Q-K-A with the 2♠ as the jack
    s.layoff(0, "Js")  # the jack arrives: the 2♠ moves down to the ten
    place = wild_place(s.state.melds[0][0].cards, s.rules)
    assert place is not None and (place.card, place.kind, place.ranks) == (
        parse_cards("2s")[0], "end", (10,))
    refused(s, "meld.run_wraps", ("wraps",), "layoff", 0, "2h")


@pytest.mark.parametrize(("name", "style", "said"), [
    ("thirteen", "ascii", "JK as the A, at either end"),
    ("burako", "tiles", "JK as the 1, at either end"),
])
def test_the_wild_of_a_2_to_k_run_is_named_as_the_ace_once(
    name: str, style: str, said: str
) -> None:
    # The run 2..K (the 2 natural) with a joker: the joker is the ace, below the 2 or above
    # the king. It was described "at either end, as the A or the A".
    cards = parse_cards("2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks JK")
    place = wild_place(cards, preset(name))
    assert place is not None and place.ranks == (1, 14) and place.ends == ("low", "high")
    assert describe_wild(cards, preset(name), style) == said  # type: ignore[arg-type]
    # Two different ranks at the two ends are still both named.
    assert describe_wild(parse_cards("3s 4s JK"), preset(name), "ascii") == (
        "JK at either end, as the 2 or the 5")
