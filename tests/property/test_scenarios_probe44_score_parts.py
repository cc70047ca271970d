"""Probe 44: over random legal games of every preset and player count, each hand's score is
the sum of its parts as the library reports them (docs/library.md: ``results[i].scores[side]``,
a ``SideScore``), each part is what RULES.md §9 makes of the table at the hand's end, and the
match total is the sum of its hands.

The parts are recomputed here from RULES.md's tables written out below (never from
``Rules.point_table`` or ``Rules.bonuses``), the canastra classes from the plain reference
reader (``tests/reference_melds.py``), and the morto rule of §7 (an indirect morto whose
taker has not played again is voided only by an opponent going out). The audit's score
section must say the same, line by line.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_log import audit
from buraco_log.cards import JOKER, RANK
from buraco_log.events import AnyEvent, HandEnded, MatchEnded, TotalsCarried
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.state import SideScore, State
from tests.play import random_match
from tests.reference_melds import read_meld

CONFIGS = [(name, n) for name, r in sorted(PRESETS.items()) for n in r.player_counts]
FAMILY = ("classic", "biriba", "bossa-nova")
# RULES.md §9, the card table: (joker, 2); an ace is 15, 8..K 10 and 3..7 5 everywhere.
JOKER_TWO = {"classic": (10, 10), "biriba": (10, 10), "bossa-nova": (10, 10),
             "thirteen": (50, 10), "thirteen-quick": (50, 10), "burraco": (30, 20),
             "mega": (50, 10), "burako": (50, 10)}
# RULES.md §9, the bonus table (a class a preset lacks never occurs there).
CANASTRA = {"clean": 200, "semi_clean": 150, "dirty": 100, "royal": 500, "ace_to_ace": 1000}


def going_out(name: str) -> int:
    return 50 if name in FAMILY else 100


def relancinho(name: str) -> int:
    return 100 if name in FAMILY else 0


def morto_not_taken(name: str) -> int:
    return 0 if name == "classic" else 100


def card_points(name: str, cards: tuple[int, ...]) -> int:
    joker, two = JOKER_TWO[name]
    total = 0
    for c in cards:
        r = 0 if c == JOKER else RANK[c]
        total += joker if c == JOKER else two if r == 2 else 15 if r == 1 \
            else 10 if r >= 8 else 5
    return total


def expected_parts(name: str, before: State, side: int) -> SideScore:
    """RULES.md §9 for ``side``, from the table just before the hand's end."""
    rules = before.rules
    assert rules is not None
    melds = before.melds[side]
    table = sum(card_points(name, m.cards) for m in melds)
    classes = Counter(c for m in melds if (c := read_meld(m.cards, rules).canastra))
    bonus = sum(CANASTRA[c] * n for c, n in classes.items())
    out_seat = before.went_out
    out = going_out(name) if out_seat is not None and before.sides[out_seat] == side else 0
    pending = before.morto_pending[side] if before.morto_pending else None
    voided = pending is not None and out_seat is not None and before.sides[out_seat] != side
    held = sum(card_points(name, h) for seat, h in enumerate(before.hands)
               if before.sides[seat] == side and not (voided and seat == pending))
    morto = 0
    if rules.morto and (not before.morto_taken[side] or voided):
        morto = morto_not_taken(name)
    rel = before.relancinho[side] * relancinho(name)
    return SideScore(side=side, table_points=table, canastras=dict(classes),
                     canastra_bonus=bonus, going_out=out, relancinho=rel, hand_penalty=held,
                     morto_penalty=morto,
                     total=table + bonus + out + rel - held - morto)


def check_match(name: str, events: list[AnyEvent]) -> int:
    """Every hand of ``events`` against RULES.md §9 and §10; the hands checked."""
    rep = Replayer()
    hands: list[tuple[int, ...]] = []
    carried: tuple[int, ...] | None = None
    for ev in events:
        before = rep.state()
        rep.step(ev)
        after = rep.state()
        if isinstance(ev, TotalsCarried):
            carried = ev.totals
        if isinstance(ev, HandEnded):
            result = after.results[-1]
            for got in result.scores:
                want = expected_parts(name, before, got.side)
                assert got.canastras == want.canastras, (ev.seq, got, want)
                assert got == want, (ev.seq, got, want)
                parts = (got.table_points + got.canastra_bonus + got.going_out + got.relancinho
                         - got.hand_penalty - got.morto_penalty)
                assert got.total == parts
            totals = tuple(s.total for s in result.scores)
            if ev.scores is not None:
                assert ev.scores == totals
            assert after.totals == tuple(a + b for a, b in zip(before.totals, totals,
                                                                strict=True))
            hands.append(totals)
        if isinstance(ev, MatchEnded) and ev.totals is not None:
            assert ev.totals == after.totals
    final = rep.state()
    start = carried or (0,) * final.n_sides
    assert final.totals == tuple(sum(col) + s for col, s in zip(zip(*hands, strict=True), start,
                                                                strict=True)) \
        if hands else final.totals == start
    best = max(final.totals) if final.totals else 0
    decided = best >= final.rules.target_score and final.totals.count(best) == 1 \
        if final.rules is not None else False
    assert (final.winner is not None) == decided
    if decided:
        assert final.winner == final.totals.index(best)
    check_audit(events, final)
    return len(hands)


def check_audit(events: list[AnyEvent], final: State) -> None:
    """The audit recomputes the same hand scores, its lines adding up to each."""
    v = audit.audit_events(events, audit.Integrity("sealed", "binary", len(events), 1, ""))
    assert v.scoring.ok, v.findings
    assert v.scoring.totals_recomputed == final.totals
    for hand, result in zip(v.scoring.hands, final.results, strict=True):
        for side, score in zip(hand.sides, result.scores, strict=True):
            assert side.recomputed == score.total
            assert sum(line.points for line in side.lines) == score.total
    summary = audit.summarize(events)  # what `show` prints: the running totals end there
    assert summary.totals == final.totals
    if summary.hands:
        assert summary.hands[-1].cumulative == final.totals


RUNS = [pytest.param(10, id="default"), pytest.param(120, id="soak", marks=pytest.mark.slow)]


@pytest.mark.parametrize("examples", RUNS)
def test_simulated_matches_add_up_hand_by_hand_and_to_the_match(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(st.sampled_from(CONFIGS), st.integers(0, 10**6))
    def run(config: tuple[str, int], seed: int) -> None:
        name, players = config
        events = simulate_match(PRESETS[name], players, seed=f"p44-{seed}")
        assert isinstance(events[-1], MatchEnded)
        assert check_match(name, events) >= 1

    run()


@pytest.mark.parametrize("examples", RUNS)
def test_random_legal_hands_add_up(examples: int) -> None:
    """Uniform random moves reach ends the bots avoid: stock-outs, voided mortos, relancinhos
    of a random hand, opponents out at once."""
    @settings(max_examples=examples, deadline=None)
    @given(st.sampled_from(CONFIGS), st.integers(0, 10**6), st.booleans())
    def run(config: tuple[str, int], seed: int, eager: bool) -> None:
        name, players = config
        events = random_match(name, players, seed, max_hands=2, eager=eager)
        check_match(name, events)

    run()


def test_every_preset_and_table_is_checked_once() -> None:
    """The default run is a sample: here each preset and player count plays one whole
    simulated match, so none is left out."""
    for name, players in CONFIGS:
        events = simulate_match(PRESETS[name], players, seed="p44-all")
        assert check_match(name, events) >= 1, (name, players)
