"""`report --format html -o FILE` links the matches it names to their pages, written in
``matches/`` beside the report, for every log still at its recorded path."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from buraco_log.archive import ingest
from tests.view.cli_run import run
from tests.view.pages import SIM, data_of

LOGS = ["classic-2p-000000.blog", "burako-2p-000000.blog", "thirteen-quick-2p-000000.blog"]


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("linked")
    logs = root / "logs"
    logs.mkdir()
    for name in LOGS:
        shutil.copy(SIM / name, logs / name)
    ingest([str(logs)], root / "archive", jobs=1)
    return root / "archive", logs


def _links(report: str) -> dict[str, str]:
    """match_id -> href of every linked cell."""
    return {m: h for h, m in re.findall(r'<td><a href="([^"]+)">([^<]+)</a></td>', report)}


def test_the_report_links_each_named_match_to_its_page_beside_it(
        archive: tuple[Path, Path], tmp_path: Path) -> None:
    arch, _ = archive
    out = tmp_path / "r.html"
    done = run("report", arch, "--format", "html", "-o", out)
    assert done.returncode == 0, done.stderr
    links = _links(out.read_text())
    assert links, "the notable matches name matches"
    for match_id, href in links.items():
        assert href.startswith("matches/") and href.endswith(".html")
        data = data_of((tmp_path / href).read_bytes())
        assert data["match"] == match_id and data["viewer"] is None
    pages = sorted(p.name for p in (tmp_path / "matches").iterdir())
    assert pages == sorted(Path(h).name for h in set(links.values()))


def test_a_moved_log_is_named_without_a_link_and_stdout_writes_no_pages(
        archive: tuple[Path, Path], tmp_path: Path) -> None:
    arch, logs = archive
    out = tmp_path / "r.html"
    moved = tmp_path / "away"
    moved.mkdir()
    for p in logs.iterdir():
        shutil.move(p, moved / p.name)
    try:
        done = run("report", arch, "--format", "html", "-o", out)
        assert done.returncode == 0, done.stderr
        assert _links(out.read_text()) == {}
        assert sorted(p.name for p in tmp_path.iterdir()) == ["away", "r.html"]  # no folder
    finally:
        for p in moved.iterdir():
            shutil.move(p, logs / p.name)
    done = run("report", arch, "--format", "html", cwd=tmp_path)
    assert done.returncode == 0 and b"<!DOCTYPE html>" in done.stdout
    assert _links(done.stdout.decode()) == {}
    assert not (tmp_path / "matches").exists()


def test_a_report_written_to_a_fifo_goes_into_it_and_leaves_it_in_place(
        archive: tuple[Path, Path], tmp_path: Path) -> None:
    """`-o /dev/null` as root must not replace the device with a regular file: the same path,
    shown with a FIFO."""
    import os
    import stat
    import threading

    arch, _ = archive
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = run("report", arch, "-o", fifo)
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode) and got and b"matches" in got[0]
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]
