"""Fault probes of the recorder: the files it acts on by a log's path after a check.

The recorder holds its directory open and makes its new files there; but it reopened a closed
log, read a log at its first use, linked a new log at its name, copied a replaced log aside,
took its lock, swept temporary files and wrote journals back at open by the paths. Another
program can put something else at a path between the recorder's look and its act: a symbolic
link at a log's name (to a copy of the log anywhere) or at the lock's, or another directory (or
a copy of the whole directory: ``cp -a logs new; mv logs old; mv new logs``) at the
directory's path. Each probe puts the swap in the window (or while the log is closed, the
reopening's window) and checks that no move goes into, and no file is made or removed in,
anything but the directory the recorder holds.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from buraco_log import events as ev
from buraco_log import journal, log, recorder
from buraco_log.errors import LogFormatError
from buraco_log.recorder import FileOps, Recorder, journal_notes
from tests.recorder.sources import matches, source_of
from tests.recorder.swaps import replace_after_next_look


def _closed(rec: Recorder, match: str, other: str, event: ev.AnyEvent) -> None:
    """Let ``match``'s log be closed as idle: a round of ``other`` after its idle time."""
    time.sleep(0.03)  # (three times its idle time)
    assert rec.append(other, event) == event.seq
    assert match not in rec._open  # (what the probe needs: the next move reopens it)


def _swap_for_copy(live: Path, moved: Path) -> None:
    """Put a copy of the directory at its path, the directory itself renamed to ``moved``."""
    shutil.copytree(live, live.with_name("copy"), symlinks=True)
    os.rename(live, moved)
    os.rename(live.with_name("copy"), live)


def test_a_symbolic_link_put_at_a_closed_log_s_name_is_not_written_through(
        tmp_path: Path) -> None:
    a, b = source_of("a", matches()), source_of("b", matches())
    live, elsewhere = tmp_path / "live", tmp_path / "elsewhere"
    elsewhere.mkdir()
    rec = Recorder(live, sync="fsync", save_every=0, idle_timeout=0.01)
    try:
        for event in a[:5]:
            assert rec.append("a", event) == event.seq
        _closed(rec, "a", "b", b[0])
        # another program: a copy of the log elsewhere, then a link to it at the log's name
        shutil.copyfile(live / "a.blog", elsewhere / "a.blog")
        os.replace(live / "a.blog", tmp_path / "a.moved")
        (live / "a.blog").symlink_to(elsewhere / "a.blog")
        copy = (elsewhere / "a.blog").read_bytes()
        with pytest.raises(LogFormatError) as refused:  # it was adopted, and written
            rec.append("a", a[5])
        said = str(refused.value)
        assert "a symbolic link is at the log's name now" in said and "\n" not in said
        assert said.startswith(f"{live / 'a.blog'}: ")
    finally:
        rec.close()
    assert (elsewhere / "a.blog").read_bytes() == copy  # not a byte written through
    assert log.read_events(tmp_path / "a.moved") == list(a[:5])


