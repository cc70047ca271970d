"""Fault probes of the recorder, round 43: a restart that cried wolf, a forget that waited on
other threads, and power losses at random moments with the fixed power-loss layer.

After the failed journal append of a log that a seal rewrote while the recorder had it closed
(or a power loss between that log's adoption and its journal append), the journal's records
of the log named the old file: the restart took them for a conflict and kept the journal aside
as ``*.unfolded``, though the log held every event of them. A record naming another file is now
spent when the log at its path holds each of its events at its seq.

Also: the round journaled a closed log's segment naming the file it had closed, and a power
loss before the record of the sealed file it found was synced kept the journal aside; it now
stats the path first. ``forget`` racing the commit thread's close of the same idle log let the
match be read afresh while its log was still locked. Power losses at random moments (torn
writebacks) with seals of closed logs, checkpoints, one or two descriptors, and a second power
loss during the restart's write-back; logs removed and created again under their reused inode
number, while the recorder has them closed and while it is stopped.

``forget(match)`` waited until no append of the match was unsettled: while another thread (or a
done-callback) kept appending, for as long as that went on. It now takes the table out of the
lookup at once and waits only for the appends accepted before it; a later append reads the
match afresh from its log once those are durable (on the commit thread, which cannot wait for
itself, it is refused as ``locked``).
"""

from __future__ import annotations

import json
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

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.powerloss import Imaging, PowerLossOps, check_image, restore, seal_now
from tests.recorder.scripts import ADOPTED_CHILD
from tests.recorder.sources import matches, on_disk, source_of

ROOT = Path(__file__).resolve().parents[2]
src = matches()[0]
other = matches()[1]


def _unfolded(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".unfolded")]


# -- 1a: no .unfolded for a log a seal rewrote -----------------------------------------------------

