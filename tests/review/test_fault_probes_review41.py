"""Fault probes of `review` (round 41): a partial review of a damaged log said nothing of it in
the review itself (the JSON's "note" was null) and exited 0 where `view` exits 1; an output
named as a directory (`-o out/`) was written as the file `out`, over a file of that name; and
every move the review calls better is checked against the rules engine in its position; a
worker of `--jobs` killed mid-search was called "a defect of buraco-log"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import events as ev
from buraco_log.expert import Budget
from buraco_log.jsonl import binary_to_jsonl, event_from_json
from buraco_log.log import read_events
from buraco_log.reducer import Replayer, validate
from buraco_log.review import review_events
from tests.cli.probes import cli, one_error_line

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"
GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated classic match as JSON Lines, its line 41 garbage: after the header line,
    seqs 0 to 38 are intact."""
    box = tmp_path_factory.mktemp("dmg")
    whole = box / "whole.jsonl"
    binary_to_jsonl(SIM / "classic-2p-000000.blog", whole)
    lines = whole.read_text("utf-8").splitlines(keepends=True)
    path = box / "dmg.jsonl"
    path.write_text("".join(lines[:40]) + "{garbage\n" + "".join(lines[41:]), "utf-8")
    return path


def test_a_partial_review_of_a_damaged_log_says_so_in_itself_and_exits_1(
        damaged: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = cli("review", damaged, "--seat", "0", "--budget", "2x2r1", "--partial",
               "-f", "json", "-o", out)
    assert done.returncode == 1, done.stderr  # written, and a finding: as view's page
    review = json.loads(out.read_text("utf-8"))
    assert review["decisions"] > 0 and max(m["seq"] for m in review["moves"]) < 39
    note = review["note"]  # it was null: the file read as a review of the whole match
    assert note is not None and "damaged" in note and "line 41, seq 39" in note, note
    assert "39 events read intact" in note
    said = [line for line in done.stderr.splitlines() if "damaged" in line]
    assert len(said) == 1 and note in said[0], done.stderr  # said once, not twice
    text = cli("review", damaged, "--seat", "0", "--budget", "2x2r1", "--partial")
    assert text.returncode == 1 and f"note: {note}" in text.stdout.splitlines()


def test_view_and_a_partial_review_give_a_damaged_log_the_same_status(
        damaged: Path, tmp_path: Path) -> None:
    view = cli("view", damaged, "-o", tmp_path / "p.html")
    page = cli("review", damaged, "--seat", "1", "--budget", "2x2r1", "--partial",
               "-f", "html", "-o", tmp_path / "r.html")
    assert (view.returncode, page.returncode) == (1, 1), (view.stderr, page.stderr)
    assert (tmp_path / "p.html").stat().st_size > 0 and (tmp_path / "r.html").stat().st_size > 0
    # where the damage starts is marked at that table on both pages, not in the banner alone
    # (the review's page had the banner only)
    for page_file in ("p.html", "r.html"):
        html = (tmp_path / page_file).read_text("utf-8")
        assert "The log is damaged after seq 38 [log.jsonl]" in html, page_file
    assert "The review stops here." in (tmp_path / "r.html").read_text("utf-8")


def test_a_partial_review_of_a_clean_log_exits_0_with_no_note() -> None:
    done = cli("review", GOLDEN, "--seat", "0", "--budget", "2x2r1", "--partial", "-f", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["note"] is None and "note" not in done.stderr


@pytest.mark.parametrize("name", ["out/", "out/.", "file/", "file/.", "./", "."])
def test_an_output_named_as_a_directory_is_refused_before_the_search(
        tmp_path: Path, name: str) -> None:
    (tmp_path / "file").write_text("keep me", "utf-8")
    done = cli("review", GOLDEN, "--seat", "0", "--budget", "2x2r1", "-o", name, cwd=tmp_path)
    line = one_error_line(done, 2)
    assert line.startswith(f"buraco-log: error: {name}: is a directory's name"), line
    assert done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # no file "out"
    assert (tmp_path / "file").read_text("utf-8") == "keep me"  # it was replaced


def _with_drawn_card(alt: dict[str, object], real: ev.AnyEvent, stock: tuple[int, ...]
                     ) -> ev.AnyEvent:
    """A draw the review names has no card (the seat could not know it): the stock's top."""
    card = real.card if isinstance(real, ev.CardDrawn) else stock[0]
    seat = alt["seat"]
    assert isinstance(seat, int)
    return ev.CardDrawn(seq=real.seq, seat=seat, card=card)


@pytest.mark.parametrize(("log", "seat"), [
    ("burako-4p-000000.blog", 3),  # tiles, teams
    ("classic-3p-000000.blog", 2),
    ("mega-2p-000000.blog", 0),
    ("biriba-4p-000000.blog", 0),
])
def test_every_move_the_review_names_is_legal_in_its_position(log: str, seat: int) -> None:
    events = read_events(SIM / log)[:150]
    review = review_events(events, seat, budget=Budget(2, 4, 1), seed="legal41")
    assert review.decisions > 10
    states = {}
    r = Replayer()
    for e in events:
        states[e.seq] = r.state()  # the table before event e
        r.step(e)
    checked = 0
    for m in review.moves:
        before = states[m.seq]
        for alt in m.alternatives:
            move = (_with_drawn_card(alt.event, events[m.seq], before.stock)
                    if alt.event["t"] == "dr" else event_from_json(alt.event))
            validate(before, move)  # raises IllegalMoveError naming the rule
            checked += 1
    assert checked > 2 * review.decisions


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not Path("/proc/self/task").is_dir(),
                    reason="the search runs in one process, or no /proc to find its workers")
def test_a_worker_killed_mid_search_is_one_line_and_no_output(tmp_path: Path) -> None:
    """It said "internal error: BrokenProcessPool ... (a defect of buraco-log)"."""
    out = tmp_path / "r.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli", "review", str(SIM / "classic-2p-000000.blog"), "--seat",
         "0", "--budget", "100x5", "--jobs", "2", "--no-progress", "-f", "json", "-o", str(out)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        deadline = time.monotonic() + 60
        kids: list[str] = []
        while len(kids) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        assert len(kids) >= 2, "the search never started its workers"
        os.kill(int(kids[0]), signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1 and "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and "worker process of the search ended abruptly" in lines[0], lines
    assert "internal error" not in stderr and json.loads(stdout)["error"]["exit_status"] == 1
    assert list(tmp_path.iterdir()) == []  # no review, no temporary file
