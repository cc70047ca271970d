"""The three rulings corrected in issue 14, each accepted and refused, in the reducer, in
``legal_moves`` and ``pile_options``; and the §7 decisions the engine must agree with."""

from __future__ import annotations

import pytest

from buraco_log.cards import parse_cards
from buraco_log.events import CardsLaidOff, HandEnded, MeldLaid, PileTaken
from buraco_log.moves import legal_moves, pile_options, quick_moves
from tests.scenario import Scenario


def _c(text: str) -> int:
    return parse_cards(text)[0]


# -- 1. must-use-top: the top card laid off together with cards of the hand ------------------

# Seat 0 lays 3♥ 4♥ 5♥, throws A♣; seat 1 throws 7♥; seat 0 then looks at the pile (top 7♥).
# No card of these hands goes with 7♥ in any other way (no 7s, no hearts near it, no wilds).
REST_0 = "Kc Qd Js 9c Ts 4c 5d 8s As"
HAND_1 = "7h 3c 4s 6c 8d 9s Tc Jd Qs Kh 3d 4d Ad"


def _to_the_pickup(card_6: str) -> Scenario:
    s = Scenario(
        "thirteen",
        hands={0: f"3h 4h 5h {card_6} {REST_0}", 1: HAND_1},
        stock="Ac Qc",
        upcard="9d",
    )
    s.draw("Ac").meld("3h 4h 5h").discard("Ac")
    s.draw("Qc").discard("7h")
    return s


def test_the_pile_may_be_taken_when_the_top_goes_on_a_meld_with_a_card_of_the_hand() -> None:
    s = _to_the_pickup("6h")
    options = pile_options(s.state)
    assert options.may_take and options.pickup == "must_use_top"
    assert [(u.meld, u.cards) for u in options.uses] == [(0, tuple(sorted(parse_cards("6h 7h"))))]
    assert any(isinstance(m, PileTaken) for m in legal_moves(s.state))
    s.take_pile()
    seq = s.rep.seq + 1
    laying = [m for m in legal_moves(s.state) if isinstance(m, (CardsLaidOff, MeldLaid))]
    # 6♥ alone first keeps the 7♥ usable on 3♥..6♥, so it may come first too (RULES.md §4:
    # the top is used in the same turn)
    assert laying == [CardsLaidOff(0, 0, (_c("6h"),), seq=seq),
                      CardsLaidOff(0, 0, tuple(sorted(parse_cards("6h 7h"))), seq=seq)]
    quick = [m for m in quick_moves(s.state) if isinstance(m, (CardsLaidOff, MeldLaid))]
    assert quick == laying[1:]  # the bots' list lays the top at once
    s.layoff(0, "6h 7h").discard("Kc")
    assert s.state.melds[0][0].cards == parse_cards("3h 4h 5h 6h 7h")


def test_the_top_may_be_laid_after_other_cards_of_the_same_turn() -> None:
    s = _to_the_pickup("6h")
    s.take_pile().layoff(0, "6h")
    with s.illegal("pile.must_use_top"):  # the turn cannot end before the top is laid
        s.discard("Kc")
    s.layoff(0, "7h").discard("Kc")
    assert s.state.melds[0][0].cards == parse_cards("3h 4h 5h 6h 7h")


def test_the_hand_may_supply_the_wild_for_the_top_card() -> None:
    s = _to_the_pickup("JK")
    assert pile_options(s.state).may_take
    s.take_pile().layoff(0, "JK 7h").discard("Kc")
    assert s.state.melds[0][0].cards == parse_cards("3h 4h 5h JK 7h")


def test_the_pile_is_refused_when_no_card_of_the_hand_bridges_the_gap() -> None:
    s = _to_the_pickup("6c")
    options = pile_options(s.state)
    assert not options.may_take and options.uses == ()
    assert "cannot be used" in options.reason
    assert not any(isinstance(m, PileTaken) for m in legal_moves(s.state))
    with s.illegal("pile.must_use_top"):
        s.take_pile()


def test_a_free_pile_needs_no_use_of_its_top() -> None:
    s = Scenario("burraco", hands={0: "3h 4h 5h 6c Kc Qd Js 9c Ts 4c 5d"}, stock="Ac")
    s.draw("Ac").discard("Ac")
    options = pile_options(s.state)
    assert options.may_take and options.pickup == "free" and options.uses == ()


# -- 2. must-use-top: no stock-out while the pile can be taken --------------------------------

NOTHING_FOR_KD = "3c 4s 5h 6c 7s 8h 9c Ts Jh Qc 3s 4h 5c"  # no K, no diamond near K, no wild


def _at_the_floor(name: str, waiting: str) -> Scenario:
    """The stock runs out; the last drawer throws K♦ to the player to move, who holds
    ``waiting`` (13 cards in thirteen, 11 elsewhere) and has drawn and thrown every turn."""
    probe = Scenario(name)
    stock = len(probe.state.stock)
    last = (stock - 1) % 2  # the seat that draws the last stock card (seat 0 moves first)
    size = probe.rules.hand_size
    other = " ".join(waiting.split()[:size])
    spare = ["6s", "7c", "8c", "9d", "Th", "Jc", "Qh", "3c", "4c", "5s", "6h", "Tc"]
    thrower = "Kd " + " ".join(spare[: size - 1])
    hands = {last: thrower, 1 - last: other}
    s = Scenario(name, hands=hands)
    t = s.rep._t
    while len(t.stock) > 1:
        s.pass_turn()
    assert s.turn == last
    s.draw().discard("Kd")
    assert not s.state.stock and s.turn == 1 - last
    return s