def test_a_failed_journal_append_for_an_adopted_log_keeps_no_journal_aside(
        tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", ADOPTED_CHILD, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert "journal failed" in json.loads(done.stdout)["a"]
    assert journal.generations(str(tmp_path))  # the crash left the journal to write back
    with Recorder(tmp_path, sync="journal") as rec:
        assert rec.stats().journal_conflicts == 0
        assert rec.append("a", src[5]) == 5 and rec.append("b", other[5]) == 5
    assert _unfolded(tmp_path) == []  # the log holds every event its old file's records do
    assert log.read_events(tmp_path / "a.blog") == list(src[:6])
    assert log.read_events(tmp_path / "b.blog") == list(other[:6])


def test_records_of_a_rewritten_log_that_lacks_one_of_their_events_are_still_a_conflict(
        tmp_path: Path) -> None:
    # the other side: the rewrite must hold every event of the records, else they are kept
    rec = Recorder(tmp_path, sync="journal", sealed=False, checkpoint_every=600, save_every=0)
    for event in src[:6]:
        rec.append("a", event)
    kept = tmp_path / "journal.copy"
    kept.write_bytes(Path(journal.generations(str(tmp_path))[-1][1]).read_bytes())
    rec.close()
    os.unlink(tmp_path / "a.blog")
    log.write_log(tmp_path / "a.blog", src[:5], validate=False)  # another file, one short
    os.replace(kept, tmp_path / journal.name_of(1))
    with Recorder(tmp_path, sync="journal") as again:
        assert again.stats().journal_conflicts > 0
    assert len(_unfolded(tmp_path)) == 1


class _ImageAtAppend(PowerLossOps):
    """Takes the image at the ``at``-th journal append after it is armed, before it is made."""

    def __init__(self, directory: str) -> None:
        super().__init__(directory)
        self.at = 0
        self.snap: tuple[dict[str, bytes], dict[str, int]] | None = None

    def append(self, fd: int, data: bytes) -> None:
        if self.at:
            self.at -= 1
            if not self.at:
                self.snap = self.image(), dict(self.imaged_names)
        super().append(fd, data)


def test_a_power_loss_before_a_sealed_logs_record_is_journaled_keeps_no_journal_aside(
        tmp_path: Path) -> None:
    # the round journaled the closed log's segment naming the file it had closed; its thread
    # found the log sealed meanwhile, adopted the new file and journaled the segment again,
    # naming it. The power went between the two: the first record (never acknowledged) named
    # the old file, with an event the sealed log lacks, and the journal was kept aside.
    ops = _ImageAtAppend(str(tmp_path))
    rec = Recorder(tmp_path, sync="journal", ops=ops, sealed=False, idle_timeout=0.01,
                   save_every=0, checkpoint_every=600)
    for event in src[:5]:
        rec.append("a", event)
    while rec.stats().open_handles:
        time.sleep(0.01)
    log.seal(tmp_path / "a.blog")  # by another program, while the recorder has it closed
    ops.record(tmp_path / "a.blog")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        ops.fsync_dir(fd)
    finally:
        os.close(fd)
    ops.at = 1  # the round's one append (the log is reopened, and adopted, before it)
    assert rec.append("a", src[5]) == 5
    rec.close()
    assert ops.snap is not None
    restore(str(tmp_path), *ops.snap)
    with Recorder(tmp_path, sync="journal") as again:
        assert again.stats().journal_conflicts == 0
        assert again.next_seq("a") == 5  # never acknowledged: its record was not synced
    assert _unfolded(tmp_path) == []
    assert log.read_events(tmp_path / "a.blog") == list(src[:5])


# -- 1b: forget returns while another thread keeps appending -------------------------------------

def test_forget_returns_while_done_callbacks_keep_appending_and_they_are_refused_then(
        tmp_path: Path) -> None:
    # each acknowledgement submits the next move from the commit thread: the match was never
    # without an unsettled append, and forget waited until the match ended (seconds)
    refused: list[LogFormatError] = []
    acked: list[int] = []
    with Recorder(tmp_path, sync="journal", window=0.02, save_every=0) as rec:
        def chain(future: Future[int]) -> None:
            seq = future.result()
            acked.append(seq)
            try:
                rec.submit("a", src[seq + 1]).add_done_callback(chain)
            except LogFormatError as exc:
                refused.append(exc)

        rec.append("a", src[0])
        rec.submit("a", src[1]).add_done_callback(chain)
        while len(acked) < 5:
            time.sleep(0.005)
        began = time.monotonic()
        rec.forget("a")
        took = time.monotonic() - began
        assert took < 1.0, took
        assert "a" not in rec._tables
        deadline = time.monotonic() + 5
        while not refused and time.monotonic() < deadline:
            time.sleep(0.005)
        assert len(refused) == 1 and refused[0].kind == "locked", refused
        assert "forget() returns" in str(refused[0]) and "\n" not in str(refused[0])
        seq = rec.next_seq("a")  # read afresh: the acked moves, none lost, none twice
        assert seq == acked[-1] + 1
        assert rec.append("a", src[seq]) == seq
    assert on_disk(str(tmp_path / "a.blog")) == list(src[:seq + 1])


def test_forget_returns_while_another_thread_appends_and_its_appends_read_the_match_afresh(
        tmp_path: Path) -> None:
    stop = threading.Event()
    errors: list[BaseException] = []
    acked: list[int] = []

    with Recorder(tmp_path, sync="journal", window=0.005, save_every=0) as rec:
        def appender() -> None:
            try:
                while not stop.is_set():
                    futures = [rec.submit("a", src[rec.next_seq("a")])]
                    futures.append(rec.submit("a", src[futures[0].result() + 1]))
                    acked.extend(f.result() for f in futures)
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=appender)
        thread.start()
        while len(acked) < 6:
            time.sleep(0.005)
        loaded = rec.stats().loaded
        tables = set()
        for _ in range(5):
            tables.add(id(rec._tables.get("a")))
            began = time.monotonic()
            rec.forget("a")
            assert time.monotonic() - began < 1.0
            time.sleep(0.02)
        stop.set()
        thread.join(10)
        assert errors == [] and not thread.is_alive()
        assert rec.stats().loaded > loaded  # read afresh after a forget
    assert acked == list(range(len(acked)))  # none lost, none twice
    assert on_disk(str(tmp_path / "a.blog")) == list(src[:len(acked)])


# -- 2: power losses at random moments ------------------------------------------------------------


