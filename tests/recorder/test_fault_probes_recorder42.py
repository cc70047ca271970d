"""Fault probes of the recorder, round 42: forget, a defect in a journal round's thread, an
interrupted close, and SIGKILL / EIO / ENOSPC at chosen moments.

``forget`` took effect at the commit thread's next round: meanwhile the forgotten table's log
stayed locked (a seal or repair was refused), and an append went into the forgotten table,
which lived on having let go of its match id (a second table took the id: two live tables of
one match). It now closes the log and drops the table before it returns.

A defect (an error other than ``OSError``) in a journal round's write thread skipped the
journal's fix-ups: every append of the round failed, and the journal kept the records of the
refused ones (never withdrawn), so a restart after a crash wrote them back.

``close`` interrupted by a signal handler's exception between its last two ``os.close`` calls
left ``_closed`` unset, and the next ``close`` closed the directory's descriptor number again,
by then another file's.

SIGKILL at the N-th write, sync, link or unlink of a recording process (in a round, a journal
rotation, a state save, or the restart's sweep and recovery, also one that writes a journal
back after a power loss), then a restart: every acknowledged event is in its log, once, and
every log reads whole.

A journal append cut short by a full disk (ENOSPC) left the round's first records whole before
the torn one; the appends were refused as "not recorded" and the logs cut back, but after a
crash the next recorder wrote those records back. The journal is now cut back too; also when
the failed append is the round's second one (for a log a seal rewrote while it was closed),
after the round's own records were synced. And a move of another table queued while the
failed round ran was acknowledged by the next round; it is refused now, as every later one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.scripts import ADOPTED_CHILD
from tests.recorder.sources import matches, on_disk

ROOT = Path(__file__).resolve().parents[2]
src = matches()[0]
other = matches()[1]


class _Interrupt(BaseException):
    """Stands for a signal handler's exception (KeyboardInterrupt, a timeout)."""


# -- forget takes effect before it returns -------------------------------------------------------

class _StalledSync(FileOps):
    """An fsync that waits while ``hold`` is clear, once armed: the committer is held in a
    round of another table meanwhile."""

    def __init__(self) -> None:
        self.armed = False
        self.entered = threading.Event()
        self.hold = threading.Event()

    def fsync(self, fd: int) -> None:
        if self.armed:
            self.armed = False
            self.entered.set()
            assert self.hold.wait(10)
        super().fsync(fd)


def test_forget_closes_the_log_and_frees_the_match_before_it_returns(tmp_path: Path) -> None:
    ops = _StalledSync()
    with Recorder(tmp_path, sync="fsync", ops=ops, unique_match_ids=True, save_every=0) as rec:
        for event in src[:5]:
            rec.append("a", event)
        rec.append("b", other[0])
        ops.armed = True
        held = rec.submit("b", other[1])  # the committer waits in this round's fsync
        assert ops.entered.wait(10)
        try:
            rec.forget("a")
            # the log is let go at once: a seal or repair of it is not refused as locked
            with log.LogLock(tmp_path / "a.blog"):
                pass
            loaded = rec.stats().loaded
            future = rec.submit("a", src[5])  # it went into the forgotten table
        finally:
            ops.hold.set()
        assert held.result(timeout=10) == 1
        assert future.result(timeout=10) == 5
        assert rec.stats().loaded == loaded + 1  # read again from its log
        with pytest.raises(LogFormatError) as caught:  # the reloaded table holds its id
            rec.append("c", src[0])
        assert caught.value.kind == "duplicate" and "'a'" in str(caught.value)
    assert on_disk(str(tmp_path / "a.blog")) == list(src[:6])
    assert not (tmp_path / "c.blog").exists()


def test_forget_waits_for_an_append_being_checked_and_then_drops_the_table(
        tmp_path: Path) -> None:
    with Recorder(tmp_path, sync="journal", save_every=0) as rec:
        for event in src[:4]:
            rec.append("a", event)
        table = rec._tables["a"]
        entered, go = threading.Event(), threading.Event()
        inner = table.validator

        class Held:
            def step(self, event: Any) -> None:
                entered.set()
                assert go.wait(10)
                inner.step(event)

            def __getattr__(self, name: str) -> Any:
                return getattr(inner, name)

        table.validator = Held()
        got: list[int] = []
        appender = threading.Thread(target=lambda: got.append(rec.append("a", src[4])))
        appender.start()
        assert entered.wait(10)
        forgetter = threading.Thread(target=rec.forget, args=("a",))
        forgetter.start()
        forgetter.join(0.2)
        assert forgetter.is_alive()  # it waits for the append being checked
        go.set()
        appender.join(10)
        forgetter.join(10)
        assert got == [4] and not forgetter.is_alive()
        assert "a" not in rec._tables and table.fd is None  # gone when forget returned
        assert rec.append("a", src[5]) == 5
    assert on_disk(str(tmp_path / "a.blog")) == list(src[:6])



