"""Probe 42, RULES.md §4–8 statement by statement in every preset: each statement once
accepted and once refused, by its rule id, on a hand built to show it.

- §4: the pile is taken whole; the first player's pickup (no pile before the first discard
  where no card is turned up; the turned-up card under must-use-top only when it can be used).
- §5: a 2 of a run's suit in its own place is natural (a clean run, a clean canastra); one
  wild per meld; the ace low or high, never around the corner; sets of 2s nowhere.
- §7: going out by melding the last cards or by discarding the last one; a hand that may not
  empty keeps a card to throw.
- §8: the stock at its floor ends the hand (0 cards; 2 in `mega`), and not before.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import HandStarted
from buraco_log.melds import read_meld
from buraco_log.reducer import Replayer
from tests.scenario import Scenario

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
UPCARD = ("thirteen", "thirteen-quick", "burraco", "mega")  # RULES.md §11 "upcard"
FLOOR = {name: 2 if name == "mega" else 0 for name in PRESETS}


def hand(name: str, cards: str) -> str:
    """``cards`` as a full hand's named part: the 13-card presets get two more of their own."""
    return cards + (" 9c 9d" if name.startswith("thirteen") else "")


# ------------------------------------------------------------------ §4 the pile


@pytest.mark.parametrize("name", PRESETS)
def test_the_pile_is_taken_whole_never_part_of_it(name: str) -> None:
    s = Scenario(name, hands={0: hand(name, "Kh Qh 4c 5d 6s 7c 8d 9s Tc Jd 3s"),
                              1: hand(name, "Kc Kd 3c 4d 5s 6c 7d 8s Tc Jd 3d")},
                 stock="5c 6c 7h", upcard="Ks" if name in UPCARD else None)
    s.draw("5c").discard("5c")
    whole = len(s.state.pile)
    assert whole == (2 if name in UPCARD else 1)
    s.draw("6c").discard("6c")
    s.draw("7h").discard("Kh")  # the top is K♥: seat 1 holds K♣ K♦ to use it
    whole = len(s.state.pile)
    with s.illegal("pile.whole_pile"):
        s.take_pile(count=1)
    with s.illegal("pile.whole_pile"):
        s.take_pile(count=whole - 1)
    before = len(s.hand(1))
    s.take_pile()
    assert len(s.hand(1)) == before + whole and not s.state.pile


@pytest.mark.parametrize("name", PRESETS)
def test_the_first_player_and_the_pile(name: str) -> None:
    """Without a turned-up card the pile starts with the first discard: nothing to take.
    With one, a free pile takes it; must-use-top only when the hand can use it."""
    s = Scenario(name, hands={0: hand(name, "Kc Kd 4c 5d 6s 7c 8d 9s Tc Jd 3s")},
                 upcard="Ks" if name in UPCARD else None)
    if name not in UPCARD:
        with s.illegal("pile.empty"):
            s.take_pile(count=1, top="Ks")
        s.draw()
        return
    up = s.state.pile[-1]
    s.take_pile()
    assert up in s.hand(0) and not s.state.pile
    if name.startswith("thirteen"):  # the king must go into a meld this turn
        with s.illegal("pile.must_use_top"):
            s.discard("3s")
        s.meld("Kc Kd Ks")
    s.discard("3s")


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_must_use_top_refuses_a_turned_up_card_the_hand_cannot_use(name: str) -> None:
    s = Scenario(name, hands={0: hand(name, "Kc Qd 4c 5d 6s 7c 8d 9s Tc Jd 3s")}, upcard="Ks")
    with s.illegal("pile.must_use_top"):
        s.take_pile()
    s.draw()


# ------------------------------------------------------------------ §5 melds


@pytest.mark.parametrize("name", PRESETS)
def test_a_runs_own_2_in_its_place_is_natural_one_wild_per_meld(name: str) -> None:
    """2♠ between A♠ and 3♠ is a natural card: 2♠..8♠ is a clean canastra; a 2 of hearts
    in a run of diamonds is its one wild, and a second wild is one too many."""
    s = Scenario(name, hands={0: hand(name, "2s 3s 4s 5s 6s 7s 8s 2h 4d 5d 2c")}, stock="6d")
    s.draw("6d")
    with s.illegal("meld.too_many_wilds"):
        s.meld("2h 2c 4d 5d 6d")
    s.meld("2s 3s 4s 5s 6s 7s 8s")
    assert s.state.melds[0][0].canastra == "clean"
    assert read_meld(s.state.melds[0][0].cards, s.rules).wild is None
    s.meld("2h 4d 5d 6d")
    assert read_meld(s.state.melds[0][1].cards, s.rules).wild == parse_cards("2h")[0]
    with s.illegal("meld.too_many_wilds"):
        s.layoff(1, "2c")


