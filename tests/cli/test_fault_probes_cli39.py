"""CLI fault probes, round 39: an output whose directory part is not a directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.probes import ROOT, cli, one_error_line


def _demo(out: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return cli("demo", "-o", out, cwd=cwd)


@pytest.mark.parametrize(("make", "says"), [
    (lambda p: p.write_text("x"), "is a file, not a directory"),
    (lambda p: os.mkfifo(p), "is a FIFO, not a directory"),
    (lambda p: os.symlink(p.parent / "gone", p), "is a symbolic link to"),
    (lambda p: None, "no such directory: "),  # as view, review, query... say it
])
def test_demo_names_why_its_output_has_no_directory(tmp_path: Path, make: object,
                                                    says: str) -> None:
    parent = tmp_path / "parent"
    make(parent)  # type: ignore[operator]
    before = sorted(os.listdir(tmp_path))
    line = one_error_line(_demo(parent / "x.blog", tmp_path), 2)
    # it said "no directory parent" of a file that was there, as if it were missing
    assert f"{parent}/x.blog: " in line and says in line, line
    assert sorted(os.listdir(tmp_path)) == before


# -- audit --continues: a resumed match against the log it goes on from ----------------------


def _audit(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return cli("audit", *args, cwd=cwd)


def _resumed(tmp_path: Path, bump: int) -> tuple[Path, Path, tuple[int, ...]]:
    from buraco_log import log
    from buraco_log.events import TotalsCarried
    from buraco_log.reducer import replay
    from buraco_log.rules import derive
    from tests.play import random_match

    events = random_match(derive("classic", target_score=5000), 2, 11, max_hands=3, eager=True)
    earlier = events[: replay(events).results[1].end_seq + 1]
    reached = tuple(replay(earlier).totals)
    carried = (reached[0] + bump, *reached[1:])
    a, b = tmp_path / "earlier.blog", tmp_path / "later.blog"
    log.write_log(a, earlier)
    log.write_log(b, [events[0], TotalsCarried(carried, seq=1)])
    return a, b, reached


def test_audit_continues_accepts_the_totals_reached(tmp_path: Path) -> None:
    a, b, _ = _resumed(tmp_path, 0)
    done = _audit(b, "--continues", a, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"continues   {a}: goes on from where it stopped" in done.stdout


def test_audit_continues_names_other_totals_with_their_seq(tmp_path: Path) -> None:
    a, b, reached = _resumed(tmp_path, 10)
    done = _audit(b, "--continues", a, "-f", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    import json

    [f] = json.loads(done.stdout)["findings"]
    assert f["rule"] == "continuation.totals" and f["seq"] == 1, f
    assert ", ".join(map(str, reached)) in f["message"]


@pytest.mark.parametrize(("args", "says"), [
    (["later.blog", "--continues", "gone.blog"], "--continues gone.blog: No such file"),
    (["later.blog", "--continues", "later.blog"], "is the log being audited"),
    (["later.blog", "earlier.blog", "--continues", "earlier.blog"], "name one log"),
    (["later.blog", "--continues", "notes.txt"], "--continues notes.txt: not a log"),
])
def test_audit_continues_refuses_what_it_cannot_check(tmp_path: Path, args: list[str],
                                                      says: str) -> None:
    _resumed(tmp_path, 0)
    (tmp_path / "notes.txt").write_text("hello\n")
    line = one_error_line(_audit(*args, cwd=tmp_path), 2)
    assert says in line, line


# -- SIGTERM ends every command as Ctrl-C does: one line, 143, nothing half-written ----------


def _stop_when(argv: list[str], ready: object, cwd: Path) -> tuple[int, str, str]:
    import signal
    import time

    child = subprocess.Popen([sys.executable, "-m", "cli", *argv], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=cwd,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        deadline = time.monotonic() + 90
        while not ready():  # type: ignore[operator]
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the command never got going"
            time.sleep(0.05)
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    return child.returncode, out, err


def test_sigterm_stops_simulate_with_one_line_and_whole_logs_only(tmp_path: Path) -> None:
    # it died of the signal (-15) without a word
    out_dir = tmp_path / "sims"
    code, out, err = _stop_when(
        ["simulate", "--matches", "5000", "-o", str(out_dir), "--jobs", "2"],
        lambda: out_dir.is_dir() and len(os.listdir(out_dir)) >= 3, tmp_path)
    assert code == 143 and err.count("\n") == 1 and err.startswith(  # names what stays
        f"buraco-log: error: {out_dir}: terminated (SIGTERM) while simulating 5,000 matches: "
    ), (code, err)
    assert out == ""  # no summary of a run cut short
    names = os.listdir(out_dir)
    assert names and all(n.endswith(".blog") and not n.startswith(".") for n in names), names
    from buraco_log.audit import read_log

    for n in names:  # each whole and sealed: a log cut short would read torn or broken
        events, integrity = read_log(out_dir / n)
        assert integrity.status == "sealed" and events, (n, integrity)



def _demo_capped(out: Path, cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``demo`` whose files may not grow past 4 KiB (a log is about 9): its write fails as on a
    full disk (EFBIG), without needing one."""
    import resource
    import signal

    def cap() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    return cli("demo", "-o", out, *extra, cwd=cwd, preexec_fn=cap)


def test_demo_that_cannot_write_its_log_leaves_nothing(tmp_path: Path) -> None:
    # written in place, a header alone was left behind as demo.blog
    out = tmp_path / "demo.blog"
    done = _demo_capped(out, tmp_path)
    line = one_error_line(done, 1)  # an output that cannot be written: 1, as view's page
    # named as every writer names it (since round 42: it quoted the temporary's byte and seq)
    assert line == f"buraco-log: error: {out}: writing the new file failed: File too large", line
    assert os.listdir(tmp_path) == []


def test_demo_overwrite_that_cannot_write_keeps_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "demo.blog"
    out.write_bytes(b"the old log\n")
    line = one_error_line(_demo_capped(out, tmp_path, "--overwrite"), 1)
    assert line == f"buraco-log: error: {out}: writing the new file failed: File too large", line
    assert out.read_bytes() == b"the old log\n" and os.listdir(tmp_path) == ["demo.blog"]


@pytest.mark.parametrize("argv", [
    ["view", "{log}", "-o"],
    ["audit", "{log}", "--html"],
    ["convert", "{log}", "-o"],
    ["review", "{log}", "--seat", "0", "--budget", "2x1r0", "--no-progress", "-o"],
])
def test_an_output_under_a_file_names_the_file(tmp_path: Path, argv: list[str]) -> None:
    # view, review and audit said "no such directory: afile", convert named it absolute
    log = Path(__file__).resolve().parents[2] / "examples" / "sim" / "classic-2p-000000.blog"
    (tmp_path / "afile").write_text("notes\n")
    args = [a.format(log=log) for a in argv] + ["afile/out.jsonl"]
    done = cli(*args, cwd=tmp_path)
    line = one_error_line(done, 2)
    assert line.endswith("afile/out.jsonl: afile is a file, not a directory"), line
    assert os.listdir(tmp_path) == ["afile"] and (tmp_path / "afile").read_text() == "notes\n"


def test_query_on_spark_refuses_a_memory_limit_it_would_ignore(tmp_path: Path) -> None:
    # Spark ran the query with its own memory, the limit silently unused
    done = cli("query", tmp_path, "SELECT 1", "--engine", "spark", "--memory-limit", "8GB",
               cwd=tmp_path)
    line = one_error_line(done, 2)
    assert "--memory-limit 8GB" in line and "spark.driver.memory" in line, line
