"""`buraco-log review` as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec

from buraco_log.jsonl import binary_to_jsonl
from buraco_log.simulate import write_match
from tests.review.expert_matches import match
from tests.review.positions import bad_discard

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "review", *map(str, args)],
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_review_text_names_the_mistake_its_seed_and_budget(tmp_path: Path) -> None:
    events, seq = bad_discard()
    log = tmp_path / "m.blog"
    write_match(log, events)
    done = run(log, "--seat", "0", "--budget", "16", "--seed", "x")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "seed 'x', budget 16 samples x 5 candidates" in done.stdout
    line = next(x for x in done.stdout.splitlines() if f"seq {seq} " in x)
    assert "discard 9h" in line and line.rstrip().endswith("MISTAKE") and line.startswith("  !")
    assert "1 mistake," in done.stdout


def test_review_json_is_the_same_with_several_jobs_and_html_writes_the_page(
    tmp_path: Path,
) -> None:
    log = tmp_path / "m.blog"
    write_match(log, match("classic", 2)[:40])
    one = run(log, "--seat", "1", "--budget", "3x3", "--format", "json")
    two = run(log, "--seat", "1", "--budget", "3x3", "--format", "json", "--jobs", "2")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    assert one.stdout == two.stdout
    data = json.loads(one.stdout)
    assert data["seat"] == 1 and data["budget"]["samples"] == 3 and data["seed"] == "0"
    assert data["decisions"] == len(data["moves"]) > 3
    page = tmp_path / "r.html"
    done = run(log, "--seat", "1", "--budget", "3x3", "--format", "html", "-o", page)
    assert done.returncode == 0 and done.stdout == ""
    assert str(page) in done.stderr
    html = page.read_text()
    assert 'id="bl-review"' in html and 'id="bl-data"' in html


def test_review_refuses_what_is_not_a_log_in_one_line(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    for args in ((tmp_path / "nope.blog", "--seat", "0"), (text, "--seat", "0"),
                 (tmp_path, "--seat", "0")):
        done = run(*args)
        assert done.returncode == 2, done.stderr
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
        assert "Traceback" not in done.stderr and str(args[0]) in done.stderr
    assert "byte 0" in run(text, "--seat", "0").stderr
    done = run(tmp_path / "nope.blog", "--seat", "0", "--format", "json")  # JSON on failure too
    assert done.returncode == 2 and json.loads(done.stdout)["error"]["exit_status"] == 2


def test_review_usage_errors_exit_2(tmp_path: Path) -> None:
    log = tmp_path / "m.blog"
    write_match(log, bad_discard()[0])
    said = []
    for args in (("--seat", "5"), ("--seat", "0", "--budget", "lots"), ()):
        done = run(log, *args)
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        said.append(done.stderr)
    assert "--seat 5" in said[0] and "--budget" in said[1] and "--seat" in said[2]


def test_review_of_an_illegal_log_exits_1_unless_partial(tmp_path: Path) -> None:
    events = match("classic", 2)[:30]
    bad = msgspec.structs.replace(events[20], seq=30)  # an event repeated out of place
    log = tmp_path / "bad.blog"
    write_match(log, [*events, bad])
    done = run(log, "--seat", "0", "--budget", "2x2")
    assert done.returncode == 1 and done.stdout == ""
    assert "seq 30 is illegal: " in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert done.stderr.rstrip().endswith("]"), done.stderr  # the rule, last
    assert "Traceback" not in done.stderr
    done = run(log, "--seat", "0", "--budget", "2x2", "--partial")
    assert done.returncode == 1, done.stderr  # written, and a finding: as view's page
    assert "note:" in done.stderr and "seq 30 is illegal" in done.stderr
    assert "hand 0" in done.stdout  # the decisions before it


def test_review_of_a_damaged_log_exits_1_unless_partial(tmp_path: Path) -> None:
    whole = tmp_path / "m.blog"
    write_match(whole, match("classic", 2)[:30])
    log = tmp_path / "torn.jsonl"
    binary_to_jsonl(whole, log)
    data = log.read_bytes()
    log.write_bytes(data[:-40])  # the last line cut short
    done = run(log, "--seat", "0", "--budget", "2x2")
    assert done.returncode == 1 and done.stdout == ""
    assert "byte" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    done = run(log, "--seat", "0", "--budget", "2x2", "--partial")
    assert done.returncode == 1, done.stderr  # written, and a finding: as view's page
    assert "hand 0" in done.stdout and "damaged" in done.stderr


def test_simulate_seats_the_expert_and_refuses_a_bad_budget(tmp_path: Path) -> None:
    def simulate(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cli.main", "simulate", "--rules", "burako", "--players", "2",
             "--seed", "e", "-o", str(tmp_path), "--no-progress", *args],
            capture_output=True, text=True, timeout=600,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})

    done = simulate("--bot", "expert:2x2", "--bot", "heuristic", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["bots"] == ["expert:2x2", "heuristic"]
    from buraco_log.log import read_events
    from buraco_log.reducer import replay

    final = replay(read_events(tmp_path / "burako-2p-000000.blog"))
    assert final.phase == "over"
    bad = simulate("--bot", "expert:lots", "--overwrite")
    assert bad.returncode == 2 and bad.stdout == "" and "bot 'expert:lots'" in bad.stderr


def test_review_help_shows_the_budget_and_its_default() -> None:
    from typer.testing import CliRunner

    from cli.main import app

    result = CliRunner().invoke(app, ["review", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "96x5r3" in result.stdout and "--seat" in result.stdout
    listing = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).stdout
    assert "review" in listing
