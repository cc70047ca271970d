"""The match (RULES.md §10) over several hands in every preset, as a referee settles it.

The earlier match files play `classic` alone over several hands (test_rule_scenarios47,
test_scenarios_probe34_match) or one hand per preset from carried totals
(test_scenarios_probe35_targets). Here every preset plays on past its first hand:

- both sides past the target in the same hand (one of them laid a canastra before the other
  went out): the highest total wins whoever went out; a tie there plays another hand, dealt by
  the next seat, which decides it;
- a side reaching the target exactly in its second hand from a negative start, and one point
  short the match goes on to a third hand dealt by the next seat again;
- after the match end, a new hand (``match.over``), a move (``match.over``); after the
  deciding hand and before the match end, a new hand (``match.decided``);
- three players scored alone and six in two partnerships (`classic` family, RULES.md §2).

Each hand score is summed by hand from RULES.md §9 (closing_hands.SIDE0 spells out the
closer's; the others' cards are counted by spec_points, RULES.md's card table).
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.events import CardDrawn, HandStarted
from tests.scenario import Scenario, build_deal, carried_in, refused
from tests.spec_points import spec_points
from tests.unit.closing_hands import HAND0, MORTO0, SIDE0

PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
# RULES.md §10 and §11: each preset's target.
TARGET = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
          "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}
MORTO_NOT_TAKEN = {name: 0 if name == "classic" else 100 for name in PRESETS}  # §9

# The closer's cards (closing_hands): HAND0 and the side's morto MORTO0; the closer draws
# Th (4c with thirteen cards; burako 5d, then Ah after the others pass).
RUN1, KINGS1 = "3s 4s 5s 6s 7s 8s 9s", "Ks Kh Kd"  # seat 1's opening in the crossing hand
HELD = "3d 4c 5c 6d 7s 8c 9d Ts Jc Qd As"  # 5 x 5 + 5 x 10 + 15 = 90
HELD13 = HELD + " Kc 3c"  # 105


def thirteen(name: str) -> bool:
    return name.startswith("thirteen")


def closer_hand(name: str) -> str:
    return HAND0 + (" 4s 4d" if thirteen(name) else "")


def closer_stock(name: str, players: int) -> str:
    if name == "burako":
        return "5d " + "Kh " * (players - 1) + "Ah"
    return "4c" if thirteen(name) else "Th"


def close(s: Scenario, name: str) -> None:
    """The seat to move lays its whole hand (and, where there is one, takes its morto and
    lays it) and goes out; in burako the morto is taken indirectly and the others pass."""
    if name == "burako":
        s.draw("5d").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").discard("5d")
        s.morto(direct=False)
        for _ in range(s.players - 1):
            s.pass_turn()
        s.draw("Ah").meld("Ks Kd Kc").meld("Qs Qd Qc Qh").meld("As Ad Ac Ah").discard("5c")
        s.go_out()
        return
    if thirteen(name):
        s.draw("4c").meld("3h 4h 5h 6h 7h 8h 9h").meld("Js Jd Jc Jh").meld("4s 4d 4c")
    else:
        s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Js Jd Jc Jh")
    if name == "classic":
        s.go_out()
        return
    s.morto(direct=True)
    s.meld("Ks Kd Kc").meld("Qs Qd Qc Qh").meld("As Ad Ac").discard("5c").go_out()


def deal_next(s: Scenario, hands: dict[int, str], mortos: dict[int, str], stock: str) -> None:
    """The next hand, dealt by the first dealer plus the hands played (RULES.md §2)."""
    done = len(s.state.results)
    ev = build_deal(s.rules, s.players, hands, stock, mortos, None, hand_no=done,
                    dealer=(s.state.first_dealer + done) % s.players)
    s.push(msgspec.structs.replace(ev, seq=s.rep.seq + 1))
    assert (s.state.hand, s.state.dealer) == (done, (s.state.first_dealer + done) % s.players)
    assert s.turn == (s.state.dealer + 1) % s.players  # the seat after the dealer plays first


def a_deal_after(s: Scenario) -> HandStarted:
    done = len(s.state.results)
    ev = build_deal(s.rules, s.players, {}, "", {}, None, hand_no=done,
                    dealer=(s.state.first_dealer + done) % s.players)
    return msgspec.structs.replace(ev, seq=s.rep.seq + 1)


def lost(s: Scenario, name: str, seats: tuple[int, ...]) -> int:
    """What the seats' held cards cost (RULES.md §9: cards left in hand)."""
    return sum(spec_points(name, s.hand(seat)) for seat in seats)