def _power_loss_run(tmp_path: Path, rng: random.Random, run: int) -> int:
    """Record on 6 tables (max_open small), sealing closed logs now and then, checkpointing
    often; the power goes at a random durability call. Restart on the image; check."""
    directory = tmp_path / f"run{run}"
    directory.mkdir()
    acked: dict[str, int] = {}
    ops = Imaging(str(directory), rng.randint(3, 60), rng, acked)
    rec = Recorder(directory, ops=ops, sync=rng.choice(["journal", "journal", "fsync"]),
                   max_open=rng.choice([2, 40]), idle_timeout=rng.choice([0.005, 60.0]),
                   sealed=False, save_every=rng.choice([0.0, 0.01]),
                   checkpoint_every=rng.choice([0.0, 0.01, 600.0]))
    names = [f"t{i}" for i in range(6)]
    sources = {name: source_of(name, matches()) for name in names}
    for step in range(rng.randint(6, 14)):
        futures = {n: rec.submit(n, sources[n][step]) for n in names}
        for n, f in futures.items():
            acked[n] = f.result(timeout=30)
        if rng.random() < 0.4:  # a seal of a log the recorder has closed (or a no-op)
            seal_now(directory, rng.choice(names), ops)
        if ops.snap is not None and rng.random() < 0.3:
            break
    rec.close()
    if ops.snap is None:
        return 0
    image, inodes, acked_then = ops.snap
    restore(str(directory), image, inodes)
    if rng.random() < 0.5:  # the power goes again, while the restart writes the journal back
        during = Imaging(str(directory), rng.randint(1, 12), rng, {})
        Recorder(directory, sync=rng.choice(["journal", "fsync"]), ops=during,
                 save_every=0).close()
        if during.snap is not None:
            restore(str(directory), *during.snap[:2])
    with Recorder(directory, sync="journal") as again:  # writes the journal back
        for name in names:
            seq = again.next_seq(name)
            assert again.append(name, sources[name][seq]) == seq
    check_image(directory, acked_then, sources)
    return sum(v + 1 for v in acked_then.values())


def test_power_losses_at_random_moments_with_seals_checkpoints_and_few_descriptors(
        tmp_path: Path) -> None:
    rng = random.Random("rec43")
    assert sum(_power_loss_run(tmp_path, rng, run) for run in range(6)) > 0


@pytest.mark.slow
def test_power_losses_at_150_random_moments(tmp_path: Path) -> None:
    rng = random.Random("rec43-slow")
    assert sum(_power_loss_run(tmp_path, rng, run) for run in range(150)) > 500


# -- 3: a log removed and created again while closed reuses its inode number ---------------------

def test_a_log_removed_and_created_again_while_closed_is_never_written_into(
        tmp_path: Path) -> None:
    # ext4 gives the removed log's inode number to the next file at once: the recorder's
    # reopening must not take the new file for its log (same device and inode)
    rec = Recorder(tmp_path, sync="journal", idle_timeout=0.005, save_every=0,
                   checkpoint_every=600)
    for event in src[:5]:
        rec.append("a", event)
    while rec.stats().open_handles:
        time.sleep(0.01)
    before = os.stat(tmp_path / "a.blog").st_ino
    size = os.path.getsize(tmp_path / "a.blog")
    os.unlink(tmp_path / "a.blog")
    log.write_log(tmp_path / "a.blog", other[:5], validate=False)  # another match, same name
    with open(tmp_path / "a.blog", "r+b") as f:  # and the same size
        f.truncate(size)
    reused = os.stat(tmp_path / "a.blog").st_ino == before
    with pytest.raises(LogFormatError) as caught:
        rec.append("a", src[5])
    assert "changed while the recorder had it closed" in str(caught.value)
    rec.close()
    assert on_disk(str(tmp_path / "a.blog"))[:1] == [other[0]]  # not written into
    if not reused:  # (ext4 reuses the number at once; another file system may not)
        pytest.skip("the file system did not give the removed log's inode number again")


