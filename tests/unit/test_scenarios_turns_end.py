"""A referee's scenarios of RULES.md §8 (a hand ends without going out when the stock is at
its floor) and §10 (the match: its target, the highest total, the tie that plays on), for
every preset. Expected values come from RULES.md by hand (the floors of §8, the targets of
§10, the card points of §9 in tests/spec_points.py); each refusal is checked for its rule id,
its seq and the words of its message.
"""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import format_card
from buraco_log.errors import IllegalMoveError
from buraco_log.events import TotalsCarried
from buraco_log.reducer import Replayer
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

ALL = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
       "burako")
FREE = ("classic", "biriba", "bossa-nova", "burraco", "mega", "burako")
MORTO = ("biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega", "burako")
FLOOR = {n: 2 if n == "mega" else 0 for n in ALL}  # §8: "0; 2 in mega"
TARGET = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
          "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}
MORTO_NOT_TAKEN = 100
SIDES = {2: (0, 1), 3: (0, 1, 2), 4: (0, 1, 0, 1)}



def resumed(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    """The scenario's hand in a match carried in at ``totals`` (TotalsCarried after the start)."""
    rep = Replayer()
    start, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    for ev in (start, TotalsCarried(totals, seq=1), deal):
        rep.step(ev)
    s.rep, s.events = rep, [start, TotalsCarried(totals, seq=1), deal]
    return s


def to_the_floor(s: Scenario, floor: int) -> None:
    """Draw and throw until the stock holds ``floor + 1`` cards."""
    t = s.rep._t
    while len(t.stock) > floor + 1:
        s.pass_turn()


# -- §8: the stock at its floor ----------------------------------------------------------------


@pytest.mark.parametrize(("name", "players"), [(n, p) for n in FREE
                                               for p in ((2, 3, 4) if n in ALL[:3] else (2, 4))])
def test_at_the_floor_a_free_pile_may_be_taken_or_the_hand_ends(name: str, players: int) -> None:
    floor = FLOOR[name]
    s = Scenario(name, players)
    to_the_floor(s, floor)
    # One card above the floor: the hand goes on, the card is drawn.
    refused(s, "hand.not_over", (f"floor {floor}",), "end_hand", "stock_out")
    s.draw()
    drawn = s.rep._t.drawn
    assert drawn is not None
    refused(s, "hand.not_over", ("before the draw",), "end_hand", "stock_out")
    s.discard(format_card(drawn))
    assert len(s.state.stock) == floor
    # At the floor no card is drawn; the next player may take the (free) pile instead ...
    refused(s, "stock.floor_reached", (f"floor {floor}",), "draw", "4c")
    s.take_pile()
    s.discard(format_card(s.hand(s.turn)[0]))
    # ... and the one after that ends the hand.
    refused(s, "stock.floor_reached", ("take the pile or the hand ends",), "draw", "4c")
    s.end_hand("stock_out")
    res = s.state.results[0]
    assert res.reason == "stock_out" and res.went_out is None
    # Nobody laid a card: each side loses its hands, and with a morto its morto not taken.
    sides = SIDES[players]
    for side, score in enumerate(res.scores):
        held = sum(spec_points(name, s.hand(p)) for p in range(players) if sides[p] == side)
        penalty = MORTO_NOT_TAKEN if name in MORTO else 0
        assert (score.going_out, score.morto_penalty) == (0, penalty)
        assert score.total == -held - penalty


MORTO_CARDS = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"


def run_of(name: str) -> str:
    return "3h 4h 5h 6h 7h 8h 9h" + (" Th Jh" if name.startswith("thirteen") else "")


def gone_out(name: str, totals: tuple[int, int] = (0, 0)) -> Scenario:
    """Seat 0 goes out with a clean run, jacks and (with a morto) the whole morto: directly
    in one turn, or in burako (indirect morto only) over two turns. The hand is not ended."""
    hand = f"{run_of(name)} Js Jd Jc Js"
    if name == "burako":
        s = resumed(Scenario(name, hands={0: hand}, stock="Kd 5c Kc",
                             mortos={0: MORTO_CARDS}), totals)
        s.draw("Kd").meld(run_of(name)).meld("Js Jd Jc Js").discard("Kd").morto(direct=False)
        s.pass_turn()
        s.draw("Kc").meld("Th Ts Td Tc").meld("Qh Qs Qd Qc").meld("Kh Ks Kd Kc")
        return s.go_out()
    s = resumed(Scenario(name, hands={0: hand}, stock="Jh", mortos={0: MORTO_CARDS}), totals)
    s.draw("Jh").meld(run_of(name)).meld("Js Jd Jc Js Jh")
    if name != "classic":
        s.morto(direct=True).meld("Th Ts Td Tc").meld("Kh Ks Kd").meld("Qh Qs Qd Qc")
    return s.go_out()


@pytest.mark.parametrize("name", ALL)
def test_after_going_out_the_hand_ends_by_going_out_not_by_the_stock(name: str) -> None:
    s = gone_out(name)
    refused(s, "hand.not_over", ("went out", "not by stock_out"), "end_hand", "stock_out")
    refused(s, "hand.over", ("after seat 0", "went out"), "draw", "4c")
    s.end_hand("went_out")
    assert s.state.results[0].went_out == 0


# -- §10: the match ----------------------------------------------------------------------------


GOING_OUT = {"classic": 50, "biriba": 50, "bossa-nova": 50, "thirteen": 100,
             "thirteen-quick": 100, "burraco": 100, "mega": 100, "burako": 100}
RELANCINHO = {"classic": 100, "biriba": 100, "bossa-nova": 100}


def gone_out_score(name: str) -> int:
    """Side 0's score for :func:`gone_out`, by RULES.md §9: every card laid, one clean
    canastra (the run), going out, and the relancinho where the whole hand went down in one
    turn (the classic family); nothing left in hand."""
    jacks = "Js Jd Jc Js" + ("" if name == "burako" else " Jh")
    laid = f"{run_of(name)} {jacks}" + ("" if name == "classic" else f" {MORTO_CARDS}")
    laid += " Kc" if name == "burako" else ""
    return spec_points(name, laid) + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)


