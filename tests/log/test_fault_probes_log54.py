"""Fault probes of the log, round 54: files that are no log at all, named .jsonl.

- A gzip of a log, a PNG, a Parquet file, a binary log, a JSON array, a CSV, a README or an
  empty object ``{}``, named .jsonl, was called damaged (exit 1, ``[log.jsonl]``), where the
  same file named .blog is not a log (exit 2, ``[log.header]``): a batch script took a
  gzipped archive for a finding in a match. The line drawn: a file whose first line that is
  not blank or a comment is neither a first line, an event, nor an object damaged inside, is
  not a log, said at byte 0 by every reading command; a log whose later line is damaged (or
  whose first line opens an object and breaks) is damage, as before.
- `convert gz.jsonl -o x.jsonl` said "is already a jsonl log; nothing to convert".
- `sweep_stale` (run by `convert` and `seal`) and the removal of a crashed creation's second
  name listed a directory by its path, then opened, checked and removed each name by that path
  again: another directory renamed to the path in between had its own files of those names
  checked and removed.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from buraco_log import jsonl, log
from buraco_log.errors import LogFormatError
from cli.main import app
from tests.log.cli_run import GOOD_JSONL, assert_error, run

runner = CliRunner()

_BINARY_MAGIC = b"BURACOLG"


def _foreign(tmp_path: Path) -> dict[str, Path]:
    """Files that are no JSON Lines log, each named .jsonl."""
    text = GOOD_JSONL.read_bytes()
    made = {
        "gzip": gzip.compress(text),
        "png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10",
        "parquet": b"PAR1\x15\x04\x15\xff\xfe\x01\x00PAR1",
        "binary": _BINARY_MAGIC + b"\x01\x00\x02\x00\x01\x00\x00\x00\x00\x00\x00\x00",
        "array": b"[1, 2, 3]\n",
        "empty-object": b"{}\n" + text,
        "readme": b"# Notes\n\nThe match of Friday.\n",
        "csv": b"seat,score\n0,120\n",
    }
    out = {}
    for name, data in made.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(data)
        out[name] = path
    return out


def test_a_file_that_is_no_log_is_not_a_log_to_the_reader(tmp_path: Path) -> None:
    for name, path in _foreign(tmp_path).items():
        with pytest.raises(LogFormatError) as caught:
            jsonl.read_jsonl(path)
        exc = caught.value
        assert (exc.kind, exc.offset, exc.exit_status) == ("header", 0, 2), (name, exc)
        assert exc.message.startswith("not a JSON Lines log: "), (name, exc.message)
    readme = jsonl.JsonlReader(tmp_path / "readme.jsonl")
    with pytest.raises(LogFormatError, match=r"line 3 \(the first that is not blank or a "
                       r"comment\) is no JSON object"):
        list(readme)


def test_a_log_damaged_past_its_start_is_still_damage(tmp_path: Path) -> None:
    lines = GOOD_JSONL.read_bytes().split(b"\n")
    later = tmp_path / "later.jsonl"
    later.write_bytes(b"\n".join([*lines[:3], b"[1, 2]", *lines[4:]]))
    opened = tmp_path / "opened.jsonl"
    opened.write_bytes(b'{"t": "ms", bad\n' + b"\n".join(lines[1:]))
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(lines[0][:20])
    newer = tmp_path / "newer.jsonl"  # an event a newer version may write: no foreign file
    newer.write_bytes(b'{"t": "zz", "seq": 0}\n')
    for path, kind in ((later, "jsonl"), (opened, "jsonl"), (torn, "torn"),
                       (newer, "unknown")):
        with pytest.raises(LogFormatError) as caught:
            jsonl.read_jsonl(path)
        assert caught.value.kind == kind and caught.value.exit_status == 1, (path, caught.value)


@pytest.mark.slow
def test_every_reading_command_exits_2_for_a_gzip_named_jsonl(tmp_path: Path) -> None:
    path = _foreign(tmp_path)["gzip"]
    out = tmp_path / "out.blog"
    for args in (["verify"], ["show"], ["replay"], ["audit"], ["seal"], ["repair"],
                 ["view"], ["convert", "-o", str(out)]):
        result = runner.invoke(app, [*args, str(path)])
        assert result.exit_code == 2, (args, result.output)
        if args[0] not in ("audit", "repair"):
            assert "byte 0" in result.output and "[log.header]" in result.output, (
                args, result.output)
            assert "gzip-compressed: decompress it first" in result.output, (args, result.output)
    audited = runner.invoke(app, ["audit", str(path), "--format", "json"])
    report = json.loads(audited.stdout)
    assert audited.exit_code == 2 and "log.header" in audited.stdout, audited.stdout
    assert report, report
    assert not out.exists()


def test_converting_a_gzip_named_jsonl_to_jsonl_says_what_it_is(tmp_path: Path) -> None:
    path = _foreign(tmp_path)["gzip"]
    target = tmp_path / "x.jsonl"
    result = runner.invoke(app, ["convert", str(path), "-o", str(target)])
    assert result.exit_code == 2, result.output
    assert "already a jsonl log" not in result.output, result.output
    assert "gzip-compressed" in result.output and "[log.header]" in result.output
    assert not target.exists()


@pytest.mark.slow
def test_the_same_file_named_jsonl_or_blog_gets_one_status_in_a_subprocess(
        tmp_path: Path) -> None:
    files = _foreign(tmp_path)
    png = files["png"]
    as_blog = tmp_path / "png.blog"
    as_blog.write_bytes(png.read_bytes())
    assert_error(run("verify", as_blog), 2, "byte 0", "[log.header]")
    assert_error(run("verify", png), 2, f"{png}, byte 0", "not a JSON Lines log",
                 "line 1 is no JSON object", "[log.header]")
    assert_error(run("show", files["array"]), 2, "byte 0",
                 "line 1 is a JSON array, not an object", "[log.header]")
    assert_error(run("convert", files["gzip"], "-o", tmp_path / "y.jsonl"), 2,
                 "not a JSON Lines log: the file is gzip-compressed", "[log.header]")


# -- the sweeps look at names in one directory and act in it, not again by its path -----------

class _Listing:
    """What ``os.scandir`` returns, read whole at once, with a step run right after: the
    window between a sweep's listing and its acting on the names listed."""

    def __init__(self, entries: list[os.DirEntry[str]]) -> None:
        self._entries = entries

    def __iter__(self) -> Iterator[os.DirEntry[str]]:
        return iter(self._entries)

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _swap_directory_after_listing(monkeypatch: pytest.MonkeyPatch, directory: Path,
                                  fill: Callable[[Path], None]) -> Path:
    """After the first listing of ``directory``, move it aside (returned) and put another
    directory at its path, filled by ``fill``, as another program's rename would."""
    real = os.scandir
    aside = directory.with_name(directory.name + ".aside")

    def listing(target: Any = ".") -> _Listing:
        with real(target) as it:
            entries = list(it)
        if not aside.exists():
            directory.rename(aside)
            directory.mkdir()
            fill(directory)
        return _Listing(entries)

    monkeypatch.setattr(os, "scandir", listing)
    return aside


