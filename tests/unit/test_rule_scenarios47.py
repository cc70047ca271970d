"""RULES.md read for what the earlier scenario files leave out (test_rule_scenarios45 section by
section, 46 refusal by preset, tests/outside hand-written logs):

- A joker in a preset without jokers (§1, §11) is no card of its material, at every entry: the
  reducer's ``event.invalid`` for a deal, draw, redraw, pickup, meld, lay-off, retraction or
  discard, and the meld reader's ``meld.not_a_card`` for the same cards (it read "7h 7s JK" as a
  set in ``classic``, so ``explain`` said "read as a set" under an ``event.invalid`` headline).
- Every number of §9 is a knob: each card value and each bonus, changed by house rules, moves
  the hand score by exactly what §9's sum says, and the knob switched off takes the part away.
- Matches of several hands (§2, §10): the deal passing on from any first dealer, the running
  totals after each hand, the vulnerability each hand's start total gives (and takes away), the
  90 of a taken-back opening lasting one hand only, and the target deciding.

Every expected score is written out as RULES.md §9 adds it (the sums are in the comments).
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from buraco_log.audit.explanation import explain_event
from buraco_log.cards import JOKER, parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import (
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    HandEnded,
    HandStarted,
    MeldLaid,
)
from buraco_log.melds import MeldCache, MeldError, is_meld, read_meld
from buraco_log.reducer import Replayer
from buraco_log.rules import Rules, derive, preset
from buraco_log.wilds import wild_place
from tests.play import start
from tests.scenario import Scenario, build_deal, carried_in, refused
from tests.spec_points import spec_points

# ------------------------------------------------------------------ §1: a joker where none is
# The classic family plays without jokers (RULES.md §11, "0 (2 family)"); house rules may take
# them out of any preset.
JOKERLESS: dict[str, Rules] = {
    "classic": preset("classic"),
    "biriba": preset("biriba"),
    "bossa-nova": preset("bossa-nova"),
    "mega-0": derive("mega", name="mega-0", jokers=0),
    "burako-0": derive("burako", name="burako-0", jokers=0),
}
WITH_JOKERS: dict[str, Rules] = {
    "classic-2": derive("classic", name="classic-2", jokers=2),
    "mega": preset("mega"),
    "burako": preset("burako"),
}
MELDS = ("7h 7s JK", "3h 4h JK", "7h 7s 7d 7c 7h 7s JK", "3h 4h 5h 6h 7h 8h JK")


@pytest.mark.parametrize("name", list(JOKERLESS))
@pytest.mark.parametrize("text", MELDS)
def test_the_meld_reader_refuses_a_joker_where_the_preset_has_none(name: str, text: str) -> None:
    rules = JOKERLESS[name]
    cards = parse_cards(text)
    unit = "tile" if rules.rendering == "tiles" else "card"
    with pytest.raises(MeldError) as caught:
        read_meld(cards, rules)
    assert caught.value.rule == "meld.not_a_card", caught.value
    assert f"#64 is no {unit} of the {rules.name} preset (it has no jokers)" in str(caught.value)
    # every reader of melds answers alike: the memo, the quick test, the wild's place
    assert not is_meld(cards, rules)
    cache = MeldCache(rules)
    assert not cache.fits(cards)
    with pytest.raises(MeldError) as again:
        cache.read(cards)
    assert again.value.rule == "meld.not_a_card"
    assert wild_place(cards, rules) is None


@pytest.mark.parametrize("name", list(WITH_JOKERS))
@pytest.mark.parametrize("text", MELDS)
def test_the_same_melds_read_where_the_preset_has_jokers(name: str, text: str) -> None:
    rules = WITH_JOKERS[name]
    reading = read_meld(parse_cards(text), rules)
    assert reading.wild == JOKER
    place = wild_place(parse_cards(text), rules)
    assert place is not None and place.card == JOKER


@pytest.mark.parametrize("name", ["classic", "burako-0"])
def test_a_code_that_is_no_card_comes_before_the_count_of_cards(name: str) -> None:
    """The reducer names such a code whatever else is wrong with the event (a meld of two
    cards too): the reader's first word on JK 3h and 99 3h is the code, not "at least 3"."""
    rules = JOKERLESS[name]
    for cards in ((JOKER, parse_cards("3h")[0]), (99, parse_cards("3h")[0]), (JOKER,)):
        with pytest.raises(MeldError) as caught:
            read_meld(cards, rules)
        assert caught.value.rule == "meld.not_a_card", (cards, caught.value)
    with pytest.raises(MeldError) as caught:
        read_meld(parse_cards("3h 4h"), rules)
    assert caught.value.rule == "meld.too_few_cards"
    # with jokers, a joker beside one card is a meld too short, as any two cards
    with pytest.raises(MeldError) as caught:
        read_meld((JOKER, parse_cards("3h")[0]), WITH_JOKERS["classic-2"])
    assert caught.value.rule == "meld.too_few_cards"


