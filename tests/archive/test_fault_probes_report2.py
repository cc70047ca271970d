"""Fault probes, report, second round: what the canned sections say about 3- and 6-player
matches (three sides of one; two sides of three, RULES.md §1), and a leaderboard where one
player holds both seats of a match."""

from __future__ import annotations

import math
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log.archive import ingest, query, report
from buraco_log.archive.report import ELO_START
from buraco_log.events import MatchStarted
from buraco_log.log import read_events, write_log

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"


@pytest.fixture(scope="module")
def three_and_six(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("three-six")
    logs = base / "logs"
    logs.mkdir()
    for log in sorted(SIM.glob("*-3p-*.blog")) + sorted(SIM.glob("*-6p-*.blog")):
        shutil.copy(log, logs)
    arch = base / "arch"
    rep = ingest([str(logs)], arch)
    assert rep.added == len(list(logs.iterdir())) >= 4 and not rep.errors
    return arch


def _section(arch: Path, name: str) -> list[dict[str, Any]]:
    for s in report(arch, top=0).sections:
        if s.name == name:
            return [dict(zip(s.columns, r, strict=True)) for r in s.rows]
    raise AssertionError(name)


def test_the_fair_share_is_one_over_the_sides(three_and_six: Path) -> None:
    """Three players: three sides of one, 1/3 each; six: two sides of three, 1/2 each."""
    rows = _section(three_and_six, "win_rate_first_player")
    assert rows and {r["players"] for r in rows} == {3, 6}
    for r in rows:
        assert r["fair_share"] == round(1 / (3 if r["players"] == 3 else 2), 4)
        assert 0 <= r["first_player_win_rate"] <= 1


def test_seat_win_rates_add_up_to_the_winning_side(three_and_six: Path) -> None:
    """Per preset and player count, the seats' wins add up to one side per match: one seat of
    three, three seats of six (partners on alternate seats win together)."""
    rows = _section(three_and_six, "win_rate_by_seat")
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["preset"], r["players"]), []).append(r)
    assert {players for _, players in groups} == {3, 6}
    for (_, players), seats in groups.items():
        assert sorted(int(r["seat"]) for r in seats) == list(range(int(players)))
        matches = int(seats[0]["matches"])
        wins = sum(float(r["win_rate"]) * matches for r in seats)
        assert math.isclose(wins, matches * (1 if players == 3 else 3), abs_tol=1e-3)
        if players == 6:  # seats 0, 2, 4 are one side
            assert {float(r["win_rate"]) for r in seats if int(r["seat"]) % 2 == 0} \
                == {float(seats[0]["win_rate"])}


def test_hand_endings_share_one_whole_per_preset(three_and_six: Path) -> None:
    rows = _section(three_and_six, "hand_endings")
    totals: dict[object, float] = {}
    for r in rows:
        totals[r["preset"]] = totals.get(r["preset"], 0.0) + float(r["share"])
    assert totals and all(math.isclose(t, 1.0, abs_tol=1e-3) for t in totals.values())
    hands = query(three_and_six, "SELECT preset, count(*) AS n FROM hands WHERE side = 0 "
                  "GROUP BY preset").to_pylist()
    assert {h["preset"]: h["n"] for h in hands} == {
        p: sum(int(r["hands"]) for r in rows if r["preset"] == p) for p in totals}


def test_the_leaderboard_counts_every_match_once_and_stays_zero_sum(three_and_six: Path) -> None:
    """A three-sided match: the winner beats each other side; a six: three beat three. What
    one side gains the others lose, so the ratings always sum to 1500 a player."""
    rows = _section(three_and_six, "leaderboard")
    appears = query(three_and_six, "SELECT player, count(DISTINCT game_id) AS n, "
                    "count(DISTINCT game_id) FILTER (WHERE won) AS w FROM players "
                    "GROUP BY player").to_pylist()
    assert {r["player"]: (r["matches"], r["wins"]) for r in rows} == \
        {a["player"]: (a["n"], a["w"]) for a in appears}
    assert math.isclose(sum(float(r["elo"]) for r in rows), ELO_START * len(rows),
                        abs_tol=0.05 * len(rows))  # each elo is rounded to 0.1


# two-player logs won by side 1 and by side 0
@pytest.mark.parametrize("log", ["classic-2p-000000.blog", "burraco-2p-000000.blog"])
def test_one_player_in_both_seats_trades_no_rating_with_themselves(
        tmp_path: Path, log: str) -> None:
    """Before: the two-player fold assigned both ratings from the values before the match,
    so one name in both seats ended 1512 (seat 1 won) or 1488 (seat 0 won), and the match
    counted twice. Playing oneself moves nothing: 1500, one match, won."""
    events = read_events(SIM / log)
    start = events[0]
    assert isinstance(start, MatchStarted)
    me = start.players[0]
    twice = msgspec.structs.replace(start, players=(me, me))
    logs = tmp_path / "logs"
    logs.mkdir()
    write_log(logs / "self.blog", [twice, *events[1:]])
    arch = tmp_path / "arch"
    assert ingest([str(logs)], arch).added == 1
    assert query(arch, "SELECT count(DISTINCT player) AS n FROM players").to_pylist() == \
        [{"n": 1}]
    rows = _section(arch, "leaderboard")
    assert [(r["player"], r["elo"], r["matches"], r["wins"]) for r in rows] == \
        [(me.id or me.name, ELO_START, 1, 1)]
