"""A hand in which the reviewed seat had no move with an alternative.

Two hands of ``classic``: in the second, seat 1 lays its whole hand on its first turn and goes
out, so seat 0 never plays. The review of seat 0 listed hand 0 and then said nothing of hand 1:
a referee asked about hand 1 found no word of it. And one decision was "1 decisions".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from buraco_log.audit import load
from buraco_log.expert import Budget
from buraco_log.review import review_events, to_json, to_text

GOLDEN = Path(__file__).resolve().parents[2] / "examples" / "golden" / "classic.jsonl"
BUDGET = Budget(samples=2, candidates=2)


def _two_hands(tmp_path: Path) -> Path:
    """The golden classic hand, then a hand whose first player (seat 1) goes out at once."""
    lines = GOLDEN.read_text().splitlines()
    events: list[dict[str, Any]] = [json.loads(x) for x in lines[1:-1]]
    start, hand0 = events[0], events[1:-1]  # without the match end
    start["rules"]["target_score"] = 260  # 255 after hand 0: the match goes on
    for e in hand0:
        if e["t"] == "he":
            e["scores"] = None
    deal = copy.deepcopy(events[1])
    deal.update(hand=1, dealer=0, hands=deal["hands"][::-1])
    stock = deal["stock"]
    i, j = stock.index("4c"), stock.index("Ks")
    stock[i], stock[j] = stock[j], stock[i]  # K♠ on top: seat 1 lays its twelve cards
    out = [start, *hand0]
    for e in [deal, {"t": "dr", "seat": 1, "card": "Ks"},
              *({"t": "ml", "seat": 1, "cards": m, "meld": None}
                for m in (["7h", "7s", "7d"], ["8c", "8d", "8s"], ["9h", "9s", "9d"],
                          ["Kc", "Kd", "Ks"])),
              {"t": "wo", "seat": 1}, {"t": "he", "reason": "went_out", "scores": None},
              {"t": "me", "totals": None, "winner": None, "server_seed": None}]:
        e["seq"] = len(out)
        out.append(e)
    path = tmp_path / "two-hands.jsonl"
    path.write_text("\n".join([lines[0], *(json.dumps(e) for e in out)]) + "\n")
    return path


def test_a_hand_the_seat_never_played_is_named_in_the_review(tmp_path: Path) -> None:
    events = load(_two_hands(tmp_path))
    review = review_events(events, 0, budget=BUDGET)
    assert [h.hand for h in review.hands] == [0]
    assert review.hands_without_decision == (1,)
    assert list(to_json(review)["hands_without_decision"]) == [1]
    text = to_text(review)
    assert ("hand 1: no decision to review: seat 0 had no move with an alternative (no turn, "
            "or only forced moves)") in text
    assert text.index("hand 0\n") < text.index("hand 1: no decision") < text.index("total:")
    # seat 1 played both hands: nothing to add
    assert review_events(events, 1, budget=BUDGET).hands_without_decision == ()


def test_one_decision_is_one_decision() -> None:
    events = load(GOLDEN)
    review = review_events(events, 1, budget=BUDGET, seqs={8})
    assert review.decisions == 1
    text = to_text(review)
    assert "hand 0: 1 decision, 0 mistakes," in text
    assert "total: 1 decision, 0 mistakes," in text
    assert review.hands_without_decision == ()  # a review of some seqs names no other hand
