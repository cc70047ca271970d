"""Fault probes of the recorder, sixth round: ``close`` from two threads at once, the calls that
wait for the commit thread made from a future's done-callback (which runs on that thread), a
real SIGKILL right after acknowledgements while ``seal`` races the recorder for its logs, and an
illegal move to a live table under load (refused, nothing written, the table goes on)."""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import BuracoLogError, IllegalMoveError, LogFormatError
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.sources import matches, on_disk, source_of

ROOT = Path(__file__).resolve().parents[2]
SYNCS = ["fsync", "syncfs", "journal"]


# -- close from two threads at once -------------------------------------------------------------

@pytest.mark.parametrize("sync", SYNCS)
def test_two_threads_closing_at_once_close_once_and_raise_nothing(tmp_path: Path,
                                                                  sync: str) -> None:
    # Both went past the "already closed" check and closed every descriptor twice: OSError
    # EBADF in one of them (or, had the number been reused meanwhile, another file closed).
    errors: list[BaseException] = []
    for run in range(6):
        rec = Recorder(tmp_path / f"r{run}", sync=sync, save_every=0)
        for t in range(3):
            assert rec.append(f"t{t}", matches()[t][0]) == 0
        start = threading.Barrier(3)

        def close(rec: Recorder = rec, start: threading.Barrier = start) -> None:
            start.wait(5)
            try:
                rec.close()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=close) for _ in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(10)
        assert not any(th.is_alive() for th in threads), "a close hung"
    assert errors == []
    with Recorder(tmp_path / "r0", sync=sync, save_every=0) as rec:  # the lock was let go
        assert [rec.next_seq(f"t{t}") for t in range(3)] == [1, 1, 1]


# -- calls that wait for the commit thread, from a done-callback (which runs on it) -------------

def _in_callback(rec: Recorder, call: str) -> list[BaseException | int | None]:
    """Submit a first move and, in its done-callback, make ``call``; what it gave back."""
    got: list[BaseException | int | None] = []

    def callback(_: Future[int]) -> None:
        try:
            if call == "append":
                got.append(rec.append("cb", matches()[0][1]))
            elif call == "flush":
                got.append(int(rec.flush()))
            elif call == "forget":
                got.append(rec.forget("cb"))  # type: ignore[func-returns-value]
            else:
                got.append(rec.close())  # type: ignore[func-returns-value]
        except BaseException as exc:
            got.append(exc)

    future = rec.submit("cb", matches()[0][0])
    future.add_done_callback(callback)
    assert future.result(timeout=10) == 0
    return got


@pytest.mark.parametrize("call", ["append", "flush", "forget", "close"])
def test_a_waiting_call_from_a_done_callback_is_refused_and_no_table_hangs(
        tmp_path: Path, call: str) -> None:
    # append from a callback waited for its own round, on the one thread that commits rounds:
    # every table of the recorder hung for good. close failed halfway ("cannot join current
    # thread"), and with one close at a time it would have waited for itself.
    rec = Recorder(tmp_path / "logs", save_every=0)
    try:
        got = _in_callback(rec, call)
        other = rec.submit("other", matches()[1][0])
        assert other.result(timeout=10) == 0, "the recorder hung after the callback"
        assert len(got) == 1 and isinstance(got[0], RuntimeError), got
        message = str(got[0])
        assert str(tmp_path / "logs") in message and f"{call}()" in message
        assert "callback" in message
        assert rec.append("cb", matches()[0][1]) == 1  # from another thread it works
    finally:
        closer = threading.Thread(target=rec.close, daemon=True)  # never holds up the exit
        closer.start()
        closer.join(20)
        assert not closer.is_alive(), "close hung"
    assert len(on_disk(str(tmp_path / "logs" / "cb.blog"))) == 2


# -- SIGKILL right after acknowledgements while seal races for the logs -------------------------

