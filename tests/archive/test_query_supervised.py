"""The query process is watched by its parent (cli.supervise): glibc's own abort when a thread
cannot get its thread-local data at the memory bound becomes the command's one line and exit
1, signals sent to the command reach the query, and what it was writing is removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.archive.conftest import Archived

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is Linux")


def _script(body: str, tmp: Path) -> subprocess.Popen[str]:
    code = textwrap.dedent(f"""
        import os, sys, time
        from pathlib import Path
        from cli.supervise import supervised
        tmp = Path({str(tmp)!r})
        supervised(lambda: print("buraco-log: error: said our way", file=sys.stderr),
                   lambda pid: [tmp / f"part.{{pid}}"])
        (tmp / f"part.{{os.getpid()}}").write_text("half")
        (tmp / "child").write_text(str(os.getpid()))
    """) + textwrap.dedent(body)
    return subprocess.Popen([sys.executable, "-c", code], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_native_abort_becomes_the_commands_line_and_exit_1(tmp_path: Path) -> None:
    p = _script("""
        print("rows so far", flush=True)
        sys.stderr.write("a warning first\\n"); sys.stderr.flush()
        os.write(2, b"cannot allocate memory for thread-local data: ABORT\\n")
        os._exit(127)
    """, tmp_path)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1
    assert out == "rows so far\n"
    assert err.splitlines() == ["a warning first", "buraco-log: error: said our way"]
    assert list(tmp_path.glob("part.*")) == []  # what the child was writing is gone


def test_the_childs_exit_status_and_stderr_pass_through(tmp_path: Path) -> None:
    p = _script("""
        sys.stderr.write("no newline at the end")
        sys.exit(3)
    """, tmp_path)
    out, err = p.communicate(timeout=60)
    assert (p.returncode, out, err) == (3, "", "no newline at the end")
    assert len(list(tmp_path.glob("part.*"))) == 1  # a normal end removes nothing


def test_a_signal_sent_to_the_command_reaches_the_child(tmp_path: Path) -> None:
    p = _script("time.sleep(60)", tmp_path)
    deadline = time.monotonic() + 30
    while not (tmp_path / "child").exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child = int((tmp_path / "child").read_text())
    assert child != p.pid
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert p.returncode == -signal.SIGTERM and err == ""
    assert list(tmp_path.glob("part.*")) == []
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_a_query_killed_while_writing_its_output_leaves_no_temporary_file(
        archived: Archived, tmp_path: Path) -> None:
    out = tmp_path / "rows.csv"
    p = subprocess.Popen([sys.executable, "-m", "cli.main", "query", str(archived.path),
                          "SELECT hash(range) AS h FROM range(100000000000)", "-f", "csv", "-o",
                          str(out)], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".rows.csv.*.tmp")):  # the query has begun writing
        assert p.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0 and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == []
