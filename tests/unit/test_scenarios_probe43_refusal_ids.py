"""Probe 43: the rule id a referee sees for each refusal of RULES.md §4-10, in every preset
where the statement applies, and which one is named when a move breaks two.

Each refusal must carry the id `buraco_log/ruleids.py` documents for its statement, the seq of
the refused event (in the error and at the head of its message), name the seat that moved, and
leave the state as it was. A move that breaks two statements names the first in the order
docs/rules.md gives ("Which rule a refusal names"): the event's place, whether the move is open
at all, what it names, the meld it makes (§5), then what it leaves in RULES.md order (§4 the
pile's top, §7 a card to throw, §10 the opening).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from buraco_log.audit.explanation import explain_event
from buraco_log.events import AnyEvent
from buraco_log.ruleids import RULES, describe
from tests.scenario import Scenario, carried_in

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
UPCARD = ("thirteen", "thirteen-quick", "burraco", "mega")
MUST_USE_TOP = ("thirteen", "thirteen-quick")
REDRAW = ("classic", "biriba", "bossa-nova")
JOKERS = ("thirteen", "thirteen-quick", "burraco", "mega", "burako")


def fill(name: str, cards: str, extra: str = "9c 4d") -> str:
    """A hand's named part; the 13-card presets get two more (``extra``) that make nothing."""
    return cards + (" " + extra if name.startswith("thirteen") else "")


def names(s: Scenario, rule: str, move: Callable[[], object]) -> str:
    """``move`` is refused with ``rule`` at the next seq: the error and its text name that seq,
    the id is documented, the state is unchanged (``Scenario.illegal``), and a referee's
    ``explain`` of the log with the refused event at its end says the same. The message."""
    seq = s.rep.seq + 1
    assert rule in RULES, f"{rule} is not documented in buraco_log/ruleids.py"
    tried: list[AnyEvent] = []
    push = s.push
    s.push = lambda ev: (tried.append(ev), push(ev))[1]  # type: ignore[method-assign]
    try:
        with s.illegal(rule):
            move()
    finally:
        del s.push
    err = s.last_error
    assert err.seq == seq and str(err).startswith(f"seq {seq}: [{rule}] "), str(err)
    seat = getattr(tried[-1], "seat", None)
    if seat is not None:  # a seat's move: the explanation says whose
        assert err.seat == seat and f"seat {seat}" in err.explanation, str(err)
    said = explain_event([*s.events, tried[-1]], seq)
    tiles = s.rules.rendering == "tiles"
    assert (said.legal, said.rule, said.message) == (False, rule, err.explanation)
    assert said.description == describe(rule, tiles=tiles)
    return str(err)


# ------------------------------------------------------------------ one statement broken


@pytest.mark.parametrize("name", PRESETS)
def test_section_4_the_draw_and_the_pile(name: str) -> None:
    s = Scenario(name, hands={0: fill(name, "Kh Kd 4c 5d 6s 7c 8d 9s Tc Jd 3s"),
                              1: fill(name, "Qc Qd 3c 4d 5s 6c 7d 8s Tc Jd 3d", "Ah 2d")},
                 stock="5c 6c Qh" if name in REDRAW else "5c Qh",
                 upcard="Ks" if name in UPCARD else None)
    names(s, "turn.must_draw_first", lambda: s.discard("3s"))
    names(s, "draw.wrong_card", lambda: s.draw("6c"))
    if name in REDRAW:
        s.draw("5c").reject("5c")
        names(s, "draw.redraw_from_stock", lambda: s.take_pile())  # nor taken back (§4.1)
        s.draw("6c")
        names(s, "draw.redraw_only_first", lambda: s.reject("6c"))
    else:
        s.draw("5c")
        names(s, "draw.redraw_not_allowed", lambda: s.reject("5c"))
        # a move these rules lack is named so whoever sends it (docs/rules.md)
        names(s, "draw.redraw_not_allowed", lambda: s.reject("5c", seat=1))
    names(s, "turn.already_drew", lambda: s.draw())
    names(s, "discard.card_not_in_hand", lambda: s.discard("Ah"))
    s.discard("3s")
    s.draw().discard("Qh")  # seat 1: the top is Q♥, which seat 0 cannot use
    whole = len(s.state.pile)
    names(s, "pile.whole_pile", lambda: s.take_pile(count=whole - 1))
    names(s, "pile.wrong_top", lambda: s.take_pile(top="Kc"))
    if name in MUST_USE_TOP:
        names(s, "pile.must_use_top", lambda: s.take_pile())
    else:
        s.take_pile()


