"""Fault probes, archive: Ctrl-C and SIGTERM at any moment of a `query`, a `report` and an
`ingest -j 2`, as an operator stops a runaway query of a trillion rows: every run ends within a
few seconds with one line and 130 (143 for SIGTERM), and leaves no process of its group behind.

The window found: `query` runs DuckDB in a forked child, the parent blocking the signals to
wait for them; blocking reaches the main thread only, and a signal that came while another
thread had them unblocked (numpy's OpenBLAS pool is one, until the fork stops it) ran Python's
handler in the parent after the fork. The parent said "error: interrupted" and exited 130; the
child ran the query on to its time limit, holding the caller's standard output open."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.command_line import sigint_default

ROOT = Path(__file__).resolve().parents[2]
ENDLESS = "SELECT count(*) FROM range(1000000000000)"
SAID = {signal.SIGINT: ("interrupted", 130), signal.SIGTERM: ("terminated (SIGTERM)", 143),
        signal.SIGHUP: ("hung up (SIGHUP)", 129)}

# The command line with the signal sent at the end of os.fork() in the parent, which blocked
# it, while a thread of the process (as a library's pool) still takes it: sent from C (a
# partial of os.kill) after logging's own after-fork hook, so no Python line of os.fork() runs
# its handler (one that does says it as "ignored", and is sent again by cli.signals); a sleep
# from C then gives the other thread time to take it.
IN_THE_FORK = """
import functools, logging, os, signal, sys, threading, time
threading.Thread(target=threading.Event().wait, daemon=True).start()
os.register_at_fork(after_in_parent=functools.partial(os.kill, os.getpid(), int(sys.argv[1])))
os.register_at_fork(after_in_parent=functools.partial(time.sleep, 0.2))  # the thread takes it
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.entry import run
run()
"""


def _ended(proc: subprocess.Popen[str], signum: int, within: float,
           early: bool = False, done: Callable[[], bool] = lambda: False) -> str:
    """The one line ``proc`` said, checked: its status for ``signum``, ended within ``within``
    seconds, nothing of its process group left running."""
    try:
        _, err = proc.communicate(timeout=within)
    except subprocess.TimeoutExpired:  # stdout still open: someone of the group runs on
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        raise AssertionError(f"still running {within} s after the signal: {err!r}") from None
    time.sleep(0.1)  # a child's exit after its parent's is not instantaneous
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        pass
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError(f"a process of the group outlived the command: {err!r}")
    how, status = SAID[signal.Signals(signum)]
    if early and (proc.returncode == -signum or "init_import_site" in err):
        return ""  # before the command's first line ran: the interpreter's own answer
    if proc.returncode == -signum and not err and done():
        return ""  # its work whole, the interpreter ending: Python's own default then
    lines = err.splitlines()
    assert proc.returncode == status, (proc.returncode, err)
    assert len(lines) == 1 and how in lines[0], err
    assert "Traceback" not in err
    return lines[0]


# The signal sent to the query's child the moment it exists, before its own handler: it is
# pending there until the child unblocks it.
IN_THE_CHILD = """
import os, sys
sig = int(sys.argv[1])
os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), sig))
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.entry import run
run()
"""


def _signals_default() -> None:
    # SIGHUP too: a test run started under `nohup` ignores it, and the command kept it so
    sigint_default()
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _in_the_fork(archive: Path, signum: int, wrapper: str = IN_THE_FORK) -> str:
    proc = subprocess.Popen([sys.executable, "-c", wrapper, str(int(signum)), "query",
                             str(archive), ENDLESS, "--timeout", "0"],
                            cwd=ROOT, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_signals_default)
    return _ended(proc, signum, 30)


def test_ctrl_c_while_query_forks_its_child_stops_both(three: Path) -> None:
    """Before: "buraco-log: error: interrupted" and 130 from the parent at once, and its child
    ran the query on (for ever, with --timeout 0), standard output open."""
    line = _in_the_fork(three, signal.SIGINT)
    assert line.startswith("buraco-log: error: ")


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("attempt", range(5))
def test_a_signal_while_query_forks_its_child_stops_both(three: Path, signum: int,
                                                        attempt: int) -> None:
    _in_the_fork(three, signum)


@pytest.mark.parametrize("signum", [signal.SIGTERM, pytest.param(signal.SIGHUP,
                                                                   marks=pytest.mark.slow)])
def test_sigterm_as_query_s_child_starts_is_said(three: Path, signum: int) -> None:
    """Before: the child, taken for one of the command's workers, died of it without a word,
    and the parent died of the same signal (-15, nothing on stderr)."""
    line = _in_the_fork(three, signum, IN_THE_CHILD)
    assert line.startswith("buraco-log: error: ")


# The command line, leaving a mark as the interpreter ends (its last exit hook): a signal
# sent after that met a process whose work was done and whose exit had begun, and one that
# came as the kernel ended it was not delivered at all (exit 0, 3 runs in 130 under load)
EXITING = """
import atexit, sys
mark = sys.argv[1]
atexit.register(lambda: open(mark, "w").close())
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.entry import run
run()
"""


def _after(delay: float, signum: int, args: list[str],
           done: Callable[[], bool] = lambda: False) -> str:
    mark = Path(tempfile.mkdtemp(prefix="exiting-")) / "mark"
    proc = subprocess.Popen([sys.executable, "-c", EXITING, str(mark), *args], cwd=ROOT,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=sigint_default)
    time.sleep(delay)
    if proc.poll() is not None:  # done before the signal: nothing to stop
        proc.communicate()
        return ""
    proc.send_signal(signum)
    exiting = mark.exists()  # looked at after the signal: it was sent after the mark, or later
    shutil.rmtree(mark.parent, ignore_errors=True)
    if exiting and done():  # ended by the kernel as it was, or by the signal: as whole
        proc.wait(timeout=10)
        if proc.returncode in (0, -signum):
            proc.communicate()  # its pipes closed
            return ""
    try:
        return _ended(proc, signum, 10, early=delay < 0.2, done=done)
    except AssertionError as exc:
        raise AssertionError(f"{signal.Signals(signum).name} {delay:.2f} s after the start: "
                             f"{exc}") from None


DELAYS = [i * 0.05 for i in range(61)]  # 0 to 3 s: before, across and after the fork


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_query_stops_for_a_signal_at_any_moment(three: Path, signum: int) -> None:
    for delay in DELAYS:
        _after(delay, signum, ["query", str(three), ENDLESS, "--timeout", "0"])


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_report_stops_for_a_signal_at_any_moment(three: Path, tmp_path: Path,
                                                 signum: int) -> None:
    for delay in DELAYS:
        out = tmp_path / f"r{delay:.2f}"
        _after(delay, signum, ["report", str(three), "--output", str(out)], out.exists)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ingest_with_two_workers_stops_for_a_signal_at_any_moment(
        three: Path, tmp_path: Path, signum: int) -> None:
    logs = sorted(str(p) for p in (three.parent / "logs").iterdir())
    for delay in DELAYS:
        target = tmp_path / f"a{delay:.2f}"
        _after(delay, signum, ["ingest", *logs, "--archive", str(target), "-j", "2"],
               lambda t=target: any((t / "_batches").glob("*")))


def _querying(session: int) -> bool:
    """Whether the query's forked child of ``session`` runs DuckDB (its threads started)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == session:
            continue
        try:
            stat = (entry / "stat").read_text()
            threads = (entry / "status").read_text().split("\nThreads:", 1)[1].split()[0]
        except (OSError, IndexError):  # ended meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[3]) == session and int(threads) > 1:
            return True
    return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_signal_at_a_few_moments_of_a_query(three: Path) -> None:
    """The sweep's small twin: once the query runs. It waited a fixed 1.6 s, which a loaded
    host's start (imports, the fork, DuckDB's connection) could outlast."""
    proc = subprocess.Popen([sys.executable, "-c", EXITING, os.devnull, "query", str(three),
                             ENDLESS, "--timeout", "0"], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=sigint_default)
    deadline = time.monotonic() + 60
    while not _querying(proc.pid):
        if proc.poll() is not None or time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"the query never ran: {proc.communicate()!r}")
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    assert _ended(proc, signal.SIGINT, 10) == "buraco-log: error: query: interrupted"


