"""Probe 38, the ace at either end of a run and a wild that moves as cards are laid off
(RULES.md §5, §6), played move by move in every preset:

- Q♠ K♠ A♠ takes a 2♠ (it cannot be the natural 2 past the ace: it is the wild J) and then the
  J♠ (the wild goes to the 10); a K♠ on A♠ 2♠ 3♠ 4♠ would turn the corner.
- A♠ 2♠ 3♠ is clean (the 2♠ in its own place); a 2♦ laid off is its wild, a 4♠ moves it to
  the 5, and a second wild is refused.
- A..K clean (13 cards) takes a second A♠ only in `burako` (ace to ace, 1000); elsewhere the
  run already holds its ace.
- `burako` scores a royal canastra (500) and an ace-to-ace one (1000) in place of the clean 200.
"""

from __future__ import annotations

import pytest

from buraco_log.wilds import describe_wild
from tests.scenario import Scenario, refused

ALL = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
       "burako")


def where(s: Scenario, meld: int = 0) -> str | None:
    return describe_wild(s.state.melds[0][meld].cards, s.rules, "ascii")


@pytest.mark.parametrize("name", ALL)
def test_a_two_after_a_high_ace_is_the_wild_below_the_run(name: str) -> None:
    s = Scenario(name, hands={0: "Qs Ks As 2s Js 5d 8c"}, stock="Kh")
    s.draw("Kh").meld("Qs Ks As")
    s.layoff(0, "2s")  # K-A-2 would wrap: the 2♠ is the wild J
    assert where(s) == "2s as the J, at the low end"
    s.layoff(0, "Js")  # the natural J takes the place, the wild goes to the 10
    assert where(s) == "2s as the 10, at the low end"
    assert s.state.melds[0][0].kind == "run"


@pytest.mark.parametrize("name", ALL)
def test_a_king_on_a_low_ace_run_turns_the_corner(name: str) -> None:
    s = Scenario(name, hands={0: "As 2s 3s 4s Ks 5d 8c"}, stock="Kh")
    s.draw("Kh").meld("As 2s 3s 4s")
    assert where(s) is None  # A-2-3-4: the 2♠ stands in its own place
    refused(s, "meld.run_wraps", (), "layoff", 0, "Ks")
    s.discard("Ks")
    assert s.turn == 1


@pytest.mark.parametrize("name", ALL)
def test_a_natural_two_stays_natural_and_a_second_wild_is_refused(name: str) -> None:
    s = Scenario(name, hands={0: "As 2s 3s 2d 4s 2h 9c"}, stock="Kh")
    s.draw("Kh").meld("As 2s 3s")
    assert where(s) is None
    s.layoff(0, "2d")  # A-2-3 and a wild: it can only be the 4
    assert where(s) == "2d as the 4, at the high end"
    s.layoff(0, "4s")
    assert where(s) == "2d as the 5, at the high end"
    refused(s, "meld.too_many_wilds", (), "layoff", 0, "2h")


@pytest.mark.parametrize("name", ALL)
def test_a_second_ace_on_a_run_a_to_k(name: str) -> None:
    # Fourteen cards in hand (house rules) so that A..K goes down in one meld with two left.
    s = Scenario(name, hands={0: "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs 6d 8c"},
                 stock="Ks 5h As", hand_size=14)
    s.draw("Ks").meld("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks").discard("6d")
    burako = name == "burako"
    assert s.state.melds[0][0].canastra == ("royal" if burako else "clean")
    s.pass_turn()
    s.draw("As")
    if burako:
        s.layoff(0, "As")
        assert s.state.melds[0][0].canastra == "ace_to_ace"
    else:
        refused(s, "meld.duplicate_in_run", (), "layoff", 0, "As")
        s.discard("As")


# -- burako: royal and ace-to-ace canastras, tatus in hand ---------------------------------------

# Side 1 holds a tatu (50) and a 2 (10): 50 + 10 + 3s 5d 7s 4s 6c 5 each (25) + 9d Jc Kc 8d 10
# each (40) = 125. It never takes its morto: -100.
HAND1_T = "JK 2c 3s 5d 7s 9d Jc Kc 4s 6c 8d"


