"""House rules in random combinations (Hypothesis): every knob a site may set, mixed freely over
every preset, must give a game that plays, replays and audits.

The presets are covered one by one elsewhere; a club mixes knobs no preset has together
(a morto with must-use-top, royal canastras from sets, vulnerability with a stock floor). For
each combination ``rules.derive`` accepts, random legal play must never get stuck, every move
``legal_moves`` lists must be accepted, every card of the material must stay somewhere, a
replay of the stored bytes must rebuild the same table, the audit of the written log must find
nothing, and the archive's columns must collect the match as a plain replay reads it.
"""

from __future__ import annotations

import os
import random
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from buraco_log.audit import audit_log
from buraco_log.cards import ACE, JOKER, RANK
from buraco_log.columns import replay_columns
from buraco_log.dealer import check_deals, deal_seeded
from buraco_log.errors import RulesError
from buraco_log.events import (
    AnyEvent,
    HandEnded,
    HandStarted,
    MortoTaken,
    WentOut,
    decode_many,
    encode_many,
)
from buraco_log.log import Writer
from buraco_log.moves import legal_moves
from buraco_log.reducer import Replayer, replay, validate
from buraco_log.rules import PRESETS, Rules, derive
from buraco_log.state import State
from tests.play import random_match, start
from tests.property.legal_check import check_state
from tests.property.replays import replay_conserving
from tests.reference_melds import read_meld

# Each knob with the values a house might give it (within rules.BOUNDS; derive refuses the
# combinations that cannot be dealt, and those are skipped).
KNOBS: dict[str, st.SearchStrategy[Any]] = {
    "jokers": st.sampled_from((0, 2, 4)),
    "hand_size": st.integers(9, 15),
    "morto": st.booleans(),
    "morto_size": st.integers(9, 13),
    "morto_direct": st.booleans(),
    "morto_needs_canastra": st.booleans(),
    "go_out_needs_canastra": st.booleans(),
    "initial_upcard": st.booleans(),
    "pile_pickup": st.sampled_from(("free", "must_use_top")),
    "first_turn_redraw": st.booleans(),
    "ace_both_ends": st.booleans(),
    "max_sets_per_rank": st.integers(0, 2),
    "canastra_size": st.integers(5, 8),
    "canastra_from_sets": st.booleans(),
    "semi_clean": st.booleans(),
    "royal_canastras": st.booleans(),
    "relancinho": st.booleans(),
    "stock_floor": st.sampled_from((0, 0, 2, 10)),
    "vulnerability": st.booleans(),
    "opening_min": st.sampled_from((0, 30, 50, 75)),
    "morto_voided_by": st.sampled_from(("any_end", "opponent_out")),
}


@st.composite
def house_rules(draw: st.DrawFn) -> tuple[Rules, int]:
    base = draw(st.sampled_from(sorted(PRESETS)))
    chosen = draw(st.lists(st.sampled_from(sorted(KNOBS)), max_size=8, unique=True))
    overrides = {k: draw(KNOBS[k]) for k in chosen}
    # A low target so that random play finishes matches; vulnerable from the first deal when
    # the house plays with vulnerability, so openings short of the minimum are taken back.
    overrides["target_score"] = draw(st.sampled_from((300, 600)))
    if overrides.get("vulnerability", PRESETS[base].vulnerability):
        overrides["vulnerable_at"] = draw(st.sampled_from((0, 10_000)))
        overrides["opening_min_after_retract"] = max(
            overrides.get("opening_min", PRESETS[base].opening_min), 90)
    try:
        rules = derive(base, **overrides)
    except RulesError:
        assume(False)
        raise  # unreachable: assume(False) stops the example
    players = draw(st.sampled_from(rules.player_counts))
    return rules, players


