"""The recorder: validation, exact acknowledgement, group commit, bounded handles, restarts."""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import IllegalMoveError, LogFormatError
from buraco_log.recorder import SAVED_NAME, FileOps, Recorder, sweep_temporaries
from buraco_log.reducer import Replayer
from buraco_log.state import State
from tests.recorder.powerloss import PowerLossOps, restore
from tests.recorder.sources import matches, on_disk, source_of

ROOT = Path(__file__).resolve().parents[2]


def _logs(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.suffix == ".blog")


def test_an_appended_event_is_on_disk_when_append_returns(tmp_path: Path) -> None:
    events = matches()[0]
    with Recorder(tmp_path) as rec:
        for event in events[:30]:
            assert rec.append("m1", event) == event.seq
            assert len(on_disk(str(tmp_path / "m1.blog"))) == event.seq + 1
    assert log.read_events(tmp_path / "m1.blog") == list(events[:30])
    assert log.verify(tmp_path / "m1.blog").head == log.head_digest(events[:30])


def test_an_illegal_move_is_refused_at_once_and_changes_nothing(tmp_path: Path) -> None:
    a, b = matches()[0], matches()[2]
    with Recorder(tmp_path) as rec:
        for event in a[:5]:
            rec.append("m", event)
        bad = b[5]  # a move of another match: not legal here
        assert bad.seq == 5
        with pytest.raises(IllegalMoveError):
            rec.append("m", bad)
        with pytest.raises(LogFormatError) as info:
            rec.append("m", a[7])  # skips seq 6
        assert info.value.kind == "seq"
        assert rec.append("m", a[5]) == 5  # the table goes on from where it was
    assert log.read_events(tmp_path / "m.blog") == list(a[:6])


def test_unvalidated_recording_still_checks_the_seq(tmp_path: Path) -> None:
    a = matches()[0]
    with Recorder(tmp_path, validate=False) as rec:
        rec.append("m", a[0])
        with pytest.raises(LogFormatError):
            rec.append("m", a[2])
        rec.append("m", matches()[2][1])  # not legal, but recorded as it happened
    assert len(on_disk(str(tmp_path / "m.blog"))) == 2


def test_a_match_name_that_is_not_a_plain_file_name_is_refused(tmp_path: Path) -> None:
    with Recorder(tmp_path) as rec:
        for name in ("../x", ".hidden", "a/b", "", "x" * 300):
            with pytest.raises(LogFormatError):
                rec.append(name, matches()[0][0])
    assert _logs(tmp_path) == []


def test_appends_of_many_tables_share_one_round_of_fsyncs(tmp_path: Path) -> None:
    sources = matches()
    with Recorder(tmp_path, window=0.005) as rec:
        for i in range(60):
            rec.append(f"t{i}", sources[i % 6][0])  # creates the logs
        before = rec.stats()
        futures = [rec.submit(f"t{i}", sources[i % 6][1]) for i in range(60)]
        assert [f.result() for f in futures] == [1] * 60
        after = rec.stats()
    assert after.events - before.events == 60
    assert after.rounds - before.rounds <= 3  # not one round per event
    assert after.fsyncs - before.fsyncs == 60  # one per file touched, none per event more


def test_a_table_waits_for_its_earlier_events_in_one_segment(tmp_path: Path) -> None:
    events = matches()[1]
    with Recorder(tmp_path, window=0.01) as rec:
        futures = [rec.submit("m", e) for e in events[:40]]
        assert [f.result() for f in futures] == list(range(40))
    info = log.verify(tmp_path / "m.blog")
    assert info.events == 40 and info.segments < 40


def test_a_restart_continues_every_match_where_it_stopped(tmp_path: Path) -> None:
    sources = matches()
    with Recorder(tmp_path) as rec:
        for i in range(8):
            for event in sources[i % 6][: 10 + i]:
                rec.append(f"t{i}", event)
    with Recorder(tmp_path) as rec:
        for i in range(8):
            assert rec.next_seq(f"t{i}") == 10 + i
            rec.append(f"t{i}", sources[i % 6][10 + i])
        assert rec.stats().loaded == 8
    for i in range(8):
        assert log.read_events(tmp_path / f"t{i}.blog") == list(sources[i % 6][: 11 + i])