def _opened(rules: Rules) -> Scenario:
    s = Scenario(rules, hands={0: "7h 7s 7d 4c 5c", 1: "3d"}, stock="9h 9c 9d")
    return s.draw().meld("7h 7s 7d")


@pytest.mark.parametrize("name", list(JOKERLESS))
@pytest.mark.parametrize("move", ["meld", "layoff"])
def test_explain_reads_no_meld_where_the_refusal_is_event_invalid(name: str, move: str) -> None:
    """A referee's explanation of a refused meld or lay-off holding a joker in a jokerless
    preset: its headline is event.invalid, and its facts now say the cards form no meld
    (they said "7h 7s 7d JK read as a set of 4 cards, wild JK")."""
    s = _opened(JOKERLESS[name])
    seq = s.rep.seq + 1
    ev = (MeldLaid(0, (*parse_cards("5c 4c"), JOKER), seq=seq) if move == "meld"
          else CardsLaidOff(0, 0, (JOKER,), seq=seq))
    with pytest.raises(IllegalMoveError) as caught:
        s.push(ev)
    assert caught.value.rule == "event.invalid"
    got = explain_event([*s.events, ev], seq)
    assert got.rule == "event.invalid" and not got.legal
    readings = [f for f in got.facts if "form a meld" in f or " read as a " in f]
    assert len(readings) == 1, got.facts
    assert "do not form a meld [meld.not_a_card]" in readings[0], readings
    assert "(it has no jokers)" in readings[0], readings


@pytest.mark.parametrize("name", list(WITH_JOKERS))
def test_explain_reads_the_joker_meld_where_the_preset_has_jokers(name: str) -> None:
    rules = WITH_JOKERS[name]
    s = Scenario(rules, hands={0: "7h 7s 7d 4c 5c JK", 1: "3d"}, stock="9h 9c 9d",
                 upcard="Td" if rules.initial_upcard else None)
    s.draw().meld("7h 7s 7d")
    s.layoff(0, "JK")
    got = explain_event(s.events, s.rep.seq)
    assert got.legal, got
    assert any("read as a set of 4" in f and "wild JK" in f for f in got.facts), got.facts


# ------------------------------------------------------------------ §9: every number is a knob
# One classic hand (house rules: the family's two jokers, RULES.md §11) that puts every kind of
# card on the table and in the other hand, with no canastra: seat 0 opens with three aces,
# then goes out by melding 3h..7h with the 2c as its wild and Kc Kd with a joker.
#   side 0: 3 aces + 5 low + one 2 + 2 high + one joker + going out
#   side 1: -(one ace + one 2 + one joker + 4 high + 4 low)   (Ac 2d JK 9c Tc Jc Qc 3d..6d)
POINTS = {"joker": 10, "two": 10, "ace": 15, "high": 10, "low": 5}  # RULES.md §9, classic


def _every_card_hand(**knobs: Any) -> Scenario:
    s = Scenario("classic", hands={0: "Ah As Ad 3h 4h 5h 6h 7h 2c Kc Kd",
                                   1: "Ac 2d JK 9c Tc Jc Qc 3d 4d 5d 6d"},
                 stock="Qh 9s JK", jokers=2, **knobs)
    s.draw("Qh").meld("Ah As Ad").discard("Qh")
    s.draw("9s").discard("9s")
    s.draw("JK").meld("3h 4h 5h 6h 7h 2c").meld("Kc Kd JK").go_out()
    return s


