"""Fault probes of the replay page: hostile player names (HTML, quotes, a script end tag,
very long, right-to-left marks) at a 6-player table, and pages that cannot be written (a full
device, a file size limit). The page must show names as text, inject nothing, and a failed
write must name the page and leave nothing behind."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.view import page_for_log, write_page
from tests.view.pages import data_of

EXE = shutil.which("buraco-log")
GOOD = Path(__file__).resolve().parents[2] / "examples" / "sim" / "classic-2p-000000.blog"

NAMES = (
    "<script>alert(1)</script>",
    "\"quoted\" & 'single'",
    "</script><img src=x onerror=alert(2)>",
    "ünï ♠ \u202eevil",
    "x" * 5000,
    "<!-- a --> \u2028\u2029 ]]>",
)


@pytest.fixture(scope="module")
def nasty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A legal 6-player match whose names, ids and match id are hostile HTML."""
    events = list(simulate_match(PRESETS["classic"], 6, seed="nasty", index=0))
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id="m<script>\"&'", note="<i>note</i>",
        players=tuple(ev.Player(name=n, id=f'<b id="{i}">') for i, n in enumerate(NAMES)))
    path = tmp_path_factory.mktemp("nasty") / "nasty.blog"
    with log.Writer(path) as w:
        for e in events:
            w.append(e)
    return path


@pytest.mark.parametrize("seat", [None, 0, 5])
def test_hostile_names_stay_inside_the_data_and_the_title_is_escaped(nasty: Path,
                                                                     seat: int | None) -> None:
    html = page_for_log(nasty, seat=seat).html
    data = data_of(html)
    assert [p["name"] for p in data["players"]] == list(NAMES)  # read back whole
    assert html.count("<script") == 2  # the data element and the page's own script
    assert "<img" not in html and "<!-- a -->" not in html
    assert "<title>&#x2068;m&lt;script&gt;&quot;&amp;&#x27;&#x2069; (&#x2068;classic" in html


def _full(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


def test_write_page_to_a_full_device_names_it() -> None:
    with pytest.raises(OSError) as info:
        write_page("/dev/full", "<p>x</p>")
    assert info.value.filename == "/dev/full"  # it named no file


def _limit_file_size() -> None:  # in the child: a file larger than this fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))


@pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")
@pytest.mark.parametrize("command", [
    ["view", str(GOOD)],
    ["review", str(GOOD), "--seat", "0", "--budget", "1x1r1", "-f", "html"],
])
@pytest.mark.parametrize("where", ["device", "size-limit"])
def test_a_page_that_cannot_be_written_is_one_line_naming_it_and_leaves_nothing(
        tmp_path: Path, command: list[str], where: str) -> None:
    out = "/dev/full" if where == "device" else "page.html"
    assert EXE is not None
    p = subprocess.run([EXE, *command, "-o", out], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path, env=dict(os.environ, COLUMNS="200"),
                       preexec_fn=_limit_file_size if where == "size-limit" else None)
    assert "Traceback" not in p.stderr
    assert p.returncode == 1, p
    lines = p.stderr.splitlines()
    assert lines == [lines[0]] and lines[0].startswith(f"buraco-log: error: {out}: "), lines
    assert p.stdout == ""
    assert _full(tmp_path) == []  # no page, no temporary file


def test_hostile_names_render_as_text_in_the_browser(browser: Any, nasty: Path,
                                                     tmp_path: Path) -> None:
    page = tmp_path / "nasty.html"
    write_page(page, page_for_log(nasty).html)
    browser.get(page.resolve().as_uri())
    browser.execute_script("window.buracoView.go(40)")
    found = browser.execute_script("""
        return {imgs: document.querySelectorAll('img').length,
                scripts: document.querySelectorAll('script').length,
                seats: document.querySelectorAll('[data-seat]').length,
                text: document.body.innerText,
                wide: document.documentElement.scrollWidth - window.innerWidth};""")
    assert found["imgs"] == 0 and found["scripts"] == 2
    assert found["seats"] == 6
    for name in NAMES[:3]:  # shown as typed, not read as markup
        assert name in found["text"]
    assert found["wide"] <= 0  # a 5,000-character name does not widen the page
    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert severe == []
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018


# -- an output that is a link ---------------------------------------------------------------------


@pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")
@pytest.mark.parametrize("command", [
    ["view", str(GOOD)],
    ["review", str(GOOD), "--seat", "0", "--budget", "1x2r1", "-f", "json"],
])
def test_a_link_to_standard_output_is_written_into_not_replaced(tmp_path: Path,
                                                                command: list[str]) -> None:
    """`-o /dev/stdout` with stdout redirected to a file: /dev/stdout is a link to
    /proc/self/fd/1, a regular file then, so the page was renamed over the link: as root,
    /dev/stdout itself became the page. Here a link of our own to /proc/self/fd/1 stands in
    for /dev/stdout."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    assert EXE is not None
    with open(tmp_path / "captured", "wb") as captured:
        p = subprocess.run([EXE, *command, "-o", str(link)], stdout=captured,
                           stderr=subprocess.PIPE, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    body = (tmp_path / "captured").read_bytes()
    assert body.startswith(b"<!DOCTYPE html>" if command[0] == "view" else b"{")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["captured", "stdout"]


def test_a_link_to_a_page_stays_a_link_and_its_file_gets_the_page(tmp_path: Path) -> None:
    real = tmp_path / "pages" / "real.html"
    real.parent.mkdir()
    real.write_text("old page\n")
    link = tmp_path / "page.html"
    link.symlink_to(real)
    write_page(link, "<p>new</p>")
    assert link.is_symlink() and real.read_text() == "<p>new</p>"
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.html"]


def test_special_paths_are_found_through_links(tmp_path: Path) -> None:
    from buraco_log.outpaths import through_special as _through_special

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to("/dev/null")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert _through_special(tmp_path / "a") and _through_special(Path("/dev/stdout"))
    assert not _through_special(tmp_path / "page.html")
    assert not _through_special(tmp_path / "loop")
