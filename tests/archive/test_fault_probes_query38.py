"""Fault probes, round 38: Ctrl-C (SIGINT) and SIGTERM, to the command alone and to its process
group, during a long local `query` writing ``-o FILE``: one line, 130 or 143, no file, no
temporary file, no process left. Before, SIGINT said "internal error: RuntimeError: Query
interrupted" (exit 1: DuckDB turned the KeyboardInterrupt into that), and SIGTERM killed the
query without a word (status -15)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.archive.conftest import Archived

ROOT = Path(__file__).resolve().parents[2]
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is Linux")
# one row in a thousand: the first batch of rows (10,000), read before the output is opened,
# comes within a second; one in a million took minutes, and no temporary ever appeared
SLOW = "SELECT hash(range) AS h FROM range(100000000000) WHERE hash(range) % 1000 = 0"


def _default_sigint() -> None:
    # a process started in the background inherits SIGINT ignored: Ctrl-C must reach it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@LINUX
@pytest.mark.slow  # each query burns CPU until the signal comes
@pytest.mark.parametrize("fmt", ["parquet"])
@pytest.mark.parametrize("group", [False, True], ids=["alone", "group"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_signal_mid_query_ends_it_in_one_line_with_no_file(
        archived: Archived, tmp_path: Path, sig: signal.Signals, group: bool, fmt: str) -> None:
    out = tmp_path / f"rows.{fmt}"
    p = subprocess.Popen([sys.executable, "-m", "cli.main", "query", str(archived.path), SLOW,
                          "--timeout", "0", "-f", fmt, "-o", str(out)], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=_default_sigint)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(f".rows.{fmt}.*.tmp")):  # the query has begun writing
        assert p.poll() is None and time.monotonic() < deadline, p.stderr
        time.sleep(0.05)
    time.sleep(0.3)
    if group:
        os.killpg(p.pid, sig)
    else:
        p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    how = "interrupted" if sig == signal.SIGINT else "terminated (SIGTERM)"
    assert (p.returncode, err) == (130 if sig == signal.SIGINT else 143,
                                   f"buraco-log: error: query: {how}; nothing was written "
                                   f"to {out}\n")
    assert os.listdir(tmp_path) == []
    left = subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True,
                          check=False)
    assert left.stdout == "", left.stdout  # the supervised child is gone too


@LINUX
@pytest.mark.slow
def test_ctrl_c_mid_query_on_stdout_is_one_line(archived: Archived) -> None:
    p = subprocess.Popen([sys.executable, "-m", "cli.main", "query", str(archived.path),
                          "SELECT count(*) FROM range(100000000000)", "--timeout", "0"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=_default_sigint)
    time.sleep(3)
    assert p.poll() is None
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert (p.returncode, out, err) == (130, "", "buraco-log: error: query: interrupted\n")


def test_a_statement_nested_too_deeply_gives_no_advice_the_sandbox_refuses(
        archived: Archived) -> None:
    """DuckDB said: Use "SET max_expression_depth TO x", which the sandbox refuses."""
    sql = "SELECT " + "(" * 1100 + "1" + ")" * 1100
    r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(archived.path), sql],
                       cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("buraco-log: error: query: Parser Error: the statement nests too "
                        "deeply (limit 1000 levels)\n"), r.stderr
