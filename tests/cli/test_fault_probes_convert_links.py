"""Fault probes, convert's output: a link into /proc (``/dev/stdout`` with stdout redirected to a
file), a device, and a link to a file. Renamed over, the link itself became a regular file (as
root, ``-o /dev/stdout --overwrite`` destroyed /dev/stdout for everyone)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.outputs import EXE, GOOD_JSONL, run

pytestmark = pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")


def test_convert_into_a_link_to_stdout_writes_through_it(tmp_path: Path) -> None:
    assert EXE is not None
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    captured = tmp_path / "captured.blog"
    with open(captured, "wb") as out:
        p = subprocess.run([EXE, "convert", GOOD_JSONL, "-o", link, "--to", "binary",
                            "--overwrite"], stdout=out, stderr=subprocess.PIPE, timeout=60)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink(), "the link was replaced by the log"
    r = run("verify", captured)  # the log alone: no report line after it
    assert r.code == 0 and "18 events" in r.out, r


def test_convert_into_dev_null_needs_no_overwrite_and_leaves_it_a_device(tmp_path: Path) -> None:
    r = run("convert", GOOD_JSONL, "-o", "/dev/null", "--to", "binary")
    assert r.code == 0 and "18 events" in r.out, r
    assert Path("/dev/null").is_char_device()


def test_convert_over_a_link_to_a_log_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "kept" / "real.blog"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "match.blog"
    link.symlink_to(real)
    r = run("convert", GOOD_JSONL, "-o", link, "--overwrite")
    assert r.code == 0, r
    assert link.is_symlink() and run("verify", real).code == 0
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.blog"]


def test_convert_overwrite_fsyncs_the_directory_after_the_rename(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rename over the old file is a directory entry: without the directory's fsync a
    power loss could bring the old log back after the command said it was replaced."""
    import os

    from cli import log_cmd

    out = tmp_path / "out.blog"
    out.write_bytes(b"old")
    calls: list[str] = []
    real_replace, real_fsync = os.replace, os.fsync

    def replace(src: str, dst: str) -> None:
        calls.append(f"replace {Path(dst).name}")
        real_replace(src, dst)

    def fsync(fd: int) -> None:
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            calls.append(f"fsync dir {os.path.basename(os.readlink(f'/proc/self/fd/{fd}'))}")
        real_fsync(fd)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "fsync", fsync)
    log_cmd._convert(Path(GOOD_JSONL), out, log_cmd.Target.binary, validate=False,
                     overwrite=True, special=False, as_json=False)
    assert "replace out.blog" in calls
    after = calls[calls.index("replace out.blog") + 1:]
    assert f"fsync dir {tmp_path.name}" in after, calls
