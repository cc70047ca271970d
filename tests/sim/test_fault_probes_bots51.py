"""Probe 51 of the bots: house rules, forced moves, the stock's end, the smallest budgets.

- Every bot (random, heuristic by its list and by its fast path, the expert through
  ``ExpertBot`` and ``decide``) plays only moves the engine accepts, in every preset and
  under house rules that turn several knobs at once (a pile that must use its top, a first
  draw that may be rejected, an upcard, a set per rank, mortos that need a canastra, a
  stock floor, vulnerability, a short hand).
- At a table with exactly one legal move (a draw from the stock, the one discard, taking
  the morto, going out) every bot plays it.
- When the stock runs out (or reaches mega's floor), every bot's move is legal there, the
  hand's end among them.
- ``Budget(samples=0)`` stopped the search on a ZeroDivisionError and ``candidates=0`` on an
  IndexError, deep inside the expert (``ExpertBot``, ``decide``, ``review_events``); a
  negative ``rounds`` was read as "to the end of the hand". Such a budget is now refused when
  it is made, naming it; one sample and one candidate still play legal moves.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from buraco_log import bots
from buraco_log.bots import HeuristicBot, RandomBot
from buraco_log.errors import IllegalMoveError
from buraco_log.events import AnyEvent, HandEnded
from buraco_log.expert import Budget, ExpertBot, decide, move_key, seat_view
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer, validate
from buraco_log.review import review_events, to_text
from buraco_log.rules import PRESETS, Rules, derive
from buraco_log.simulate import simulate_match
from buraco_log.state import State
from tests.play import deal, start

TINY = Budget(samples=2, candidates=3, rounds=1)

# house rules: several knobs turned at once, each over a preset and a table size it allows
HOUSE = [
    pytest.param("classic", dict(pile_pickup="must_use_top", first_turn_redraw=True,
                                 initial_upcard=True), 2, id="classic-top-redraw-upcard"),
    pytest.param("classic", dict(max_sets_per_rank=1, ace_both_ends=True, semi_clean=True,
                                 royal_canastras=True, relancinho=True), 4,
                 id="classic-one-set-ace-ends-classes"),
    pytest.param("biriba", dict(morto_direct=False, morto_needs_canastra=True,
                                go_out_needs_canastra=True), 3, id="biriba-morto-canastra"),
    pytest.param("bossa-nova", dict(vulnerability=True, target_score=1000, opening_min=50,
                                    opening_min_after_retract=120), 2, id="bossa-vulnerable"),
    pytest.param("mega", dict(stock_floor=6, jokers=4, canastra_size=5), 4, id="mega-floor-6"),
    pytest.param("burraco", dict(canastra_from_sets=False, pile_pickup="must_use_top",
                                 hand_size=9), 2, id="burraco-runs-top-9"),
    pytest.param("burako", dict(first_turn_redraw=True, max_sets_per_rank=2,
                                morto_voided_by="opponent_out"), 4, id="burako-redraw-voided"),
    pytest.param("classic", dict(hand_size=5, canastra_size=4, target_score=600), 6,
                 id="classic-6-short-hands"),
]


def _fast_path_checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every move the heuristic's fast path builds, put to the engine at once (the simulator
    and the expert's play-outs fall back to the full list when a built move is refused, so
    an illegal one would pass unseen). The refusals, in words."""
    fast = bots.HeuristicBot.fast_move
    refused: list[str] = []

    def checked(self: HeuristicBot, table: Any, stock_top: Any, end_scores: Any = None) -> Any:
        ev = fast(self, table, stock_top, end_scores)
        # a hand's end carries the caller's scores (a play-out passes none): not the bot's
        if ev is not None and not isinstance(ev, HandEnded):
            try:
                validate(table.freeze() if hasattr(table, "freeze") else table, ev)
            except IllegalMoveError as exc:
                refused.append(str(exc))
        return ev

    monkeypatch.setattr(bots.HeuristicBot, "fast_move", checked)
    return refused


