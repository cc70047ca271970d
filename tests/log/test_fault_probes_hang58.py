"""Inputs that hang: a log that grows while it is read.

A read of a log is a snapshot of the file as it was when reading began: a writer appending as
fast as the log is read (a batch import beside a `convert`) kept the binary reader going for
as long as it wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import log
from tests.log.cli_run import run
from tests.log.samples import sample_events

REPO = Path(__file__).resolve().parents[2]


def test_a_log_appended_to_while_read_is_read_as_it_was_when_reading_began(
        tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    events = sample_events(24)
    with log.Writer(path, validate=False) as w:
        for event in events[:12]:
            w.append(event)  # a record each
        with log.Reader(path) as reader:
            read = []
            for _, evs in reader.segments():
                read += evs
                if len(read) == 1:  # a writer appends while the reader is between records
                    w.append_many(events[12:])
            info = reader.info
    assert [e.seq for e in read] == list(range(12))
    assert info.events == 12 and info.torn is None
    assert log.verify(path).events == 24  # the next read sees the records appended


def test_a_record_cut_by_the_size_at_the_start_is_read_whole(tmp_path: Path) -> None:
    """The snapshot is of records, not bytes: the record being written when reading began is
    read whole once it is, never called torn for what was read later."""
    path = tmp_path / "m.blog"
    events = sample_events(12)
    with log.Writer(path, validate=False) as w:
        for event in events:
            w.append(event)  # a record each
    data = path.read_bytes()
    path.write_bytes(data[:-7])  # the last record's write not finished yet
    with log.Reader(path) as reader:
        segments = reader.segments()
        first = next(segments)  # the size is taken here
        with open(path, "ab") as f:  # the write finishes
            f.write(data[-7:])
        rest = [e for _, evs in segments for e in evs]
    assert len(first[1]) + len(rest) == 12 and reader.info.torn is None


_APPENDER = """
import itertools, sys
from msgspec.structs import replace
from buraco_log import log
from tests.log.samples import sample_events
path, seq = sys.argv[1], int(sys.argv[2])
pattern = sample_events(1000, 3)[1:]
with log.Writer(path, validate=False, batched=True) as w:
    print("ready", flush=True)
    for event in itertools.cycle(pattern):  # for ever, until killed
        w.append(replace(event, seq=seq))
        seq += 1
        if seq % 500 == 0:
            w.flush()
"""


@pytest.mark.slow
def test_convert_of_a_log_a_batch_import_appends_to_ends(tmp_path: Path) -> None:
    """`convert` beside a writer appending faster than it converts: it converts the log as it
    was when it began reading, and ends (it converted for as long as the writer wrote: 586,000
    events of a log of 300,000 in 21 s)."""
    path = tmp_path / "m.blog"
    log.write_log(path, sample_events(50_000, 3), validate=False)
    appender = subprocess.Popen([sys.executable, "-c", _APPENDER, str(path), "50000"],
                                stdout=subprocess.PIPE, cwd=REPO,
                                env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert appender.stdout is not None and appender.stdout.readline() == b"ready\n"
        time.sleep(0.2)
        out = tmp_path / "m.jsonl"
        r = run("convert", path, "-o", out, timeout=30)
    finally:
        appender.kill()
        appender.wait()
        assert appender.stdout is not None
        appender.stdout.close()
    assert r.code == 0, r.err
    converted = int(r.out.split(": ")[1].split()[0])
    assert 50_000 <= converted < log.verify(path).events
    with open(out, "rb") as f:
        assert sum(1 for _ in f) == converted + 2  # the first and end lines



def test_a_reader_that_read_the_log_then_follows_it_reads_what_was_appended(
        tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    events = sample_events(8)
    with log.Writer(path, validate=False) as w:
        w.append_many(events[:4])
        with log.Reader(path) as reader:
            assert [e.seq for _, evs in reader.segments() for e in evs] == [0, 1, 2, 3]
            w.append_many(events[4:])
            assert [e.seq for e in reader.follow(poll=0.001, idle_timeout=0.05)] == [4, 5, 6, 7]