def test_an_append_interrupted_as_its_table_is_marked_dirty_leaves_nothing_waiting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # counted (pending, unresolved) but never marked dirty: no round took the move, flush()
    # never returned True and forget() waited forever
    with Recorder(tmp_path, sync="fsync", save_every=0) as rec:
        for event in src[:3]:
            rec.append("a", event)
        real, main, armed = time.monotonic, threading.main_thread(), [True]

        def monotonic() -> float:  # the first append of a round reads the clock there
            if armed[0] and threading.current_thread() is main:
                armed[0] = False
                raise _Interrupt
            return real()

        monkeypatch.setattr(time, "monotonic", monotonic)
        with pytest.raises(_Interrupt):
            rec.submit("a", src[3])
        monkeypatch.undo()
        assert not armed[0]
        assert rec.flush(timeout=2)
        forgetter = threading.Thread(target=rec.forget, args=("a",))
        forgetter.start()
        forgetter.join(5)
        assert not forgetter.is_alive()
        assert rec.append("a", src[3]) == 3  # read again from its log
    assert log.read_events(tmp_path / "a.blog") == list(src[:4])

# -- a defect in a journal round's write thread ---------------------------------------------------

_DEFECT_CHILD = textwrap.dedent("""
    import json, os, signal, sys
    from buraco_log.recorder import Recorder
    from tests.recorder.sources import matches
    a, b = matches()[0], matches()[1]
    directory, when = sys.argv[1], sys.argv[2]
    rec = Recorder(directory, sync="journal", checkpoint_every=600, save_every=0)
    for k in range(5):
        rec.append("a", a[k])
        rec.append("b", b[k])
    real = rec._write

    def write(w):
        if w.table.match == "b":
            if when == "after":
                real(w)  # the segment is in the log: then the defect
            raise RuntimeError("a defect")
        return real(w)

    rec._write = write
    rec.window = 0.3  # both appends in one round
    futures = {"a": rec.submit("a", a[5]), "b": rec.submit("b", b[5])}
    out = {}
    for name, future in futures.items():
        try:
            out[name] = future.result(timeout=30)
        except Exception as exc:
            out[name] = str(exc)
    rec._write = real
    rec.window = 0.002
    try:
        out["a6"] = rec.append("a", a[6])  # the journal goes on
    except Exception as exc:
        out["a6"] = str(exc)
    print(json.dumps(out), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # a crash: the next recorder reads the journal
""")


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_defect_in_a_journal_rounds_thread_withdraws_its_records_and_acks_the_rest(
        tmp_path: Path, when: str) -> None:
    done = subprocess.run([sys.executable, "-c", _DEFECT_CHILD, str(tmp_path), when], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    out = __import__("json").loads(done.stdout)
    assert out["a"] == 5 and out["a6"] == 6, out  # the other log of the round is acked
    assert "recorder error: RuntimeError('a defect')" in out["b"] and "\n" not in out["b"]
    with Recorder(tmp_path, sync="journal") as rec:  # a restart writes the journal back
        assert rec.next_seq("a") == 7
        assert rec.next_seq("b") == 5  # the refused event did not come back
    assert log.read_events(tmp_path / "a.blog") == list(src[:7])
    assert log.read_events(tmp_path / "b.blog") == list(other[:5])


# -- close interrupted between its last two closes -------------------------------------------------

@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="no pthread_kill")
def test_close_interrupted_between_its_last_closes_never_closes_a_number_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = Recorder(tmp_path / "logs", sync="journal")
    rec.append("a", src[0])
    dir_fd, real_close = rec._dir_fd, os.close
    fired: list[int] = []

    def close(fd: int) -> None:
        real_close(fd)
        if fd == dir_fd and not fired:  # a signal lands as the directory's close returns
            fired.append(fd)
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR1)

    def handler(signum: int, frame: object) -> None:
        raise _Interrupt

    old = signal.signal(signal.SIGUSR1, handler)
    try:
        monkeypatch.setattr(os, "close", close)
        with pytest.raises(_Interrupt):
            rec.close()
        monkeypatch.undo()
        assert fired
        # the number is given to another file of the process (another thread's, say)
        mine = os.open(tmp_path / "mine.bin", os.O_RDWR | os.O_CREAT, 0o644)
        os.dup2(mine, dir_fd)
        rec.close()  # the caller tries again
        os.fstat(dir_fd)  # still open: the second close did not close it
        os.write(dir_fd, b"still mine")
    finally:
        signal.signal(signal.SIGUSR1, old)
    real_close(dir_fd)
    if mine != dir_fd:  # (the lowest free number, the directory's own if it was the lower)
        real_close(mine)
    assert (tmp_path / "mine.bin").read_bytes() == b"still mine"
    with Recorder(tmp_path / "logs") as again:  # the directory was let go
        assert again.next_seq("a") == 1


