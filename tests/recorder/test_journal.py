"""The recorder's shared journal (sync="journal"): one sync per round, logs written back after
a crash, checkpoints that retire journals, and logs rewritten by others left alone."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.recorder import FileOps, Recorder
from tests.recorder.powerloss import PowerLossOps, restore
from tests.recorder.sources import matches, on_disk, source_of


def _journals(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()
                  if p.name.startswith(journal.PREFIX) and not p.name.endswith(".unfolded"))


def _settled_journal(rec: Recorder, directory: Path) -> str:
    """The one journal left once the recorder is quiet (no round, no checkpoint running)."""
    seen, steady = "", 0
    deadline = time.monotonic() + 60  # a checkpoint's syncfs waits for the whole disk
    while steady < 30:
        assert time.monotonic() < deadline, "the recorder never became quiet"
        threading.Event().wait(0.01)
        names = _journals(directory)
        done = rec._checkpoint is None or rec._checkpoint.done()
        now = names[0] if len(names) == 1 and done else ""
        steady = steady + 1 if now and now == seen else 0
        seen = now
    return seen


def _assert_logs_hold(directory: Path, names: list[str], count: int) -> None:
    """Each table's log holds exactly the first ``count`` moves of its match."""
    sources = matches()
    for name in names:
        assert on_disk(str(directory / f"{name}.blog")) == list(source_of(name, sources)[:count])


def _record(rec: Recorder, names: list[str], steps: int, start: int = 0) -> None:
    sources = matches()
    for step in range(start, start + steps):
        futures = [rec.submit(n, source_of(n, sources)[step]) for n in names]
        assert [f.result() for f in futures] == [step] * len(names)


def test_a_journal_round_syncs_one_file_and_the_logs_are_complete_after_close(
    tmp_path: Path,
) -> None:
    names = [f"t{i}" for i in range(6)]
    with Recorder(tmp_path, sync="journal", checkpoint_every=60) as rec:
        _record(rec, names, 10)
        stats = rec.stats()
        assert stats.journal_syncs == stats.rounds > 0
        assert stats.fsyncs == 0 and stats.syncfs == 0 and stats.dir_fsyncs == 0
        assert stats.events == 60 and stats.created == 6
        assert len(_journals(tmp_path)) == 1
    assert _journals(tmp_path) == []  # the last checkpoint retired it
    _assert_logs_hold(tmp_path, names, 10)


def test_after_a_power_loss_the_journal_writes_back_what_the_logs_lost(tmp_path: Path) -> None:
    ops = PowerLossOps(str(tmp_path))
    names = [f"t{i}" for i in range(4)]
    rec = Recorder(tmp_path, ops=ops, sync="journal", checkpoint_every=60)
    _record(rec, names, 7)
    image = ops.image()  # the logs were never fsynced: their names were never made durable
    assert not any(name.endswith(".blog") for name in image)
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)
    with Recorder(tmp_path, sync="fsync") as again:  # any recorder writes the journal back
        stats = again.stats()
        assert stats.recreated == 4 and stats.recovered == 4 * 7 and stats.journal_conflicts == 0
        _record(again, names, 2, start=7)  # and goes on from there
    assert _journals(tmp_path) == []
    _assert_logs_hold(tmp_path, names, 9)


def test_a_checkpoint_makes_the_logs_durable_and_removes_the_old_journal(tmp_path: Path) -> None:
    ops = PowerLossOps(str(tmp_path))
    names = [f"t{i}" for i in range(3)]
    rec = Recorder(tmp_path, ops=ops, sync="journal", checkpoint_every=0.0)
    _record(rec, names, 5)
    current = _settled_journal(rec, tmp_path)
    # One table, one event: one round, into journal `current`, retired at the end of it.
    # (Three tables' events could land in two rounds under load, and the second round's go to
    # the next journal, which this checkpoint does not make durable in the logs.)
    _record(rec, names[:1], 1, start=5)
    for _ in range(6000):  # up to 60 s: a checkpoint's syncfs waits for the whole disk
        if current not in _journals(tmp_path):
            break
        threading.Event().wait(0.01)
    assert current not in _journals(tmp_path)
    assert rec.stats().checkpoints >= 1 and rec.stats().checkpoint_failures == 0
    image = ops.image()
    rec.close()
    # Without any journal, the logs alone hold every event acknowledged before the checkpoint.
    image = {name: data for name, data in image.items() if not name.startswith(journal.PREFIX)}
    restore(str(tmp_path), image, ops.imaged_names)
    _assert_logs_hold(tmp_path, names[:1], 6)
    _assert_logs_hold(tmp_path, names[1:], 5)


