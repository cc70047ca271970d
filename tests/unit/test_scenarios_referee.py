"""An outside referee's scenarios: corners of RULES.md that the other scenario files leave open,
each accepted where the rules allow it and refused by its exact rule id (at the seq of the
refused event) where they do not. Expected scores are worked out by hand from RULES.md §9 in
the comments, never read from the engine's presets."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import JOKER, RANK, parse_cards
from buraco_log.events import TotalsCarried
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from buraco_log.wilds import WildPlace, wild_place
from tests.scenario import Scenario


def refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    """``move`` (a Scenario method) must be refused with ``rule`` at the next seq."""
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq, (s.last_error.seq, seq)


def classic_points(cards: tuple[int, ...]) -> int:
    """RULES.md §9, `classic`/`biriba`/`bossa-nova` column: joker and 2 10, ace 15, 8..K 10,
    3..7 5."""
    total = 0
    for c in cards:
        r = 0 if c == JOKER else RANK[c]
        total += 10 if r in (0, 2) else 15 if r == 1 else 10 if r >= 8 else 5
    return total


def carried(s: Scenario, totals: tuple[int, ...]) -> Scenario:
    """The scenario's match resumed from ``totals`` (TotalsCarried right after the start)."""
    rep = Replayer()
    first, deal = s.events[0], msgspec.structs.replace(s.events[1], seq=2)
    tc = TotalsCarried(totals, seq=1)
    for ev in (first, tc, deal):
        rep.step(ev)
    s.rep, s.events = rep, [first, tc, deal]
    return s


# -- the first-turn redraw (RULES.md §4) ----------------------------------------------------


@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova"])
def test_the_redraw_is_gone_once_cards_were_laid_even_if_a_short_opening_is_taken_back(
    name: str,
) -> None:
    # A vulnerable first player draws Kh, lays 3-3-3 (15 points, short of 75) and takes it
    # back. The redraw is "the first stock card drawn" rejected at once (000: "caso a primeira
    # não lhe sirva"); having played with it, the player may no longer reject it. The engine
    # used to accept the rejection, since taking the meld back emptied its list of cards laid.
    s = carried(Scenario(name, hands={0: "3h 3s 3d 9c"}, stock="Kh 4c"), (800, 0))
    s.draw("Kh").meld("3h 3s 3d").retract()
    refused(s, "draw.redraw_only_first", "reject", "Kh")
    s.discard("Kh")
    assert s.state.pile == parse_cards("Kh") and s.turn == 1


# -- the seeds' own examples (RULES.md §5: 000, 002, 003) ------------------------------------

ALL = sorted(PRESETS)
MORTO = "Th Ts Td Tc Kh Ks Kd Qh Qs Qd Qc"  # 40 + 30 + 40 = 110 points, nothing wild


@pytest.mark.parametrize("name", ALL)
def test_the_seeds_queen_two_ace_and_seven_seven_two_are_melds_in_every_preset(name: str) -> None:
    # 000: "dama, dois e ás, ou sete, sete e dois"; 003: "Dama-dois-Ás de Ouros". The 2 of the
    # run's own suit cannot stand in its place (Q-2-A would wrap), so it is the wild for the
    # king: Q-K-A. In the set it is the wild for a third 7.
    s = Scenario(name, hands={0: "Qd 2d Ad 7h 7s 2c 9c"}, stock="4c")
    s.draw("4c").meld("Qd 2d Ad").meld("7h 7s 2c").discard("4c")
    run, three = s.state.melds[0]
    assert (run.kind, three.kind) == ("run", "set")
    assert wild_place(run.cards, s.rules) == WildPlace(parse_cards("2d")[0], "gap", (13,))
    assert wild_place(three.cards, s.rules) == WildPlace(parse_cards("2c")[0], "set", (7,))


