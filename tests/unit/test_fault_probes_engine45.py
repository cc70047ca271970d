"""Probe 45 of the rules engine: an event holding a code that is no card of its preset.

``event.invalid`` is the rule for "values the rules engine cannot read, such as a card code
that is no card". A deal, draw, redraw, pile pickup, meld, lay-off, retraction or discard
naming ``#0``, ``#99``, ``#-1``, ``#65`` (or the joker in a preset without jokers) was refused
by the first check it met instead: "does not hold #0" (``meld.cards_not_in_hand``),
``draw.wrong_card``, ``deal.material``, sending a referee to look for a card that does not
exist. Each kind is refused here as ``event.invalid``, its message naming the code; the same
event with a real card keeps its own rule, and every simulated match is still accepted.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec
import pytest

from buraco_log.cards import JOKER
from buraco_log.errors import IllegalMoveError
from buraco_log.events import AnyEvent, OpeningRetracted, tag_of
from buraco_log.reducer import Replayer, replay, step
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match

PRESETS = ("classic", "mega", "burako")  # no jokers; four jokers and an upcard; tiles
NO_CARDS = (0, 99, -1, 65)
KINDS = ("hs-hand", "hs-stock", "hs-morto", "hs-upcard", "dr", "rj", "pt", "ml", "lo", "rt",
         "dc")


@cache
def _match(name: str) -> tuple[AnyEvent, ...]:
    return tuple(simulate_match(preset(name), 2, seed="engine45"))


def _first(events: tuple[AnyEvent, ...], tag: str) -> int:
    return next(i for i, ev in enumerate(events) if tag_of(ev) == tag)


def _with(name: str, kind: str, code: int) -> tuple[list[AnyEvent], AnyEvent] | None:
    """The match's events up to the first event of ``kind``, that one holding ``code``."""
    events = _match(name)
    tag = kind.split("-")[0]
    rules = preset(name)
    if (kind == "hs-morto" and not rules.morto) or (kind == "hs-upcard"
                                                     and not rules.initial_upcard):
        return None
    if kind == "rj" and not rules.first_turn_redraw:
        return None
    i = _first(events, "ml" if tag == "rt" else tag)
    ev: Any = events[i]
    bad: AnyEvent
    if kind == "hs-hand":
        bad = msgspec.structs.replace(ev, hands=((*ev.hands[0][:-1], code), *ev.hands[1:]))
    elif kind == "hs-stock":
        bad = msgspec.structs.replace(ev, stock=(code, *ev.stock[1:]))
    elif kind == "hs-morto":
        bad = msgspec.structs.replace(ev, mortos=((code, *ev.mortos[0][1:]), *ev.mortos[1:]))
    elif kind == "hs-upcard":
        bad = msgspec.structs.replace(ev, upcard=code)
    elif tag in ("dr", "rj", "dc"):
        bad = msgspec.structs.replace(ev, card=code)
    elif tag == "pt":
        bad = msgspec.structs.replace(ev, top=code)
    elif tag == "rt":  # at the first meld's place: a retraction refused whatever it names
        bad = OpeningRetracted(seq=ev.seq, seat=ev.seat, cards=(code,))
    else:
        bad = msgspec.structs.replace(ev, cards=(*ev.cards[:-1], code))
    return list(events[:i]), bad


def _refusal(before: list[AnyEvent], bad: AnyEvent) -> IllegalMoveError:
    r = Replayer()
    r.run(before)
    with pytest.raises(IllegalMoveError) as caught:
        r.run([bad])
    return caught.value


@pytest.mark.parametrize("name", PRESETS)
def test_the_simulated_match_is_accepted(name: str) -> None:
    state = replay(_match(name))
    assert state.phase == "over"


def _cases() -> list[tuple[str, str]]:
    """The (preset, event kind) pairs a match of the preset holds: classic deals no morto and
    no upcard, mega and burako have no first-turn redraw (asked of a 30 ms simulated match
    each, cached for the tests)."""
    return [(name, kind) for name in PRESETS for kind in KINDS
            if _with(name, kind, 0) is not None]