def burako_run(morto: str, last: str) -> Scenario:
    """Seat 0 lays A..J of spades, throws the 5d (its morto, indirectly); the next turn it lays
    the Q♠ K♠ of the morto on the run, then kings, nines and fours."""
    s = Scenario("burako", hands={0: "As 2s 3s 4s 5s 6s 7s 8s 9s Ts 5d", 1: HAND1_T},
                 mortos={0: morto}, stock=f"Js 8h {last}")
    s.draw("Js").meld("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js").discard("5d").morto(direct=False)
    s.pass_turn()
    s.draw(last).layoff(0, "Qs Ks")
    assert s.state.melds[0][0].canastra == "royal"
    return s


def test_burako_ace_to_ace_scores_1000_in_place_of_the_clean_200() -> None:
    s = burako_run("Qs Ks As Kd Kh Kc 9d 9h 9c 4c 4d", "4h")
    s.layoff(0, "As").meld("Kd Kh Kc").meld("9d 9h 9c").meld("4c 4d 4h")
    s.go_out()  # the last tiles melded: going out needs no discard
    assert s.state.melds[0][0].canastra == "ace_to_ace"
    # Run A..K..A: two aces 30 + 2♠ 10 + 3..7 25 + 8..K 60 = 125; kings 30, nines 30, fours
    # 15: table 200. Ace to ace 1000, going out 100: 1300. Side 1: -125 - 100 = -225.
    refused(s, "score.mismatch", ("side 0", "recomputed 1300"), "end_hand", "went_out",
            (1300 + 200, -225))  # the clean bonus on top: one reading off
    refused(s, "score.mismatch", ("side 1", "recomputed -225"), "end_hand", "went_out",
            (1300, -85 - 100))  # the tatu at 10 (a classic joker): hand 85
    s.end_hand("went_out", (1300, -225))


def test_burako_royal_scores_500_and_the_tatu_in_hand_costs_50() -> None:
    s = burako_run("Qs Ks Kd Kh Kc 9d 9h 9c 4c 4d 5h", "4h")
    s.meld("Kd Kh Kc").meld("9d 9h 9c").meld("4c 4d 4h").discard("5h")
    s.go_out()  # the last tile thrown
    # Run A..K: 15 + 10 + 25 + 60 = 110; kings, nines, fours 75: 185. Royal 500, out 100: 785.
    refused(s, "score.mismatch", ("side 0", "recomputed 785"), "end_hand", "went_out",
            (185 + 200 + 100, -225))  # read as a plain clean canastra
    s.end_hand("went_out", (785, -225))
    sc = s.state.results[0].scores
    assert (sc[0].canastras, sc[1].hand_penalty) == ({"royal": 1}, 125)


# -- burraco: pinella 20 and jolly 30 on the table and in hand, semi-clean 150 -------------------

def test_burraco_pinellas_and_jollies_on_the_table_and_in_hand() -> None:
    hand1 = "2c JK 3s 5d 7s 9d Jc Kc 4s 6c 8d"  # 20 + 30 + 25 + 40 = 115
    s = Scenario("burraco", hands={0: "3c 4c 5c 6c 7c 8c 9c 2d 5h 5s 5d", 1: hand1},
                 mortos={0: "Ah 2h 3h 4h 5h 6h 7h Kd Ks JK 9s"}, stock="Th 8s Kh")
    s.draw("Th").meld("3c 4c 5c 6c 7c 8c 9c 2d").meld("5h 5s 5d").discard("Th")
    assert s.state.melds[0][0].canastra == "semi_clean"  # 3..9 unbroken, the pinella at an end
    s.morto(direct=False)
    s.pass_turn()
    s.draw("Kh").meld("Ah 2h 3h 4h 5h 6h 7h").meld("Kd Ks Kh JK").discard("9s")
    assert s.state.melds[0][2].canastra == "clean"  # the 2♥ is the natural 2: A..7 clean
    s.go_out()
    # Run 3..9 with the 2♦: 25 + 20 + 20 = 65; fives 15; A..7 of hearts: 15 + 20 + 25 = 60;
    # kings 30 + jolly 30 = 60: table 200. Semi-clean 150 + clean 200, going out 100: 650.
    # Side 1: -115 - 100 = -215.
    refused(s, "score.mismatch", ("side 0", "recomputed 650"), "end_hand", "went_out",
            (630, -215))  # the two pinellas at 10
    refused(s, "score.mismatch", ("side 1", "recomputed -215"), "end_hand", "went_out",
            (650, -85 - 100))  # its pinella and jolly at 10 (classic values): hand 85
    s.end_hand("went_out", (650, -215))