def _state_after(events: Sequence[ev.AnyEvent]) -> State:
    r = Replayer()
    r.run(events)
    return r.state()


def test_a_restart_loads_each_match_from_its_saved_state_and_replays_only_what_followed(
    tmp_path: Path,
) -> None:
    """The states saved by a periodic save (here: the file as an earlier save left it), then
    more events, then a crash: each match loads from its state and the events after it."""
    sources = matches()
    with Recorder(tmp_path, save_every=0) as rec:
        for i in range(6):
            for event in sources[i][: 20 + i]:
                rec.append(f"t{i}", event)
    saved = (tmp_path / SAVED_NAME).read_bytes()  # what the last save before the crash wrote
    with Recorder(tmp_path, save_every=0) as rec:
        for i in range(6):
            for event in sources[i][20 + i : 30 + i]:  # recorded after that save
                rec.append(f"t{i}", event)
    (tmp_path / SAVED_NAME).write_bytes(saved)
    with Recorder(tmp_path, save_every=0) as rec:
        for i in range(6):
            assert rec.next_seq(f"t{i}") == 30 + i
        stats = rec.stats()
        assert stats.loaded == 6 and stats.resumed == 6
        for i in range(6):  # the rules engine stands exactly where a full replay leaves it
            assert rec._tables[f"t{i}"].validator.state() == _state_after(sources[i][: 30 + i])
        with pytest.raises(IllegalMoveError):
            rec.append("t0", replace(sources[2][30], seq=30))  # another match's move
        assert rec.append("t0", sources[0][30]) == 30
    for i in range(6):
        events = sources[i][: 31 if i == 0 else 30 + i]
        assert log.read_events(tmp_path / f"t{i}.blog") == list(events)
        assert log.verify(tmp_path / f"t{i}.blog").head == log.head_digest(events)


def test_a_saved_state_that_does_not_describe_its_log_is_not_used(tmp_path: Path) -> None:
    sources = matches()
    with Recorder(tmp_path, save_every=0) as rec:
        for i in range(3):
            for event in sources[i][:25]:
                rec.append(f"t{i}", event)
    # t0: another match's 25 events under its name (the file system may even give the new
    # file the old inode); t1: cut back to its first 20 events; t2 untouched.
    for name, events in (("t0", sources[3][:25]), ("t1", sources[1][:20])):
        (tmp_path / f"{name}.blog").unlink()
        log.write_log(tmp_path / f"{name}.blog", events)
    with Recorder(tmp_path, save_every=0) as rec:
        assert [rec.next_seq(f"t{i}") for i in range(3)] == [25, 20, 25]
        assert rec.stats().resumed == 1  # t2 only; the others were read from their start
        assert rec._tables["t0"].validator.state() == _state_after(sources[3][:25])
        assert rec.append("t1", sources[1][20]) == 20
    saved = msgspec.msgpack.decode((tmp_path / SAVED_NAME).read_bytes())
    saved["engine"] = "0.1.0 " + saved["engine"].split(" ", 1)[1]  # another engine's states
    (tmp_path / SAVED_NAME).write_bytes(msgspec.msgpack.encode(saved))
    with Recorder(tmp_path, save_every=0) as rec:
        assert rec.next_seq("t2") == 25 and rec.stats().resumed == 0
    (tmp_path / SAVED_NAME).write_bytes(b"\x93garbage")  # unreadable: ignored
    with Recorder(tmp_path, save_every=0) as rec:
        assert rec.next_seq("t2") == 25 and rec.stats().resumed == 0
    with Recorder(tmp_path, save_every=0) as rec:  # the last close saved them again
        assert rec.next_seq("t2") == 25 and rec.stats().resumed == 1


def _play_in_threads(rec: Recorder, play: Callable[[list[str]], None], names: list[str]) -> None:
    """``play`` a quarter of ``names`` in each of 4 threads; its failures fail the test."""
    errors: list[BaseException] = []

    def run(mine: list[str]) -> None:
        try:
            play(mine)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(names[k::4],)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "appends never acknowledged"
    assert rec._committer.is_alive()
    if errors:
        raise errors[0]