@pytest.mark.parametrize("name", ALL)
def test_the_hand_that_reaches_the_target_is_the_last_and_one_short_is_not(name: str) -> None:
    t = TARGET[name]
    gain = gone_out_score(name)
    # Side 0 comes in exactly its score short of the target: the hand that reaches it is the
    # last, and only the match end may follow.
    s = gone_out(name, (t - gain, 0))
    refused(s, "match.not_over", ("phase 'out'",), "end_match")
    s.end_hand("went_out")
    assert s.state.totals[0] == t and s.state.winner == 0
    nxt = msgspec.structs.replace(s.events[2], hand=1, dealer=0, seq=s.rep.seq + 1)
    refused(s, "match.decided", ("side 0 won", f"target {t}", f"with {t}"), "push", nxt)
    refused(s, "match.wrong_winner", ("side 0 won",), "end_match", winner=1)
    s.end_match(winner=0)
    # One point short: the match plays another hand, dealt by the next seat.
    s = gone_out(name, (t - gain - 1, 0))
    s.end_hand("went_out")
    assert s.state.totals[0] == t - 1 and s.state.winner is None
    refused(s, "match.not_over", (f"target {t}", f"[{t - 1}, ", "another hand"), "end_match")
    s.push(msgspec.structs.replace(s.events[2], hand=1, dealer=0, seq=s.rep.seq + 1))
    assert s.state.phase == "draw" and s.turn == 1


@pytest.mark.parametrize("name", ALL)
def test_totals_tied_at_the_target_play_on_and_a_unique_best_decides(name: str) -> None:
    t = TARGET[name]
    # A tie at (or above) the target: another hand is played.
    s = resumed(Scenario(name), (t + 5, t + 5))
    assert s.state.phase == "draw" and s.state.winner is None
    refused(s, "match.not_over", ("phase 'draw'",), "end_match")
    # One point apart above the target: nothing is left to play, the carry is refused.
    rep = Replayer()
    rep.step(Scenario(name).events[0])
    with pytest.raises(IllegalMoveError) as info:
        rep.step(TotalsCarried((t + 5, t + 4), seq=1))
    assert info.value.rule == "match.carried_totals"
    assert "already decide" in str(info.value)


@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova"])
def test_three_sides_the_two_best_tied_at_the_target_play_on_one_best_wins(name: str) -> None:
    t = TARGET[name]
    # Three players, three sides. Two tied for the highest total at the target: play on,
    # whatever the third has. A single highest total at the target: nothing left to play.
    for totals, decided in (((t, t, t - 1), False), ((t, t - 1, t), False),
                            ((t + 1, t, t), True), ((t - 1, t, 0), True)):
        rep = Replayer()
        rep.step(Scenario(name, 3).events[0])
        carry = TotalsCarried(totals, seq=1)
        if decided:
            with pytest.raises(IllegalMoveError) as info:
                rep.step(carry)
            assert info.value.rule == "match.carried_totals"
            continue
        rep.step(carry)
        assert rep.state().totals == totals and rep.state().winner is None
        assert rep.state().phase == "between"