def _every_card_scores(p: dict[str, int], going_out: int) -> tuple[int, int]:
    side0 = 3 * p["ace"] + 5 * p["low"] + p["two"] + 2 * p["high"] + p["joker"] + going_out
    side1 = -(p["ace"] + p["two"] + p["joker"] + 4 * p["high"] + 4 * p["low"])
    return side0, side1


def test_the_every_card_hand_scores_by_the_presets_table() -> None:
    # 45 + 25 + 10 + 20 + 10 + 50 = 160;  -(15 + 10 + 10 + 40 + 20) = -95
    assert _every_card_scores(POINTS, 50) == (160, -95)
    s = _every_card_hand()
    s.end_hand("went_out", (160, -95))


@pytest.mark.parametrize("kind", list(POINTS))
def test_each_card_value_is_a_knob_of_the_hand_score(kind: str) -> None:
    changed = {**POINTS, kind: POINTS[kind] + 7}
    want = _every_card_scores(changed, 50)
    assert want != (160, -95)
    s = _every_card_hand(points={kind: changed[kind]})
    refused(s, "score.mismatch", (), "end_hand", "went_out", (160, -95))
    s.end_hand("went_out", want)


@pytest.mark.parametrize("going_out", [50, 0, 333])
def test_the_going_out_bonus_is_a_knob(going_out: int) -> None:
    s = _every_card_hand(bonuses={"going_out": going_out})
    s.end_hand("went_out", _every_card_scores(POINTS, going_out))


# The hand of test_scenarios_probe38_match: seat 0 opens with three jacks, then lays 3h..Th
# (a clean canastra of 8) and the fourth jack, going out. With 2c in place of 8h the run is a
# dirty canastra. Seat 1 keeps Ac Ad 3c 5d 7s 9d Kc Kd 4s 6c 8d: 30 + 25 + 40 = 95.
CLEAN_HAND = "Js Jd Jc 3h 4h 5h 6h 7h 8h 9h Th"
DIRTY_HAND = "Js Jd Jc 3h 4h 5h 6h 7h 2c 9h Th"
SEAT1 = "Ac Ad 3c 5d 7s 9d Kc Kd 4s 6c 8d"


def _canastra_hand(rules: Rules | str, seat0: str, **knobs: Any) -> Scenario:
    s = Scenario(rules, hands={0: seat0, 1: SEAT1}, stock="Kh 8c Jh", **knobs)
    s.draw("Kh").meld("Js Jd Jc").discard("Kh")
    s.pass_turn()
    run = " ".join(seat0.split()[3:])
    s.draw("Jh").meld(run).layoff(0, "Jh").go_out()
    return s


@pytest.mark.parametrize(("seat0", "kind", "table"), [
    (CLEAN_HAND, "clean", 40 + 25 + 30),  # J x4 40, 3..7 25, 8 9 T 30
    (DIRTY_HAND, "dirty", 40 + 25 + 10 + 20),  # the 2c 10 in place of the 8h
])
@pytest.mark.parametrize("bonus", [None, 0, 275])
def test_the_clean_and_dirty_bonuses_are_knobs(seat0: str, kind: str, table: int,
                                               bonus: int | None) -> None:
    default = {"clean": 200, "dirty": 100}[kind]
    knobs = {} if bonus is None else {"bonuses": {kind: bonus}}
    s = _canastra_hand("classic", seat0, **knobs)
    assert s.state.melds[0][1].canastra == kind
    got = default if bonus is None else bonus
    if bonus is not None:
        refused(s, "score.mismatch", (), "end_hand", "went_out",
                (table + default + 50, -95))
    s.end_hand("went_out", (table + got + 50, -95))


# A relancinho (classic, §7): seat 0 lays its whole hand in its first turn, 3h..Th (a clean
# canastra of 8: 25 + 30 = 55) and K K K (30), and discards the Qs it drew.
#   side 0: 85 + 200 clean + 50 going out + the relancinho
RELANCINHO_HAND = "3h 4h 5h 6h 7h 8h 9h Th Ks Kd Kc"


