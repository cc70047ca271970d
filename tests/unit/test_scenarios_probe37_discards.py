"""Probe 37, the discard (RULES.md §4.3): "Discard exactly one card, which ends the turn".
No preset restricts *which* card: a card that could be laid off on one of the side's melds,
a wild, the last card that takes the morto or goes out may all be thrown.

- Every preset: the fourth seven thrown beside the side's set of sevens, and a card that fits
  the partner's run (four players).
- Every preset with jokers: a joker thrown; with none in the material there is none to throw.
- `classic`: a relancinho closed by throwing a king that fits the run just laid: still the
  whole hand down in one turn (RULES.md §7, "a final discard is allowed"), scored by hand.
- `biriba`: the last card thrown to take the morto indirectly fits the run on the table.
- `thirteen`: after a must-use-top pickup the turn ends only once the top card is laid; then a
  card fitting the top card's meld may be thrown.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
JOKER_PRESETS = ("thirteen", "thirteen-quick", "burraco", "mega", "burako")

# Seat 1's hand in the scored cases: 15 + 15 + 5 + 5 + 5 + 10 + 10 + 10 + 5 + 5 + 10 = 95.
HAND1 = "Ac Ad 3c 5d 7s 9d Jc Kc 4s 6c 8d"


PAD = ("4d 6c 8c Th Qd 3c Jh Js Kh As 5d 3d Qh", "4c 6d 8d Tc Qs 3s Jd Kc 9c Ah 5c 3h Qc")


def _hand(name: str, cards: str, pad: int = 0) -> str:
    """``cards`` padded with cards that meet no test's meld, to the preset's hand size."""
    size = 13 if name.startswith("thirteen") else 11
    have = cards.split()
    return " ".join(have + PAD[pad].split()[: size - len(have)])


@pytest.mark.parametrize("name", PRESETS)
def test_the_fourth_seven_may_be_thrown_beside_the_sides_set_of_sevens(name: str) -> None:
    s = Scenario(name, hands={0: _hand(name, "7h 7s 7d 7c 9s Jc")}, stock="Kd")
    s.draw("Kd").meld("7h 7s 7d")
    # The 7c fits the set: throwing it is allowed all the same.
    s.discard("7c")
    assert s.state.pile[-1] == parse_cards("7c")[0]
    assert s.turn == 1 and len(s.hand(0)) == len(_hand(name, "").split()) - 3
    # One discard ends the turn: the same seat may not throw again.
    refused(s, "turn.not_your_turn", ("seat 0",), "discard", "9s", seat=0)


@pytest.mark.parametrize("name", PRESETS)
def test_a_card_on_the_table_is_no_card_to_throw(name: str) -> None:
    s = Scenario(name, hands={0: _hand(name, "7h 7s 7d 9s Jc")}, stock="Kd")
    s.draw("Kd").meld("7h 7s 7d")
    refused(s, "discard.card_not_in_hand", ("7",), "discard", "7d")
    s.discard("Jc")
    assert s.turn == 1


@pytest.mark.parametrize("name", PRESETS)
def test_four_players_a_card_fitting_the_partners_run_may_be_thrown(name: str) -> None:
    # Seat 0 lays 5s 6s 7s; its partner (seat 2) throws the 8s that would go on it.
    hands = {0: _hand(name, "5s 6s 7s"), 2: _hand(name, "8s 9h", 1)}
    s = Scenario(name, 4, hands=hands, stock="Kd Kh Qh Qc")
    s.draw("Kd").meld("5s 6s 7s").discard("Kd")
    s.pass_turn()
    s.draw("Qh")
    s.discard("8s")
    assert s.state.pile[-1] == parse_cards("8s")[0] and s.turn == 3
    assert [m.cards for m in s.state.melds[0]] == [parse_cards("5s 6s 7s")]


@pytest.mark.parametrize("name", JOKER_PRESETS)
def test_a_joker_may_be_thrown(name: str) -> None:
    s = Scenario(name, hands={0: _hand(name, "JK 9s")}, stock="Kd")
    s.draw("Kd").discard("JK")
    assert s.state.pile[-1] == parse_cards("JK")[0]
    # Its one joker is gone: there is no second one in the hand to throw next time.
    s.pass_turn()
    s.draw()
    refused(s, "discard.card_not_in_hand", ("JK",), "discard", "JK")


def test_classic_relancinho_closed_by_throwing_a_card_that_fits_the_run() -> None:
    hand0 = "5h 6h 7h 8h 9h Th Jh Qs Qd Qc Kh"
    s = Scenario("classic", hands={0: hand0, 1: HAND1}, stock="Qh")
    s.draw("Qh").meld("5h 6h 7h 8h 9h Th Jh").meld("Qs Qd Qc").layoff(0, "Qh")
    # The Kh would make the run 5..K; it is thrown instead, and the hand is empty.
    s.discard("Kh").go_out()
    assert spec_points("classic", HAND1) == 95
    # Run 5h..Qh: 5 + 5 + 5 + 10 x 5 = 65; queens 30; clean canastra 200; going out 50;
    # relancinho 100 (the whole hand down in this one turn, the final discard allowed).
    side0 = 65 + 30 + 200 + 50 + 100
    refused(s, "score.mismatch", ("side 0", "recomputed 445"), "end_hand", "went_out",
            (side0 - 100, -95))
    s.end_hand("went_out", (side0, -95))
    assert s.state.results[0].scores[0].relancinho == 100


def test_biriba_the_last_card_thrown_for_the_morto_fits_the_run() -> None:
    hand0 = "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc Th"
    s = Scenario("biriba", hands={0: hand0}, stock="Kh")
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Ks Kd Kc Kh")
    refused(s, "turn.wrong_phase", ("still holds 1",), "morto", False)
    s.discard("Th")  # fits the run: thrown all the same, the hand is empty
    s.morto(direct=False)
    assert s.state.morto_taken[0] and len(s.hand(0)) == 11 and s.turn == 1


def test_thirteen_after_the_pickup_a_card_fitting_the_tops_meld_may_be_thrown() -> None:
    hand0 = _hand("thirteen", "9c 9d 9s Ts 4h")
    s = Scenario("thirteen", hands={0: hand0}, upcard="9h", stock="Kd")
    s.take_pile()
    # The top card is not laid yet: no discard ends the turn (RULES.md §4.1).
    refused(s, "pile.must_use_top", ("9",), "discard", "Ts")
    s.meld("9c 9d 9h")
    s.discard("9s")  # the fourth nine fits the set just laid
    assert s.turn == 1 and s.state.pile == tuple(parse_cards("9s"))