# -- SIGKILL at the N-th write, sync, link or unlink: recording, rotating, recovering -------------

_KILL_CHILD = textwrap.dedent("""
    import os, signal, sys, threading
    from buraco_log.recorder import Recorder
    from tests.recorder.sources import matches, source_of
    directory, sync, kill_at, run = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    write = os.write  # the acknowledgements' own, never counted
    count, lock = [0], threading.Lock()

    def counted(real):
        def call(*args, **kwargs):
            with lock:
                count[0] += 1
                if count[0] == kill_at:  # before the call: it never happened
                    os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return call

    for name in ("write", "pwrite", "fsync", "fdatasync", "link", "unlink", "replace",
                 "ftruncate", "rename"):
        setattr(os, name, counted(getattr(os, name)))
    # a checkpoint every 20 ms: kills land in rotations; the restart recovers the journals
    rec = Recorder(directory, sync=sync, window=0.002, max_open=30, save_every=0.05,
                   checkpoint_every=0.02)
    sources = matches()
    names = [f"t{i}" for i in range(8)]
    write(1, b"ready\\n")

    def player(mine):
        for _ in range(60):
            futures = []
            for name in mine:
                seq = rec.next_seq(name)
                src = source_of(name, sources)
                if seq < len(src):
                    futures.append((name, rec.submit(name, src[seq])))
            if not futures:
                return
            for name, future in futures:
                write(1, f"{name} {future.result()}\\n".encode())

    threads = [threading.Thread(target=player, args=(names[k::2],)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rec.close()
    write(1, b"done\\n")
""")


