"""The writer: one per log, durable appends, batched mode, validation, failures reported."""

from __future__ import annotations

import errno
import multiprocessing
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import IllegalMoveError, LogFormatError
from tests.log.samples import match_events, sample_events, write


def test_events_read_back_equal_what_was_appended(tmp_path: Path) -> None:
    events = sample_events(50)
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False) as w:
        for e in events[:10]:
            assert w.append(e) == e.seq
        assert w.append_many(events[10:30]) == 29
    with log.Writer(path, validate=False, batched=True, batch_events=8) as w:
        assert w.next_seq == 30
        for e in events[30:]:
            w.append(e)
    assert log.read_events(path) == events
    info = log.verify(path)
    assert info.events == 50 and info.sealed and info.torn is None


def test_the_head_digest_does_not_depend_on_how_events_were_grouped(tmp_path: Path) -> None:
    events = sample_events(40)
    a = write(tmp_path / "a.blog", events, mode="durable")
    b = write(tmp_path / "b.blog", events, mode="batched")
    assert log.verify(a).segments == 40 and log.verify(b).segments < 40
    assert log.verify(a).head == log.verify(b).head == log.head_digest(events)


def test_seal_adds_the_chain_to_an_unsealed_log_and_keeps_its_head(tmp_path: Path) -> None:
    events = sample_events(30)
    path = write(tmp_path / "a.blog", events, sealed=False)
    before = log.verify(path)
    assert not before.sealed
    after = log.seal(path)
    assert after.sealed and after.head == before.head and after.segments == 1
    assert log.read_events(path) == events


def test_a_second_writer_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False):
        with pytest.raises(LogFormatError) as exc:
            log.Writer(path, validate=False)
        assert exc.value.kind == "locked"
        with pytest.raises(LogFormatError):
            log.seal(path)
        with pytest.raises(LogFormatError):
            log.repair(path)
    log.Writer(path, validate=False).close()  # released with the writer


def _race(path: str, barrier: Any, results: Any, hold: Any) -> None:
    barrier.wait()
    try:
        w = log.Writer(path, validate=False)
    except LogFormatError as exc:
        results.put(exc.kind)
        return
    results.put("won")
    hold.wait(5)
    w.close()


@pytest.mark.parametrize("exists", [False, True])
def test_two_writers_racing_for_one_log_exactly_one_wins(tmp_path: Path, exists: bool) -> None:
    ctx = multiprocessing.get_context("fork")
    for round_ in range(15):
        path = tmp_path / f"race{round_}.blog"
        if exists:
            log.Writer(path, validate=False).close()
        barrier, results, hold = ctx.Barrier(2), ctx.Queue(), ctx.Event()
        procs = [
            ctx.Process(target=_race, args=(str(path), barrier, results, hold)) for _ in range(2)
        ]
        for p in procs:
            p.start()
        outcomes = sorted(results.get(timeout=10) for _ in procs)
        hold.set()
        for p in procs:
            p.join(10)
        results.close()
        assert outcomes == ["locked", "won"], outcomes
        assert log.verify(path).events == 0


def test_creating_a_log_fsyncs_its_directory(tmp_path: Path, monkeypatch: Any) -> None:
    synced: list[str] = []
    real = log._fsync_dir

    def spy(path: str) -> None:
        synced.append(path)
        real(path)

    monkeypatch.setattr(log, "_fsync_dir", spy)
    log.Writer(tmp_path / "a.blog", validate=False).close()
    assert synced == [str(tmp_path / "a.blog")]


def test_a_failed_fsync_is_reported_and_never_retried(tmp_path: Path, monkeypatch: Any) -> None:
    events = sample_events(5)
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False)
    w.append(events[0])
    calls: list[int] = []

    def failing(fd: int) -> None:
        calls.append(fd)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(LogFormatError) as exc:
        w.append(events[1])
    assert exc.value.kind == "io" and "fsync failed" in str(exc.value)
    with pytest.raises(LogFormatError) as again:
        w.append(events[2])
    assert "fsync failed" in str(again.value)
    w.close()
    assert len(calls) == 1  # no retry, not even at close
    monkeypatch.undo()
    assert log.read_events(path)[:1] == events[:1]


def test_an_event_with_the_wrong_seq_is_refused(tmp_path: Path) -> None:
    events = sample_events(3)
    with log.Writer(tmp_path / "a.blog", validate=False) as w:
        w.append(events[0])
        with pytest.raises(LogFormatError) as exc:
            w.append(events[2])
        assert exc.value.seq == 2 and "expected 1" in str(exc.value)


def test_a_writer_refuses_a_log_with_a_torn_tail_until_it_is_repaired(tmp_path: Path) -> None:
    events = sample_events(10)
    path = write(tmp_path / "a.blog", events)
    data = path.read_bytes()
    path.write_bytes(data[:-5])
    with pytest.raises(LogFormatError) as exc:
        log.Writer(path, validate=False)
    assert exc.value.kind == "torn" and exc.value.seq == 9
    report = log.repair(path)
    assert report is not None and report.events_kept == 9 and report.cut_bytes > 0
    # the backup holds exactly the bytes cut off: log + backup is the file before the repair
    assert report.backup is not None
    assert path.read_bytes() + Path(report.backup).read_bytes() == data[:-5]
    assert len(Path(report.backup).read_bytes()) == report.cut_bytes
    assert log.repair(path) is None
    with log.Writer(path, validate=False) as w:
        w.append(events[9])
    assert log.read_events(path) == events


