"""Rule scenarios of the `000` family (`classic`, `biriba`, `bossa-nova`): each rule accepted
and refused, refusals by their exact rule id, scores worked out by hand from RULES.md §9 in the
comments (the card and bonus tables are copied here, not read from the presets)."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import JOKER, RANK, parse_cards
from buraco_log.events import TotalsCarried
from buraco_log.reducer import Replayer
from tests.scenario import Scenario

FAMILY = ("classic", "biriba", "bossa-nova")
MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"  # 40 + 30 + 40 = 110, nothing wild


def points(cards: tuple[int, ...]) -> int:
    """RULES.md §9, `classic`/`biriba`/`bossa-nova` column: 2 and joker 10, ace 15, 8..K 10,
    3..7 5."""
    total = 0
    for c in cards:
        r = 0 if c == JOKER else RANK[c]
        total += 10 if r in (0, 2) else 15 if r == 1 else 10 if r >= 8 else 5
    return total


def refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq


def carried(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    """The scenario's match resumed from ``totals`` (TotalsCarried right after the start)."""
    rep = Replayer()
    start, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    tc = TotalsCarried(totals, seq=1)
    for ev in (start, tc, deal):
        rep.step(ev)
    s.rep, s.events = rep, [start, tc, deal]
    return s


# -- classic: no morto, going out needs no canastra (RULES.md §7, §9) -------------------------

# Seat 0 lays 3h 4h 5h in its first turn (so no relancinho later) and the rest in its second:
# 7c 7d 7s, 9s 9d 9h, and 6h 7h (with 8h, when drawn) laid off on the run.
GO_OUT_HAND = "3h 4h 5h 6h 7h 7c 7d 7s 9s 9d 9h"


def _classic_second_turn(last: str) -> Scenario:
    s = Scenario("classic", hands={0: GO_OUT_HAND}, stock=f"Kh 4c {last}")
    s.draw("Kh").meld("3h 4h 5h").discard("Kh")
    s.pass_turn()
    s.draw(last).meld("7c 7d 7s").meld("9s 9d 9h")
    return s


@pytest.mark.parametrize("by", ["meld", "discard"])
def test_classic_goes_out_without_a_canastra_and_scores_50_for_it(by: str) -> None:
    if by == "meld":
        s = _classic_second_turn("8h").layoff(0, "6h 7h 8h")
    else:
        s = _classic_second_turn("4d").layoff(0, "6h 7h").discard("4d")
    assert s.state.phase == "emptied" and s.state.emptied_by == by
    s.go_out().end_hand()
    side0, side1 = s.state.results[0].scores
    # Run 3h..7h 25 (+ 8h 10), 7s 15, 9s 30; no canastra; going out 50; laid in two turns,
    # so no relancinho.
    table = 70 + (10 if by == "meld" else 0)
    assert (side0.table_points, side0.canastras, side0.going_out) == (table, {}, 50)
    assert (side0.relancinho, side0.morto_penalty) == (0, 0)
    assert side0.total == table + 50
    # Classic has no morto, so no morto penalty (RULES.md §9: "–").
    assert side1.total == -points(s.hand(1)) and side1.morto_penalty == 0


def test_classic_an_emptied_hand_takes_no_morto_there_is_none() -> None:
    s = _classic_second_turn("8h").layoff(0, "6h 7h 8h")
    refused(s, "morto.not_available", "morto", direct=True)
    refused(s, "turn.hand_emptied", "discard", "8h")
    s.go_out()


def test_classic_relancinho_is_the_whole_hand_in_one_turn_and_ends_the_hand() -> None:
    # Twelve cards after the draw, laid in one turn with no earlier meld: +100 and going out.
    s = Scenario("classic", hands={0: "3h 4h 5h 7c 7d 7s 9s 9d 9h Qc Qd"}, stock="Qs")
    s.draw("Qs").meld("3h 4h 5h").meld("7c 7d 7s").meld("9s 9d 9h").meld("Qc Qd Qs")
    s.go_out().end_hand()
    side0 = s.state.results[0].scores[0]
    assert (side0.relancinho, side0.going_out) == (100, 50)
    assert side0.total == 90 + 100 + 50


def test_classic_six_players_two_triangles_lay_off_on_a_partners_meld_only() -> None:
    # RULES.md §2: six players are two sides of three on alternate seats (0, 2, 4 and 1, 3, 5).
    s = Scenario("classic", 6, hands={0: "7c 7d 7s", 2: "7h"}, stock="Kh 4c Qs")
    assert s.state.sides == (0, 1, 0, 1, 0, 1)
    s.draw("Kh").meld("7c 7d 7s").discard("Kh")
    s.draw("4c")
    refused(s, "layoff.no_such_meld", "layoff", 0, "4c")  # side 1 has no meld 0
    s.discard("4c")
    s.draw("Qs").layoff(0, "7h").discard("Qs")  # seat 2 on seat 0's meld
    assert len(s.state.melds[0][0].cards) == 4 and s.state.melds[1] == ()


@pytest.mark.parametrize("players", [3, 6])
def test_classic_stock_out_scores_every_side_by_its_own_hands(players: int) -> None:
    s = Scenario("classic", players)
    t = s.rep._t
    refused(s, "hand.not_over", "end_hand", "stock_out")
    while t.stock:
        s.pass_turn()
    s.end_hand("stock_out")
    scores = s.state.results[0].scores
    assert len(scores) == (3 if players == 3 else 2)
    for sc in scores:
        seats = [i for i in range(players) if s.state.sides[i] == sc.side]
        want = sum(points(s.hand(i)) for i in seats)
        assert (sc.hand_penalty, sc.total, sc.morto_penalty) == (want, -want, 0)


# -- biriba and bossa-nova: the morto (RULES.md §7) -----------------------------------------


@pytest.mark.parametrize("name", ["biriba", "bossa-nova"])
def test_a_direct_morto_a_relancinho_and_going_out_in_the_same_turn(name: str) -> None:
    # Seat 0 draws Jc and lays all twelve cards (a clean run 3h..9h: a canastra, so bossa-nova
    # may take its morto), takes the morto directly, lays the whole morto: out in one turn.
    s = Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h Jc Jd Js Jh"}, stock="Jc",
                 mortos={0: MORTO})
    s.draw("Jc").meld("3h 4h 5h 6h 7h 8h 9h").meld("Jc Jd Js Jh Jc")
    refused(s, "go_out.morto_first", "go_out")
    refused(s, "morto.wrong_kind", "morto", direct=False)
    s.morto(direct=True)
    assert s.state.phase == "play" and s.state.relancinho == (1, 0)
    s.meld("Th Ts Td Tc").meld("Kh Ks Kd").meld("Qh Qs Qd Qc").go_out().end_hand()
    side0, side1 = s.state.results[0].scores
    # 45 (run) + 50 (jacks) + 40 + 30 + 40 = 205; clean 200; out 50; relancinho 100, once
    assert (side0.table_points, side0.canastra_bonus) == (205, 200)
    assert (side0.going_out, side0.relancinho) == (50, 100)
    assert side0.total == 555
    # Side 1 never took its morto: -100 besides its cards.
    assert side1.morto_penalty == 100 and side1.total == -points(s.hand(1)) - 100


@pytest.mark.parametrize("name", ["biriba", "bossa-nova"])
def test_a_morto_is_taken_once_by_the_side(name: str) -> None:
    # 4 players: seat 0 takes side 0's morto; partner seat 2 empties later and goes out.
    s = Scenario(name, 4, hands={0: "3h 4h 5h 6h 7h 8h 9h Jc Jd Js Jh",
                                 2: "3s 4s 5s 6s 7s 8s 9s Qc Qd Qs Qh"},
                 stock="Jc 4c 4d", mortos={0: MORTO})
    s.draw("Jc").meld("3h 4h 5h 6h 7h 8h 9h").meld("Jc Jd Js Jh Jc").morto(direct=True)
    s.discard("Th")
    s.pass_turn()
    s.draw("4d")
    s.meld("3s 4s 5s 6s 7s 8s 9s").meld("Qc Qd Qs Qh")
    s.discard("4d")
    assert s.state.phase == "emptied"
    refused(s, "morto.not_available", "morto", direct=False)  # side 0 took it already
    s.go_out().end_hand()
    side0 = s.state.results[0].scores[0]
    # Seat 2 laid the whole hand in one turn: its own relancinho too (per player).
    assert side0.relancinho == 200 and side0.going_out == 50
    assert side0.canastras == {"clean": 2}


@pytest.mark.parametrize("name", ["biriba", "bossa-nova"])
def test_bossa_nova_takes_no_morto_without_a_canastra_biriba_does(name: str) -> None:
    s = Scenario(name, hands={0: "3h 3s 3d 4h 4s 4d 5h 5s 5d 6c 6s"}, stock="6d",
                 mortos={0: MORTO})
    s.draw("6d").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d")
    if name == "bossa-nova":  # no canastra on the table, none made by the last meld
        refused(s, "morto.needs_canastra", "meld", "6c 6s 6d")
        return
    s.meld("6c 6s 6d").morto(direct=True)
    assert sorted(s.hand(0)) == sorted(parse_cards(MORTO))


# -- vulnerability: 75, then 90 after a retraction (RULES.md §10) ---------------------------

VULN_HAND = "Kh Ks Kd Qh Qs Qd Jh Js Jd 3h 3s"


@pytest.mark.parametrize("name", FAMILY)
@pytest.mark.parametrize("third", ["Jh Js Jd", "3h 3s 3c"])
def test_after_a_retraction_the_side_needs_90_where_75_was_enough(name: str, third: str) -> None:
    s = carried(Scenario(name, hands={0: VULN_HAND}, stock="3d 4c 3c"), (750, 0))
    s.draw("3d").meld("3h 3s 3d")  # 15: short of 75
    refused(s, "vulnerable.opening_too_low", "discard", "Jd")
    s.retract().discard("3d")
    assert s.state.opening_min == (90, 75)
    s.pass_turn()
    s.draw("3c").meld("Kh Ks Kd").meld("Qh Qs Qd").meld(third)
    if third == "Jh Js Jd":  # 30 + 30 + 30 = 90: enough
        s.discard("3c")
        assert s.state.opened == (True, False)
        return
    # 30 + 30 + 15 = 75: the first minimum, but no longer enough
    assert s.state.opening_points == 75
    refused(s, "vulnerable.opening_too_low", "discard", "Jh")