def _kill_runs(directory: Path, sync: str, kills: list[int]) -> dict[str, int]:
    """Run the recording child once per entry of ``kills``, each killed at that call (each run
    after the first opens the directory a crash left: its kill may land in the recovery).
    Returns the highest seq acknowledged per table."""
    acked: dict[str, int] = {}
    for run, kill_at in enumerate(kills):
        done = subprocess.run(
            [sys.executable, "-c", _KILL_CHILD, str(directory), sync, str(kill_at), str(run)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode in (0, -signal.SIGKILL), done.stderr
        for line in done.stdout.splitlines():
            if line not in ("ready", "done"):
                name, seq = line.split()
                acked[name] = max(acked.get(name, -1), int(seq))
    return acked


def _check_after_restart(directory: Path, sync: str, acked: dict[str, int]) -> None:
    """A clean restart: every acknowledged event is in its log, once, in order; every log reads
    whole; the recorder goes on with each; no journal or temporary file is left."""
    from tests.recorder.sources import source_of
    sources = matches()
    with Recorder(directory, sync=sync) as rec:
        for path in sorted(directory.glob("*.blog")):
            name = path.stem
            seq = rec.next_seq(name)  # loads it (cutting a torn tail, never acknowledged)
            assert seq > acked.get(name, -1), (name, seq, acked.get(name))
            source = source_of(name, sources)
            if seq < len(source):
                assert rec.append(name, source[seq]) == seq
    for path in sorted(directory.glob("*.blog")):
        kept = log.read_events(path)  # strict: whole, no repeated or missing seq
        assert kept == list(source_of(path.stem, sources)[:len(kept)]), path
        assert len(kept) > acked.get(path.stem, -1)
    left = [p.name for p in directory.iterdir()
            if p.name.endswith(".new") or ".recorder.journal-" in p.name]
    assert left == [], left


def test_sigkill_at_chosen_calls_then_a_restart_keeps_every_acknowledged_event(
        tmp_path: Path) -> None:
    # the 40th call lands in the first rounds (a new log half made, a state being saved);
    # the next run is killed at its 2nd, in the sweep of what that left; the 130th lands
    # after several journal rotations; the next run's 1st, in the recovery of their journals
    acked = _kill_runs(tmp_path, "journal", [40, 2, 130, 1])
    assert sum(seq + 1 for seq in acked.values()) >= 8
    _check_after_restart(tmp_path, "journal", acked)


@pytest.mark.slow
@pytest.mark.parametrize("sync", ["journal", "fsync", "syncfs"])
def test_sigkill_at_80_random_calls_then_a_restart_keeps_every_acknowledged_event(
        tmp_path: Path, sync: str) -> None:
    import random
    rng = random.Random(f"rec42-{sync}")
    kills = [rng.choice([rng.randint(1, 6), rng.randint(1, 400)]) for _ in range(80)]
    acked = _kill_runs(tmp_path, sync, kills)
    _check_after_restart(tmp_path, sync, acked)


# -- EIO / ENOSPC on the journal's write or sync, then a crash ------------------------------------

_JOURNAL_ERROR_CHILD = textwrap.dedent("""
    import errno, json, os, signal, sys
    from buraco_log.errors import LogFormatError
    from buraco_log.recorder import FileOps, Recorder
    from tests.recorder.sources import matches
    directory, where, code, at = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

    class Failing(FileOps):
        calls = {"append": 0, "datasync": 0, "fsync": 0}

        def fail(self, call):
            self.calls[call] += 1
            if call == where and self.calls[call] == at:
                raise OSError(code, os.strerror(code))

        def append(self, fd, data):
            if where == "append" and self.calls["append"] + 1 == at and code == errno.ENOSPC:
                os.write(fd, data[:len(data) // 2])  # what fitted on the disk
            self.fail("append")
            super().append(fd, data)

        def datasync(self, fd):
            self.fail("datasync")
            super().datasync(fd)

        def fsync(self, fd):  # in a journal round: the new journal of a rotation
            self.fail("fsync")
            super().fsync(fd)

    sources = matches()[:4]
    # one round a step: its 4 moves fill the batch (a loaded host split a step over two
    # rounds within the 2 ms window, and the failing call came a step early)
    rec = Recorder(directory, sync="journal", ops=Failing(), save_every=0, window=5,
                   max_batch=4, checkpoint_every=0 if where == "fsync" else 600)
    acked = {f"m{i}": -1 for i in range(4)}
    refused = {}
    for k in range(12):
        futures = {name: rec.submit(name, sources[i][k]) for i, name in enumerate(acked)
                   if name not in refused}
        for name, future in futures.items():
            try:
                acked[name] = future.result(timeout=30)
            except LogFormatError as exc:
                refused[name] = str(exc)
    print(json.dumps({"acked": acked, "refused": refused}), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.mark.parametrize(("where", "code"), [("append", 28), ("append", 5), ("datasync", 5),
                                             ("fsync", 5)])
def test_a_journal_error_then_a_crash_keeps_every_acknowledged_event_and_no_refused_one(
        tmp_path: Path, where: str, code: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _JOURNAL_ERROR_CHILD, str(tmp_path), where, str(code), "4"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    out = __import__("json").loads(done.stdout)
    acked, refused = out["acked"], out["refused"]
    sources = matches()[:4]
    if where == "fsync":  # a rotation's new journal failed: the old one goes on
        assert refused == {} and all(seq == 11 for seq in acked.values()), out
    else:
        assert set(refused) == set(acked) and all(seq == 2 for seq in acked.values()), out
        for message in refused.values():
            assert "journal failed" in message and "\n" not in message
    unknown = where == "datasync"  # written whole, only its sync failed: it cannot say
    for message in refused.values():
        assert ("may or may not be kept" in message) == unknown, message
    with Recorder(tmp_path, sync="journal") as rec:
        for i, name in enumerate(acked):
            seq = rec.next_seq(name)
            assert seq == acked[name] + 1 or (unknown and seq == acked[name] + 2), (name, seq)
            assert rec.append(name, sources[i][seq]) == seq
    for i, name in enumerate(acked):
        kept = log.read_events(tmp_path / f"{name}.blog")
        assert kept == list(sources[i][:len(kept)])


def _power_loss_then_killed_restarts(tmp_path: Path, kills: list[int]) -> None:
    from tests.recorder.powerloss import PowerLossOps, restore
    from tests.recorder.sources import source_of
    ops = PowerLossOps(str(tmp_path))
    names = [f"t{i}" for i in range(4)]
    rec = Recorder(tmp_path, ops=ops, sync="journal", checkpoint_every=600, save_every=0)
    for step in range(7):
        futures = [rec.submit(n, source_of(n, matches())[step]) for n in names]
        assert [f.result() for f in futures] == [step] * 4
    image = ops.image()  # the logs were never synced, nor their names: only the journal
    assert not any(name.endswith(".blog") for name in image)
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)
    acked = _kill_runs(tmp_path, "journal", kills)
    for name in names:
        acked[name] = max(acked.get(name, -1), 6)
    _check_after_restart(tmp_path, "journal", acked)


def test_restarts_killed_while_they_write_a_journal_back_after_a_power_loss_lose_nothing(
        tmp_path: Path) -> None:
    # each restart recreates the logs from the journal (a write, an fsync, a link, an unlink
    # per log, then the journal's removal) and is killed in the middle of it, at another call:
    # writing the 1st log, sweeping what that left, after 2 of the 4 logs were linked
    _power_loss_then_killed_restarts(tmp_path, [9, 3, 30, 1])


@pytest.mark.slow
def test_30_restarts_killed_at_random_calls_after_a_power_loss_lose_nothing(
        tmp_path: Path) -> None:
    import random
    rng = random.Random("rec42-power")
    _power_loss_then_killed_restarts(tmp_path, [rng.randint(1, 60) for _ in range(30)])


def test_a_failed_journal_append_for_an_adopted_log_leaves_no_refused_event_after_a_crash(
        tmp_path: Path) -> None:
    # the round's own records were synced before the adopted log's failed: the appends were
    # refused as "not recorded" and the logs cut back, but a restart wrote b's event back
    done = subprocess.run([sys.executable, "-c", ADOPTED_CHILD, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    out = __import__("json").loads(done.stdout)
    for message in out.values():
        assert "journal failed" in str(message) and "were not recorded" in str(message), out
    with Recorder(tmp_path, sync="journal") as rec:
        assert (rec.next_seq("a"), rec.next_seq("b")) == (5, 5)
    assert log.read_events(tmp_path / "a.blog") == list(src[:5])
    assert log.read_events(tmp_path / "b.blog") == list(other[:5])


def test_after_the_journal_fails_a_move_queued_meanwhile_is_refused_not_acknowledged(
        tmp_path: Path) -> None:
    # the journal's sync failed (EIO): the recorder stops, but a move of another table queued
    # while that sync ran went into the next round, after the failed records, and was
    # acknowledged (a write-back stops at a damaged record: after a power loss it was lost)
    class FailingSync(FileOps):
        def __init__(self) -> None:
            self.fail = False
            self.entered = threading.Event()
            self.go = threading.Event()

        def datasync(self, fd: int) -> None:
            if self.fail:
                self.fail = False
                self.entered.set()
                assert self.go.wait(10)
                raise OSError(5, "Input/output error")
            super().datasync(fd)

    ops = FailingSync()
    with Recorder(tmp_path, sync="journal", ops=ops, save_every=0) as rec:
        rec.append("a", src[0])
        rec.append("c", other[0])
        ops.fail = True
        failing = rec.submit("a", src[1])
        assert ops.entered.wait(10)
        queued = rec.submit("c", other[1])  # accepted: the failure is not known yet
        ops.go.set()
        for future in (failing, queued):
            with pytest.raises(LogFormatError) as caught:
                future.result(timeout=10)
            assert "the journal failed" in str(caught.value)
        with pytest.raises(LogFormatError):
            rec.append("c", other[1])
    assert log.read_events(tmp_path / "c.blog") == list(other[:1])
