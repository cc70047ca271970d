"""Fault probes of the recorder, round 44.

- A disk that fills (``RLIMIT_FSIZE`` in a child, the real ``EFBIG`` of a full file system's
  kind) in the middle of a round of several tables: only the table whose write failed is
  refused, in one line, from then on; the other tables of the same round are acknowledged and
  go on; every acknowledged event is on disk after a restart and the refused one is not.
- ``EIO`` from one log's fsync and ``ENOSPC`` from the journal's append in the middle of a round
  (an ops hook): the same promises, with the journal's documented scope (a failed journal
  append fails its round and stops the recorder).
- A wall clock set back: the file times a reopening compares can then be the closed log's own
  for another file; the bytes decide (the recorder's own timers are ``time.monotonic``, which
  never goes back).
- Many threads appending to one match while another program seals its log.
"""

from __future__ import annotations

import errno
import os
import random
import resource
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.sources import matches, on_disk

ROOT = Path(__file__).resolve().parents[2]
src = matches()[0]
others = matches()[1:4]


def _one_line(exc: BaseException) -> str:
    message = str(exc)
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


# -- a disk that fills in the middle of a round ----------------------------------------------

_EFBIG = textwrap.dedent("""
    import os, resource, signal, sys
    from buraco_log.errors import LogFormatError
    from buraco_log.recorder import Recorder
    from tests.recorder.sources import matches

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killed process
    directory, sync = sys.argv[1], sys.argv[2]
    big, small = matches()[0], matches()[1:4]
    rec = Recorder(directory, sync=sync)
    for event in big[:200]:  # the big log: its next segment passes the limit
        rec.submit("big", event)
    for i, events in enumerate(small):
        for event in events[:5]:
            rec.submit(f"s{i}", event)
    assert rec.flush(timeout=30)
    top = os.path.getsize(os.path.join(directory, "big.blog"))
    resource.setrlimit(resource.RLIMIT_FSIZE, (top + 20, resource.RLIM_INFINITY))
    rec.window = 0.2  # one round: the big log's segment and three small ones
    futures = {"big": rec.submit("big", big[200])}
    for i, events in enumerate(small):
        futures[f"s{i}"] = rec.submit(f"s{i}", events[5])
    futures["big"].exception(timeout=30)
    rec.window = 0.002
    for name, future in futures.items():
        try:
            print(name, "ok", future.result(timeout=30))
        except LogFormatError as exc:
            print(name, "refused", str(exc).replace(chr(10), "|"))
    try:
        rec.append("big", big[201])
        print("big-again ok")
    except LogFormatError as exc:
        print("big-again refused", str(exc).replace(chr(10), "|"))
    for i, events in enumerate(small):  # the others go on
        for event in events[6:20]:
            rec.append(f"s{i}", event)
    print("others went on")
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    rec.close()
""")


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="no RLIMIT_FSIZE")
@pytest.mark.parametrize("sync", ["fsync", "syncfs"])
def test_a_full_file_in_the_middle_of_a_round_refuses_that_table_alone(
        tmp_path: Path, sync: str) -> None:
    done = subprocess.run([sys.executable, "-c", _EFBIG, str(tmp_path), sync], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert lines["big"].startswith("refused") and "File too large" in lines["big"], lines
    assert "big.blog" in lines["big"]  # it names the file
    assert lines["big-again"].startswith("refused"), lines
    for i in range(3):
        assert lines[f"s{i}"] == "ok 5", lines  # the round's other tables
    assert lines["others"] == "went on"
    # after a restart: every acknowledged event, the refused ones nowhere
    assert log.read_events(tmp_path / "big.blog") == list(src[:200])
    for i, events in enumerate(others):
        assert log.read_events(tmp_path / f"s{i}.blog") == list(events[:20])
    with Recorder(tmp_path, sync=sync) as rec:
        assert rec.append("big", src[200]) == 200


class _Failing(FileOps):
    """Fails one log's fsync with EIO, or the journal's append with ENOSPC, once armed."""

    def __init__(self, log_path: Path | None = None, journal: bool = False) -> None:
        self.log_path, self.journal, self.armed = log_path, journal, False

    def fsync(self, fd: int) -> None:
        # told by its inode (a log created by the recorder keeps its temporary name in /proc)
        if (self.armed and self.log_path is not None
                and os.fstat(fd).st_ino == os.stat(self.log_path).st_ino):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        super().fsync(fd)

    def append(self, fd: int, data: bytes) -> None:
        if self.armed and self.journal:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        super().append(fd, data)


def _round(rec: Recorder, ops: _Failing, names: list[str], at: int) -> dict[str, Future[int]]:
    """Submit event ``at`` of every table in one round, with the fault armed."""
    window, rec.window = rec.window, 0.2
    ops.armed = True
    sources = dict(zip(names, [src, *others], strict=False))
    futures = {name: rec.submit(name, sources[name][at]) for name in names}
    for future in futures.values():
        future.exception(timeout=30)
    ops.armed = False
    rec.window = window
    return futures


def test_an_eio_from_one_logs_fsync_mid_round_refuses_that_table_alone(tmp_path: Path) -> None:
    names = ["a", "b", "c", "d"]
    sources = dict(zip(names, [src, *others], strict=True))
    ops = _Failing(log_path=tmp_path / "b.blog")
    with Recorder(tmp_path, sync="fsync", ops=ops) as rec:
        for name in names:
            for event in sources[name][:4]:
                rec.append(name, event)
        futures = _round(rec, ops, names, 4)
        failure = futures["b"].exception()
        assert isinstance(failure, LogFormatError)
        assert "b.blog" in _one_line(failure)
        assert all(futures[n].result() == 4 for n in "acd")
        with pytest.raises(LogFormatError) as again:  # refused from then on, in one line
            rec.append("b", sources["b"][5])
        _one_line(again.value)
        for name in "acd":
            for event in sources[name][5:12]:
                rec.append(name, event)
    # the refused event may be in b's file (written, its fsync failed: never acknowledged);
    # every acknowledged one is, and the others hold exactly what was acknowledged
    assert on_disk(str(tmp_path / "b.blog"))[:4] == list(sources["b"][:4])
    for name in "acd":
        assert log.read_events(tmp_path / f"{name}.blog") == list(sources[name][:12])


def test_an_enospc_from_the_journal_mid_round_refuses_the_round_and_writes_none_of_it(
        tmp_path: Path) -> None:
    names = ["a", "b", "c"]
    sources = dict(zip(names, [src, *others], strict=False))
    ops = _Failing(journal=True)
    rec = Recorder(tmp_path, sync="journal", ops=ops, checkpoint_every=600)
    try:
        for name in names:
            for event in sources[name][:4]:
                rec.append(name, event)
        futures = _round(rec, ops, names, 4)
        for name in names:  # the journal is every table's: the round fails, in one line each
            failure = futures[name].exception()
            assert isinstance(failure, LogFormatError), name
            _one_line(failure)
        with pytest.raises(LogFormatError) as later:  # the recorder stopped, saying why
            rec.append("a", sources["a"][5])
        _one_line(later.value)
    finally:
        rec.close()
    with Recorder(tmp_path, sync="journal") as again:  # a restart: what was acknowledged
        for name in names:
            assert again.next_seq(name) == 4
            assert log.read_events(tmp_path / f"{name}.blog") == list(sources[name][:4])
            assert again.append(name, sources[name][4]) == 4


# -- a wall clock set back ------------------------------------------------------------------

@pytest.mark.parametrize("sealed", [True, False])
def test_a_file_given_the_closed_logs_times_by_a_clock_set_back_is_still_told_apart(
        tmp_path: Path, sealed: bool) -> None:
    # A clock set back gives a file created later the very times the log had when it was
    # closed; with ext4's reuse of the freed inode number and the same size, only the bytes
    # differ (here: the last byte of the last segment, whose CRC then fails).
    rec = Recorder(tmp_path, sync="fsync", sealed=sealed, idle_timeout=0.01)
    try:
        for event in src[:6]:
            rec.append("a", event)
        table = rec._tables["a"]
        deadline = time.monotonic() + 10
        while table.fd is not None and time.monotonic() < deadline:
            time.sleep(0.01)  # the idle log is closed, its times kept
        assert table.fd is None and table.stamp is not None
        path = tmp_path / "a.blog"
        ours = path.read_bytes()
        os.unlink(path)
        path.write_bytes(ours[:-1] + bytes([ours[-1] ^ 1]))
        st = os.stat(path)
        # the clock set back: the new file carries the closed log's modification time, and
        # (utime cannot set it: the table is told it) its change time; its number reused
        os.utime(path, ns=(st.st_atime_ns, table.stamp[1]))
        st = os.stat(path)
        assert st.st_mtime_ns == table.stamp[1]
        table.identity = (st.st_dev, st.st_ino)
        table.stamp = (st.st_ctime_ns, st.st_mtime_ns)
        with pytest.raises(LogFormatError) as refused:
            rec.append("a", src[6])
        assert "changed while the recorder had it closed" in _one_line(refused.value)
        assert path.read_bytes() == ours[:-1] + bytes([ours[-1] ^ 1])  # nothing written into
    finally:
        rec.close()


# -- many threads appending to one match while it is sealed ----------------------------------

def _appender(rec: Recorder, turn: threading.Lock, state: dict[str, int], events: int,
              acked: list[int], refused: list[str], stop: threading.Event) -> None:
    """Append the match's next event, taking turns with the other threads (a seq each), now
    and then after a pause that lets the log be closed (and sealed). A refusal (the seal held
    the log as the recorder reopened it: "send them again") sends from the seq it expects."""
    pause = random.Random(threading.get_ident())
    while not stop.is_set() and len(refused) < 2000:
        if pause.random() < 0.3:
            stop.wait(pause.uniform(0.005, 0.02))
        with turn:
            seq = state["next"]
            if seq >= events:
                return
            try:
                future = rec.submit("m", src[seq])
                state["next"] = seq + 1
            except LogFormatError as exc:
                future = None
                refused.append(_one_line(exc))
        try:
            if future is not None:
                acked.append(future.result(timeout=30))
                continue
        except LogFormatError as exc:
            refused.append(_one_line(exc))
        with turn:  # go on from what the log holds (the match is read again from it)
            try:
                state["next"] = rec.next_seq("m")
            except LogFormatError as exc:  # the seal holds it right now
                refused.append(_one_line(exc))


def _seal_run(directory: Path, rng: random.Random, threads: int, events: int) -> int:
    """Threads append to one match (a closed log now and then: idle 5 ms) while another thread
    seals it; every acknowledged event ends in the log once, in order; returns the seals."""
    rec = Recorder(directory, sync=rng.choice(["fsync", "journal"]), sealed=False,
                   idle_timeout=0.005, window=0.001)
    turn, stop = threading.Lock(), threading.Event()
    state = {"next": 0}
    acked: list[int] = []
    refused: list[str] = []
    seals = 0
    workers = [threading.Thread(target=_appender, args=(rec, turn, state, events, acked,
                                                        refused, stop)) for _ in range(threads)]
    try:
        for worker in workers:
            worker.start()
        path = directory / "m.blog"
        while any(w.is_alive() for w in workers):
            stop.wait(rng.uniform(0, 0.01))
            if not path.exists():
                continue
            try:
                log.seal(path)  # another program: refused while the recorder holds it
                seals += 1
            except LogFormatError:
                pass
        stop.set()
        for worker in workers:
            worker.join(60)
        # a thread's last move may have been refused as it ended: the rest, with no seal now
        # (the match read again from its log: what it holds decides the seq)
        for seq in range(rec.next_seq("m"), events):
            acked.append(rec.append("m", src[seq]))
    finally:
        rec.close()
    assert len(refused) < 2000, refused[-3:]
    assert all("another writer holds this log" in r or "seq" in r for r in refused), refused
    assert len(set(acked)) == len(acked)  # each seq acknowledged once
    got = log.read_events(directory / "m.blog")  # strict: no repeated or missing seq
    assert got == list(src[:events])  # every event, each acknowledged one among them
    assert set(acked) == set(range(events))
    return seals


def test_threads_appending_to_one_match_while_it_is_sealed_lose_nothing(tmp_path: Path) -> None:
    rng = random.Random("seal44")
    seals = 0
    for run in range(3):  # under load the appenders may leave the log no idle moment: again
        directory = tmp_path / f"run{run}"
        directory.mkdir()
        seals = _seal_run(directory, rng, 6, 150)
        if seals:
            break
    assert seals > 0  # the probe did seal the log under the appenders


@pytest.mark.slow
def test_threads_appending_to_one_match_while_it_is_sealed_30_runs(tmp_path: Path) -> None:
    rng = random.Random("seal44-slow")
    total = 0
    for run in range(30):
        directory = tmp_path / f"run{run}"
        directory.mkdir()
        total += _seal_run(directory, rng, rng.choice([2, 8, 16]), len(src))
    assert total > 30


# -- a journal record for a file that took the log's place -----------------------------------

def _log_sizes(directory: Path, sealed: bool, count: int) -> tuple[bytes, list[int]]:
    """Log "a" of ``src[:count]``, one segment per event; its bytes and size after each."""
    sizes = []
    with Recorder(directory, sync="fsync", sealed=sealed) as rec:
        for event in src[:count]:
            rec.append("a", event)
            sizes.append(os.path.getsize(directory / "a.blog"))
    return (directory / "a.blog").read_bytes(), sizes


@pytest.mark.parametrize("sealed", [True, False])
@pytest.mark.parametrize("other", ["the log", "another match", "our log, last byte changed"])
def test_a_journal_record_is_written_back_only_onto_the_events_it_continues(
        tmp_path: Path, sealed: bool, other: str) -> None:
    # docs/recorder.md's narrow case: a round journals a closed log's record naming the file
    # its path showed; a file created there within one clock tick (the freed inode number, the
    # same size) passed that look; the reopening refused it, and a power loss came before the
    # withdrawal was synced. Its bytes where the record goes were all missing, so the restart
    # wrote the record at the other file's end. Now the record must continue the events the
    # file holds before it (their count and, sealed, their chain).
    ours, sizes = _log_sizes(tmp_path / "src", sealed, 6)
    at, segment = sizes[4], ours[sizes[4]:sizes[5]]
    if other == "the log":  # after a power loss: the log without its last segment
        there = ours[:at]
    elif other == "another match":
        theirs_dir = tmp_path / "theirs"
        with Recorder(theirs_dir, sync="fsync", sealed=sealed) as rec:
            for event in others[0][:8]:
                rec.append("x", event)
        there = ((theirs_dir / "x.blog").read_bytes() + bytes(at))[:at]
    else:
        there = ours[:at - 1] + bytes([ours[at - 1] ^ 1])
    directory = tmp_path / "d"
    directory.mkdir()
    path = directory / "a.blog"
    path.write_bytes(there)
    st = os.stat(path)
    record = journal.Record("a", st.st_dev, st.st_ino, at, segment)
    (directory / journal.name_of(1)).write_bytes(journal.header() + journal.frame([record]))
    with Recorder(directory, sync="journal") as rec:
        stats = rec.stats()
        if other == "the log":
            assert stats.journal_conflicts == 0
            assert log.read_events(path) == list(src[:6])  # written back
        else:  # not written into; the journal kept aside for an operator
            assert stats.journal_conflicts == 1, stats
            assert path.read_bytes() == there
            assert list(directory.glob(".recorder.journal-*.unfolded"))
