"""``-j N`` where file descriptors are short (``ulimit -n 16``, a cron job's or a container's
limit): ``ingest``, ``review``, ``simulate`` and ``audit_many`` do the work in their own
process, as ``-j 1`` does, and say so in one note. Each stopped on "Too many open files" at
the start of its pool (``ingest`` and ``review`` blamed their input, exit 2) although ``-j 1``
worked. Slow-marked: a real subprocess each, under a real limit."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.command_line import REPO, run_all

GOLDEN = REPO / "tests" / "golden"
NOTE = ("buraco-log: note: worker processes could not be started (Too many open files): the "
        "logs are {} in this process, as with -j 1")


def _few_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))


def _start(args: list[object]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *map(str, args)], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_few_descriptors)


_AUDIT_MANY = """
import json, sys
from buraco_log import audit
said = []
verdicts = audit.audit_many(sys.argv[1:], workers=2, on_no_pool=lambda e: said.append(e.strerror))
print(json.dumps({"ok": [v.ok for v in verdicts], "said": said, "deaths": list(verdicts.deaths)}))
"""


@pytest.mark.slow
def test_pools_short_of_descriptors_work_in_their_own_process(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(8):
        (logs / f"m{i}.log").write_bytes((GOLDEN / "fair-thirteen.log").read_bytes())
    files = sorted(logs.iterdir())
    runs = [_start(["-m", "cli", "ingest", "-a", tmp_path / "arch", "-j", "2", "-f", "json",
                    logs]),
            _start(["-m", "cli", "review", GOLDEN / "fair-thirteen.log", "--seat", "0",
                    "--budget", "2", "-j", "2"]),
            _start(["-c", _AUDIT_MANY, *files]),
            _start(["-m", "cli", "simulate", "--matches", "3", "-j", "2", "-o",
                    tmp_path / "sim"])]
    (ingest_out, ingest_err), (review_out, review_err), (many_out, many_err), (_, sim_err) = (
        p.communicate(timeout=300) for p in runs)
    assert [p.returncode for p in runs] == [0, 0, 0, 0], (ingest_err, review_err, many_err,
                                                          sim_err)
    # it was "Too many open files", exit 1; the same files as one process makes them
    assert sim_err.splitlines() == [NOTE.format("played").replace("logs", "matches")]
    subprocess.run([sys.executable, "-m", "cli", "simulate", "--matches", "3", "-j", "1", "-o",
                    tmp_path / "sim1"], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                   capture_output=True, check=True, timeout=300)
    made = sorted(p.name for p in (tmp_path / "sim").iterdir())
    assert made == sorted(p.name for p in (tmp_path / "sim1").iterdir()) and len(made) == 3
    assert all((tmp_path / "sim" / n).read_bytes() == (tmp_path / "sim1" / n).read_bytes()
               for n in made)
    # it was "LOGS: Too many open files", exit 2, for ingest; "LOG: ..." for review
    assert ingest_err.splitlines() == [NOTE.format("checked")]
    report = json.loads(ingest_out)
    assert report["added"] == 1 and report["duplicates"] == 7 and report["jobs"] == 1
    alone = subprocess.run([sys.executable, "-m", "cli", "review", GOLDEN / "fair-thirteen.log",
                            "--seat", "0", "--budget", "2", "-j", "1"], cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                           text=True, timeout=300)
    assert review_out == alone.stdout  # the same review, whatever process searched it
    assert review_err.splitlines() == [NOTE.format("searched").replace("logs", "decisions")]
    many = json.loads(many_out)  # it was OSError out of audit_many
    assert many == {"ok": [True] * 8, "said": ["Too many open files"], "deaths": []}


# -- progress for a batch run off a terminal, and its exit status ---------------------------

def _folder(d: Path, *names: str) -> Path:
    d.mkdir()
    for i, name in enumerate(names):
        (d / f"m{i}.log").write_bytes((GOLDEN / name).read_bytes())
    return d


@pytest.mark.slow
def test_batch_commands_take_progress_as_lines_on_stderr_off_a_terminal(tmp_path: Path) -> None:
    logs = _folder(tmp_path / "logs", *["fair-thirteen.log"] * 12)
    runs = run_all(["audit", "-q", "--progress", logs], ["audit", "-q", logs],
                   ["ingest", "-a", tmp_path / "a1", "--progress", "-j", "1", logs],
                   ["audit", "-q", "--no-progress", logs],
                   ["verify", "--progress", *sorted(logs.iterdir())], checkout=True)
    assert [r.code for r in runs] == [0, 0, 0, 0, 0], [r.err for r in runs]
    audited, plain, ingested, none, verified = runs
    # `audit DIR` had no --progress: a cron job's log had no sign of life for an hour
    lines = audited.err.splitlines()
    assert lines[0] == "buraco-log: progress: audit: 0/12 logs (0%)"
    assert lines[-1].startswith("buraco-log: progress: audit: 12/12 logs (100%), ")
    assert all(line.startswith("buraco-log: progress: audit: ") for line in lines)
    assert "\r" not in audited.err and "\x1b" not in audited.err  # lines, not a bar
    assert audited.out == plain.out and plain.err == none.err == ""  # stdout: the data alone
    said = ingested.err.splitlines()
    assert said and all(line.startswith("buraco-log: progress: ingest: ") for line in said)
    assert said[-1].startswith("buraco-log: progress: ingest: 12/12 logs (100%)")
    assert verified.err.splitlines()[-1].startswith("buraco-log: progress: verify: 12/12 logs")
    assert verified.out.endswith("verified 12 logs: 12 whole, 0 damaged, 0 not read as a log\n")


@pytest.mark.slow
def test_a_batch_s_exit_status_tells_clean_findings_and_unreadable_apart(tmp_path: Path) -> None:
    clean = _folder(tmp_path / "clean", "fair-thirteen.log", "burako.log")
    # a changed record: a finding of audit and of verify (which checks no rule)
    found = _folder(tmp_path / "found", "fair-thirteen.log", "tampered.log")
    unread = _folder(tmp_path / "unread", "fair-thirteen.log", "tampered.log")
    (unread / "m2.blog").write_bytes(b"BLOG" + b"\x00" * 3)  # begins like a log, is none
    runs = run_all(*[["audit", "-q", "-f", "json", d] for d in (clean, found, unread)],
                   *[["verify", *sorted(d.iterdir())] for d in (clean, found, unread)],
                   checkout=True)
    assert [r.code for r in runs] == [0, 1, 2, 0, 1, 2], [r.err for r in runs]
    assert all("Traceback" not in r.err for r in runs)
