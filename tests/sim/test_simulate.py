"""Simulated matches: complete, legal, fair, deterministic, and the same bytes for any --jobs."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log import audit
from buraco_log.dealer import check_deals
from buraco_log.events import HandStarted, MatchEnded, MatchStarted
from buraco_log.log import BATCH_EVENTS, read_events, verify, write_log
from buraco_log.reducer import replay
from buraco_log.rules import PRESETS, preset
from buraco_log.simulate import (
    SimulationError,
    encode_match,
    match_file,
    seat_bots,
    simulate_many,
    simulate_match,
    summarize,
)

CASES = [(name, n) for name, r in PRESETS.items() for n in r.player_counts]
SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


def assert_finished_and_replays(events: list, players: int) -> None:  # type: ignore[type-arg]
    start, end = events[0], events[-1]
    assert isinstance(start, MatchStarted) and isinstance(end, MatchEnded)
    final = replay(events)
    assert final.phase == "over"
    assert end.totals == tuple(final.totals)
    assert end.winner == final.winner is not None
    assert max(final.totals) >= start.rules.target_score
    assert check_deals(events) == []
    assert len(start.players) == players


@SETTINGS
@given(case=st.sampled_from(CASES), seed=st.text(max_size=12), index=st.integers(0, 10**6))
def test_any_seed_gives_a_finished_match_that_replays_to_its_scores(
    case: tuple[str, int], seed: str, index: int
) -> None:
    name, players = case
    events = simulate_match(preset(name), players, seed=seed, index=index)
    assert_finished_and_replays(events, players)


@settings(max_examples=6, deadline=None, derandomize=True)
@given(
    case=st.sampled_from([c for c in CASES if c[1] <= 4]),
    seed=st.text(max_size=8),
    bots=st.lists(st.sampled_from(["heuristic", "random"]), min_size=1, max_size=2),
)
def test_mixed_tables_finish_too(case: tuple[str, int], seed: str, bots: list[str]) -> None:
    name, players = case
    events = simulate_match(preset(name), players, seed=seed, bots=bots)
    assert_finished_and_replays(events, players)


@pytest.mark.parametrize(("name", "players"), CASES)
def test_every_preset_and_player_count_plays_to_the_end(name: str, players: int) -> None:
    events = simulate_match(preset(name), players, seed="every", index=1)
    assert_finished_and_replays(events, players)
    assert events[0].metadata["generator"].startswith("buraco_log.simulate")  # type: ignore[union-attr]


def test_a_match_is_a_pure_function_of_its_arguments() -> None:
    r = preset("burraco")
    a = simulate_match(r, 4, seed="s", index=3)
    assert a == simulate_match(r, 4, seed="s", index=3)
    assert a != simulate_match(r, 4, seed="s", index=4)
    assert a != simulate_match(r, 4, seed="t", index=3)
    assert all(e.at is None for e in a)  # no wall-clock time: the bytes never depend on it


def test_deals_come_from_the_commitment_published_first() -> None:
    events = simulate_match(preset("mega"), 2, seed="fair")
    start, end = events[0], events[-1]
    assert isinstance(start, MatchStarted) and isinstance(end, MatchEnded)
    assert start.commitment and end.server_seed and len(start.player_seeds) == 2
    deals = [e for e in events if isinstance(e, HandStarted)]
    assert deals and all(d.shuffle == "fy-hmac-sha256-v1" and d.seed is None for d in deals)


def test_seats_are_given_bots_round_the_table() -> None:
    assert seat_bots(["heuristic", "random"], 4) == ("heuristic", "random") * 2
    assert seat_bots(["random"], 3) == ("random",) * 3
    with pytest.raises(ValueError, match="unknown bot"):
        simulate_match(preset("classic"), 2, seed="x", bots=["nobody"])


def test_a_match_that_never_ends_is_reported() -> None:
    with pytest.raises(SimulationError, match="undecided after 1 hands"):
        simulate_match(preset("burako"), 2, seed="x", max_hands=1)


def test_the_output_is_the_same_bytes_for_any_number_of_jobs(tmp_path: Path) -> None:
    r = preset("thirteen-quick")
    one = simulate_many(r, 2, 4, seed="j", out_dir=tmp_path / "one", bots=["heuristic", "random"])
    two = simulate_many(
        r, 2, 4, seed="j", out_dir=tmp_path / "two", bots=["heuristic", "random"], jobs=2
    )
    assert one == two and [s.index for s in one] == [0, 1, 2, 3]
    names = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert names == [match_file(r, 2, i) for i in range(4)]
    for n in names:
        assert (tmp_path / "one" / n).read_bytes() == (tmp_path / "two" / n).read_bytes()


def test_written_matches_are_sealed_and_pass_the_full_audit(tmp_path: Path) -> None:
    seen: list[int] = []
    summaries = simulate_many(
        preset("biriba"), 3, 2, seed="a", out_dir=tmp_path, on_match=lambda s: seen.append(s.index)
    )
    assert sorted(seen) == [0, 1]
    for s in summaries:
        path = tmp_path / match_file(preset("biriba"), 3, s.index)
        info = verify(path)
        assert info.sealed and info.events == s.events
        events = read_events(path)
        assert summarize(events, s.index) == s
        verdict = audit.audit_log(path)
        assert verdict.ok, verdict.findings


def test_rewriting_a_match_replaces_the_file(tmp_path: Path) -> None:
    r = preset("classic")
    simulate_many(r, 2, 1, seed="w", out_dir=tmp_path)
    first = (tmp_path / match_file(r, 2, 0)).read_bytes()
    simulate_many(r, 2, 1, seed="w", out_dir=tmp_path)
    assert (tmp_path / match_file(r, 2, 0)).read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == [match_file(r, 2, 0)]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "players"), CASES)
def test_all_random_tables_finish_under_every_preset(name: str, players: int) -> None:
    for i in range(3):
        events = simulate_match(preset(name), players, seed="random", index=i, bots=["random"])
        assert_finished_and_replays(events, players)


def test_encoded_matches_are_the_bytes_the_log_writer_writes(tmp_path: Path) -> None:
    events = simulate_match(preset("classic"), 3, seed="bytes")
    write_log(tmp_path / "a.blog", events, validate=False)
    assert (tmp_path / "a.blog").read_bytes() == encode_match(events)
    # Longer than one segment: the framing splits every BATCH_EVENTS events.
    long = [msgspec.structs.replace(e, seq=i) for i, e in enumerate(events * 40)]
    assert len(long) > BATCH_EVENTS
    write_log(tmp_path / "b.blog", long, validate=False)
    assert (tmp_path / "b.blog").read_bytes() == encode_match(long)


def test_an_interrupted_write_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import buraco_log.simulate as simulate

    events = simulate_match(preset("thirteen-quick"), 2, seed="t", index=0)

    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(simulate.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        simulate.write_match(tmp_path / "m.blog", events)
    assert list(tmp_path.iterdir()) == []


def test_stopped_workers_leave_no_temporary_file(tmp_path: Path) -> None:
    """Workers stopped mid-write (a SIGINT) cannot clean up after themselves: the run removes
    its own unfinished logs, and nobody else's files."""
    r = preset("thirteen-quick")
    leftover = tmp_path / (match_file(r, 2, 7) + ".tmp")  # as a terminated worker leaves it
    other = tmp_path / "notes.blog.tmp"
    seen: list[int] = []

    def stop(summary: object) -> None:
        seen.append(1)
        leftover.write_bytes(b"half a log")
        other.write_bytes(b"not ours")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        simulate_many(r, 2, 40, seed="t", out_dir=tmp_path, jobs=2, on_match=stop)
    assert seen == [1]
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "notes.blog.tmp" in names and not leftover.exists()
    assert all(n.endswith(".blog") for n in names if n != "notes.blog.tmp"), names
