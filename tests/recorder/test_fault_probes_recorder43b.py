"""Fault probes of the recorder, round 43b: a closed log's file told apart by its bytes.

Reopening a log it had closed, the recorder took the file at the path for its log when it had
the log's (device, inode), its size, and the change and modification times kept at the close.
A removed log's inode number is given to the next file at once (ext4), and file times come
from a coarse clock (a jiffy): a file removed and created again with the same size within one
tick passed, and the next segment went into it. A log read at first use kept no times at all,
so there the number and the size alone decided. The reopening now also compares the log's
last segment the recorder wrote (a sealed one carries the chain digest of all the log's
events: one ``pread``) and, where that is not enough, the log's first bytes (the first
events' digest or checksum: the match) with the file's.

The tests simulate the coarse clock and the reused number: the table is given the new file's
(device, inode) and times, as a coarse clock and ext4 give them.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, on_disk

src = matches()[0]
other = matches()[1]


def _forged(ours: bytes, tmp_path: Path, how: str, sealed: bool) -> bytes:
    """A file of the log's size that is not the log (or is it, byte for byte)."""
    theirs_path = tmp_path / "theirs.blog"
    log.write_log(theirs_path, other[:5], validate=False, sealed=sealed)
    theirs = (theirs_path.read_bytes() + bytes(len(ours)))[:len(ours)]
    theirs_path.unlink()
    if how == "another match":
        return theirs
    if how == "another match with our last segment":  # only the first bytes differ
        return theirs[:64] + ours[64:]
    if how == "our log with another last byte":  # only the tail differs
        return ours[:-1] + bytes([ours[-1] ^ 1])
    assert how == "the same bytes"
    return ours


def _replace(path: Path, data: bytes, table: object, stamp: bool) -> None:
    """Remove the log and create another file in its place; the table takes its number (and
    times) as ext4's reuse and a coarse clock give them."""
    os.unlink(path)
    path.write_bytes(data)
    st = os.stat(path)
    table.identity = (st.st_dev, st.st_ino)  # type: ignore[attr-defined]
    if stamp:
        table.stamp = (st.st_ctime_ns, st.st_mtime_ns)  # type: ignore[attr-defined]


def _wait_closed(rec: Recorder) -> None:
    deadline = time.monotonic() + 10
    while rec.stats().open_handles and time.monotonic() < deadline:
        time.sleep(0.005)
    assert rec.stats().open_handles == 0


HOWS = ["another match", "another match with our last segment",
        "our log with another last byte", "the same bytes"]


# (A sealed segment carries the chain digest of every event before it: a file ending in ours
# is the log, or a damaged splice no program writes; so the last case is for unsealed logs.)
CASES = [(sealed, how) for sealed in (True, False) for how in HOWS
         if not (sealed and how == "another match with our last segment")]


@pytest.mark.parametrize("sync", ["journal", "fsync"])
@pytest.mark.parametrize(("sealed", "how"), CASES)
def test_a_file_made_in_the_closed_logs_place_within_one_clock_tick_is_never_written_into(
        tmp_path: Path, how: str, sync: str, sealed: bool) -> None:
    path = tmp_path / "a.blog"
    with Recorder(tmp_path, sync=sync, idle_timeout=0.005, save_every=0, sealed=sealed,
                  checkpoint_every=600) as rec:
        for event in src[:5]:
            rec.append("a", event)
        _wait_closed(rec)
        data = _forged(path.read_bytes(), tmp_path, how, sealed)
        _replace(path, data, rec._tables["a"], stamp=True)
        _check_next_append(rec, path, data, how)


@pytest.mark.parametrize("how", HOWS)
def test_a_file_made_in_the_place_of_a_log_read_at_first_use_is_never_written_into(
        tmp_path: Path, how: str) -> None:
    # a log read at first use kept no times: the number and the size alone decided
    path = tmp_path / "a.blog"
    log.write_log(path, src[:5], validate=False)
    with Recorder(tmp_path, sync="journal", save_every=0, checkpoint_every=600) as rec:
        assert rec.next_seq("a") == 5
        assert rec.stats().open_handles == 0  # read and closed again
        data = _forged(path.read_bytes(), tmp_path, how, True)
        _replace(path, data, rec._tables["a"], stamp=False)
        _check_next_append(rec, path, data, how)


def _check_next_append(rec: Recorder, path: Path, data: bytes, how: str) -> None:
    if how == "the same bytes":  # the log itself (copied back): it goes on
        assert rec.append("a", src[5]) == 5
        assert on_disk(str(path)) == list(src[:6])
        return
    with pytest.raises(LogFormatError) as caught:
        rec.append("a", src[5])
    assert "changed while the recorder had it closed" in str(caught.value)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    assert path.read_bytes() == data  # not written into