def _play(monkeypatch: pytest.MonkeyPatch, rules: Rules, players: int,
          seats: tuple[str, ...], seed: str) -> list[AnyEvent]:
    """A match of ``seats`` (each move through the reducer) with the fast path checked."""
    refused = _fast_path_checked(monkeypatch)
    events = simulate_match(rules, players, seed=seed, bots=seats)
    assert refused == [], refused[:3]
    return events


def _one_hand(rules: Rules, players: int, seed: int,
              budget: Budget = TINY) -> tuple[int, int]:
    """One hand where the seats take turns being the heuristic bot by its fast path (its move
    put to the engine as it is: no fall back), by its list, the random bot and the expert.
    The moves played, and the expert's decisions."""
    rng = random.Random(seed)
    rep = Replayer()
    expert = ExpertBot(budget)
    for ev in (start(rules, players), deal(rules, players, 0, 0, rng, 1)):
        rep.step(ev)
        expert.observe(ev)
    table = rep.table
    played = 0
    while table.phase in ("draw", "play", "emptied", "out"):
        st = rep.state()
        moves = legal_moves(st)
        who = (played + table.turn) % 4
        ev: AnyEvent | None = None
        if table.phase == "out":
            ev = moves[0]
        elif who == 0:
            ev = HeuristicBot().fast_move(table, table.stock[-1] if table.stock else None,
                                          lambda: tuple(s.total for s in table.score()))
        if ev is None:
            bot = (HeuristicBot(), RandomBot(), expert, HeuristicBot())[who]
            ev = bot.choose(st, moves, rng)
            assert ev in moves, (st.seq, who, ev)
        rep.step(ev)  # raises IllegalMoveError for a move the engine refuses
        expert.observe(ev)
        played += 1
    return played, expert.decisions


@pytest.mark.parametrize(("base", "knobs", "players"), [HOUSE[0], HOUSE[1], HOUSE[-1]])
def test_every_bot_plays_a_hand_of_house_rules_legally(base: str, knobs: dict[str, Any],
                                                        players: int) -> None:
    played, searched = _one_hand(derive(base, **knobs), players, 51)
    assert played > 10 and searched > 0


@pytest.mark.slow  # every house rule, 10 hands each: 20-40 s
@pytest.mark.parametrize(("base", "knobs", "players"), HOUSE)
def test_every_bot_plays_hands_of_every_house_rule_legally(base: str, knobs: dict[str, Any],
                                                            players: int) -> None:
    for seed in range(10):
        assert _one_hand(derive(base, **knobs), players, seed)[0] > 0


@pytest.mark.slow  # every house rule, whole matches of the heuristic bot: 10-30 s
@pytest.mark.parametrize(("base", "knobs", "players"), HOUSE)
def test_the_heuristic_bot_plays_house_rules_legally_to_the_matchs_end(
        monkeypatch: pytest.MonkeyPatch, base: str, knobs: dict[str, Any],
        players: int) -> None:
    # (the random bot and the expert play whole hands of them above: whole matches of them
    # under these rules did not all end within 15 minutes)
    events = _play(monkeypatch, derive(base, **knobs), players, ("heuristic",), "b51-slow")
    final = Replayer()
    for ev in events:
        final.step(ev)
    assert final.state().phase == "over"


# -- positions: one legal move, the stock's end ------------------------------------------------


def _positions(rules: Rules, players: int, seed: str,
               seats: tuple[str, ...] = ("heuristic",)) -> Iterator[tuple[State, ExpertBot]]:
    """Each table of a simulated match where a seat decides, with an expert that has followed
    the match to it (as a seat, through public facts)."""
    events = simulate_match(rules, players, seed=seed, bots=seats)
    rep = Replayer()
    expert = ExpertBot(TINY)
    for ev in events:
        st = rep.state()
        if st.phase in ("draw", "play", "emptied"):
            yield st, expert
        rep.step(ev)
        expert.observe(ev)


