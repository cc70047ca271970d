"""Fault probes, outputs: a command's output path is hostile (the log being read, a missing
directory, a directory). Real subprocesses with a timeout, so a hang fails instead of blocking.

The promises (docs/cli.md, Conventions): one line on stderr naming the file, a non-zero exit,
nothing lost or half-written, an input never modified by a command that only reads it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.cli.outputs import EXE, GOOD, GOOD_JSONL, assert_error, copy, run

pytestmark = pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the output is the log being read: the log must survive ----------------------------------------


@pytest.mark.parametrize("spelling", ["same", "symlink", "hardlink"])
def test_view_onto_its_own_log_refuses_and_keeps_the_log(tmp_path: Path, spelling: str) -> None:
    log = copy(GOOD, tmp_path)
    before = digest(log)
    out = {"same": log, "symlink": tmp_path / "link.html", "hardlink": tmp_path / "hard.html"}
    if spelling == "symlink":
        out["symlink"].symlink_to(log.name)
    elif spelling == "hardlink":
        os.link(log, out["hardlink"])
    r = run("view", log, "-o", out[spelling])
    assert_error(r, 2, str(out[spelling]), "log being read")
    assert digest(log) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        {log.name, out[spelling].name}), "a temporary file was left behind"


def test_view_default_page_of_a_log_named_html_keeps_the_log(tmp_path: Path) -> None:
    # the default page is the log's name with .html: for LOG.html that is the log itself
    log = copy(GOOD, tmp_path, "match.html")
    before = digest(log)
    assert_error(run("view", log), 2, str(log), "log being read")
    assert digest(log) == before


def test_audit_html_onto_its_own_log_refuses_and_keeps_the_log(tmp_path: Path) -> None:
    log = copy(GOOD, tmp_path)
    before = digest(log)
    assert_error(run("audit", log, "--html", log), 2, str(log), "log being read")
    assert digest(log) == before


def test_review_onto_its_own_log_refuses_before_searching(tmp_path: Path) -> None:
    log = copy(GOOD_JSONL, tmp_path)
    before = digest(log)
    # a budget that would take minutes: the refusal must come first, well inside the timeout
    r = run("review", log, "--seat", "0", "--budget", "5000x20r0", "-o", log, "-f", "json",
            timeout=30)
    assert_error(r, 2, str(log), "log being read", json_out=True)
    assert digest(log) == before


def test_review_into_a_directory_refuses_before_searching(tmp_path: Path) -> None:
    r = run("review", GOOD_JSONL, "--seat", "0", "--budget", "5000x20r0", "-o", tmp_path,
            timeout=30)
    assert_error(r, 2, str(tmp_path), "directory")


# -- an output in a missing directory: named as asked, not by its temporary file -----------------


@pytest.mark.parametrize("argv", [
    ["view", str(GOOD), "-o"],
    ["review", str(GOOD_JSONL), "--seat", "0", "--budget", "2x1r0", "-o"],
    ["audit", str(GOOD), "--html"],
])
def test_an_output_in_a_missing_directory_names_the_output(tmp_path: Path,
                                                           argv: list[str]) -> None:
    target = tmp_path / "missing" / "page.html"
    line = assert_error(run(*argv, target), 2, str(target), "no such directory")
    assert ".tmp" not in line, line
    assert not (tmp_path / "missing").exists()


# -- an output that cannot be written, with --format json: one JSON error, never two documents ---


@pytest.mark.parametrize("page", ["/proc/page.html", "missing/page.html"])
def test_audit_json_with_an_unwritable_page_gives_one_json_error(tmp_path: Path,
                                                                 page: str) -> None:
    """The page is written before the report: stdout is the error object alone (it used to be
    the verdict followed by a second document, or no JSON at all), naming the page."""
    import json

    r = run("audit", "-f", "json", "--html", page, GOOD_JSONL, cwd=tmp_path)
    assert_error(r, 2, page, json_out=True)
    error = json.loads(r.out)["error"]  # one document: a second one fails to parse
    assert page in error["message"] and ".tmp" not in error["message"], error
    assert list(tmp_path.iterdir()) == []


def test_simulate_into_a_file_names_it_as_not_a_directory(tmp_path: Path) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("kept")
    r = run("simulate", "--matches", "1", "--no-progress", "-o", taken)
    assert_error(r, 2, str(taken), "not a directory")
    assert taken.read_text() == "kept"


def test_a_log_with_no_whole_header_is_not_started_and_repair_says_the_same(
        tmp_path: Path) -> None:
    """The note says what to do (delete the file), and it is what repair says too."""
    cut = tmp_path / "cut.blog"
    cut.write_bytes(GOOD.read_bytes()[:7])
    audit = run("audit", cut)
    assert audit.code == 0 and "NOT STARTED" in audit.out and "delete the file" in audit.out
    assert "deletes it" not in audit.out, audit.out
    # exit 2: nothing to repair in a match not started (it said "the file header itself is
    # incomplete", exit 1)
    assert_error(run("repair", "--force", cut), 2, "a match not started", "delete the file")
    assert cut.read_bytes() == GOOD.read_bytes()[:7]


# -- the output is another match log: a page or a report never replaces a log -----------------


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("archive")
    r = run("ingest", GOOD_JSONL, "--archive", root / "a", timeout=300)
    assert r.code == 0, r
    return root / "a"


@pytest.mark.parametrize("kept", [GOOD, GOOD_JSONL], ids=["binary", "jsonl"])
@pytest.mark.parametrize("command", ["view", "audit", "review", "query", "report",
                                     "report-json"])
def test_a_page_or_report_onto_another_match_log_refuses_and_keeps_it(
        tmp_path: Path, archive: Path, kept: Path, command: str) -> None:
    other = copy(kept, tmp_path / "logs", "other" + kept.suffix)
    before = digest(other)
    source = copy(GOOD_JSONL, tmp_path, "match.jsonl")
    args: dict[str, tuple[object, ...]] = {
        "view": ("view", source, "-o", other),
        "audit": ("audit", source, "--html", other),
        "review": ("review", source, "--seat", "0", "--budget", "2", "-o", other),
        "query": ("query", archive, "SELECT 1 AS x", "-o", other),
        "report": ("report", archive, "-o", other),
        "report-json": ("report", archive, "-f", "json", "-o", other),
    }
    r = run(*args[command], timeout=300)
    assert_error(r, 2, f"{other}: holds a match log", "name another file",
                 json_out=command == "report-json")
    assert digest(other) == before


def test_a_page_replaces_a_file_that_is_not_a_log(tmp_path: Path) -> None:
    page = tmp_path / "match.html"
    page.write_text("an older page\n")
    r = run("view", GOOD_JSONL, "-o", page)
    assert r.code == 0, r
    assert page.read_text().startswith("<!DOCTYPE html>")
    r = run("view", GOOD_JSONL, "-o", page)  # again: the page it wrote is replaced
    assert r.code == 0, r
