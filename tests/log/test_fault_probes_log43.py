"""Fault probes of the log, round 43 (helper log43): the library Writer as a program uses it.

- After a failed write (a real one: the process's file size limit, EFBIG, in a child), the
  next append was refused with the failure's own words again ("write failed: File too large;
  the part of the record written was cut off"), as if that event had been tried: it now says
  the writer takes no more after an earlier failure, naming the refused event's seq.
- A refused (illegal) event leaves the log and the writer as they were; the next legal event
  is accepted. A second writer in another process is refused at once, in one line. `seal`
  of a log a writer holds is refused; `convert` of it copies what was acknowledged, and every
  acknowledged event is in the log when the writer is done.
- binary -> JSON Lines -> binary keeps every example and golden log's events, head digest and
  signatures; where the log holds one segment per signature (as `convert` writes), byte for
  byte. A version 1 log keeps its version and head in JSON Lines (docs/log-format.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from buraco_log import jsonl, log
from buraco_log.errors import IllegalMoveError
from buraco_log.events import AnyEvent
from tests.cli.probes import ROOT, cli, one_error_line
from tests.recorder.sources import matches

EVENTS = matches()[0]

# A child that appends EVENTS under a file size limit (SIGXFSZ ignored: the write fails with
# EFBIG, as on a full disk), then once more after the failure, and prints what it was told.
_LIMITED = """
import resource, signal, sys
from buraco_log import log
from tests.recorder.sources import matches
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
events = matches()[0]
writer = log.Writer(sys.argv[1])
acked = 0
try:
    for e in events:
        writer.append(e)
        acked += 1
except log.LogWriteError as exc:
    print(acked)
    print(exc)
try:
    writer.append(events[acked])
except log.LogFormatError as exc:
    print(exc.kind, exc.seq)
    print(exc)
writer.close()
"""


def _child(*args: object, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _read(path: Path) -> list[AnyEvent]:
    with log.Reader(path) as reader:
        return list(reader)


def test_a_refused_event_leaves_the_log_and_the_writer_as_they_were(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    with log.Writer(path) as writer:
        for e in EVENTS[:10]:
            writer.append(e)
        before = path.read_bytes()
        again = msgspec.structs.replace(EVENTS[9], seq=10)  # the last move, made twice
        with pytest.raises(IllegalMoveError) as refused:
            writer.append(again)
        assert refused.value.seq == 10 and refused.value.rule
        assert path.read_bytes() == before
        writer.append(EVENTS[10])  # the legal one, at the same seq
    assert _read(path) == list(EVENTS[:11])


def test_after_a_real_failed_write_the_log_ends_whole_and_the_next_append_says_why(
        tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    done = _child("-c", _LIMITED, path, 2000)
    assert done.returncode == 0, done.stderr
    acked_text, failure, refusal_kind, refusal = done.stdout.splitlines()
    acked = int(acked_text)
    assert 0 < acked < len(EVENTS)
    end = path.stat().st_size
    assert failure == (f"{path}, byte {end}, seq {acked}: write failed: File too large; the "
                       f"part of the record written was cut off (the log ends whole at byte "
                       f"{end})")
    assert refusal_kind == f"closed {acked}"
    assert refusal.startswith(f"{path}, byte {end}, seq {acked}: the writer takes no more "
                              "events after an earlier failure (write failed: File too large")
    assert _read(path) == list(EVENTS[:acked])  # whole: no torn tail, nothing lost
    with log.Writer(path) as writer:  # a new writer goes on from there
        for e in EVENTS[acked:acked + 5]:
            writer.append(e)
    assert _read(path) == list(EVENTS[:acked + 5])
    assert log.verify(path).torn is None


def test_a_second_writer_in_another_process_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    code = ("import sys, time\nfrom buraco_log import log\n"
            "try:\n    log.Writer(sys.argv[1])\nexcept log.LogFormatError as exc:\n"
            "    print(exc)\n    sys.exit(3)\n")
    with log.Writer(path) as writer:
        writer.append(EVENTS[0])
        started = time.monotonic()
        done = _child("-c", code, path)
        took = time.monotonic() - started
        writer.append(EVENTS[1])  # the holder goes on
    assert done.returncode == 3, done.stderr
    assert done.stdout == f"{path}: another writer holds this log\n"
    assert took < 20  # refused at once (lock_timeout 0), not after a wait; the child's start
    assert _read(path) == list(EVENTS[:2])


_HOLDER = """
import sys, time
from buraco_log import log
from tests.recorder.sources import matches
events = matches()[0]
with log.Writer(sys.argv[1], sealed=False) as writer:
    for e in events[:int(sys.argv[2])]:
        writer.append(e)
        print(e.seq, flush=True)
        time.sleep(0.002)
