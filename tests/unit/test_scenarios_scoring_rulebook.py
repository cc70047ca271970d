"""A referee's scoring scenarios, straight from RULES.md §6–§10, for every preset.

Every expected number is worked out by hand from RULES.md's tables (copied below as plain
literals, never read from the engine's presets): hand scores, canastra bonuses, the morto not
taken, going out, the relancinho, the match end, ties and vulnerability. Each refusal names its
exact rule id.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from buraco_log.cards import JOKER, RANK, parse_cards
from buraco_log.events import TotalsCarried
from buraco_log.reducer import Replayer
from tests.scenario import Scenario, build_deal

# RULES.md §9, card table: (joker, 2, ace, 8..K, 3..7) per preset.
CARD = {
    "classic": (10, 10, 15, 10, 5),
    "biriba": (10, 10, 15, 10, 5),
    "bossa-nova": (10, 10, 15, 10, 5),
    "thirteen": (50, 10, 15, 10, 5),
    "thirteen-quick": (50, 10, 15, 10, 5),
    "burraco": (30, 20, 15, 10, 5),
    "mega": (50, 10, 15, 10, 5),
    "burako": (50, 10, 15, 10, 5),
}
# RULES.md §9, bonus table: going out, relancinho (0: "–"), morto not taken (0: "–").
GOING_OUT = {"classic": 50, "biriba": 50, "bossa-nova": 50, "thirteen": 100,
             "thirteen-quick": 100, "burraco": 100, "mega": 100, "burako": 100}
RELANCINHO = {"classic": 100, "biriba": 100, "bossa-nova": 100}
MORTO_NOT_TAKEN = {"biriba": 100, "bossa-nova": 100, "thirteen": 100, "thirteen-quick": 100,
                   "burraco": 100, "mega": 100, "burako": 100}
# RULES.md §10: the targets.
TARGET = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
          "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}
ALL = tuple(CARD)
MORTO_PRESETS = tuple(MORTO_NOT_TAKEN)
CLASSIC_FAMILY = ("classic", "biriba", "bossa-nova")


def pts(name: str, cards: str | tuple[int, ...]) -> int:
    """Points of ``cards`` by RULES.md §9's card table for ``name``."""
    joker, two, ace, high, low = CARD[name]
    total = 0
    for c in parse_cards(cards) if isinstance(cards, str) else cards:
        if c == JOKER:
            total += joker
        elif RANK[c] == 2:
            total += two
        elif RANK[c] == 1:
            total += ace
        else:
            total += high if RANK[c] >= 8 else low
    return total


def refused(s: Scenario, rule: str, move: str, *args: object, **kw: object) -> None:
    """``move`` (a Scenario method) is refused with ``rule`` at the next seq."""
    seq = s.rep.seq + 1
    with s.illegal(rule):
        getattr(s, move)(*args, **kw)
    assert s.last_error.seq == seq, (s.last_error.seq, seq)


# -- a whole hand with the morto, every morto preset (RULES.md §7, §9) ----------------------

# The first hand down: a clean run of hearts (a canastra everywhere) and four kings; 4c is
# thrown last, so the morto is taken indirectly (the one way every morto preset allows).
RUN11 = "3h 4h 5h 6h 7h 8h 9h"
RUN13 = "3h 4h 5h 6h 7h 8h 9h Th Jh"
MORTO = "Ts Td Tc Js Jd Jc Qs Qd Qc As Ad"  # with Ac drawn: four sets of three


def first_hand(name: str) -> tuple[str, str]:
    run = RUN13 if name.startswith("thirteen") else RUN11
    return run, f"{run} Ks Kd Kc 4c"


def whole_hand(name: str, totals: tuple[int, int] | None = None) -> tuple[Scenario, int, int]:
    """Seat 0 lays its whole first hand (a clean run, four kings) and throws 4c: its morto,
    indirectly. Seat 1 passes. Seat 0 lays the whole morto with Ac and goes out. Returns the
    scenario before the hand end and the two hand scores worked out from RULES.md §9."""
    run, hand0 = first_hand(name)
    s = carried(Scenario(name, hands={0: hand0}, stock="Kh 5s Ac", mortos={0: MORTO}), totals)
    s.draw("Kh").meld(run).meld("Ks Kd Kc Kh").discard("4c").morto(direct=False)
    s.pass_turn()
    s.draw("Ac").meld("Ts Td Tc").meld("Js Jd Jc").meld("Qs Qd Qc").meld("As Ad Ac")
    s.go_out()
    # Side 0: the run (3..7 = 25, the rest 10 each), kings 40, tens 30, jacks 30, queens 30,
    # aces 45; one clean canastra 200; going out; the relancinho (the whole first hand down
    # in one turn) where the preset has one; no card left, the morto taken. Side 1: its hand
    # by the card table, and its morto never taken.
    table = 25 + 10 * (len(run.split()) - 5) + 40 + 30 + 30 + 30 + 45
    side0 = table + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)
    return s, side0, -pts(name, s.hand(1)) - MORTO_NOT_TAKEN[name]


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_a_whole_hand_with_the_morto_scores_as_rules_md_adds_it(name: str) -> None:
    s, side0, side1 = whole_hand(name)
    refused(s, "score.mismatch", "end_hand", "went_out", (side0 + 1, side1))
    s.end_hand("went_out", (side0, side1))
    sc0, sc1 = s.state.results[0].scores
    assert (sc0.canastra_bonus, sc0.going_out, sc0.hand_penalty) == (200, GOING_OUT[name], 0)
    assert (sc1.table_points, sc1.morto_penalty) == (0, MORTO_NOT_TAKEN[name])
    assert sc0.relancinho == RELANCINHO.get(name, 0)