def test_a_torn_journal_record_ends_the_journal(tmp_path: Path) -> None:
    sources = matches()
    src = source_of("a", sources)
    with Recorder(tmp_path, sync="fsync") as rec:
        for event in src[:3]:
            rec.append("a", event)
    path = tmp_path / "a.blog"
    data = path.read_bytes()
    st = path.stat()
    (tmp_path / "other").mkdir()
    with Recorder(tmp_path / "other", sync="fsync") as other:  # the same log, 5 events on
        for event in src[:5]:
            other.append("a", event)
    more = (tmp_path / "other" / "a.blog").read_bytes()[len(data):]
    records = [journal.Record("a", st.st_dev, st.st_ino, len(data), more)]
    blob = journal.header() + journal.frame(records)
    second = journal.frame([journal.Record("a", st.st_dev, st.st_ino, 0, b"garbage")])
    (tmp_path / journal.name_of(1)).write_bytes(blob + second[:-3])  # the last one is torn
    assert journal.read(str(tmp_path / journal.name_of(1))) == records
    with Recorder(tmp_path) as rec:
        assert rec.stats().recovered == 1
        assert rec.next_seq("a") == 5
    assert on_disk(str(path)) == list(src[:5])


def test_a_log_rewritten_by_another_program_is_not_written_into(tmp_path: Path) -> None:
    sources = matches()
    src = source_of("a", sources)
    with Recorder(tmp_path, sync="fsync", sealed=False) as rec:
        for event in src[:3]:
            rec.append("a", event)
    path = tmp_path / "a.blog"
    st = path.stat()
    stale = journal.Record("a", st.st_dev, st.st_ino, path.stat().st_size, b"x" * 40)
    (tmp_path / journal.name_of(3)).write_bytes(journal.header() + journal.frame([stale]))
    # (log.seal refuses a log its journal is ahead of: test_fault_probes_recorder3.py)
    (tmp_path / "copy").write_bytes(path.read_bytes())
    os.replace(tmp_path / "copy", path)  # a new file at the path: the record names the old one
    before = path.read_bytes()
    with Recorder(tmp_path) as rec:
        stats = rec.stats()
        assert stats.journal_conflicts == 1 and stats.recovered == 0
        assert rec.next_seq("a") == 3
    assert path.read_bytes() == before
    assert _journals(tmp_path) == []
    assert (tmp_path / (journal.name_of(3) + ".unfolded")).exists()  # kept for an operator
    with Recorder(tmp_path, sync="journal") as rec:  # and never read again, nor reused
        rec.append("a", src[3])
        assert rec.stats().journal_conflicts == 0
        assert _journals(tmp_path) == [journal.name_of(4)]


def test_a_failed_journal_write_refuses_the_round_and_everything_after(tmp_path: Path) -> None:
    class FailingJournal(FileOps):
        fail = False

        def datasync(self, fd: int) -> None:
            if self.fail:
                raise OSError(5, "Input/output error")
            super().datasync(fd)

    ops = FailingJournal()
    sources = matches()
    src = source_of("a", sources)
    with Recorder(tmp_path, sync="journal", ops=ops) as rec:
        rec.append("a", src[0])
        ops.fail = True
        with pytest.raises(log.LogFormatError) as info:
            rec.append("a", src[1])
        assert "journal failed" in str(info.value)
        # Its records may be in the journal all the same: the error cannot say either way.
        assert "may or may not be kept" in str(info.value)
        with pytest.raises(log.LogFormatError):
            rec.append("b", source_of("b", sources)[0])


