"""Fault probes of the recorder (docs/recorder.md): a refused move names its table and log; one
match id is held by one live table (``unique_match_ids``); a journal never writes back an
append the recorder refused; and a file that took a log's inode number is not the log."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import msgspec
import pytest

from buraco_log import journal, log
from buraco_log.errors import IllegalMoveError, LogFormatError
from buraco_log.recorder import LOCK_NAME, Recorder
from tests.recorder.sources import matches

a, b = matches()[0], matches()[1]


def _journal(directory: Path, *records: journal.Record) -> Path:
    path = directory / journal.name_of(1)
    path.write_bytes(journal.header() + journal.frame(records))
    return path


def _image(directory: Path, to: Path) -> Path:
    """The directory as a crash leaves it (its live journal and all), without its lock."""
    shutil.copytree(directory, to, ignore=shutil.ignore_patterns(LOCK_NAME))
    return to


def _closed(rec: Recorder) -> None:
    for _ in range(500):
        if not rec.stats().open_handles:
            return
        threading.Event().wait(0.01)
    raise AssertionError("the idle log was not closed")


# -- 1. a refused move names its table and its log -------------------------------------------


def test_an_illegal_move_names_the_table_its_log_the_seq_and_the_rule(tmp_path: Path) -> None:
    with Recorder(tmp_path) as rec:
        for event in a[:5]:
            rec.append("table-17", event)
        with pytest.raises(IllegalMoveError) as illegal:
            rec.append("table-17", msgspec.structs.replace(matches()[2][5], seq=5))
        exc = illegal.value
        line = str(exc)
        assert "\n" not in line and "Traceback" not in line
        assert "table 'table-17'" in line and str(tmp_path / "table-17.blog") in line
        assert "seq 5" in line and f"[{exc.rule}]" in line and exc.rule
        # what callers read stays as it was
        assert exc.seq == 5 and exc.explanation in line and exc.message.startswith(f"[{exc.rule}]")
        assert (exc.table, exc.path) == ("table-17", str(tmp_path / "table-17.blog"))
        # accepted: the table goes on from the same seq
        assert rec.append("table-17", a[5]) == 5
    assert log.read_events(tmp_path / "table-17.blog") == list(a[:6])


def test_an_illegal_move_error_raised_elsewhere_reads_as_before() -> None:
    exc = IllegalMoveError("draw.twice", "already drew", seq=7)
    assert str(exc) == "seq 7: [draw.twice] already drew"
    assert exc.path is None and exc.table is None


# -- 2. one match id, one live table ----------------------------------------------------------


def test_a_second_table_opening_a_live_match_id_is_refused_naming_the_holder(
        tmp_path: Path) -> None:
    with Recorder(tmp_path, unique_match_ids=True) as rec:
        rec.append("a", a[0])
        with pytest.raises(LogFormatError) as dup:
            rec.append("b", a[0])
        line = str(dup.value)
        assert dup.value.kind == "duplicate" and "\n" not in line
        assert repr(a[0].match_id) in line and "'a'" in line and str(tmp_path / "a.blog") in line
        assert str(tmp_path / "b.blog") in line and "seq 0" in line
        assert not (tmp_path / "b.blog").exists()  # nothing written
        # accepted: another match id in the other table; the id again once "a" is let go
        assert rec.append("b", b[0]) == 0
        rec.forget("a")
        rec.flush()
        assert rec.append("c", a[0]) == 0
    assert log.read_events(tmp_path / "c.blog") == [a[0]]


def test_a_match_id_held_by_a_saved_table_not_yet_loaded_is_refused(tmp_path: Path) -> None:
    with Recorder(tmp_path, unique_match_ids=True) as rec:
        for event in a[:3]:
            rec.append("a", event)
    with Recorder(tmp_path, unique_match_ids=True) as rec:  # "a" saved mid-match, not loaded
        with pytest.raises(LogFormatError, match="already held by live table 'a'"):
            rec.append("b", a[0])
        assert rec.append("a", a[3]) == 3  # accepted: the holder itself goes on


def test_by_default_tables_may_replay_one_match(tmp_path: Path) -> None:
    # (load generators and tests replay one match in many tables)
    with Recorder(tmp_path) as rec:
        assert rec.append("a", a[0]) == 0
        assert rec.append("b", a[0]) == 0


# -- 3. a journal never writes back a refused append ------------------------------------------


def test_a_refused_append_is_withdrawn_from_the_journal(tmp_path: Path) -> None:
    live = tmp_path / "live"
    rec = Recorder(live, sync="journal", checkpoint_every=600, save_every=0)
    try:
        for event in a[:2]:
            rec.append("t", event)  # acknowledged: in the journal, which created the log
        os.unlink(live / "t.blog")  # removed by hand while the recorder holds it
        with pytest.raises(LogFormatError, match="replaced or removed"):
            rec.append("t", a[2])  # written to the removed file and journaled, then refused
        assert rec.stats().journal_withdrawals == 1
        image = _image(live, tmp_path / "image")  # a crash now
    finally:
        rec.close()
    with Recorder(image) as again:
        assert again.stats().journal_withdrawn == 2  # the refused record and its withdrawal
        assert again.next_seq("t") == 2
    # accepted: the acknowledged events come back; refused: the third does not
    assert log.read_events(image / "t.blog") == list(a[:2])


def test_withdrawing_cuts_only_the_records_after_it() -> None:
    first = journal.Record("t", 1, 2, 0, b"head+one")
    second = journal.Record("t", 1, 2, 8, b"two")
    other_file = journal.Record("t", 1, 3, 8, b"two")
    withdrawn = journal.withdrawal(second)
    after = journal.Record("t", 1, 2, 8, b"TWO")
    assert journal.withdraw([first, second, other_file, withdrawn, after]) == [
        first, other_file, after]
    assert journal.withdraw([first, journal.Record("t", 1, 2, 4, b"")]) == [
        journal.Record("t", 1, 2, 0, b"head")]


# -- 4. a file that took the log's inode number -----------------------------------------------


def _log_bytes(events: list[object]) -> bytes:
    return log.encode_log(events, batch_events=1)  # type: ignore[arg-type]


def test_write_back_leaves_alone_another_file_with_the_logs_inode(tmp_path: Path) -> None:
    ours = _log_bytes(list(a[:4]))
    theirs = _log_bytes(list(b[:4]))
    path = tmp_path / "t.blog"
    path.write_bytes(theirs)  # the journal's log was removed; this file took its inode
    st = path.stat()
    _journal(tmp_path, journal.Record("t", st.st_dev, st.st_ino, 0, ours))
    with Recorder(tmp_path) as rec:
        assert (rec.stats().recovered, rec.stats().journal_conflicts) == (0, 1)
    assert path.read_bytes() == theirs  # not written into
    assert (tmp_path / (journal.name_of(1) + ".unfolded")).exists()


@pytest.mark.parametrize("lost", ["cut short", "zero-filled"])
def test_write_back_still_completes_a_log_a_power_loss_left_short_or_zeroed(
        tmp_path: Path, lost: str) -> None:
    ours = _log_bytes(list(a[:4]))
    keep = len(_log_bytes(list(a[:2])))
    path = tmp_path / "t.blog"
    path.write_bytes(ours[:keep] if lost == "cut short" else
                     ours[:keep] + bytes(len(ours) - keep))
    st = path.stat()
    _journal(tmp_path, journal.Record("t", st.st_dev, st.st_ino, 0, ours))
    with Recorder(tmp_path) as rec:
        assert (rec.stats().recovered, rec.stats().journal_conflicts) == (1, 0)
        assert rec.next_seq("t") == 4
    assert path.read_bytes() == ours


def test_a_log_overwritten_while_closed_with_its_inode_and_size_is_refused(
        tmp_path: Path) -> None:
    with Recorder(tmp_path, idle_timeout=0.01, save_every=0) as rec:
        for event in a[:4]:
            rec.append("t", event)
        _closed(rec)
        path = tmp_path / "t.blog"
        content = path.read_bytes()
        threading.Event().wait(0.02)  # a later clock tick than the recorder's last write
        with open(path, "r+b") as f:  # another file's bytes, in its inode, at its size
            f.write(content[:-1] + bytes([content[-1] ^ 0xFF]))
        assert path.stat().st_size == len(content)
        with pytest.raises(LogFormatError) as refused:  # it was taken for the log
            rec.append("t", a[4])
        assert str(path) in str(refused.value) and "\n" not in str(refused.value)
    assert path.read_bytes()[:-1] == content[:-1]  # nothing appended


def test_a_log_only_read_or_touched_while_closed_goes_on(tmp_path: Path) -> None:
    with Recorder(tmp_path, idle_timeout=0.01, save_every=0) as rec:
        for event in a[:4]:
            rec.append("t", event)
        _closed(rec)
        path = tmp_path / "t.blog"
        assert log.read_events(path) == list(a[:4])  # read: no time the check compares
        assert rec.append("t", a[4]) == 4
        _closed(rec)
        threading.Event().wait(0.02)
        os.utime(path, ns=(0, 0))  # its times changed, its bytes not: read again, and adopted
        assert rec.append("t", a[5]) == 5
    assert log.read_events(tmp_path / "t.blog") == list(a[:6])