def _stale(path: Path) -> None:
    path.write_bytes(_BINARY_MAGIC + b"\0" * 12)
    old = time.time() - log.STALE_AFTER - 60
    os.utime(path, (old, old))


def test_sweep_stale_removes_in_the_directory_it_listed(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    temp = ".m.blog.0123456789ab.tmp"
    _stale(folder / temp)
    aside = _swap_directory_after_listing(monkeypatch, folder, lambda d: _stale(d / temp))
    removed = log.sweep_stale(folder / "m.blog")
    monkeypatch.undo()
    # the other directory's file of the same name is no temporary the sweep listed
    assert (folder / temp).exists(), "a file of the directory put at the path was removed"
    assert not (aside / temp).exists() and removed == [str(folder / temp)], removed


def test_creation_names_are_removed_in_the_directory_listed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    path = folder / "m.blog"
    path.write_bytes(_BINARY_MAGIC)
    new = ".m.blog.0123456789ab.new"
    os.link(path, folder / new)
    aside = _swap_directory_after_listing(
        monkeypatch, folder, lambda d: os.link(d.with_name("logs.aside") / "m.blog", d / new))
    gone = log._unlink_creation_names(str(path), log._identity(os.stat(folder / new)))
    monkeypatch.undo()
    assert (folder / new).exists(), "a name in the directory put at the path was removed"
    assert gone and not (aside / new).exists()