class _TornJournal(FileOps):
    """A journal write that stops halfway, as on a disk that fills up mid-write."""

    fail = False

    def append(self, fd: int, data: bytes) -> None:
        if self.fail:
            os.write(fd, data[: len(data) // 2])
            raise OSError(28, "No space left on device")
        super().append(fd, data)


def test_a_journal_write_cut_short_leaves_no_refused_event_in_any_log(tmp_path: Path) -> None:
    ops = _TornJournal()
    a, b = matches()[0], matches()[1]
    with Recorder(tmp_path, sync="journal", ops=ops, checkpoint_every=60) as rec:
        for k in range(5):
            rec.append("a", a[k])
            rec.append("b", b[k])
        ops.fail = True
        futures = [rec.submit("a", a[5]), rec.submit("b", b[5])]
        for future in futures:
            with pytest.raises(log.LogFormatError) as info:
                future.result(timeout=30)
            assert "were not recorded" in str(info.value)
        with pytest.raises(log.LogFormatError):
            rec.append("a", a[6])
    # The torn record ends the journal, and the logs were cut back: only acknowledged events.
    with Recorder(tmp_path) as again:
        assert again.next_seq("a") == 5 and again.next_seq("b") == 5
    assert log.read_events(tmp_path / "a.blog") == list(a[:5])
    assert log.read_events(tmp_path / "b.blog") == list(b[:5])


def test_a_new_log_whose_first_round_the_journal_refused_is_not_left(tmp_path: Path) -> None:
    ops = _TornJournal()
    a = matches()[0]
    with Recorder(tmp_path, sync="journal", ops=ops) as rec:
        ops.fail = True
        with pytest.raises(log.LogFormatError):
            rec.append("a", a[0])
    assert not (tmp_path / "a.blog").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".new")] == []


_FULL_DISK_CHILD = """
import json, resource, signal, sys
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sources = matches()[:4]
acked = {f"m{i}": -1 for i in range(len(sources))}
failed = {}
with Recorder(sys.argv[1], sync="journal", checkpoint_every=600, save_every=0) as rec:
    for k in range(200):
        futures = {name: rec.submit(name, sources[i][k]) for i, name in enumerate(acked)
                   if name not in failed and k < len(sources[i])}
        for name, future in futures.items():
            try:
                acked[name] = future.result(timeout=60)
            except LogFormatError as exc:
                failed[name] = str(exc)
        if failed:
            break
print(json.dumps({"acked": acked, "failed": failed}))
"""


def test_a_journal_that_hits_the_file_size_limit_keeps_the_logs_exact(tmp_path: Path) -> None:
    """A real short write: the journal reaches the process's file size limit (RLIMIT_FSIZE,
    as a full disk) in the middle of a round's records, while every log is still far below
    it. Every append is acknowledged or refused, and the logs hold exactly the acknowledged
    events when a recorder opens the directory again."""
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", _FULL_DISK_CHILD, str(tmp_path), str(24 * 1024)],
        capture_output=True, text=True, timeout=120, cwd=root, check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["failed"], "the journal never reached the limit: raise the match count"
    assert all("journal failed" in why for why in result["failed"].values())
    sources = matches()[:4]
    with Recorder(tmp_path) as again:
        for i, name in enumerate(result["acked"]):
            acked = result["acked"][name]
            assert again.next_seq(name) == acked + 1, name
            assert log.read_events(tmp_path / f"{name}.blog") == list(sources[i][: acked + 1])


def test_a_log_sealed_while_closed_gets_its_journal_record_again(tmp_path: Path) -> None:
    ops = PowerLossOps(str(tmp_path))
    a = matches()[0]
    rec = Recorder(tmp_path, sync="journal", ops=ops, sealed=False, idle_timeout=0.01,
                   checkpoint_every=60)
    for event in a[:5]:
        rec.append("a", event)
    while rec.stats().open_handles:
        threading.Event().wait(0.01)
    log.seal(tmp_path / "a.blog")  # fsynced by seal: a new file, durable with its name
    ops.record(tmp_path / "a.blog")
    ops.fsync_dir(os.open(tmp_path, os.O_RDONLY))
    assert rec.append("a", a[5]) == 5  # written to the sealed file, journaled as such
    image = ops.image()
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)
    with Recorder(tmp_path) as again:
        assert again.stats().journal_conflicts == 0
    info = log.verify(tmp_path / "a.blog")
    assert info.sealed and info.events == 6 and info.head == log.head_digest(a[:6])