@pytest.mark.parametrize("name", PRESETS)
def test_section_4_melds_come_from_the_hand_onto_the_sides_own_melds(name: str) -> None:
    s = Scenario(name, hands={0: fill(name, "7h 7s 7d 4c 5d 6s 9c Tc Jd 3s Kd"),
                              1: fill(name, "8h 8s 8d 3c 4d 5s 6c 7c Td Js Qc", "Ah 2d")},
                 stock="Ks Qs")
    s.draw()
    names(s, "meld.cards_not_in_hand", lambda: s.meld("8h 8s 8d"))
    names(s, "meld.wrong_id", lambda: s.meld("7h 7s 7d", meld=1))
    s.meld("7h 7s 7d").discard("3s")
    s.draw()
    s.meld("8h 8s 8d")  # side 1's meld 0
    names(s, "layoff.no_such_meld", lambda: s.layoff(1, "Tc"))  # the opponent has no meld 1
    names(s, "layoff.no_cards", lambda: s.layoff(0, ""))
    names(s, "meld.cards_not_in_hand", lambda: s.layoff(0, "8c"))


@pytest.mark.parametrize("name", PRESETS)
def test_section_5_the_shape_of_a_meld(name: str) -> None:
    s = Scenario(name, hands={0: fill(name, "2s 2h 2d 5s 6s 8s Kh Ah 3h 7c 7d")},
                 stock="7h")
    s.draw()
    names(s, "meld.too_few_cards", lambda: s.meld("7c 7d"))
    names(s, "meld.set_of_twos", lambda: s.meld("2s 2h 2d"))
    names(s, "meld.too_many_wilds", lambda: s.meld("7c 7d 2s 2h"))
    names(s, "meld.not_a_meld", lambda: s.meld("5s 6s 7h"))
    names(s, "meld.run_not_consecutive", lambda: s.meld("Ah 3h 7h"))
    names(s, "meld.run_wraps", lambda: s.meld("Kh Ah 3h"))


@pytest.mark.parametrize("name", PRESETS)
def test_section_5_one_set_per_rank_only_in_mega(name: str) -> None:
    s = Scenario(name, hands={0: fill(name, "7h 7s 7d 7c 7h 7s 4c 5d 9s Tc Jd")}, stock="Kd")
    s.draw().meld("7h 7s 7d")
    if name == "mega":
        names(s, "meld.second_set_of_rank", lambda: s.meld("7c 7h 7s"))
    else:
        s.meld("7c 7h 7s")


MORTO0 = "3h 4h 5h 6h 3d 4d 5d 3s 4s 5s Kc"  # three melds and a king: no canastra in it


def emptying(name: str) -> Scenario:
    """Seat 0 about to empty its hand by melding (the last meld is 9♠..K♠), no canastra."""
    extra = " 8c 9c" if name.startswith("thirteen") else ""
    return Scenario(name, hands={0: "7h 7s 7d 4c 5c 6c 7c 9s Ts Js Qs" + extra},
                    mortos={0: MORTO0} if name != "classic" else None, stock="Ks 8h")


def lay_all_but_last(s: Scenario) -> None:
    s.draw().meld("7h 7s 7d").meld("4c 5c 6c 7c" + (" 8c 9c" if s.rules.hand_size == 13
                                                    else ""))


@pytest.mark.parametrize("name", PRESETS)
def test_section_7_the_morto_and_going_out(name: str) -> None:
    s = emptying(name)
    lay_all_but_last(s)
    last = "9s Ts Js Qs Ks"
    if name == "burako":  # the morto only by a discard
        names(s, "morto.indirect_only", lambda: s.meld(last))
        return
    if name == "bossa-nova":  # the morto only with a canastra
        names(s, "morto.needs_canastra", lambda: s.meld(last))
        return
    s.meld(last)
    if name == "classic":  # no morto: the emptied hand goes out
        names(s, "morto.not_available", lambda: s.morto(direct=True))
        s.go_out()
        return
    names(s, "go_out.morto_first", lambda: s.go_out())
    names(s, "morto.wrong_kind", lambda: s.morto(direct=False))
    s.morto(direct=True)
    s.meld("3h 4h 5h 6h").meld("3d 4d 5d")
    if s.rules.go_out_needs_canastra:  # a king left that could not be thrown
        names(s, "go_out.needs_canastra", lambda: s.meld("3s 4s 5s"))
        return
    s.meld("3s 4s 5s").discard("Kc")  # biriba goes out without a canastra
    names(s, "morto.not_available", lambda: s.morto(direct=False))
    s.go_out()
    names(s, "score.mismatch", lambda: s.end_hand(scores=(0, 0)))  # §9: a wrong score
    s.end_hand()