def _choices(st: State, expert: ExpertBot) -> dict[str, AnyEvent]:
    """Each bot's move at ``st``: by the full list, the fast path (if it builds one) and the
    expert (as a player, and its search's own choice)."""
    moves = legal_moves(st)
    rng = random.Random(st.seq)
    out = {"heuristic": HeuristicBot().choose(st, moves, rng),
           "random": RandomBot().choose(st, moves, rng),
           "expert": expert.choose(st, moves, rng)}
    fast = HeuristicBot().fast_move(st, st.stock[0] if st.stock else None,
                                    lambda: tuple(s.total for s in Replayer(st).table.score()))
    if fast is not None:
        out["fast"] = fast
    view = seat_view(st, st.turn, expert.tracker.known)
    out["decide"] = decide(view, TINY, st.seq).chosen
    return out


def _legal(st: State, chosen: dict[str, AnyEvent]) -> None:
    keys = {move_key(m) for m in legal_moves(st)}
    for who, move in chosen.items():
        assert move_key(move) in keys, (st.seq, who, move)
        if who != "decide":  # the search names a draw without its card (blind)
            validate(st, move)


@pytest.mark.parametrize(("name", "players"), [
    ("classic", 2), pytest.param("burako", 4, marks=pytest.mark.slow)])
def test_with_exactly_one_legal_move_every_bot_plays_it(name: str, players: int) -> None:
    seen: set[str] = set()
    for st, expert in _positions(PRESETS[name], players, "one51"):
        moves = legal_moves(st)
        if len(moves) != 1:
            continue
        chosen = _choices(st, expert)
        assert {move_key(m) for m in chosen.values()} == {move_key(moves[0])}, (st.seq, chosen)
        _legal(st, chosen)
        seen.add(type(moves[0]).__name__)
        if len(seen) >= 3 and name == "classic":
            break
    # a draw from an empty pile, the one discard, going out (and burako's morto)
    assert {"CardDrawn", "CardDiscarded", "WentOut"} <= seen, seen


@pytest.mark.parametrize(("rules", "players", "seats"), [
    pytest.param(PRESETS["mega"], 2, ("heuristic",), id="mega-floor-2"),
    pytest.param(derive("classic", hand_size=15), 6, ("random",), id="classic-6-stock-out",
                 marks=pytest.mark.slow),
])
def test_when_the_stock_runs_out_every_bots_move_is_legal(
        rules: Rules, players: int, seats: tuple[str, ...]) -> None:
    ends = 0
    for st, expert in _positions(rules, players, "stock51", seats):
        if not any(isinstance(m, HandEnded) for m in legal_moves(st)):
            continue
        assert len(st.stock) <= rules.stock_floor, (st.seq, len(st.stock))
        _legal(st, _choices(st, expert))
        ends += 1
        if ends == 3:
            break
    assert ends > 0  # the stock did run out in these matches


# -- the smallest budgets -----------------------------------------------------------------------


@pytest.mark.parametrize("budget", [dict(samples=0), dict(candidates=0), dict(samples=-1),
                                    dict(samples=0, candidates=0), dict(rounds=-1),
                                    dict(samples=2, ms=0)])
def test_a_budget_of_no_search_is_refused_when_it_is_made(budget: dict[str, int]) -> None:
    # it was taken, and the search stopped on ZeroDivisionError or IndexError in decide()
    with pytest.raises(ValueError, match=r"budget \S+: samples, candidates and a time cap"):
        Budget(**budget)


@pytest.mark.parametrize("budget", [Budget(samples=1, candidates=1, rounds=1),
                                    Budget(samples=1, candidates=5, rounds=1),
                                    Budget(samples=2, candidates=1, rounds=1)])
def test_an_expert_of_one_sample_or_one_candidate_plays_legal_moves(budget: Budget) -> None:
    played, searched = _one_hand(PRESETS["thirteen-quick"], 2, 7, budget)
    assert played > 10 and searched > 0
    events = simulate_match(PRESETS["thirteen-quick"], 2, seed="one-node")[:80]
    review = review_events(events, 0, budget=budget)
    # one sample flags nothing (no standard error), one candidate compares nothing: each
    # said in the header, not a crash, and no mistake
    assert review.mistakes == 0
    head = to_text(review).splitlines()[1]
    assert ("no move is flagged" in head) == (budget.samples < 4), head
    assert ("no decision is compared" in head) == (budget.candidates < 2), head