@pytest.mark.parametrize("name", ALL)
def test_the_seed_002_wild_moves_to_the_other_end_when_the_jack_comes(name: str) -> None:
    # 002: "na combinação 2-7-8-9 a carta wild pode ser movimentada para o outro lado e o
    # Valete pode ser acrescentado: 7-8-9-2-V". Then the 10 arrives: the wild goes to an end.
    s = Scenario(name, hands={0: "2c 7h 8h 9h Jh Th 5s 5d"}, stock="Kc")
    s.draw("Kc").meld("2c 7h 8h 9h")
    two = parse_cards("2c")[0]
    assert wild_place(s.state.melds[0][0].cards, s.rules) == WildPlace(
        two, "end", (6, 10), ("low", "high"))
    s.layoff(0, "Jh")
    assert wild_place(s.state.melds[0][0].cards, s.rules) == WildPlace(two, "gap", (10,))
    s.layoff(0, "Th")
    assert wild_place(s.state.melds[0][0].cards, s.rules) == WildPlace(
        two, "end", (6, 12), ("low", "high"))
    s.discard("Kc")
    assert len(s.state.melds[0][0].cards) == 6


@pytest.mark.parametrize("name", ALL)
def test_king_ace_two_three_is_no_run_even_where_both_aces_may_be_in_one_run(name: str) -> None:
    # 002: "Rei – Ás – 2 – 3 não é permitido"; RULES.md §5: "A run never wraps ... everywhere",
    # burako's ace_both_ends included (its two aces close a full A..K..A run, they do not turn
    # the corner). With the 2 as a wild the cards hold K, A and 3: still no run.
    s = Scenario(name, hands={0: "Kh Ah 2h 3h 9c"}, stock="4c")
    s.draw("4c")
    refused(s, "meld.run_wraps", "meld", "Kh Ah 2h 3h")
    s.meld("Ah 2h 3h")  # the same cards without the king: A-2-3, all natural
    assert (s.state.melds[0][0].kind, wild_place(s.state.melds[0][0].cards, s.rules)) == (
        "run", None)
    refused(s, "meld.run_wraps", "layoff", 0, "Kh")


# -- the indirect morto: "that player's next turn" is the taker's own (RULES.md §7) ----------


def test_an_opponent_going_out_after_the_takers_partner_played_still_voids_the_morto() -> None:
    # Four players of biriba. Seat 0 lays the clean run 3h..Kh and throws Kc: side 0's morto,
    # taken indirectly. Seat 1 and seat 2 (seat 0's partner) only draw and throw: the
    # partner's turn is not the taker's. Seat 3 lays its whole hand (side 1's morto, directly)
    # and the whole morto, and goes out before seat 0 played again: side 0's morto counts as
    # not taken (000: "o adversário terminar a partida antes que o jogador tenha a
    # oportunidade de jogar novamente").
    s = Scenario("biriba", 4, hands={0: "3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh",
                                     3: "3s 3d 3c 4s 4d 4c 5s 5d 5c 6s 6d"},
                 stock="Kc Jc Jd 6c", mortos={0: MORTO, 1: "7s 7d 7c 8s 8d 8c 9s 9d 9c 9s 9d"})
    s.draw("Kc").meld("3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh").discard("Kc").morto(direct=False)
    s.pass_turn().pass_turn()  # seat 1, then seat 2
    assert s.state.morto_pending == (0, None) and s.turn == 3
    s.draw("6c").meld("3s 3d 3c").meld("4s 4d 4c").meld("5s 5d 5c").meld("6s 6d 6c")
    s.morto(direct=True)
    s.meld("7s 7d 7c").meld("8s 8d 8c").meld("9s 9d 9c 9s 9d").go_out()
    seat0_morto, seat1, seat2 = s.hand(0), s.hand(1), s.hand(2)
    # Side 0: 3h..7h 25 + 8h..Kh 60 = 85, clean 200, relancinho 100 (seat 0's whole hand in
    # one turn, noted at once), morto -100; seat 0's untouched morto is not counted, seat 2's
    # hand is. Side 1: 60 + 15 + 30 + 50 = 155, going out 50, relancinho 100 (seat 3), less
    # seat 1's hand.
    side0 = 85 + 200 + 100 - classic_points(seat2) - 100
    side1 = 155 + 50 + 100 - classic_points(seat1)
    assert sorted(seat0_morto) == sorted(parse_cards(MORTO))
    stood = side0 + 100 - 110  # no penalty, but its 110 points in hand
    refused(s, "score.mismatch", "end_hand", "went_out", (stood, side1))
    s.end_hand("went_out", (side0, side1))
    sc0 = s.state.results[0].scores[0]
    assert (sc0.morto_penalty, sc0.hand_penalty, sc0.relancinho) == (
        100, classic_points(seat2), 100)


