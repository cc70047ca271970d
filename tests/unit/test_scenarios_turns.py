"""Outside-checker scenarios: vulnerability by carried totals, going out and the morto, the
first-turn redraw, per preset and seat count. Each refusal is checked for its rule id and the
seq of the refused event; expected scores are worked out from RULES.md §9 in the comments."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import JOKER, RANK, parse_cards
from buraco_log.events import TotalsCarried
from buraco_log.reducer import Replayer
from tests.scenario import Scenario

CLASSIC_FAMILY = ("classic", "biriba", "bossa-nova")


def _refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    """``move`` (a Scenario method) must be refused with ``rule`` at the next seq."""
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq, (s.last_error.seq, seq)


def _carried(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    """The scenario's match with ``TotalsCarried(totals)`` recorded right after its start."""
    rep = Replayer()
    start = s.events[0]
    carried = TotalsCarried(totals, seq=1)
    deal = msgspec.structs.replace(s.events[1], seq=2)
    for ev in (start, carried, deal):
        rep.step(ev)
    s.rep = rep
    s.events = [start, carried, deal]
    return s


def _low_points(cards: tuple[int, ...]) -> int:
    """Classic-family card points (RULES.md §9): no jokers in these hands."""
    assert JOKER not in cards
    return sum(15 if RANK[c] == 1 else 10 if RANK[c] == 2 or RANK[c] >= 8 else 5 for c in cards)


# -- vulnerability: half the target, from carried totals (RULES.md §10) ---------------------


@pytest.mark.parametrize(
    ("name", "players"),
    [("classic", 2), ("classic", 3), ("classic", 4), ("classic", 6), ("biriba", 2),
     ("biriba", 3), ("bossa-nova", 4)],
)
def test_a_side_carried_in_at_750_is_vulnerable_and_one_at_749_is_not(
    name: str, players: int
) -> None:
    sides = 3 if players == 3 else 2
    totals = (750, 749, 0)[:sides]
    # Seat 0 (side 0) holds 70 points of sets and a king: short of 75 by one card's worth.
    s = _carried(Scenario(name, players, hands={0: "3h 3s 3d Kh Ks Kd Ah As 4c 4d Qc",
                                                1: "8h 8s 8d"}, stock="5c 6c"), totals)
    assert s.state.totals == totals
    assert s.state.vulnerable == (True, False, False)[:sides]
    s.draw("5c").meld("3h 3s 3d").meld("Kh Ks Kd")  # 15 + 30 = 45
    _refused(s, "vulnerable.opening_too_low", "discard", "5c")
    s.retract()
    assert s.state.opening_min[0] == 90
    s.discard("5c")
    # Seat 1 (side 1), at 749, opens with 30 points and discards: no minimum.
    s.draw("6c").meld("8h 8s 8d").discard("6c")
    assert s.state.opened[1] is True


@pytest.mark.parametrize("name", CLASSIC_FAMILY)
@pytest.mark.parametrize(("drawn", "points"), [("Th", 75), ("3d", 70)])
def test_a_vulnerable_side_empties_the_hand_with_exactly_75_but_not_with_70(
    name: str, drawn: str, points: int
) -> None:
    # Twelve cards after the draw, all laid in one turn. With Th: the run 3h..Th (5 x 5 + 3 x 10
    # = 55) and four 3s (20) = 75. With 3d: the run 3h..9h (25 + 20 = 45) and five 3s (25) = 70.
    # Both runs are clean canastras, so bossa-nova's morto is open to them.
    s = _carried(Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h 3s 3d 3c 3s"}, stock=drawn,
                          mortos={0: "Jh Js Jd Jc Qh Qs Qd Qc Kh Ks Kd"}), (800, 0))
    assert s.state.vulnerable == (True, False)
    s.draw(drawn)
    if drawn == "Th":
        s.meld("3h 4h 5h 6h 7h 8h 9h Th").meld("3s 3d 3c 3s")
    else:
        s.meld("3h 4h 5h 6h 7h 8h 9h").meld("3s 3d 3c 3s 3d")
    assert s.state.phase == "emptied" and s.state.opening_points == points
    end = "go_out" if name == "classic" else "morto"
    kw = {} if name == "classic" else {"direct": True}
    if points < 75:
        _refused(s, "vulnerable.opening_too_low", end, **kw)
        s.retract()
        assert len(s.hand(0)) == 12 and s.state.melds[0] == ()
        s.discard("3d")
        assert s.state.relancinho == (0, 0) and s.state.morto_taken == (False, False)
        return
    getattr(s, end)(**kw)
    assert s.state.relancinho == (1, 0)
    if name == "classic":
        s.end_hand()
        side0, side1 = s.state.results[0].scores
        # 75 on the table, a clean canastra 200, going out 50, relancinho 100
        assert (side0.table_points, side0.canastra_bonus) == (75, 200)
        assert side0.total == 75 + 200 + 50 + 100
        assert side1.total == -_low_points(s.hand(1))
    else:
        assert s.state.phase == "play" and len(s.hand(0)) == 11  # the morto, no draw