def finish(s: Scenario, totals: tuple[int, ...], winner: int) -> None:
    """The match is decided: no new hand, the wrong winner refused, the end, then nothing."""
    assert s.state.phase == "decided" and s.state.winner == winner
    assert s.state.totals == totals
    refused(s, "match.decided", (), "push", a_deal_after(s))
    wrong = (winner + 1) % len(totals)
    refused(s, "match.wrong_winner", (f"side {winner} won",), "end_match", totals=totals,
            winner=wrong)
    s.end_match(totals=totals, winner=winner)
    assert s.state.phase == "over"
    refused(s, "match.over", (), "push", a_deal_after(s))
    refused(s, "match.over", (), "push", CardDrawn(0, 1, seq=s.rep.seq + 1))


# ------------------------------------------------------------------ both sides past the target


def crossing(name: str, totals: tuple[int, int]) -> tuple[Scenario, tuple[int, int]]:
    """Seat 0 passes; seat 1 lays a clean run of seven and three kings (75, a vulnerable
    opening) and keeps one card (three with thirteen cards); seat 0 then closes."""
    keep = "6c 6d 8c" if thirteen(name) else "6c"
    s = carried_in(Scenario(name, hands={0: closer_hand(name), 1: f"{RUN1} {KINGS1} {keep}"},
                            mortos={0: MORTO0}, stock="8d 9d " + closer_stock(name, 2)), totals)
    s.draw("8d").discard("8d")
    s.draw("9d").meld(RUN1).meld(KINGS1).discard("9d")
    close(s, name)
    # side 1: run 3..9 45, kings 30, clean canastra 200, less what it keeps and its morto
    side1 = 45 + 30 + 200 - spec_points(name, keep) - MORTO_NOT_TAKEN[name]
    return s, (SIDE0[name], side1)


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("margin", [5, -5])
def test_both_sides_past_the_target_in_one_hand_the_highest_total_wins(
        name: str, margin: int) -> None:
    """Side 1 starts one point short and ends past the target with its canastra; side 0
    goes out and ends ``margin`` points above (or below) it: the highest total wins, whoever
    went out (docs/rules.md, "Who wins when both sides reach the target in one hand")."""
    t = TARGET[name]
    _, (s0, s1) = crossing(name, (0, 0))
    start = (t - 1 + s1 - s0 + margin, t - 1)
    assert max(start) < t <= min(start[0] + s0, start[1] + s1)
    s, scores = crossing(name, start)
    refused(s, "score.mismatch", (), "end_hand", "went_out", (scores[0], scores[1] + 1))
    s.end_hand("went_out", scores)
    after = (start[0] + s0, start[1] + s1)
    finish(s, after, 0 if margin > 0 else 1)


@pytest.mark.parametrize("name", PRESETS)
def test_a_tie_past_the_target_plays_a_hand_dealt_by_the_next_seat(name: str) -> None:
    t = TARGET[name]
    _, (s0, s1) = crossing(name, (0, 0))
    start = (t - 1 + s1 - s0, t - 1)
    s, scores = crossing(name, start)
    s.end_hand("went_out", scores)
    tie = t - 1 + s1
    assert s.state.totals == (tie, tie) and tie > t
    assert s.state.phase == "between" and s.state.winner is None
    refused(s, "match.not_over", ("another hand",), "end_match", totals=(tie, tie), winner=0)
    # hand 1, dealt by seat 0: seat 1 plays first and closes
    held = HELD13 if thirteen(name) else HELD
    deal_next(s, {1: closer_hand(name), 0: held}, {1: MORTO0}, closer_stock(name, 2))
    assert s.turn == 1
    close(s, name)
    loss = spec_points(name, held) + MORTO_NOT_TAKEN[name]  # 90 (105) and the morto
    assert lost(s, name, (0,)) == spec_points(name, held)
    s.end_hand("went_out", (-loss, SIDE0[name]))
    finish(s, (tie - loss, tie + SIDE0[name]), 1)


# ------------------------------------------------------------------ the target exactly


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("short", [0, 1])
def test_the_target_reached_exactly_in_the_second_hand_from_a_negative_start(
        name: str, short: int) -> None:
    """Side 0 starts at -150, side 1 where two hands take it to the target (or one point
    short). Hand 0: seat 0 closes; hand 1, dealt by seat 0: seat 1 closes."""
    t = TARGET[name]
    held = HELD13 if thirteen(name) else HELD
    loss = spec_points(name, held) + MORTO_NOT_TAKEN[name]
    start = (-150, t - SIDE0[name] + loss - short)
    s = carried_in(Scenario(name, hands={0: closer_hand(name), 1: held}, mortos={0: MORTO0},
                            stock=closer_stock(name, 2)), start)
    close(s, name)
    s.end_hand("went_out", (SIDE0[name], -loss))
    assert s.state.totals == (-150 + SIDE0[name], t - SIDE0[name] - short)
    assert s.state.phase == "between"
    deal_next(s, {1: closer_hand(name), 0: held}, {1: MORTO0}, closer_stock(name, 2))
    close(s, name)
    s.end_hand("went_out", (-loss, SIDE0[name]))
    after = (-150 + SIDE0[name] - loss, t - short)
    if not short:
        finish(s, after, 1)
        return
    assert s.state.totals == after and s.state.phase == "between"
    refused(s, "match.not_over", (str(t),), "end_match", totals=after, winner=1)
    deal_next(s, {}, {}, "")  # hand 2, dealt by seat 1 again: seat 0 first
    assert (s.state.hand, s.state.dealer, s.turn) == (2, 1, 0)