def _relancinho(**knobs: Any) -> Scenario:
    s = Scenario("classic", hands={0: RELANCINHO_HAND, 1: SEAT1}, stock="Qs", **knobs)
    s.draw("Qs").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Ks Kd Kc").discard("Qs").go_out()
    return s


@pytest.mark.parametrize(("knobs", "relancinho"), [
    ({}, 100),
    ({"bonuses": {"relancinho": 40}}, 40),
    ({"relancinho": False}, 0),  # the knob off: the same hand earns nothing for it
    ({"relancinho": False, "bonuses": {"relancinho": 40}}, 0),
])
def test_the_relancinho_is_a_knob_and_so_is_its_bonus(knobs: dict[str, Any],
                                                      relancinho: int) -> None:
    s = _relancinho(**knobs)
    want = (85 + 200 + 50 + relancinho, -95)
    wrong = (85 + 200 + 50 + (100 if relancinho != 100 else 0), -95)
    refused(s, "score.mismatch", (), "end_hand", "went_out", wrong)
    s.end_hand("went_out", want)


# A hand that ends on an exhausted stock with no morto taken (§8, §9): every side pays its
# hand and its morto. Seat 0 holds 55 points, seat 1 110.
LOW_HAND = "3c 4d 5s 6c 7d 3d 4s 5c 6d 7s 3s"  # 11 x 5 = 55
HIGH_HAND = "Kc Kd Ks Qc Qd Qs Jc Jd Js Tc Td"  # 11 x 10 = 110


def _stock_out(rules: Rules | str, **knobs: Any) -> Scenario:
    s = Scenario(rules, hands={0: LOW_HAND, 1: HIGH_HAND}, **knobs)
    while s.state.stock:
        s.pass_turn()
    return s


@pytest.mark.parametrize(("name", "knobs", "penalty"), [
    ("biriba", {}, 100),
    ("biriba", {"bonuses": {"morto_not_taken": 35}}, 35),
    # classic's own table has no morto penalty (§9 "–"); a morto is for at most 4 players
    ("classic", {"morto": True, "player_counts": [2, 3, 4]}, 0),
    ("classic", {"morto": True, "player_counts": [2, 3, 4],
                 "bonuses": {"morto_not_taken": 35}}, 35),
    ("classic", {"bonuses": {"morto_not_taken": 35}}, 0),  # no morto: nothing to pay for
])
def test_the_morto_penalty_is_a_knob_of_a_stock_out(name: str, knobs: dict[str, Any],
                                                    penalty: int) -> None:
    s = _stock_out(name, **knobs)
    assert sorted(s.hand(0)) == sorted(parse_cards(LOW_HAND))
    assert sorted(s.hand(1)) == sorted(parse_cards(HIGH_HAND))
    refused(s, "score.mismatch", (), "end_hand", "stock_out",
            (-55 - penalty - 1, -110 - penalty - 1))
    s.end_hand("stock_out", (-55 - penalty, -110 - penalty))


# burraco (§6): A♠..7♠ naturals with a joker as the 8 is semi-clean (seven in a row); laid in
# the first turn, then the stock runs out. Seat 0 keeps Qc Qd (20) after discarding its draw.
#   table: As 15 + the 2s 20 + 3s..7s 25 + JK 30 = 90; semi-clean 150; hand -20; morto -100
SEMI_HAND = "As 2s 3s 4s 5s 6s 7s JK Qc Qd Kh"


@pytest.mark.parametrize(("knobs", "cls", "bonus"), [
    ({}, "semi_clean", 150),
    ({"bonuses": {"semi_clean": 120}}, "semi_clean", 120),
    ({"semi_clean": False}, "dirty", 100),  # the knob off: one wild makes it dirty
])
def test_the_semi_clean_canastra_is_a_knob(knobs: dict[str, Any], cls: str, bonus: int) -> None:
    s = Scenario("burraco", hands={0: SEMI_HAND, 1: HIGH_HAND}, stock="Kc", upcard="9d",
                 **knobs)
    s.draw("Kc").meld("As 2s 3s 4s 5s 6s 7s JK").discard("Kc")
    assert s.state.melds[0][0].canastra == cls
    while s.state.stock:
        s.pass_turn()
    # seat 0: Qc Qd Kh 30; seat 1 110 (burraco's 2 is 20, none here)
    s.end_hand("stock_out", (90 + bonus - 30 - 100, -110 - 100))


