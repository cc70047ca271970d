"""Fault probes of `view` (round 44). Held, no defect found: a match id made of HTML and
script is shown as text in the title, the heading and the first move line, and runs nothing;
a log of its match start alone, a signed log (sealed, unsealed, signed at the end) and a log
with a refused event each give a page that opens without a script error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log.audit import load
from buraco_log.log import write_log
from buraco_log.view import build_page
from buraco_log.view.frames import ID_SHOWN, cut
from tests.cli.probes import ROOT, cli
from tests.view.pages import SIM, data_of

BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
LOG = SIM / "thirteen-quick-2p-000000.blog"
EVIL = ('</script><script>window.PWNED=1</script><img src=x onerror="window.PWNED=2">'
        "\"'&amp;<b>x</b>\u2028/*@JS@*/")


def _write(path: Path, events: list[Any]) -> Path:
    write_log(path, events, validate=False)
    return path


@BROWSER
def test_a_match_id_of_html_and_script_is_shown_as_text_and_runs_nothing(
        browser: Any, tmp_path: Path) -> None:
    events = load(LOG)
    events[0] = msgspec.structs.replace(events[0], match_id=EVIL)
    page = tmp_path / "evil.html"
    page.write_text(build_page(events).html)
    browser.get("about:blank")
    browser.get_log("browser")  # what earlier pages said
    browser.get(page.as_uri() + "#seq=0")
    got = browser.execute_script("""
        return {pwned: window.PWNED === undefined ? null : window.PWNED,
                title: document.title, h1: document.querySelector('h1').textContent,
                img: document.querySelectorAll('img').length,
                scripts: document.scripts.length,
                first: document.querySelector('#moves li[data-seq="0"]').textContent};""")
    shown = cut(EVIL, ID_SHOWN)
    assert got["pwned"] is None and got["img"] == 0, got
    assert got["scripts"] == 2  # the data and the page's own script: no third
    assert got["title"] == f"\u2068{shown}\u2069 (\u2068thirteen-quick\u2069, referee) - buraco-log"
    assert shown in got["h1"] and EVIL[:40] in got["first"], got
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def _pages(tmp_path: Path) -> dict[str, Path]:
    """Logs of each kind probed: its match start alone, a refused event, signed ones."""
    from buraco_log.signing.keys import Signer
    from tests.signing.helpers import match, write_signed

    events = load(LOG)
    logs = {"start alone": _write(tmp_path / "one.blog", events[:1]),
            "refused event": ROOT / "examples" / "disputes" / "illegal.log"}
    signer = Signer.generate()
    signed = match(key_id=signer.public().key_id)
    logs["unsigned"] = _write(tmp_path / "unsigned.blog", signed)
    for name, kw in (("signed", {}), ("signed unsealed", {"sealed": False}),
                     ("signed at the end", {"sign_at": "end"})):
        write_signed(tmp_path / f"{name}.blog", signed, signer, **kw)  # type: ignore[arg-type]
        logs[name] = tmp_path / f"{name}.blog"
    return logs


@BROWSER
def test_a_one_event_signed_or_refused_log_gives_a_page_without_a_script_error(
        browser: Any, tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    status: dict[str, int] = {}
    data: dict[str, dict[str, Any]] = {}
    for name, log in _pages(tmp_path).items():
        out = tmp_path / f"{name}.html"
        done = cli("view", log, "-o", out)
        status[name] = done.returncode
        data[name] = data_of(out.read_bytes())
        browser.get("about:blank")
        browser.get_log("browser")
        browser.get(out.as_uri())
        seq = browser.execute_script("return window.buracoView.frame().s")
        assert seq == len(data[name]["diffs"]) - 1, name  # it opens at its last table
        assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == [], name
    assert status == {n: 1 if n == "refused event" else 0 for n in status}
    assert len(data["start alone"]["diffs"]) == 1
    # the signature records and the seal are not drawn: every signed page is the unsigned
    # one's but for its line on the signatures (not checked: `view` was given no keys)
    lines = {n: data[n].pop("signing") for n in data}
    assert all(data[n] == data["unsigned"] for n in data if n.startswith("signed"))
    assert lines["unsigned"] == "Signing: unsigned: the log holds no signature"
    assert all("NOT checked" in lines[n] for n in lines if n.startswith("signed")), lines
