"""Fault probes of the recorder, round 51: another log of the same size swapped in between two
moves; misuse from another process.

A round compared the open log's size alone before it appended: another file exactly as long
copied over the log in place (``cp other.blog live.blog``: the same inode, the same size) let
the next move be written after the other file's bytes and acknowledged, in a log no reader
takes, and every later move of the match with it. A round now also reads back the last bytes
it wrote in the log, just before where it writes next (one ``pread``; and the first bytes for
an unsealed log, whose last segment does not tell two matches apart).

Misuse from another process: a second recorder on the same directory (by another path too)
was refused naming nothing but the directory; it now names the process holding it and the
rule. The recorder's directory renamed under it: each move was refused as "the log was
replaced or removed by a program that ignores the writer lock ...; the log as acknowledged
could not be copied aside", a new table's as "No such file or directory"; both now say the
directory was renamed, and where it is. With another directory put in its place, a new
table's log was created in that one, outside the directory lock, and its first moves were
acknowledged after an fsync of the old directory (its name not durable); it is now refused.
A recorder closed while its rounds run, and seals racing its rounds from another process: no
defect found. (A log removed while closed: test_fault_probes_recorder4.py.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches, source_of

ROOT = Path(__file__).resolve().parents[2]

src = matches()[0]
# the same match under another match id of the same length: a log of exactly the same size
twin = (msgspec.structs.replace(src[0], match_id=src[0].match_id[:-1] + "#"), *src[1:])


@pytest.mark.parametrize(("sync", "sealed"), [
    ("fsync", True), ("fsync", False),
    pytest.param("journal", True, marks=pytest.mark.slow)])  # (and test_..._recorder49.py)
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


# -- misuse from another process ---------------------------------------------------------------

def _child(directory: Path, sync: str) -> subprocess.Popen[str]:
    """A recorder in a process of its own (tests/recorder/misuse_child.py), ready."""
    child = subprocess.Popen([sys.executable, "-m", "tests.recorder.misuse_child",
                              str(directory), sync], cwd=ROOT, env=dict(os.environ,
                             PYTHONPATH=str(ROOT)), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return child


def _ask(child: subprocess.Popen[str], command: str) -> str:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(command + "\n")
    child.stdin.flush()
    return child.stdout.readline().rstrip("\n")


def _close(child: subprocess.Popen[str]) -> list[str]:
    """Close the child's recorder; what it said meanwhile and after (but "closed"), and
    nothing on stderr."""
    said = [_ask(child, "close")]
    assert child.stdout is not None
    while said[-1] != "closed":
        said.append(child.stdout.readline().rstrip("\n"))
    assert child.stdin is not None and child.stderr is not None
    child.stdin.close()
    with child.stdout, child.stderr:
        out = child.stdout.read()  # (communicate() reads past what readline() buffered)
        err = child.stderr.read()
    assert child.wait(timeout=60) == 0 and err == "", (child.returncode, err)
    return said[:-1] + out.splitlines()


def test_a_second_recorder_on_the_same_directory_or_log_in_another_process_is_refused(
        tmp_path: Path) -> None:
    live = tmp_path / "live"
    t = source_of("t", matches())
    child = _child(live, "fsync")
    try:
        assert _ask(child, "play t 5") == "ok 4"
        (tmp_path / "alias").symlink_to(live)
        for directory in (live, tmp_path / "alias"):  # the same directory, by another path
            with pytest.raises(LogFormatError) as refused:
                Recorder(directory)
            assert refused.value.kind == "locked" and "\n" not in str(refused.value)
            # it names the process that holds it (it named nothing), and the rule
            assert f"another recorder (process {child.pid}) is using this directory" in str(
                refused.value)
            assert "one recorder a directory" in str(refused.value)
        # the same log, reached from another directory by a symbolic or a hard link
        (tmp_path / "sym").mkdir()
        (tmp_path / "sym" / "t.blog").symlink_to(live / "t.blog")
        (tmp_path / "hard").mkdir()
        os.link(live / "t.blog", tmp_path / "hard" / "t.blog")
        for directory in (tmp_path / "sym", tmp_path / "hard"):
            with Recorder(directory) as other, pytest.raises(LogFormatError) as refused:
                other.append("t", t[5])
            assert str(refused.value).startswith(  # (it said no more than this)
                f"{directory / 't.blog'}: another writer holds this log (a seal, repair or "
                "writer of another program, or another recorder's, through a link")
        assert _ask(child, "play t 1") == "ok 5"  # the first goes on
    finally:
        assert _close(child) == ["done"]
    assert log.read_events(live / "t.blog") == list(t[:6])


@pytest.mark.parametrize(("sync", "replaced"), [
    ("fsync", True),
    pytest.param("fsync", False, marks=pytest.mark.slow),
    pytest.param("journal", True, marks=pytest.mark.slow)])
def test_the_recorder_s_directory_renamed_under_it_is_named_in_one_line(
        tmp_path: Path, sync: str, replaced: bool) -> None:
    live, moved = tmp_path / "live", tmp_path / "moved"
    a = source_of("a", matches())
    child = _child(live, sync)
    try:
        assert _ask(child, "play a 10") == "ok 9"
        os.rename(live, moved)
        if replaced:  # another directory put in its place (mv logs logs.old; mkdir logs)
            live.mkdir()
        said = _ask(child, "play a 1")
        # it said "the log was replaced or removed by a program that ignores the writer lock
        # ...; the log as acknowledged could not be copied aside", and a new table's move
        # only "No such file or directory"
        assert said.startswith(f"error 10 io {live / 'a.blog'}: the recorder's directory "
                               f"{live} was renamed or removed under it"), said
        assert f"the directory it opened is now {moved}" in said
        # with another directory in its place, a new table's log was created there, outside
        # the directory lock, and its first move acknowledged after an fsync of the old one
        said = _ask(child, "play n 1")
        assert said.startswith(f"error 0 io {live / 'n.blog'}: cannot create the log: the "
                               "recorder's directory"), said
        said = _ask(child, "play a 1")  # refused from then on
        assert said.startswith("error ") and "was renamed or removed under it" in said, said
    finally:
        assert _close(child) == ["done"]
    assert list(live.glob("*.blog")) == [] if replaced else not live.exists()
    with Recorder(moved) as again:  # every acknowledged move is where the directory went
        assert again.next_seq("a") in (10, 11)  # (the refused move was written, not acked)
    assert log.read_events(moved / "a.blog")[:10] == list(a[:10])


@pytest.mark.slow  # (no defect found: kept as a probe)
def test_a_recorder_closed_while_its_rounds_run_loses_no_acknowledged_move(
        tmp_path: Path) -> None:
    tables = [f"c{i}" for i in range(6)]
    child = _child(tmp_path, "journal")
    try:
        assert _ask(child, "flood " + " ".join(tables)) == "started"
        assert child.stdout is not None
        for _ in range(60):  # a few rounds in, then closed in the middle of them
            assert child.stdout.readline().startswith("acked ")
    finally:
        said = _close(child)
    acked: dict[str, int] = {}
    for line in said:
        if line.startswith("acked "):
            _, table, seq = line.split()
            acked[table] = max(acked.get(table, -1), int(seq))
    ended = [line for line in said if line.startswith("ended ")]
    assert len(ended) == len(tables) and said[-1] == "done"
    for line in ended:  # each appending thread was told, in one line
        assert f"closed {tmp_path}: the recorder is closed" in line, line
    for table in tables:
        got = log.read_events(tmp_path / f"{table}.blog")
        assert len(got) > acked.get(table, -1)  # every acknowledged move is in its log
        assert got == list(source_of(table, matches())[:len(got)])