# -- whole hands of the classic family at the seat counts only it allows (RULES.md §2, §9) ---


def test_bossa_nova_three_players_each_side_pays_its_own_morto() -> None:
    # Seat 0 lays the clean run 3h..9h and five jacks: a canastra, so bossa-nova lets the
    # emptying take the morto (directly). Seat 1 has only sets: the meld that would empty its
    # hand is refused (no canastra, no morto). Seat 0 later goes out with four queens.
    s = Scenario("bossa-nova", 3, hands={0: "3h 4h 5h 6h 7h 8h 9h Jc Jd Js Jh",
                                         1: "3s 3d 3c 4s 4d 4c 5s 5d 5c 6s 6d"},
                 stock="Jc 6c 8c Qc", mortos={0: MORTO})
    assert s.state.sides == (0, 1, 2) and len(s.state.mortos) == 3
    s.draw("Jc").meld("3h 4h 5h 6h 7h 8h 9h").meld("Jc Jd Js Jh Jc").morto(direct=True)
    s.meld("Th Ts Td Tc").meld("Kh Ks Kd").discard("Qc")
    s.draw("6c").meld("3s 3d 3c").meld("4s 4d 4c").meld("5s 5d 5c")
    refused(s, "morto.needs_canastra", "meld", "6s 6d 6c")
    s.discard("6c")
    s.pass_turn()  # seat 2
    s.draw("Qc").meld("Qh Qs Qd Qc").go_out().end_hand()
    side0, side1, side2 = s.state.results[0].scores
    # Side 0: run 25 + 20, jacks 50, tens 40, kings 30, queens 40 = 205; clean 200 (five
    # jacks are no canastra); out 50; relancinho 100 (the first hand down in one turn).
    assert (side0.table_points, side0.canastras, side0.relancinho) == (205, {"clean": 1}, 100)
    assert side0.total == 205 + 200 + 50 + 100
    # Side 1: three sets 45, 6s 6d in hand, its morto never taken.
    assert (side1.table_points, side1.hand_penalty, side1.morto_penalty) == (45, 10, 100)
    assert side1.total == 45 - 10 - 100
    assert side2.total == -classic_points(s.hand(2)) - 100


def test_classic_six_players_the_third_partner_lays_a_relancinho_for_the_triangle() -> None:
    # Seats 0, 2, 4 are side 0 and 1, 3, 5 side 1 (RULES.md §2: "two triangles"). Seats 0..3
    # only draw and throw; seat 4 lays the whole hand in its first turn and goes out.
    s = Scenario("classic", 6, hands={4: "3h 4h 5h 7c 7d 7s 9s 9d 9h Qc Qd"},
                 stock="Kh Kd Ks Kc Qs")
    for _ in range(4):
        s.pass_turn()
    assert s.turn == 4
    s.draw("Qs").meld("3h 4h 5h").meld("7c 7d 7s").meld("9s 9d 9h").meld("Qc Qd Qs").go_out()
    s.end_hand()
    side0, side1 = s.state.results[0].scores
    partners = classic_points(s.hand(0)) + classic_points(s.hand(2))
    # 15 + 15 + 30 + 30 = 90 on the table, out 50, relancinho 100, less seats 0 and 2's hands.
    assert (side0.table_points, side0.going_out, side0.relancinho) == (90, 50, 100)
    assert side0.hand_penalty == partners > 0
    assert side0.total == 90 + 50 + 100 - partners
    opponents = sum(classic_points(s.hand(i)) for i in (1, 3, 5))
    assert (side1.total, side1.morto_penalty) == (-opponents, 0)