@pytest.mark.parametrize("name", FAMILY)
def test_the_opening_counts_a_2_at_10_points(name: str) -> None:
    # Kh Ks Kd 2c (40) + Qh Qs Qd (30) + 3h 3s 3d (15) = 85 >= 75; without the 2: 75 as well,
    # so the 2 is tested at the edge: Kh Ks 2c (30) + Qh Qs Qd (30) + 3h 3s 3d (15) = 75.
    s = carried(Scenario(name, hands={0: "Kh Ks 2c Qh Qs Qd 3h 3s 3d 9c 8d"}, stock="4c"),
                (800, 0))
    s.draw("4c").meld("Kh Ks 2c").meld("Qh Qs Qd").meld("3h 3s 3d")
    assert s.state.opening_points == 75
    s.discard("4c")
    assert s.state.opened == (True, False)


@pytest.mark.parametrize("name", FAMILY)
def test_a_side_not_vulnerable_opens_with_any_meld(name: str) -> None:
    s = carried(Scenario(name, hands={0: VULN_HAND}, stock="3d"), (749, 900))
    assert s.state.vulnerable == (False, True)
    s.draw("3d").meld("3h 3s 3d").discard("Jd")
    assert s.state.opened == (True, False)


def test_biriba_three_players_an_opponent_out_before_the_takers_turn_voids_the_morto() -> None:
    # Seat 0 lays the run 3h..Kh (clean) and throws Kc: side 0's morto, indirectly. Seat 1
    # lays its whole hand (its morto, directly) and then the whole morto: out, before seat 0
    # could play again. RULES.md §7: side 0's morto counts as not taken (000: "o morto
    # deverá ser pago como se não tivesse sido pegado"); its cards are not counted in hand.
    s = Scenario("biriba", 3, hands={0: "3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh",
                                     1: "3s 3d 3c 4s 4d 4c 5s 5d 5c 6s 6d"},
                 stock="Kc 6c", mortos={1: "7s 7d 7c 8s 8d 8c 9s 9d 9c 9s 9d"})
    assert s.state.sides == (0, 1, 2) and [len(m) for m in s.state.mortos] == [11, 11, 11]
    s.draw("Kc").meld("3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh").discard("Kc").morto(direct=False)
    s.draw("6c").meld("3s 3d 3c").meld("4s 4d 4c").meld("5s 5d 5c").meld("6s 6d 6c")
    s.morto(direct=True)
    s.meld("7s 7d 7c").meld("8s 8d 8c").meld("9s 9d 9c 9s 9d").go_out().end_hand()
    side0, side1, side2 = s.state.results[0].scores
    # Side 0: 25 + 60 on the table, clean 200, relancinho 100 (noted at once), morto -100.
    assert (side0.table_points, side0.canastra_bonus, side0.relancinho) == (85, 200, 100)
    assert (side0.hand_penalty, side0.morto_penalty) == (0, 100)
    assert side0.total == 85 + 200 + 100 - 100
    # Side 1: 60 + 15 + 30 + 50 = 155, no canastra, going out 50, relancinho 100.
    assert (side1.table_points, side1.going_out, side1.relancinho) == (155, 50, 100)
    assert side1.total == 305
    # Side 2 never took its morto.
    assert side2.total == -points(s.hand(2)) - 100


def test_bossa_nova_a_dirty_canastra_takes_the_morto_and_goes_out() -> None:
    # RULES.md §7: the canastra bossa-nova needs is "a canastra", of any kind: here only a run
    # with a 2 of clubs standing in for a heart (dirty) is on the table, first and last.
    s = Scenario("bossa-nova", hands={0: "3h 4h 5h 6h 7h 8h 2c Jc Jd Js Jh"},
                 stock="4c 9d Kc", mortos={0: MORTO})
    s.draw("4c").meld("3h 4h 5h 6h 7h 8h 2c")
    assert s.state.melds[0][0].canastra == "dirty"
    s.meld("Jc Jd Js Jh").discard("4c").morto(direct=False)
    s.pass_turn()
    s.draw("Kc").meld("Th Ts Td Tc").meld("Qh Qs Qd Qc").meld("Kh Ks Kd Kc").go_out()
    # 25 + 10 + 10 (the 2) + 40 + 40 + 40 + 40 = 205; dirty 100; out 50; relancinho 100.
    right = (205 + 100 + 50 + 100, -points(s.hand(1)) - 100)
    refused(s, "score.mismatch", "end_hand", "went_out", (right[0] + 100, right[1]))  # as clean
    s.end_hand("went_out", right)