# -- going out needs a canastra (RULES.md §7) -----------------------------------------------

# 3-3-3, 4-4-4 and five 5s (eleven cards); thirteen's 13 add three 6s.
_NO_CANASTRA = {"thirteen": "3h 3s 3d 4h 4s 4d 5h 5s 5d 5c 6h 6s 6d"}
_NO_CANASTRA_11 = "3h 3s 3d 4h 4s 4d 5h 5s 5d 5c 5h"
_MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"  # four 10s, three kings, four queens


@pytest.mark.parametrize("name", ["biriba", "thirteen", "burraco", "mega", "burako"])
@pytest.mark.parametrize("by", ["discard", "meld"])
def test_after_the_morto_going_out_without_a_canastra_is_biribas_only(name: str, by: str) -> None:
    hand = _NO_CANASTRA.get(name, _NO_CANASTRA_11)
    melds = [" ".join(hand.split()[:3]), " ".join(hand.split()[3:6]), " ".join(hand.split()[6:])]
    if name == "thirteen":
        melds = ["3h 3s 3d", "4h 4s 4d", "5h 5s 5d 5c", "6h 6s 6d"]
    last = "8c" if by == "discard" else "Kc"
    s = Scenario(name, hands={0: hand}, stock=f"9c 4c {last}", mortos={0: _MORTO})
    s.draw("9c")
    for m in melds:
        s.meld(m)
    s.discard("9c").morto(direct=False)  # the indirect morto needs no canastra here
    s.pass_turn()
    s.draw(last).meld("Th Ts Td Tc").meld("Qh Qs Qd Qc")
    final = "Kh Ks Kd" if by == "discard" else "Kh Ks Kd Kc"
    if name != "biriba":
        # The last meld would leave the drawn 8c alone (whose discard would go out) or
        # nothing: both refused at that meld's seq.
        _refused(s, "go_out.needs_canastra", "meld", final)
        return
    s.meld(final)
    if by == "discard":
        s.discard("8c")
    s.go_out().end_hand()
    side0 = s.state.results[0].scores[0]
    # 15 + 15 + 25 + 40 + 40 + 30 (or 40) on the table, no canastra, going out 50
    kings = 30 if by == "discard" else 40
    assert side0.canastras == {} and side0.going_out == 50
    assert side0.total == 15 + 15 + 25 + 40 + 40 + kings + 50 + 100  # + relancinho


def test_bossa_nova_without_a_canastra_cannot_even_take_its_morto() -> None:
    s = Scenario("bossa-nova", hands={0: _NO_CANASTRA_11}, stock="9c")
    s.draw("9c").meld("3h 3s 3d").meld("4h 4s 4d")
    _refused(s, "morto.needs_canastra", "meld", "5h 5s 5d 5c 5h")  # would leave 9c alone


# -- the first-turn redraw (RULES.md §4) ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "players"),
    [("classic", 2), ("classic", 3), ("classic", 6), ("biriba", 3), ("bossa-nova", 4)],
)
def test_the_redraw_the_rejected_card_and_the_next_stock_card(name: str, players: int) -> None:
    s = Scenario(name, players, stock="Kh 4c 9d")
    first = s.turn
    s.draw("Kh")
    s.reject("Kh")
    assert s.state.pile == parse_cards("Kh")
    _refused(s, "draw.wrong_card", "draw", "Kh")  # the rejected card is not drawn again
    _refused(s, "draw.redraw_from_stock", "take_pile")  # nor taken back from the pile
    s.draw("4c")
    _refused(s, "draw.redraw_only_first", "reject", "4c")  # once only
    s.discard("4c")
    # The next player may take the rejected king with the 4c on it.
    assert s.turn == (first + 1) % players
    s.take_pile()
    assert sorted(s.hand(s.turn)[-2:]) == sorted(parse_cards("Kh 4c"))
