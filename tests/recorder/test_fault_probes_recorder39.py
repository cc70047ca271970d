"""Fault probes of the recorder, round 39: the files it makes beside the logs.

The state was written through a fixed name, ``.recorder.state.new``, opened whatever it was: a
FIFO there hung ``close`` forever and a symbolic link there had the state written into the file
it named. The saved file was read whole before anything was checked: a sparse 100 GiB one
raised ``MemoryError`` out of the recorder's constructor. And a journal was opened with
``O_TRUNC`` at its generation's name: a symbolic link there had the file it named overwritten
with the journal."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from buraco_log import journal
from buraco_log.recorder import SAVED_NAME, Recorder
from tests.recorder.sources import matches, on_disk

ROOT = Path(__file__).resolve().parents[2]


def _child(script: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


_RECORD = """
    import sys
    from buraco_log.recorder import Recorder
    from tests.recorder.sources import matches
    with Recorder(sys.argv[1], save_every=0) as rec:
        for event in matches(1)[0][:5]:
            rec.append("t", event)
    print("closed")
"""


def test_a_fifo_at_the_old_temporary_name_of_the_state_does_not_hang_close(
        tmp_path: Path) -> None:
    os.mkfifo(tmp_path / (SAVED_NAME + ".new"))
    try:
        done = _child(_RECORD, str(tmp_path), timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("close hung opening the FIFO to save the state") from None
    assert (done.returncode, done.stdout, done.stderr) == (0, "closed\n", "")
    assert (tmp_path / SAVED_NAME).is_file()
    assert len(on_disk(str(tmp_path / "t.blog"))) == 5


def test_a_symlink_at_the_old_temporary_name_of_the_state_is_not_written_through(
        tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / (SAVED_NAME + ".new")).symlink_to(victim)
    with Recorder(tmp_path / "rec", save_every=0) as rec:
        for event in matches(1)[0][:5]:
            rec.append("t", event)
    assert victim.read_bytes() == b"precious"
    assert (tmp_path / "rec" / SAVED_NAME).is_file()
    assert not (tmp_path / "rec" / SAVED_NAME).is_symlink()


def test_a_sparse_100_gib_state_file_is_ignored_and_the_table_loads_from_its_log(
        tmp_path: Path) -> None:
    events = matches(1)[0]
    with Recorder(tmp_path, save_every=0) as rec:
        for event in events[:5]:
            rec.append("t", event)
    os.truncate(tmp_path / SAVED_NAME, 100 << 30)
    with Recorder(tmp_path, save_every=0) as rec:  # MemoryError here before
        assert rec.next_seq("t") == 5
        rec.append("t", events[5])
        assert rec.stats().resumed == 0  # read from the log, not the (ignored) state
    assert on_disk(str(tmp_path / "t.blog")) == list(events[:6])
    assert (tmp_path / SAVED_NAME).stat().st_size < 1 << 20  # saved anew at close


def test_a_state_of_plausible_size_is_still_used(tmp_path: Path) -> None:
    events = matches(1)[0]
    with Recorder(tmp_path, save_every=0) as rec:
        for event in events[:40]:
            rec.append("t", event)
    with Recorder(tmp_path, save_every=0) as rec:
        assert rec.next_seq("t") == 40
        assert rec.stats().resumed == 1


_CRASH_IN_SAVE = """
    import os, sys
    from buraco_log.recorder import FileOps, Recorder
    from tests.recorder.sources import matches

    class DieSavingState(FileOps):
        def fsync(self, fd):
            if "recorder.state" in os.readlink(f"/proc/self/fd/{fd}"):
                os._exit(9)  # killed while the state's new file is written
            super().fsync(fd)

    rec = Recorder(sys.argv[1], save_every=0, ops=DieSavingState())
    for event in matches(1)[0][:5]:
        rec.append("t", event)
    print("acked", flush=True)
    rec.close()
"""


def test_a_crash_while_the_state_is_saved_leaves_a_temporary_the_next_recorder_sweeps(
        tmp_path: Path) -> None:
    done = _child(_CRASH_IN_SAVE, str(tmp_path))
    assert (done.returncode, done.stdout) == (9, "acked\n"), done.stderr
    left = [p.name for p in tmp_path.iterdir() if "recorder.state" in p.name]
    assert len(left) == 1 and left[0] != SAVED_NAME, left  # the temporary, not the state
    with Recorder(tmp_path, save_every=0) as rec:
        assert rec.stats().swept == 1
        assert rec.next_seq("t") == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == [".recorder.lock", SAVED_NAME,
                                                           "t.blog"]


def _plant(where: Path, kind: str, victim: Path) -> None:
    if kind == "link":
        where.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(where)
    else:
        where.mkdir()


@pytest.mark.parametrize("kind", ["link", "fifo", "directory"])
def test_something_at_the_first_journals_name_is_skipped_not_written_through(
        tmp_path: Path, kind: str) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    directory = tmp_path / "rec"
    directory.mkdir()
    _plant(directory / journal.name_of(1), kind, victim)
    events = matches(1)[0]
    with Recorder(directory, sync="journal", save_every=0) as rec:  # refused or clobbered
        for event in events[:5]:
            rec.append("t", event)
    assert victim.read_bytes() == b"precious"
    assert on_disk(str(directory / "t.blog")) == list(events[:5])
    assert journal.generations(str(directory)) == []  # retired at close; the planted one stays
    assert os.path.lexists(directory / journal.name_of(1))


def test_a_checkpoint_skips_a_link_at_the_next_journals_name(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    directory = tmp_path / "rec"
    directory.mkdir()
    events = matches(1)[0]
    with Recorder(directory, sync="journal", save_every=0, checkpoint_every=0) as rec:
        assert [g for g, _ in journal.generations(str(directory))] == [1]
        (directory / journal.name_of(2)).symlink_to(victim)  # the next checkpoint's name
        for event in events[:20]:
            rec.append("t", event)
        rec.flush()
        checkpoints = rec.stats().checkpoints
    assert victim.read_bytes() == b"precious"
    assert checkpoints >= 1  # past the link, not stuck before it
    assert on_disk(str(directory / "t.blog")) == list(events[:20])
