"""More fault probes of the recorder's promises (docs/recorder.md): an event msgspec cannot
encode is refused as the recorder's own error naming the table's log, the field and the seq,
and changes nothing; the table goes on from the same seq."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches


def _start_with_a_surrogate_name(start: ev.AnyEvent) -> ev.AnyEvent:
    assert isinstance(start, ev.MatchStarted)
    return msgspec.structs.replace(start, players=(ev.Player("p\ud8000"), *start.players[1:]))


@pytest.mark.parametrize("validate", [True, False], ids=["validated", "unvalidated"])
def test_a_lone_surrogate_is_refused_naming_log_field_and_seq_and_changes_nothing(
        tmp_path: Path, validate: bool) -> None:
    # it raised UnicodeEncodeError (no path, no seq, no kind): a server decoding a player's
    # name with errors="surrogateescape" hands such text over
    events = matches()[0]
    path = tmp_path / "t.blog"
    with Recorder(tmp_path, validate=validate) as rec:
        with pytest.raises(LogFormatError) as first:
            rec.append("t", _start_with_a_surrogate_name(events[0]))
        assert (first.value.kind, first.value.seq, first.value.path) == ("validate", 0, str(path))
        assert "field 'players'" in first.value.message and "surrogate" in first.value.message
        assert not path.exists()  # a refused first event leaves no log
        assert rec.append("t", events[0]) == 0
        with pytest.raises(LogFormatError) as later:
            rec.append("t", msgspec.structs.replace(events[1], note="\udc80"))
        assert (later.value.kind, later.value.seq, later.value.path) == ("validate", 1, str(path))
        assert "field 'note'" in later.value.message
        assert rec.next_seq("t") == 1
        assert rec.append("t", events[1]) == 1
    assert log.read_events(path) == list(events[:2])


def test_an_integer_out_of_range_names_the_tables_log(tmp_path: Path) -> None:
    # kind "range" came without the path: the error did not say which table's log refused it
    events = matches()[0]
    with Recorder(tmp_path, validate=False) as rec:
        rec.append("t", events[0])
        with pytest.raises(LogFormatError) as caught:
            rec.append("t", msgspec.structs.replace(events[1], at=2**63))
        assert caught.value.kind == "range" and caught.value.seq == 1
        assert caught.value.path == str(tmp_path / "t.blog")
        assert "'at'" in caught.value.message
        assert rec.append("t", events[1]) == 1
    assert log.read_events(tmp_path / "t.blog") == list(events[:2])


# -- a journal a recorder did not write ----------------------------------------------------------


def _journal(directory: Path, *records: journal.Record, generation: int = 1) -> Path:
    path = directory / journal.name_of(generation)
    path.write_bytes(journal.header() + journal.frame(records))
    return path


def _new_log_bytes(events: list[ev.AnyEvent]) -> bytes:
    return log.encode_log(events, batch_events=1)


@pytest.mark.parametrize("name", ["../escape", "sub/../../escape", "ABSOLUTE", "a\x00b", ""],
                         ids=["dotdot", "nested", "absolute", "nul", "empty"])
def test_a_journal_record_naming_no_plain_match_is_never_written_back(
        tmp_path: Path, name: str) -> None:
    # writing back created ../escape.blog beside the directory (any path ending in .blog that
    # the recorder's user may write); a NUL stopped the recorder from opening at all
    events = list(matches()[0][:3])
    directory = tmp_path / "rec"
    directory.mkdir()
    if name == "ABSOLUTE":  # a path of its own, outside the directory
        name = str(tmp_path / "escape")
    outside = {p.name for p in tmp_path.iterdir()}
    good = journal.Record("good", 0, 0, 0, _new_log_bytes(events[:1]))
    bad = journal.Record(name, 0, 0, 0, _new_log_bytes(events))
    _journal(directory, good, bad)
    with Recorder(directory, sync="journal") as rec:
        stats = rec.stats()
        assert (stats.recreated, stats.journal_conflicts) == (1, 1)
        assert rec.next_seq("good") == 1  # the plain one was written back
        assert rec.append("good", events[1]) == 1
    assert {p.name for p in tmp_path.iterdir()} == outside
    kept = sorted(p.name for p in directory.iterdir() if p.name.endswith(".unfolded"))
    assert kept == [journal.name_of(1) + ".unfolded"]  # kept for an operator to look at
    assert sorted(p.name for p in directory.glob("*.blog")) == ["good.blog"]
    assert log.read_events(directory / "good.blog") == events[:2]


@pytest.mark.parametrize("where", ["gap", "negative"])
def test_a_journal_record_past_the_end_of_its_log_is_not_written_back(
        tmp_path: Path, where: str) -> None:
    # written, a record past the end left zeros before it: the log was damage from there
    # (every later event unreadable); before the file, pwrite's EINVAL stopped the recorder
    events = list(matches()[0][:4])
    directory = tmp_path / "rec"
    directory.mkdir()
    path = directory / "t.blog"
    path.write_bytes(_new_log_bytes(events[:2]))
    st = path.stat()
    whole = _new_log_bytes(events)
    two, three = len(_new_log_bytes(events[:2])), len(_new_log_bytes(events[:3]))
    next_one = journal.Record("t", st.st_dev, st.st_ino, two, whole[two:three])
    offset = three + 100 if where == "gap" else -5
    stray = journal.Record("t", st.st_dev, st.st_ino, offset, whole[three:])
    _journal(directory, next_one, stray)
    with Recorder(directory, sync="journal") as rec:
        stats = rec.stats()
        assert (stats.recovered, stats.journal_conflicts) == (1, 1)
        assert rec.next_seq("t") == 3
    assert path.read_bytes() == whole[:three]  # no zeros, nothing past the record it took
    assert log.read_events(path) == events[:3]
    assert (directory / (journal.name_of(1) + ".unfolded")).exists()


# -- a full disk, for real: a small tmpfs -------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs: writes fail with ENOSPC, as on a full disk. Skipped where mounting is
    not allowed."""
    import subprocess

    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", where],
            capture_output=True).returncode != 0:
        pytest.skip("needs root and mount")
    try:
        yield where
    finally:
        subprocess.run(["umount", where], capture_output=True)