@pytest.mark.parametrize("name", PRESETS)
def test_a_dirty_canastra_turns_clean_when_the_2_goes_home(name: str) -> None:
    """3♠ 4♠ 2♠ 6♠ 7♠ 8♠ 9♠: the 2♠ stands for the 5 (dirty, 100). The 5♠ arrives: the 2♠
    is read in its own place, 2♠..9♠ is clean (RULES.md §5, "canonical reading")."""
    s = Scenario(name, hands={0: hand(name, "3s 4s 2s 6s 7s 8s 9s 5s Kc Kd Qh")}, stock="Ks")
    s.draw("Ks").meld("3s 4s 2s 6s 7s 8s 9s")
    assert s.state.melds[0][0].canastra == "dirty"
    s.layoff(0, "5s")
    assert s.state.melds[0][0].canastra == "clean"
    s.meld("Kc Kd Ks").discard("Qh")


@pytest.mark.parametrize("name", PRESETS)
def test_the_ace_low_or_high_never_around_the_corner(name: str) -> None:
    s = Scenario(name, hands={0: hand(name, "As 2s 3s Qh Kh Ah Kc Ac 2c 3c 9d")}, stock="5d")
    s.draw("5d")
    with s.illegal("meld.run_wraps"):
        s.meld("Kc Ac 3c")
    s.meld("As 2s 3s").meld("Qh Kh Ah")  # low, with its natural 2; high
    s.meld("Kc Ac 2c")  # the 2♣ cannot be natural (K-A-2 wraps): the wild, as the queen
    assert read_meld(s.state.melds[0][2].cards, s.rules).wild == parse_cards("2c")[0]
    with s.illegal("meld.run_wraps"):
        s.layoff(2, "3c")
    s.discard("9d")


@pytest.mark.parametrize("name", PRESETS)
def test_no_set_of_2s_and_one_set_per_rank_only_in_mega(name: str) -> None:
    s = Scenario(name, hands={0: hand(name, "2c 2d 2h 7c 7d 7h 7s 7c 7d 4d 9h")}, stock="Js")
    s.draw("Js")
    with s.illegal("meld.set_of_twos"):
        s.meld("2c 2d 2h")
    s.meld("7c 7d 7h")
    if name == "mega":
        with s.illegal("meld.second_set_of_rank"):
            s.meld("7s 7c 7d")
        s.layoff(0, "7s 7c 7d")  # the same sevens go on the set there is
    else:
        s.meld("7s 7c 7d")
    s.discard("9h")


# ------------------------------------------------------------------ §7 going out

MORTO = "Jc Jd Js 5c 5d 5s 6c 6d 6s 6h 4d"


def _emptied_without_canastra(name: str) -> Scenario:
    """Seat 0 lays a 6-card run (no canastra), kings and queens: its whole hand."""
    t13 = name.startswith("thirteen")
    cards = "3h 4h 5h 6h 7h 8h Kc Kd Ks " + ("Kh Qc Qd Qs" if t13 else "Qc Qd")
    s = Scenario(name, hands={0: cards}, stock="Qh" if t13 else "Qs", mortos={0: MORTO})
    s.draw().meld("3h 4h 5h 6h 7h 8h").meld("Kc Kd Ks" + (" Kh" if t13 else ""))
    return s


