"""The review: sanity checks on constructed positions, information discipline, the report."""

from __future__ import annotations

import msgspec
import pytest

from buraco_log.cards import parse_card
from buraco_log.errors import IllegalMoveError
from buraco_log.events import AnyEvent, CardDiscarded
from buraco_log.expert import DEFAULT_BUDGET, Budget
from buraco_log.review import is_mistake, review_events, review_page, to_json, to_text
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from tests.review.expert_matches import match, swapped_twin
from tests.review.positions import bad_discard, refused_pile

TINY = Budget(samples=3, candidates=3)


def test_a_discard_that_feeds_the_next_player_a_canastra_is_flagged() -> None:
    events, seq = bad_discard()
    r = review_events(events, 0)  # the default budget and threshold
    move = next(m for m in r.moves if m.seq == seq)
    assert move.flagged and move.kind == "discard" and move.played == "discard 9h"
    assert move.best.startswith("discard") and move.best != "discard 9h"
    assert move.cost >= 100  # a clean canastra's bonus alone is 200
    assert r.hands[0].lost >= move.cost


def test_an_obviously_good_pile_pickup_refused_is_flagged() -> None:
    events, seq = refused_pile()
    (move,) = review_events(events, 0, seqs={seq}).moves
    assert move.played == "draw from the stock" and move.kind == "draw"
    assert move.best == "take the pile (6 cards, top 9s)"
    assert move.flagged, move


def test_the_played_good_moves_of_those_positions_are_not_flagged() -> None:
    # The control: the same positions, with the good move played instead, raise no flag there.
    events, seq = bad_discard()
    good = [*events[:-1], CardDiscarded(0, parse_card("Kc"), seq=seq)]
    r = review_events(good, 0)
    assert not next(m for m in r.moves if m.seq == seq).flagged


def test_the_review_sees_only_what_the_seat_saw() -> None:
    events = match("classic", 2)
    twin, cut = swapped_twin(events, 0)
    a = review_events(events[:cut + 1], 0, budget=TINY, seed="s")
    b = review_events(twin, 0, budget=TINY, seed="s")
    assert a == b and a.decisions > 3


def test_a_review_is_reproducible_from_its_seed_and_budget_and_says_both() -> None:
    events = match("classic", 2)[:36]
    a = review_events(events, 1, budget=TINY, seed="abc")
    assert a == review_events(events, 1, budget=TINY, seed="abc")
    assert a != review_events(events, 1, budget=TINY, seed="abd")
    text = to_text(a)
    assert "seed 'abc'" in text and "3 samples x 3 candidates" in text
    data = to_json(a)
    assert data["seed"] == "abc"
    assert data["budget"] == {"samples": 3, "candidates": 3, "rounds": 3, "ms": None}


def test_every_decision_of_the_seat_is_reviewed_and_summed_per_hand() -> None:
    events = match("biriba", 4)[:200]
    r = review_events(events, 2, budget=TINY, threshold=10)
    assert r.moves and all(m.seq > 0 for m in r.moves)
    seats = {getattr(events[m.seq], "seat", None) for m in r.moves}
    assert seats == {2}
    assert {m.kind for m in r.moves} >= {"draw", "discard"}
    for h in r.hands:
        ms = [m for m in r.moves if m.hand == h.hand]
        assert h.decisions == len(ms)
        assert h.mistakes == sum(m.flagged for m in ms)
        assert h.lost == pytest.approx(sum(m.cost for m in ms if m.flagged), abs=0.01)
    assert r.mistakes == sum(h.mistakes for h in r.hands)
    for m in r.moves:
        assert m.low <= m.cost <= m.high and m.se >= 0
        assert m.flagged == is_mistake(m.cost, m.se, 10, m.measured)
        assert m.alternatives[0].move == m.best


def test_a_review_of_some_moves_judges_them_as_the_whole_review_does() -> None:
    events = match("classic", 2)[:50]
    whole = review_events(events, 0, budget=TINY)
    some = review_events(events, 0, budget=TINY, seqs={m.seq for m in whole.moves[1::3]})
    assert some.moves == whole.moves[1::3]


@pytest.mark.parametrize(("cost", "se", "flag"), [(30, 10, True), (30, 16, False),
                                                  (20, 1, False), (25, 12.0, True),
                                                  (25, 12.5, False)])
def test_a_mistake_needs_the_threshold_and_its_interval_above_zero(
    cost: float, se: float, flag: bool
) -> None:
    # 48 measuring samples (the default budget's half): the interval is ± 2.01 standard errors
    assert is_mistake(cost, se, 25, 48) is flag


def test_moves_the_expert_played_are_rarely_flagged() -> None:
    rules = msgspec.structs.replace(PRESETS["classic"], target_score=150)
    events: list[AnyEvent] = []
    for i in range(1):
        events = simulate_match(rules, 2, seed="own", index=i, bots=("expert:6", "heuristic"))
        r = review_events(events, 0, budget=Budget(samples=8))
        assert r.decisions >= 10
        assert r.mistakes / r.decisions <= 0.12, to_text(r, all_moves=False)


def test_an_illegal_event_refuses_the_log_or_with_partial_stops_the_review_there() -> None:
    events = match("classic", 2)[:40]
    bad = msgspec.structs.replace(events[30], seq=31)  # a repeat: out of order
    with pytest.raises(IllegalMoveError) as got:
        review_events([*events[:31], bad], 0, budget=TINY)
    assert got.value.seq == 31
    r = review_events([*events[:31], bad], 0, budget=TINY, partial=True)
    assert r.note is not None and "seq 31 is illegal [" in r.note
    assert r.moves and max(m.seq for m in r.moves) < 31


def test_the_html_review_is_the_seat_page_with_the_review_added() -> None:
    events, _ = bad_discard()
    r = review_events(events, 0, budget=Budget(samples=6))
    html = review_page(events, r)
    assert '<script type="application/json" id="bl-data">' in html
    assert 'id="bl-review"' in html and "rv-bad" in html
    assert html.index('id="bl-review"') > html.index('id="bl-data"')
    assert html.rstrip().endswith("</html>")
    assert DEFAULT_BUDGET.samples > TINY.samples


@pytest.mark.parametrize(("budget", "words"), [
    (Budget(samples=1, candidates=1, rounds=1), "1 sample x 1 candidate, 1 round ahead"),
    (Budget(samples=2, candidates=3, rounds=0), "2 samples x 3 candidates, to the end of the hand"),
])
def test_a_budget_is_described_in_words_with_singulars(budget: Budget, words: str) -> None:
    assert budget.describe() == words