@pytest.mark.parametrize("sync", ["fsync", pytest.param("journal", marks=pytest.mark.slow)])
def test_a_copy_of_the_directory_put_at_its_path_takes_no_move_of_a_closed_log(
        tmp_path: Path, sync: str) -> None:
    a, b = source_of("a", matches()), source_of("b", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    rec = Recorder(live, sync=sync, save_every=0, idle_timeout=0.01, checkpoint_every=600)
    try:
        for event in a[:5]:
            assert rec.append("a", event) == event.seq
        _closed(rec, "a", "b", b[0])
        _swap_for_copy(live, moved)
        copy = (live / "a.blog").read_bytes()
        with pytest.raises(LogFormatError) as refused:  # the copy was adopted, and written
            rec.append("a", a[5])
        assert "renamed or removed under it" in str(refused.value)
        assert f"the directory it opened is now {moved}" in str(refused.value)
    finally:
        rec.close()
    assert (live / "a.blog").read_bytes() == copy
    with Recorder(moved, sync=sync) as where:  # every acknowledged move is there
        assert where.next_seq("a") in (5, 6) and where.next_seq("b") == 1
    assert log.read_events(moved / "a.blog")[:5] == list(a[:5])


def test_a_copy_of_the_directory_put_at_its_path_is_no_replaced_log(tmp_path: Path) -> None:
    a = source_of("a", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    rec = Recorder(live, sync="fsync", save_every=0)
    try:
        for event in a[:5]:
            assert rec.append("a", event) == event.seq
        _swap_for_copy(live, moved)  # the log open: the round writes it, then looks at its path
        names = sorted(p.name for p in live.iterdir())
        with pytest.raises(LogFormatError) as refused:
            rec.append("a", a[5])
        # it said the log was replaced, and "kept" a copy of it in the other directory
        assert "renamed or removed under it" in str(refused.value)
        assert "replaced" not in str(refused.value)
    finally:
        rec.close()
    assert sorted(p.name for p in live.iterdir()) == names
    assert not list(moved.glob("*.acknowledged*"))  # the log was not replaced: no copy
    assert log.read_events(moved / "a.blog")[:5] == list(a[:5])


def test_a_log_read_at_first_use_is_the_file_locked(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    a = source_of("a", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    with Recorder(live, sync="fsync", save_every=0) as first:
        for event in a[:3]:
            assert first.append("a", event) == event.seq
        older = (live / "a.blog").read_bytes()  # a backup, 3 events
        for event in a[3:5]:
            assert first.append("a", event) == event.seq
    rec = Recorder(live, sync="fsync", save_every=0)
    lock: Callable[[str], object] = recorder._lock_current
    armed = [True]

    def locked(path: str) -> object:
        got = lock(path)
        if armed[0]:  # the directory is replaced by a copy holding the backup, right then
            armed[0] = False
            _swap_for_copy(live, moved)
            (live / "a.blog").write_bytes(older)
        return got

    monkeypatch.setattr(recorder, "_lock_current", locked)
    try:
        # it read the backup at the path (3 events) for the file it locked (5): a fourth
        # move was taken as seq 3, and written into the backup as "adopted"
        assert rec.next_seq("a") == 5
        with pytest.raises(LogFormatError, match="renamed or removed under it"):
            rec.append("a", a[5])
    finally:
        rec.close()
    assert (live / "a.blog").read_bytes() == older
    assert log.read_events(moved / "a.blog")[:5] == list(a[:5])


def test_the_lock_taken_is_the_lock_of_the_directory_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = source_of("a", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    live.mkdir()
    flock = fcntl.flock
    armed = [True]

    def locked(fd: int, how: int) -> None:
        flock(fd, how)
        if armed[0]:  # another directory put at the path as the recorder takes its lock
            armed[0] = False
            os.rename(live, moved)
            live.mkdir()

    monkeypatch.setattr(fcntl, "flock", locked)
    rec = Recorder(live, sync="fsync", save_every=0)
    monkeypatch.undo()
    try:
        # it held moved's lock and wrote into live, which a second recorder could lock
        with pytest.raises(LogFormatError, match="renamed or removed under it"):
            rec.append("a", a[0])
        with Recorder(live, save_every=0) as other:  # the path's directory is free
            assert other.append("a", a[0]) == 0
        with pytest.raises(LogFormatError, match="another recorder"):
            Recorder(moved)
    finally:
        rec.close()
    assert sorted(p.name for p in moved.iterdir()) == [".recorder.lock"]


def test_a_symbolic_link_at_the_lock_s_name_is_never_followed(tmp_path: Path) -> None:
    live, victim = tmp_path / "live", tmp_path / "elsewhere" / "made"
    live.mkdir()
    victim.parent.mkdir()
    (live / ".recorder.lock").symlink_to(victim)
    with pytest.raises(LogFormatError) as refused:  # it made the file the link named
        Recorder(live)
    assert str(refused.value) == (
        f"{live / '.recorder.lock'}: a symbolic link, not the recorder's lock file (a recorder "
        "never follows one there: remove it)")
    assert not victim.exists()
    (live / ".recorder.lock").unlink()
    with Recorder(live) as rec:  # and once it is gone, the recorder opens
        assert rec.next_seq("a") == 0


@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_a_new_log_is_linked_in_the_directory_it_was_made_in(tmp_path: Path, sync: str) -> None:
    a, b = source_of("a", matches()), source_of("b", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    rec = Recorder(live, sync=sync, save_every=0, checkpoint_every=600)
    try:
        assert rec.append("a", a[0]) == 0
        replace_after_next_look(rec, live, moved, "_create")()  # b's file made in the one held,
        if sync == "fsync":  # then linked by the path: "No such file or directory"
            with pytest.raises(LogFormatError) as refused:
                rec.append("b", b[0])
            assert "renamed or removed under it" in str(refused.value)
        else:  # its first move is in the journal beside it, and the log is where it was made
            assert rec.append("b", b[0]) == 0
        with pytest.raises(LogFormatError, match="renamed or removed under it"):
            rec.append("b", b[1])
    finally:
        rec.close()
    assert list(live.iterdir()) == []
    # b's first move in its log (acknowledged with the journal; the refused second one may
    # be there too: written, never acknowledged)
    assert log.read_events(moved / "b.blog")[:1] == [b[0]]
    with Recorder(moved, sync=sync) as where:
        assert where.next_seq("b") in (1, 2) and where.next_seq("a") == 1


def test_a_log_written_back_at_open_is_made_beside_its_journal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = source_of("b", matches())
    live, moved, scratch = tmp_path / "live", tmp_path / "moved", tmp_path / "scratch"
    with Recorder(scratch, sync="fsync") as rec:
        for event in b[:3]:
            assert rec.append("b", event) == event.seq
    st = (scratch / "b.blog").stat()
    # a recorder's journal holding a new log whole, whose name a power loss took
    live.mkdir()
    record = journal.Record("b", st.st_dev, st.st_ino, 0, (scratch / "b.blog").read_bytes())
    (live / journal.name_of(1)).write_bytes(journal.header() + journal.frame([record]))
    read = journal.read_all
    armed = [True]

    def read_then_replace(path: str, *how: int | None) -> object:
        got = read(path, *how)
        if armed[0]:  # another directory put at the path as the journal is written back
            armed[0] = False
            os.rename(live, moved)
            live.mkdir()
        return got

    monkeypatch.setattr(journal, "read_all", read_then_replace)
    with pytest.raises(LogFormatError) as refused:  # it made the log in the other one
        Recorder(live, sync="journal")
    monkeypatch.undo()
    assert "renamed, or another put at its path, while its journals were written back" in str(
        refused.value)
    assert list(live.iterdir()) == []
    assert [name for _, name in journal.generations(str(moved))] == [
        str(moved / journal.name_of(1))]  # kept, beside the log it wrote back
    with Recorder(moved, sync="journal") as where:
        assert where.next_seq("b") == 3
    assert log.read_events(moved / "b.blog") == list(b[:3])
    assert journal.generations(str(moved)) == []


def test_the_sweep_at_open_removes_the_temporary_files_of_the_directory_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    live, moved = tmp_path / "live", tmp_path / "moved"
    live.mkdir()
    stale = ".m.blog.0123456789ab.new"  # a crash left it (nobody holds it locked)
    (live / stale).write_bytes(b"a crash's")
    flock = fcntl.flock
    armed = [True]

    def locked(fd: int, how: int) -> None:
        flock(fd, how)
        if armed[0]:  # a copy of the directory put at its path as the recorder opens
            armed[0] = False
            _swap_for_copy(live, moved)

    monkeypatch.setattr(fcntl, "flock", locked)
    rec = Recorder(live, save_every=0)
    monkeypatch.undo()
    try:
        assert rec.stats().swept == 1
    finally:
        rec.close()
    assert (live / stale).read_bytes() == b"a crash's"  # the other directory's: left alone
    assert not (moved / stale).exists()  # the one held: swept


def test_close_keeps_no_copy_of_logs_it_took_for_replaced_by_the_path(tmp_path: Path) -> None:
    a, b = source_of("a", matches()), source_of("b", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    sync = "journal"
    rec = Recorder(live, sync=sync, save_every=0, idle_timeout=0.01, checkpoint_every=600)
    try:
        for event in a[:3]:
            assert rec.append("a", event) == event.seq
        _closed(rec, "a", "b", b[0])  # a closed log, b an open one
        replace_after_next_look(rec, live, moved, "_keep_replaced")()
    finally:
        rec.close()  # it looks, then each log: none at the path, "replaced"
    # b's log copied aside as "acknowledged", a's journal kept as unfolded: neither was
    assert sorted(p.name for p in moved.iterdir() if "acknowledged" in p.name) == []
    assert journal.generations(str(moved), unfolded=True) == []
    assert list(live.iterdir()) == []
    with Recorder(moved, sync=sync) as where:
        assert where.next_seq("a") == 3 and where.next_seq("b") == 1
    assert journal_notes(moved) == []


def test_a_link_put_at_a_new_log_s_temporary_name_is_never_put_at_its_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = source_of("a", matches())
    live, victim = tmp_path / "live", tmp_path / "victim.blog"
    victim.write_bytes(b"another program's")
    rec = Recorder(live, sync="fsync", save_every=0)
    write = log._write_all
    armed = [True]

    def written(fd: int, data: bytes | memoryview, offset: int) -> None:
        write(fd, data, offset)
        table = rec._tables.get("a")
        if armed[0] and table is not None and table.tmp is not None and fd == table.fd:
            armed[0] = False  # a link to another file put at the temporary name, right then
            (live / "swap").symlink_to(victim)
            os.replace(live / "swap", table.tmp)

    monkeypatch.setattr(log, "_write_all", written)
    try:
        with pytest.raises(LogFormatError) as refused:  # the link was put at a.blog, and the
            rec.append("a", a[0])  # move acknowledged into a log leading to victim.blog
        assert "replaced at its temporary name by another program" in str(refused.value)
    finally:
        monkeypatch.undo()
        rec.close()
    assert not os.path.lexists(live / "a.blog")
    assert victim.read_bytes() == b"another program's"


def test_a_symbolic_link_at_a_log_s_name_is_not_written_through_at_first_use(
        tmp_path: Path) -> None:
    a = source_of("a", matches())
    live, elsewhere = tmp_path / "live", tmp_path / "elsewhere"
    with Recorder(elsewhere, save_every=0) as other:  # another recorder's log, let go
        for event in a[:5]:
            assert other.append("a", event) == event.seq
    before = (elsewhere / "a.blog").read_bytes()
    live.mkdir()
    (live / "a.blog").symlink_to(elsewhere / "a.blog")  # put there by another program
    with Recorder(live, save_every=0) as rec:
        with pytest.raises(LogFormatError) as refused:  # written through, outside the
            rec.append("a", a[5])  # directory, its lock and its journal
        assert str(refused.value) == (
            f"{live / 'a.blog'}: a symbolic link: a recorder writes only the logs in its "
            "directory, never through a link (put the log itself there, or open a recorder "
            "where it is); nothing was recorded")
    assert (elsewhere / "a.blog").read_bytes() == before


def test_a_new_log_taken_back_after_a_failed_journal_is_removed_where_it_was_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = source_of("a", matches()), source_of("b", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"

    class Failing(FileOps):
        fail = False

        def append(self, fd: int, data: bytes) -> None:
            if self.fail:  # a full disk: nothing of the round's records written
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            super().append(fd, data)

    ops = Failing()
    rec = Recorder(live, sync="journal", ops=ops, save_every=0, checkpoint_every=600)
    cut = os.ftruncate
    armed = [True]

    def cut_then_replace(fd: int, size: int) -> None:
        cut(fd, size)
        table = rec._tables.get("b")
        if armed[0] and table is not None and fd == table.fd:
            armed[0] = False  # the round's new log cut back to nothing, then another
            os.rename(live, moved)  # directory put at the path, with a file of its name
            live.mkdir()
            (live / "b.blog").write_bytes(b"another program's")

    try:
        assert rec.append("a", a[0]) == 0
        ops.fail = True
        monkeypatch.setattr(os, "ftruncate", cut_then_replace)
        with pytest.raises(LogFormatError, match="were not recorded: send them again"):
            rec.append("b", b[0])  # the journal is full: b's log is taken back
        monkeypatch.undo()
    finally:
        rec.close()
    assert (live / "b.blog").read_bytes() == b"another program's"
    # it was left, empty, as b's log: a recorder there refused it (no header)
    assert not os.path.lexists(moved / "b.blog")
    with Recorder(moved, sync="journal") as where:
        assert where.next_seq("b") == 0 and where.next_seq("a") == 1
