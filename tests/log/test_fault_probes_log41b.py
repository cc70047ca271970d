"""Fault probes of the log writer and the forensic reader, round 41b.

- A log cut under a ``Writer`` (a program that ignores the lock: ``truncate``, a log rotator)
  was written past its end: a hole of zeros, the event acknowledged, and every reader refused
  the log from the hole on. Bytes appended behind its back were overwritten by its next record.
  The writer now checks, before each write, that the open file ends where it last wrote, and
  before it acknowledges, that the file at its path has that size; otherwise it refuses
  (kind ``io``) and writes nothing more.
- An exception raised in the middle of a write (a signal handler's, ``KeyboardInterrupt``) left
  the writer's chain holding events that never reached the file: the next appends were
  acknowledged into a log whose chain broke there. The writer now stops, cutting off what it
  wrote of the record.
- ``explain --anyway``'s reader (``forensic.read_anyway``) passed a repeated signature record
  that ``verify`` refuses, and said the log was whole.
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from buraco_log import forensic, jsonl, log
from buraco_log.errors import LogFormatError
from buraco_log.signing.keys import Signer
from tests.recorder.sources import matches
from tests.signing.helpers import match, write_signed

src = matches()[0]
SITE = Signer.generate()
SEALED_HEAD = log._SEG_HEAD.size + 32 + log._SEG_TAIL.size


def _written(path: Path, n: int, **kw: Any) -> tuple[log.Writer, int]:
    """A writer that has appended (and flushed) the first ``n`` events; the file's size."""
    w = log.Writer(path, **kw)
    for event in src[:n]:
        w.append(event)
    w.flush()
    return w, path.stat().st_size


def _resize(path: Path, change: str) -> None:
    if change == "cut":
        os.truncate(path, path.stat().st_size - 10)  # the last record cut short
    else:
        with open(path, "ab") as f:
            f.write(b"\x00" * 7)


def _kept(path: Path) -> list[Any]:
    with log.Reader(path, allow_torn=True) as reader:
        return [e for _, seg in reader.segments() for e in seg]


# -- a log resized under the writer ----------------------------------------------------------


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("change", ["cut", "appended to"])
def test_a_log_resized_under_a_writer_is_refused_before_the_write(
        tmp_path: Path, change: str, batched: bool) -> None:
    path = tmp_path / "m.blog"
    w, size = _written(path, 12, batched=batched)
    _resize(path, change)
    changed = path.read_bytes()
    with pytest.raises(LogFormatError) as caught:
        w.append(src[12])
        w.flush()
    error = caught.value
    assert (error.kind, error.offset, error.seq) == ("io", size, 12)
    assert "\n" not in str(error) and str(error).startswith(f"{path}, byte {size}, seq 12: ")
    assert f"the log was {change} by a program that ignores the writer lock " \
           f"({len(changed)} bytes, where the writer had written {size})" in str(error)
    with pytest.raises(LogFormatError) as again:  # the writer takes no more
        w.append(src[13])
    assert again.value.kind == "closed"
    w.close()
    assert path.read_bytes() == changed  # nothing written, nothing cut
    last = 11 if not batched else 0  # the last segment (all 12 events when batched) cut
    assert _kept(path) == list(src[:last if change == "cut" else 12])


def test_a_signature_record_is_not_written_past_a_cut_end(tmp_path: Path) -> None:
    path = tmp_path / "s.blog"
    events = match(key_id=SITE.key_id)
    w = log.Writer(path, signer=SITE, sign_at="end")
    for event in events[:8]:
        w.append(event)
    size = path.stat().st_size
    os.truncate(path, size - 5)
    with pytest.raises(LogFormatError) as caught:
        w.sign_head()  # a signature record alone: checked as the events are
    assert caught.value.kind == "io" and f"where the writer had written {size}" in str(caught.value)
    w.close()  # and close signs nothing now
    assert path.stat().st_size == size - 5


