"""Fault probes of `review` (third round): text from the log in the review panel of the page
(a bidi override or a control character in a player's name was drawn as it is there, while the
viewer and the terminal show it as an escape), logs that are illegal or torn, one log of every
preset, and a time cap that is kept."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from buraco_log import events as ev
from buraco_log.expert import Budget
from buraco_log.review import review_events, review_page
from buraco_log.rules import PRESETS
from buraco_log.safetext import UNSAFE
from buraco_log.simulate import simulate_match
from cli.main import app
from tests.brokenlogs import tear, with_illegal_discard, write

NAME = "Ann\u202eevil\u2066\x1b[31m\r\nseq 1 forged"
MATCH = "m\u202e-\x07"
TINY = "1x2r1"


def _events(preset: str = "classic", players: int = 2, n: int = 90) -> list[ev.AnyEvent]:
    return list(simulate_match(PRESETS[preset], players, seed=f"r3-{preset}", index=0))[:n]


def _hostile() -> list[ev.AnyEvent]:
    events = _events()
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    events[0] = msgspec.structs.replace(start, match_id=MATCH,
                                        players=(ev.Player(name=NAME), ev.Player(name=NAME)))
    return events


def _review(*args: str | Path) -> Any:
    return CliRunner().invoke(app, ["review", *map(str, args)], catch_exceptions=False)


@pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
def test_the_review_panel_shows_bidi_and_controls_as_escapes(browser: Any,
                                                             tmp_path: Path) -> None:
    events = _hostile()
    review = review_events(events, 0, budget=Budget(samples=1, candidates=2, rounds=1))
    path = tmp_path / "review.html"
    path.write_text(review_page(events, review), encoding="utf-8")
    browser.get(path.as_uri())
    found = browser.execute_script("""
        var box = document.getElementById('review');
        var title = Array.prototype.map.call(document.querySelectorAll('#moves li[title]'),
                                             function (li) { return li.title; }).join(' ');
        return {panel: box.textContent, title: title, body: document.body.textContent};""")
    for where in ("panel", "title", "body"):
        raw = UNSAFE.findall(found[where].replace("\n", ""))
        assert raw == [], f"{where} draws {raw!r} as it is"
    assert "Ann\\u202eevil\\u2066\\x1b[31m\\x0d\\x0aseq 1 forged" in found["panel"]
    assert "m\\u202e-\\x07" in found["panel"]


def test_the_text_review_escapes_what_the_log_says(tmp_path: Path) -> None:
    log = write(tmp_path / "m.blog", _hostile())
    r = _review(log, "--seat", "0", "--budget", TINY)
    assert r.exit_code == 0, r.output
    assert UNSAFE.findall(r.stdout.replace("\n", "")) == []
    assert not any(line.startswith("seq 1 forged") for line in r.stdout.splitlines())
    j = _review(log, "--seat", "0", "--budget", TINY, "-f", "json")
    assert json.loads(j.stdout)["player"] == NAME  # data for programs keeps the name


def test_an_illegal_log_is_refused_or_reviewed_up_to_it(tmp_path: Path) -> None:
    bad, seq = with_illegal_discard(_events(n=150))
    log = write(tmp_path / "ill.blog", bad)
    r = _review(log, "--seat", "0", "--budget", TINY)
    assert r.exit_code == 1 and r.stdout == ""
    assert f"seq {seq} is illegal: " in r.stderr
    assert r.stderr.rstrip().endswith(" [discard.card_not_in_hand]"), r.stderr
    p = _review(log, "--seat", "0", "--budget", TINY, "-f", "json", "--partial")
    assert p.exit_code == 1, p.stderr  # written, and a finding
    got = json.loads(p.stdout)
    assert got["decisions"] > 0 and all(m["seq"] < seq for m in got["moves"])
    assert f"seq {seq} is illegal" in got["note"]


def test_a_torn_log_is_refused_or_reviewed_up_to_the_tear(tmp_path: Path) -> None:
    events = _events(n=150)
    log = write(tmp_path / "torn.blog", events, segment=1)
    tear(log)
    r = _review(log, "--seat", "1", "--budget", TINY)
    assert r.exit_code == 1 and "--partial" in r.stderr and r.stdout == ""
    p = _review(log, "--seat", "1", "--budget", TINY, "-f", "json", "--partial")
    assert p.exit_code == 1, p.stderr  # written, and a finding
    got = json.loads(p.stdout)
    assert got["decisions"] > 0 and max(m["seq"] for m in got["moves"]) < events[-1].seq
    assert "damaged" in p.stderr


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_is_reviewed(preset: str, tmp_path: Path) -> None:
    players = 4 if preset in ("burako", "mega") else 3 if preset == "biriba" else 2
    events = _events(preset, players, n=120)
    log = write(tmp_path / "m.blog", events)
    r = _review(log, "--seat", str(players - 1), "--budget", TINY, "-f", "json")
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["decisions"] > 0 and got["rules"] == PRESETS[preset].name
    assert all(m["seat"] == players - 1 for m in got["moves"]) if "seat" in (
        got["moves"][0]) else True


def test_a_time_cap_is_kept(tmp_path: Path) -> None:
    events = _events(n=60)
    log = write(tmp_path / "m.blog", events)
    began = time.monotonic()
    r = _review(log, "--seat", "0", "--budget", "100000x5r3/10ms", "-f", "json")
    took = time.monotonic() - began
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    # 100000 samples a decision without the cap: hours; with it, about 10 ms a decision
    assert took < 5 + 0.1 * got["decisions"], took
    assert got["budget"]["ms"] == 10