def test_matches_loading_from_saved_states_while_the_committer_saves_them(
    tmp_path: Path,
) -> None:
    """Threads take entries out of the saved states as their matches load while the committer
    saves after every round: the committer once died of that ("dictionary changed size during
    iteration") and every later append waited forever."""
    sources = matches()
    names = [f"t{i}" for i in range(60)]
    with Recorder(tmp_path, save_every=0) as rec:
        for name in names:
            for event in source_of(name, sources)[:12]:
                rec.append(name, event)
    with Recorder(tmp_path, save_every=1e-6) as rec:

        def play(mine: list[str]) -> None:
            for name in mine:
                rec.submit(name, source_of(name, sources)[12]).result(timeout=60)

        _play_in_threads(rec, play, names)
        stats = rec.stats()
        assert stats.resumed == 60 and stats.saves > 0


def test_states_saved_in_the_background_while_tables_play_each_resume_exactly(
    tmp_path: Path,
) -> None:
    """The periodic save runs in its own thread while appends and rounds go on. The file one
    such save wrote (taken mid-play, not the one close writes) must let every match it lists
    resume: each entry's file size, event count, chain head and rules state belong together."""
    sources = matches()
    names = [f"t{i}" for i in range(40)]
    with Recorder(tmp_path, save_every=1e-6) as rec:
        for name in names:
            rec.append(name, source_of(name, sources)[0])
        snapshot: list[bytes] = []

        def play(mine: list[str]) -> None:
            for k in range(1, 40):
                for name in mine:
                    rec.submit(name, source_of(name, sources)[k]).result(timeout=60)
                if k == 20 and rec.stats().saves:
                    snapshot.append((tmp_path / SAVED_NAME).read_bytes())

        _play_in_threads(rec, play, names)
        assert rec._saving is not None  # the periodic saves went to the saving thread
    assert snapshot, "no save had finished by the middle of the play"
    listed = msgspec.msgpack.decode(snapshot[0])["tables"]
    assert listed, "no table was saved mid-play"
    (tmp_path / SAVED_NAME).write_bytes(snapshot[0])
    with Recorder(tmp_path, save_every=0) as rec:
        for name in names:
            assert rec.next_seq(name) == 40
            assert rec._tables[name].validator.state() == _state_after(
                source_of(name, sources)[:40])
        assert rec.stats().resumed == len(listed)

def test_the_states_are_saved_every_save_every_seconds(tmp_path: Path) -> None:
    events = matches()[0]
    with Recorder(tmp_path, save_every=0.01) as rec:
        rec.append("m", events[0])
        time.sleep(0.05)
        rec.append("m", events[1])  # the round after the interval saves, once it has acked
        deadline = time.monotonic() + 10
        while rec.stats().saves < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert rec.stats().saves >= 1 and (tmp_path / SAVED_NAME).exists()


def test_a_second_recorder_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    with Recorder(tmp_path), pytest.raises(LogFormatError) as info:
        Recorder(tmp_path)
    assert info.value.kind == "locked"


def test_a_log_held_by_a_writer_is_refused_and_left_alone(tmp_path: Path) -> None:
    events = matches()[0]
    log.write_log(tmp_path / "m.blog", events[:3])
    with log.Writer(tmp_path / "m.blog") as writer, Recorder(tmp_path) as rec:
        with pytest.raises(LogFormatError) as info:
            rec.append("m", events[3])
        assert info.value.kind == "locked"
        writer.append(events[3])
    assert len(on_disk(str(tmp_path / "m.blog"))) == 4


def test_handles_stay_under_the_limit_and_idle_logs_are_reopened(tmp_path: Path) -> None:
    sources = matches()
    fds_before = len(os.listdir("/proc/self/fd"))
    with Recorder(tmp_path, max_open=40, window=0.001) as rec:
        for step in range(3):
            futures = [rec.submit(f"t{i}", sources[i % 6][step]) for i in range(150)]
            for f in futures:
                f.result()
            assert len(os.listdir("/proc/self/fd")) - fds_before <= 40
        stats = rec.stats()
    assert stats.max_open_handles <= 40 - 18
    assert stats.reopened > 0 and stats.closed_idle > 0
    for i in range(150):
        assert log.read_events(tmp_path / f"t{i}.blog") == list(sources[i % 6][:3])


