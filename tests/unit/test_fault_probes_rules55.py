"""The engine's rule branches that no other test played, each with an accepting and a refusing
scenario.

A branch coverage run of the engine from its Python source (the compiled modules hidden) over
tests/unit, tests/property and tests/outside left these rule decisions unplayed; BRANCHES maps
each one (module and line of the branch at the time) to the rule it decides and the two
scenarios that play it. Scores and bonuses are written by hand from RULES.md §9.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from buraco_log.cards import parse_cards
from buraco_log.combos import meld_options
from buraco_log.errors import RulesError
from buraco_log.events import CardsLaidOff, MeldLaid
from buraco_log.melds import cache_for, canastra_bonus, read_meld
from buraco_log.moves import legal_moves, pile_options, quick_moves
from buraco_log.rules import derive, preset
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points


def cards(text: str) -> tuple[int, ...]:
    return tuple(sorted(parse_cards(text)))


# ------------------------------------------------------------------ melds.py: both ace readings

# A..6, the wild as the 7, 8..K: with the ace low the naturals run 1..6 and 8..13 (six and six),
# with the ace high 2..6 and 8..A (five and seven).
BROKEN_AT_7 = "Ah 2h 3h 4h 5h 6h 8h 9h Th Jh Qh Kh JK"


def semi_clean_in_burraco() -> None:
    """burraco (canastra of 7): 8..A is seven in a row, so the run is semi-clean, 150."""
    r = preset("burraco")
    assert read_meld(parse_cards(BROKEN_AT_7), r).canastra == "semi_clean"
    assert canastra_bonus("semi_clean", r) == 150


def dirty_when_neither_ace_reading_holds_the_stretch() -> None:
    """House rules with canastras of 8 (the stretch a semi-clean run needs is the canastra size,
    docs/rules.md): neither 1..6 / 8..13 nor 2..6 / 8..A holds eight in a row; both readings
    are dirty, so the run is dirty, 100, not semi-clean."""
    r = derive("burraco", canastra_size=8, name="burraco8")
    reading = read_meld(parse_cards(BROKEN_AT_7), r)
    assert reading.canastra == "dirty", reading
    assert canastra_bonus(reading.canastra, r) == 100


# ------------------------------------------------------------------ combos.py: ace to ace

BURAKO_RUN = "2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh"


def both_aces_offer_the_ace_to_ace_run() -> None:
    """burako, both aces of the colour held: the 14-tile run 1..13..1 is on offer, ace-to-ace."""
    r = preset("burako")
    hand = parse_cards("Ah Ah " + BURAKO_RUN)
    offered = meld_options(hand, r, cache_for(r))
    assert cards("Ah Ah " + BURAKO_RUN) in offered
    assert read_meld(cards("Ah Ah " + BURAKO_RUN), r).canastra == "ace_to_ace"


def one_ace_cannot_stand_at_both_ends() -> None:
    """burako, one ace held: the run stops at 13 tiles (royal); no 14-tile run is offered, as
    one tile cannot stand at both ends."""
    r = preset("burako")
    hand = parse_cards("Ah " + BURAKO_RUN + " JK")
    offered = meld_options(hand, r, cache_for(r))
    assert cards("Ah " + BURAKO_RUN) in offered
    assert max(len(m) for m in offered) == 14  # the royal run with the tatu at an end
    assert all(m.count(parse_cards("Ah")[0]) <= 1 for m in offered)
    assert read_meld(cards("Ah " + BURAKO_RUN), r).canastra == "royal"


# ------------------------------------------------------------------ reducer.py: one set a rank


def _sevens_on_the_table(**overrides: object) -> Scenario:
    """thirteen (must use the top): seat 0 has the set 7h 7s JK on the table and holds 7c 7d;
    seat 1 throws 2s. The 2 fits no run of seat 0's hand and no meld of its side (the set of
    sevens has its wild): only a new set 7c 7d 2s could use it."""
    s = Scenario(
        "thirteen",
        hands={0: "7h 7s JK 7c 7d 4h 9h Ah Jd Kc Qs 3d Tc", 1: "2s"},
        stock="6s Td",
        upcard="9c",
        **overrides,
    )
    s.draw().meld("7h 7s JK").discard("6s")
    s.draw().discard("2s")
    return s


def the_top_2_makes_a_set_of_sevens() -> None:
    """thirteen: the pile whose top 2 makes a new set 7c 7d 2s may be taken."""
    s = _sevens_on_the_table()
    s.take_pile().meld("7c 7d 2s")
    assert len(s.state.melds[0]) == 2


def one_set_a_rank_leaves_the_top_2_no_use() -> None:
    """thirteen with one set a rank (house rules, mega's max_sets_per_rank = 1): the set 7c 7d 2s
    would be the side's second set of sevens, so the top 2 has no use and the pile is refused."""
    s = _sevens_on_the_table(max_sets_per_rank=1)
    refused(s, "pile.must_use_top", ("2s",), "take_pile")
    assert not pile_options(s.state).may_take


# ------------------------------------------------------------------ moves.py: quick moves


def _top_after_a_canastra(**overrides: object) -> Scenario:
    """thirteen without a morto (house rules; going out still needs a canastra): seat 0 has
    3h..8h and 4c..7c down and holds 9h Kd Kc; seat 1 throws Ks onto a pile it emptied. Seat 0
    takes the one-card pile: Ks Kd Kc alone would leave 9h, which cannot be thrown without a
    canastra; 9h on 3h..8h first makes the canastra, and the kings then go out."""
    s = Scenario(
        "thirteen",
        hands={0: "3h 4h 5h 6h 7h 8h 4c 5c 6c 7c 9h Kd Kc", 1: "Jd Qd Ks"},
        stock="Td",
        upcard="5s",
        morto=False,
        **overrides,
    )
    s.draw().meld("3h 4h 5h 6h 7h 8h").meld("4c 5c 6c 7c").discard("Td")
    s.take_pile().meld("Td Jd Qd").discard("Ks")
    s.take_pile()
    return s


def the_quick_list_lays_the_canastra_card_first() -> None:
    """The bots' quick list, empty of ways to lay the top card at once, falls back to the
    complete list: 9h on the run (the only lay that keeps the kings usable), and nothing else.
    Played: 9h, then the kings, and seat 0 goes out."""
    s = _top_after_a_canastra()
    nine = parse_cards("9h")
    moves = quick_moves(s.state)
    assert moves == [CardsLaidOff(0, 0, nine, seq=s.rep.seq + 1)], moves
    assert [m for m in legal_moves(s.state) if isinstance(m, (MeldLaid, CardsLaidOff))] == moves
    s.layoff(0, "9h").meld("Kc Kd Ks").go_out()
    # RULES.md §9, thirteen: 3h..9h 45, 4c..7c 20, three kings 30; clean canastra 200, going
    # out 100, no morto in these house rules.
    side1_hand = s.hand(1)
    side1 = spec_points("thirteen", "Td Jd Qd") - spec_points("thirteen", side1_hand)
    s.end_hand("went_out", (45 + 20 + 30 + 200 + 100, side1))


def the_kings_first_keep_a_card_that_cannot_be_thrown() -> None:
    """Laying the kings with the top first would keep 9h with no canastra on the table; the
    refusal names the card kept."""
    s = _top_after_a_canastra()
    refused(s, "go_out.needs_canastra", ("cannot be discarded (9h)", "canastra"), "meld",
            "Kc Kd Ks")


def _nines(hand: str) -> Scenario:
    """mega without a morto (house rules), hands of seven: seat 0 holds ``hand`` and draws 5c."""
    s = Scenario("mega", hands={0: hand}, stock="5c", morto=False, hand_size=7)
    return s.draw()


def a_run_of_seven_is_a_canastra_to_go_down_to_one() -> None:
    """mega: seven hearts in a row are a clean canastra, so laying them may keep one card."""
    s = _nines("3h 4h 5h 6h 7h 8h 9h")
    run = MeldLaid(0, cards("3h 4h 5h 6h 7h 8h 9h"), 0, seq=s.rep.seq + 1)
    assert run in legal_moves(s.state)
    s.meld("3h 4h 5h 6h 7h 8h 9h").discard("5c")  # the canastra lets the last card go out
    s.go_out()


def seven_nines_are_no_canastra_to_go_down_to_one() -> None:
    """mega: seven nines are no canastra (canastra_from_sets off), so laying them would keep a
    card that cannot be thrown: the move is not listed and is refused."""
    s = _nines("9c 9c 9d 9d 9h 9h 9s")
    nines = cards("9c 9c 9d 9d 9h 9h 9s")
    assert all(not (isinstance(m, MeldLaid) and m.cards == nines) for m in legal_moves(s.state))
    refused(s, "go_out.needs_canastra", ("cannot be discarded (5c)", "canastra"), "meld",
            "9c 9c 9d 9d 9h 9h 9s")


# ------------------------------------------------------------------ moves.py: the pile question


def _redraw() -> Scenario:
    """classic (first-turn redraw): seat 0 draws Kc and rejects it onto the empty pile."""
    return Scenario("classic", stock="Kc 4d 8s").draw().reject()


def the_next_player_may_take_the_rejected_card() -> None:
    """classic: after seat 0 rejects Kc, draws again and throws, seat 1 may take the pile."""
    s = _redraw().draw().discard("4d")
    opts = pile_options(s.state)
    assert opts.may_take and opts.seat == 1
    s.take_pile()


def the_rejecting_player_draws_from_the_stock() -> None:
    """RULES.md §4: the rejected card cannot be taken back that turn."""
    s = _redraw()
    opts = pile_options(s.state)
    assert not opts.may_take and "rejecting" in opts.reason, opts
    refused(s, "draw.redraw_from_stock", ("stock",), "take_pile")


def the_pile_may_be_taken_at_the_draw() -> None:
    """burraco (free pile, an upcard): before drawing, the player may take the pile."""
    s = Scenario("burraco", upcard="Kc")
    assert pile_options(s.state).may_take
    s.take_pile()


def the_pile_is_not_taken_after_drawing() -> None:
    """RULES.md §4: draw the stock card or take the pile, not both."""
    s = Scenario("burraco", upcard="Kc").draw()
    opts = pile_options(s.state)
    assert not opts.may_take and "already drawn" in opts.reason, opts
    refused(s, "turn.already_drew", ("already drew",), "take_pile")


def _out() -> Scenario:
    """classic: seat 0 lays its whole hand and throws the card drawn: it goes out."""
    s = Scenario("classic", hands={0: "3h 4h 5h 6h 7h 8h 9h Js Jd Jc Jh"}, stock="Kc")
    s.draw().meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("Kc")
    return s


def the_pile_waits_for_a_turn_in_play() -> None:
    """The emptied hand's turn is still in play: the pile question has a seat to answer for."""
    s = _out()
    assert pile_options(s.state).seat == 0


def nobody_takes_the_pile_once_a_player_went_out() -> None:
    """RULES.md §7: going out ends the hand; nobody is to move, and a pickup is refused."""
    s = _out().go_out()
    opts = pile_options(s.state)
    assert opts.seat is None and not opts.may_take and "not in play" in opts.reason, opts
    refused(s, "hand.over", ("went out",), "take_pile", seat=1)


# ------------------------------------------------------------------ rules.py: impossible rules


def _knob_refused(field: str, **overrides: object) -> None:
    base = str(overrides.pop("base"))
    with pytest.raises(RulesError) as info:
        derive(base, **overrides)
    assert info.value.field == field, (info.value.field, str(info.value))


BRANCHES: dict[str, tuple[str, Callable[[], None], Callable[[], None]]] = {
    "melds.py:302": ("§6 semi-clean: one ace read low and high, both readings dirty -> dirty",
                     semi_clean_in_burraco, dirty_when_neither_ace_reading_holds_the_stretch),
    "combos.py:133": ("§5 ace_both_ends: A..K..A needs both aces",
                      both_aces_offer_the_ace_to_ace_run, one_ace_cannot_stand_at_both_ends),
    "reducer.py:530": ("§4 must use top + §5 one set a rank: a second set is no use of the top",
                       the_top_2_makes_a_set_of_sevens, one_set_a_rank_leaves_the_top_2_no_use),
    "moves.py:67": ("§4/§7 must use top: the top laid only after the card that makes the canastra",
                    the_quick_list_lays_the_canastra_card_first,
                    the_kings_first_keep_a_card_that_cannot_be_thrown),
    "moves.py:169": ("§6/§7 mega: a 7-set is no canastra to keep one card by",
                     a_run_of_seven_is_a_canastra_to_go_down_to_one,
                     seven_nines_are_no_canastra_to_go_down_to_one),
    "moves.py:325": ("§4 redraw: the rejected card is not taken back that turn",
                     the_next_player_may_take_the_rejected_card,
                     the_rejecting_player_draws_from_the_stock),
    "moves.py:321": ("§4 draw from the stock or take the pile, not both",
                     the_pile_may_be_taken_at_the_draw, the_pile_is_not_taken_after_drawing),
    "moves.py:319": ("§7 going out ends the hand: nobody takes the pile",
                     the_pile_waits_for_a_turn_in_play,
                     nobody_takes_the_pile_once_a_player_went_out),
    "rules.py:452": ("§2 players are 2, 3, 4 or 6",
                     lambda: derive("classic", player_counts=(2, 3, 4, 6), name="all"),
                     lambda: _knob_refused("player_counts", base="classic",
                                           player_counts=(2, 5), name="five")),
    "rules.py:460": ("§3/§7 a morto holds cards",
                     lambda: derive("biriba", morto_size=1, name="m1"),
                     lambda: _knob_refused("morto_size", base="biriba", morto_size=0,
                                           name="m0")),
    "rules.py:470": ("§7 morto_needs_canastra needs a morto",
                     lambda: derive("biriba", morto_needs_canastra=True, name="b"),
                     lambda: _knob_refused("morto_needs_canastra", base="classic",
                                           morto_needs_canastra=True, name="c")),
    "rules.py:474": ("§10 the minimum after a take-back is the higher one (75 then 90)",
                     lambda: derive("classic", opening_min_after_retract=75, name="same"),
                     lambda: _knob_refused("opening_min_after_retract", base="classic",
                                           opening_min_after_retract=60, name="low")),
}


@pytest.mark.parametrize("branch", list(BRANCHES))
def test_the_rule_branch_accepts_what_its_rule_allows(branch: str) -> None:
    BRANCHES[branch][1]()


@pytest.mark.parametrize("branch", list(BRANCHES))
def test_the_rule_branch_refuses_what_its_rule_rules_out(branch: str) -> None:
    BRANCHES[branch][2]()
