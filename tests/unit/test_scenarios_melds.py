"""Outside-checker scenarios: melds on the table (RULES.md §5–6), accepted and refused with the
rule id and the seq of the refused event, in every preset where the rule differs."""

from __future__ import annotations

import pytest

from buraco_log.cards import format_card, parse_cards
from buraco_log.melds import read_meld
from buraco_log.rules import PRESETS, preset
from tests.scenario import Scenario

ALL = sorted(PRESETS)
JOKER_PRESETS = ("thirteen", "thirteen-quick", "burraco", "mega", "burako")


def _refused(s: Scenario, rule: str, move: str, *args: str | int) -> None:
    """``move`` (a Scenario method) must be refused with ``rule`` at the next seq."""
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args)
    assert s.last_error.seq == seq


def _meld(s: Scenario, side: int, i: int) -> tuple[str, str | None, int]:
    m = s.state.melds[side][i]
    return m.kind, m.canastra, len(m.cards)


# -- semi-clean across the ace (burraco) ---------------------------------------------------
# A..6, a wild for the 7, 8..K: read with the ace low the naturals run 6 and 6, but the same
# cards hold 8-9-10-J-Q-K-A, seven naturals in a row (the ace high, RULES.md §5), so the run is
# semi-clean (§6: "the run still holds 7+ consecutive naturals"). The engine used to read the
# ace low only and called it dirty.
GAP_AT_7 = "Ah 2h 3h 4h 5h 6h JK 8h 9h Th Jh Qh Kh"


@pytest.mark.parametrize("order", [GAP_AT_7, "8h 9h Th Jh Qh Kh Ah 2h 3h 4h 5h 6h JK"])
def test_burraco_a_to_k_with_the_wild_as_the_7_is_semi_clean(order: str) -> None:
    m = read_meld(parse_cards(order), preset("burraco"))
    assert (m.kind, m.size, m.gap, m.canastra) == ("run", 13, 7, "semi_clean")


@pytest.mark.parametrize("gap", [6, 7, 8])
def test_burraco_every_wild_place_of_an_a_to_k_run_holds_seven_naturals(gap: int) -> None:
    ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"]
    cards = " ".join(f"{r}s" for i, r in enumerate(ranks, 1) if i != gap) + " 2d"
    assert read_meld(parse_cards(cards), preset("burraco")).canastra == "semi_clean"


@pytest.mark.parametrize("name", [n for n in JOKER_PRESETS if n != "burraco"])
def test_outside_burraco_the_a_to_k_run_with_a_wild_is_dirty(name: str) -> None:
    assert read_meld(parse_cards(GAP_AT_7), preset(name)).canastra == "dirty"


def test_burraco_the_king_laid_off_makes_a_dirty_run_semi_clean_through_the_ace() -> None:
    # A..6 JK 8..Q is dirty (6 and 5 naturals in a row, no king: the ace is low). The king
    # laid off makes 8..K-A seven in a row: semi-clean, 150 at the hand's end.
    s = Scenario("burraco", hands={0: "Ah 2h 3h 4h 5h 6h JK 8h 9h Th 5c"}, stock="Jh 4c 9c",
                 mortos={0: "Qh Kh 9d 9s 4d 4s 7c 7d 3s 3d 8s"})
    s.draw("Jh").meld("Ah 2h 3h 4h 5h 6h JK 8h 9h Th Jh").discard("5c")
    s.morto(direct=False).pass_turn()
    s.draw("9c").layoff(0, "Qh")
    assert _meld(s, 0, 0) == ("run", "dirty", 12)
    s.layoff(0, "Kh")
    assert _meld(s, 0, 0) == ("run", "semi_clean", 13)
    s.discard("9c")
    t = s.rep._t
    while len(t.stock) > 0:
        s.pass_turn()
    s.end_hand("stock_out")
    side0 = s.state.results[0].scores[0]
    assert side0.canastras == {"semi_clean": 1} and side0.canastra_bonus == 150
    # burraco: jolly 30, pinella 20, ace 15, 3..7 five, 8..K ten
    assert side0.table_points == 15 + 20 + 4 * 5 + 30 + 6 * 10


# -- a natural 2 in its own suit's run, and the one wild ----------------------------------


@pytest.mark.parametrize("name", ALL)
def test_the_runs_own_2_is_natural_so_an_off_suit_2_may_join_and_a_third_2_may_not(
    name: str,
) -> None:
    s = Scenario(name, hands={0: "Ah 2h 3h 4h 5h 6h 2s 2d 9c Kd Qs"}, stock="8c")
    s.draw("8c").meld("Ah 2h 3h 4h 5h 6h")
    assert _meld(s, 0, 0) == ("run", None, 6)
    s.layoff(0, "2s")  # the 2 of spades is the wild (as the 7): seven cards, one wild
    assert _meld(s, 0, 0) == ("run", "dirty", 7)
    _refused(s, "meld.too_many_wilds", "layoff", 0, "2d")
    s.discard("8c")


@pytest.mark.parametrize("name", ALL)
def test_a_meld_of_a_runs_own_2_and_two_wild_2s_is_refused(name: str) -> None:
    s = Scenario(name, hands={0: "2h 3h 2s 2d 9c Kd Qs 4c"}, stock="8c")
    s.draw("8c")
    _refused(s, "meld.too_many_wilds", "meld", "2h 3h 2s 2d")
    s.meld("2h 3h 2s")  # 2h natural, 2s the wild (the ace or the 4)
    assert _meld(s, 0, 0) == ("run", None, 3)