# burako (§6): the royal and ace-to-ace hand of test_rule_scenarios45, with the bonus knobs
# changed: 185 on the table + the canastra's bonus + 100 going out; seat 1 -(95 + 100):
# Ac Ad 30, 3c 5d 7s 4s 6c 25, 9d Kc Kd 8d 40, and its morto never taken.
BURAKO_SEAT1 = "Ac Ad 3c 5d 7s 9d Kc Kd 4s 6c 8d"


@pytest.mark.parametrize(("knobs", "bonus", "cls"), [
    ({}, 1000, "ace_to_ace"),
    ({"bonuses": {"ace_to_ace": 700}}, 700, "ace_to_ace"),
    ({"bonuses": {"royal": 900}}, 1000, "ace_to_ace"),  # royal's value is not asked for
    ({"ace_both_ends": False}, 500, "royal"),  # A..K only: the second ace goes elsewhere
    ({"ace_both_ends": False, "bonuses": {"royal": 900}}, 900, "royal"),
    ({"royal_canastras": False}, 200, "clean"),  # the knob off: a clean canastra
])
def test_the_royal_and_ace_to_ace_bonuses_are_knobs(knobs: dict[str, Any], bonus: int,
                                                    cls: str) -> None:
    both = knobs.get("ace_both_ends", True)
    morto = "Qs Ks As 3c 3d 3h 4c 4d 4h 9c 9d"
    s = Scenario("burako", hands={0: "As 2s 3s 4s 5s 6s 7s 8s 9s Ts 5c", 1: BURAKO_SEAT1},
                 mortos={0: morto}, stock="Js 6d 9h", **knobs)
    s.draw().meld("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js").discard("5c").morto(direct=False)
    s.draw().discard("6d")
    s.draw().layoff(0, "Qs Ks")
    if both:
        s.layoff(0, "As")
        s.meld("3c 3d 3h").meld("4c 4d 4h").meld("9c 9d 9h").go_out()
        table = 185  # A..K..A 125 + sets 60
    else:
        with s.illegal("meld.duplicate_in_run"):
            s.layoff(0, "As")
        s.meld("3c 3d 3h").meld("4c 4d 4h").meld("9c 9d 9h")
        s.discard("As")  # the last tile thrown: going out by a discard
        s.go_out()
        table = 185 - 15
    assert s.state.melds[0][0].canastra == cls
    s.end_hand("went_out", (table + bonus + 100, -95 - 100))


# ------------------------------------------------------------------ §2, §10: a match of hands
def _next_hand(s: Scenario, hands: dict[int, str], stock: str = "") -> Scenario:
    """Deal the match's next hand, by the next dealer (first dealer + hands played)."""
    done = len(s.state.results)
    ev = build_deal(s.rules, s.players, hands, stock, {}, None, hand_no=done,
                    dealer=(s.state.first_dealer + done) % s.players)
    return s.push(msgspec.structs.replace(ev, seq=s.rep.seq + 1))


def _go_out_hand(s: Scenario, opener: int) -> None:
    """``opener`` (first to play) goes out in its second turn with CLEAN_HAND, as above:
    J x4 40 + 3h..Th 55 + clean 200 + going out 50 = 345; the other seat keeps SEAT1, 95."""
    assert s.turn == opener
    s.draw("Kh").meld("Js Jd Jc").discard("Kh")
    s.pass_turn()
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h Th").layoff(0, "Jh").go_out()


