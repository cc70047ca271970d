"""Fault probes of the log commands, round 42.

- A full disk (ENOSPC, a quota, the file size limit's EFBIG) or EIO on a write or fsync made
  `convert`, `seal`, `repair` (its backup) and `demo -o` exit 2, which says "a usage error, or
  a file that is not readable as a log", and `keys new` named the key's directory, not its
  file. An output that cannot be written is exit 1, as `view`'s page and `audit --html` have
  it (docs/cli.md): one line naming the file asked for and the errno's words, no output nor
  temporary left, the source unchanged.
- A duplicate key in a JSON Lines signature line was named with the next event's seq ("line
  3, seq 1"), which every other error of a signature line avoids.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buraco_log import jsonl
from buraco_log.errors import LogFormatError
from tests.log.cli_run import (
    REPO,
    UNSEALED,
    UNSEALED_JSONL,
    Result,
    _files,
    assert_error,
    run,
)

# `buraco-log ARGS` with every fsync failing as a dying disk fails it (EIO)
_FSYNC_EIO = """
import errno, os, runpy, sys
def fsync(fd):
    raise OSError(errno.EIO, os.strerror(errno.EIO))
os.fsync = fsync
sys.argv = ["buraco-log", *sys.argv[1:]]
runpy.run_module("cli", run_name="__main__")
"""


def _run_eio(*args: object, cwd: Path) -> Result:
    p = subprocess.run([sys.executable, "-c", _FSYNC_EIO, *map(str, args)], capture_output=True,
                       timeout=60, cwd=cwd, env=dict(os.environ, COLUMNS="200",
                                                     PYTHONPATH=str(REPO)))
    return Result(p.returncode, p.stdout.decode(), p.stderr.decode())


def _copy(source: Path, folder: Path) -> Path:
    path = folder / source.name
    path.write_bytes(source.read_bytes())
    return path


@pytest.mark.parametrize("source, out", [(UNSEALED, "new.jsonl"), (UNSEALED_JSONL, "new.blog")])
def test_convert_whose_fsync_fails_is_exit_1_naming_its_output_and_leaves_nothing(
        tmp_path: Path, source: Path, out: str) -> None:
    src = _copy(source, tmp_path)
    before = _files(tmp_path)
    line = assert_error(_run_eio("convert", src, "-o", out, cwd=tmp_path), 1,
                        f"error: {out}: ", "Input/output error")
    assert ".tmp" not in line and "seq" not in line, line
    assert _files(tmp_path) == before  # no output, no temporary, the source as it was


def test_seal_whose_fsync_fails_is_exit_1_and_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    target = _copy(UNSEALED, tmp_path)
    before = _files(tmp_path)
    assert_error(_run_eio("seal", target, cwd=tmp_path), 1, f"{target}: ",
                 "Input/output error", "the log is unchanged")
    assert _files(tmp_path) == before


def test_a_write_refused_by_a_full_disk_says_so_in_json_as_log_io_exit_1(tmp_path: Path) -> None:
    src = _copy(UNSEALED, tmp_path)
    r = run("convert", "-f", "json", src, "-o", "new.jsonl", fsize=2000, cwd=tmp_path)
    assert r.code == 1 and r.err.count("\n") == 1 and "File too large" in r.err, r
    error = json.loads(r.out)["error"]
    assert (error["code"], error["exit_status"], error["kind"], error["path"]) == (
        "log.io", 1, "io", "new.jsonl"), error


def test_a_name_that_cannot_be_written_at_all_stays_a_usage_error(tmp_path: Path) -> None:
    # not a full disk: a directory the user may not write into is the name's fault (exit 2)
    if os.geteuid() == 0:
        pytest.skip("root may write into a read-only directory")
    src = _copy(UNSEALED, tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert_error(run("convert", src, "-o", locked / "new.jsonl"), 2, "Permission denied")


def test_keys_new_on_a_full_disk_names_the_key_file_exit_1(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    line = assert_error(run("keys", "new", "club", "-d", tmp_path, fsize=40), 1,
                        "File too large", "no key was kept")
    assert line.startswith(f"buraco-log: error: {tmp_path / 'club.key'}: "), line
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, its free room taken but for a few bytes (root only)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
            capture_output=True, check=False).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, check=False)


@pytest.mark.slow  # five commands (a simulated match among them): the file size limit's
# probes above stand for it in the default run
def test_every_log_command_on_a_real_full_disk_is_exit_1_and_leaves_nothing(
        full_disk: Path, tmp_path: Path) -> None:
    log_on_disk = _copy(UNSEALED, full_disk)
    with open(full_disk / "fill", "wb", buffering=0) as f, pytest.raises(OSError):
        while True:  # the rest of the room, taken
            f.write(b"x" * 4096)
    before = _files(full_disk)
    src = _copy(UNSEALED_JSONL, tmp_path)
    for args, needle in [(("seal", log_on_disk), "the log is unchanged"),
                         (("convert", src, "-o", full_disk / "new.blog"), "new.blog: "),
                         (("convert", log_on_disk, "-o", full_disk / "new.jsonl"),
                          "new.jsonl: "),
                         (("demo", "-o", full_disk / "demo.blog"), "demo.blog"),
                         (("keys", "new", "club", "-d", full_disk), "club.key: ")]:
        r = run(*args)
        assert r.code == 1, (args, r)
        assert "No space left on device" in r.err and needle in r.err, (args, r.err)
        assert _files(full_disk) == before, args


# -- JSON Lines: a signature line that names a key twice ----------------------------------------


def test_a_signature_line_with_a_key_named_twice_is_named_by_its_line_without_a_seq(
        tmp_path: Path) -> None:
    # a signature line has no seq of its own: it was named by the next event's ("line 3,
    # seq 1"), which every other error of a signature line avoids
    lines = (REPO / "examples" / "format" / "v2.jsonl").read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(b'{"log": "signature"'))
    lines[at] = lines[at].replace(b'"seq": 0', b'"seq": 0, "seq": 0', 1)
    bad = tmp_path / "twice.jsonl"
    bad.write_bytes(b"\n".join(lines))
    with pytest.raises(LogFormatError) as caught:
        jsonl.read_jsonl(bad)
    assert (caught.value.line, caught.value.seq) == (at + 1, None), caught.value
    assert str(caught.value) == (f"{bad}, line {at + 1}: duplicate key 'seq': JSON parsers "
                                 "disagree on which value counts, so the line is refused")


# -- JSON Lines: NaN and Infinity ----------------------------------------------------------------


@pytest.mark.parametrize("word", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_named_not_called_an_invalid_character(
        tmp_path: Path, word: bytes) -> None:
    lines = (REPO / "examples" / "golden" / "classic.jsonl").read_bytes().split(b"\n")
    assert lines[3].startswith(b'{"t":"dr","seat":0,')
    lines[3] = lines[3].replace(b'"seat":0', b'"seat":' + word)
    bad = tmp_path / "nan.jsonl"
    bad.write_bytes(b"\n".join(lines))
    with pytest.raises(LogFormatError) as caught:
        jsonl.read_jsonl(bad)
    assert str(caught.value) == (f"{bad}, line 4, seq 2: not a JSON line: field 'seat': "
                                 f"{word.decode()} at byte 17 is not JSON (JSON numbers are "
                                 "finite)")


# -- schema: a full disk ----------------------------------------------------------------------


def test_schema_on_a_full_disk_names_its_file_and_keeps_the_old_one_whole(tmp_path: Path) -> None:
    # written in place: "buraco-log: error: File too large" (no file named), and the schema
    # cut at the limit, the old file lost
    folder = tmp_path / "schema"
    folder.mkdir()
    old = folder / "events.schema.json"
    old.write_text('{"old": true}\n')
    r = run("schema", "--dir", folder, fsize=3000)
    assert r.code == 1 and r.out == "", r
    assert r.err == f"buraco-log: error: {old}: File too large\n", r.err
    assert [p.name for p in folder.iterdir()] == [old.name]
    assert old.read_text() == '{"old": true}\n'


# -- JSON Lines: a read that fails --------------------------------------------------------------


class _FailingReads:
    """A file whose sixth ``readline`` fails as a dying disk's read does (EIO)."""

    def __init__(self, f: Any) -> None:
        self._f, self._reads = f, 0

    def readline(self, size: int = -1) -> bytes:
        self._reads += 1
        if self._reads == 6:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return bytes(self._f.readline(size))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> _FailingReads:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()


def test_a_json_lines_read_that_fails_names_the_log_not_the_new_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the reader's bare OSError named no file, and convert took it for its new file's:
    # "new.blog: writing the new file failed: Input/output error"
    real = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: _FailingReads(real(*a, **k)))
    out = tmp_path / "new.blog"
    with pytest.raises(LogFormatError) as caught:
        jsonl.convert(UNSEALED_JSONL, out, "binary")
    monkeypatch.undo()
    error = caught.value
    assert (error.path, error.kind, error.exit_status) == (str(UNSEALED_JSONL), "io", 2), error
    assert error.offset is not None and 0 < error.offset < UNSEALED_JSONL.stat().st_size
    assert error.message == "Input/output error"
    assert list(tmp_path.iterdir()) == []