@pytest.mark.parametrize(("name", "kind"), _cases())
def test_a_code_that_is_no_card_is_event_invalid(name: str, kind: str) -> None:
    unit = "tile" if name == "burako" else "card"
    for code in NO_CARDS:
        case = _with(name, kind, code)
        assert case is not None
        before, bad = case
        exc = _refusal(before, bad)
        assert exc.rule == "event.invalid", (code, str(exc))
        if kind == "pt" and code == 0:  # 0 is what a take written without its top reads as
            assert f"the take names no top {unit}" in str(exc), str(exc)
        else:
            assert f"#{code} is no {unit} of the {name} preset" in str(exc), str(exc)
        assert exc.seq == bad.seq
        seat = getattr(bad, "seat", None)
        if seat is not None:
            assert f"seat {seat} (" in str(exc), str(exc)


@pytest.mark.parametrize(("name", "kind"), _cases())
def test_the_joker_is_no_card_only_where_the_preset_has_none(name: str, kind: str) -> None:
    case = _with(name, kind, JOKER)
    assert case is not None
    before, bad = case
    if preset(name).jokers == 0:
        exc = _refusal(before, bad)
        assert exc.rule == "event.invalid", str(exc)
        assert "#64 is no card of the classic preset (it has no jokers)" in str(exc), str(exc)
        return
    r = Replayer()
    r.run(before)
    try:  # a card of this preset: accepted (a joker the seat holds), or the move's own rule
        r.run([bad])
    except IllegalMoveError as exc:
        assert exc.rule != "event.invalid", str(exc)
        assert "#64" not in str(exc), str(exc)


@pytest.mark.parametrize("kind", ["dr", "pt", "ml", "lo", "dc", "hs-stock"])
def test_a_real_card_keeps_its_own_rule(kind: str) -> None:
    """The same events naming a card the move may not name keep the move's rule: only a code
    that is no card is event.invalid (the ace of clubs the seat lacks, or a third copy)."""
    events = _match("classic")
    # the ace of clubs, or the ace of spades where the ace of clubs is the right card
    before, bad = next(case for ace in (1, 49) if (case := _with("classic", kind, ace))
                       is not None and case[1] != events[len(case[0])])
    exc = _refusal(before, bad)
    assert exc.rule != "event.invalid", str(exc)
    assert exc.rule.split(".")[0] in ("draw", "pile", "meld", "layoff", "discard", "deal"), \
        str(exc)


def test_the_check_comes_before_the_turn_and_holds_for_step() -> None:
    """Out of turn, and through validate/step (one event at a time), the code is still what
    is wrong with the event."""
    events = _match("classic")
    i = _first(events, "dc")
    ev: Any = events[i]
    other = msgspec.structs.replace(ev, seat=1 - ev.seat, card=99)
    r = Replayer()
    r.run(events[:i])
    with pytest.raises(IllegalMoveError) as caught:
        step(r.state(), other)
    assert caught.value.rule == "event.invalid", str(caught.value)
    assert "#99 is no card of the classic preset" in str(caught.value)
    # with a real card it is the turn's refusal, as before
    with pytest.raises(IllegalMoveError) as caught:
        step(r.state(), msgspec.structs.replace(other, card=ev.card))
    assert caught.value.rule == "turn.not_your_turn", str(caught.value)


def test_several_codes_are_named_once_each() -> None:
    before, bad = _with("mega", "ml", 0)  # type: ignore[misc]
    bad = msgspec.structs.replace(bad, cards=(99, 0, 99))
    exc = _refusal(before, bad)
    assert exc.rule == "event.invalid"
    assert "#99, #0 are no cards of the mega preset" in str(exc), str(exc)


def test_an_empty_pile_has_no_top_so_its_stand_in_code_stays_pile_empty() -> None:
    """The pile of a classic hand is empty before the first discard: no top could be named, so
    the code in its place is not what is wrong with the pickup."""
    events = _match("classic")
    i = _first(events, "dr")
    ev: Any = events[i]
    from buraco_log.events import PileTaken

    exc = _refusal(list(events[:i]), PileTaken(ev.seat, 0, 0, seq=ev.seq))
    assert exc.rule == "pile.empty", str(exc)
