"""Fault probes, archive: a query's time limit and the wait at the readers' gate (a writer
waiting for a reader, and the command line, in processes of its own, asked for a short
limit)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import pty
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from buraco_log.archive import ingest, store
from cli.main import app
from tests.archive.conftest import Corpus
from tests.archive.readers import gate_held, writer_at_the_gate

ROOT = Path(__file__).resolve().parents[2]

def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cli", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def in_process(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stderr


@pytest.fixture
def site(two_batches: Path, tmp_path: Path) -> Path:
    shutil.copytree(two_batches, tmp_path / "site")
    return tmp_path / "site"


def test_a_query_and_a_report_waiting_at_the_gate_stop_within_their_time_limit(
        site: Path) -> None:
    """Before: the limit started after the gate: `--timeout 1` waited out compact's wait
    (up to 8 s), then ran and succeeded."""
    with writer_at_the_gate(site, 30.0):  # it ends when the reader goes, after these
        q = cli("query", str(site), "SELECT count(*) FROM matches", "--timeout", "1")
        r = cli("report", str(site), "--timeout", "1")
        took = _from_the_gate_to_the_end([q, r], site)
        (q_out, q_err), (r_out, r_err) = q.communicate(timeout=60), r.communicate(timeout=60)
        assert gate_held(site)  # the writer still waits: the limit, not the gate, ended them
    assert q.returncode == 1 and q_out == "", (q_out, q_err)
    assert q_err.strip() == ("buraco-log: error: query: stopped after the 1.0 s time limit "
                             "(waiting for a compact or drop to remove files)")
    assert r.returncode == 1 and r_out == "", (r_out, r_err)
    assert "report: stopped after the 1 s time limit (waiting for a compact" in r_err
    # 1 s each, and their end (1.8 to 4.4 s on a loaded host), not the gate's whole wait and
    # then the query (8 s and more). Timed from their arrival there: a loaded host took 8 to
    # 10 s from their start, past the 7.5 s this once allowed from it.
    assert max(took) < store.GATE_WAIT, took


def _from_the_gate_to_the_end(procs: list[subprocess.Popen[str]], site: Path) -> list[float]:
    """Each process's seconds from its opening the archive's readers' lock (on its way to
    the gate, where its limit starts) to its end; NaN if it was never seen holding it."""
    readers = str((site / store.READERS).resolve())
    came: dict[int, float] = {}
    took: dict[int, float] = {}
    deadline = time.monotonic() + 60
    while len(took) < len(procs):
        assert time.monotonic() < deadline, (came, took)
        for p in procs:
            if p.pid in took:
                continue
            if p.pid not in came and _holds(p.pid, readers):
                came[p.pid] = time.monotonic()
            if p.poll() is not None:
                took[p.pid] = time.monotonic() - came.get(p.pid, math.nan)
        time.sleep(0.005)
    return [took[p.pid] for p in procs]


def _holds(pid: int, path: str) -> bool:
    """Whether ``pid`` or a process it started (query's supervised child) has ``path`` open."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError), \
                    open(f"/proc/{name}/stat", "rb") as f:
                parents[int(name)] = int(f.read().rsplit(b")", 1)[1].split()[1])
    family, more = {pid}, True
    while more:
        more = False
        for child, parent in parents.items():
            if parent in family and child not in family:
                family.add(child)
                more = True
    for member in family:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{member}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{member}/fd/{fd}") == path:
                        return True
    return False


OLD = b"\n<!-- the report before -->\n"


def marked(folder: Path) -> dict[str, bool]:
    """Each page in ``folder``: whether it is the one written before (marked so)."""
    return {p.name: p.read_bytes().endswith(OLD) for p in folder.iterdir()}


def test_a_report_killed_while_writing_its_pages_leaves_the_old_report_whole(
        three: Path, tmp_path: Path) -> None:
    """Before: the pages were written over the old ones one by one: killed part-way, the
    folder held old and new pages mixed (and a reader saw such a mix while it ran)."""
    out = tmp_path / "r.html"
    assert in_process("report", str(three), "-f", "html", "-o", str(out)) == (0, "")
    folder = tmp_path / "matches"
    for p in [out, *folder.iterdir()]:
        p.write_bytes(p.read_bytes() + OLD)
    folder.chmod(0o750)  # kept private from others: the new folder must be too
    before = marked(folder)
    assert len(before) == 3 and all(before.values())

    again = cli("report", str(three), "-f", "html", "-o", str(out))
    deadline = time.monotonic() + 60
    while not (any(tmp_path.glob(".matches.*.new/*.html"))  # a new page written
               or not all(marked(folder).values())):
        assert again.poll() is None and time.monotonic() < deadline, again.communicate()
        time.sleep(0.002)
    again.kill()
    again.communicate()
    assert marked(folder) == before  # every old page, and no new one
    assert out.read_bytes().endswith(OLD)

    assert in_process("report", str(three), "-f", "html", "-o", str(out)) == (0, "")
    assert marked(folder) == dict.fromkeys(before, False)  # every page new
    assert not out.read_bytes().endswith(OLD)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matches", "r.html"]  # no leftover


def on_a_terminal(*args: str) -> tuple[str, str]:
    """The command line run with its standard error on a terminal (a pseudo-terminal, where
    the progress bar shows): its stdout, and the bar's last drawing."""
    main, side = pty.openpty()
    env = dict(os.environ, TERM="xterm", COLUMNS="240")
    p = subprocess.Popen([sys.executable, "-m", "cli", *args], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=side)
    os.close(side)
    drawn = b""
    with contextlib.suppress(OSError):  # EIO once the process closed its side
        while chunk := os.read(main, 65536):
            drawn += chunk
    os.close(main)
    out = p.communicate(timeout=60)[0].decode()
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn.decode(errors="replace"))
    bars = [line for line in re.split(r"[\r\n]+", shown) if line.startswith("ingest ")]
    assert bars, shown
    return out, bars[-1]