# -- the indirect morto voided by an opponent going out at once (RULES.md §7, §9) ----------

SEAT1 = "3s 4s 5s 6s 7s 8s 9s"
SEAT1_13 = "3s 4s 5s 6s 7s 8s 9s Ts Js"
MORTO1 = "5d 5d 5c 6d 6d 6c 7d 7d 7c 4d 4d"  # with 4s drawn: four sets of three


def voided_hand(name: str, totals: tuple[int, int] | None = None) -> tuple[Scenario, int, int]:
    """Seat 1 takes its morto indirectly; seat 0 then takes its own indirectly; seat 1 lays its
    whole morto and goes out before seat 0 plays again. Returns the scenario at the end of the
    hand (not yet scored) and the two hand scores worked out from RULES.md."""
    run0, hand0 = first_hand(name)
    run1 = SEAT1_13 if name.startswith("thirteen") else SEAT1
    s = carried(Scenario(name, hands={0: hand0, 1: f"{run1} Qh Qd Qc 9c"},
                         stock="Kd Qs Kh 4s", mortos={0: MORTO, 1: MORTO1}), totals)
    s.pass_turn()  # seat 0 draws Kd and throws it
    s.draw("Qs").meld(run1).meld("Qh Qd Qc Qs").discard("9c").morto(direct=False)
    s.draw("Kh").meld(run0).meld("Ks Kd Kc Kh").discard("4c").morto(direct=False)
    assert s.state.morto_pending == (0, None)
    s.draw("4s").meld("5d 5d 5c").meld("6d 6d 6c").meld("7d 7d 7c").meld("4d 4d 4s").go_out()
    run_pts = 25 + 10 * (len(run0.split()) - 5)  # both runs: 3..7 at 5, the rest at 10
    # Side 0: its run and kings, one clean canastra, the relancinho noted at once where the
    # preset has one; its morto counts as not taken (-100) and its untouched cards not at all.
    side0 = run_pts + 40 + 200 + RELANCINHO.get(name, 0) - MORTO_NOT_TAKEN[name]
    # Side 1: run, queens 40, four sets of low cards 4 x 15; canastra, going out, relancinho.
    side1 = run_pts + 40 + 60 + 200 + GOING_OUT[name] + RELANCINHO.get(name, 0)
    return s, side0, side1


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_an_opponent_out_before_the_takers_next_turn_voids_the_indirect_morto(name: str) -> None:
    s, side0, side1 = voided_hand(name)
    stood = side0 + MORTO_NOT_TAKEN[name] - pts(name, MORTO)  # the reading RULES.md refuses
    refused(s, "score.mismatch", "end_hand", "went_out", (stood, side1))
    s.end_hand("went_out", (side0, side1))
    sc0 = s.state.results[0].scores[0]
    assert (sc0.morto_penalty, sc0.hand_penalty) == (MORTO_NOT_TAKEN[name], 0)


# -- the match end, the winner and ties, from the hand just scored (RULES.md §10) ------------


def carried(s: Scenario, totals: tuple[int, ...] | None) -> Scenario:
    """The scenario's match resumed from ``totals`` (TotalsCarried right after the start)."""
    if totals is None:
        return s
    rep = Replayer()
    first, deal = s.events[0], replace(s.events[1], seq=2)
    tc = TotalsCarried(totals, seq=1)
    for ev in (first, tc, deal):
        rep.step(ev)
    s.rep, s.events = rep, [first, tc, deal]
    return s


def next_deal(s: Scenario) -> None:
    """The next hand's deal is accepted: the match goes on."""
    deal = build_deal(s.rules, s.players, {}, "", {}, None, hand_no=1)
    s.push(replace(deal, seq=s.rep.seq + 1))
    assert s.state.hand == 1 and s.state.phase == "draw"


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_the_hand_that_reaches_the_target_ends_the_match_and_one_point_short_does_not(
    name: str,
) -> None:
    # Side 0 scores exactly what it lacks: its total is the target, the highest: it wins.
    side0 = whole_hand(name, (0, 0))[1]
    s, got0, got1 = whole_hand(name, (TARGET[name] - side0, 0))
    s.end_hand("went_out", (got0, got1))
    assert s.state.totals == (TARGET[name], got1) and s.state.winner == 0
    refused(s, "match.wrong_winner", "end_match", winner=1)
    refused(s, "score.mismatch", "end_match", totals=(TARGET[name] - 1, got1))
    s.end_match(totals=(TARGET[name], got1), winner=0)
    # One point less: the match goes on to another hand.
    s, got0, got1 = whole_hand(name, (TARGET[name] - side0 - 1, 0))
    s.end_hand("went_out", (got0, got1))
    assert s.state.totals[0] == TARGET[name] - 1 and s.state.winner is None
    refused(s, "match.not_over", "end_match")
    next_deal(s)


@pytest.mark.parametrize("name", MORTO_PRESETS)
def test_a_tie_for_the_highest_total_at_the_target_plays_another_hand(name: str) -> None:
    # Both sides score positively in the voided-morto hand; carried in so that both end the
    # hand exactly at the target: "a tie plays another hand".
    _, side0, side1 = voided_hand(name)
    assert side0 > 0 and side1 > 0
    s = voided_hand(name, (TARGET[name] - side0, TARGET[name] - side1))[0]
    s.end_hand("went_out", (side0, side1))
    assert s.state.totals == (TARGET[name], TARGET[name]) and s.state.winner is None
    refused(s, "match.not_over", "end_match")
    next_deal(s)
