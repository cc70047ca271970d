"""Fault probes of the CLI (round 42).

The worker pools: a worker killed mid-run said only "while auditing 600 logs", and one killed
while it sent its results hung the run for ever (`ingest -j 2`: the pool's manager thread
waited for the rest of half a message, the other worker for the pipe's lock the dead one
held)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.audit.pool import died_line, working_on

ROOT = Path(__file__).resolve().parents[2]

_LINUX = pytest.mark.skipif(not Path("/proc/self/task").is_dir(),
                            reason="no /proc: the probes find the workers there")

# Two workers: one on b.blog until the other, on a.blog, is SIGKILLed; with ``half`` the dead
# one first leaves half a result in the result pipe, holding the pipe's lock, as a worker
# killed while it sends its result does.
_POOL_SCRIPT = r'''
import os, signal, struct, sys, time
from pathlib import Path
from buraco_log.audit.pool import WorkerDied, worker_pool, working_on

def slow(flag):
    with working_on("b.blog"):
        Path(flag).touch()
        time.sleep(60)

def killed(flag, half):
    while not os.path.exists(flag):
        time.sleep(0.01)
    with working_on("a.blog"):
        if half:
            frame = sys._getframe()
            while "result_queue" not in frame.f_locals:  # the worker loop's own queue
                frame = frame.f_back
            queue = frame.f_locals["result_queue"]
            queue._wlock.acquire()
            queue._writer._send(struct.pack("!i", 1 << 20) + b"\x80\x05 half")
        os.kill(os.getpid(), signal.SIGKILL)

for half in (False, True):
    flag = os.path.join(sys.argv[1], f"started-{half}")
    start = time.monotonic()
    try:
        with worker_pool(2, "testing", "the rest stays") as pool:
            futures = [pool.submit(slow, flag), pool.submit(killed, flag, half)]
            for f in futures:
                f.result()
        print("no error")
    except WorkerDied as exc:
        print(f"{time.monotonic() - start:.1f} {exc}")
'''


@_LINUX
def test_a_killed_worker_is_named_by_its_log_and_one_killed_mid_result_ends(
        tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", _POOL_SCRIPT, str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 2, lines
    for line in lines:
        seconds, message = line.split(" ", 1)
        assert float(seconds) < 10, line  # not the 60 s the other worker sleeps, nor for ever
        assert message == ("a worker process ended abruptly (killed, or out of memory) while "
                           "testing: it was on a.blog (b.blog was cut short with it); the rest "
                           "stays; -j 1 works in this process"), line


def test_the_line_names_the_dead_workers_log_and_counts_past_three() -> None:
    held = [(1, "a.blog"), (2, "b.blog"), (3, "c.blog"), (4, "d.blog"), (5, "e.blog")]
    codes = {1: -15, 2: -9, 3: -15, 4: -15, 5: None}  # None: still running after 5 s
    assert died_line("x", "", held, codes) == (
        "a worker process ended abruptly (killed, or out of memory) while x: it was on b.blog "
        "(a.blog, c.blog, d.blog and 1 more were cut short with it); -j 1 works in this "
        "process")
    assert died_line("x", "y", [(1, "a.blog")], {1: -15, 2: -9}) == (
        "a worker process ended abruptly (killed, or out of memory) while x: it was between "
        "logs (a.blog was cut short with it); y; -j 1 works in this process")
    assert died_line("x", "y", [], {2: -9}).endswith("while x; y; -j 1 works in this process")


def test_working_on_outside_a_pool_worker_does_nothing() -> None:
    with working_on("a.blog"):
        pass  # no board in this process: nothing written, nothing raised



@pytest.mark.slow
@_LINUX
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the work runs in one process")
def test_ingest_with_a_worker_killed_at_any_moment_ends_with_one_line(tmp_path: Path) -> None:
    """`ingest -j 2` with a worker SIGKILLed 0.3-0.9 s in hung about one run in three (the
    worker was sending its chunk's tables). Each run now ends: one line, exit 1."""
    import signal
    import time

    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(30):  # distinct bytes, so that every file is checked, not a copy
        for f in sorted((ROOT / "examples" / "sim").glob("*.blog")):
            (logs / f"{i:02d}-{f.name}").write_bytes(f.read_bytes() + b"\0" * i)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for k in range(8):
        proc = subprocess.Popen([sys.executable, "-m", "cli", "ingest", str(logs), "-a",
                                 str(tmp_path / f"a{k}"), "-j", "2"], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            kids: list[str] = []
            while len(kids) < 2 and proc.poll() is None:
                time.sleep(0.02)
                kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            time.sleep(0.3 + 0.1 * (k % 7))
            try:
                os.kill(int(kids[0]), signal.SIGKILL)
            except (ProcessLookupError, IndexError):
                continue  # the run was over
            _out, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        if proc.returncode == 0:
            continue  # the worker had just finished its last chunk
        lines = stderr.splitlines()
        assert proc.returncode == 1 and len(lines) == 1, (k, stderr)
        assert "worker process ended abruptly" in lines[0] and "checking logs" in lines[0]