def test_repair_refuses_damage_in_the_middle(tmp_path: Path) -> None:
    path = write(tmp_path / "a.blog", sample_events(10))
    data = bytearray(path.read_bytes())
    data[200] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(LogFormatError) as exc:
        log.repair(path)
    assert exc.value.kind == "damage" and path.read_bytes() == bytes(data)


def test_batched_events_are_durable_only_after_flush(tmp_path: Path) -> None:
    events = sample_events(10)
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False, batched=True, batch_events=100)
    for e in events:
        w.append(e)
    assert log.read_events(path) == []
    w.flush()
    assert log.read_events(path) == events
    w.close()


def test_follow_yields_events_as_they_are_written(tmp_path: Path) -> None:
    events = [*sample_events(30), ev.MatchEnded(seq=30)]
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False)

    def produce() -> None:
        for e in events:
            w.append(e)
        w.close()

    with log.Reader(path) as reader:
        t = threading.Thread(target=produce)
        t.start()
        got = list(reader.follow(poll=0.005, idle_timeout=10))
        t.join()
    assert got == events


def test_follow_waits_on_a_partial_last_record_while_a_writer_holds_the_lock(
        tmp_path: Path) -> None:
    events = sample_events(6)
    path = write(tmp_path / "a.blog", events)
    data = path.read_bytes()
    path.write_bytes(data[:-4])
    with log.LogLock(path), log.Reader(path) as reader:
        assert list(reader.follow(poll=0.001, idle_timeout=0.05)) == events[:5]
        with open(path, "ab") as f:
            f.write(data[-4:])
        assert list(reader.follow(poll=0.001, idle_timeout=0.05)) == events[5:]


def test_the_writer_validates_every_event_by_default(tmp_path: Path) -> None:
    match = list(match_events())
    path = tmp_path / "a.blog"
    with log.Writer(path) as w:
        w.append_many(match[:20])
    bad = ev.CardDrawn(seat=0, card=1, seq=20)  # not this seat's turn, or not the top card
    with log.Writer(path) as w:  # reopening replays the log to know the state
        with pytest.raises(IllegalMoveError) as exc:
            w.append(bad)
        assert exc.value.seq == 20
        w.append_many(match[20:])
    assert log.read_events(path) == match


def test_recording_without_validation_keeps_illegal_moves_for_the_audit(tmp_path: Path) -> None:
    match = list(match_events())
    illegal = ev.CardDrawn(seat=0, card=1, seq=5)
    events = [*match[:5], illegal]
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False) as w:
        w.append_many(events)
    assert log.read_events(path) == events
    from buraco_log.reducer import Replayer

    r = Replayer()
    with pytest.raises(IllegalMoveError) as exc:
        for e in log.read_events(path):
            r.step(e)
    assert exc.value.seq == 5
    with pytest.raises(IllegalMoveError):
        log.Writer(path)  # a validating writer cannot continue after an illegal move


def test_a_whole_simulated_match_round_trips(tmp_path: Path) -> None:
    match = list(match_events("another", 4))
    path = tmp_path / "m.blog"
    info = log.write_log(path, match)
    assert info.events == len(match)
    assert log.read_events(path) == match
    with pytest.raises(LogFormatError):
        log.write_log(path, match)
    os.unlink(path)


def test_events_accepted_before_an_exception_are_still_written(tmp_path: Path) -> None:
    events = sample_events(5)
    path = tmp_path / "a.blog"
    with pytest.raises(LogFormatError), log.Writer(path, validate=False, batched=True) as w:
        w.append_many(events[:3])
        w.append(events[4])  # wrong seq
    assert log.read_events(path) == events[:3]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".new")]


def test_iter_events_streams_and_closes(tmp_path: Path) -> None:
    events = sample_events(25)
    path = write(tmp_path / "a.blog", events, mode="batched")
    it = log.iter_events(path)
    assert next(it) == events[0]
    it.close()  # abandoned early: the file is closed, no ResourceWarning
    assert list(log.iter_events(path)) == events


@pytest.mark.parametrize("sealed", [True, False])
def test_encode_log_gives_the_bytes_write_log_writes(tmp_path: Path, sealed: bool) -> None:
    events = sample_events(40)
    log.write_log(tmp_path / "a.blog", events, sealed=sealed, validate=False)
    assert log.encode_log(events, sealed=sealed) == (tmp_path / "a.blog").read_bytes()
    small = log.encode_log(events, batch_events=7)
    (tmp_path / "b.blog").write_bytes(small)
    assert log.read_events(tmp_path / "b.blog") == events
    with pytest.raises(LogFormatError) as exc:
        log.encode_log(events[1:])
    assert exc.value.seq == 1