def test_a_cut_between_the_write_and_the_fsync_is_not_acknowledged(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.blog"
    w, size = _written(path, 12)
    real = os.fsync

    def cut_then_sync(fd: int) -> None:
        os.ftruncate(fd, size)  # the record just written, cut off by someone else
        real(fd)

    monkeypatch.setattr(os, "fsync", cut_then_sync)
    with pytest.raises(LogFormatError) as caught:
        w.append(src[12])
    monkeypatch.undo()
    assert caught.value.kind == "io" and caught.value.seq == 12
    assert "while the events from seq 12 on were written: they are not acknowledged" in str(
        caught.value)
    w.close()
    assert log.read_events(path) == list(src[:12])


def test_normal_appends_and_a_reopen_after_close_are_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with log.Writer(path, batched=True, batch_events=5) as w:  # several segments a flush
        w.append_many(src[:23])
        w.flush()
        for event in src[23:30]:
            w.append(event)
    with log.Writer(path) as w:  # reopened: its end is where the log ends
        for event in src[30:34]:
            w.append(event)
    signed = tmp_path / "s.blog"
    events = match(key_id=SITE.key_id)
    write_signed(signed, events[:10], SITE)
    with log.Writer(signed, signer=SITE) as w:
        w.append(events[10])
        w.sign_head()
    assert log.read_events(path) == list(src[:34])
    assert log.verify(signed).events == 11


# -- the file moved, replaced or removed -----------------------------------------------------


def test_a_renamed_directory_or_a_replaced_file_is_not_acknowledged(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    w, _ = _written(folder / "m.blog", 12)
    os.rename(folder, tmp_path / "moved")
    with pytest.raises(LogFormatError) as caught:
        w.append(src[12])
    assert caught.value.kind == "io" and caught.value.seq == 12
    assert "replaced or removed by a program that does not take the log's lock" in str(
        caught.value)
    w.close()
    assert log.read_events(tmp_path / "moved" / "m.blog")[:12] == list(src[:12])

    path = tmp_path / "r.blog"
    w, _ = _written(path, 12)
    shutil.copy(path, tmp_path / "copy")
    os.replace(tmp_path / "copy", path)
    before = path.read_bytes()
    with pytest.raises(LogFormatError):
        w.append(src[12])
    w.close()
    assert path.read_bytes() == before  # the file now at the path was not written


# -- interrupted by a signal -----------------------------------------------------------------


class Alarm(Exception):
    pass


@pytest.fixture
def raising_alarm() -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        raise Alarm

    old = signal.signal(signal.SIGALRM, handler)
    yield
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("where", ["mid-write", "before the write", "during fsync"])
def test_a_write_interrupted_by_a_signal_stops_the_writer_and_the_log_stays_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raising_alarm: None, where: str
) -> None:
    path = tmp_path / "m.blog"
    w, size = _written(path, 12)
    real_pwrite, real_fsync = os.pwrite, os.fsync

    def pwrite(fd: int, data: Any, offset: int) -> int:
        monkeypatch.setattr(os, "pwrite", real_pwrite)
        n = real_pwrite(fd, bytes(data[:len(data) // 2]), offset) if where == "mid-write" else 0
        os.kill(os.getpid(), signal.SIGALRM)  # the handler raises at the next bytecode
        return n

    def fsync(fd: int) -> None:
        monkeypatch.setattr(os, "fsync", real_fsync)
        real_fsync(fd)
        os.kill(os.getpid(), signal.SIGALRM)

    if where == "during fsync":
        monkeypatch.setattr(os, "fsync", fsync)
    else:
        monkeypatch.setattr(os, "pwrite", pwrite)
    with pytest.raises(Alarm):
        w.append(src[12])
    monkeypatch.undo()
    with pytest.raises(LogFormatError) as caught:  # the program goes on: refused
        w.append(src[13])
    assert caught.value.kind == "closed" and "a write was interrupted (Alarm)" in str(caught.value)
    assert "the events from seq 12 on are not acknowledged" in str(caught.value)
    with pytest.raises(LogFormatError):
        w.sign_head()  # no head is signed or written by a broken writer either
    w.close()
    kept = log.read_events(path)  # whole: the partial record was cut off
    assert kept == list(src[:13 if where == "during fsync" else 12])
    assert where == "during fsync" or path.stat().st_size == size
    with log.Writer(path) as again:  # and a new writer goes on from it
        again.append(src[len(kept)])
    assert log.read_events(path) == list(src[:len(kept) + 1])


def test_an_append_interrupted_between_counting_and_buffering_is_not_written(
        tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    w, size = _written(path, 12, batched=True, validate=False)

    class Interrupted(list[Any]):
        def append(self, item: Any) -> None:
            raise KeyboardInterrupt  # the signal came as the event was buffered

    w._buffer = Interrupted()
    with pytest.raises(KeyboardInterrupt):
        w.append(src[12])
    w._buffer = []
    w.append(src[13])  # counted 12 as buffered: 13 is taken, a gap at 12
    with pytest.raises(LogFormatError) as caught:
        w.flush()
    assert caught.value.kind == "seq" and "do not follow seq 11" in str(caught.value)
    w.close()
    assert path.stat().st_size == size and log.read_events(path) == list(src[:12])


def test_signals_that_do_not_raise_interrupt_no_write(tmp_path: Path) -> None:
    hits = 0

    def count(signum: int, frame: FrameType | None) -> None:
        nonlocal hits
        hits += 1

    old = signal.signal(signal.SIGALRM, count)
    signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
    try:
        with log.Writer(tmp_path / "m.blog") as w:
            for event in src[:120]:
                w.append(event)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert hits > 0
    assert log.read_events(tmp_path / "m.blog") == list(src[:120])


# -- explain --anyway: a repeated signature record ----------------------------------------------


@pytest.fixture(scope="module")
def repeated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """A signed log whose signature record after seq 10 is repeated; where the copy is."""
    folder = tmp_path_factory.mktemp("log41b")
    good = folder / "good.blog"
    write_signed(good, match(key_id=SITE.key_id)[:30], SITE)
    data = good.read_bytes()
    off = log.HEADER_SIZE
    while True:
        length, count, first = log._SEG_HEAD.unpack_from(data, off)
        end = off + SEALED_HEAD + length
        if count == 0 and first == 11:
            break
        off = end
    bad = folder / "dup.blog"
    bad.write_bytes(data[:end] + data[off:end] + data[end:])
    return bad, end


def test_read_anyway_reports_a_repeated_signature_record(repeated: tuple[Path, int]) -> None:
    bad, at = repeated
    salvage = forensic.read_anyway(bad)
    assert salvage.failure is not None and salvage.offset == at
    assert "the signature record after seq 10 repeats the one before it" in salvage.failure
    assert salvage.failure.startswith(f"at byte {at}: ")
    assert [e.seq for e in salvage.events] == list(range(30))  # read on past the copy
    assert salvage.warning is not None and salvage.warning.startswith(f"WARNING: {bad} failed")


def test_read_anyway_reports_a_repeated_signature_line(
        repeated: tuple[Path, int], tmp_path: Path) -> None:
    bad, _ = repeated
    good = tmp_path / "good.jsonl"
    jsonl.binary_to_jsonl(bad.with_name("good.blog"), good)
    lines = good.read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(b'{"log": "signature"')][5]
    dup = tmp_path / "dup.jsonl"
    dup.write_bytes(b"".join([*lines[:at + 1], lines[at], *lines[at + 1:]]))
    assert forensic.read_anyway(good).failure is None
    salvage = forensic.read_anyway(dup)
    assert salvage.failure is not None and salvage.line == at + 2
    assert "the signature line after seq 5 repeats the one before it" in salvage.failure
    assert [e.seq for e in salvage.events] == list(range(30))