SEAL_CHILD = """
import os, sys, threading
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.sources import matches, source_of
directory, sync, run = sys.argv[1], sys.argv[2], sys.argv[3]
sources = matches()
# unsealed logs, two log slots and a tiny idle timeout: logs close all the time, so a seal
# (which rewrites a log into a new file under its lock) gets in between the recorder's rounds
rec = Recorder(directory, sync=sync, sealed=False, max_open=20, idle_timeout=0.002,
               window=0.001, save_every=0.05, checkpoint_every=0.05)
names = []
for entry in sorted(os.listdir(directory)):
    if entry.endswith(".blog") and rec.next_seq(entry[:-5]) < len(source_of(entry[:-5], sources)):
        names.append(entry[:-5])
names += [f"r{run}-{i}" for i in range(max(0, 12 - len(names)))]
os.write(1, b"ready\\n")

def player(mine):
    while mine:
        futures = []
        for name in list(mine):
            src = source_of(name, sources)
            try:
                seq = rec.next_seq(name)  # loads the match again if a seal refused its move
            except Exception as exc:
                if getattr(exc, "kind", None) != "locked":
                    os.write(2, f"next_seq {name}: {exc!r}\\n".encode())
                    os._exit(3)
                os.write(1, f"locked {name}\\n".encode())
                continue
            if seq >= len(src):
                mine.remove(name)
                continue
            futures.append((name, rec.submit(name, src[seq])))
        for name, future in futures:
            try:
                seq = future.result()
            except Exception as exc:
                # a seal holding the log when the round reopened it: refused, nothing written,
                # the match is read again on its next move (played again below)
                if getattr(exc, "kind", None) == "locked" and "another writer" in str(exc):
                    os.write(1, f"locked {name}\\n".encode())
                    continue
                os.write(2, f"refused {name}: {exc!r}\\n".encode())
                os._exit(3)
            os.write(1, f"{name} {seq}\\n".encode())

workers = [threading.Thread(target=player, args=(names[k::4],)) for k in range(4)]
for w in workers:
    w.start()
for w in workers:
    w.join()
rec.close()
os.write(1, b"done\\n")
"""