def test_a_withdrawal_naming_a_file_no_record_named_spends_the_logs_earlier_records() -> None:
    # an adoption: the records of the old file (7) are spent, the power loss having torn the
    # new file's record after the withdrawal; a refused new log (9, named before its
    # withdrawal) withdraws its own record only, as before
    old = [journal.Record("a", 1, 7, 0, b"h"), journal.Record("a", 1, 7, 1, b"s")]
    adopted = journal.withdrawal(journal.Record("a", 1, 8, 0, b""))
    assert journal.withdraw([*old, adopted]) == []
    refused = journal.Record("a", 1, 9, 0, b"n")
    assert journal.withdraw([*old, refused, journal.withdrawal(refused)]) == old


# -- forget racing the commit thread's close of the same idle log --------------------------------

class _StallAfterTaking:
    """``_fd_lock`` that, on the commit thread, waits after letting go once it took ``table``'s
    descriptor: there the old ``_close_fd`` had yet to close it."""

    def __init__(self, rec: Recorder, table: object) -> None:
        self.lock = threading.Lock()
        self.rec, self.table = rec, table
        self.stalled, self.go = threading.Event(), threading.Event()

    def __enter__(self) -> None:
        self.lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self.lock.release()
        if (threading.current_thread() is self.rec._committer and not self.stalled.is_set()
                and self.table.fd is None):  # type: ignore[attr-defined]
            self.stalled.set()
            assert self.go.wait(10)


def test_forget_racing_the_commit_threads_close_of_the_idle_log_leaves_it_unlocked(
        tmp_path: Path) -> None:
    # the committer took the idle log's descriptor to close it; forget found none to close and
    # returned, and the match read afresh met its log still locked
    with Recorder(tmp_path, sync="journal", idle_timeout=60, save_every=0) as rec:
        for event in src[:3]:
            rec.append("a", event)
        stall = _StallAfterTaking(rec, rec._tables["a"])
        rec._fd_lock = stall  # type: ignore[assignment]
        rec.idle_timeout = 0.001
        time.sleep(0.01)
        rec.append("b", other[0])  # its round closes the idle log of "a" after it
        try:
            assert stall.stalled.wait(10)
            rec.forget("a")
            assert rec.next_seq("a") == 3  # read afresh: not "another writer holds this log"
            with log.LogLock(tmp_path / "a.blog"):
                pass
        finally:
            stall.go.set()
        assert rec.append("a", src[3]) == 3
    assert on_disk(str(tmp_path / "a.blog")) == list(src[:4])


@pytest.mark.parametrize("what", ["another match", "the same bytes"])
def test_a_log_removed_and_created_again_while_stopped_gets_the_journal_only_if_it_is_the_log(
        tmp_path: Path, what: str) -> None:
    # the journal's records name the log by (device, inode), and ext4 gives a removed file's
    # number to the next file at once: a file created in its place while the recorder was
    # stopped takes the records only where it holds their bytes (or a power loss's zeros)
    ops = PowerLossOps(str(tmp_path))
    rec = Recorder(tmp_path, sync="journal", ops=ops, checkpoint_every=600, save_every=0)
    for event in src[:6]:
        rec.append("a", event)
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        ops.fsync_dir(fd)  # the log's name is durable, none of its bytes
    finally:
        os.close(fd)
    image = ops.image()  # the power goes: the log's bytes are in the journal only
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)
    path = tmp_path / "a.blog"
    number, before = os.stat(path).st_ino, path.read_bytes()
    assert before == b""
    os.unlink(path)
    if what == "another match":
        log.write_log(path, other[:3], validate=False)
    else:
        path.write_bytes(before)
    reused = os.stat(path).st_ino == number
    mine = path.read_bytes()
    with Recorder(tmp_path, sync="journal") as again:
        conflicts = again.stats().journal_conflicts
    if what == "another match":
        assert path.read_bytes() == mine and conflicts > 0  # not written into: kept aside
        assert len(_unfolded(tmp_path)) == 1
    if not reused:  # (ext4 reuses the number at once, unless another process's new file took
        # it first; another file system may not): the records name a file that is gone
        pytest.skip("the file system did not give the removed log's inode number again")
    if what == "the same bytes":  # the log itself (its name was lost or copied back): completed
        assert conflicts == 0 and _unfolded(tmp_path) == []
        assert log.read_events(path) == list(src[:6])