def test_a_match_of_four_hands_carries_totals_vulnerability_and_the_deal() -> None:
    """classic to 600 (house rules): vulnerable from 300 (half the target, §10).

    hand 0, dealer 1, seat 0 first: seat 0 goes out: 345 / -95.      totals 345, -95
    hand 1, dealer 0, seat 1 first: a stock-out, seat 0 holds HIGH_HAND 110, seat 1 LOW_HAND
        55; side 0 was vulnerable (345 >= 300) and laid nothing.    totals 235, -150
    hand 2, dealer 1, seat 0 first: side 0 is below 300 again: a 30-point opening stands;
        seat 0 goes out: 345 / -95.                                 totals 580, -245
    hand 3, dealer 0, seat 1 first: side 0 (580) is vulnerable: seat 1 goes out, 345; seat 0
        keeps LOW_HAND... and the match is not over (580 - 55 = 525, -245 + 345 = 100).
    """
    s = Scenario("classic", hands={0: CLEAN_HAND, 1: SEAT1}, stock="Kh 8c Jh",
                 target_score=600)
    assert s.rules.vulnerable_at == 300
    _go_out_hand(s, 0)
    s.end_hand("went_out", (345, -95))
    assert s.state.totals == (345, -95) and s.state.phase == "between"

    _next_hand(s, {0: HIGH_HAND, 1: LOW_HAND})
    assert (s.state.dealer, s.turn) == (0, 1)
    assert s.state.vulnerable == (True, False)
    while s.state.stock:
        s.pass_turn()
    s.end_hand("stock_out", (-110, -55))
    assert s.state.totals == (345 - 110, -95 - 55) == (235, -150)

    _next_hand(s, {0: CLEAN_HAND, 1: SEAT1}, stock="Kh 8c Jh")
    assert (s.state.dealer, s.turn) == (1, 0)
    assert s.state.vulnerable == (False, False)  # 235 < 300: the hand took it away
    _go_out_hand(s, 0)  # its first meld, J J J, is 30 points
    s.end_hand("went_out", (345, -95))
    assert s.state.totals == (235 + 345, -150 - 95) == (580, -245)

    _next_hand(s, {1: CLEAN_HAND, 0: LOW_HAND}, stock="Kh 8c Jh")
    assert (s.state.dealer, s.turn) == (0, 1)
    assert s.state.vulnerable == (True, False)
    _go_out_hand(s, 1)
    refused(s, "score.mismatch", (), "end_hand", "went_out", (-95, 345))
    s.end_hand("went_out", (-55, 345))
    assert s.state.totals == (580 - 55, -245 + 345) == (525, 100)
    assert s.state.phase == "between" and s.state.winner is None


def test_a_short_opening_asks_90_for_that_hand_only() -> None:
    """§10: a vulnerable side that takes a short opening back needs 90 "for the rest of that
    hand"; the next hand starts again at 75. Carried in at 800 (vulnerable at 750)."""
    # seat 0: J J J (30) is short; Q Q Q K K K 5s 6s 7s (30 + 30 + 15 = 75) reaches 75 but
    # not 90 after the retraction.
    hand = "Js Jd Jc Qs Qd Qc Ks Kd Kc 6s 7s"
    s = carried_in(Scenario("classic", hands={0: hand, 1: SEAT1}, stock="5s 8c 3h 4h"),
                   (800, 0))
    s.draw("5s").meld("Js Jd Jc")
    refused(s, "vulnerable.opening_too_low", ("75",), "discard", "7s")
    s.retract("Js Jd Jc")
    assert s.state.opening_min == (90, 75)
    s.meld("Qs Qd Qc").meld("Ks Kd Kc").meld("5s 6s 7s")  # 30 + 30 + 15 = 75 < 90
    refused(s, "vulnerable.opening_too_low", ("90",), "discard", "Jc")
    s.retract("Qs Qd Qc Ks Kd Kc 5s 6s 7s")
    s.discard("Jc")
    # nobody lays again and the stock runs out
    while s.state.stock:
        s.pass_turn()
    held = s.hand(0)
    assert sorted(held) == sorted(parse_cards("Js Jd Qs Qd Qc Ks Kd Kc 5s 6s 7s"))
    # J J Q Q Q K K K 80, 5 6 7 15: 95; seat 1 keeps SEAT1, 95
    s.end_hand("stock_out", (-95, -95))
    assert s.state.totals == (800 - 95, -95) == (705, -95)
    # hand 1: 705 < 750, not vulnerable
    _next_hand(s, {1: SEAT1, 0: hand}, stock="8s 8c")
    assert s.state.vulnerable == (False, False) and s.state.opening_min == (75, 75)