"""


def test_seal_and_convert_while_a_writer_appends_lose_no_acknowledged_event(
        tmp_path: Path) -> None:
    path = tmp_path / "live.blog"
    count = 300
    with subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), str(count)],
                          stdout=subprocess.PIPE, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}) as holder:
        assert holder.stdout is not None
        first = holder.stdout.readline()  # the writer holds the log from here on
        assert first == "0\n"
        sealed = cli("seal", path)
        copy = tmp_path / "copy.jsonl"
        converted = cli("convert", path, "-o", copy)
        rest = holder.stdout.read()
    assert holder.returncode == 0
    assert one_error_line(sealed, 1) == f"buraco-log: error: {path}: another writer holds this log"
    acked = [0, *map(int, rest.split())]
    assert acked == list(range(count))
    assert _read(path) == list(EVENTS[:count])  # every acknowledged event is in the log
    assert log.verify(path).sealed is False  # the refused seal changed nothing
    if converted.returncode == 0:  # a prefix of what was acknowledged, whole
        got = jsonl.read_jsonl(copy)
        assert got and got == list(EVENTS[:len(got)])
    else:  # a record read while half written: said, and no file left
        one_error_line(converted, 1)
        assert not copy.exists()


def _example_logs() -> list[Path]:
    found = [p for d in (ROOT / "examples", ROOT / "tests" / "golden")
             for p in sorted(d.rglob("*")) if p.suffix in (".blog", ".log")]
    return [p for p in found if "tampered" not in p.name]  # damaged: convert refuses it


def _signatures(path: Path) -> list[object]:
    with log.Reader(path) as reader:
        for _ in reader:
            pass
        return list(reader.signatures)


@pytest.mark.parametrize("src", _example_logs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_binary_to_jsonl_to_binary_keeps_events_head_and_signatures(
        tmp_path: Path, src: Path) -> None:
    text, back = tmp_path / "m.jsonl", tmp_path / "m.blog"
    info = log.verify(src)
    as_text = jsonl.binary_to_jsonl(src, text)
    assert (as_text.head, as_text.events, as_text.version) == (info.head, info.events,
                                                               info.version)
    jsonl.jsonl_to_binary(text, back)
    again = log.verify(back)
    assert again.events == info.events and _read(back) == _read(src)
    if info.version != again.version:  # version 1: written in the current one, a new head
        assert info.version < again.version
        return
    assert again.head == info.head and again.signatures == info.signatures
    assert _signatures(back) == _signatures(src)
    if info.segments == max(1, info.signatures):  # grouped as convert groups: the same bytes
        assert back.read_bytes() == src.read_bytes()
    else:  # v2.blog: segments between signatures, merged; JSON Lines holds no grouping
        assert again.segments == max(1, info.signatures) < info.segments


@pytest.mark.parametrize("sealed", [True, False])
def test_a_writer_reopening_a_log_keeps_its_own_form_whatever_it_is_asked(
        tmp_path: Path, sealed: bool) -> None:
    """A sealed log stays sealed (its chain goes on) and an unsealed one unsealed: the head
    is the one of writing every event at once."""
    path, whole = tmp_path / "m.blog", tmp_path / "whole.blog"
    with log.Writer(path, sealed=sealed) as writer:
        for e in EVENTS[:8]:
            writer.append(e)
    with log.Writer(path, sealed=not sealed) as writer:
        assert writer.sealed is sealed
        for e in EVENTS[8:16]:
            writer.append(e)
    log.write_log(whole, EVENTS[:16], sealed=sealed)
    info, want = log.verify(path), log.verify(whole)
    assert (info.sealed, info.events, info.head) == (sealed, 16, want.head)
