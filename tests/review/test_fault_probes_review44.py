"""Probe 44: a review words the end of a hand at the stock as `moves` and `replay` do.

`mega` ends a hand with 2 cards still in the stock (RULES.md §8). `moves` offers "end the
hand: the stock is down to its last 2 cards" and `replay` says "hand ended (the stock is down
to its last 2 cards)", but a review named the same decision "end the hand (stock out)", which
reads as an empty stock.
"""

from __future__ import annotations

from pathlib import Path

from buraco_log.audit import load
from buraco_log.events import HandEnded
from buraco_log.expert import Budget
from buraco_log.options import moves_at
from buraco_log.review import move_text, review_events
from buraco_log.rules import PRESETS
from buraco_log.timeline import Timeline

MEGA = Path(__file__).resolve().parents[2] / "examples" / "sim" / "mega-4p-000000.blog"
TINY = Budget(samples=2, candidates=3, rounds=1)


def test_a_review_of_megas_stock_end_says_what_moves_offers_and_replay_says() -> None:
    events = load(MEGA)
    tl = Timeline(events)
    end = next(e for e in tl.events if isinstance(e, HandEnded) and e.reason == "stock_out")
    before = tl.state_at(end.seq - 1)
    assert len(before.stock) == 2  # mega's floor: two cards left, not none
    offers = [m.text for g in moves_at(before).groups if g.group == "end" for m in g.moves]
    assert offers == ["end the hand: the stock is down to its last 2 cards"]
    review = review_events(events[: end.seq + 1], before.turn, budget=TINY, seqs={end.seq})
    [m] = review.moves
    assert (m.seq, m.kind, m.played) == (end.seq, "draw", offers[0])
    said = [a.move for a in m.alternatives if a.move.startswith("end the hand")]
    assert said == offers  # the alternatives word it alike
    assert "(the stock is down to its last 2 cards)" in tl.recent(end.seq, 1)[0]  # replay


def test_a_stock_end_is_worded_by_the_floor_of_the_rules_given() -> None:
    ev = HandEnded("stock_out", None, seq=9)
    assert move_text(ev, rules=PRESETS["classic"]) == "end the hand: the stock ran out"
    assert move_text(ev, "tiles", PRESETS["mega"]) == \
        "end the hand: the stock is down to its last 2 tiles"
    assert move_text(ev) == "end the hand: the stock reached its floor"  # no rules, no floor
