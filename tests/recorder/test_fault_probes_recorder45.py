"""Fault probes of the recorder, round 45.

- A ``seal`` by another program between a journal round's look at a closed log and its
  reopening: the round's record named the file the path showed, the seal renamed its file over
  the log, and a power loss right after the round's sync left a record of the old file with an
  event the sealed log lacks. The restart kept the journal aside as ``*.unfolded`` with nothing
  lost. A journal round now reopens its closed logs under their locks before the journal names
  their files: the seal is refused (the recorder holds the log) or comes after, and sees the
  record.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.powerloss import Imaging, PowerLossOps, check_image, restore, seal_now
from tests.recorder.sources import matches, source_of

ROOT = Path(__file__).resolve().parents[2]
src = matches()[0]
other = matches()[1]

_SEAL = ("import sys\nfrom buraco_log import log\nfrom buraco_log.errors import LogFormatError\n"
         "try:\n    log.seal(sys.argv[1])\nexcept LogFormatError as exc:\n"
         "    print(exc.kind)\n    sys.exit(3)\n")


def _seal_in_another_process(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _SEAL, str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)


def _unfolded(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".unfolded")]


class _SealDuringRound(PowerLossOps):
    """At the armed journal append, another process seals the closed log first (the round has
    looked at it, and its write thread is held until then); the power is lost right after that
    round's journal sync."""

    def __init__(self, directory: str, log_path: Path) -> None:
        super().__init__(directory)
        self.log_path = log_path
        self.armed = False
        self.sealed: subprocess.CompletedProcess[str] | None = None
        self.snap: tuple[dict[str, bytes], dict[str, int]] | None = None
        self.go = threading.Event()
        self._synced = False

    def append(self, fd: int, data: bytes) -> None:
        if self.armed:
            self.armed = False
            self.sealed = _seal_in_another_process(self.log_path)
            if self.sealed.returncode == 0:  # its fsyncs, as the disk keeps them
                self.record(self.log_path)
                dir_fd = os.open(self.directory, os.O_RDONLY)
                try:
                    self.fsync_dir(dir_fd)
                finally:
                    os.close(dir_fd)
            self._synced = True
            self.go.set()
        super().append(fd, data)

    def datasync(self, fd: int) -> None:
        super().datasync(fd)
        if self._synced and self.snap is None:
            self.snap = self.image(), dict(self.imaged_names)


@pytest.mark.parametrize("sealed", [False, True])
def test_a_seal_during_a_journal_round_then_a_power_loss_keeps_no_journal_aside(
        tmp_path: Path, sealed: bool) -> None:
    ops = _SealDuringRound(str(tmp_path), tmp_path / "a.blog")
    rec = Recorder(tmp_path, sync="journal", ops=ops, sealed=sealed, idle_timeout=0.01,
                   save_every=0, checkpoint_every=600)
    for event in src[:5]:
        rec.append("a", event)
    while rec.stats().open_handles:  # closed as idle
        time.sleep(0.01)
    real_io = rec._io

    def held_io(*args: Any) -> None:  # the write thread waits for the seal (at most 10 s)
        ops.go.wait(10)
        real_io(*args)

    rec._io = held_io  # type: ignore[method-assign]
    ops.armed = True
    assert rec.append("a", src[5]) == 5  # acknowledged: it must survive the power loss
    rec._io = real_io  # type: ignore[method-assign]
    rec.close()
    assert ops.sealed is not None and ops.snap is not None
    # the seal met the round: refused, the recorder holding the log (or before, the old way,
    # done, the round's record naming the old file)
    assert ops.sealed.returncode in (0, 3), ops.sealed.stderr
    restore(str(tmp_path), *ops.snap)
    with Recorder(tmp_path, sync="journal") as again:
        assert again.stats().journal_conflicts == 0
        assert again.next_seq("a") == 6
    assert _unfolded(tmp_path) == []
    assert log.read_events(tmp_path / "a.blog") == list(src[:6])


