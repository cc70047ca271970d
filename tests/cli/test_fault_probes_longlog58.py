"""`view` of an enormous log: refused above a documented count of events, in one line that
says what to do, before the log is read whole (a page of a million events was 142 MB, which a
browser took 35 s and 2 GB to open; writing it took 1.8 GB)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pytest

from buraco_log import log
from cli import common, view_cmd
from cli.view_cmd import MAX_PAGE_EVENTS, _more_events_than
from tests.log import longmatch
from tests.log.cli_run import run


def _marathon(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "marathon.blog"
    with log.Writer(path, validate=False, batched=True) as writer:
        writer.append_many(longmatch.events(count))
    return path


def test_the_limit_is_counted_without_reading_past_it(tmp_path: Path) -> None:
    path = _marathon(tmp_path, 301)
    assert _more_events_than(path, 300) and not _more_events_than(path, 301)
    assert 100_000 <= MAX_PAGE_EVENTS <= 200_000  # a page that opens in a few seconds


@pytest.mark.slow  # two command lines, 3 s on 2 loaded cores
def test_view_refuses_a_log_past_the_limit_and_writes_no_page(tmp_path: Path) -> None:
    path = _marathon(tmp_path, 301)
    page = tmp_path / "marathon.html"
    r = run("view", path, "--max-events", 300)
    assert r.code == 2 and r.out == "", r
    assert r.lines == [
        f"buraco-log: error: {path}: the log holds more than 300 events, too many for one page "
        "(a browser needs about 35 s and 2 GB for a million); show the table at any point "
        "with `buraco-log replay LOG --at SEQ` (or --hand N), or raise the limit with "
        "--max-events N"], r
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marathon.blog"]  # nothing written
    r = run("view", path, "--max-events", 301, "-o", page)  # at the limit: the page
    assert r.code == 0 and page.stat().st_size > 0, r


def test_audit_html_of_a_log_past_the_limit_writes_no_page_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _marathon(tmp_path, 301)
    page = tmp_path / "referee.html"
    monkeypatch.setattr(view_cmd, "MAX_PAGE_EVENTS", 300)
    view_cmd.audit_html(page, path, SimpleNamespace(findings=()))  # no finding to mark
    assert not page.exists()
    assert capsys.readouterr().err == (
        f"buraco-log: note: {path}: no page written (the log holds more than 300 events, too "
        "many for one page; `buraco-log view LOG --max-events N` writes it all the same)\n")


@pytest.mark.slow  # Python's JSON encoder under tracemalloc: 1-6 s on 2 loaded cores
def test_json_output_is_written_into_one_buffer_not_a_list_of_every_piece() -> None:
    # `show -f json` of a long match: json.dumps with an indent joined a list of every piece,
    # 8.7 times the text here (4.7 now: the buffer joins its pieces every 100,000; 300 MB
    # for the 50 MB summary of 20 million events)
    obj = [{"hand": i, "scores": [i, -i], "went_out": None} for i in range(10_000)]
    tracemalloc.start()
    try:
        text = common._dumps(obj)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text == json.dumps(obj, indent=2, sort_keys=True) == common.json_text(obj)
    assert peak < 6 * len(text), (peak, len(text))