def test_without_syncfs_a_checkpoint_fsyncs_each_log_it_wrote(tmp_path: Path) -> None:
    class NoSyncfs(PowerLossOps):
        def syncfs(self, fd: int) -> None:
            raise NotImplementedError("syncfs is Linux only")

    ops = NoSyncfs(str(tmp_path))
    names = [f"t{i}" for i in range(3)]
    rec = Recorder(tmp_path, ops=ops, sync="journal", checkpoint_every=0.0)
    _record(rec, names, 4)
    current = _settled_journal(rec, tmp_path)
    _record(rec, names[:1], 1, start=4)  # one round (see the test above)
    for _ in range(6000):  # up to 60 s: a checkpoint's syncfs waits for the whole disk
        if current not in _journals(tmp_path):
            break
        threading.Event().wait(0.01)
    stats = rec.stats()
    assert stats.checkpoints >= 1 and stats.checkpoint_fsyncs >= 3
    image = {n: d for n, d in ops.image().items() if not n.startswith(journal.PREFIX)}
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)
    _assert_logs_hold(tmp_path, names[:1], 5)
    _assert_logs_hold(tmp_path, names[1:], 4)


def test_audit_notes_a_journal_a_stopped_recorder_left(tmp_path: Path) -> None:
    import subprocess
    import sys

    ops = PowerLossOps(str(tmp_path))
    rec = Recorder(tmp_path, ops=ops, sync="journal", checkpoint_every=60)
    _record(rec, ["t0", "t1"], 3)
    image = ops.image()
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)  # a power loss: only the journal holds them
    assert not list(tmp_path.glob("*.blog"))  # their names never reached the disk
    out = subprocess.run([sys.executable, "-m", "cli.main", "audit", str(tmp_path)],
                         capture_output=True, text=True, check=False)
    assert "a recorder stopped without folding its journal" in out.stderr
    assert "Traceback" not in out.stderr
    with Recorder(tmp_path):  # a recorder at work: its journal is live, nothing to say
        out = subprocess.run([sys.executable, "-m", "cli.main", "audit", str(tmp_path)],
                             capture_output=True, text=True, check=False)
        assert "journal" not in out.stderr
    out = subprocess.run([sys.executable, "-m", "cli.main", "audit", str(tmp_path)],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0 and "journal" not in out.stderr  # folded back: all there


def test_a_journal_of_an_unknown_version_stops_the_recorder_and_is_left_alone(
    tmp_path: Path,
) -> None:
    import struct
    import zlib

    head = struct.pack("<8sHH", b"BURACOLJ", 2, 0)
    blob = head + struct.pack("<I", zlib.crc32(head)) + b"moves of a newer recorder"
    (tmp_path / journal.name_of(1)).write_bytes(blob)
    with pytest.raises(log.LogFormatError) as info:
        Recorder(tmp_path)
    assert info.value.kind == "version" and "version 2" in str(info.value)
    assert (tmp_path / journal.name_of(1)).read_bytes() == blob
    (tmp_path / journal.name_of(1)).unlink()
    Recorder(tmp_path).close()  # the directory lock was let go


def test_a_journal_that_cannot_be_started_refuses_the_recorder_and_lets_go_of_the_directory(
    tmp_path: Path,
) -> None:
    class NoDirectorySync(FileOps):
        def fsync_dir(self, fd: int) -> None:
            raise OSError(28, "No space left on device")

    with pytest.raises(log.LogFormatError) as info:
        Recorder(tmp_path, sync="journal", ops=NoDirectorySync())
    assert info.value.kind == "io" and "No space left" in str(info.value)
    with Recorder(tmp_path, sync="journal") as rec:  # not locked by the failed one
        rec.append("a", source_of("a", matches())[0])