# 20 combinations in the default run (40 took 6.6 s of its 10-minute budget); the slow twin
# plays 80. HOUSE_EXAMPLES sets both.
SETTINGS = settings(max_examples=int(os.environ.get("HOUSE_EXAMPLES", "20")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
SLOW_SETTINGS = settings(SETTINGS, max_examples=int(os.environ.get("HOUSE_EXAMPLES", "80")))


@SETTINGS
@given(case=house_rules(), seed=st.integers(0, 2**32 - 1))
def test_any_house_rules_play_replay_and_audit_clean(case: tuple[Rules, int], seed: int) -> None:
    plays_replays_and_audits_clean(case, seed)


@pytest.mark.slow
@SLOW_SETTINGS
@given(case=house_rules(), seed=st.integers(0, 2**32 - 1))
def test_more_house_rules_play_replay_and_audit_clean(case: tuple[Rules, int], seed: int) -> None:
    plays_replays_and_audits_clean(case, seed)


def plays_replays_and_audits_clean(case: tuple[Rules, int], seed: int) -> None:
    rules, players = case
    # random_match asserts a legal move in every phase: a combination that strands a player
    # fails there, naming the seq.
    listed: dict[int, list[AnyEvent]] = {}
    events = random_match(rules, players, seed, max_hands=2, max_turn_events=1500, eager=True,
                          listed=listed)
    end = replay_conserving(events, rules)
    event(f"ends in phase {end.phase}")  # --hypothesis-show-statistics: how many finish

    # Every listed move is accepted, at every state of the first 300 events (the lists the
    # random play made, not made again).
    rep = Replayer()
    for ev in events[:300]:
        state = rep.state()
        for move in listed[state.seq] if state.seq in listed else legal_moves(state):
            validate(state, move)
        rep.step(ev)

    # The bytes rebuild the same table.
    assert replay(decode_many(encode_many(events))) == end

    # The written log audits clean (integrity, legality, every recorded score).
    fd, path = tempfile.mkstemp(suffix=".blog")
    os.close(fd)
    try:
        os.unlink(path)
        with Writer(path, batched=True) as w:  # one fsync a batch, not one an event
            for ev in events:
                w.append(ev)
        verdict = audit_log(path)
        assert not verdict.findings, [f"{f.rule} {f.message}" for f in verdict.findings]
    finally:
        if os.path.exists(path):
            os.unlink(path)

    # The dealer deals these rules too, and its deal checks out against its seed.
    first = deal_seeded(rules, players, 0, 0, f"s{seed}", seq=1)
    opening: list[AnyEvent] = [start(rules, players), first]
    Replayer().run(opening)
    assert check_deals(opening, require_commitment=False) == []

    # A finished match: the archive's columns hold one entry per event (None: not finished).
    cols = replay_columns(events, 1)
    if end.phase == "over":
        assert cols is not None and len(cols.kind) == len(cols.hand) == len(events)
    else:
        assert cols is None


@settings(max_examples=int(os.environ.get("HOUSE_EXACT_EXAMPLES", "8")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=house_rules(), seed=st.integers(0, 2**32 - 1))
def test_under_any_house_rules_legal_moves_is_exactly_what_the_reducer_accepts(
    case: tuple[Rules, int], seed: int
) -> None:
    """Both ways, as for the presets (tests/property/test_legal_moves_exact.py): at a sample of
    positions of a random hand, every listed move is accepted and every plausible move the
    reducer accepts is listed."""
    rules, players = case
    events = random_match(rules, players, seed, max_hands=1, max_turn_events=1500, eager=True)
    rng = random.Random(seed)
    # 24 positions of the hand, always with the last (its end, or where the cap cut it).
    at = set(rng.sample(range(len(events)), min(23, len(events)))) | {len(events) - 1}
    rep = Replayer()
    listed = 0
    for i, ev in enumerate(events):
        if i in at:
            listed += check_state(rep.state(), rng)
        rep.step(ev)
    assert listed > 0


def card_points(card: int, rules: Rules) -> int:
    """RULES.md §9's card values, read from the rules' point knobs (not the engine's table)."""
    if card == JOKER:
        return rules.points.joker
    rank = RANK[card]
    if rank == 2:
        return rules.points.two
    if rank == ACE:
        return rules.points.ace
    return rules.points.high if rank >= 8 else rules.points.low


def reference_hand_scores(rules: Rules, before: State, hand_events: list[AnyEvent]) -> list[int]:
    """Each side's hand score (RULES.md §9) worked out independently of ``buraco_log.scoring``:
    the cards come from the table before the hand's end, canastras are classed by the oracle
    meld reader of the tests, and the morto's fate is read from the hand's events (§7)."""
    sides = before.sides
    n_sides = max(sides) + 1
    # §7: a morto taken indirectly stands once its taker moved again; until then an opponent's
    # going out (or, read as logs before morto_voided_by were, any end) voids it.
    taken = [False] * n_sides
    pending: dict[int, int] = {}  # side -> taker who has not moved since an indirect take
    went_out: int | None = None
    for ev in hand_events:
        seat = getattr(ev, "seat", None)
        if seat is not None and pending.get(sides[seat]) == seat and not isinstance(ev, MortoTaken):
            del pending[sides[seat]]
        if isinstance(ev, MortoTaken):
            taken[sides[ev.seat]] = True
            if not ev.direct:
                pending[sides[ev.seat]] = ev.seat
        elif isinstance(ev, WentOut):
            went_out = ev.seat
    if went_out is None and before.went_out is not None:
        went_out = before.went_out
    # docs/rules.md: "the turn counts once it begins": a hand that ends at the start of the
    # taker's own turn (the stock at its floor) leaves the morto standing, under either reading.
    if went_out is None and pending.get(sides[before.turn]) == before.turn:
        del pending[sides[before.turn]]
    any_end = rules.morto_voided_by in ("any_end", UNSET)
    scores = []
    for side in range(n_sides):
        table = bonus = 0
        for meld in before.melds[side]:
            table += sum(card_points(c, rules) for c in meld.cards)
            cls = read_meld(meld.cards, rules).canastra
            if cls is not None:
                bonus += getattr(rules.bonuses, cls)
        going_out = rules.bonuses.going_out if went_out is not None and \
            sides[went_out] == side else 0
        voided = side in pending and (any_end or (went_out is not None and
                                                  sides[went_out] != side))
        in_hand = sum(card_points(c, rules) for seat, h in enumerate(before.hands)
                      if sides[seat] == side and not (voided and seat == pending[side])
                      for c in h)
        penalty = rules.bonuses.morto_not_taken if rules.morto and (
            not taken[side] or voided) else 0
        relancinho = before.relancinho[side] * rules.bonuses.relancinho \
            if rules.relancinho else 0
        scores.append(table + bonus + going_out + relancinho - in_hand - penalty)
    return scores


@settings(max_examples=int(os.environ.get("HOUSE_SCORE_EXAMPLES", "20")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=house_rules(), seed=st.integers(0, 2**32 - 1))
def test_under_any_house_rules_every_hand_scores_as_an_independent_scorer_says(
    case: tuple[Rules, int], seed: int
) -> None:
    rules, players = case
    events = random_match(rules, players, seed, max_hands=2, max_turn_events=1500, eager=True)
    rep = Replayer()
    hand_events: list[AnyEvent] = []
    ended = 0
    for ev in events:
        if isinstance(ev, HandStarted):
            hand_events = []
        elif isinstance(ev, HandEnded):
            assert ev.scores is not None
            want = reference_hand_scores(rules, rep.state(), hand_events)
            assert list(ev.scores) == want, (ev.seq, ev.reason, ev.scores, want)
            ended += 1
        hand_events.append(ev)
        rep.step(ev)
    event(f"hands scored: {ended}")
