"""Fault probes of the recorder, round 51: another log of the same size swapped in between two
moves.

A round compared the open log's size alone before it appended: another file exactly as long
copied over the log in place (``cp other.blog live.blog``: the same inode, the same size) let
the next move be written after the other file's bytes and acknowledged, in a log no reader
takes, and every later move of the match with it. A round now also reads back the last bytes
it wrote in the log, just before where it writes next (one ``pread``; and the first bytes for
an unsealed log, whose last segment does not tell two matches apart).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import msgspec
import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches

src = matches()[0]
# the same match under another match id of the same length: a log of exactly the same size
twin = (msgspec.structs.replace(src[0], match_id=src[0].match_id[:-1] + "#"), *src[1:])


@pytest.mark.parametrize(("sync", "sealed"), [("fsync", True), ("journal", True),
                                               ("fsync", False)])
def test_a_log_of_the_same_size_swapped_in_between_two_moves_refuses_the_next_one(
        tmp_path: Path, sync: str, sealed: bool) -> None:
    assert twin[0].match_id != src[0].match_id
    rec = Recorder(tmp_path / "logs", sync=sync, sealed=sealed, checkpoint_every=600,
                   save_every=0)
    path = Path(rec.path_of("a"))
    other = Path(rec.path_of("b"))
    try:
        for mine, theirs in zip(src[:12], twin[:12], strict=True):  # one segment a move each
            rec.append("a", mine)
            rec.append("b", theirs)
        acknowledged = path.read_bytes()
        swapped = other.read_bytes()
        assert len(swapped) == len(acknowledged) and swapped != acknowledged
        if not sealed:  # an unsealed log's last segment does not name its match
            assert swapped[-64:] == acknowledged[-64:]
        subprocess.run(["cp", str(other), str(path)], check=True)  # in place, as cp does
        with pytest.raises(LogFormatError) as refused:
            rec.append("a", src[12])
        line = str(refused.value)
        assert "\n" not in line and str(path) in line and refused.value.kind == "io"
        assert "rewritten in place" in line and "12 events the recorder acknowledged" in line
        with pytest.raises(LogFormatError):  # the table takes no more
            rec.append("a", src[12])
        assert rec.append("b", twin[12]) == 12  # the other tables go on
        assert rec.stats().events == 25
    finally:
        rec.close()
    assert path.read_bytes() == swapped  # nothing written after the copy
    assert log.read_events(path) == list(twin[:12])
