"""SIGKILL after each system call that changes a file or a name, then a restart.

A recorder process (``tests/recorder/killpoints.py``) records a few rounds of moves of six
tables (continued logs, new logs, a match that ends), with its state saved and its journal
checkpointed every round, and is killed after its Nth ``write``, ``pwrite``, ``fsync``,
``fdatasync``, ``link``, ``unlink``, ``replace``, ``syncfs`` or creating ``open``, for every N
it reaches. After each kill a new recorder opens the directory and loads every table; then
every move the process acknowledged before it died is in its log exactly once and in order
(each log is a prefix of its match), every log verifies whole, the journals were written back
once and are gone, and nothing else is left in the directory. With the journal, the restart
itself is killed too, after each of its calls, with the logs cut back to what the journals
alone guarantee (what a power loss could leave of them).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.recorder import Recorder
from tests.recorder import killpoints as kp
from tests.recorder.sources import write_sources

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The sources (one log per match) and a directory of the tables' logs before the run."""
    base = tmp_path_factory.mktemp("killpoints")
    srcdir = base / "src"
    srcdir.mkdir()
    write_sources(str(srcdir), kp.SOURCES)
    kp.prepare(base / "template", srcdir)
    return srcdir, base / "template"


def _child(directory: Path, srcdir: Path, sync: str, kill: str,
           recover: bool = False) -> tuple[dict[str, int], list[str]]:
    """Run the recorder process; returns the highest seq it acknowledged per table and the
    calls it made (the last one is the call it was killed after, if it was)."""
    args = [sys.executable, "-m", "tests.recorder.killpoints", str(directory), str(srcdir),
            sync, kill] + (["recover"] if recover else [])
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, -signal.SIGKILL), done.stderr
    assert not done.stderr, done.stderr
    acked: dict[str, int] = {}
    calls = []
    for line in done.stdout.splitlines():
        if line.startswith("@ "):
            calls.append(line[2:])
        elif line != "done":
            table, seq = line.split()
            assert int(seq) > acked.get(table, -1)  # acknowledged in order, once
            acked[table] = int(seq)
    if done.returncode == 0:
        assert done.stdout.endswith("done\n")
        calls.append("(none: ran to the end)")
    return acked, calls


def _cut_to_journals(directory: Path) -> int:
    """Cut each log back to where the journals' records of it begin: its bytes past that
    were not yet made durable (a checkpoint had not synced them), so a power loss could
    take them. A log whose records begin at 0 is removed. Returns the logs cut."""
    starts: dict[str, int] = {}
    for _, path in journal.generations(str(directory)):
        for record in journal.read(path):
            starts[record.match] = min(starts.get(record.match, record.offset), record.offset)
    for match, offset in starts.items():
        path = directory / f"{match}.blog"
        if not offset:
            path.unlink(missing_ok=True)
        elif path.exists():
            with open(path, "r+b") as f:
                f.truncate(offset)
    return len(starts)


def _check_after_restart(directory: Path, srcdir: Path, sync: str,
                         acked: dict[str, int]) -> None:
    """Restart, load every table, and check what the module's docstring says."""
    with Recorder(directory, sync=sync) as rec:
        seqs = {table: rec.next_seq(table) for table in kp.TABLES}
    assert kp.journals(directory) == []  # written back, then removed; none kept aside
    assert kp.stray(directory) == []  # no temporary file of a log, a state or a journal
    held = {}
    for table in kp.TABLES:
        path = directory / f"{table}.blog"
        if not path.exists():
            assert table not in acked and not kp.TABLES[table][1]
            continue
        info = log.verify(path)
        assert info.torn is None, (table, info.torn)
        events = log.read_events(path)
        src = kp.source(srcdir, table)
        assert events == src[: len(events)], table  # each move once, in order
        assert len(events) > acked.get(table, -1), (table, len(events), acked)
        assert len(events) >= len(src[: kp.TABLES[table][1]])  # the prepared log is kept
        assert seqs[table] == len(events) or len(events) == len(src)
        held[table] = path.read_bytes()
    # written back once: a second restart finds nothing to write, and every log unchanged
    with Recorder(directory, sync=sync) as rec:
        assert rec.stats().recovered == 0
    assert {t: (directory / f"{t}.blog").read_bytes() for t in held} == held
    assert kp.journals(directory) == []