def test_an_idle_log_closes_after_the_idle_timeout(tmp_path: Path) -> None:
    with Recorder(tmp_path, idle_timeout=0.05) as rec:
        rec.append("m", matches()[0][0])
        deadline = 100
        while rec.stats().open_handles and deadline:
            threading.Event().wait(0.02)
            deadline -= 1
        assert rec.stats().open_handles == 0
        rec.append("m", matches()[0][1])  # reopened on its next move
        assert rec.stats().reopened == 1


def test_a_log_sealed_while_closed_is_adopted_and_a_foreign_append_refuses_the_move(
    tmp_path: Path,
) -> None:
    a, b = matches()[0], matches()[1]
    with Recorder(tmp_path, sealed=False, idle_timeout=0.01) as rec:
        for event in a[:5]:
            rec.append("a", event)
        for event in b[:5]:
            rec.append("b", event)
        while rec.stats().open_handles:
            threading.Event().wait(0.01)
        log.seal(tmp_path / "a.blog")  # same events, new file: the recorder goes on
        with log.Writer(tmp_path / "b.blog") as w:  # another program appends: refused
            w.append(b[5])
        assert rec.append("a", a[5]) == 5
        with pytest.raises(LogFormatError) as info:
            rec.append("b", b[5])
        assert "changed while the recorder had it closed" in str(info.value)
        # Nothing was written: the match is read again from its log as the other program
        # left it, so the next move is the one after that program's.
        assert rec.next_seq("b") == 6
        assert rec.append("b", b[6]) == 6
    info_a = log.verify(tmp_path / "a.blog")
    assert info_a.sealed and info_a.events == 6 and info_a.head == log.head_digest(a[:6])


def test_an_append_to_a_log_replaced_behind_the_lock_is_not_acknowledged(
    tmp_path: Path,
) -> None:
    a = matches()[0]
    with Recorder(tmp_path) as rec:
        rec.append("m", a[0])
        copy = tmp_path / "copy"
        copy.write_bytes((tmp_path / "m.blog").read_bytes())
        os.replace(copy, tmp_path / "m.blog")  # a program that ignores the writer lock
        with pytest.raises(LogFormatError) as info:
            rec.append("m", a[1])
        assert "replaced or removed" in str(info.value)
    assert len(on_disk(str(tmp_path / "m.blog"))) == 1


def test_an_integer_outside_int64_is_refused_with_kind_range(tmp_path: Path) -> None:
    import msgspec

    first = msgspec.structs.replace(matches()[0][0], first_dealer=2**64)
    with Recorder(tmp_path, validate=False) as rec:
        with pytest.raises(LogFormatError) as info:
            rec.append("m", first)
        assert info.value.kind == "range"
        rec.append("m", matches()[0][0])  # nothing was taken: seq 0 is still expected
    assert len(on_disk(str(tmp_path / "m.blog"))) == 1


def test_an_ended_match_is_forgotten_once_durable(tmp_path: Path) -> None:
    events = matches()[1]
    with Recorder(tmp_path, validate=False) as rec:
        futures = [rec.submit("m", e) for e in events]
        futures[-1].result()
        rec.flush()
        assert rec.stats().open_handles == 0
        assert "m" not in rec._tables
    assert log.read_events(tmp_path / "m.blog") == list(events)


def test_syncfs_mode_acknowledges_with_one_sync_per_round(tmp_path: Path) -> None:
    sources = matches()
    with Recorder(tmp_path, sync="syncfs", window=0.005) as rec:
        for i in range(30):
            rec.append(f"t{i}", sources[i % 6][0])
        before = rec.stats()
        futures = [rec.submit(f"t{i}", sources[i % 6][1]) for i in range(30)]
        assert [f.result() for f in futures] == [1] * 30
        after = rec.stats()
    assert after.fsyncs == 0 and after.syncfs - before.syncfs == after.rounds - before.rounds
    assert after.rounds - before.rounds <= 3
    with pytest.raises(ValueError):
        Recorder(tmp_path, sync="never")


