"""Probe 39, must-use-top when the top card's meld would leave one card (RULES.md §4, §7):

RULES.md §4 lets a `thirteen` player take the pile when its top card "is used in the same
turn ... in a new meld with at least two cards from the hand". After the morto, with no
canastra yet, K♣ K♦ 9♥ in hand, a run 3♥..8♥ on the table and K♠ on top: the kings would
leave the 9♥, which cannot be thrown (going out needs a canastra), but the 9♥ laid off first
makes the run a canastra, and the kings then go out. That is a legal turn, so the pickup is
allowed; the engine used to refuse it ("without being left with no card to throw"), and also
refused a lay before the top's that left the same position. With a run of five the 9♥ makes
no canastra and the pickup is refused, as before.

The card left may also be the pile's and go into the top's own meld: with the 7♥ alone in hand
and 9♥ 8♥ in the pile, 7♥ 8♥ 9♥ on the run 3♥..6♥ make it a canastra and go out.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

SIX = ("3h 4h 5h 6h 7h 8h", "Jc Jd Js Jh")  # thirteen cards with the queens
FIVE = ("4h 5h 6h 7h 8h", "Jc Jd Js Jh Jc")
H1 = "Qc Qd Ks 3c 7s 9c Tc Ah 8d 5s Js 2c 4s"  # no heart run, no king pair
MORTO = "Kc Kd 9h 5s 5d 5h 6c 6d 6s 6h Qh"  # the last turn keeps K♣ K♦ 9♥
MORTO_Q = "Kc Kd 9h Qs 5s 5d 5h 6c 6d 6s Qh"  # ... and a Q♠ besides


def _to_the_pickup(name: str, run: str, jacks: str, morto: str) -> Scenario:
    """Seat 0 lays the run, the queens and the jacks and throws its last card (the morto,
    indirectly); plays the morto down to three or four cards; seat 1 takes the pile for the
    Q♥ and throws K♠: seat 0 is to draw, the pile one K♠."""
    s = Scenario(name, hands={0: f"{run} Qc Qd Qs {jacks}", 1: H1}, mortos={0: morto},
                 stock="4d Ad 5c 8s", upcard="4c")
    s.draw("4d").meld(run).meld("Qc Qd Qs").meld(jacks).discard("4d").morto(direct=False)
    s.draw("Ad").discard("Ad")
    s.draw("5c").meld("5s 5d 5h 5c")
    s.meld("6c 6d 6s 6h" if morto == MORTO else "6c 6d 6s").discard("Qh")
    s.take_pile().meld("Qh Qc Qd").discard("Ks")
    assert s.state.pile == parse_cards("Ks")
    return s


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_the_top_is_taken_when_the_card_it_would_leave_first_makes_a_canastra(
        name: str) -> None:
    s = _to_the_pickup(name, *SIX, MORTO)
    assert sorted(s.hand(0)) == sorted(parse_cards("Kc Kd 9h"))
    s.take_pile()
    # The kings first would keep the 9♥, which could not be thrown: no canastra yet.
    refused(s, "go_out.needs_canastra", ("canastra",), "meld", "Kc Kd Ks")
    s.layoff(0, "9h")  # 3♥..9♥: a clean canastra
    assert s.state.melds[0][0].canastra == "clean"
    s.meld("Kc Kd Ks").go_out()
    laid = "3h 4h 5h 6h 7h 8h 9h Qc Qd Qs Jc Jd Js Jh 5s 5d 5h 5c 6c 6d 6s 6h Kc Kd Ks"
    assert spec_points(name, laid) == 185
    side0 = 185 + 200 + 100
    side1 = spec_points(name, "Qh Qc Qd") - spec_points(name, s.hand(1)) - 100
    s.end_hand("went_out", (side0, side1))


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_the_top_is_refused_when_the_card_left_makes_no_canastra(name: str) -> None:
    s = _to_the_pickup(name, *FIVE, MORTO)
    refused(s, "pile.must_use_top", ("Ks", "canastra"), "take_pile")
    s.draw("8s")


def test_a_lay_before_the_top_may_leave_the_canastra_to_make_first() -> None:
    s = _to_the_pickup("thirteen", *SIX, MORTO_Q)
    assert sorted(s.hand(0)) == sorted(parse_cards("Kc Kd 9h Qs"))
    s.take_pile()
    # The Q♠ on the queens leaves K♣ K♦ K♠ 9♥: the top is still usable, 9♥ first.
    s.layoff(1, "Qs")
    refused(s, "pile.must_use_top", ("Ks",), "discard", "9h")
    refused(s, "go_out.needs_canastra", ("canastra",), "meld", "Kc Kd Ks")
    s.layoff(0, "9h").meld("Kc Kd Ks").go_out()
    assert s.state.phase == "out"


# -- the card left is the pile's and goes into the top's own meld ---------------------------

H1_B = "8h 3c 7s 9c Tc Ah 8d 2c Kc Kd Ks Td 3d"
MORTO_B = "7h 9h Ac As 4s 5s 5d 5c 6c 6d 6s"


@pytest.mark.parametrize(("run", "queens", "ok"), [
    ("3h 4h 5h 6h", "Qc Qd Qs", True),  # 3♥..9♥: seven, a canastra
    ("4h 5h 6h", "Qc Qd Qs Qh", False),  # 4♥..9♥: six, none
])
def test_the_piles_other_card_completes_the_canastra_of_the_tops_lay_off(
        run: str, queens: str, ok: bool) -> None:
    """Seat 0 holds the 7♥ alone; the pile is 9♥ (its own last discard) under the 8♥. The
    top goes on the run with the 7♥ (RULES.md §4: a lay-off with a card of the hand), which
    would leave the 9♥; with it the run is a canastra and the hand goes out."""
    s = Scenario("thirteen", hands={0: f"{run} {queens} Jc Jd Js Jh Jc Js", 1: H1_B},
                 mortos={0: MORTO_B}, stock="4d Ad 7c 8c", upcard="4c")
    s.draw("4d").meld(run).meld(queens).meld("Jc Jd Js Jh Jc Js").discard("4d")
    s.morto(direct=False)
    s.draw("Ad").discard("Ad")
    s.take_pile().meld("Ad Ac As").meld("4c 4d 4s").meld("5s 5d 5c").meld("6c 6d 6s")
    s.discard("9h")
    s.draw("7c").discard("8h")
    assert s.hand(0) == parse_cards("7h") and s.state.pile == parse_cards("9h 8h")
    if not ok:
        refused(s, "pile.must_use_top", ("8h", "no card to throw", "canastra"), "take_pile")
        return
    s.take_pile()
    refused(s, "go_out.needs_canastra", ("canastra",), "layoff", 0, "7h 8h")
    s.layoff(0, "7h 8h 9h").go_out()
    assert s.state.melds[0][0].canastra == "clean" and s.state.phase == "out"
