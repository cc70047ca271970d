"""RULES.md read again for what the section-by-section scenarios (test_rule_scenarios45) and the
hand-written logs (tests/outside) leave out: each preset's refusals met where they were not,
with an accepted move beside each, and hands scored by hand from RULES.md §9 for the bonuses,
penalties and hand-end reasons no scenario scored yet.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import CardDrawn, PileTaken
from buraco_log.moves import legal_moves, pile_options, quick_moves
from buraco_log.reducer import step
from tests.scenario import Scenario

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
UPCARD = ("thirteen", "thirteen-quick", "burraco", "mega")
NO_UPCARD = ("classic", "biriba", "bossa-nova", "burako")


def upcard(name: str) -> str | None:
    return "Td" if name in UPCARD else None


# ------------------------------------------------------------------ §4 an empty pile
# Every turn but a hand's first ends in a discard (or the hand's end), so the pile is empty at
# a draw only before the first discard of a preset without an upcard (RULES.md §3).


@pytest.mark.parametrize("name", NO_UPCARD)
@pytest.mark.parametrize("top", ["Kh", "#0", "JK", "#99"])
def test_an_empty_pile_is_pile_empty_whatever_top_the_pickup_names(name: str, top: str) -> None:
    """There is no top to name: the code standing in for it (a card, a code that is no card,
    a joker of a preset without them) is not what is wrong with the pickup."""
    s = Scenario(name)
    code = int(top[1:]) if top.startswith("#") else parse_cards(top)[0]
    for count in (0, 1):
        with s.illegal("pile.empty"):
            s.push(PileTaken(0, count, code, seq=2))
        assert "the discard pile is empty" in str(s.last_error), str(s.last_error)
        assert s.last_error.seat == 0
    opts = pile_options(s.state)
    assert not opts.may_take and "empty" in opts.reason
    assert all(not isinstance(m, PileTaken) for m in legal_moves(s.state))
    s.draw()  # the stock is the way: accepted


@pytest.mark.parametrize("name", UPCARD)
def test_a_table_built_with_an_empty_pile_is_pile_empty_under_every_pickup_rule(
        name: str) -> None:
    """An upcard preset's pile is never empty at a draw in play, but a State built by hand can
    hold one: the must-use-top check has no top to judge and never runs (no IndexError)."""
    s = Scenario(name, upcard=upcard(name))
    empty = msgspec.structs.replace(s.state, pile=())
    with pytest.raises(IllegalMoveError) as info:
        step(empty, PileTaken(0, 0, 0, seq=2))
    assert info.value.rule == "pile.empty", str(info.value)
    assert not pile_options(empty).may_take
    moves = quick_moves(empty)
    assert [type(m) for m in moves] == [CardDrawn]


# ------------------------------------------------------------------ the public entries


@pytest.mark.parametrize("entry", [quick_moves, pile_options, legal_moves])
@pytest.mark.parametrize("wrong", [None, "state", {}, 3])
def test_a_wrong_type_at_a_moves_entry_is_a_type_error_naming_it(entry: object,
                                                                 wrong: object) -> None:
    name = getattr(entry, "__name__", "")
    with pytest.raises(TypeError, match=f"^{name} takes a State, not {type(wrong).__name__}$"):
        entry(wrong)  # type: ignore[operator]


def test_the_states_stock_is_drawn_from_its_first_card_and_turns_count_from_zero() -> None:
    """state.py: ``stock[0]`` is the top (as HandStarted deals it), ``turns`` the turns ended."""
    s = Scenario("classic", hands={0: "Kc"}, stock="Kh 3c")
    first = s.state
    assert first.stock[:2] == parse_cards("Kh 3c") == s.events[1].stock[:2]
    assert first.turns == 0
    s.draw()
    assert s.state.hands[0][-1] == first.stock[0] and s.state.turns == 0
    s.discard("Kc")
    assert s.state.turns == 1 and s.state.stock[0] == parse_cards("3c")[0]
