"""Fault probes, round 39, of what query and report write: `query -o` and `report -o` on a
full disk (a tiny tmpfs where this user may mount one, and a file size limit everywhere) are
one line naming the file, exit 1, and leave no file, whole or partial, nor an HTML report's
folder of match pages; and a local `report` cut by SIGINT or SIGTERM while DuckDB runs one of
its queries. Real processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.archive.conftest import Archived
from tests.archive.query_started import QUERY_STARTED, wait_for
from tests.command_line import sigint_default

ROOT = Path(__file__).resolve().parents[2]

# 50,000 rows of incompressible text: megabytes in every format, under the table's limit
ROWS = "SELECT range AS n, md5(range::VARCHAR) AS h FROM range(50000)"

# The command under a file size limit: a write past it fails with EFBIG, as a full disk does
# with ENOSPC, for a user who may not mount a file system.
LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


def run(*args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    prefix = ["-c", LIMITED, str(limit)] if limit is not None else ["-m", "cli.main"]
    return subprocess.run([sys.executable, *prefix, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False, stdin=subprocess.DEVNULL)


@pytest.fixture
def full(tmp_path: Path) -> Iterator[Path]:
    """A directory on a 64 KiB tmpfs, nearly full (skipped where it cannot be mounted)."""
    d = tmp_path / "full"
    d.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(d)],
                       capture_output=True, check=False)
    if r.returncode != 0:
        pytest.skip("no tmpfs can be mounted here (not root): the file size limit stands in")
    try:
        (d / "fill").write_bytes(b"\0" * 40_000)
        yield d
    finally:
        subprocess.run(["umount", str(d)], check=False)


def left_in(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name != "fill")


def one_line(r: subprocess.CompletedProcess[str], lead: str, reason: str) -> None:
    assert r.returncode == 1 and "Traceback" not in r.stderr, (r.returncode, r.stderr[-800:])
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"buraco-log: error: {lead}"), \
        r.stderr
    assert reason in r.stderr, r.stderr


@pytest.mark.parametrize("fmt", ["parquet", *(pytest.param(f, marks=pytest.mark.slow)
                                             for f in ("csv", "json", "jsonl", "table"))])
def test_query_output_on_a_full_disk_is_one_line_naming_it_and_no_file(
        archived: Archived, full: Path, fmt: str) -> None:
    """Before: "buraco-log: error: No space left on device" (which file?), and for parquet
    Arrow's "Error writing bytes to file. Detail: [errno 28] ..."."""
    out = full / f"out.{fmt}"
    r = run("query", str(archived.path), ROWS, "-f", fmt, "-o", str(out))
    one_line(r, f"query: cannot write {out}: ", "No space left on device; nothing was written")
    assert left_in(full) == []


@pytest.mark.parametrize("fmt", ["jsonl", pytest.param("parquet", marks=pytest.mark.slow)])
def test_query_output_past_a_file_size_limit_is_one_line_naming_it_and_no_file(
        archived: Archived, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"out.{fmt}"
    r = run("query", str(archived.path), ROWS, "-f", fmt, "-o", str(out), limit=100_000)
    one_line(r, f"query: cannot write {out}: ", "File too large; nothing was written")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_report_html_on_a_full_disk_leaves_no_folder_of_match_pages(archived: Archived,
                                                                     full: Path) -> None:
    """Before: one line naming a match page, and a matches/ folder left with no report."""
    out = full / "report.html"
    r = run("report", str(archived.path), "-f", "html", "-o", str(out))
    one_line(r, "report: cannot write ", f"No space left on device; nothing was written to {out}")
    assert left_in(full) == []


@pytest.mark.slow
def test_report_json_on_a_full_disk_is_one_line_naming_it(archived: Archived,
                                                          full: Path) -> None:
    (full / "more").write_bytes(b"\0" * 20_000)  # the JSON report is a few kB
    out = full / "report.json"
    r = run("report", str(archived.path), "-f", "json", "-o", str(out))
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert f"report: cannot write {out}: No space left on device" in r.stderr, r.stderr
    assert left_in(full) == ["more"]


# The real report, with one canned query first that runs until a signal stops it; a marker
# file says when that query is about to start.
SLOW_REPORT = """
import importlib, pathlib, sys
report = importlib.import_module("buraco_log.archive.report")  # the module, not its function
marker = pathlib.Path(sys.argv[1])
report.CANNED = {"slow": ("slow", "SELECT count(*) AS n FROM range(1000000000000) a, range(10) b"),
                 **report.CANNED}
real = report.run_canned
def run_canned(con, name):
    if name == "slow":
        marker.touch()
    return real(con, name)
report.run_canned = run_canned
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


@pytest.mark.parametrize(("sig", "code", "said", "fmt"), [
    (signal.SIGINT, 130, "interrupted", "html"),
    pytest.param(signal.SIGTERM, 143, "terminated (SIGTERM)", "json", marks=pytest.mark.slow),
])
def test_a_local_report_cut_by_a_signal_is_one_line_and_writes_nothing(
        archived: Archived, tmp_path: Path, sig: int, code: int, said: str, fmt: str) -> None:
    """The guard of round 38, with DuckDB running one of the report's queries when the signal
    comes: the handler interrupts DuckDB as well as raising KeyboardInterrupt, which DuckDB
    dropped (its interrupt is a duckdb.Error, which report turns into an ArchiveError)."""
    marker, out = tmp_path / "running", tmp_path / f"report.{fmt}"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_REPORT, str(marker), "report",
                             str(archived.path), "-f", fmt, "-o", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, preexec_fn=sigint_default)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        time.sleep(0.3)  # inside DuckDB by now
        proc.send_signal(sig)
        # before: DuckDB dropped the KeyboardInterrupt 7 times in 8, and ran on for ever
        stdout, stderr = proc.communicate(timeout=15)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == code, stderr
    assert stderr == f"buraco-log: error: report: {said}; nothing was written to {out}\n"
    if fmt == "json":  # the error object on stdout, as every failure of -f json gives it
        error = json.loads(stdout)["error"]
        assert (error["exit_status"], said in error["message"]) == (code, True), stdout
    else:
        assert stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["running"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGINT,
                                                              marks=pytest.mark.slow)])
def test_a_signal_stops_a_long_query_at_once_not_at_its_time_limit(
        archived: Archived, tmp_path: Path, sig: int) -> None:
    """Before: the query went on until its time limit (60 s by default) 5 times in 6, and
    only then said it was terminated."""
    marker, folder = tmp_path / "opened", tmp_path / "out"
    folder.mkdir()
    out = folder / "n.csv"
    proc = subprocess.Popen([sys.executable, "-c", QUERY_STARTED, str(marker), "query",
                             str(archived.path),
                             "SELECT count(*) AS n FROM range(1000000000000) a, range(10) b",
                             "-f", "csv", "-o", str(out), "--timeout", "60"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, preexec_fn=sigint_default)
    try:
        wait_for(marker, proc)
        time.sleep(0.3)  # inside DuckDB by now (the query runs for a minute)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(sig)
        t = time.monotonic()
        _stdout, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - t
    finally:
        proc.kill()
        proc.wait()
    said = "interrupted" if sig == signal.SIGINT else "terminated (SIGTERM)"
    assert proc.returncode == 128 + sig, stderr
    assert stderr == f"buraco-log: error: query: {said}; nothing was written to {out}\n"
    assert took < 10, f"the query ran {took:.1f} s after the signal"
    assert list(folder.iterdir()) == []