def test_a_failed_syncfs_refuses_every_match_of_its_round(tmp_path: Path) -> None:
    class FailSyncfs(FileOps):
        fail = False

        def syncfs(self, fd: int) -> None:
            if self.fail:
                raise OSError(errno.EIO, "Input/output error")
            super().syncfs(fd)

    ops = FailSyncfs()
    a, b = matches()[0], matches()[1]
    with Recorder(tmp_path, ops=ops, sync="syncfs", window=0.01) as rec:
        rec.append("a", a[0])
        rec.append("b", b[0])
        ops.fail = True
        fa, fb = rec.submit("a", a[1]), rec.submit("b", b[1])
        for f in (fa, fb):
            with pytest.raises(LogFormatError):
                f.result()
        ops.fail = False
        with pytest.raises(LogFormatError):
            rec.append("a", a[2])
        rec.append("c", a[0])  # a match not in that round goes on


def test_a_failed_fsync_fails_that_table_only_and_is_never_retried(tmp_path: Path) -> None:
    class FailOne(FileOps):
        target: int | None = None

        def fsync(self, fd: int) -> None:
            if os.fstat(fd).st_ino == self.target:
                raise OSError(errno.EIO, "Input/output error")
            os.fsync(fd)

    ops = FailOne()
    a, b = matches()[0], matches()[1]
    with Recorder(tmp_path, ops=ops) as rec:
        rec.append("a", a[0])
        rec.append("b", b[0])
        ops.target = os.stat(tmp_path / "a.blog").st_ino
        fa, fb = rec.submit("a", a[1]), rec.submit("b", b[1])
        with pytest.raises(LogFormatError) as info:
            fa.result()
        assert info.value.kind == "io" and "fsync failed" in str(info.value)
        assert fb.result() == 1
        ops.target = None
        with pytest.raises(LogFormatError):
            rec.append("a", a[2])
        assert rec.stats().failed == 1


def test_a_failure_to_create_leaves_no_log_and_the_match_can_start_again(
    tmp_path: Path,
) -> None:
    code = f"""
import os, resource, sys
sys.path.insert(0, {str(ROOT)!r})
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches
first = matches()[0][0]
rec = Recorder(sys.argv[1], max_open=200)
held = []
while True:  # use up the descriptors the process may open
    try:
        held.append(os.open('/dev/null', os.O_RDONLY))
    except OSError:
        break
failed = 0
for i in range(20):
    try:
        rec.append(f"t{{i}}", first)
    except LogFormatError as exc:
        assert exc.kind == "io", exc
        failed += 1
for fd in held:
    os.close(fd)
rec.append("t0", first)  # descriptors are back: the match starts afresh
rec.close()
print(failed)
"""
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert int(out.stdout) == 20
    assert _logs(tmp_path) == ["t0.blog"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".new")] == []
    assert len(on_disk(str(tmp_path / "t0.blog"))) == 1


@pytest.mark.parametrize(
    "tables", [2000, pytest.param(10000, marks=pytest.mark.slow)], ids=["2000", "10000"]
)
def test_thousands_of_tables_run_under_a_soft_limit_of_1024(tmp_path: Path, tables: int) -> None:
    code = f"""
import os, resource, sys
sys.path.insert(0, {str(ROOT)!r})
resource.setrlimit(resource.RLIMIT_NOFILE, (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, source_of
sources = matches()
with Recorder(sys.argv[1], window=0.002) as rec:
    for step in range(2):
        names = [f"t{{i}}" for i in range({tables})]
        futures = [rec.submit(n, source_of(n, sources)[step]) for n in names]
        for f in futures:
            f.result()
    s = rec.stats()
print(s.events, s.failed, s.max_open_handles, len(os.listdir('/proc/self/fd')))
"""
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    events, failed, most, _ = map(int, out.stdout.split())
    assert (events, failed) == (2 * tables, 0)
    assert most <= 512
    names = _logs(tmp_path)
    assert len(names) == tables
    sources = matches()
    for name in random.Random(1).sample(names, 50):
        assert log.read_events(tmp_path / name) == list(source_of(name[:-5], sources)[:2])