def test_the_minimum_is_75_again_in_the_next_hand_of_a_vulnerable_side() -> None:
    hand = "Js Jd Jc Qs Qd Qc Ks Kd Kc 6s 7s"
    s = carried_in(Scenario("classic", hands={0: hand, 1: SEAT1}, stock="5s 8c 3h 4h"),
                   (1200, 0))
    s.draw("5s").meld("Js Jd Jc").retract("Js Jd Jc").discard("Jc")
    assert s.state.opening_min == (90, 75)
    while s.state.stock:
        s.pass_turn()
    s.end_hand("stock_out", (-95, -95))
    assert s.state.totals == (1200 - 95, -95) == (1105, -95)  # still at or above 750
    _next_hand(s, {0: hand, 1: SEAT1}, stock="Qh 5s")
    assert s.state.vulnerable == (True, False) and s.state.opening_min == (75, 75)
    s.pass_turn()  # seat 1 plays first in hand 1
    # 75 points now open (75 is the minimum again; it was 90 in the hand before)
    s.draw("5s").meld("Qs Qd Qc").meld("Ks Kd Kc").meld("5s 6s 7s").discard("Jc")
    assert s.state.opened[0]


@pytest.mark.parametrize(("players", "first"), [(2, 0), (3, 1), (4, 2), (6, 5)])
def test_the_deal_passes_on_from_any_first_dealer(players: int, first: int) -> None:
    """§2: the dealer rotates each hand and the seat after the dealer plays first, from the
    first dealer the match start names; a stock-out hand each, every side paying its hands
    (classic, 2 to 6 players)."""
    rules = preset("classic")
    ms = msgspec.structs.replace(start(rules, players), first_dealer=first)
    rep = Replayer()
    rep.step(ms)
    want_totals = [0] * rules.sides(players)
    for k in range(players + 1):
        dealer = (first + k) % players
        hs = build_deal(rules, players, {}, "", {}, None, hand_no=k, dealer=dealer)
        hs = msgspec.structs.replace(hs, seq=rep.seq + 1)
        wrong = msgspec.structs.replace(hs, dealer=(dealer + 1) % players)
        with pytest.raises(IllegalMoveError) as caught:
            rep.step(wrong)
        assert caught.value.rule == "deal.dealer_rotation"
        rep.step(hs)
        st = rep.state()
        assert (st.dealer, st.turn) == (dealer, (dealer + 1) % players)
        # the hand each seat was dealt is what it pays: every card from RULES.md §9's table
        for seat in range(players):
            want_totals[seat if players <= 3 else seat % 2] -= spec_points("classic",
                                                                          hs.hands[seat])
        while rep.state().stock:
            st = rep.state()
            top = st.stock[0]
            rep.step(CardDrawn(st.turn, top, seq=st.seq + 1))
            rep.step(CardDiscarded(st.turn, top, seq=st.seq + 2))
        rep.step(HandEnded("stock_out", seq=rep.seq + 1))
        assert rep.state().totals == tuple(want_totals), k


def test_the_target_decides_after_the_hand_that_reaches_it() -> None:
    """§10 with the target a knob: 345 + 345 = 690 ends a match to 600 after the second hand
    and only the match end may follow; to 700 the same hands leave it open."""
    for target, over in ((600, True), (700, False), (690, True)):
        # without vulnerability (a knob): side 0's 30-point opening stands in hand 1 too
        s = Scenario("classic", hands={0: CLEAN_HAND, 1: SEAT1}, stock="Kh 8c Jh",
                     target_score=target, vulnerability=False)
        _go_out_hand(s, 0)
        s.end_hand("went_out", (345, -95))
        _next_hand(s, {0: CLEAN_HAND, 1: LOW_HAND}, stock="Qh Kh 8c Jh")
        s.pass_turn()  # seat 1 first: draws the Qh and throws it
        _go_out_hand(s, 0)
        # side 0: 345 again (the Qh on the pile is nobody's); side 1 LOW_HAND 55
        s.end_hand("went_out", (345, -55))
        assert s.state.totals == (690, -150)
        if over:
            assert s.state.phase == "decided" and s.state.winner == 0
            refused(s, "match.decided", (), "push", _deal_after(s))
            s.end_match(totals=(690, -150), winner=0)
        else:
            assert s.state.phase == "between" and s.state.winner is None
            refused(s, "match.not_over", ("700",), "end_match")


