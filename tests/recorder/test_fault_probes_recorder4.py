"""Fault probes of the recorder, fourth round: a real SIGKILL right after acknowledgements,
bad input through the API (each refused, naming the table, seq or rule, writing nothing, the
other tables going on), a file size limit (``RLIMIT_FSIZE``, as a full disk) hit in the middle
of group commits, and a live table's log removed under the recorder."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import journal, log
from buraco_log.errors import IllegalMoveError, LogFormatError, ReplayError
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.sources import matches, on_disk

ROOT = Path(__file__).resolve().parents[2]
SYNCS = ["fsync", "syncfs", "journal"]


def _bytes(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


# -- a real SIGKILL right after acknowledgements ------------------------------------------------

KILL_CHILD = """
import os, signal, sys
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.sources import matches
sources = matches()
rec = Recorder(sys.argv[1], sync=sys.argv[2], save_every=600, checkpoint_every=600)
acked = [0, 0, 0]
for step in range(30):
    futures = [rec.submit(f"t{t}", sources[t][step]) for t in range(3)]
    for t, fut in enumerate(futures):
        assert fut.result() == step
        acked[t] = step + 1
# more appends in flight, never waited for: the kill lands while a round may be writing them
for step in range(30, 40):
    for t in range(3):
        rec.submit(f"t{t}", sources[t][step])
