"""Fault probes of the recorder, round 41: a log cut or appended to under a running recorder.

A program that ignores the writer lock truncated an open log (a log rotator, ``truncate -s``):
the recorder wrote its next segment at its own end, past the file's, leaving a hole of zeros,
and acknowledged it. Every reader then refused the whole log ("segment header checksum
mismatch"), so the next recorder could not continue the match and the acknowledged events
after the hole were in a log nobody could read. Bytes appended behind its back were overwritten
or left after the recorder's as a torn tail. The recorder now checks that the open log ends
where it last wrote, before the write and again before it acknowledges; otherwise the table
refuses in one line, writes nothing, and a restart continues from what the log holds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches

src = matches()[0]


@pytest.mark.parametrize("sync", ["fsync", "syncfs", "journal"])
@pytest.mark.parametrize("change", ["cut", "appended to"])
def test_a_log_resized_under_the_recorder_is_refused_and_stays_readable(
        tmp_path: Path, sync: str, change: str) -> None:
    with Recorder(tmp_path, sync=sync) as rec:
        for event in src[:12]:
            rec.append("a", event)
        path = Path(rec.path_of("a"))
        size = path.stat().st_size
        if change == "cut":
            os.truncate(path, size - 10)  # the last segment cut short
        else:
            with open(path, "ab") as f:
                f.write(b"\x00" * 7)
        with pytest.raises(LogFormatError) as caught:
            rec.append("a", src[12])
        error = caught.value
        assert error.kind == "io" and "\n" not in str(error)
        assert str(path) in str(error) and f"was {change}" in str(error)
        assert f"where the recorder had written {size}" in str(error)
        with pytest.raises(LogFormatError):  # the table takes no more moves
            rec.append("a", src[12])
        assert rec.append("b", src[0]) == 0  # other tables go on
    assert path.stat().st_size == (size - 10 if change == "cut" else size + 7)  # nothing added
    with log.Reader(path, allow_torn=True) as reader:
        kept = [e for _, seg in reader.segments() for e in seg]
    assert kept == list(src[:11 if change == "cut" else 12])
    with Recorder(tmp_path, sync=sync) as rec:  # a restart continues from what the log holds
        seq = rec.next_seq("a")
        assert seq == len(kept)
        assert rec.append("a", src[seq]) == seq
    assert log.read_events(path) == list(src[:seq + 1])