def test_a_stock_out_is_refused_while_the_pile_can_be_taken_under_must_use_top() -> None:
    s = _at_the_floor("thirteen", "Qd Jd " + NOTHING_FOR_KD)
    assert pile_options(s.state).may_take
    moves = legal_moves(s.state)
    assert [type(m) for m in moves] == [PileTaken]  # the pile must be taken
    with s.illegal("stock.pile_can_be_taken"):
        s.end_hand("stock_out")
    s.take_pile().meld("Qd Jd Kd")


def test_a_stock_out_ends_the_hand_when_the_pile_cannot_be_taken() -> None:
    s = _at_the_floor("thirteen", NOTHING_FOR_KD)
    assert not pile_options(s.state).may_take
    assert [type(m) for m in legal_moves(s.state)] == [HandEnded]
    s.end_hand("stock_out")
    assert s.state.results[0].reason == "stock_out"


def test_under_a_free_pile_the_player_may_still_end_the_hand_at_the_floor() -> None:
    s = _at_the_floor("burraco", "Qd Jd " + NOTHING_FOR_KD)
    kinds = {type(m) for m in legal_moves(s.state)}
    assert kinds == {HandEnded, PileTaken}
    s.end_hand("stock_out")


# -- 3. the indirect morto is voided only by an opponent going out -----------------------------

SETS_10_PLUS_1 = "7h 7s 7d 8c 8d 8s 9h 9s 9d 9c Kd"  # + 7c: eleven melded, Kd discarded
MORTO_SETS = "Jh Js Jd Jc Qh Qs Qd Qc Th Ts Td"  # three sets and a ten left over


@pytest.mark.parametrize("voided_by", ["opponent_out", "any_end"])
def test_an_opponent_going_out_before_the_taker_plays_voids_the_morto_and_keeps_relancinho(
    voided_by: str,
) -> None:
    # Seat 0 empties its hand in its first turn (a relancinho) and takes its morto indirectly;
    # seat 1, whose side took its morto earlier in this very turn, goes out at once.
    s = Scenario(
        "biriba",
        hands={0: SETS_10_PLUS_1, 1: "3h 3s 3d 4h 4s 4d 5h 5s 5d 6c 6d"},
        mortos={1: MORTO_SETS},
        stock="7c 6s",
        morto_voided_by=voided_by,
    )
    s.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s.morto(direct=False)
    assert s.state.morto_pending == (0, None)
    s.draw("6s").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d").meld("6c 6d 6s")
    s.morto(direct=True)  # side 1's morto, taken directly: the turn goes on
    s.meld("Jh Js Jd Jc").meld("Qh Qs Qd Qc").meld("Th Ts Td")
    s.go_out().end_hand()
    side0 = s.state.results[0].scores[0]
    assert side0.morto_penalty == 100  # an opponent went out: voided under both readings
    assert side0.hand_penalty == 0  # the untouched morto is not counted as hand cards
    assert side0.relancinho == 100  # noted at once (`000` "logo anotados"): it stands


def test_every_preset_reads_the_morto_the_new_way_and_an_old_log_the_old_way() -> None:
    from buraco_log.rules import PRESETS, Rules

    assert {r.morto_voiding() for r in PRESETS.values()} == {"opponent_out"}
    assert Rules(name="from-an-old-log").morto_voiding() == "any_end"


# -- §7 decisions ------------------------------------------------------------------------------


@pytest.mark.parametrize("by_discard", [False, True])
def test_burako_goes_out_after_the_morto_by_melding_or_by_a_discard(by_discard: bool) -> None:
    # RULES.md §7: burako takes its morto only indirectly, but `004` is silent on going out
    # afterwards, so the hand may then be emptied either way.
    last = "2h" if by_discard else "Td"
    s = Scenario(
        "burako",
        hands={0: "3h 4h 5h 6h 7h 8h 9h Kc Kd Ks Qc"},
        mortos={0: "Jh Js Jd 4c 4d 4s 5c 5d 5s Th Tc"},
        stock=f"Kh 6c {last}",
    )
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Kc Kd Ks Kh").discard("Qc")
    with s.illegal("morto.wrong_kind"):
        s.morto(direct=True)
    s.morto(direct=False)
    s.pass_turn()  # seat 1
    s.draw(last).meld("Jh Js Jd").meld("4c 4d 4s").meld("5c 5d 5s")
    if by_discard:
        s.layoff(0, "Th 2h").discard("Tc")  # 2..T of hearts, the 2 natural; Tc thrown
    else:
        s.meld("Th Tc Td")
    assert s.state.phase == "emptied"
    s.go_out().end_hand()
    assert s.state.results[0].went_out == 0
    assert s.state.results[0].scores[0].going_out == 100


def test_two_partners_each_earn_a_relancinho_in_one_hand_and_the_partner_out_keeps_the_morto(
) -> None:
    # RULES.md §7: the relancinho is per player; a partner's going out does not void the
    # indirect morto (its cards then count as seat 0's hand).
    s = Scenario(
        "biriba",
        4,
        hands={0: SETS_10_PLUS_1, 2: "3h 3s 3d 4h 4s 4d 5h 5s 5d 6c 6d"},
        stock="7c Qc 6s",
    )
    s.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s.morto(direct=False)
    s.pass_turn()
    s.draw("6s").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d").meld("6c 6d 6s")
    s.go_out().end_hand()
    side0 = s.state.results[0].scores[0]
    assert side0.relancinho == 200  # seat 0 and seat 2, 100 each
    assert side0.morto_penalty == 0 and side0.hand_penalty > 0
