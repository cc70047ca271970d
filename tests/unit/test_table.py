"""Melds and lay-offs on the table (RULES.md §4–6), as the reducer checks them."""

from __future__ import annotations

from buraco_log.cards import parse_cards
from tests.scenario import Scenario


def test_a_meld_comes_from_the_hand() -> None:
    s = Scenario("classic", hands={0: "7h 7s", 1: "7d 7d"}).draw()
    with s.illegal("meld.cards_not_in_hand"):
        s.meld("7h 7s 7d")


def test_an_invalid_meld_names_the_meld_rule_and_the_seat() -> None:
    s = Scenario("classic", hands={0: "7h 7s JK JK 5c"}, jokers=2).draw()
    with s.illegal("meld.too_many_wilds"):
        s.meld("7h 7s JK JK")
    assert s.last_error.seat == 0 and "seat 0" in str(s.last_error)


def test_a_meld_number_is_the_sides_next() -> None:
    s = Scenario("classic", hands={0: "7h 7s 7d"}).draw()
    with s.illegal("meld.wrong_id"):
        s.meld("7h 7s 7d", meld=3)
    s.meld("7h 7s 7d", meld=0)


def test_mega_allows_one_set_per_rank_per_side() -> None:
    hand = {0: "7h 7s 7d 7c 7h 7s 5c 5d"}
    s = Scenario("mega", hands=hand).draw().meld("7h 7s 7d")
    with s.illegal("meld.second_set_of_rank"):
        s.meld("7c 7h 7s")
    Scenario("classic", hands=hand).draw().meld("7h 7s 7d").meld("7c 7h 7s")


def test_cards_are_laid_off_on_the_sides_own_melds() -> None:
    s = Scenario("classic", hands={0: "3h 4h 5h 6h", 1: "9c 9d 9s 9c"}, stock="Kd Qd Jd")
    s.draw().meld("3h 4h 5h").discard("Kd")
    s.draw().meld("9c 9d 9s").discard("Qd")
    s.draw()
    with s.illegal("layoff.no_such_meld"):
        s.layoff(1, "6h")
    s.layoff(0, "6h")
    assert s.state.melds[0][0].cards == parse_cards("3h 4h 5h 6h")


def test_a_player_never_lays_off_on_an_opponents_meld() -> None:
    s = Scenario("classic", hands={0: "9h 4c", 1: "9c 9d 9s"}, stock="Kd Qd")
    s.draw().discard("4c")
    s.draw().meld("9c 9d 9s").discard("Qd")
    s.draw()
    # Seat 0's side has no meld 0: the nines belong to the other side.
    with s.illegal("layoff.no_such_meld"):
        s.layoff(0, "9h")


def test_a_lay_off_that_breaks_the_meld_is_refused_with_the_meld_rule() -> None:
    s = Scenario("classic", hands={0: "3h 4h 5h 8h JK 2c"}, jokers=2)
    s.draw().meld("3h 4h 5h JK")
    with s.illegal("meld.too_many_wilds"):
        s.layoff(0, "2c")
    with s.illegal("meld.run_not_consecutive"):
        s.layoff(0, "8h")


def test_laying_off_turns_a_meld_into_a_canastra_and_updates_its_class() -> None:
    s = Scenario("classic", hands={0: "3h 4h 5h 6h 7h 8h JK 2c"}, jokers=2)
    s.draw().meld("3h 4h 5h 6h 7h JK")
    assert s.state.melds[0][0].canastra is None
    s.layoff(0, "8h")
    assert s.state.melds[0][0].canastra == "dirty"


def test_a_dirty_canastra_turns_clean_when_its_2_finds_its_place() -> None:
    s = Scenario("classic", hands={0: "2h 4h 5h 6h 7h 8h 9h 3h"})
    s.draw().meld("2h 4h 5h 6h 7h 8h 9h")
    assert s.state.melds[0][0].canastra == "dirty"
    s.layoff(0, "3h")
    assert s.state.melds[0][0].canastra == "clean"


def test_nothing_is_laid_off_with_no_cards() -> None:
    s = Scenario("classic", hands={0: "3h 4h 5h"}).draw().meld("3h 4h 5h")
    with s.illegal("layoff.no_cards"):
        s.layoff(0, "")