def _sweep(tmp_path: Path, template: tuple[Path, Path], sync: str, kills: list[str],
           restart_kill: str = "0", restarts: list[tuple[int, bool]] | None = None,
           ) -> Counter[str]:
    """A run killed at each of ``kills``, each then checked after a restart. With
    ``restart_kill``, the logs are first cut back to what the journals guarantee and the
    restart is killed there (files copied elsewhere are other inodes: a journal's records
    name theirs, so each run starts from the prepared logs); ``restarts`` then gets the
    number of calls each restart made (up to the one it was killed after), and whether it
    was killed."""
    srcdir, prepared = template
    covered: Counter[str] = Counter()
    for n, kill in enumerate(kills):
        directory = tmp_path / f"{sync}-{n}"
        shutil.copytree(prepared, directory)
        acked, calls = _child(directory, srcdir, sync, kill)
        covered[calls[-1]] += 1
        if restart_kill != "0":
            _cut_to_journals(directory)
            _, calls = _child(directory, srcdir, sync, restart_kill, recover=True)
            covered["restart: " + calls[-1]] += 1
            if restarts is not None:
                ended = calls[-1].startswith("(none")
                restarts.append((len(calls) - ended, not ended))
        _check_after_restart(directory, srcdir, sync, acked)
        shutil.rmtree(directory)
    return covered


def test_a_kill_after_a_journal_sync_then_in_the_restart_loses_no_acknowledged_move(
        tmp_path: Path, template: tuple[Path, Path]) -> None:
    covered = _sweep(tmp_path, template, "journal", ["fdatasync:3"], restart_kill="3")
    assert covered["fdatasync"] == 1  # killed there, not run to the end
    assert sum(n for call, n in covered.items() if call.startswith("restart: ")) == 1


@pytest.mark.slow
@pytest.mark.parametrize(("sync", "kill"), [("fsync", "link:1"), ("syncfs", "unlink:1")])
def test_a_kill_after_a_chosen_call_loses_no_acknowledged_move(
        tmp_path: Path, template: tuple[Path, Path], sync: str, kill: str) -> None:
    covered = _sweep(tmp_path, template, sync, [kill])
    assert covered[kill.split(":")[0]] == 1  # killed there, not run to the end


@pytest.mark.slow
@pytest.mark.parametrize("sync", ["journal", "fsync", "syncfs"])
def test_a_kill_after_every_call_loses_no_acknowledged_move(
        tmp_path: Path, template: tuple[Path, Path], sync: str) -> None:
    srcdir, prepared = template
    whole = tmp_path / "whole"
    shutil.copytree(prepared, whole)
    _, calls = _child(whole, srcdir, sync, "0")
    total = len(calls) - 1
    # every call of a whole run, and a few past it (the threads' order and the number of
    # checkpoints vary a little from run to run)
    covered = _sweep(tmp_path, template, sync, [str(n) for n in range(1, total + 6)])
    print(f"{sync}: {sum(covered.values())} kill points: {dict(covered)}")
    assert sum(n for call, n in covered.items() if not call.startswith("(none")) >= total * 0.8
    kinds = {"create", "pwrite", "fsync", "link", "unlink"} | (
        {"fdatasync", "syncfs", "write"} if sync == "journal" else set())
    assert kinds <= set(covered), covered


@pytest.mark.slow
@pytest.mark.parametrize("kill", ["fdatasync:1", "fdatasync:3", "syncfs:1", "40"])
def test_a_kill_after_every_call_of_the_restart_loses_no_acknowledged_move(
        tmp_path: Path, template: tuple[Path, Path], kill: str) -> None:
    """The journal's records written back into logs a power loss cut short, killed after
    each call of the restart, then restarted again."""
    srcdir, prepared = template
    whole = tmp_path / "whole"
    shutil.copytree(prepared, whole)
    _child(whole, srcdir, "journal", kill)
    assert _cut_to_journals(whole)
    _, calls = _child(whole, srcdir, "journal", "0", recover=True)
    total = len(calls) - 1
    # How far a restart goes depends on where the first run died, which its threads' order
    # moves a little: each restart is held to the calls it made itself (this compared the
    # sweep's kills with the calls of the one run above, and failed when the sweep's runs
    # made a few fewer). The jth restart is killed after its jth call, or ran to its end
    # having made fewer; the sweep goes past that run's calls and on until a restart ends.
    covered: Counter[str] = Counter()
    made: list[tuple[int, bool]] = []
    while len(made) <= total or made[-1][1]:
        j = len(made) + 1
        assert j < 2 * total + 10, made  # restarts that never end
        covered += _sweep(tmp_path / str(j), template, "journal", [kill], restart_kill=str(j),
                          restarts=made)
        count, was_killed = made[-1]
        assert count == j if was_killed else count < j, (j, made)  # no call j, or killed there
    print(f"restart after {kill}: {total} calls in one run; the sweep's: {made}: "
          f"{dict(covered)}")
    killed = [j for j, (_, was_killed) in enumerate(made, 1) if was_killed]
    ended = [count for count, was_killed in made if not was_killed]
    assert set(range(1, min(ended) + 1)) <= set(killed)  # every call each whole restart made
    assert sum(n for call, n in covered.items()
               if call.startswith("restart: ") and "(none" not in call) == len(killed)