def _power_loss_with_seals_during_rounds(tmp_path: Path, rng: random.Random, run: int) -> int:
    """Six tables in journal mode with two descriptors (every round reopens closed logs), a
    thread sealing random logs all the while (each seal and its fsyncs recorded at once, no
    image between), and the power lost at a random durability call. The restart keeps no
    journal aside and every acknowledged event is in its log once. Returns the events
    acknowledged before the power went."""
    directory = tmp_path / f"run{run}"
    directory.mkdir()
    acked: dict[str, int] = {}
    ops = Imaging(str(directory), rng.randint(10, 80), rng, acked)
    rec = Recorder(directory, ops=ops, sync="journal", max_open=1, sealed=rng.random() < 0.5,
                   save_every=0, checkpoint_every=rng.choice([0.02, 600.0]))
    names = [f"t{i}" for i in range(6)]
    sources = {name: source_of(name, matches()) for name in names}
    stop = threading.Event()

    def sealer() -> None:
        pick = random.Random(run)
        while not stop.is_set():
            seal_now(directory, pick.choice(names), ops)
            time.sleep(pick.uniform(0, 0.002))

    for name in names:
        acked[name] = rec.append(name, sources[name][0])
    thread = threading.Thread(target=sealer)
    thread.start()
    try:
        for _ in range(200):
            if ops.snap is not None:
                break
            futures = {}
            for n in rng.sample(names, 3):
                try:
                    futures[n] = rec.submit(n, sources[n][acked[n] + 1])
                except LogFormatError as exc:  # read afresh while a seal held it
                    assert exc.kind == "locked", exc
            for n, f in futures.items():
                try:
                    acked[n] = f.result(timeout=30)
                except LogFormatError as exc:  # a seal held the closed log: sent again
                    assert exc.kind == "locked", exc
    finally:
        stop.set()
        thread.join()
    rec.close()
    assert ops.snap is not None
    image, inodes, acked_then = ops.snap
    restore(str(directory), image, inodes)
    with Recorder(directory, sync="journal") as again:
        assert again.stats().journal_conflicts == 0, run
        for name in names:
            seq = again.next_seq(name)
            assert again.append(name, sources[name][seq]) == seq
    check_image(directory, acked_then, sources)
    return sum(v + 1 for v in acked_then.values())


def test_power_losses_while_logs_are_sealed_during_journal_rounds_keep_no_journal_aside(
        tmp_path: Path) -> None:
    rng = random.Random("rec45")
    assert sum(_power_loss_with_seals_during_rounds(tmp_path, rng, run)
               for run in range(4)) > 0


@pytest.mark.slow
def test_power_losses_at_100_moments_while_logs_are_sealed_during_journal_rounds(
        tmp_path: Path) -> None:
    rng = random.Random("rec45-slow")
    assert sum(_power_loss_with_seals_during_rounds(tmp_path, rng, run)
               for run in range(100)) > 500


def test_a_journal_round_reopens_its_closed_logs_before_the_journal_names_them(
        tmp_path: Path) -> None:
    # the record of a closed log names the file the recorder holds locked at that moment
    seen: list[tuple[int, int] | None] = []

    class Ops(PowerLossOps):
        def append(self, fd: int, data: bytes) -> None:
            held = rec._tables["a"].fd
            seen.append(None if held is None else (os.fstat(held).st_dev,
                                                  os.fstat(held).st_ino))
            super().append(fd, data)

    ops = Ops(str(tmp_path))
    rec = Recorder(tmp_path, sync="journal", ops=ops, idle_timeout=0.01, save_every=0,
                   checkpoint_every=600)
    rec.append("a", src[0])
    while rec.stats().open_handles:
        time.sleep(0.01)
    seen.clear()
    rec.append("a", src[1])
    st = os.stat(tmp_path / "a.blog")
    assert seen == [(st.st_dev, st.st_ino)]
    records = journal.read(journal.generations(str(tmp_path))[-1][1])
    assert (records[-1].device, records[-1].inode) == (st.st_dev, st.st_ino)
    rec.close()


# -- a table read afresh from a log whose inode number a seal gave back ---------------------------