@pytest.mark.parametrize("name", REDRAW)
def test_section_10_the_vulnerable_opening(name: str) -> None:
    s = carried_in(Scenario(name, hands={0: "7h 7s 7d 4c 5c 6c 9s Ts Js 3d Kd"}, stock="Qh"),
                   (800, 0))
    s.draw().meld("7h 7s 7d")  # 15 points, short of 75
    names(s, "vulnerable.opening_too_low", lambda: s.discard("3d"))
    names(s, "vulnerable.retract_cards", lambda: s.retract("7h 7s"))
    s.retract()
    s.discard("3d")
    s.draw()
    names(s, "vulnerable.retract_not_needed", lambda: s.retract("Kd"))  # side 1: not vulnerable


@pytest.mark.parametrize("name", PRESETS)
def test_sections_8_and_10_no_early_end(name: str) -> None:
    s = Scenario(name)
    names(s, "hand.not_over", lambda: s.end_hand("stock_out"))  # the stock is full (§8)
    names(s, "match.not_over", lambda: s.end_match(winner=0))  # nobody reached the target


# ------------------------------------------------------------------ two statements broken


def kept_the_eights(name: str, set_of_eights: bool) -> Scenario:
    """Must-use-top (RULES.md §4) after the morto (§7): seat 0 holds 8♠ 8♦ 8♥ and takes a pile
    of 9♥, usable only as 8♥ 9♥ on its run 3♥..7♥ (a canastra: the 8s may then go out).
    The side has no canastra, so a move that keeps the 9♥ alone breaks both statements."""
    morto = ("8s 8d 8c Tc Td Ts 3c Ks 8s 8d 8h" if set_of_eights else
             "9c 9d 9s Tc Td Ts 3c Ks 8s 8d 8h")
    s = Scenario(name, hands={0: "3h 4h 5h 6h 7h 4c 5c 6c 7c 8c Jd Qd Kd", 1: "Kc Kh 9h"},
                 mortos={0: morto}, stock="Ad", upcard="Qs")
    s.draw().meld("3h 4h 5h 6h 7h").meld("4c 5c 6c 7c 8c").meld("Jd Qd Kd Ad")
    s.morto(direct=True)
    s.meld("8s 8d 8c" if set_of_eights else "9c 9d 9s").meld("Tc Td Ts")
    s.layoff(1, "3c").discard("Ks")
    s.take_pile().meld("Kc Kh Ks").discard("9h")
    s.take_pile()
    return s


@pytest.mark.parametrize("name", MUST_USE_TOP)
def test_a_meld_that_keeps_the_top_alone_is_named_for_the_top_first(name: str) -> None:
    s = kept_the_eights(name, set_of_eights=False)
    text = names(s, "pile.must_use_top", lambda: s.meld("8s 8d 8h"))
    assert "9h" in text
    s.layoff(0, "8h 9h")  # the way that uses it: a canastra, and a card left to throw
    assert s.state.melds[0][0].canastra == "clean"
    s.discard("8s")


@pytest.mark.parametrize("name", MUST_USE_TOP)
def test_a_layoff_that_keeps_the_top_alone_is_named_for_the_top_first(name: str) -> None:
    s = kept_the_eights(name, set_of_eights=True)
    names(s, "pile.must_use_top", lambda: s.layoff(3, "8s 8d 8h"))
    s.layoff(0, "8h 9h")
    s.layoff(3, "8s 8d")
    s.go_out()


@pytest.mark.parametrize("name", JOKERS)
def test_a_set_of_2s_with_one_joker_is_a_set_of_2s(name: str) -> None:
    """RULES.md §1: a 2 is wild when it stands in for another card; in a set of 2s it stands
    for a 2, so the joker is the one wild and only "no set of 2s" is broken. A second joker
    breaks the one-wild rule, which §5 states first."""
    s = Scenario(name, hands={0: fill(name, "2s 2h 2d JK JK 5c 6d 8s 9c Td Qs")}, stock="Kh")
    s.draw()
    assert "2s and a wild" in names(s, "meld.set_of_twos", lambda: s.meld("2s 2h JK"))
    names(s, "meld.set_of_twos", lambda: s.meld("2s 2h 2d JK"))
    names(s, "meld.too_many_wilds", lambda: s.meld("2s 2h JK JK"))
    names(s, "meld.too_many_wilds", lambda: s.meld("2s JK JK"))


def test_the_indirect_only_morto_is_named_before_the_canastra_it_needs() -> None:
    """House rules that hold both (§7 states indirect-only first): emptying by melding, with
    no canastra, names ``morto.indirect_only``."""
    s = Scenario("burako", hands={0: "7h 7s 7d 4c 5c 6c 7c 9s Ts Js Qs"}, mortos={0: MORTO0},
                 stock="Ks", morto_needs_canastra=True)
    lay_all_but_last(s)
    names(s, "morto.indirect_only", lambda: s.meld("9s Ts Js Qs Ks"))


