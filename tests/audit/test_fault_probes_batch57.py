"""A season audited at once: ``audit DIR`` of many logs writes each verdict as it is ready.

The batch was audited whole before its first line: a referee auditing a season's folder saw
nothing until the last log was done, a program reading ``-f json`` could not start, a Ctrl-C
part way left nothing at all, and every verdict was held to the end. The
command-line runs (a real subprocess each) are slow-marked."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import audit
from buraco_log.audit import stream
from tests import brokenlogs as bl
from tests.command_line import REPO, sigint_default


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log, and beside it the same match with an illegal discard (``illegal.blog``)."""
    d = tmp_path_factory.mktemp("good")
    events = bl.match("classic", 2, 1, max_hands=1)
    bl.write(d / "illegal.blog", bl.with_illegal_discard(events)[0])
    return bl.write(d / "good.blog", events)


def _season(d: Path, good: Path, n: int) -> list[Path]:
    """``n`` copies of one log, an illegal one among them, and an empty file at the end."""
    d.mkdir()
    out = []
    for i in range(n):
        out.append(d / f"m{i:04d}.blog")
        shutil.copyfile(good if i != n // 2 else good.with_name("illegal.blog"), out[-1])
    out.append(d / "zz-empty.blog")
    out[-1].write_bytes(b"")
    return out


def test_each_verdict_is_given_before_the_next_log_is_read(tmp_path: Path, good: Path) -> None:
    files = _season(tmp_path / "s", good, 3)
    verdicts = audit.audit_iter(files)
    first = next(verdicts)
    # the second log is read only when asked for: gone by then, it is said to be gone
    os.rename(files[1], tmp_path / "moved.blog")
    rest = list(verdicts)
    assert first.path == str(files[0]) and first.ok
    assert [v.path for v in rest] == [str(f) for f in files[1:]]
    assert rest[0].integrity.kind == "unreadable", rest[0].integrity


def test_pooled_blocks_give_audit_many_s_verdicts_in_order(tmp_path: Path, good: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    files = _season(tmp_path / "s", good, 8)
    monkeypatch.setattr(stream, "FIRST_BLOCK", 1)  # blocks of 2, 4, 8 logs: three pools
    monkeypatch.setattr(stream, "LAST_BLOCK", 4)
    deaths: list[tuple[str | None, int | None]] = []
    pooled = list(audit.audit_iter(files, workers=2, deaths=deaths))
    assert pooled == list(audit.audit_many(files))
    assert [v.path for v in pooled] == [str(f) for f in files] and not deaths
    assert [v.ok for v in pooled].count(False) == 1


def test_every_file_of_a_folder_is_audited_or_said_passed_over(tmp_path: Path,
                                                              good: Path) -> None:
    d = tmp_path / "season"
    _season(d, good, 2)
    (d / "week-1").mkdir()
    for name in ("README.txt", ".hidden.blog", "m0000.blog.bak", "week-1/scores.csv"):
        (d / name).write_text("not a log\n")
    every = sorted(str(p) for p in d.rglob("*") if p.is_file() and ".hidden" not in p.name
                   and not p.name.endswith(".bak"))  # a recorder's own files, repair's copies
    passed: list[str] = []
    found = audit.find_logs([d], passed=passed)
    assert sorted(found + passed) == every and len(found) == 3 and len(passed) == 2
    assert not set(found) & set(passed)


def _start(*args: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "cli.main", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200"),
                            preexec_fn=sigint_default)


_VERDICT = re.compile(r"^(\S.*): (OK|FINDINGS|NOT STARTED)")


@pytest.mark.slow
@pytest.mark.parametrize("form", ["table", "json"])
def test_a_log_is_read_after_the_first_verdict_is_out(tmp_path: Path, good: Path,
                                                      form: str) -> None:
    files = _season(tmp_path / "s", good, 200)
    p = _start("audit", tmp_path / "s", "-j", "1", "-f", form)
    assert p.stdout is not None
    first = p.stdout.readline()
    # the batch was audited whole before its first line: a log gone by now was found OK
    os.rename(files[-2], tmp_path / "moved.blog")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2, err[-500:]
    if form == "json":
        last = json.loads(first + out)[-2]
        assert (last["path"], last["integrity"]["kind"]) == (str(files[-2]), "unreadable")
    else:
        text = (first + out).decode()
        assert f"{files[-2]}: FINDINGS" in text and "No such file or directory" in text, text[-800:]


@pytest.mark.slow
@pytest.mark.parametrize("form", ["table", "json"])
def test_a_ctrl_c_part_way_leaves_whole_verdicts_in_order(tmp_path: Path, good: Path,
                                                         form: str) -> None:
    files = _season(tmp_path / "s", good, 3000)
    p = _start("audit", tmp_path / "s", "-j", "1", "-f", form)
    assert p.stdout is not None and p.stderr is not None
    first = p.stdout.readline()
    while form == "json" and not first.endswith(b"\n  },\n"):  # the first item, whole
        first += p.stdout.readline()
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    text = (first + out).decode()
    assert p.returncode == 130, (p.returncode, err[-500:])
    assert err.decode().splitlines()[-1] == "buraco-log: error: interrupted", err[-500:]
    assert "Traceback" not in err.decode()
    assert text.endswith("\n")
    if form == "table":
        named = [m[1] for m in map(_VERDICT.match, text.splitlines()) if m]
        assert 0 < len(named) < len(files) and named == [str(f) for f in files[:len(named)]]
    else:  # whole items of the list, in order: a program took each as it came
        items = json.loads(text.rstrip().rstrip(",") + "\n]")
        assert 0 < len(items) < len(files)
        assert [i["path"] for i in items] == [str(f) for f in files[:len(items)]]


@pytest.mark.slow
def test_the_batch_s_summary_and_status_are_those_of_every_log(tmp_path: Path,
                                                              good: Path) -> None:
    files = _season(tmp_path / "s", good, 40)
    (tmp_path / "s" / "README.txt").write_text("the season's notes\n")
    runs = [subprocess.run([sys.executable, "-m", "cli.main", "audit", str(tmp_path / "s"),
                            "-j", jobs, *extra], capture_output=True, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200"))
            for jobs in ("1", "2") for extra in ([], ["-q"], ["-f", "json"])]
    assert all(r.returncode == 1 for r in runs), [r.stderr[-300:] for r in runs]
    assert runs[0].stdout == runs[3].stdout and runs[2].stdout == runs[5].stdout
    summary = runs[0].stdout.decode().splitlines()[-1]
    assert summary.startswith(f"audited {len(files)} logs: 39 clean"), summary
    assert "1 not started, 1 with findings" in summary
    assert runs[1].stdout.decode().splitlines()[-1] == summary
    assert len(json.loads(runs[2].stdout)) == len(files)
    assert all(b"1 file passed over, not logs" in r.stderr and b"README.txt" in r.stderr
               for r in runs), runs[0].stderr


def _few_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (12, 12))


@pytest.mark.slow
def test_no_descriptor_for_a_pool_audits_in_this_process(tmp_path: Path, good: Path) -> None:
    """``ulimit -n 12``: the pool's pipes could not be made, and the batch was one line naming
    the directory, "DIR: Too many open files", exit 2, where -j 1 audited every log."""
    files = _season(tmp_path / "s", good, 8)
    r = subprocess.run([sys.executable, "-m", "cli.main", "audit", str(tmp_path / "s"), "-j",
                        "2", "-q"], capture_output=True, timeout=120, preexec_fn=_few_descriptors,
                       env=dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200"))
    err = r.stderr.decode()
    assert r.returncode == 1, err[-500:]  # the illegal log's finding, nothing else
    assert "worker processes could not be started (Too many open files)" in err, err
    summary = r.stdout.decode().splitlines()[-1]
    assert summary.startswith(f"audited {len(files)} logs: {len(files) - 2} clean"), summary
    assert "1 not started, 1 with findings (legality 1)" in summary, summary