@pytest.mark.parametrize("name", PRESETS)
def test_who_may_empty_the_hand_without_a_canastra(name: str) -> None:
    s = _emptied_without_canastra(name)
    queens = "Qc Qd Qs Qh" if name.startswith("thirteen") else "Qc Qd Qs"
    if name == "bossa-nova":  # the morto needs a canastra (RULES.md §7)
        with s.illegal("morto.needs_canastra"):
            s.meld(queens)
        return
    if name == "burako":  # the morto is taken only by a discard
        with s.illegal("morto.indirect_only"):
            s.meld(queens)
        return
    s.meld(queens)
    if name == "classic":  # no morto: emptying the hand is going out, no canastra needed
        s.go_out()
        assert s.state.phase == "out"
        return
    s.morto(direct=True).meld("Jc Jd Js").meld("5c 5d 5s")
    if name != "biriba":  # going out needs a canastra: no lay may keep a card it cannot throw
        with s.illegal("go_out.needs_canastra"):
            s.meld("6c 6d 6s 6h")
        s.meld("6c 6d 6s").discard("6h")  # two cards kept: one thrown, the turn goes on
        assert s.state.turn == 1
        return
    s.meld("6c 6d 6s 6h").discard("4d").go_out()
    assert s.state.phase == "out"


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_must_use_top_the_top_goes_on_a_meld_the_side_already_has(name: str) -> None:
    """`001`: "juntada a um jogo que você já tem, ou baixada em um jogo novo com duas cartas
    da sua mão". 4♥ 5♥ in hand and 6♥ in the pile under a 7♥: once taken, 4♥ 5♥ 6♥ could be
    laid and the 7♥ laid off on it, but that meld is not one the side had, and 4♥ 5♥ 7♥ is
    no meld: refused. With 5♥ 6♥ in hand the 7♥ makes a meld with two cards of the hand."""
    dead = "3c 4s 5d 6c 8d Tc Js Qd Kc As 3d"  # no 7, no heart, no wild
    for holds, ok in (("4h 5h", False), ("5h 6h", True)):
        s = Scenario(name, hands={0: "6h 7h Ks Kd", 1: f"{holds} {dead}"}, stock="9c 8c 9s")
        s.draw("9c").discard("6h" if not ok else "Ks")
        s.draw("8c").discard("8c")
        s.draw("9s").discard("7h")
        if not ok:
            assert parse_cards("6h")[0] in s.state.pile
            with s.illegal("pile.must_use_top"):
                s.take_pile()
            continue
        s.take_pile().meld("5h 6h 7h")
        assert s.state.pile_top is None


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_must_use_top_the_new_meld_is_the_top_and_two_cards_of_the_hand(name: str) -> None:
    """5♥ 8♥ in hand, 7♥ in the pile under a 6♥: 5♥ 6♥ 7♥ 8♥ would hold two cards of the
    hand, but the 6♥ makes no meld with them alone (it needs the pile's 7♥): refused, as
    docs/rules.md rules ("not with the other cards of the pile"). 5♥ 7♥ in hand: taken."""
    dead = "3c 4s 5d 6c 8d Tc Js Qd Kc As 3d"  # no 6, no heart, no wild
    for holds, ok in (("5h 8h", False), ("5h 7h", True)):
        s = Scenario(name, hands={0: "7h 6h Ks Kd", 1: f"{holds} {dead}"}, stock="9c 8c 9s")
        s.draw("9c").discard("7h" if not ok else "Ks")
        s.draw("8c").discard("8c")
        s.draw("9s").discard("6h")
        if not ok:
            with s.illegal("pile.must_use_top"):
                s.take_pile()
            continue
        s.take_pile().meld("5h 6h 7h")
        assert s.state.pile_top is None


# ------------------------------------------------------------------ §1 Burako's tiles


def test_burako_tiles_1_after_13_and_two_tatus() -> None:
    """RULES.md §1: tile 1 is the ace, colour the suit; 104 tiles and 2 tatus (jokers), wild
    like the 2s. `004`: "O 1 pode se colocar antes do 2 ou depois do 13"; never around the
    corner (13-1-3); one wild per meld, a tatu and a 2 of another colour are two."""
    s = Scenario("burako", hands={0: "12r 13r 1r 2r 11b 12b JK 5y 6y 3k 13k"}, stock="1k")
    s.draw(s.text("1k"))
    with s.illegal("meld.run_wraps"):
        s.meld("13k 1k 3k")
    with s.illegal("meld.too_many_wilds"):
        s.meld("11b 12b JK 2r")
    s.meld("12r 13r 1r")  # the 1 after the 13
    s.layoff(0, "2r")  # no 2 after a 1 that follows the 13: the 2 is the wild, as the 11
    assert read_meld(s.state.melds[0][0].cards, s.rules).wild == parse_cards("2r")[0]
    s.meld("11b 12b JK").discard("5y")
    assert s.state.melds[0][1].cards.count(parse_cards("JK")[0]) == 1

    deal = Scenario("burako").events[1]
    assert isinstance(deal, HandStarted)
    third = (*deal.stock[:-1], parse_cards("JK")[0])  # a third tatu for the stock's last tile
    rep = Replayer()
    rep.step(Scenario("burako").events[0])
    with pytest.raises(IllegalMoveError) as info:
        rep.step(msgspec.structs.replace(deal, stock=third))
    assert info.value.rule == "deal.material"