@pytest.mark.parametrize("name", PRESETS)
def test_what_the_move_names_comes_before_the_meld_it_makes(name: str) -> None:
    s = Scenario(name, hands={0: fill(name, "7h 7s 4c 5d 6s 9c Tc Jd 3s Kd Qd"),
                              1: fill(name, "8h 8s 8d 3c 4d 5s 6c 7c Td Js Qc", "Ah 2d")},
                 stock="Ks 2c")
    s.draw()
    names(s, "meld.cards_not_in_hand", lambda: s.meld("7h 8h 9c"))  # not held, and no meld
    names(s, "meld.cards_not_in_hand", lambda: s.meld("Kd Qd Jd Th", meld=3))  # and wrong id
    s.meld("Jd Qd Kd").discard("3s")
    s.draw()
    names(s, "layoff.no_such_meld", lambda: s.layoff(0, "As"))  # no meld 0, nor an A♠ held
    s.discard("3c")
    whole = len(s.state.pile)
    names(s, "pile.whole_pile", lambda: s.take_pile(count=whole + 1, top="Kc"))  # a wrong top


@pytest.mark.parametrize("name", REDRAW)
def test_a_pile_taken_after_the_redraw_is_named_for_the_redraw(name: str) -> None:
    s = Scenario(name, hands={0: "Kh Kd 4c 5d 6s 7c 8d 9s Tc Jd 3s"}, stock="5c 6c")
    s.draw().reject()
    names(s, "draw.redraw_from_stock", lambda: s.take_pile(count=2, top="Kc"))


def test_going_out_before_the_morto_is_named_before_a_short_opening() -> None:
    """§7 before §10: a vulnerable side's short opening (60 of 75) empties the hand; going out
    names the morto that comes first, taking the morto names the opening."""
    s = carried_in(Scenario("biriba", hands={0: "3h 4h 5h 6h 3s 4s 5s 6s 3d 4d 5d"},
                            mortos={0: MORTO0}, stock="7h"), (800, 0))
    s.draw().meld("3h 4h 5h 6h 7h").meld("3s 4s 5s 6s").meld("3d 4d 5d")
    names(s, "go_out.morto_first", lambda: s.go_out())
    names(s, "vulnerable.opening_too_low", lambda: s.morto(direct=True))
    names(s, "vulnerable.opening_too_low", lambda: s.morto(direct=False))  # kind comes last
    s.retract()
    assert len(s.hand(0)) == 12


# ------------------------------------------------------------------ more ids, same checks


@pytest.mark.parametrize("name", PRESETS)
def test_whose_turn_and_an_empty_pile(name: str) -> None:
    s = Scenario(name, hands={0: fill(name, "7h 7s 4c 5d 6s 9c Tc Jd 3s Kd Qd")})
    names(s, "turn.no_such_seat", lambda: s.draw(seat=7))
    names(s, "turn.not_your_turn", lambda: s.draw(seat=1))
    if name not in UPCARD:  # nothing turned up: no pile before the first discard
        names(s, "pile.empty", lambda: s.take_pile(count=1, top="Kc"))


@pytest.mark.parametrize("name", PRESETS)
def test_a_run_holds_each_rank_once(name: str) -> None:
    s = Scenario(name, hands={0: fill(name, "5h 6h 6h 7h 9c Tc Jd 3s Kd Qd 4c")}, stock="8s")
    s.draw()
    names(s, "meld.duplicate_in_run", lambda: s.meld("5h 6h 6h 7h"))


@pytest.mark.parametrize("name", PRESETS)
def test_the_stock_at_its_floor_is_not_drawn_from(name: str) -> None:
    s = Scenario(name)
    floor = s.rules.stock_floor
    while len(s.state.stock) > floor:
        s.pass_turn()
    names(s, "stock.floor_reached", lambda: s.draw("Kc"))  # any card: none is drawn


@pytest.mark.parametrize("name", [n for n in PRESETS if n != "classic"])
def test_a_hand_emptied_holds_nothing_to_throw(name: str) -> None:
    s = emptying(name)
    lay_all_but_last(s)
    if name in ("burako", "bossa-nova"):
        return  # the emptying meld is refused there (test_section_7_the_morto_and_going_out)
    s.meld("9s Ts Js Qs Ks")
    names(s, "turn.hand_emptied", lambda: s.discard("Kc"))
    names(s, "turn.hand_emptied", lambda: s.draw())


@pytest.mark.parametrize("name", REDRAW)
def test_after_a_short_opening_the_side_needs_90(name: str) -> None:
    s = carried_in(Scenario(name, hands={0: "Ah As Ad Kh Ks Kd 9c 9s 3d 4c 5h"}, stock="Qh"),
                   (800, 0))
    s.draw().meld("Kh Ks Kd")  # 30 points: short of 75
    s.retract()
    s.meld("Ah As Ad").meld("Kh Ks Kd")  # 45 + 30 = 75: enough before, not after (90)
    text = names(s, "vulnerable.opening_too_low", lambda: s.discard("3d"))
    assert "90" in text
