"""Seal, probed with real processes: killed at every step, two at once, after a writer died
mid-record, and on a file system that makes neither hard links nor a rename that never
replaces. After each, every acknowledged event is in the log (sealed or not), it verifies, and
no temporary file is left once the next seal has run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.log.samples import sample_events

ROOT = Path(__file__).resolve().parents[2]
EVENTS = sample_events(30)


def _run(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    head = ["-c", code] if code is not None else ["-m", "tests.log.sealkill"]
    return subprocess.run([sys.executable, *head, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def _unsealed(tmp_path: Path) -> Path:
    path = tmp_path / "m.blog"
    with log.Writer(path, sealed=False, validate=False) as w:
        for i in range(0, len(EVENTS), 5):  # six records: seal rewrites them as five (of 7)
            w.append_many(EVENTS[i:i + 5])
    return path


def _age_temporaries(path: Path) -> list[str]:
    """The hidden files beside the log, made a minute old: what a killed run left, which the
    next seal removes (it leaves a temporary younger than STALE_AFTER, maybe still in use)."""
    left = [p for p in path.parent.iterdir() if p.name != path.name]
    old = time.time() - 2 * log.STALE_AFTER
    for p in left:
        os.utime(p, (old, old))
    return sorted(p.name for p in left)


def _whole_after_a_kill(path: Path, head: str) -> bool:
    """The log after seal was killed: every event, verified, the head unchanged; then the next
    seal leaves nothing beside it. True if the killed seal had replaced the log already."""
    info = log.verify(path)
    assert log.read_events(path) == EVENTS and info.head == head
    left = _age_temporaries(path)
    assert all(name.startswith(".m.blog.") or name.startswith("..m.blog.") for name in left), left
    again = log.seal(path)
    assert again.sealed and again.head == head and log.read_events(path) == EVENTS
    assert sorted(p.name for p in path.parent.iterdir()) == ["m.blog"]
    return info.sealed


@pytest.mark.parametrize("point", ["seal.locked", "seal.before-rename", "seal.renamed"])
def test_seal_killed_at_each_of_its_steps_loses_nothing_and_the_next_seal_cleans_up(
        tmp_path: Path, point: str) -> None:
    path = _unsealed(tmp_path)
    head = log.verify(path).head
    done = _run(str(path), "point", point)
    assert done.returncode == -9, done.stderr
    assert _whole_after_a_kill(path, head) is (point == "seal.renamed")


@pytest.mark.slow
def test_seal_killed_before_every_one_of_its_system_calls_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    killed = replaced = 0
    for n in range(1000):
        for p in tmp_path.iterdir():
            p.unlink()
        path = _unsealed(tmp_path)
        head = log.verify(path).head
        done = _run(str(path), "call", str(n))
        if done.returncode == 0:  # past its last call: seal ran to the end
            assert done.stdout.split()[:2] == ["sealed", str(len(EVENTS))]
            break
        assert done.returncode == -9, (n, done.stderr)
        killed += 1
        replaced += _whole_after_a_kill(path, head)
    else:
        raise AssertionError("seal was still being killed after 1000 calls")
    assert killed > 20 and 0 < replaced < killed  # killed both before and after its rename


def test_two_seals_at_once_each_seal_the_log_and_lose_nothing(tmp_path: Path) -> None:
    path = _unsealed(tmp_path)
    head = log.verify(path).head
    first = subprocess.Popen([sys.executable, "-m", "tests.log.racer", "seal", str(path),
                              "--pause", "seal.before-rename"], cwd=ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reached = Path(f"{path}.seal.before-rename.reached")
    deadline = time.monotonic() + 60
    while not reached.exists():
        assert first.poll() is None and time.monotonic() < deadline, first.stderr
        time.sleep(0.005)
    # the second opens the old file and waits for its lock; once the first has renamed the
    # sealed file into place it must move to that one, not seal the old file over it
    second = subprocess.Popen([sys.executable, "-m", "tests.log.racer", "seal", str(path),
                               "--timeout", "60"], cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.3)
    assert second.poll() is None
    Path(f"{path}.seal.before-rename.go").touch()
    for proc in (first, second):
        out, err = proc.communicate(timeout=60)
        assert (proc.returncode, out) == (0, f"sealed {len(EVENTS)}\n"), err
    for marker in tmp_path.glob("m.blog.seal.*"):
        marker.unlink()
    info = log.verify(path)
    assert info.sealed and info.head == head and log.read_events(path) == EVENTS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]


def test_seal_of_a_log_whose_writer_was_killed_mid_record_is_refused_then_seals_once_repaired(
        tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    done = _run(str(path), "halfway", str(len(EVENTS)))
    assert done.returncode == -9, done.stderr
    acked = [int(line.split()[1]) for line in done.stdout.splitlines()]
    assert acked == list(range(len(EVENTS) - 1))
    before = path.read_bytes()
    with pytest.raises(LogFormatError) as caught:
        log.seal(path)
    assert caught.value.kind == "torn" and caught.value.seq == len(EVENTS) - 1
    assert path.read_bytes() == before  # refused: nothing changed, nothing beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]
    log.repair(path)
    info = log.seal(path)
    assert info.sealed and log.read_events(path) == EVENTS[:-1]  # every acknowledged one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog", "m.blog.bak"]


_NO_LINKS = """
import errno, os, sys
def link(src, dst, *args, **kwargs):  # as the kernel: a name taken is EEXIST, before EPERM
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), src, None, dst)
    raise OSError(errno.EPERM, os.strerror(errno.EPERM), src, None, dst)
os.link = link
from buraco_log import log
def renameat2(src, dst, flags):
    raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS), src, None, dst)
log.renameat2 = renameat2
sys.argv = ["buraco-log", *sys.argv[1:]]
from cli.entry import run
run()
"""


def test_seal_on_a_file_system_without_hard_links_or_a_rename_that_never_replaces(
        tmp_path: Path) -> None:
    """seal puts its copy in place by rename, which every file system makes: it was refused
    ("this file system makes no hard link ... nothing was written") since the copy was made
    as a writer makes a new log."""
    path = _unsealed(tmp_path)
    head = log.verify(path).head
    done = _run("seal", str(path), code=_NO_LINKS)
    assert done.returncode == 0, done.stderr
    info = log.verify(path)
    assert info.sealed and info.head == head and log.read_events(path) == EVENTS
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]
    # where a new file is made, it is still refused: convert's output, a writer's new log
    done = _run("convert", str(path), "-o", str(tmp_path / "m.jsonl"), code=_NO_LINKS)
    assert done.returncode != 0 and "makes no hard link" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]