def test_a_restart_sweeps_the_temporary_files_a_crash_left(tmp_path: Path) -> None:
    stale = tmp_path / ".m.blog.0123456789ab.new"
    stale.write_bytes(b"BURACOLG")
    live = tmp_path / ".n.blog.ba9876543210.new"
    live.write_bytes(b"")
    other = tmp_path / ".notes.txt"
    other.write_bytes(b"keep")
    with open(live, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # a writer is still creating this one
        with Recorder(tmp_path) as rec:
            assert rec.stats().swept == 1
        assert not stale.exists() and live.exists() and other.exists()
    assert sweep_temporaries(tmp_path) == [str(live)]


def test_a_torn_tail_left_by_a_crash_is_cut_on_first_use(tmp_path: Path) -> None:
    events = matches()[0]
    with Recorder(tmp_path) as rec:
        for event in events[:6]:
            rec.append("m", event)
    with open(tmp_path / "m.blog", "ab") as f:
        f.write(b"\x40\x00\x00")  # the start of a segment the crash cut short
    with Recorder(tmp_path) as rec:
        assert rec.append("m", events[6]) == 6
        assert rec.stats().torn_cut == 1
    assert log.read_events(tmp_path / "m.blog") == list(events[:7])


def test_the_asyncio_api_acknowledges_after_the_write(tmp_path: Path) -> None:
    sources = matches()

    async def table(rec: Recorder, name: str) -> int:
        for event in source_of(name, sources)[:20]:
            seq = await rec.append_async(name, event)
            assert len(on_disk(str(tmp_path / f"{name}.blog"))) > seq
        return seq

    async def main(rec: Recorder) -> list[int]:
        return await asyncio.gather(*(table(rec, f"t{i}") for i in range(12)))

    with Recorder(tmp_path) as rec:
        assert asyncio.run(main(rec)) == [19] * 12
        assert rec.stats().rounds < 12 * 20


def _power_loss_round(tmp_path: Path, rng: random.Random, run: int) -> tuple[int, int]:
    """Record from several threads, cut the power at a random moment, check every acked
    event survived, then restart on the image. Returns (acked, events kept)."""
    sources = matches()
    ops = PowerLossOps(str(tmp_path))
    acked: list[tuple[str, int]] = []
    stop = threading.Event()
    rec = Recorder(
        tmp_path,
        ops=ops,
        window=rng.choice([0.0, 0.001, 0.003]),
        max_open=30,
        sync=(sync := rng.choice(["fsync", "syncfs", "journal"])),
        save_every=rng.choice([0.0, 0.01]),  # states saved every round after 10 ms, or never
        checkpoint_every=rng.choice([0.0, 0.02, 60.0]),  # journal retired every round, or not
    )
    names = [f"p{run}-{i}" if rng.random() < 0.3 else f"t{i}" for i in range(16)]

    def player(mine: list[str]) -> None:
        while not stop.is_set():
            futures = []
            for name in mine:
                src = source_of(name, sources)
                seq = rec.next_seq(name)
                if seq < len(src):
                    futures.append((name, rec.submit(name, src[seq])))
            if not futures:
                return
            for name, future in futures:
                acked.append((name, future.result()))

    threads = [threading.Thread(target=player, args=(names[k::4],)) for k in range(4)]
    for t in threads:
        t.start()
    threading.Event().wait(rng.uniform(0.005, 0.15))
    seen = len(acked)  # everything acked before this line must survive
    image = ops.image(rng)
    stop.set()
    for t in threads:
        t.join()
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)
    if sync == "journal":  # acked events may be only in the journal: a restart writes them back
        Recorder(tmp_path).close()
    lost = 0
    for name, seq in acked[:seen]:
        path = tmp_path / f"{name}.blog"
        kept = on_disk(str(path)) if path.exists() else []
        lost += len(kept) <= seq
        assert kept == list(source_of(name, sources)[: len(kept)])
    assert lost == 0
    with Recorder(tmp_path) as again:  # and the restart goes on from the image
        for name in set(names):
            src = source_of(name, sources)
            seq = again.next_seq(name)
            if seq < len(src):
                again.append(name, src[seq])
    return seen, sum(len(on_disk(str(p))) for p in tmp_path.glob("*.blog"))


