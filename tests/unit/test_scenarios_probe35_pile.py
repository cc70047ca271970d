"""Probe 35, the discard pile (RULES.md §4, §8):

- The whole pile, never part of it, in the joker presets too (`burraco`, `mega`, `burako`,
  `thirteen-quick` with a usable top).
- No pile is ever frozen: a wild on top of a free pile (`biriba`'s 2, `burraco`'s joker) is
  taken like any card, with no meld needed, and may be thrown back.
- `thirteen-quick` (must use top): the top card laid off on the side's own meld is a use; a top
  card the hand cannot use refuses the pickup; a joker on top may be laid off on a clean run,
  not on one that holds a wild already (one wild per meld, RULES.md §5).
- `mega`: at the stock floor of two, the player to move may still take a free pile; the next
  player who must draw ends the hand, and the two stock cards are never drawn.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import format_card, parse_cards
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points


@pytest.mark.parametrize("name", ["burraco", "mega", "burako", "biriba"])
def test_the_whole_pile_in_every_free_preset(name: str) -> None:
    s = Scenario(name, hands={0: "4c 9d", 1: "Kh 6s"}, stock="5c 7d 8s")
    s.draw("5c").discard("4c")
    s.draw("7d").discard("Kh")
    pile = s.state.pile
    assert pile[-2:] == parse_cards("4c Kh")
    assert len(pile) == (3 if s.rules.initial_upcard else 2)
    refused(s, "pile.whole_pile", ("never part",), "take_pile", 1)
    if len(pile) == 3:
        refused(s, "pile.whole_pile", ("never part",), "take_pile", 2)
    s.take_pile()
    assert len(s.hand(0)) == 11 + len(pile) and s.state.pile == ()
    s.discard("9d")
    assert s.state.pile == parse_cards("9d")


@pytest.mark.parametrize(("name", "wild"), [("biriba", "2d"), ("burraco", "JK"),
                                            ("classic", "2s")])
def test_a_wild_on_top_freezes_nothing_it_is_taken_and_thrown_back(name: str, wild: str) -> None:
    s = Scenario(name, hands={0: wild}, stock="5c 7d")
    s.draw("5c").discard(wild)
    s.draw("7d").discard("7d")  # seat 1 leaves the wild under its 7
    s.take_pile()  # no meld needed to take it (free pile)
    assert parse_cards(wild)[0] in s.hand(0)
    s.discard(wild)  # and the wild may go straight back
    assert s.state.pile[-1] == parse_cards(wild)[0] and s.turn == 1


# -- thirteen-quick: must use the top card --------------------------------------------------

# Besides the run, ten cards of ten ranks and no two of a suit within two ranks of each
# other, and no wild: the hand alone can use no top card but one that fits the run.
REST0 = "Ah 3c 4d 7s 8c 9d Ts Jh Qc Kd"
HAND0 = "5h 6h 7h " + REST0
HAND1 = "8h 9h Td Jc Qd Kd 4s 6c 8c Tc 3d As 5s"


@pytest.mark.parametrize(("thrown", "usable"), [("8h", True), ("9h", False)])
def test_thirteen_quick_the_top_laid_off_on_the_sides_own_run(thrown: str, usable: bool) -> None:
    s = Scenario("thirteen-quick", hands={0: HAND0, 1: HAND1}, stock="Ad 6d Kh",
                 upcard="4h")
    s.draw("Ad").meld("5h 6h 7h").discard("Ad")
    s.draw("6d").discard(thrown)
    if not usable:
        # 9h: no 8h to bridge to 5-6-7, only one other 9 (the 9d), no wild in the hand.
        refused(s, "pile.must_use_top", (), "take_pile")
        s.draw("Kh").discard("Kh")
        return
    s.take_pile()
    refused(s, "pile.must_use_top", (), "discard", "3c")  # the 8h is still to be laid
    s.layoff(0, "8h").discard("3c")
    assert len(s.state.melds[0][0].cards) == 4 and s.turn == 1


@pytest.mark.parametrize("run_has_wild", [False, True])
def test_thirteen_quick_a_joker_on_top_goes_onto_a_clean_run_only(run_has_wild: bool) -> None:
    hand0 = ("5h 6h 2c " if run_has_wild else "5h 6h 7h ") + REST0
    s = Scenario("thirteen-quick", hands={0: hand0, 1: "JK " + HAND1[3:]}, stock="Ad 6d 9d",
                 upcard="4h")
    s.draw("Ad").meld(hand0[:8]).discard("Ad")
    s.draw("6d").discard("JK")
    if run_has_wild:
        # 5-6-2c holds its wild already, and no two cards of the hand make a meld with it.
        refused(s, "pile.must_use_top", (), "take_pile")
        return
    s.take_pile()
    s.layoff(0, "JK").discard("3c")
    m = s.state.melds[0][0]
    assert len(m.cards) == 4 and m.canastra is None


# -- mega: the floor of two and a free pile -------------------------------------------------

def test_mega_at_the_floor_the_pile_may_be_taken_then_the_hand_ends() -> None:
    s = Scenario("mega", stock="Kd")
    while len(s.state.stock) > 2:
        s.pass_turn()
    refused(s, "stock.floor_reached", ("floor 2",), "draw")
    n = len(s.state.pile)
    seat = s.turn
    s.take_pile()
    assert len(s.hand(seat)) == 11 + n and len(s.state.stock) == 2
    s.discard(format_card(s.hand(seat)[0]))
    refused(s, "stock.floor_reached", ("floor 2",), "draw")
    held = [spec_points("mega", s.hand(p)) for p in (0, 1)]
    # No meld, no morto taken: each side pays its hand and its morto (RULES.md §9).
    scores = (-held[0] - 100, -held[1] - 100)
    refused(s, "score.mismatch", ("side",), "end_hand", "stock_out",
            (scores[0] + 100, scores[1] + 100))
    s.end_hand("stock_out", scores)