# The signal sent a moment after duckdb's native module starts loading (the command line
# imports it as it starts), from a thread: inside its initialisation, for some delay.
IN_THE_IMPORT = """
import importlib.abc, os, sys, threading
sig, delay = int(sys.argv[1]), float(sys.argv[2])
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in ("duckdb._duckdb", "_duckdb"):
            sys.meta_path.remove(self)
            threading.Timer(delay, os.kill, (os.getpid(), sig)).start()
sys.meta_path.insert(0, Hook())
sys.argv = ["buraco-log", *sys.argv[3:]]
from cli.entry import run
run()
"""


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_duckdb_loads_is_said(three: Path, signum: int) -> None:
    """Before: an abort ("Critical nanobind error", exit 134), an internal error
    ("ImportError: Encountered an error while initializing the extension"), or the signal
    swallowed and the query run to the end (exit 0), one run in two with delays of 1-3 ms."""
    for step in range(16):
        proc = subprocess.Popen([sys.executable, "-c", IN_THE_IMPORT, str(int(signum)),
                                 str(step * 0.0005), "query", str(three), "SELECT 1"],
                                cwd=ROOT, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=sigint_default)
        _ended(proc, signum, 30)


DROPPED = """
import os, signal, sys
import buraco_log.archive as archive
real = archive.report
def report(*args, **kwargs):
    done = real(*args, **kwargs)
    try:  # after the last query, its KeyboardInterrupt dropped on the way, as DuckDB may
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
    except KeyboardInterrupt:
        pass
    return done
archive.report = report
from cli.entry import run
sys.argv = ["buraco-log", *sys.argv[1:]]
run()
"""


def test_a_signal_whose_interrupt_was_dropped_still_stops_report(three: Path,
                                                                 tmp_path: Path) -> None:
    """A Ctrl-C whose KeyboardInterrupt was lost inside the report's queries ended `report` 0
    with its file written and nothing said; it is said, 130, and nothing is written."""
    out = tmp_path / "r.txt"
    r = subprocess.run([sys.executable, "-c", DROPPED, "report", str(three), "--output",
                        str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                       preexec_fn=sigint_default)
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert r.stderr == f"buraco-log: error: report: interrupted; nothing was written to {out}\n"
    assert not out.exists()