def _acked_lost_after_power_loss(directory: Path, ops: PowerLossOps, sync: str = "fsync") -> int:
    """Record 3 events on each of 4 new tables (every append acknowledged), cut the power at
    the worst moment the layer allows, and count the acknowledged events the image lacks."""
    sources = matches()
    names = [f"t{i}" for i in range(4)]
    with Recorder(directory, ops=ops, sync=sync) as rec:
        for step in range(3):
            for name in names:
                assert rec.append(name, source_of(name, sources)[step]) == step
        image = ops.image()
    restore(str(directory), image, ops.imaged_names)
    Recorder(directory).close()  # a restart: the journal, if any, is written back
    lost = 0
    for name in names:
        try:
            kept = len(on_disk(str(directory / f"{name}.blog")))
        except (FileNotFoundError, LogFormatError):
            kept = 0
        lost += 3 - min(3, kept)
    return lost


def test_the_power_loss_layer_catches_a_recorder_that_skips_a_file_or_directory_fsync(
    tmp_path: Path,
) -> None:
    class NoFileFsync(PowerLossOps):
        def fsync(self, fd: int) -> None:
            pass

    class NoDirectoryFsync(PowerLossOps):
        def fsync_dir(self, fd: int) -> None:
            pass

    class NoDatasync(PowerLossOps):
        def datasync(self, fd: int) -> None:
            pass

    cases = [(PowerLossOps, "fsync", 0), (NoFileFsync, "fsync", 12),
             (NoDirectoryFsync, "fsync", 12), (PowerLossOps, "journal", 0),
             (NoDatasync, "journal", 12)]
    for i, (layer, sync, expected) in enumerate(cases):
        directory = tmp_path / str(i)
        directory.mkdir()
        lost = _acked_lost_after_power_loss(directory, layer(str(directory)), sync)
        assert lost == expected, (layer.__name__, sync)


def test_the_power_loss_layer_never_shows_a_new_file_with_a_removed_files_bytes(
    tmp_path: Path,
) -> None:
    """A file system gives a removed file's inode number to the next file (ext4 at once); a
    disk never shows that file with the removed one's bytes. Known by its number alone, the
    layer imaged a log created under a retired journal's number as that journal (a CI run's
    "bad magic" at byte 0, the recorder's write-back then refusing another file's bytes)."""
    ops = PowerLossOps(str(tmp_path))
    dir_fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for i in range(20):
            old = tmp_path / f"journal{i}"
            with open(old, "w+b") as f:
                f.write(b"BURACOLJ journal bytes")
                f.flush()
                ops.fsync(f.fileno())
            renamed = tmp_path / f"kept{i}"
            os.rename(old, renamed)  # the same file under a new name keeps its bytes
            os.unlink(renamed)
            new = tmp_path / f"t{i}.blog"  # (ext4 gives it the removed file's number)
            new.write_bytes(b"BURACOLG not yet synced")
            ops.fsync_dir(dir_fd)
            assert ops.image()[new.name] == b"", i
            kept = tmp_path / f"renamed{i}"
            with open(kept, "w+b") as f:
                f.write(b"synced")
                f.flush()
                ops.fsync(f.fileno())
            os.rename(kept, tmp_path / f"final{i}")
            ops.fsync_dir(dir_fd)
            assert ops.image()[f"final{i}"] == b"synced"
    finally:
        os.close(dir_fd)


def test_a_simulated_power_loss_never_loses_an_acknowledged_event(tmp_path: Path) -> None:
    rng = random.Random(20)
    total = sum(_power_loss_round(tmp_path, rng, run)[0] for run in range(8))
    assert total > 0


@pytest.mark.slow
def test_power_losses_at_200_random_points(tmp_path: Path) -> None:
    rng = random.Random(200)
    total = sum(_power_loss_round(tmp_path, rng, run)[0] for run in range(200))
    assert total > 1000
