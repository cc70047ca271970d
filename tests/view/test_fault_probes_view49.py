"""Fault probes of `view` (round 49): a written page's name made durable (its directory
flushed after the rename, as convert's and demo's files are), and what is said when that
flush fails."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.view import write_page


def test_a_written_page_has_its_directory_flushed_after_the_rename(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    flushed: list[tuple[str, bool]] = []
    real = log.fsync_dir

    def spy(path: str) -> None:
        flushed.append((os.path.abspath(path), os.path.isfile(path)))
        real(path)

    monkeypatch.setattr(log, "fsync_dir", spy)
    target = tmp_path / "page.html"
    write_page(target, "<!DOCTYPE html><p>page</p>")
    # the page in place, under its own name, when its directory was flushed
    assert (str(target), True) in flushed, flushed


def test_a_failed_flush_names_the_page_and_leaves_it_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: str) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO), path)

    monkeypatch.setattr(log, "fsync_dir", broken)
    link = tmp_path / "link.html"
    (tmp_path / "real.html").write_text("old", encoding="utf-8")
    link.symlink_to("real.html")
    with pytest.raises(log.NotDurableError) as got:
        write_page(link, "<!DOCTYPE html><p>new</p>")
    assert got.value.path == str(link)  # the name asked for, not the file the link names
    assert "Input/output error" in str(got.value)
    assert (tmp_path / "real.html").read_text(encoding="utf-8") == "<!DOCTYPE html><p>new</p>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "real.html"]


@pytest.mark.slow  # a whole CLI in a subprocess: a second or more on a busy machine
def test_view_says_in_one_line_that_the_pages_name_may_not_survive(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    code = ("import errno, os, sys\n"
            "from buraco_log import log\n"
            "def broken(path):\n"
            "    raise OSError(errno.EIO, os.strerror(errno.EIO), path)\n"
            "log.fsync_dir = broken\n"
            "sys.argv = ['buraco-log', 'view', sys.argv[1], '-o', sys.argv[2]]\n"
            "from cli.entry import run\n"
            "run()\n")
    page = tmp_path / "page.html"
    done = subprocess.run(
        [sys.executable, "-c", code, str(root / "examples/golden/classic.jsonl"),
         str(page)], capture_output=True, text=True, timeout=60, cwd=root)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"buraco-log: error: {page}: written, but its directory could not be made durable "
        "(Input/output error): the file is whole and in place, but a power loss may undo it"]
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
