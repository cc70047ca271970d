"""Fault probes of `review` (round 54): a file that is not a log, rules with no name.

- `review` of a text file or a PNG said "not a log: no event could be read (...)" with no rule;
  `show` and `view` end the line with ``[log.header]``.
- Rules named by blanks made the review's heading "in match m ( )" (a tab: "(\\x09)"), in the
  text and on the page; the viewer says "rules with no name".
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from buraco_log.audit import load
from buraco_log.expert import Budget
from buraco_log.review import review_events, review_page, to_text
from tests.view.cli_run import run

GOLDEN = Path(__file__).resolve().parents[2] / "examples" / "golden" / "classic.jsonl"
BUDGET = Budget(samples=2, candidates=2)
BROWSER = pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
HEAD = "review of seat 0 (p0, side 0) in match golden-classic (rules with no name)"


def _named(tmp_path: Path, name: str) -> Path:
    """The golden classic match (unsealed: its end line dropped) with its rules named ``name``."""
    lines = GOLDEN.read_text().splitlines()
    events: list[dict[str, Any]] = [json.loads(x) for x in lines[1:-1]]
    events[0]["rules"]["name"] = name
    path = tmp_path / "nameless.jsonl"
    path.write_text("\n".join([lines[0], *(json.dumps(e) for e in events)]) + "\n")
    return path


@pytest.mark.parametrize("name", [" ", "\t"])
def test_the_text_review_names_rules_of_blanks_as_the_viewer_does(
        tmp_path: Path, name: str) -> None:
    review = review_events(load(_named(tmp_path, name)), 0, budget=BUDGET)
    first = to_text(review).splitlines()[0]
    assert first == HEAD, first


@BROWSER
@pytest.mark.slow  # a browser page (the text heading is the default run's)
def test_the_review_page_heading_names_rules_of_blanks(browser: Any, tmp_path: Path) -> None:
    events = load(_named(tmp_path, "\t"))
    page = tmp_path / "review.html"
    page.write_text(review_page(events, review_events(events, 0, budget=BUDGET)),
                    encoding="utf-8")
    browser.get("about:blank")
    browser.get(page.as_uri())
    head, tip = browser.execute_script(
        "var h = document.querySelector('#review .rv-head');"
        "return [h.textContent, h.title];")
    assert head.startswith(HEAD + " \u00b7 seed "), head
    assert "x09" not in tip and "(rules with no name)" in tip, tip


@pytest.mark.slow
@pytest.mark.parametrize("name", [" ", "\t"])
def test_the_review_command_names_rules_of_blanks(tmp_path: Path, name: str) -> None:
    done = run("review", "--seat", "0", "--budget", "2x2", _named(tmp_path, name))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines()[0] == HEAD, done.stdout[:200]


def _not_logs(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "notes.txt").write_text("hello world\n")
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(40))
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "pipe")
    return {p.name: p for p in tmp_path.iterdir()}


@pytest.mark.slow
@pytest.mark.parametrize("command", [("review", "--seat", "0"), ("view",),
                                     ("review", "--seat", "0", "--format", "html", "-o",
                                      "out.html")])
def test_a_file_that_is_not_a_log_is_one_line_with_its_rule(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    for name, path in _not_logs(tmp_path).items():
        done = run(*command, path, cwd=tmp_path)
        err = done.stderr.decode()
        assert done.returncode == 2, (name, done.returncode, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (name, err)
        assert err.startswith(f"buraco-log: error: {path}"), (name, err)
        assert re.search(r" \[log\.[a-z_]+\]$", err.strip()), (name, err)
    assert not (tmp_path / "out.html").exists()