def _seal_in_place(tmp_path: Path, path: Path, ops: PowerLossOps) -> None:
    """Seal the log into its own inode number (what a second seal given the number the first
    freed does), durably, as a seal leaves it."""
    copy = tmp_path / "copy.blog"
    copy.write_bytes(path.read_bytes())
    log.seal(copy)
    inode = path.stat().st_ino
    with open(path, "r+b") as f:
        f.write(copy.read_bytes())
        f.truncate()
        os.fsync(f.fileno())
    assert path.stat().st_ino == inode
    ops.record(path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        ops.fsync_dir(dir_fd)  # its name too, as the seal's own directory fsync leaves it
    finally:
        os.close(dir_fd)


@pytest.mark.parametrize("how", ["forget", "locked"])
def test_a_table_read_afresh_after_its_log_was_sealed_in_its_inode_survives_a_power_loss(
        tmp_path: Path, how: str) -> None:
    # The journal held the first table's records of the log (its unsealed bytes); the table
    # was dropped (forgotten, or refused while a seal held the log) and read afresh from the
    # sealed file, which had the same inode number, and its records named that number too.
    # After a power loss the write-back took all of them for one file, found the sealed bytes
    # where the first records said otherwise, and kept the journal aside: the acknowledged
    # move was lost.
    directory = tmp_path / "logs"
    directory.mkdir()
    ops = PowerLossOps(str(directory))
    path = directory / "t.blog"
    rec = Recorder(directory, sync="journal", ops=ops, sealed=False, idle_timeout=0.01,
                   save_every=0, checkpoint_every=600)
    for seq in range(6):
        rec.append("t", src[seq])
    while rec.stats().open_handles:
        time.sleep(0.005)
    if how == "forget":
        rec.forget("t")
    else:
        with log.LogLock(path), pytest.raises(LogFormatError, match="another writer holds"):
            rec.append("t", src[6])  # a seal holds the closed log: the move is refused
    _seal_in_place(tmp_path, path, ops)
    assert rec.append("t", src[6]) == 6  # read afresh from the sealed file: acknowledged
    image = ops.image()  # the power goes now: the new segment is in the journal alone
    rec.close()
    restore(str(directory), image, ops.imaged_names)
    with Recorder(directory, sync="journal", save_every=0) as again:
        assert (again.stats().journal_conflicts, again.next_seq("t")) == (0, 7)
    assert _unfolded(directory) == []
    assert log.read_events(path) == list(src[:7])


# -- stats under load ------------------------------------------------------------------------------

def test_open_handles_counts_a_log_until_its_descriptor_is_closed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ``open_handles`` dropped to 0 before the idle log's descriptor was closed: a program
    # that waited for it and then sealed the log was refused ("another writer holds this log")
    rec = Recorder(tmp_path, idle_timeout=0.05, save_every=0)
    path = str(tmp_path / "a.blog")
    seen: list[int] = []
    real_close = os.close

    def close(number: int) -> None:
        if threading.current_thread() is rec._committer and _names(number, path):
            seen.append(len(rec._open))  # what stats() counts, at the close
        real_close(number)

    # watched before the move: the idle close may come before this thread runs again (a
    # loaded host, 0.05 s; patched after the append, the close was missed and nothing seen)
    monkeypatch.setattr(os, "close", close)
    rec.append("a", src[0])
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    monkeypatch.undo()
    assert seen == [1]
    assert rec.stats().open_handles == 0
    log.seal(tmp_path / "a.blog")  # nothing holds it any more
    rec.close()


def _names(fd: int, path: str) -> bool:
    """Whether ``fd`` is open on the file at ``path`` (a new log is written under another
    name and linked into place: the descriptor's own name is not the path's)."""
    try:
        st, at = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (at.st_dev, at.st_ino)


# -- an unsealed log changed in its middle between its loading and its first move ------------------

def _change_a_middle_segment(path: Path) -> None:
    """Change one byte of the payload of a segment in the middle of an unsealed log, with its
    checksums made right again: the same size, the same first and last bytes."""
    data = bytearray(path.read_bytes())
    offsets = []
    at = log.HEADER_SIZE
    while at < len(data):
        length = log._SEG_HEAD.unpack_from(data, at)[0]
        offsets.append(at)
        at += log._SEG_HEAD.size + log._SEG_TAIL.size + length
    at = offsets[len(offsets) // 2]
    length = log._SEG_HEAD.unpack_from(data, at)[0]
    start = at + log._SEG_HEAD.size + log._SEG_TAIL.size
    data[start + length - 1] ^= 0x01
    head = bytes(data[at:at + log._SEG_HEAD.size])
    head += zlib.crc32(data[start:start + length]).to_bytes(4, "little")
    data[at:start] = head + zlib.crc32(head).to_bytes(4, "little")
    time.sleep(0.02)  # a later clock tick than the recorder's look at it
    with open(path, "r+b") as f:  # in place: the same inode
        f.write(data)


def test_an_unsealed_log_changed_in_its_middle_after_its_loading_is_not_written_into(
        tmp_path: Path) -> None:
    # Read at its first use, the log kept no times: the reopening compared its number, size
    # and first and last bytes only, all unchanged, and acknowledged the move after the
    # changed segment.
    with Recorder(tmp_path, sealed=False, save_every=0) as rec:
        for event in src[:20]:
            rec.append("a", event)
    path = tmp_path / "a.blog"
    before = path.read_bytes()
    with Recorder(tmp_path, sealed=False, save_every=0) as rec:
        assert rec.next_seq("a") == 20  # read now, closed again until its next move
        _change_a_middle_segment(path)
        changed = path.read_bytes()
        assert changed != before and len(changed) == len(before)
        with pytest.raises(LogFormatError, match="changed while the recorder had it closed"):
            rec.append("a", src[20])
    assert path.read_bytes() == changed  # nothing written after the changed segment


# -- a journal damaged in its middle ---------------------------------------------------------------

def test_a_journal_damaged_in_its_middle_writes_back_the_rest_and_is_kept_aside(
        tmp_path: Path) -> None:
    # The reading stopped at the first damaged record as if it were the torn tail: after a
    # power loss the restart wrote back the records before it, deleted the journal, and the
    # acknowledged moves after the damage were gone, without a word.
    a, b = matches()[0], matches()[1]
    ops = PowerLossOps(str(tmp_path))
    rec = Recorder(tmp_path, sync="journal", ops=ops, save_every=0, checkpoint_every=600)
    for k in range(6):
        rec.append("a", a[k])
        rec.append("b", b[k])
    image = ops.image()  # the power goes: the logs' bytes are in the journal alone
    names = dict(ops.imaged_names)
    rec.close()
    name = journal.name_of(1)
    data = bytearray(image[name])
    frames = []
    at = journal.HEADER_SIZE
    while at < len(data):
        length = int.from_bytes(data[at:at + 4], "little")
        frames.append((at, length))
        at += 8 + length
    assert len(frames) == 12
    at, length = frames[3]  # b's second event
    data[at + 8 + length // 2] ^= 0xFF
    image[name] = bytes(data)
    restore(str(tmp_path), image, names)
    with Recorder(tmp_path, sync="journal") as again:
        stats = again.stats()
        assert again.next_seq("a") == 6  # every record of a after the damage: written back
        assert again.next_seq("b") == 1  # its second record is unreadable: the log ends there
        assert stats.journal_conflicts == 5  # the damaged record, and b's four after it
    assert _unfolded(tmp_path) == [name + ".unfolded"]  # kept for an operator to look at
    assert log.read_events(tmp_path / "a.blog") == list(a[:6])
    assert journal.read_all(str(tmp_path / (name + ".unfolded")))[1] == 1


def test_a_torn_journal_tail_is_not_taken_for_damage(tmp_path: Path) -> None:
    ops = PowerLossOps(str(tmp_path))
    rec = Recorder(tmp_path, sync="journal", ops=ops, save_every=0, checkpoint_every=600)
    for k in range(4):
        rec.append("a", src[k])
    image = ops.image()
    names = dict(ops.imaged_names)
    rec.close()
    name = journal.name_of(1)
    image[name] = image[name][:-5]  # the last round's record cut short
    restore(str(tmp_path), image, names)
    with Recorder(tmp_path, sync="journal") as again:
        assert again.stats().journal_conflicts == 0
        assert again.next_seq("a") == 3
    assert _unfolded(tmp_path) == []


def test_a_journal_whose_header_was_damaged_since_writes_back_its_records_and_is_kept_aside(
        tmp_path: Path) -> None:
    # A header that fails its checksum was taken for a journal torn while it was created (no
    # round used it): with whole records after it, the restart deleted it, and the
    # acknowledged moves only it held were gone
    ops = PowerLossOps(str(tmp_path))
    rec = Recorder(tmp_path, sync="journal", ops=ops, save_every=0, checkpoint_every=600)
    for k in range(5):
        rec.append("a", src[k])
    image = ops.image()
    names = dict(ops.imaged_names)
    rec.close()
    name = journal.name_of(1)
    data = bytearray(image[name])
    data[9] ^= 0x01  # the header's version field
    image[name] = bytes(data)
    restore(str(tmp_path), image, names)
    with Recorder(tmp_path, sync="journal") as again:
        assert again.next_seq("a") == 5
        assert again.stats().journal_conflicts == 1
    assert _unfolded(tmp_path) == [name + ".unfolded"]
    assert log.read_events(tmp_path / "a.blog") == list(src[:5])


# -- the example's bots when there is no server, or it goes away -----------------------------------

BOTS = ROOT / "examples" / "server" / "bots.py"
SERVER = ROOT / "examples" / "server" / "server.py"


def test_bots_without_a_server_say_so_in_one_line() -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = subprocess.run([sys.executable, str(BOTS), str(port), "--tables", "2"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"bots: 127.0.0.1:{port}: "), done.stderr


def test_bots_whose_server_is_killed_say_so_in_one_line(tmp_path: Path) -> None:
    server = subprocess.Popen([sys.executable, str(SERVER), str(tmp_path), "--window", "0.05"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[2])
        bots = subprocess.Popen([sys.executable, str(BOTS), str(port), "--tables", "4"],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob("*.blog")) and time.monotonic() < deadline:
            time.sleep(0.01)
        server.kill()
        out, err = bots.communicate(timeout=60)
    finally:
        server.kill()
        server.communicate(timeout=60)
    assert bots.returncode == 1 and out == "", (out, err)
    assert err == f"bots: 127.0.0.1:{port}: the server hung up\n", err
