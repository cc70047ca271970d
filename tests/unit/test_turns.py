"""A turn (RULES.md §4): draw or take the whole pile, meld, discard — in turn."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import CardDiscarded, CardDrawn, MatchStarted
from buraco_log.reducer import Replayer, apply, replay, step, validate
from buraco_log.state import State
from tests.play import start
from tests.scenario import Scenario


def test_the_seat_after_the_dealer_plays_first_and_play_passes_on() -> None:
    s = Scenario("classic", 3)
    assert s.state.dealer == 2 and s.turn == 0
    s.pass_turn()
    assert s.turn == 1
    s.pass_turn().pass_turn()
    assert s.turn == 0


def test_moving_out_of_turn_is_illegal() -> None:
    s = Scenario("classic")
    with s.illegal("turn.not_your_turn"):
        s.draw(seat=1)


def test_a_seat_that_does_not_exist_is_illegal() -> None:
    s = Scenario("classic")
    with s.illegal("turn.no_such_seat"):
        s.draw(seat=5)
    with s.illegal("turn.no_such_seat"):
        s.discard("Kh", seat=-1)


def test_melding_or_discarding_before_drawing_is_illegal() -> None:
    s = Scenario("classic", hands={0: "7h 7s 7d"})
    with s.illegal("turn.must_draw_first"):
        s.meld("7h 7s 7d")
    with s.illegal("turn.must_draw_first"):
        s.discard("7h")


def test_drawing_twice_is_illegal() -> None:
    s = Scenario("classic").draw()
    with s.illegal("turn.already_drew"):
        s.draw()


def test_the_draw_names_the_top_card_of_the_stock() -> None:
    s = Scenario("classic", stock="Kh 3c")
    with s.illegal("draw.wrong_card"):
        s.draw("3c")
    s.draw("Kh")
    assert parse_cards("Kh")[0] in s.hand(0)


def test_discarding_a_card_not_held_is_illegal() -> None:
    s = Scenario("classic", hands={0: "4c", 1: "Qc Qc"}, stock="Kh").draw()
    with s.illegal("discard.card_not_in_hand"):
        s.discard("Qc")
    assert s.last_error.seat == 0 and s.last_error.cards == parse_cards("Qc")


def test_the_whole_pile_is_taken_never_part_of_it() -> None:
    s = Scenario("classic", hands={0: "4c", 1: "9d"}, stock="Kh 5s")
    s.draw().discard("4c")
    s.draw().discard("9d")
    with s.illegal("pile.whole_pile"):
        s.take_pile(count=1)
    with s.illegal("pile.wrong_top"):
        s.take_pile(top="4c")
    s.take_pile()
    assert s.state.pile == ()
    assert parse_cards("4c")[0] in s.hand(0) and parse_cards("9d")[0] in s.hand(0)


def test_an_empty_pile_cannot_be_taken() -> None:
    s = Scenario("classic")
    with s.illegal("pile.empty"):
        s.take_pile(count=0, top="4c")


def test_events_must_come_in_seq_order() -> None:
    s = Scenario("classic")
    ev = CardDrawn(0, s.rep._t.stock[-1], seq=s.rep.seq + 2)
    with s.illegal("seq.out_of_order"):
        s.push(ev)
    assert s.last_error.seq == ev.seq


def test_a_log_opens_with_match_started() -> None:
    with pytest.raises(IllegalMoveError) as info:
        replay([CardDrawn(0, 1, seq=0)])
    assert info.value.rule == "match.not_started"


def test_a_match_starts_once() -> None:
    ms = start("classic", 2)
    r = Replayer()
    r.step(ms)
    with pytest.raises(IllegalMoveError) as info:
        r.step(msgspec.structs.replace(ms, seq=1))
    assert info.value.rule == "match.already_started"


def test_a_morto_preset_refuses_six_players_naming_the_field() -> None:
    with pytest.raises(IllegalMoveError) as info:
        replay([start("biriba", 6)])
    assert info.value.rule == "match.rules" and "player_counts" in str(info.value)


def test_the_sides_must_match_the_seating() -> None:
    ms = start("classic", 4)
    with pytest.raises(IllegalMoveError) as info:
        replay([msgspec.structs.replace(ms, sides=(0, 0, 1, 1))])
    assert info.value.rule == "match.sides"


def test_validate_apply_and_step_are_pure_and_agree() -> None:
    ms: MatchStarted = start("classic", 2)
    s0 = State()
    validate(s0, ms)
    s1 = step(s0, ms)
    assert s1 == apply(s0, ms)
    assert s0 == State()  # untouched
    assert s1.phase == "between"


def test_a_code_that_is_no_card_is_an_illegal_move_not_a_crash() -> None:
    s = Scenario("classic")
    with s.illegal("event.invalid"):
        s.push(CardDrawn(0, 999, seq=s.rep.seq + 1))
    assert "#999 is no card of the classic preset" in str(s.last_error)
    s.draw()
    with s.illegal("event.invalid"):
        s.push(CardDiscarded(0, 77, seq=s.rep.seq + 1))


def test_the_first_dealer_is_a_seat() -> None:
    with pytest.raises(IllegalMoveError) as info:
        replay([msgspec.structs.replace(start("classic", 2), first_dealer=5)])
    assert info.value.rule == "match.first_dealer"


def test_a_hand_cannot_start_in_the_middle_of_another() -> None:
    s = Scenario("classic")
    with s.illegal("hand.not_expected"):
        s.push(msgspec.structs.replace(s.events[1], hand=1, seq=s.rep.seq + 1))


def test_going_out_with_cards_in_hand_is_the_wrong_phase() -> None:
    s = Scenario("classic").draw()
    with s.illegal("turn.wrong_phase"):
        s.go_out()
