"""Fault probes of `review` and the bots (round 39): every preset at every player count, the
last seat of 3- and 6-player tables, and a log holding a second match start.

Round 39 found no failure here (measured: the default budget reviews seat 1 of the longest
simulated log, `bossa-nova-3p` with 2,696 events and 878 decisions, in 100 s of CPU); these pin
it. The sweep is slow (a match per preset and player count, each searched): `-m slow`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.expert import Budget
from buraco_log.review import review_events
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from tests.cli.probes import one_error_line

ROOT = Path(__file__).resolve().parents[2]
TABLES = [(name, n) for name, rules in PRESETS.items() for n in rules.player_counts]


def _review(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "review", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
                          env={**os.environ, "COLUMNS": "200"})


def _seat_of(event: ev.AnyEvent) -> int | None:
    seat = getattr(event, "seat", None)
    return seat if isinstance(seat, int) else None


@pytest.mark.slow
@pytest.mark.parametrize(("preset", "players"), TABLES, ids=[f"{p}-{n}p" for p, n in TABLES])
def test_every_table_plays_out_and_its_last_seat_is_reviewed(preset: str, players: int) -> None:
    events = list(simulate_match(PRESETS[preset], players, seed="p39",
                                 bots=("random", "heuristic")))
    assert isinstance(events[-1], ev.MatchEnded)
    seat = players - 1  # on 3- and 6-player tables, the seat of the last side's last partner
    prefix = events[:160]
    review = review_events(prefix, seat, budget=Budget(2, 2, 1))
    by_seq = {e.seq: e for e in prefix}
    assert review.decisions == len(review.moves) > 0
    for move in review.moves:
        assert _seat_of(by_seq[move.seq]) == seat, move
        assert move.alternatives and move.alternatives[0].move == move.best


def _restarted(path: Path) -> Path:
    """A classic match whose seq 30 starts another match (two logs run together)."""
    first = list(simulate_match(PRESETS["classic"], 3, seed="one"))[:30]
    second = list(simulate_match(PRESETS["classic"], 3, seed="two"))
    tail = [msgspec.structs.replace(e, seq=e.seq + 30) for e in second]
    with log.Writer(path, validate=False) as w:
        for event in first + tail:
            w.append(event)
    return path


def test_a_second_match_start_is_refused_in_one_line_naming_its_seq(tmp_path: Path) -> None:
    path = _restarted(tmp_path / "restart.blog")
    line = one_error_line(_review(path, "--seat", "2", "--budget", "2x2r1"), 1)
    assert line.startswith(f"buraco-log: error: {path}: seq 30 is illegal: "), line
    assert line.endswith("--partial reviews the moves before it [match.already_started]")


def test_partial_reviews_the_last_seat_of_a_three_player_table_up_to_it(tmp_path: Path) -> None:
    path = _restarted(tmp_path / "restart.blog")
    review = review_events(log.read_events(path), 2, budget=Budget(2, 2, 1), partial=True)
    assert review.note is not None and review.note.startswith(
        "seq 30 is illegal [match.already_started]")
    assert review.moves and all(m.seq < 30 for m in review.moves)