@pytest.mark.parametrize("name", PRESETS)
def test_a_negative_total_stays_negative_below_zero(name: str) -> None:
    """`000`: "o resultado positivo ou negativo": a side that starts below zero and loses a
    hand goes further below; no total is clamped at zero."""
    held = HELD13 if thirteen(name) else HELD
    loss = spec_points(name, held) + MORTO_NOT_TAKEN[name]
    s = carried_in(Scenario(name, hands={0: closer_hand(name), 1: held}, mortos={0: MORTO0},
                            stock=closer_stock(name, 2)), (-40, -30))
    close(s, name)
    s.end_hand("went_out", (SIDE0[name], -loss))
    assert s.state.totals == (-40 + SIDE0[name], -30 - loss)
    assert s.state.totals[1] < -100 and s.state.phase == "between"


# ------------------------------------------------------------------ three and six players

FAMILY = ("classic", "biriba", "bossa-nova")


@pytest.mark.parametrize("name", FAMILY)
def test_three_players_alone_the_second_closer_reaches_the_target_exactly(name: str) -> None:
    """RULES.md §2: with three players each is a side. Hand 0 (dealer 2): seat 0 closes;
    hand 1 (dealer 0): seat 1 closes and reaches the target exactly; seat 2 stays below
    zero. Every side that never took its morto pays it (not in classic)."""
    t, pen = TARGET[name], MORTO_NOT_TAKEN[name]
    s = Scenario(name, 3, hands={0: HAND0}, mortos={0: MORTO0}, stock="Th")
    # the seats that do not close keep what they were dealt: counted before any move
    loss1, loss2 = lost(s, name, (1,)) + pen, lost(s, name, (2,)) + pen
    s = carried_in(s, (t - SIDE0[name] - 1, t - SIDE0[name] + loss1, -60))
    close(s, name)
    s.end_hand("went_out", (SIDE0[name], -loss1, -loss2))
    after0 = (t - 1, t - SIDE0[name], -60 - loss2)
    assert s.state.totals == after0 and s.state.phase == "between"  # t - 1: not yet
    deal_next(s, {1: HAND0}, {1: MORTO0}, "Th")
    assert (s.state.dealer, s.turn) == (0, 1)
    h0, h2 = lost(s, name, (0,)) + pen, lost(s, name, (2,)) + pen
    close(s, name)
    s.end_hand("went_out", (-h0, SIDE0[name], -h2))
    finish(s, (t - 1 - h0, t, -60 - loss2 - h2), 1)


LOW = "3c 4c 5c 6c 7c 3d 4d 5d 6d 7d 3s"  # 11 x 5 = 55


def test_six_players_two_partnerships_the_side_of_the_second_closer_reaches_the_target(
        ) -> None:
    """RULES.md §2: six players in `classic` are two sides of three on alternate seats; the
    partners' cards count against the side. Hand 0 (dealer 5): seat 0 closes, side 0 one
    point short; hand 1 (dealer 0): seat 1 closes, its partners holding LOW each, and side 1
    reaches the target exactly."""
    name, t = "classic", TARGET["classic"]
    s = Scenario(name, 6, hands={0: HAND0}, stock="Th")
    odd0, even0 = lost(s, name, (1, 3, 5)), lost(s, name, (2, 4))
    side0 = SIDE0[name] - even0  # 445 less the partners' hands
    odd1 = 2 * spec_points(name, LOW)  # seats 3 and 5 in hand 1: 110
    start = (t - side0 - 1, t - SIDE0[name] + odd0 + odd1)
    assert max(start) < t and start[1] - odd0 < t
    s = carried_in(s, start)
    close(s, name)
    s.end_hand("went_out", (side0, -odd0))
    assert s.state.totals == (t - 1, start[1] - odd0) and s.state.phase == "between"
    deal_next(s, {1: HAND0, 3: LOW, 5: LOW}, {}, "Th")
    assert (s.state.dealer, s.turn) == (0, 1)
    even1 = lost(s, name, (0, 2, 4))
    assert lost(s, name, (3, 5)) == odd1
    close(s, name)
    s.end_hand("went_out", (-even1, SIDE0[name] - odd1))
    finish(s, (t - 1 - even1, t), 1)
