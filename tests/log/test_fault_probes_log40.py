"""Fault probes of the log readers and writer, round 40.

- A file named ``.jsonl`` given to the binary reader: an empty one read "torn tail: file header
  cut short (0 of 20 bytes)" (the binary header's words), and a JSON Lines one was told to
  rename itself to the name it had ("this name ends in .jsonl: rename it").
- ``Writer`` (and so ``demo -o X.jsonl``, which now writes JSON Lines: cli41) wrote a binary
  log under a ``.jsonl`` name, which
  every reader then took as JSON Lines and refused ("byte 18 of the line is not UTF-8").
- A write that failed part way (a full disk) left the part written as a torn tail: the next
  writer refused the log until ``repair``, which on that full disk could not keep its backup.
- JSON nested past the reader's bound said msgspec's words ("Expected `bool | int | float |
  str | null`, got `array`"), not the rule; a line of zero bytes (what a crash leaves) said
  "invalid character (byte 0)".
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.jsonl import MAX_DEPTH
from tests.cli.probes import cli, one_error_line
from tests.recorder.sources import matches

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "examples" / "golden" / "classic.jsonl"
src = matches()[0]


def test_an_empty_jsonl_file_read_as_binary_is_called_an_empty_json_lines_file(
        tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(LogFormatError) as caught:
        log.verify(path)
    err = caught.value
    assert (err.path, err.offset, err.exit_status) == (str(path), 0, 2), str(err)
    assert "the JSON Lines file is empty" in str(err)
    assert "header" not in err.message and "torn" not in err.message, str(err)
    # the same file named .blog is a match not started, as before
    blog = tmp_path / "empty.blog"
    blog.write_bytes(b"")
    assert log.verify(blog).torn is not None


def test_a_json_lines_log_read_as_binary_is_not_told_to_rename_itself(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(GOLDEN.read_bytes())
    with pytest.raises(LogFormatError) as caught, log.Reader(path) as reader:
        list(reader)
    err = caught.value
    assert (err.offset, err.exit_status) == (0, 2)
    assert "rename" not in str(err) and "JSON Lines" in str(err) and "jsonl" in str(err)
    # a binary log under a .jsonl name (written before the writer refused one) still reads
    binary = tmp_path / "b.blog"
    log.write_log(binary, src[:3])
    os.rename(binary, tmp_path / "b.jsonl")
    assert log.read_events(tmp_path / "b.jsonl") == list(src[:3])


def test_the_writer_refuses_a_jsonl_name_and_makes_no_file(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    with pytest.raises(LogFormatError) as caught:
        log.Writer(path)
    assert caught.value.exit_status == 2 and ".blog" in str(caught.value)
    assert str(path) in str(caught.value)
    assert os.listdir(tmp_path) == []
    log.write_log(tmp_path / "W.JSONL", src[:2])  # read as binary by every reader: allowed
    assert log.read_events(tmp_path / "W.JSONL") == list(src[:2])


def test_json_nested_past_the_bound_names_the_bound(tmp_path: Path) -> None:
    lines = GOLDEN.read_text().splitlines()
    nested = '{"t":"dr","x":' + '{"a":' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1) + "}"
    path = tmp_path / "deep.jsonl"
    path.write_text("\n".join([*lines[:2], nested]) + "\n")
    line = one_error_line(cli("verify", path), 1)
    assert f"{path}, line 3, seq 1:" in line and f"nested more than {MAX_DEPTH} deep" in line
    assert "Expected" not in line


def _half_writes(monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """os.pwrite writes half of what it is given, then fails as a full disk does."""
    real = os.pwrite

    def pwrite(fd: int, data: bytes | memoryview, offset: int) -> int:
        real(fd, bytes(data)[: max(1, len(data) // 2)], offset)
        raise OSError(code, os.strerror(code))
    monkeypatch.setattr(os, "pwrite", pwrite)


@pytest.mark.parametrize("sealed", [True, False])
def test_a_write_failed_part_way_cuts_its_part_and_the_next_writer_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sealed: bool) -> None:
    path = tmp_path / "w.blog"
    with log.Writer(path, sealed=sealed) as w:
        w.append(src[0])
        w.append(src[1])
        end = path.stat().st_size
        _half_writes(monkeypatch, errno.ENOSPC)
        with pytest.raises(LogFormatError) as caught:
            w.append(src[2])
        monkeypatch.undo()
        err = caught.value
        assert (err.kind, err.seq, err.offset) == ("io", 2, end), str(err)
        assert "No space left on device" in str(err) and "cut off" in str(err)
    assert path.stat().st_size == end  # the log ends whole: no torn tail
    info = log.verify(path)
    assert (info.torn, info.events) == (None, 2)
    with log.Writer(path) as w:  # a new writer goes on, no repair needed
        assert w.next_seq == 2
        w.append(src[2])
    assert log.read_events(path) == list(src[:3])
    out = cli("verify", path)
    assert out.returncode == 0 and "3 events" in out.stdout, out.stderr


def test_a_convert_on_a_full_disk_names_the_new_file_not_the_cut(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buraco_log import jsonl

    _half_writes(monkeypatch, errno.ENOSPC)
    with pytest.raises(LogFormatError) as caught:
        jsonl.convert(GOLDEN, tmp_path / "g.blog", "binary")
    monkeypatch.undo()
    message = str(caught.value)
    assert str(tmp_path / "g.blog") in message and "No space left on device" in message
    assert "cut off" not in message and "ends whole" not in message  # of the temporary
    assert os.listdir(tmp_path) == []


# -- a line of zero bytes ---------------------------------------------------------------------
# What a crash leaves where a file's data never reached the disk: msgspec said "JSON is
# malformed: invalid character (byte 0)".

def test_a_json_lines_line_of_zero_bytes_is_named_as_such(tmp_path: Path) -> None:
    lines = GOLDEN.read_bytes().splitlines(keepends=True)
    path = tmp_path / "z.jsonl"
    path.write_bytes(b"".join(lines[:4]) + bytes(4096))
    line = one_error_line(cli("verify", path), 1)
    assert f"{path}, line 5, seq 3:" in line and "4,096 zero bytes" in line
    assert "invalid character" not in line
    longer = tmp_path / "long.jsonl"
    with open(longer, "wb") as f:
        f.truncate(4 << 20)  # a hole of 4 MiB: one line past the bound, all zero bytes
    line = one_error_line(cli("verify", longer), 1)
    assert f"{longer}, line 1, seq 0: line longer than" in line and "zero bytes (NUL)" in line


# -- a long name --------------------------------------------------------------------------------
# A name may take NAME_MAX (255 bytes); the temporaries beside it added 18 bytes and more, so
# seal, convert and a new Writer said "File name too long" of a name that was not.

LONG_NAMES = ["x" * 245 + ".blog", "牌" * 80 + ".blog"]  # 250 and 245 bytes


@pytest.mark.parametrize("name", LONG_NAMES, ids=["ascii-250-bytes", "cjk-245-bytes"])
def test_a_log_with_a_long_name_is_written_sealed_and_converted(tmp_path: Path,
                                                                name: str) -> None:
    path = tmp_path / name
    with log.Writer(path, sealed=False) as w:
        for event in src[:5]:
            w.append(event)
    info = log.seal(path)
    assert info.sealed and info.events == 5
    jsonl_name = tmp_path / (name[:-5] + ".jsonl")
    done = cli("convert", path, "-o", jsonl_name)
    assert done.returncode == 0, done.stderr
    done = cli("convert", jsonl_name, "-o", path, "--overwrite")
    assert done.returncode == 0, done.stderr
    assert log.read_events(path) == list(src[:5]) and log.verify(path).head == info.head
    assert sorted(os.listdir(tmp_path)) == sorted([name, jsonl_name.name])  # no temporary left


def test_temporaries_of_temporaries_stay_within_name_max() -> None:
    name = "牌" * 85  # 255 bytes
    first = f".{log.temp_stem(name)}.{'0' * 12}.converting.blog"
    second = f".{log.temp_stem(first)}.{'0' * 12}.tmp"
    third = f".{log.temp_stem(second)}.{'0' * 12}.new"
    assert all(len(os.fsencode(n)) <= 255 for n in (first, second, third))
    assert log.temp_stem("m.blog") == "m.blog"


def test_repair_of_a_log_with_a_long_name_keeps_its_backup(tmp_path: Path) -> None:
    name = "r" * 247 + ".blog"  # 252 bytes: NAME.bak would be 256
    path = tmp_path / name
    log.write_log(path, src[:4])
    whole = path.read_bytes()
    path.write_bytes(whole + b"xyz")
    done = cli("repair", path)
    assert done.returncode == 0 and "cut 3 bytes" in done.stdout, done.stderr
    assert path.read_bytes() == whole
    backups = [n for n in os.listdir(tmp_path) if n.endswith(".bak")]
    assert len(backups) == 1 and (tmp_path / backups[0]).read_bytes() == b"xyz"
    assert backups[0] in done.stdout


# -- endless blank lines -----------------------------------------------------------------------
# 50 million newlines took a minute to read to "0 events (a match not started)"; a gigabyte of
# them many minutes. A match log holds a few blank or comment lines, not 100,000 in a row.

def test_a_run_of_blank_lines_past_the_bound_is_refused_at_once(tmp_path: Path) -> None:
    from buraco_log.jsonl import MAX_SKIPPED, read_jsonl

    lines = GOLDEN.read_bytes().splitlines(keepends=True)
    ok = tmp_path / "ok.jsonl"
    ok.write_bytes(b"".join(lines[:3]) + b"\n" * (MAX_SKIPPED - 1) + b"# note\n"
                   + b"".join(lines[3:]))
    assert len(read_jsonl(ok)) == len(lines) - 2  # the bound itself is read
    path = tmp_path / "blank.jsonl"
    path.write_bytes(b"".join(lines[:3]) + b"\n" * 20 * MAX_SKIPPED)
    line = one_error_line(cli("verify", path), 1)
    assert f"{path}, line {3 + MAX_SKIPPED + 1}, seq 2:" in line
    assert f"more than {MAX_SKIPPED:,} blank or comment lines" in line
