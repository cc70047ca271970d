"""Fault probes of the log readers and commands, round 41.

- `diff` of a copy damaged in its first record said "not a readable log: segment header
  checksum mismatch", with no seq: it is a log, damaged where `verify` says (byte and seq).
- Zero bytes (NUL), what a crash leaves where the data never reached the disk: fewer than 20
  were a match not started, 20 or more "not a buraco-log file (bad magic)", as a JPEG is. Now
  both say zero bytes: up to a header's size no event fits (not started), past it no log header
  can be read (exit 2 still).
- Empty standard input was "NOT STARTED: no whole header (file header cut short (0 of 20
  bytes))": the binary file header's words for no input at all.
- `convert --overwrite` to a name of 180 bytes or more converts into
  ``.NAME.HEX.converting.SUFFIX``, whose own temporary (``..NAME.HEX.tmp``) holds one byte
  of the name less: a killed run left it, and the sweep never found it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log import jsonl, log
from buraco_log.errors import LogFormatError
from tests.cli.probes import ROOT, cli, one_error_line
from tests.recorder.sources import matches

src = matches()[0]


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("log41") / "m.blog"
    with log.Writer(path) as w:
        for event in src[:40]:
            w.append(event)
    return path


# -- diff ------------------------------------------------------------------------------------


def test_diff_names_the_byte_and_seq_of_a_copy_damaged_in_its_first_record(
        good: Path, tmp_path: Path) -> None:
    data = bytearray(good.read_bytes())
    data[log.HEADER_SIZE + 2] ^= 0x10  # the first record's header
    bad = tmp_path / "bad.blog"
    bad.write_bytes(data)
    line = one_error_line(cli("diff", good, bad), 1)
    assert line.startswith(f"buraco-log: error: {bad}, byte {log.HEADER_SIZE}, seq 0: segment "
                           "header checksum mismatch (damaged record); no event of this copy "
                           "reads intact"), line
    assert "not a readable log" not in line
    verify = one_error_line(cli("verify", bad), 1)  # the same place and words
    assert verify.startswith(f"buraco-log: error: {bad}, byte {log.HEADER_SIZE}, seq 0: segment "
                             "header checksum mismatch (damaged record)")


def test_diff_still_calls_a_file_that_is_no_log_so(good: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.blog"
    notes.write_bytes(b"these are my notes, not a log at all\n")
    line = one_error_line(cli("diff", notes, good), 2)
    assert line == (f"buraco-log: error: {notes}, byte 0: not a readable log: not a buraco-log "
                    "file (bad magic) [log.header]")


# -- zero bytes --------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 19, 20])
def test_zero_bytes_no_longer_than_a_header_are_a_match_not_started(
        tmp_path: Path, size: int) -> None:
    path = tmp_path / "z.blog"
    path.write_bytes(bytes(size))
    info = log.verify(path)
    assert info.events == 0 and info.torn is not None and info.torn.offset == 0
    assert "zero bytes (NUL)" in info.torn.reason and f"({size} of 20 bytes" in (
        info.torn.reason), info.torn.reason


@pytest.mark.parametrize(("after", "says"), [
    (bytes(4076), "and so is all that was read after it"),
    (b"\x01" * 100, "and records follow it: the header was wiped")])
def test_zero_bytes_past_a_header_name_what_they_are_not_bad_magic(
        tmp_path: Path, after: bytes, says: str) -> None:
    path = tmp_path / "z.blog"
    path.write_bytes(bytes(20) + after)
    with pytest.raises(LogFormatError) as caught:
        log.verify(path)
    err = caught.value
    assert (err.kind, err.offset, err.exit_status) == ("header", 0, 2)
    assert "bad magic" not in err.message and "20 zero bytes (NUL)" in err.message
    assert says in err.message


def test_a_20_byte_zero_file_is_not_started_in_verify(tmp_path: Path) -> None:
    path = tmp_path / "z.blog"
    path.write_bytes(bytes(20))
    done = cli("verify", path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith(f"{path}: NOT STARTED: no whole header (file header all "
                                  "zero bytes (NUL) (20 of 20 bytes)"), done.stdout


def test_empty_standard_input_is_said_in_its_own_words() -> None:
    done = subprocess.run([sys.executable, "-m", "cli", "verify", "-"], input=b"",
                          capture_output=True, cwd=ROOT, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    said = done.stdout.decode()
    assert said == "<stdin>: NOT STARTED: standard input was empty (0 bytes): no log and so " \
                   "no event\n", said
    assert "header" not in said and "delete the file" not in said


# -- temporaries of long names ----------------------------------------------------------------


@pytest.mark.parametrize("length", [179, 180, 230])
def test_a_killed_convert_overwrites_temporary_is_swept_whatever_the_names_length(
        good: Path, tmp_path: Path, length: int) -> None:
    out = tmp_path / ("x" * (length - len(".jsonl")) + ".jsonl")
    out.write_text("an older conversion\n")
    # what a convert --overwrite killed mid-way leaves: its temporary, and that one's own
    converting = out.with_name(f".{log.temp_stem(out.name)}.{'a' * 12}.converting.jsonl")
    inner = Path(jsonl._temp_beside(str(converting)))
    for left in (converting, inner):
        left.write_bytes(b'{"log": "buraco-log", "version": 2}\n')
        os.utime(left, (1, 1))  # long unchanged: stale
    assert sorted(log.sweep_stale(out)) == sorted([str(converting), str(inner)])
    if length != 230:
        return  # one run of the command is enough
    for left in (converting, inner):  # and the command's own sweep finds them
        left.write_bytes(b"")
        os.utime(left, (1, 1))
    done = cli("convert", good, "-o", out, "--overwrite")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]
    assert _head(out) == log.verify(good).head


def _head(path: Path) -> str:
    reader = jsonl.JsonlReader(path)
    for _ in reader:
        pass
    return reader.head


def test_the_sweep_leaves_a_temporary_of_another_name_alone(tmp_path: Path) -> None:
    out = tmp_path / ("y" * 200 + ".jsonl")
    other = tmp_path / (".." + "y" * 178 + "z" + ".aaaaaaaaaaaa.tmp")  # not this name's
    other.write_bytes(b"")
    os.utime(other, (1, 1))
    assert log.sweep_stale(out) == [] and other.exists()


def test_diff_refuses_a_fifo_in_a_refusals_words(good: Path, tmp_path: Path) -> None:
    # it said the audit's "not a regular file (a FIFO): skipped, never opened"
    fifo = tmp_path / "pipe.blog"
    os.mkfifo(fifo)
    line = one_error_line(cli("diff", good, fifo, timeout=30), 2)
    assert line == (f"buraco-log: error: {fifo}: not a regular file (a FIFO): not read as a log "
                    "[log.filetype]")


# -- zero bytes inside a log ------------------------------------------------------------------


def test_zero_bytes_inside_a_log_name_where_data_starts_again(good: Path, tmp_path: Path
                                                              ) -> None:
    # it was "segment header checksum mismatch (damaged record)" of 600 zero bytes
    data = good.read_bytes()
    bad = tmp_path / "gap.blog"
    bad.write_bytes(data + bytes(600) + data[log.HEADER_SIZE:400])
    with pytest.raises(LogFormatError) as caught:
        log.verify(bad)
    err = caught.value
    assert (err.kind, err.offset, err.seq) == ("damage", len(data), 40)
    assert err.message.startswith(f"zero bytes (NUL) where the next record should start, and "
                                  f"data again at byte {len(data) + 600}: "), err.message
    bad.write_bytes(data + bytes(600))  # zeros to the end: the torn tail it always was
    torn = log.verify(bad).torn
    assert torn is not None and torn.offset == len(data)


def test_a_sparse_file_with_data_far_past_a_hole_is_answered_at_once(
        good: Path, tmp_path: Path) -> None:
    bad = tmp_path / "sparse.blog"
    bad.write_bytes(good.read_bytes())
    far = 8 << 30  # 8 GiB of hole, then one byte: read by SEEK_DATA, not byte by byte
    with open(bad, "r+b") as f:
        f.seek(far)
        f.write(b"x")
    if bad.stat().st_blocks * 512 > 1 << 20:
        pytest.skip("this file system does not keep holes")
    with pytest.raises(LogFormatError) as caught:
        log.verify(bad)
    assert f"data again at byte {far}:" in caught.value.message


def test_convert_of_20_zero_bytes_is_a_match_not_started_as_of_fewer(tmp_path: Path) -> None:
    # it was "torn tail: ...; no event is intact: delete the file", exit 1, where 19 zero
    # bytes (and an empty file) were "a match not started ... nothing to convert", exit 2
    path = tmp_path / "z.blog"
    path.write_bytes(bytes(20))
    out = tmp_path / "z.jsonl"
    line = one_error_line(cli("convert", path, "-o", out), 2)
    assert line == (f"buraco-log: error: {path}: a match not started (no whole header and no "
                    "event): nothing to convert; delete the file [log.empty]")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["z.blog"]