@pytest.mark.parametrize("sync", ["fsync", "syncfs", "journal"])
def test_a_full_disk_keeps_every_acknowledged_event_and_leaves_no_stray_file(
        small_disk: Path, sync: str) -> None:
    # the state saved at close found the disk full and left .recorder.state.new behind
    directory = small_disk / "rec"
    sources = matches()
    acked: dict[str, int] = {}
    refused: dict[str, int] = {}
    with Recorder(directory, sync=sync, save_every=0) as rec:
        for t, events in enumerate(sources):
            name = f"t{t}"
            for event in events:
                try:
                    rec.append(name, event)
                except LogFormatError as exc:
                    assert exc.kind == "io", exc
                    refused[name] = event.seq
                    break
                acked[name] = event.seq
    assert refused, "the disk never filled"
    left = sorted(p.name for p in directory.iterdir())
    assert left == sorted([".recorder.lock", *(f"{n}.blog" for n in acked),
                           *([".recorder.state"] if ".recorder.state" in left else [])]), left
    for name, last in acked.items():  # every acknowledged event, exactly the source's
        assert log.read_events(directory / f"{name}.blog", allow_torn=True)[: last + 1] == \
            list(sources[int(name[1:])][: last + 1])
    with Recorder(directory, sync=sync, save_every=0) as rec:  # the next run goes on
        for name, last in acked.items():
            assert rec.next_seq(name) == last + 1, name
        for name in refused.keys() - acked.keys():
            assert rec.next_seq(name) == 0


def test_a_journal_claiming_a_gigabyte_record_is_not_read_into_memory(tmp_path: Path) -> None:
    # the whole journal file was read at once: a 3 GiB (sparse) one took 3 GiB before its
    # first frame, claiming a record of 1 GiB - 1 (then the limit), was even looked at
    import subprocess
    import sys

    directory = tmp_path / "rec"
    directory.mkdir()
    events = list(matches()[0][:2])
    good = journal.frame([journal.Record("t", 0, 0, 0, _new_log_bytes(events[:1]))])
    path = directory / journal.name_of(1)
    with open(path, "wb") as f:
        f.write(journal.header() + good + (2**30 - 1).to_bytes(4, "little") + bytes(4))
        f.truncate(3 << 30)
    child = f"""
import resource, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from buraco_log.recorder import Recorder
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
with Recorder({str(directory)!r}, validate=False, sync="journal", sync_threads=2) as rec:
    print(rec.stats().recreated, rec.next_seq("t"))
"""
    p = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert p.stdout.split() == [b"1", b"1"]  # the record before it was written back
    assert log.read_events(directory / "t.blog") == events[:1]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
def test_a_state_file_that_is_no_regular_file_is_ignored_at_once(tmp_path: Path,
                                                                kind: str) -> None:
    # a FIFO named .recorder.state hung the recorder's opening (open() waited for a writer);
    # a link to /dev/zero was read until memory ran out
    import subprocess
    import sys

    directory = tmp_path / "rec"
    directory.mkdir()
    state = directory / ".recorder.state"
    if kind == "fifo":
        os.mkfifo(state)
    elif kind == "dev-zero":
        state.symlink_to("/dev/zero")
    else:
        state.mkdir()
    events = list(matches()[0][:2])
    child = f"""
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches
with Recorder({str(directory)!r}, save_every=0) as rec:
    for event in matches()[0][:2]:
        rec.append("t", event)
"""
    try:
        p = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the recorder hung opening the directory")
    assert log.read_events(directory / "t.blog") == events
    # saving at close over a non-regular name fails quietly (a state only speeds up loading)
    assert p.returncode == 0, p.stderr.decode()[-2000:]


def test_journal_notes_beside_a_fifo_named_like_the_recorders_lock_do_not_hang(
        tmp_path: Path) -> None:
    # `audit DIR` asks whether a recorder holds DIR/.recorder.lock; opening a FIFO there
    # waited for a writer forever
    import subprocess
    import sys

    from buraco_log.recorder import journal_notes

    _journal(tmp_path, journal.Record("t", 0, 0, 0, _new_log_bytes(list(matches()[0][:1]))))
    os.mkfifo(tmp_path / ".recorder.lock")
    child = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
             "from buraco_log.recorder import journal_notes\n"
             f"print(len(journal_notes({str(tmp_path)!r})))\n")
    try:
        p = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("journal_notes hung on the FIFO")
    assert p.returncode == 0 and p.stdout.strip() == b"1", p.stderr
    assert "stopped without folding its journal" in journal_notes(tmp_path)[0]