def _deal_after(s: Scenario) -> HandStarted:
    done = len(s.state.results)
    ev = build_deal(s.rules, s.players, {}, "", {}, None, hand_no=done,
                    dealer=(s.state.first_dealer + done) % s.players)
    return msgspec.structs.replace(ev, seq=s.rep.seq + 1)


def test_a_match_ended_mid_hand_is_not_over() -> None:
    """RULES.md has no abandoned match: a match ends only after the hand that decides it, so
    a match end in the middle of a hand is refused, whatever totals it names."""
    s = Scenario("classic", hands={0: CLEAN_HAND, 1: SEAT1}, stock="Kh 8c Jh",
                 target_score=100)
    s.draw("Kh").meld("Js Jd Jc").discard("Kh")
    refused(s, "match.not_over", (), "end_match", totals=(30, 0), winner=0)


def test_card_values_are_what_the_opening_minimum_counts() -> None:
    """§10 counts "card points", so a knob of §9 moves the opening: J J J is 30 and short of
    75 by the preset's table, 75 with house rules that make an 8..K worth 25."""
    for high, short in ((10, True), (25, False)):
        s = carried_in(Scenario("classic", hands={0: "Js Jd Jc 4c 5c 6d 7d 8s 9s Ts Qc"},
                                stock="Kh", points={"high": high}), (800, 0))
        s.draw("Kh").meld("Js Jd Jc")
        if short:
            refused(s, "vulnerable.opening_too_low", ("totals 30",), "discard", "Kh")
        else:
            s.discard("Kh")
            assert s.state.opened == (True, False)


def test_four_players_the_side_made_vulnerable_by_a_hand_opens_as_one() -> None:
    """§2, §10 at four: scores, totals and vulnerability are the side's. classic to 500
    (vulnerable from 250).

    hand 0, dealer 3, seat 0 first: seat 0 goes out (345) but its partner, seat 2, holds
        LOW_HAND (55): side 0 290; side 1 -(95 + 110) = -205.
    hand 1, dealer 0, seat 1 first: side 0 is vulnerable. Seat 2 opens J J J (30), short, and
        takes it back; then its partner, seat 0, needs 90 too: 75 is refused.
    """
    s = Scenario("classic", 4, hands={0: CLEAN_HAND, 1: SEAT1, 2: LOW_HAND, 3: HIGH_HAND},
                 stock="Kh 8c 8d 8h Jh", target_score=500)
    assert s.rules.vulnerable_at == 250
    s.draw("Kh").meld("Js Jd Jc").discard("Kh")
    s.pass_turn().pass_turn().pass_turn()
    s.draw("Jh").meld("3h 4h 5h 6h 7h 8h 9h Th").layoff(0, "Jh").go_out()
    refused(s, "score.mismatch", (), "end_hand", "went_out", (345, -205))
    s.end_hand("went_out", (345 - 55, -(95 + 110)))
    assert s.state.totals == (290, -205)

    _next_hand(s, {2: "Js Jd Jc Qs Qd Qc Ks Kd Kc 6s 7s", 0: "Qh Qs Qd Kh Ks Kd 5h 6h 9d 9c 4c"},
               stock="2d 5s 2h 7h")
    assert (s.state.dealer, s.turn) == (0, 1)
    assert s.state.vulnerable == (True, False)
    s.pass_turn()  # seat 1
    s.draw("5s").meld("Js Jd Jc")  # seat 2
    refused(s, "vulnerable.opening_too_low", ("75", "30"), "discard", "7s")
    s.retract("Js Jd Jc").discard("Jc")
    assert s.state.opening_min == (90, 75)
    s.pass_turn()  # seat 3
    s.draw("7h").meld("Qh Qs Qd").meld("Kh Ks Kd").meld("5h 6h 7h")  # seat 0
    # 30 + 30 + 15 = 75 by RULES.md §9: the preset's minimum, but the side now needs 90
    refused(s, "vulnerable.opening_too_low", ("90", "totals 75"), "discard", "4c")
    s.retract("Qh Qs Qd Kh Ks Kd 5h 6h 7h").discard("4c")
    assert s.state.opened == (False, False) and s.state.opening_min == (90, 75)
