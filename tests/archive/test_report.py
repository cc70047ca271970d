"""The canned analyses agree with the logs, and the stored ratings with a live fold."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import msgspec
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from buraco_log.archive import connect, ingest, report, store
from buraco_log.archive.report import (
    CANNED,
    LEADERBOARD_ROWS,
    bar_chart,
    leaderboard,
    leaderboard_rows,
    ratings,
    ratings_of_rows,
)
from buraco_log.events import PileTaken
from buraco_log.log import read_events, write_log
from buraco_log.reducer import replay
from tests.archive.conftest import Archived, Corpus


def section(archived: Archived, name: str) -> list[dict[str, object]]:
    rep = report(archived.path)
    s = next(s for s in rep.sections if s.name == name)
    return [dict(zip(s.columns, r, strict=True)) for r in s.rows]


def test_every_canned_section_is_in_the_report(archived: Archived) -> None:
    rep = report(archived.path)
    assert [s.name for s in rep.sections] == [*CANNED, "leaderboard"]
    assert rep.matches == len(archived.corpus.good)
    assert all(s.rows for s in rep.sections)


def test_win_rates_by_seat_match_the_replayed_winners(archived: Archived) -> None:
    wins: dict[tuple[int, int], list[int]] = {}
    for path in archived.corpus.good:
        state = replay(read_events(path))
        for seat, side in enumerate(state.sides):
            wins.setdefault((len(state.sides), seat), []).append(side == state.winner)
    for row in section(archived, "win_rate_by_seat"):
        got = wins[(row["players"], row["seat"])]  # type: ignore[index]
        assert row["matches"] == len(got)
        assert math.isclose(row["win_rate"], round(sum(got) / len(got), 4))  # type: ignore[arg-type]


def test_pile_pickups_count_every_pile_taken_in_the_logs(archived: Archived) -> None:
    taken = sum(isinstance(e, PileTaken) for p in archived.corpus.good for e in read_events(p))
    assert sum(r["pickups"] for r in section(archived, "pile_pickups")) == taken  # type: ignore[misc]


def test_the_stored_ratings_equal_a_live_fold(archived: Archived, tmp_path: Path) -> None:
    assert store.current_ratings(str(archived.path)) is not None
    con = connect(archived.path)
    stored = leaderboard(con, 0, archived.path)
    live = leaderboard(con, 0)
    assert stored.rows == live.rows
    # Equal teams trade equal points: the ratings stay zero-sum.
    assert abs(sum(r - 1500 for r in ratings(con).column("elo").to_pylist())) < 1e-6
    con.close()


def test_ratings_of_other_batches_are_not_used(archived: Archived, tmp_path: Path) -> None:
    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    batch = next((arch / store.BATCHES).iterdir())
    batch.unlink()  # the archive now holds fewer batches than the ratings were made from
    assert store.current_ratings(str(arch)) is None
    con = connect(arch)
    assert leaderboard(con, 0, arch).rows == leaderboard(con, 0).rows
    con.close()


def test_bar_charts_survive_negative_and_missing_values() -> None:
    svg = bar_chart(["a", "b", "c"], [3.0, -1.5, math.nan])
    assert svg.startswith("<svg") and svg.count("<rect") == 3
    assert bar_chart([], []) == ""


def test_the_elo_fold_equals_a_plain_reference_fold(archived: Archived) -> None:
    """Each match, in start-time then match-id order: a side's rating is its players' mean,
    and every losing side plays the winner; the winners' players gain what the losers lose."""
    con = connect(archived.path)
    games = con.sql("SELECT game_id, winner_side FROM matches "
                    "ORDER BY started_at NULLS FIRST, match_id, game_id").fetchall()
    seats = con.sql("SELECT game_id, side, player FROM players ORDER BY game_id, seat").fetchall()
    by_game: dict[object, list[tuple[int, str]]] = {}
    for game, side, player in seats:
        by_game.setdefault(game, []).append((side, player))
    rating: dict[str, float] = {}
    for game, winner in games:
        table = by_game[game]
        for _, p in table:
            rating.setdefault(p, 1500.0)
        mean = {s: sum(rating[p] for t, p in table if t == s) / sum(1 for t, _ in table if t == s)
                for s in {t for t, _ in table}}
        delta = dict.fromkeys(mean, 0.0)
        for s in mean:
            if s != winner:
                change = 24.0 * (1 - 1 / (1 + 10 ** ((mean[s] - mean[winner]) / 400)))
                delta[winner] += change
                delta[s] -= change
        for s, p in table:
            rating[p] += delta[s]
    got = {r["player"]: r["elo"] for r in ratings(con).to_pylist()}
    con.close()
    assert got.keys() == rating.keys()
    assert all(math.isclose(got[p], rating[p], abs_tol=1e-6) for p in rating)


def test_ingest_reads_the_rows_of_the_fold_as_duckdb_selects_them(
        corpus: Corpus, tmp_path: Path) -> None:
    """Ingest folds the ratings over rows read with Arrow alone (no DuckDB connection); they
    must be the rows ``LEADERBOARD_ROWS`` selects, in its order, with start times missing
    (first) and tied (then by match id), so the stored ratings equal a live fold exactly."""
    logs = tmp_path / "logs"
    logs.mkdir()
    tied = 1_600_000_000_000
    for k, path in enumerate(corpus.good[:9]):
        events = read_events(path)
        at = None if k < 3 else tied if k < 7 else events[0].at
        events[0] = msgspec.structs.replace(events[0], at=at)
        write_log(logs / f"m{k}.blog", events)
    arch = tmp_path / "arch"
    assert not ingest([logs], arch).errors
    con = connect(arch)
    try:
        expected = con.sql(LEADERBOARD_ROWS).to_arrow_table()
        live = ratings(con)
    finally:
        con.close()
    rows = leaderboard_rows(str(arch))
    assert rows.to_pylist() == expected.to_pylist()
    assert len({r["ord"] for r in rows.to_pylist()}) == 9
    stored = pq.read_table(store.current_ratings(str(arch)))
    assert stored.to_pylist() == live.to_pylist()
    assert ratings_of_rows(leaderboard_rows(str(tmp_path / "none"))).num_rows == 0
