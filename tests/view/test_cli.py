"""`buraco-log view` as a user runs it: a real subprocess, real files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.view.cli_run import run
from tests.view.pages import GOLDEN, data_of


def test_view_writes_the_page_beside_the_log_and_says_where(tmp_path: Path) -> None:
    log = shutil.copy(GOLDEN[0], tmp_path / "m.jsonl")
    done = run("view", log)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "m.html"
    assert done.stdout == b"" and str(page).encode() in done.stderr
    data = data_of(page.read_bytes())
    assert data["viewer"] is None and data["start"] == len(data["diffs"]) - 1


def test_view_to_stdout_with_a_seat_and_a_start(tmp_path: Path) -> None:
    done = run("view", GOLDEN[1], "-o", "-", "--seat", "1", "--at", "4")
    assert done.returncode == 0 and done.stderr == b""
    data = data_of(done.stdout)
    assert data["viewer"] == 1 and data["start"] == 4
    assert not list(tmp_path.iterdir())


def test_view_names_the_output_file(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert run("view", GOLDEN[2], "-o", out).returncode == 0
    assert out.read_bytes().startswith(b"<!DOCTYPE html>")
    assert [p.name for p in tmp_path.iterdir()] == ["page.html"]  # no temporary file left


def test_usage_errors_are_one_line_exit_2_and_write_nothing(tmp_path: Path) -> None:
    junk = tmp_path / "junk.blog"
    junk.write_bytes(b"not a log at all")
    cases = [
        ("view", GOLDEN[0], "--seat", "7", "-o", tmp_path / "a.html"),
        ("view", GOLDEN[0], "--at", "100000", "-o", tmp_path / "a.html"),
        ("view", tmp_path / "missing.blog", "-o", tmp_path / "a.html"),
        ("view", junk, "-o", tmp_path / "a.html"),
        ("view", GOLDEN[0], "-o", "-", "--open"),
    ]
    for args in cases:
        done = run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stdout == b""
        assert done.stderr.count(b"\n") == 1 and b"Traceback" not in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["junk.blog"]


def test_an_illegal_log_still_gets_its_page_and_a_note(tmp_path: Path) -> None:
    from tests.brokenlogs import match, with_illegal_discard, write

    events, bad = with_illegal_discard(match("biriba", 4, seed=3))
    log = write(tmp_path / "bad.blog", events)
    done = run("view", log)
    assert done.returncode == 1  # the page is written, and the finding is the exit status
    assert f"seq {bad} is illegal".encode() in done.stderr
    data = data_of((tmp_path / "bad.html").read_bytes())
    assert data["banners"][0]["seq"] == bad and data["start"] == bad - 1


def _fake_browser(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "opened.txt"
    script = tmp_path / "fake-browser"
    script.write_text(f'#!/bin/sh\necho "$1" > {marker}\n')
    script.chmod(0o755)
    return script, marker


def run_env(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)],
                          capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={"PYTHONPATH": str(Path(__file__).parents[2]),
                               "PATH": "/usr/bin:/bin", **env})


def test_open_starts_the_browser_named_by_BROWSER_when_there_is_a_display(
        tmp_path: Path) -> None:
    script, marker = _fake_browser(tmp_path)
    out = tmp_path / "page.html"
    done = run_env({"DISPLAY": ":99", "BROWSER": str(script)}, "view", GOLDEN[0], "-o", out,
                   "--open")
    assert done.returncode == 0, done.stderr
    assert marker.read_text().strip() == out.resolve().as_uri()
    assert b"not opening" not in done.stderr


def test_open_starts_no_browser_without_a_display_in_ci_or_under_tests(tmp_path: Path) -> None:
    script, marker = _fake_browser(tmp_path)
    cases = [({}, b"no display"), ({"DISPLAY": ":99", "CI": "true"}, b"running in CI")]
    for env, why in cases:
        out = tmp_path / "page.html"
        done = run_env({"BROWSER": str(script), **env}, "view", GOLDEN[0], "-o", out, "--open")
        assert done.returncode == 0, done.stderr
        assert why in done.stderr and out.resolve().as_uri().encode() in done.stderr
        assert out.exists() and not marker.exists()
        out.unlink()


def test_audit_html_writes_the_page_opened_at_the_first_finding(tmp_path: Path) -> None:
    from tests.brokenlogs import match, with_illegal_discard, with_wrong_score, write

    events, bad = with_illegal_discard(match("biriba", 4, seed=3))
    log = write(tmp_path / "bad.blog", events)
    page = tmp_path / "bad.html"
    done = run("audit", log, "--html", page)
    assert done.returncode == 1 and b"illegal" in done.stdout.lower()
    assert f"opens at seq {bad - 1}".encode() in done.stderr
    data = data_of(page.read_bytes())
    assert data["start"] == bad - 1 and data["banners"][0]["kind"] == "illegal"

    events, wrong = with_wrong_score(match("biriba", 2, seed=4, max_hands=2))
    log = write(tmp_path / "score.blog", events)
    done = run("audit", log, "--html", page)
    assert done.returncode == 1
    data = data_of(page.read_bytes())
    assert data["start"] == wrong and data["banners"][0]["kind"] == "score"

    assert data["marks"][str(wrong)][0]["kind"] == "finding"

    forged = Path(__file__).parents[2] / "examples" / "disputes" / "forged-deal.log"
    done = run("audit", forged, "--html", page)
    assert done.returncode == 1
    data = data_of(page.read_bytes())
    assert data["start"] == 1 and data["banners"] == []  # a finding the table cannot show
    assert data["marks"]["1"][0]["text"].startswith("[deal.mismatch] ")

    done = run("audit", GOLDEN[0], "--html", page)
    assert done.returncode == 0
    data = data_of(page.read_bytes())
    assert data["start"] == len(data["diffs"]) - 1 and data["banners"] == []
    assert data["marks"] == {}


def test_audit_html_needs_one_log_and_a_file(tmp_path: Path) -> None:
    for args in (("audit", GOLDEN[0].parent, "--html", tmp_path / "p.html"),
                 ("audit", GOLDEN[0], GOLDEN[1], "--html", tmp_path / "p.html"),
                 ("audit", GOLDEN[0], "--html", tmp_path)):
        done = run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stdout == b"" and done.stderr.count(b"\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_page_written_to_a_fifo_or_device_goes_into_it_and_leaves_it_in_place(
        tmp_path: Path) -> None:
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    done = run("view", GOLDEN[0], "-o", fifo)
    reader.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # not renamed over by a regular file
    assert got, "the page never reached the FIFO"
    assert data_of(got[0])["viewer"] is None
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temporary file left


def test_why_not_open_names_each_reason_and_allows_a_display_or_a_desktop_system() -> None:
    from cli.view_cmd import why_not_open

    display = {"DISPLAY": ":0"}
    assert why_not_open(display, "linux") is None
    assert why_not_open({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert why_not_open({}, "darwin") is None and why_not_open({}, "win32") is None
    assert why_not_open({}, "linux") == "no display"
    assert why_not_open({}, "freebsd14") == "no display"
    assert why_not_open({**display, "CI": "true"}, "linux") == "running in CI"
    assert why_not_open({"CI": "1"}, "darwin") == "running in CI"
    assert why_not_open({**display, "PYTEST_CURRENT_TEST": "t"}, "linux") == \
        "running under a test"
    assert why_not_open({**display, "BURACO_LOG_NO_BROWSER": "1"}, "linux") == \
        "BURACO_LOG_NO_BROWSER is set"


def test_a_log_with_no_events_yet_has_no_page_and_says_why(tmp_path: Path) -> None:
    from buraco_log.log import write_log

    empty = tmp_path / "empty.blog"
    write_log(str(empty), [], sealed=False, validate=False)
    done = run("view", empty)
    assert done.returncode == 2 and b"no events yet" in done.stderr
    assert done.stderr.count(b"\n") == 1 and [p.name for p in tmp_path.iterdir()] == [
        "empty.blog"]