def _seal_while_recording(directory: Path, sync: str, run: int, rng: random.Random,
                          out_path: Path) -> tuple[int, subprocess.CompletedProcess[bytes]]:
    """Run the child, sealing its logs from this process until a random moment, then SIGKILL
    it. Returns (seals done, the child's result)."""
    sealed = 0
    with open(out_path, "wb") as out:
        child = subprocess.Popen([sys.executable, "-c", SEAL_CHILD, str(directory), sync,
                                  str(run)], cwd=ROOT, stdout=out, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while b"ready" not in out_path.read_bytes() and child.poll() is None:
                assert time.monotonic() < deadline, "the recorder process did not start"
                time.sleep(0.005)
            stop = time.monotonic() + rng.uniform(0.3, 0.8)
            while time.monotonic() < stop and child.poll() is None:
                logs = sorted(directory.glob("*.blog"))
                if not logs:
                    continue
                try:
                    log.seal(rng.choice(logs))
                    sealed += 1
                except BuracoLogError:
                    pass  # held by the recorder (kind locked), or its journal is ahead
            child.send_signal(signal.SIGKILL)
            _, err = child.communicate(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(10)
    return sealed, subprocess.CompletedProcess(child.args, child.returncode, b"", err)


@pytest.mark.parametrize("sync", SYNCS)
def test_sigkill_after_acks_while_seal_races_the_recorder_keeps_every_acked_event(
        tmp_path: Path, sync: str) -> None:
    _seal_race(tmp_path, sync, runs=3)


@pytest.mark.slow
@pytest.mark.parametrize("sync", SYNCS)
def test_sigkill_after_acks_while_seal_races_the_recorder_30_runs(tmp_path: Path,
                                                                   sync: str) -> None:
    _seal_race(tmp_path, sync, runs=30)


def _seal_race(tmp_path: Path, sync: str, runs: int) -> None:
    """``runs`` recorder processes in turn in one directory, each SIGKILLed at a random moment
    while this process seals its logs; every acknowledged event must be kept, no log damaged."""
    rng = random.Random(f"seal-{sync}")
    directory = tmp_path / "logs"
    directory.mkdir()
    sources = matches()
    acked = sealed_total = refused = 0
    for run in range(runs):
        sealed, child = _seal_while_recording(directory, sync, run, rng,
                                              tmp_path / f"acks{run}.txt")
        assert child.returncode in (-signal.SIGKILL, 0), child.stderr.decode()[-2000:]
        sealed_total += sealed
        latest: dict[str, int] = {}
        for line in (tmp_path / f"acks{run}.txt").read_text().splitlines():
            if line.startswith("locked"):
                refused += 1
            elif line not in ("ready", "done"):
                name, text = line.split()
                latest[name] = max(latest.get(name, -1), int(text))
                acked += 1
        for name, last in latest.items():
            kept = on_disk(str(directory / f"{name}.blog"))
            assert len(kept) >= last + 1, f"{name}: acknowledged seq {last}, {len(kept)} kept"
            assert kept == list(source_of(name, sources)[: len(kept)])
        if sync != "journal":  # the journal's logs are whole once a recorder opens them
            for path in directory.glob("*.blog"):
                log.verify(path)  # a torn tail is allowed, damage raises
    assert acked > 0
    print(f"{sync}: {acked} acknowledged, {sealed_total} seals, {refused} moves refused "
          "while a seal held the log")
    with Recorder(directory, sync=sync, save_every=0) as rec:  # and every match goes on
        for path in sorted(directory.glob("*.blog")):
            name = path.name[:-5]
            at = rec.next_seq(name)
            src = source_of(name, sources)
            if at < len(src):
                assert rec.append(name, src[at]) == at
    for path in directory.glob("*.blog"):
        assert log.verify(path).torn is None


# -- an illegal move to a live table under load ---------------------------------------------------

def test_an_illegal_move_under_load_writes_nothing_and_the_table_goes_on(tmp_path: Path) -> None:
    src = matches()[0]
    directory = tmp_path / "logs"
    with Recorder(directory, save_every=0, window=0.005) as rec:
        for seq in range(6):
            rec.append("t", src[seq])
        busy = [rec.submit(f"o{t}", matches()[t][0]) for t in range(1, 5)]
        before = (directory / "t.blog").read_bytes()
        illegal = src[7].__class__(**{f: getattr(src[7], f) for f in src[7].__struct_fields__
                                      if f != "seq"}, seq=6)  # a move out of its turn
        with pytest.raises(IllegalMoveError) as caught:
            rec.append("t", illegal)
        assert "table 't'" in str(caught.value) and str(directory / "t.blog") in str(caught.value)
        assert all(f.result(timeout=10) == 0 for f in busy)
        rec.flush(timeout=10)
        assert (directory / "t.blog").read_bytes() == before
        assert rec.next_seq("t") == 6
        assert rec.append("t", src[6]) == 6
    assert on_disk(str(directory / "t.blog")) == list(src[:7])


# -- the smallest handle pool ---------------------------------------------------------------------

POOL_CHILD = """
import sys
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.sources import matches
directory, sync, max_open = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Recorder(directory, sync=sync, max_open=max_open, save_every=0) as rec:
    futures = [rec.submit(f"t{t}", matches()[t][0]) for t in range(5)]
    print([f.result(timeout=10) for f in futures], rec.stats().max_open_handles, rec.max_open)
"""


@pytest.mark.parametrize("sync", SYNCS)
def test_the_smallest_handle_pool_still_records_with_every_sync(tmp_path: Path,
                                                                sync: str) -> None:
    # With the journal, max_open under 27 left no descriptor for any log (the journal's own
    # were not counted in the least pool): no round took an append, every append hung, and
    # close spun for ever (a child process: a regression fails here instead of hanging).
    for max_open in (1, 20, 26):
        directory = tmp_path / f"logs{max_open}"
        p = subprocess.run([sys.executable, "-c", POOL_CHILD, str(directory), sync,
                            str(max_open)], cwd=ROOT, capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        acks, most, pool = p.stdout.decode().rsplit("]", 1)[0] + "]", *p.stdout.split()[-2:]
        assert acks == "[0, 0, 0, 0, 0]" and 0 < int(most) <= int(pool)
        for t in range(5):
            assert len(on_disk(str(directory / f"t{t}.blog"))) == 1


# -- a sealed file under the closed log's inode number --------------------------------------------

def _wait_closed(rec: Recorder) -> None:
    deadline = time.monotonic() + 10
    while rec.stats().open_handles:
        assert time.monotonic() < deadline, "the idle log was not closed"
        time.sleep(0.005)


@pytest.mark.parametrize("sync", SYNCS)
def test_a_log_sealed_into_a_file_with_its_old_inode_number_is_written_at_its_own_end(
        tmp_path: Path, sync: str) -> None:
    # Two seals in a row can give the new file the inode number the first seal freed: the log
    # the recorder closed. The recorder adopted that file (same events) but wrote the segment
    # it had prepared for the old one, at the old end: zeros in the middle, a damaged log.
    # Here the sealed bytes are written into the log's own inode, which is what that looks like.
    src = matches()[0]
    directory = tmp_path / "logs"
    path = directory / "t.blog"
    with Recorder(directory, sync=sync, sealed=False, idle_timeout=0.01, save_every=0) as rec:
        for seq in range(8):
            rec.append("t", src[seq])
        _wait_closed(rec)
        copy = tmp_path / "copy.blog"
        copy.write_bytes(path.read_bytes())
        log.seal(copy)
        inode = path.stat().st_ino
        with open(path, "r+b") as f:  # the same inode, the sealed (shorter) bytes
            f.write(copy.read_bytes())
            f.truncate()
        assert path.stat().st_ino == inode and path.stat().st_size != copy.stat().st_size + 1
        assert rec.append("t", src[8]) == 8
        assert rec.append("t", src[9]) == 9
    info = log.verify(path)
    assert info.torn is None and info.sealed
    assert on_disk(str(path)) == list(src[:10])


# -- one log, two recorders; a read-only directory ------------------------------------------------

def test_a_log_linked_into_a_second_recorders_directory_is_refused_not_interleaved(
        tmp_path: Path) -> None:
    src = matches()[0]
    with Recorder(tmp_path / "a", save_every=0) as first:
        first.append("t", src[0])
        (tmp_path / "b").mkdir()
        os.link(tmp_path / "a" / "t.blog", tmp_path / "b" / "t.blog")  # one file, two names
        os.symlink(tmp_path / "a" / "t.blog", tmp_path / "b" / "s.blog")
        with Recorder(tmp_path / "b", save_every=0) as second:
            for name in ("t", "s"):
                with pytest.raises(BuracoLogError) as caught:
                    second.append(name, src[1])
                assert str(tmp_path / "b" / f"{name}.blog") in str(caught.value)
                assert "another writer holds this log" in str(caught.value)
            assert first.append("t", src[1]) == 1
    assert on_disk(str(tmp_path / "a" / "t.blog")) == list(src[:2])


def test_a_recorder_on_a_read_only_directory_names_the_path_and_the_reason(
        read_only: Path) -> None:
    for directory, named in ((read_only, read_only / ".recorder.lock"),
                             (read_only / "logs" / "deeper", read_only / "logs")):
        with pytest.raises(OSError) as caught:
            Recorder(directory)
        assert caught.value.errno == errno.EROFS and caught.value.filename == str(named)
        assert "Read-only file system" in str(caught.value) and str(named) in str(caught.value)


def test_a_directory_holding_a_nul_byte_is_named_in_its_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"recorder's directory .*x\\x00y.* NUL byte"):
        Recorder(tmp_path / "x\0y")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sync", SYNCS)
def test_a_move_refused_while_a_seal_holds_the_closed_log_says_so_and_may_be_sent_again(
        tmp_path: Path, sync: str) -> None:
    src = matches()[0]
    directory = tmp_path / "logs"
    with Recorder(directory, sync=sync, idle_timeout=0.01, save_every=0) as rec:
        for seq in range(4):
            rec.append("t", src[seq])
        _wait_closed(rec)
        before = (directory / "t.blog").read_bytes()
        # what a seal holds while it rewrites the log
        with log.LogLock(directory / "t.blog"), pytest.raises(BuracoLogError) as caught:
            rec.submit("t", src[4]).result(timeout=10)
        err = caught.value
        assert isinstance(err, LogFormatError) and err.kind == "locked"
        assert str(directory / "t.blog") in str(err) and "not recorded" in str(err)
        assert "send them again" in str(err)
        assert (directory / "t.blog").read_bytes() == before
        assert rec.next_seq("t") == 4  # read again from its log
        assert rec.append("t", src[4]) == 4
    assert on_disk(str(directory / "t.blog")) == list(src[:5])


class _SyncfsDefect(FileOps):
    def syncfs(self, fd: int) -> None:
        raise RuntimeError("a defect in syncfs")


def test_a_checkpoint_that_raises_a_defect_still_lets_close_release_the_directory(
        tmp_path: Path) -> None:
    # close raised halfway: the logs and the directory lock were never let go, a second close
    # raised the same again, and no recorder of this process could open the directory.
    src = matches()[0]
    directory = tmp_path / "logs"
    rec = Recorder(directory, sync="journal", ops=_SyncfsDefect(), save_every=0,
                   checkpoint_every=0.0)
    for seq in range(3):
        rec.append("t", src[seq])
    with pytest.raises(LogFormatError) as caught:
        rec.close()
    assert caught.value.kind == "io" and str(directory) in str(caught.value)
    assert "checkpoint failed" in str(caught.value) and "a defect in syncfs" in str(caught.value)
    rec.close()  # closed: nothing more to do, nothing raised
    with Recorder(directory, sync="journal", save_every=0) as again:  # writes the journal back
        assert again.next_seq("t") == 3
        assert again.append("t", src[3]) == 3
    assert on_disk(str(directory / "t.blog")) == list(src[:4])


class _DirSyncFails(FileOps):
    fail = False

    def fsync_dir(self, fd: int) -> None:
        if self.fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        super().fsync_dir(fd)


def test_a_failed_directory_fsync_fails_the_new_table_only_and_says_what_may_be_kept(
        tmp_path: Path) -> None:
    a, b = matches()[0], matches()[1]
    ops = _DirSyncFails()
    directory = tmp_path / "logs"
    with Recorder(directory, ops=ops, save_every=0) as rec:
        rec.append("old", a[0])
        ops.fail = True
        new, old = rec.submit("new", b[0]), rec.submit("old", a[1])
        with pytest.raises(LogFormatError) as caught:
            new.result(timeout=10)
        assert old.result(timeout=10) == 1  # the table whose log existed goes on
        err = caught.value
        assert err.kind == "io" and str(directory / "new.blog") in str(err)
        assert "directory fsync failed" in str(err) and "Input/output error" in str(err)
        assert "not retried" in str(err) and "may not be on disk" in str(err)
        ops.fail = False
        with pytest.raises(LogFormatError):  # never retried: the table refuses from now on
            rec.append("new", b[1])
    with Recorder(directory, save_every=0) as again:  # the move was kept or not; either goes on
        at = again.next_seq("new")
        assert at in (0, 1) and again.append("new", b[at]) == at