def test_the_ingest_bar_ends_on_the_counts_of_the_summary(corpus: Corpus,
                                                          tmp_path: Path) -> None:
    """Before: the bar said "1 refused" where the summary said "3 refused now" (the copies of
    a refused log were counted at the end), and nothing of the files skipped as already
    archived: a re-run of a year of logs showed "0 refused" and no word of 10,000 skipped."""
    logs = tmp_path / "logs"
    logs.mkdir()
    torn = logs / "torn.blog"
    torn.write_bytes(Path(corpus.good[0]).read_bytes()[:3000])
    for n in (2, 3):
        shutil.copy(torn, logs / f"torn{n}.blog")  # byte for byte: refused with it
    shutil.copy(corpus.good[1], logs / "a.blog")
    shutil.copy(corpus.good[1], logs / "a-copy.blog")  # a duplicate of a.blog
    before = tmp_path / "before"
    before.mkdir()
    shutil.copy(corpus.good[2], before / "b.blog")  # stored before: already stored now
    (before / "c.blog").write_bytes(Path(corpus.good[3]).read_bytes()[:2000])  # refused
    site = tmp_path / "site"
    first = ingest([str(before)], site, jobs=1)
    assert (first.added, len(first.errors)) == (1, 1)
    shutil.copytree(before, logs, dirs_exist_ok=True)

    out, bar = on_a_terminal("ingest", str(logs), "-a", str(site), "-j", "1", "-f", "json")
    got = json.loads(out)
    assert (got["already_stored"], got["duplicates"], got["known_errors"],
            len(got["errors"])) == (1, 1, 1, 3)
    assert re.search(r" 7/7 [\d,]+ events/s, 1 already stored, 1 duplicate, 1 refused "
                     r"before, 3 refused now ", bar), bar


# The command line under a file size limit: a write past it fails (EFBIG), as on a full disk.
LIMITED = r"""
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


def test_a_report_whose_pages_cannot_be_written_keeps_the_old_one_and_names_the_page(
        three: Path, tmp_path: Path) -> None:
    """The pages are written into a new folder first: a full disk there leaves the old report
    and pages whole, and the line names the page where it goes (not the new folder's name)."""
    out = tmp_path / "r.html"
    assert in_process("report", str(three), "-f", "html", "-o", str(out)) == (0, "")
    folder = tmp_path / "matches"
    before = {p.name: p.read_bytes() for p in [out, *folder.iterdir()]}
    small = min(len(b) for b in before.values()) // 2
    p = subprocess.run([sys.executable, "-c", LIMITED, str(small), "report", str(three), "-f",
                        "html", "-o", str(out)], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 1 and p.stdout == ""
    assert re.fullmatch(rf"buraco-log: error: report: cannot write {re.escape(str(folder))}/"
                        rf"[\w.-]+\.html: File too large; nothing was written to "
                        rf"{re.escape(str(out))}\n", p.stderr), p.stderr
    assert {p.name: p.read_bytes() for p in [out, *folder.iterdir()]} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matches", "r.html"]


def test_a_report_that_cannot_take_its_place_leaves_the_old_pages_in_theirs(
        three: Path, tmp_path: Path) -> None:
    """The pages go in just before the report's rename: when that rename fails (`-o` names a
    directory), the old folder is put back. Before: the new pages stayed, beside no report."""
    folder = tmp_path / "matches"
    folder.mkdir()
    (folder / "old.html").write_bytes(OLD)
    (tmp_path / "out").mkdir()
    code, err = in_process("report", str(three), "-f", "html", "-o", str(tmp_path / "out"))
    assert code == 2 and "Is a directory" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matches", "out"]
    assert [p.name for p in folder.iterdir()] == ["old.html"]
