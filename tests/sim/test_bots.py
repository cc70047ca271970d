"""The bots: legal choices, the heuristic's lay-off sets, and the heuristic beating random."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_log.bots import BOTS, Bot, HeuristicBot, MeldKnowledge, RandomBot, make_bot
from buraco_log.cards import ALL_CODES, JOKER
from buraco_log.melds import MeldError, read_meld
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS, preset
from buraco_log.simulate import simulate_match

WILDS = [JOKER, 2, 18, 34, 50]


@st.composite
def melds(draw: st.DrawFn) -> tuple[str, tuple[int, ...]]:
    """Valid melds of every shape: runs (clean, dirty, with 2s), sets, under every preset."""
    name = draw(st.sampled_from(sorted(PRESETS)))
    if draw(st.booleans()):
        suit = draw(st.integers(0, 3))
        lo = draw(st.integers(1, 13))
        n = draw(st.integers(3, 14))
        cards = [suit * 16 + (1 if p == 14 else p) for p in range(lo, min(lo + n, 15))]
        if len(cards) > 3 and draw(st.booleans()):
            del cards[draw(st.integers(1, len(cards) - 2))]
    else:
        rank = draw(st.integers(1, 13))
        cards = [draw(st.integers(0, 3)) * 16 + rank for _ in range(draw(st.integers(2, 6)))]
    if draw(st.booleans()):
        cards.insert(draw(st.integers(0, len(cards))), draw(st.sampled_from(WILDS)))
    return name, tuple(cards)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(melds())
def test_the_heuristic_knows_exactly_which_cards_a_meld_accepts(
    case: tuple[str, tuple[int, ...]],
) -> None:
    name, cards = case
    rules = PRESETS[name]
    try:
        read_meld(cards, rules)
    except MeldError:
        return
    brute = set()
    for c in ALL_CODES:
        try:
            read_meld((*cards, c), rules)
        except MeldError:
            continue
        brute.add(c)
    assert MeldKnowledge().accepts(cards, rules) == brute


def test_bots_by_name() -> None:
    assert set(BOTS) == {"random", "heuristic"}
    assert isinstance(make_bot("random"), RandomBot)
    assert isinstance(make_bot("heuristic"), HeuristicBot)


def test_both_bots_choose_one_of_the_offered_moves() -> None:
    events = simulate_match(preset("thirteen"), 2, seed="offered")
    r = Replayer()
    rng = random.Random(0)
    bots: list[Bot] = [RandomBot(), HeuristicBot()]
    for ev in events[:200]:
        r.step(ev)
        st_ = r.state()
        moves = legal_moves(st_)
        if moves:
            for bot in bots:
                assert bot.choose(st_, moves, rng) in moves


def test_the_heuristic_bot_beats_the_random_bot() -> None:
    wins = 0
    n = 8
    for i in range(n):
        # Alternate seats so that neither bot always sits first.
        bots = ["heuristic", "random"] if i % 2 == 0 else ["random", "heuristic"]
        end = simulate_match(preset("burraco"), 2, seed="duel", index=i, bots=bots)[-1]
        assert end.winner is not None  # type: ignore[union-attr]
        wins += bots[end.winner] == "heuristic"  # type: ignore[union-attr]
    assert wins >= n - 1