@pytest.mark.parametrize("name", ALL)
def test_a_seventh_natural_laid_off_makes_a_clean_canastra_a_wild_a_dirty_one(name: str) -> None:
    s = Scenario(name, hands={0: "5d 6d 7d 8d 9d Td 4d 2c Kh Qs Jc"}, stock="3c")
    s.draw("3c").meld("5d 6d 7d 8d 9d Td")
    assert _meld(s, 0, 0) == ("run", None, 6)
    s.layoff(0, "4d")
    assert _meld(s, 0, 0) == ("run", "clean", 7)
    s.layoff(0, "2c")  # the wild at an end: eight cards, seven naturals in a row
    want = "semi_clean" if name == "burraco" else "dirty"
    assert _meld(s, 0, 0) == ("run", want, 8)
    s.discard("3c")


@pytest.mark.parametrize("name", ALL)
def test_six_naturals_and_a_wild_make_a_dirty_canastra_of_exactly_seven(name: str) -> None:
    s = Scenario(name, hands={0: "5d 6d 7d 9d Td Jd 2c Kh Qs 3c 4s"}, stock="8c")
    s.draw("8c").meld("5d 6d 7d 2c 9d Td")  # the 2 of clubs as the 8: six cards
    assert _meld(s, 0, 0) == ("run", None, 6)
    s.layoff(0, "Jd")
    assert _meld(s, 0, 0) == ("run", "dirty", 7)


# -- the ace ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_q_k_a_and_a_2_3_are_runs_k_a_3_is_refused_as_a_wrap(name: str) -> None:
    s = Scenario(name, hands={0: "Qs Ks As Ah 2h 3h Kd Ad 3d 9c 8c"}, stock="5c")
    s.draw("5c")
    _refused(s, "meld.run_wraps", "meld", "Kd Ad 3d")
    s.meld("Qs Ks As").meld("Ah 2h 3h")
    assert [(m.kind, m.canastra) for m in s.state.melds[0]] == [("run", None)] * 2
    # the ace is at one end only: the run Q-K-A takes no 2 of its suit as a natural
    _refused(s, "meld.cards_not_in_hand", "layoff", 0, "2s")
    s.discard("5c")


def _feed(s: Scenario, cards: str) -> None:
    """Seat 1 draws and throws each card in turn; seat 0 takes the pile, lays the card off on
    its meld 0 and throws back the 5c (which seat 0 threw first)."""
    for c in cards.split():
        s.draw().discard(c)
        s.take_pile().layoff(0, c).discard("5c")


@pytest.mark.parametrize("name", ALL)
def test_an_ace_high_run_refuses_the_other_ace_at_the_low_end_except_in_burako(
    name: str,
) -> None:
    s = Scenario(name, hands={0: "2s 3s 4s 5s 6s 7s 8s 9s Ts As 8c", 1: "Js Qs Ks As"},
                 stock="5c")
    s.draw("5c").meld("2s 3s 4s 5s 6s 7s 8s 9s Ts").discard("5c")
    _feed(s, "Js Qs Ks As")  # 2..K and the ace high: thirteen cards
    assert _meld(s, 0, 0) == ("run", "royal" if name == "burako" else "clean", 13)
    s.draw().discard(format_card(s.rep._t.drawn))
    s.draw()
    if name == "burako":
        s.layoff(0, "As")
        assert _meld(s, 0, 0) == ("run", "ace_to_ace", 14)
    else:
        _refused(s, "meld.duplicate_in_run", "layoff", 0, "As")


@pytest.mark.parametrize("name", ALL)
def test_a_wild_cannot_extend_a_full_a_to_k_run_except_as_burakos_second_ace(name: str) -> None:
    s = Scenario(name, hands={0: "Ad 2d 3d 4d 5d 6d 7d 8d 9d Td 2c", 1: "Jd Qd Kd"},
                 stock="5c")
    s.draw("5c").meld("Ad 2d 3d 4d 5d 6d 7d 8d 9d Td").discard("5c")
    _feed(s, "Jd Qd Kd")
    assert _meld(s, 0, 0) == ("run", "royal" if name == "burako" else "clean", 13)
    s.draw().discard(format_card(s.rep._t.drawn))
    s.draw()
    if name == "burako":
        s.layoff(0, "2c")  # the wild as the second ace
        assert _meld(s, 0, 0) == ("run", "dirty", 14)
    else:
        _refused(s, "meld.run_too_long", "layoff", 0, "2c")


# -- sets ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_a_set_grows_to_eight_naturals_and_one_wild_and_no_more(name: str) -> None:
    s = Scenario(name, hands={0: "9c 9c 9d 9d 9h 9h 9s 9s 2c 2d 4c"}, stock="Kc")
    s.draw("Kc").meld("9c 9c 9d 9d 9h 9h 9s 9s 2c")
    want = None if name == "mega" else "dirty"  # mega: no canastra from a set (§6)
    assert _meld(s, 0, 0) == ("set", want, 9)
    _refused(s, "meld.too_many_wilds", "layoff", 0, "2d")
    s.discard("Kc")


@pytest.mark.parametrize("name", ALL)
def test_no_set_of_2s_and_one_set_per_rank_only_in_mega(name: str) -> None:
    s = Scenario(name, hands={0: "2c 2d 2h 7c 7d 7h 7s 7c 7d Kh 4c"}, stock="Qc")
    s.draw("Qc")
    _refused(s, "meld.set_of_twos", "meld", "2c 2d 2h")
    s.meld("7c 7d 7h")
    if name == "mega":
        _refused(s, "meld.second_set_of_rank", "meld", "7s 7c 7d")
        s.layoff(0, "7s 7c 7d")  # laying off on the first set is always allowed
        assert _meld(s, 0, 0) == ("set", None, 6)
    else:
        s.meld("7s 7c 7d")
        assert len(s.state.melds[0]) == 2