os.write(1, (" ".join(map(str, acked)) + "\\n").encode())
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("sync", SYNCS)
def test_a_sigkill_right_after_acknowledgements_keeps_every_acknowledged_event(
        tmp_path: Path, sync: str) -> None:
    directory = tmp_path / "rec"
    p = subprocess.run([sys.executable, "-c", KILL_CHILD, str(directory), sync], cwd=ROOT,
                       capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr.decode()[-2000:]
    acked = [int(n) for n in p.stdout.split()]
    assert acked == [30, 30, 30]
    sources = matches()
    with Recorder(directory, sync=sync, save_every=0) as rec:
        for t in range(3):
            name = f"t{t}"
            have = rec.next_seq(name)
            assert have >= acked[t], (name, have)
            # what is there beyond the acknowledged events is the source's too: nothing torn
            assert on_disk(str(directory / f"{name}.blog")) == list(sources[t][:have])
            assert rec.append(name, sources[t][have]) == have  # and the table goes on
    assert not [n for n in os.listdir(directory) if n.startswith(journal.PREFIX)]


# -- bad input through the recorder API ---------------------------------------------------------

def test_bad_input_is_refused_naming_table_seq_or_rule_and_writes_nothing(tmp_path: Path) -> None:
    sources = matches()
    a, c = sources[0], sources[1]
    directory = tmp_path / "rec"
    with Recorder(directory, save_every=0) as rec:
        for event in a[:5]:
            rec.append("a", event)
        before = _bytes(directory / "a.blog")

        # an unknown table, first event not seq 0: refused naming its log and the seq
        with pytest.raises(LogFormatError) as info:
            rec.append("nobody", a[3])
        assert info.value.kind == "seq" and info.value.seq == 3
        assert "nobody.blog" in str(info.value) and "expected 0" in str(info.value)
        assert not (directory / "nobody.blog").exists()

        # a wrong seq on a live table
        with pytest.raises(LogFormatError) as info:
            rec.append("a", a[7])
        assert info.value.kind == "seq" and info.value.seq == 7
        assert "a.blog" in str(info.value) and "expected 5" in str(info.value)

        # a second match started on a live table (the same match id again)
        restart = msgspec.structs.replace(a[0], seq=5)
        with pytest.raises(IllegalMoveError) as illegal:
            rec.append("a", restart)
        assert illegal.value.rule and illegal.value.seq == 5

        # an illegal move: the next event of another match
        with pytest.raises(IllegalMoveError) as illegal:
            rec.append("a", msgspec.structs.replace(c[5], seq=5))
        assert illegal.value.rule and f"[{illegal.value.rule}]" in str(illegal.value)
        assert illegal.value.seq == 5

        # a non-event
        with pytest.raises(TypeError):
            rec.append("a", {"t": "CardDrawn", "seq": 5})  # type: ignore[arg-type]

        rec.flush()
        assert _bytes(directory / "a.blog") == before  # nothing written by any of them
        assert rec.next_seq("a") == 5
        assert rec.append("a", a[5]) == 5  # the table goes on

        # a finished match: all of it, then one more event
        for event in c:
            rec.append("c", event)
        ended = _bytes(directory / "c.blog")
        extra = msgspec.structs.replace(c[-2], seq=len(c))
        with pytest.raises(ReplayError) as replay:
            rec.append("c", extra)
        assert replay.value.seq == len(c)
        rec.flush()
        assert _bytes(directory / "c.blog") == ended
        assert rec.next_seq("c") == len(c)
        assert rec.append("a", a[6]) == 6
    assert on_disk(str(directory / "a.blog")) == list(a[:7])
    assert on_disk(str(directory / "c.blog")) == list(c)


def test_a_huge_note_within_a_record_is_kept_whole_and_one_past_it_refused(tmp_path: Path) -> None:
    a = matches()[0]
    directory = tmp_path / "rec"
    with Recorder(directory, save_every=0) as rec:
        rec.append("a", a[0])
        big = msgspec.structs.replace(a[1], note="n" * (log.MAX_PAYLOAD // 2))
        assert rec.append("a", big) == 1
        huge = msgspec.structs.replace(a[2], note="n" * (log.MAX_PAYLOAD + 1))
        with pytest.raises(LogFormatError) as info:
            rec.append("a", huge)
        assert info.value.kind == "range" and info.value.seq == 2
        assert rec.append("a", a[2]) == 2
    assert on_disk(str(directory / "a.blog")) == [a[0], big, a[2]]


# -- the file size limit during group commits ---------------------------------------------------

FSIZE_CHILD = """
import resource, signal, sys
from buraco_log.errors import LogFormatError
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.sources import matches
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a signal, as a full disk
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sources = matches()
acked = {}
errors = []
with Recorder(sys.argv[1], sync=sys.argv[2], save_every=0, checkpoint_every=600) as rec:
    live = set(range(len(sources)))
    step = 0
    while live:
        futures = {t: rec.submit(f"t{t}", sources[t][step]) for t in sorted(live)
                   if step < len(sources[t])}
        for t, fut in futures.items():
            try:
                assert fut.result() == step
                acked[t] = step + 1
            except LogFormatError as exc:
                errors.append((exc.kind, str(exc)))
                live.discard(t)
        live &= set(futures)
        step += 1
        if errors and step > 400:
            break
print(repr((acked, errors)))
"""


@pytest.mark.parametrize("sync", SYNCS)
def test_a_file_size_limit_in_a_round_keeps_acknowledged_events_and_acks_nothing_torn(
        tmp_path: Path, sync: str) -> None:
    directory = tmp_path / "rec"
    limit = 120_000 if sync == "journal" else 24_000
    p = subprocess.run([sys.executable, "-c", FSIZE_CHILD, str(directory), sync, str(limit)],
                       cwd=ROOT, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    acked, errors = ast.literal_eval(p.stdout.decode())
    assert errors, "the limit was never reached"
    for kind, message in errors:
        assert kind == "io", message
        assert "File too large" in message or "recorder stops" in message or \
            "the journal failed" in message, message
    sources = matches()
    with Recorder(directory, sync=sync, save_every=0) as rec:  # no limit: the next run
        for t, events in enumerate(sources):
            name = f"t{t}"
            have = rec.next_seq(name)
            assert have >= acked.get(t, 0), (name, have, acked.get(t))
            if sync == "journal":  # "were not recorded": the refused round was cut off again
                assert have == acked.get(t, 0), (name, have, acked.get(t))
            assert on_disk(str(directory / f"{name}.blog")) == list(events[:have]) if have \
                else not (directory / f"{name}.blog").exists()
            if have < len(events):
                assert rec.append(name, events[have]) == have
    left = [n for n in os.listdir(directory) if n.startswith(".") and ".new" in n]
    assert not left, left


# -- a live table's log removed under the recorder ----------------------------------------------

@pytest.mark.parametrize("sync", SYNCS)
def test_a_log_removed_under_the_recorder_acknowledges_nothing_more(
        tmp_path: Path, sync: str) -> None:
    sources = matches()
    a, b = sources[0], sources[1]
    directory = tmp_path / "rec"
    with Recorder(directory, sync=sync, save_every=0) as rec:
        for event in a[:4]:
            rec.append("a", event)
        rec.append("b", b[0])
        os.unlink(directory / "a.blog")  # by a program that ignores the lock
        with pytest.raises(LogFormatError) as info:
            rec.append("a", a[4])
        assert info.value.kind == "io" and "a.blog" in str(info.value)
        assert "not acknowledged" in str(info.value)
        with pytest.raises(LogFormatError):
            rec.append("a", a[5])
        assert rec.append("b", b[1]) == 1  # the other table goes on
        assert not (directory / "a.blog").exists()  # no log is made up at the path
    with Recorder(directory, sync=sync, save_every=0) as rec:
        assert rec.next_seq("b") == 2
        assert on_disk(str(directory / "b.blog")) == list(b[:2])
        if (directory / "a.blog").exists():  # the journal wrote the acknowledged ones back
            assert sync == "journal"
            got = on_disk(str(directory / "a.blog"))
            assert got[:4] == list(a[:4]) and got == list(a[: len(got)])


@pytest.mark.parametrize("sync", SYNCS)
def test_a_log_removed_while_closed_refuses_the_table_until_it_is_forgotten(
        tmp_path: Path, sync: str) -> None:
    # As when it is removed while open. (It refused one move, then started the match afresh
    # at seq 0 in a new log, and with the journal a checkpoint deleted the journal that held
    # the moves acknowledged into the removed log: it checked the new one.)
    sources = matches()
    a, b = sources[0], sources[1]
    directory = tmp_path / "rec"
    with Recorder(directory, sync=sync, save_every=0, idle_timeout=0.01,
                  checkpoint_every=600) as rec:
        for event in a[:4]:
            rec.append("a", event)
        for step in range(3):
            rec.append("b", b[step])

        deadline = time.monotonic() + 5
        while rec.stats().open_handles and time.monotonic() < deadline:
            time.sleep(0.02)
        assert rec.stats().open_handles == 0
        os.unlink(directory / "a.blog")
        for event in (a[4], a[0]):  # nor does the match start afresh under the same name
            with pytest.raises(LogFormatError) as info:
                rec.append("a", event)
            assert info.value.kind == "io" and "a.blog" in str(info.value)
            assert "removed while the recorder had it closed, with the 4 events" in str(
                info.value)
        assert rec.append("b", b[3]) == 3
        assert not (directory / "a.blog").exists()
        rec.forget("a")  # the server's choice: then it is read again from disk (none there)
        assert rec.next_seq("a") == 0
        assert rec.append("a", a[0]) == 0
    assert on_disk(str(directory / "a.blog")) == [a[0]]
    assert on_disk(str(directory / "b.blog")) == list(b[:4])
    assert isinstance(a[0], ev.MatchStarted)
    if sync == "journal":  # the only copy left of the 4 acknowledged moves is kept
        assert journal.generations(str(directory), unfolded=True)


# -- a defect in a round never leaves an append waiting -----------------------------------------

class _Defective(FileOps):
    """Durability calls that raise an error no step expects (not an OSError) once armed."""

    def __init__(self) -> None:
        self.armed = False

    def _maybe(self) -> None:
        if self.armed:
            self.armed = False
            raise RuntimeError("a defect in the sync layer")

    def fsync(self, fd: int) -> None:
        self._maybe()
        super().fsync(fd)

    def syncfs(self, fd: int) -> None:
        self._maybe()
        super().syncfs(fd)

    def datasync(self, fd: int) -> None:
        self._maybe()
        super().datasync(fd)


@pytest.mark.parametrize("sync", SYNCS)
def test_a_defect_in_a_round_fails_its_appends_instead_of_leaving_them_waiting(
        tmp_path: Path, sync: str) -> None:
    # the round's appends, taken out of their tables, were never resolved: append() waited
    # forever and flush() never returned True (the doc: they fail "instead of waiting forever")
    sources = matches()
    a, b = sources[0], sources[1]
    ops = _Defective()
    directory = tmp_path / "rec"
    with Recorder(directory, sync=sync, save_every=0, ops=ops) as rec:
        rec.append("a", a[0])
        rec.append("b", b[0])
        ops.armed = True
        future = rec.submit("a", a[1])
        with pytest.raises(LogFormatError) as info:
            future.result(timeout=10)
        assert info.value.kind == "io" and "a defect in the sync layer" in str(info.value)
        assert "a.blog" in str(info.value)
        assert rec.flush(timeout=10)  # nothing left unresolved
        assert rec.stats().failed == 1
        with pytest.raises(LogFormatError):  # the table refuses from now on
            rec.append("a", a[1])
        assert rec.append("b", b[1]) == 1  # the other table goes on
    with Recorder(directory, sync=sync, save_every=0) as rec:
        assert rec.next_seq("b") == 2
        have = rec.next_seq("a")
        assert have in (1, 2)
        assert on_disk(str(directory / "a.blog")) == list(a[:have])


# -- forget racing an append to the same table -------------------------------------------------

class _HeldValidator:
    """The table's rules engine, stopping in ``step`` until let go (an append in progress,
    holding its table's lock)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.entered = threading.Event()
        self.go = threading.Event()

    def step(self, event: ev.AnyEvent) -> None:
        self.entered.set()
        assert self.go.wait(10)
        self.inner.step(event)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_forget_while_an_append_to_the_table_is_being_validated_loses_nothing(
        tmp_path: Path, sync: str) -> None:
    # the committer dropped the table while the append held its lock past its "dead" check:
    # the event went into the dropped table, whose round reopened the log and kept it locked,
    # so the table loaded afresh was refused ("locked") until the idle timeout closed it
    a = matches()[0]
    directory = tmp_path / "rec"
    with Recorder(directory, sync=sync, save_every=0, max_open=40) as rec:
        for event in a[:4]:
            rec.append("a", event)
        rec.forget("a")  # closed: the next round reopens the log
        deadline = time.monotonic() + 5
        while "a" in rec._tables and time.monotonic() < deadline:
            time.sleep(0.01)
        assert rec.next_seq("a") == 4
        table = rec._tables["a"]
        held = _HeldValidator(table.validator)
        table.validator = held
        result: list[object] = []
        thread = threading.Thread(target=lambda: result.append(rec.append("a", a[4])))
        thread.start()
        try:
            assert held.entered.wait(10)
            # an abandoned match, say: while its last move is checked (forget waits for it)
            forgetter = threading.Thread(target=rec.forget, args=("a",))
            forgetter.start()
            forgetter.join(0.2)
        finally:
            held.go.set()
            thread.join(10)
        forgetter.join(10)
        assert result == [4]
        assert "a" not in rec._tables  # dropped once that move was durable
        assert rec.append("a", a[5]) == 5  # refused as "locked" before
        assert rec.next_seq("a") == 6
    assert on_disk(str(directory / "a.blog")) == list(a[:6])


# -- close racing an append ---------------------------------------------------------------------

@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_an_append_being_validated_while_the_recorder_closes_is_refused_not_left_waiting(
        tmp_path: Path, sync: str) -> None:
    # the append had passed its "closed" check; the committer, told to close, found nothing
    # to do and ended; the append then queued its event, and its future was never resolved
    a = matches()[0]
    directory = tmp_path / "rec"
    rec = Recorder(directory, sync=sync, save_every=0)
    for event in a[:4]:
        rec.append("a", event)
    table = rec._tables["a"]
    held = _HeldValidator(table.validator)
    table.validator = held
    future: list[Any] = []
    errors: list[BaseException] = []

    def submit() -> None:
        try:
            future.append(rec.submit("a", a[4]))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=submit)
    thread.start()
    try:
        assert held.entered.wait(10)
        closer = threading.Thread(target=rec.close)
        closer.start()
        closer.join(0.5)  # close waits for nothing it was given: done, or about to be
    finally:
        held.go.set()
        thread.join(10)
    closer.join(10)
    assert not closer.is_alive()
    if future:  # accepted before close took it in: then it is durable
        assert future[0].result(timeout=10) == 4
        kept = 5
    else:
        assert isinstance(errors[0], LogFormatError) and errors[0].kind == "closed", errors
        kept = 4
    assert on_disk(str(directory / "a.blog")) == list(a[:kept])
    with Recorder(directory, sync=sync, save_every=0) as rec:  # the saved state is right too
        assert rec.next_seq("a") == kept
        assert rec.append("a", a[kept]) == kept
    assert on_disk(str(directory / "a.blog")) == list(a[:kept + 1])


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_an_append_being_validated_when_the_committer_stops_on_a_defect_fails(
        tmp_path: Path) -> None:
    # the same race with a committer that stopped on a defect: the append had passed its
    # check of that, queued its event after the committer had failed the queued ones and
    # ended, and waited forever
    a, b = matches()[0], matches()[1]
    directory = tmp_path / "rec"
    rec = Recorder(directory, save_every=0)
    try:
        for event in a[:4]:
            rec.append("a", event)
        rec.append("b", b[0])
        table = rec._tables["a"]
        held = _HeldValidator(table.validator)
        table.validator = held
        result: list[BaseException | int] = []

        def append() -> None:
            try:
                result.append(rec.append("a", a[4]))
            except BaseException as exc:
                result.append(exc)

        thread = threading.Thread(target=append)
        thread.start()
        try:
            assert held.entered.wait(10)

            def defect() -> float | None:
                raise RuntimeError("a defect in the committer")

            rec._idle_wait = defect  # type: ignore[method-assign]
            with rec._cv:  # wakes the committer, which stops on the defect
                rec._wake.notify()
            rec._committer.join(10)
            assert not rec._committer.is_alive()
        finally:
            held.go.set()
            thread.join(10)
        assert not thread.is_alive(), "the append waits forever"
        assert isinstance(result[0], LogFormatError) and result[0].kind == "io", result
        assert "a defect in the committer" in str(result[0])
    finally:
        rec.close()
    assert on_disk(str(directory / "a.blog")) == list(a[:4])


# -- a directory the recorder creates -----------------------------------------------------------

class _DirSyncs(FileOps):
    """Records the (device, inode) of every directory fsynced."""

    def __init__(self) -> None:
        self.dirs: list[tuple[int, int]] = []

    def fsync_dir(self, fd: int) -> None:
        st = os.fstat(fd)
        self.dirs.append((st.st_dev, st.st_ino))
        super().fsync_dir(fd)


def _ident(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def test_the_directories_a_recorder_creates_are_durable_before_an_acknowledgement(
        tmp_path: Path) -> None:
    # makedirs created the log directory (and its missing parents), and only the log
    # directory itself was ever fsynced: a power loss could take the directory's own name,
    # and with it every acknowledged move of every table in it
    ops = _DirSyncs()
    directory = tmp_path / "x" / "y" / "rec"
    with Recorder(directory, save_every=0, ops=ops) as rec:
        rec.append("a", matches()[0][0])
        for parent in (tmp_path, tmp_path / "x", tmp_path / "x" / "y"):
            assert _ident(parent) in ops.dirs, parent
        assert _ident(directory) in ops.dirs
    ops.dirs.clear()
    with Recorder(directory, save_every=0, ops=ops):  # it exists: its parent is not synced
        assert _ident(directory / "..") not in ops.dirs


# -- a crash while a journal is being written back ----------------------------------------------

JOURNAL_CHILD = """
import os, signal, sys
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches
a = matches()[0]
rec = Recorder(sys.argv[1], sync="journal", checkpoint_every=600, save_every=600)
for event in a[:12]:
    rec.append("a", event)
os.write(1, b"acked\\n")
os.kill(os.getpid(), signal.SIGKILL)
"""

KILLED_IN_RECOVERY = """
import os, signal, sys
real_link = os.link
def link(src, dst, *args, **kwargs):
    real_link(src, dst, *args, **kwargs)
    if dst.endswith("a.blog"):  # killed right after the log's name is back
        os.kill(os.getpid(), signal.SIGKILL)
os.link = link
from buraco_log.recorder import Recorder
Recorder(sys.argv[1], sync="journal")
"""


def test_a_crash_while_a_lost_log_is_created_again_from_the_journal_loses_nothing(
        tmp_path: Path) -> None:
    # writing a journal back, a log whose name a power loss took was linked with its first
    # record alone, then written: killed in between, the next recorder found another file
    # than the records name, kept the journal aside (a "conflict"), and the log held one event
    # of 12 acknowledged
    directory = tmp_path / "rec"
    p = subprocess.run([sys.executable, "-c", JOURNAL_CHILD, str(directory)], cwd=ROOT,
                       capture_output=True, timeout=60)
    assert p.stdout == b"acked\n", p.stderr.decode()[-2000:]
    # a power loss took its name (the journal holds all); the file is kept elsewhere, so that
    # the file created again cannot reuse its inode number and pass for it
    os.rename(directory / "a.blog", tmp_path / "lost.blog")
    p = subprocess.run([sys.executable, "-c", KILLED_IN_RECOVERY, str(directory)], cwd=ROOT,
                       capture_output=True, timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr.decode()[-2000:]
    assert (directory / "a.blog").exists()
    a = matches()[0]
    with Recorder(directory, sync="journal", save_every=0) as rec:
        assert rec.next_seq("a") == 12
        assert rec.append("a", a[12]) == 12
    assert on_disk(str(directory / "a.blog")) == list(a[:13])
    assert not journal.generations(str(directory), unfolded=True)


def test_records_of_an_earlier_log_of_the_same_inode_number_are_not_written_back(
        tmp_path: Path) -> None:
    # a log removed and its match started afresh within one journal: the new file may get the
    # old one's inode number again (ext4 reuses it at once), so the records of both named "the
    # same file", and the old log's bytes were written back over the new one (its events, then
    # the old log's tail after them: a log no reader gets through). A record at offset 0 starts
    # a new file: the records before it are of an earlier one, and spent.
    a, c = matches()[0], matches()[1]
    directory = tmp_path / "rec"
    directory.mkdir()
    old = tmp_path / "old.blog"
    log.write_log(old, c[:30])
    path = directory / "a.blog"
    log.write_log(path, a[:2])
    new_bytes = path.read_bytes()
    st = os.stat(path)
    records = [journal.Record("a", st.st_dev, st.st_ino, 0, old.read_bytes()),
               journal.Record("a", st.st_dev, st.st_ino, 0, new_bytes)]
    assert len(records[0].data) > len(new_bytes)
    (directory / journal.name_of(1)).write_bytes(journal.header() + journal.frame(records))
    with Recorder(directory, sync="journal", save_every=0) as rec:
        assert path.read_bytes() == new_bytes
        assert rec.next_seq("a") == 2
        assert rec.append("a", a[2]) == 2
    assert on_disk(str(path)) == list(a[:3])
    assert not journal.generations(str(directory), unfolded=True)


# -- a live table's log made read-only ----------------------------------------------------------

READ_ONLY_CHILD = """
import ctypes, os, sys, time
from buraco_log import journal, log, reducer  # imported before giving up root: the
from buraco_log.recorder import Recorder      # interpreter's own files are root's
from tests.recorder.sources import matches
a, b = matches()[0], matches()[1]
directory, sync = sys.argv[1], sys.argv[2]
os.setgid(65534)
os.setuid(65534)  # nobody: a file's mode binds (root writes read-only files)
path = os.path.join(directory, "a.blog")
out = []
with Recorder(directory, save_every=0, sync=sync, idle_timeout=0.01) as rec:
    for event in a[:3]:
        rec.append("a", event)
    rec.append("b", b[0])
    deadline = time.monotonic() + 5
    while rec.stats().open_handles and time.monotonic() < deadline:
        time.sleep(0.01)
    os.chmod(path, 0o444)  # while the recorder has it closed
    try:
        rec.append("a", a[3])
        out.append("acked")
    except Exception as exc:
        out.append(f"{type(exc).__name__}|{getattr(exc, 'kind', '')}|{exc}")
    out.append(str(rec.append("b", b[1])))
    os.chmod(path, 0o644)
    out.append(str(rec.append("a", a[3])))
print(repr(out))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_a_log_made_read_only_while_closed_is_refused_naming_it_and_nothing_else_stops(
        sync: str) -> None:
    import shutil
    import tempfile

    top = tempfile.mkdtemp(prefix="rec4-ro-")  # pytest's own temporary tree is root's alone
    try:
        os.chmod(top, 0o777)
        p = subprocess.run([sys.executable, "-c", READ_ONLY_CHILD, os.path.join(top, "rec"),
                            sync], cwd=ROOT, capture_output=True, timeout=60)
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        refused, b1, a3 = ast.literal_eval(p.stdout.decode())
        name, kind, message = refused.split("|", 2)
        assert (name, kind) == ("LogFormatError", "io"), refused
        assert "a.blog" in message and "Permission denied" in message, message
        assert (b1, a3) == ("1", "3")  # the other table went on; then this one, made writable
        assert on_disk(os.path.join(top, "rec", "a.blog")) == list(matches()[0][:4])
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("knob", ["idle_timeout", "save_every", "checkpoint_every"])
def test_a_nan_interval_is_refused_at_once(tmp_path: Path, knob: str) -> None:
    # idle_timeout=nan closed every log after every round (each move reopened its log), and
    # checkpoint_every=nan checkpointed the journal every round; both said nothing
    with pytest.raises(ValueError, match=knob):
        Recorder(tmp_path / "rec", sync="journal", **{knob: float("nan")})
    with Recorder(tmp_path / "rec", sync="journal") as rec:  # nothing was held
        assert rec.next_seq("a") == 0
