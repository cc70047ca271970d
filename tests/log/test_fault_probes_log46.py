"""Fault probes of the log, round 46.

- Zero bytes at a log's end read as a torn tail, whatever they stood for. A crash on a file
  system that updates a file's size before its data (XFS, ext4 data=writeback) leaves them
  where the write it tore was: no acknowledged event. But a recorder that syncs its journal
  (``sync="journal"``) acknowledges events before their log is synced, and its log's zero
  tail after a power loss stands where acknowledged events are: `repair` cut them. It now
  refuses while the journal holds them, and `verify` says so. Zeros followed by a whole record
  name the seqs that stood where the zeros are. A withdrawn journal record no longer stops
  `seal`.
- A crash's torn write read as damage (no repair) where several records shared one fsync and
  the later ones were lost whole, and where the last record's header lost its last sector.
- JSON Lines: an error of the first or the end line named seq 0 (an empty log's end line and
  its first line both said "line 1, seq 0"), or the next event's seq: they name no seq now.
- A file system without hard links (FAT, exFAT, some network ones): `link` failed with EPERM
  and no log could be created ("Operation not permitted"). A rename that never replaces is
  used there, or one line says why nothing can be written.
- A flush after a failed fsync repeated the failure's words at the end of the file with no
  seq; a write failing after unsynced records of the same call named the failed record's seq;
  a batched writer refusing an event left the events before it unsynced for good.
- `seal` through a link changed meanwhile said the name sealed; signals held by
  ``signalmask.held`` stayed blocked when the call blocking them raised; an output in
  /dev/shm was truncated and written in place, as a device is.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from buraco_log import journal, jsonl, log, signalmask
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.cli.probes import ROOT
from tests.log.power_lost import _NO_LINKS_CLI, _recorded_then_power_lost
from tests.log.samples import sample_events

EVENTS = sample_events(8)


def _log(path: Path, events: int = 8) -> list[int]:
    """Write a log of ``events`` events, one record each; the offset of each record."""
    with log.Writer(path, validate=False) as w:
        for event in EVENTS[:events]:
            w.append(event)
    with log.Reader(path) as reader:
        return [off for off, _ in reader.segments()]


# -- zeros at the end, zeros in the middle -------------------------------------------------------


def test_zeros_after_the_last_record_are_a_torn_tail_and_repair_cuts_only_them(
        tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    _log(path)
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(bytes(512))
    torn = log.verify(path).torn
    assert torn is not None and (torn.offset, torn.size) == (size, 512)
    report = log.repair(path, backup=False)
    assert report is not None and (report.cut_offset, report.events_kept) == (size, 8)
    assert log.read_events(path) == EVENTS


def test_zeros_where_records_stood_before_a_whole_record_name_the_lost_seqs(
        tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    offsets = _log(path)
    data = bytearray(path.read_bytes())
    data[offsets[3]:offsets[6]] = bytes(offsets[6] - offsets[3])  # seqs 3 to 5 zeroed
    path.write_bytes(data)
    with pytest.raises(LogFormatError) as caught:
        log.verify(path)
    err = caught.value
    assert (err.kind, err.offset, err.seq) == ("damage", offsets[3], 3)
    assert (f"data again at byte {offsets[6]}: a whole record of seq 6 starts there, so the "
            "zeros stand where the events of seqs 3 to 5, written before it, were: "
            ) in err.message, err.message
    with pytest.raises(LogFormatError):
        log.repair(path, backup=False)
    assert path.read_bytes() == data  # nothing cut


# -- a recorder's log after a power loss -----------------------------------------------------


def test_repair_refuses_to_cut_a_recorders_zero_tail_that_its_journal_acknowledged(
        tmp_path: Path) -> None:
    path, zeros, acknowledged = _recorded_then_power_lost(tmp_path)
    before = path.read_bytes()
    info = log.verify(path)
    assert info.torn is not None and info.torn.offset == zeros and info.events == 4
    assert "the recorder's journal" in info.torn.reason  # it said a crash's torn write only
    with pytest.raises(LogFormatError) as caught:
        log.repair(path)  # it cut them: 4 events kept, the 2 acknowledged ones gone
    assert (caught.value.kind, caught.value.offset) == ("locked", zeros)
    assert "holds acknowledged events of this log" in caught.value.message
    assert "nothing was cut" in caught.value.message
    assert path.read_bytes() == before
    assert not list(tmp_path.glob("a.blog.bak*"))
    with Recorder(tmp_path, sync="journal") as rec:  # what the refusal says to do
        assert rec.next_seq("a") == 6
    assert log.read_events(path) == acknowledged


def test_a_withdrawn_journal_record_does_not_stop_repair_or_seal(tmp_path: Path) -> None:
    # the recorder withdraws a record whose append it refused: never acknowledged, never
    # written back; its bytes missing from the log are no reason to refuse a rewrite
    path = tmp_path / "a.blog"
    _log(path, 4)
    st = os.stat(path)
    size = st.st_size
    ghost = journal.Record("a", st.st_dev, st.st_ino, size, b"\x01" * 40)
    name = tmp_path / journal.name_of(1)
    name.write_bytes(journal.header() + journal.frame([ghost, journal.withdrawal(ghost)]))
    with open(path, "ab") as f:
        f.write(b"\x01" * 10)  # what the failed write left: a torn tail
    report = log.repair(path, backup=False)
    assert report is not None and report.cut_offset == size
    assert log.seal(path).events == 4
    os.unlink(name)


# -- JSON Lines: the first and end lines hold no seq ---------------------------------------------

_HEAD_LINE = '{"log": "buraco-log", "version": 2, "sealed": true}'


def _end_line(events: int) -> str:
    return json.dumps({"log": "end", "events": events, "head": log.head_digest(EVENTS[:events])})


def _event_lines(n: int) -> list[str]:
    return [json.dumps(jsonl.event_to_json(e)) for e in EVENTS[:n]]


@pytest.mark.parametrize(("lines", "line", "seq", "words"), [
    # the end line alone: "line 1, seq 0", as an error of the first line said
    ([_end_line(3)], 1, None, "end line says 3 events, found 0 (seqs 0 to 2 missing: "),
    ([_HEAD_LINE, _end_line(3)], 2, None, "end line says 3 events, found 0 (seqs 0 to 2 "),
    (["", "# x", _end_line(3)], 3, None, "end line says 3 events, found 0"),
    ([_HEAD_LINE, *_event_lines(2), _end_line(3)], 4, None,
     "end line says 3 events, found 2 (seq 2 missing: lines lost or removed"),
    ([_HEAD_LINE, *_event_lines(3), _end_line(2)], 5, None,
     "end line says 2 events, found 3 (seq 2 more than it counts)"),
    ([_HEAD_LINE, *_event_lines(2), '{"log": "end", "events": 2, "head": "' + "0" * 64 + '"}'],
     4, None, "events do not hash to the head digest on the end line"),
    ([_HEAD_LINE, _HEAD_LINE], 2, None, "a second first line (the first is line 1)"),
    (['{"log": "buraco-log", "version": "2"}'], 1, None, "'version' on the first line"),
    ([_end_line(0), _HEAD_LINE], 2, None,
     "text after the end line (line 1), which must be the last"),
    ([*_event_lines(2), _end_line(2), *_event_lines(3)[2:]], 4, 2,
     "an event after the end line (line 3), which must be the last"),
])
def test_json_lines_errors_name_the_line_and_a_seq_only_where_an_event_is(
        tmp_path: Path, lines: list[str], line: int, seq: int | None, words: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(LogFormatError) as caught:
        jsonl.read_jsonl(path)
    err = caught.value
    assert (err.line, err.seq) == (line, seq), str(err)
    assert err.message.startswith(words), err.message


# -- file systems without hard links ---------------------------------------------------------


def _no_links(monkeypatch: pytest.MonkeyPatch, code: int = errno.EPERM) -> None:
    """``link(2)`` as FAT, exFAT and some network file systems answer it."""
    def link(src: object, dst: object, *args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code), src, None, dst)
    monkeypatch.setattr(os, "link", link)


def _no_noreplace_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    def rename(src: str, dst: str) -> None:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), src, None, dst)
    monkeypatch.setattr(log, "_rename_noreplace", rename)


@pytest.mark.parametrize("code", [errno.EPERM, errno.ENOTSUP, errno.EXDEV])
def test_a_new_log_is_made_without_hard_links_whole_and_locked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    _no_links(monkeypatch, code)
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False) as w:  # it was "a.blog: Operation not permitted"
        with pytest.raises(LogFormatError, match="another writer holds this log"):
            log.Writer(path, validate=False)
        w.append_many(EVENTS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.blog"]  # no temporary left
    assert log.read_events(path) == EVENTS
    assert log.seal(path).events == 8  # its copy is made the same way
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.blog"]


def test_conversion_without_hard_links_never_replaces_a_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "a.blog"
    log.write_log(src, EVENTS, validate=False)
    _no_links(monkeypatch)
    assert jsonl.convert(src, tmp_path / "a.jsonl", "jsonl").events == 8
    assert jsonl.convert(tmp_path / "a.jsonl", tmp_path / "b.blog", "binary").events == 8
    assert log.read_events(tmp_path / "b.blog") == EVENTS
    taken = tmp_path / "c.blog"
    taken.write_bytes(b"someone else's")
    jsonl_tmp = tmp_path / "x.tmp"
    jsonl_tmp.write_bytes(b"new")
    with pytest.raises(FileExistsError):  # made meanwhile: not replaced
        log.place_new(str(jsonl_tmp), str(taken))
    assert taken.read_bytes() == b"someone else's" and jsonl_tmp.read_bytes() == b"new"


def test_without_hard_links_or_a_rename_that_never_replaces_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "a.blog"
    log.write_log(src, EVENTS, validate=False)
    _no_links(monkeypatch)
    _no_noreplace_rename(monkeypatch)
    with pytest.raises(LogFormatError) as caught:
        log.Writer(tmp_path / "new.blog", validate=False)
    assert caught.value.path == str(tmp_path / "new.blog")
    assert "makes no hard link (Operation not permitted) and no rename that never replaces " \
        "a file" in caught.value.message
    with pytest.raises(LogFormatError) as caught:
        jsonl.convert(src, tmp_path / "a.jsonl", "jsonl")
    assert caught.value.path == str(tmp_path / "a.jsonl")
    assert "makes no hard link" in caught.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.blog"]  # nothing half-made


def test_convert_on_a_file_system_without_hard_links(tmp_path: Path) -> None:
    src = tmp_path / "a.blog"
    log.write_log(src, EVENTS, validate=False)

    def run(mode: str, out: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", _NO_LINKS_CLI, mode, "convert", str(src),
                               "-o", str(out)], cwd=ROOT, capture_output=True, text=True,
                              timeout=60, check=False,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))

    done = run("rename", tmp_path / "a.jsonl")
    assert done.returncode == 0, done.stderr
    assert jsonl.read_jsonl(tmp_path / "a.jsonl") == EVENTS
    done = run("none", tmp_path / "b.jsonl")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"buraco-log: error: {tmp_path / 'b.jsonl'}: writing the new file failed: this file "
        "system makes no hard link (Operation not permitted) and no rename that never replaces "
        "a file (Function not implemented), one of which puts a new file in place whole "
        "without replacing one made meanwhile; nothing was written (write it on another file "
        "system)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.blog", "a.jsonl"]


# -- after a failed fsync ------------------------------------------------------------------------


def test_a_flush_after_a_failed_fsync_is_refused_where_the_unacknowledged_events_begin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False, batched=True, batch_events=4)
    w.append_many(EVENTS[:4])
    w.flush()
    durable = path.stat().st_size
    real = os.fsync
    failed: list[int] = []

    def fsync(fd: int) -> None:
        if not failed:
            failed.append(fd)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    w.append_many(EVENTS[4:7])
    with pytest.raises(LogFormatError) as first:
        w.append(EVENTS[7])  # the batch is full: written, and its fsync fails
    assert (first.value.offset, first.value.seq) == (durable, 4)
    for again in (w.flush, w.sign_head, w.receipt):
        with pytest.raises(LogFormatError) as caught:
            again()
        # it said the fsync's failure again, at the end of the file and with no seq
        assert (caught.value.kind, caught.value.offset, caught.value.seq) == (
            "closed", durable, 4), str(caught.value)
        assert caught.value.message.startswith("the writer writes no more after an earlier "
                                               "failure (fsync failed: ")
    w.close()
    monkeypatch.setattr(os, "fsync", real)
    with log.Writer(path, validate=False) as resumed:  # what the log kept: reopen to see
        assert resumed.next_seq == 8


# -- signals held back -----------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs pthread_sigmask")
def test_a_handler_raising_as_the_signals_are_blocked_leaves_them_unblocked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # pthread_sigmask runs the handlers of signals already arrived once the mask is changed
    # (CPython's PyErr_CheckSignals after the call): a Ctrl-C that came just before the block
    # raised from the call that blocked, and SIGINT and SIGTERM stayed blocked for good
    real = signal.pthread_sigmask
    before = real(signal.SIG_BLOCK, ())

    def sigmask(how: int, mask: Iterable[int]) -> set[signal.Signals]:
        old = real(how, mask)
        if how == signal.SIG_BLOCK and signal.SIGINT in set(mask):
            raise KeyboardInterrupt  # the pending handler's, raised as the call returns
        return old

    monkeypatch.setattr(signal, "pthread_sigmask", sigmask)
    ran = False
    try:
        with pytest.raises(KeyboardInterrupt), signalmask.held():
            ran = True
        now = real(signal.SIG_BLOCK, ())
    finally:
        real(signal.SIG_SETMASK, before)
    assert not ran
    assert now == before, f"left blocked: {sorted(now - before)}"


# -- a link swapped while the log it named was sealed -------------------------------------------


def test_seal_through_a_link_swapped_meanwhile_does_not_say_the_name_is_sealed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log.write_log(tmp_path / "A.blog", EVENTS, validate=False, sealed=False)
    log.write_log(tmp_path / "B.blog", EVENTS[:4], validate=False, sealed=False)
    link = tmp_path / "L.blog"
    link.symlink_to("A.blog")

    def swap(point: str) -> None:
        if point == "seal.locked":
            link.unlink()
            link.symlink_to("B.blog")

    monkeypatch.setattr(log, "_hook", swap)
    with pytest.raises(LogFormatError) as caught:
        log.seal(link)  # it returned "sealed, 8 events" of a name now leading to B
    assert caught.value.path == str(link) and caught.value.kind == "io"
    assert f"now leads to {str(tmp_path / 'B.blog')!r}, which was not sealed" in str(caught.value)
    assert log.verify(tmp_path / "A.blog").sealed  # the file it named was sealed
    assert not log.verify(link).sealed


# -- outputs in /dev/shm ---------------------------------------------------------------------


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="needs a writable /dev/shm")
def test_a_page_written_into_dev_shm_replaces_its_file_whole(tmp_path: Path) -> None:
    from buraco_log.outpaths import written_in_place
    from buraco_log.view import write_page

    page = Path("/dev/shm") / f"buraco-log-test-{os.getpid()}-{tmp_path.name}.html"
    page.write_text("old page\n")
    try:
        with open(page, encoding="utf-8") as old:
            assert not written_in_place(page)  # a plain file in a tmpfs, not a device
            write_page(page, "<p>new</p>")
            # renamed over: the old file is whole to whoever had it open (it was truncated
            # and written in place, and a failure midway lost both)
            assert old.read() == "old page\n"
        assert page.read_text() == "<p>new</p>"
        assert not [p for p in page.parent.iterdir() if page.name in p.name and p != page]
    finally:
        page.unlink()


def test_a_failed_write_after_unsynced_records_names_the_first_event_not_acknowledged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False, batch_events=2)
    w.append(EVENTS[0])
    durable = path.stat().st_size
    real = os.pwrite
    writes: list[int] = []

    def pwrite(fd: int, data: bytes, offset: int) -> int:
        writes.append(offset)
        if len(writes) == 2:  # the second record of one append_many: the first is unsynced
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", pwrite)
    with pytest.raises(LogFormatError) as caught:
        w.append_many(EVENTS[1:6])
    # it named seq 3 and its byte, as if seqs 1 and 2 were on disk: never synced
    assert (caught.value.offset, caught.value.seq) == (durable, 1)
    assert caught.value.message.endswith(
        f"not acknowledged: the events from seq 1 on (from byte {durable}), written before it "
        "but never synced (reopen the log to see what was kept)"), caught.value.message
    w.close()


# -- a crash during a write of several records with one fsync ----------------------------------


@pytest.mark.parametrize("lost", ["sector", "to_the_end"])
def test_records_of_one_unsynced_write_lost_in_a_crash_are_a_torn_tail(
        tmp_path: Path, lost: str) -> None:
    import msgspec

    big = [msgspec.structs.replace(e, note="n" * 1500) if e.seq else e for e in EVENTS]
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False, batch_events=2) as w:
        w.append(big[0])  # acknowledged
        durable = path.stat().st_size
        w.append_many(big[1:])  # four records, one fsync: the write a crash tears
    with log.Reader(path) as reader:
        second = [off for off, _ in reader.segments()][2]  # the group's second record
    data = bytearray(path.read_bytes())
    boundary = (durable + 600) // 512 * 512 + 512  # a sector inside the first record's payload
    assert boundary + 512 < second
    if lost == "sector":  # it and the records after it never reached the disk
        data[boundary:boundary + 512] = bytes(512)
        data[second:] = bytes(len(data) - second)
    else:  # from a sector boundary in it to the end of the file
        data[boundary:] = bytes(len(data) - boundary)
    path.write_bytes(data)
    info = log.verify(path)  # it was damage: "segment checksum mismatch", no repair
    assert info.torn is not None and (info.torn.offset, info.events) == (durable, 1)
    assert info.torn.reason == "last record partly zeroed (pages lost in a crash)"
    report = log.repair(path, backup=False)
    assert report is not None and report.events_kept == 1
    assert log.read_events(path) == big[:1]


def test_a_lost_sector_with_a_whole_record_after_it_is_still_damage(tmp_path: Path) -> None:
    import msgspec

    big = [msgspec.structs.replace(e, note="n" * 1500) if e.seq else e for e in EVENTS]
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False, batch_events=2) as w:
        w.append(big[0])
        durable = path.stat().st_size
        w.append_many(big[1:])
    data = bytearray(path.read_bytes())
    boundary = (durable + 600) // 512 * 512 + 512
    data[boundary:boundary + 512] = bytes(512)  # the records after it are whole
    path.write_bytes(data)
    with pytest.raises(LogFormatError) as caught:
        log.verify(path)
    assert (caught.value.kind, caught.value.offset, caught.value.seq) == ("damage", durable, 1)


@pytest.mark.parametrize("bad", ["range", "unreadable"])
def test_a_batched_writer_syncs_the_events_before_one_it_refuses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    import msgspec

    refused = (msgspec.structs.replace(EVENTS[5], at=2**64 + 5) if bad == "range"
               else msgspec.structs.replace(EVENTS[5], note=7))  # a note must be text
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False, batched=True, batch_events=3)
    real = os.fsync
    synced: list[int] = []

    def fsync(fd: int) -> None:
        real(fd)
        synced.append(os.fstat(fd).st_size)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(LogFormatError) as caught:
        w.append_many([*EVENTS[:5], refused, *EVENTS[6:]])
    assert caught.value.seq == 5
    with pytest.raises(LogFormatError):
        w.flush()  # refused: the writer takes no more
    w.close()
    # the five events before it were written and never synced: no flush nor close would
    assert synced and synced[-1] == path.stat().st_size
    assert log.read_events(path) == EVENTS[:5]


def _last_header_across_a_sector(directory: Path) -> tuple[Path, int, int]:
    """A log whose last record's header spans a sector boundary, at least 8 bytes of it
    after: the log, the last record's offset and that boundary's."""
    import msgspec

    for pad in range(0, 700, 7):
        path = directory / f"p{pad}.blog"
        events = [msgspec.structs.replace(e, note="x" * pad) if e.seq == 6 else e
                  for e in EVENTS]
        with log.Writer(path, validate=False) as w:
            for event in events:
                w.append(event)
        with log.Reader(path) as reader:
            last = [off for off, _ in reader.segments()][-1]
        cut = -last % 512
        if cut > 0 and 56 - cut >= 8:  # a sealed log's record header: 56 bytes
            return path, last, last + cut
        path.unlink()
    raise AssertionError("no layout found")


def test_a_last_records_header_zero_from_a_sector_boundary_to_the_end_is_a_torn_tail(
        tmp_path: Path) -> None:
    path, last, boundary = _last_header_across_a_sector(tmp_path)
    data = bytearray(path.read_bytes())
    data[boundary:] = bytes(len(data) - boundary)
    path.write_bytes(data)
    info = log.verify(path)  # it was damage: "segment header checksum mismatch", no repair
    assert info.torn is not None and (info.torn.offset, info.events) == (last, 7)
    report = log.repair(path, backup=False)
    assert report is not None and report.events_kept == 7
    data[-1] = 1  # data after the zeros: damage, as ever
    path.write_bytes(data)
    with pytest.raises(LogFormatError) as caught:
        log.verify(path)
    assert (caught.value.kind, caught.value.offset) == ("damage", last)


def test_a_directory_that_cannot_be_listed_holds_no_journal_to_look_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.blog"
    _log(path, 4)
    with open(path, "ab") as f:
        f.write(bytes(100))

    def unlisted(directory: str, *, unfolded: bool = False) -> list[tuple[int, str]]:
        raise PermissionError(13, "Permission denied", directory)  # a directory of mode -wx

    monkeypatch.setattr(journal, "generations", unlisted)
    assert log.verify(path).torn is not None  # it raised PermissionError
    assert log.repair(path, backup=False) is not None
    assert log.seal(path).events == 4
