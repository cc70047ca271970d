"""Edges outside authors like, played to a scored hand end in every preset, the scores worked
out here by hand from RULES.md §9 (card points from ``hand_scores.points``, bonuses from its
tables):

- the stock running out right after a side took its morto by its last discard, before the
  taker plays again (RULES.md §7: the stock running out does not undo it; the morto is the
  taker's hand), with the pile's top unusable, or usable under must-use-top (§8);
- the last card going out by a lay-off with no discard, or by a discard (§4, §7; `burako`
  takes its morto only indirectly but may go out either way);
- a canastra changing class by a later lay-off (§5, §6): clean made dirty by a wild
  (semi-clean in `burraco`), dirty made clean by the natural card its 2 stood for;
- a first-turn redraw on the smallest stock house rules allow.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import format_cards, parse_cards
from buraco_log.events import HandStarted
from buraco_log.reducer import Replayer
from tests.scenario import Scenario, refused
from tests.unit.hand_scores import JOKER_TWO, PRESETS, points

MORTO_PRESETS = tuple(p for p in PRESETS if p != "classic")
JOKERLESS = ("classic", "biriba", "bossa-nova")

# RULES.md §9, the bonus table.
GOING_OUT = {"classic": 50, "biriba": 50, "bossa-nova": 50, "thirteen": 100,
             "thirteen-quick": 100, "burraco": 100, "mega": 100, "burako": 100}
RELANCINHO = {name: 100 if name in JOKERLESS else 0 for name in PRESETS}
CLEAN, DIRTY, SEMI_CLEAN = 200, 100, 150
MORTO_NOT_TAKEN = 100  # every morto preset
FLOOR = {name: 2 if name == "mega" else 0 for name in PRESETS}

RUN = "3h 4h 5h 6h 7h 8h 9h"  # a clean canastra in every preset (mega counts runs only)
DIRTY_RUN = "2h 4h 5h 6h 7h 8h 9h"  # the 2 stands for the 3: dirty (burraco: 4..9 is six)


def _sets(name: str) -> str:
    """The rest of the emptying hand: one set of four (11 cards), two sets of three (13)."""
    return "Kc Kd Ks Qc Qd Qs" if name.startswith("thirteen") else "Kc Kd Ks Kh"


def _wild(name: str) -> str:
    return "2c" if name in JOKERLESS else "JK"


def _two(name: str) -> int:
    return JOKER_TWO[name][1]


def _hand_points(name: str, s: Scenario, seat: int) -> int:
    return points(name, format_cards(s.state.hands[seat]))


# --------------------------------------------------------------- going out, canastra classes
MORTO = "Th Jh Qh Kh 5c 5d 5s 6c 6d 6s"  # ten cards; the eleventh is the variant's


@pytest.mark.parametrize("out_by", ["layoff", "discard"])
@pytest.mark.parametrize("variant", ["clean", "clean_then_dirty", "dirty_then_clean"])
@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_going_out_by_a_lay_off_or_a_discard_with_a_canastra_that_changed_class(
        name: str, variant: str, out_by: str) -> None:
    run = DIRTY_RUN if variant == "dirty_then_clean" else RUN
    eleventh = {"clean": "5h", "clean_then_dirty": _wild(name), "dirty_then_clean": "3h"}[variant]
    last = "6h" if out_by == "layoff" else "Jc"  # the card seat 0 draws in its second turn
    s = Scenario(name, hands={0: f"{run} {_sets(name)}"}, stock=f"4c 9c {last}",
                 mortos={0: f"{MORTO} {eleventh}"})
    # Turn 1: the whole hand down and the drawn card thrown: the morto, indirectly.
    s.draw("4c").meld(run)
    sets = _sets(name).split()
    size = 4 if len(sets) == 4 else 3
    for k in range(0, len(sets), size):
        s.meld(" ".join(sets[k:k + size]))
    s.discard("4c").morto(direct=False)
    s.pass_turn()  # seat 1
    # Turn 2: the morto is seat 0's hand.
    s.draw(last).meld("5c 5d 5s").meld("6c 6d 6s").layoff(0, "Th Jh Qh Kh")
    n_sets = len(sets) // size
    fives, sixes = 1 + n_sets, 2 + n_sets
    if variant == "clean":
        s.layoff(fives, "5h")
    else:
        s.layoff(0, eleventh)
    if out_by == "layoff":
        s.layoff(sixes, "6h")
    else:
        s.discard("Jc")
    assert s.hand(0) == ()
    s.go_out()

    # Side 0, by hand. The run: 3..K is 25 + 60; the dirty run's 2 is a card of the meld too.
    table = 85
    if variant == "clean_then_dirty":
        table += JOKER_TWO[name][0] if eleventh == "JK" else _two(name)
    if variant == "dirty_then_clean":
        table += _two(name)
    table += points(name, " ".join(sets))  # the sets of turn 1
    table += 20 if variant == "clean" else 15  # fives (5h laid off in the clean variant)
    table += 20 if out_by == "layoff" else 15  # sixes (6h laid off when going out by it)
    # 3..K unbroken and the wild at an end: semi-clean where it exists (§6), else dirty
    dirtied = SEMI_CLEAN if name == "burraco" else DIRTY
    bonus = dirtied if variant == "clean_then_dirty" else CLEAN
    side0 = table + bonus + GOING_OUT[name] + RELANCINHO[name]
    side1 = -_hand_points(name, s, 1) - MORTO_NOT_TAKEN
    refused(s, "score.mismatch", (f"recomputed {side0}",), "end_hand", "went_out",
            (side0 + 1, side1))
    s.end_hand("went_out", (side0, side1))
    got = s.state.results[-1].scores[0]
    assert got.canastras == {("semi_clean" if bonus == SEMI_CLEAN else
                              "dirty" if bonus == DIRTY else "clean"): 1}


# --------------------------------------------------------------- the stock after a morto
BASE = "Ac 4c 7c Tc 3d 6d 9d Qd 5h 8h Jh Ks 4s"  # no meld with K♦; 4♦ goes with its two 4s
MORTO_FULL = f"{MORTO} 9c"


def _stock_out_scenario(name: str, last: str) -> tuple[Scenario, int]:
    """Seat E (the one who draws the last card above the floor) holds the emptying hand;
    the other seat holds ``BASE``. Both pass until E draws ``last``."""
    size = 13 if name.startswith("thirteen") else 11
    other_hand = " ".join(BASE.split()[:size])
    probe = Scenario(name, hands={0: other_hand})
    stock_len = len(probe.state.stock)
    k = stock_len - FLOOR[name] - 1  # the draw (from 0) that takes the last card above it
    e = k % 2  # seat 0 draws first
    hands = {e: f"{RUN} {_sets(name)}", 1 - e: other_hand}
    s = Scenario(name, hands=hands, mortos={e: MORTO_FULL})
    deal = s.events[1]
    assert isinstance(deal, HandStarted)
    stock = list(deal.stock)
    card = parse_cards(last)[0]
    stock.remove(card)
    stock.insert(k, card)
    s.events[1] = msgspec.structs.replace(deal, stock=tuple(stock))
    s.rep = Replayer()
    for ev in s.events:
        s.rep.step(ev)
    while len(s.state.stock) > FLOOR[name] + 1:
        s.pass_turn()
    assert s.turn == e
    return s, e


def _empty_by_discard(s: Scenario, name: str, last: str) -> None:
    sets = _sets(name).split()
    size = 4 if len(sets) == 4 else 3
    s.draw(last).meld(RUN)
    for k in range(0, len(sets), size):
        s.meld(" ".join(sets[k:k + size]))
    s.discard(last).morto(direct=False)


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_the_stock_runs_out_before_the_morto_taker_plays_again_the_morto_stands(
        name: str) -> None:
    s, e = _stock_out_scenario(name, "Kd")
    _empty_by_discard(s, name, "Kd")
    o = 1 - e
    assert s.turn == o and len(s.state.stock) == FLOOR[name]
    assert s.state.morto_pending[s.state.sides[e]] == e
    # E: run 45 + sets, clean canastra, relancinho (biriba, bossa-nova), the morto's cards
    # as cards in hand; no morto penalty. O: its hand and the morto it never took.
    mine = 45 + points(name, _sets(name)) + CLEAN + RELANCINHO[name] - points(name, MORTO_FULL)
    theirs = -_hand_points(name, s, o) - MORTO_NOT_TAKEN
    scores = (mine, theirs) if e == 0 else (theirs, mine)
    voided = mine + points(name, MORTO_FULL) - MORTO_NOT_TAKEN  # the morto read as voided
    wrong = (voided, theirs) if e == 0 else (theirs, voided)
    refused(s, "score.mismatch", (), "end_hand", "stock_out", wrong)
    s.end_hand("stock_out", scores)
    result = s.state.results[-1]
    assert result.went_out is None and result.scores[s.state.sides[e]].morto_penalty == 0


@pytest.mark.parametrize("name", ["thirteen", "thirteen-quick"])
def test_after_the_morto_at_the_floor_a_usable_top_must_be_taken_under_must_use_top(
        name: str) -> None:
    s, _ = _stock_out_scenario(name, "4d")
    _empty_by_discard(s, name, "4d")
    refused(s, "stock.pile_can_be_taken", ("4d",), "end_hand", "stock_out")
    s.take_pile().meld("4c 4s 4d")
    assert s.state.pile_top is None


@pytest.mark.parametrize("name", ["biriba", "burraco", "mega", "burako"])
def test_after_the_morto_at_the_floor_a_free_pile_may_be_left(name: str) -> None:
    s, e = _stock_out_scenario(name, "4d")
    _empty_by_discard(s, name, "4d")
    o = 1 - e
    mine = 45 + points(name, _sets(name)) + CLEAN + RELANCINHO[name] - points(name, MORTO_FULL)
    theirs = -_hand_points(name, s, o) - MORTO_NOT_TAKEN
    s.end_hand("stock_out", (mine, theirs) if e == 0 else (theirs, mine))


# --------------------------------------------------------------- the redraw, stock of four
def test_a_first_turn_redraw_on_the_smallest_stock_then_the_hand_ends_at_the_floor() -> None:
    """House rules: 2 players of 50 cards leave a stock of 4, the least `rules.check` allows
    (two draws each). The redraw spends two of them: seat 0 draws, throws the card back,
    draws again; seat 1 and seat 0 draw the last two; seat 1 finds the stock empty."""
    s = Scenario("classic", hand_size=50, player_counts=(2,))
    assert len(s.state.stock) == 4
    s.draw().reject().draw()
    s.discard(format_cards((s.state.hands[0][0],)))
    s.pass_turn()
    s.pass_turn()
    assert len(s.state.stock) == 0 and s.turn == 1
    refused(s, "stock.floor_reached", (), "draw", "Kd")
    lost = (-_hand_points("classic", s, 0), -_hand_points("classic", s, 1))
    refused(s, "score.mismatch", (), "end_hand", "stock_out", (lost[0] - 1, lost[1]))
    s.end_hand("stock_out", lost)
    assert s.state.totals == lost
