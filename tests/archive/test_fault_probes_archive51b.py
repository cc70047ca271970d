"""Fault probes, archive: processes at work on one archive at once (real subprocesses): two
ingests, a compact during an ingest, a batch drop during a query, a query during a compact.
Each either waits or refuses in one line naming the rule; afterwards the archive verifies and
holds the rows of the same work done one after another (order-free sums of every view)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest, query, store
from buraco_log.archive.fixity import verify_archive
from tests.archive.filetree import sized_tree

ROOT = Path(__file__).resolve().parents[2]
# small ones, a process each at once on a machine shared with the whole suite; the first
# two of one partition, so that compact merges their batches
SIM = [ROOT / "examples" / "sim" / f"{name}-000000.blog" for name in (
    "thirteen-quick-2p", "thirteen-quick-4p", "thirteen-4p", "classic-6p")]

# Order-free sums of every view, without what differs between runs (the batch, the time)
_NOT_THE_RUN = "EXCLUDE (batch, ingested_at)"
SUMS = "SELECT " + ", ".join(
    f"(SELECT {{'n': count(*), 'h': bit_xor(hash(x))}} FROM (SELECT * "
    f"{_NOT_THE_RUN if t in ('matches', 'errors') else ''} FROM {t}) x) AS {t}"
    for t in ("matches", "hands", "events", "melds", "players", "errors"))


def sums(a: Path) -> dict[str, Any]:
    got: dict[str, Any] = query(a, SUMS).to_pylist()[0]
    return got


def start(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


DROP = ("import sys; from buraco_log.archive import store; "
        "store.drop_batches(sys.argv[1], [sys.argv[2]])")


def start_drop(a: Path, batch: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", DROP, str(a), batch], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def waited_or_refused(p: subprocess.Popen[str]) -> bool:
    """True when it ran; False when it refused in one line naming the lock's rule."""
    out, err = p.communicate(timeout=300)
    assert "Traceback" not in err, err
    if p.returncode == 0:
        return True
    lines = err.splitlines()
    assert p.returncode == 1 and len(lines) == 1 and lines[0].endswith("[archive.locked]"), (
        p.args, p.returncode, err, out)
    return False


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two directories of logs, an archive of the first fed log by log (small batches for
    compact to merge), and the archive of both, fed one after another."""
    base = tmp_path_factory.mktemp("together")
    a, b = base / "a", base / "b"
    a.mkdir()
    b.mkdir()
    for i, log in enumerate(SIM):
        shutil.copy(log, (a if i < 2 else b) / log.name)
    fed = base / "fed"
    for log in sorted(a.iterdir()):
        ingest([str(log)], fed)
    serial = base / "serial"
    shutil.copytree(fed, serial)
    ingest([str(b)], serial)
    return {"a": a, "b": b, "fed": fed, "serial": serial}


def _copy(site: dict[str, Path], tmp: Path) -> Path:
    arch = tmp / "arch"
    shutil.copytree(site["fed"], arch)
    return arch


def _settled(arch: Path, want: dict[str, Any]) -> None:
    fixity = verify_archive(str(arch))
    assert fixity.ok, fixity.problems
    assert sums(arch) == want


def two_ingests(site: dict[str, Path], tmp: Path, delay: float) -> None:
    arch = _copy(site, tmp)
    halves = sorted(site["b"].iterdir())
    first = start("ingest", *halves[:1], "--archive", arch)
    time.sleep(delay)
    second = start("ingest", *halves[1:], "--archive", arch)
    ran = [waited_or_refused(first), waited_or_refused(second)]
    assert any(ran)
    for done, logs in zip(ran, (halves[:1], halves[1:]), strict=True):
        if not done:  # refused: run again, as the line says
            ingest([str(p) for p in logs], arch)
    _settled(arch, sums(site["serial"]))


def compact_during_ingest(site: dict[str, Path], tmp: Path, delay: float) -> None:
    arch = _copy(site, tmp)
    first = start("ingest", site["b"], "--archive", arch)
    time.sleep(delay)
    second = start("compact", arch)
    ran = [waited_or_refused(first), waited_or_refused(second)]
    if not ran[0]:
        ingest([str(site["b"])], arch)
    _settled(arch, sums(site["serial"]))


def drop_during_query(site: dict[str, Path], tmp: Path, delay: float) -> None:
    arch = _copy(site, tmp)
    before = sums(arch)
    batch = store.manifests(str(arch))[0]["batch"]
    reader = start("query", arch, SUMS, "-f", "json")
    time.sleep(delay)
    drop = start_drop(arch, batch)
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0 and err == "", err
    _out, dropped = drop.communicate(timeout=300)
    assert drop.returncode == 0, dropped
    # every row once: all of them (read before the drop) or those left after it
    serial = tmp / "serial"
    shutil.copytree(site["fed"], serial)
    store.drop_batches(str(serial), [batch])
    assert json.loads(out)[0] in (before, sums(serial))
    _settled(arch, sums(serial))


def query_during_compact(site: dict[str, Path], tmp: Path, delay: float) -> None:
    arch = _copy(site, tmp)
    want = sums(arch)
    writer = start("compact", arch)
    time.sleep(delay)
    reader = start("query", arch, SUMS, "-f", "json")
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0 and err == "", err
    assert json.loads(out)[0] == want
    assert waited_or_refused(writer)
    assert len(store.manifests(str(arch))) == 1
    _settled(arch, want)


CASES = {"two-ingests": two_ingests, "compact-during-ingest": compact_during_ingest,
         "drop-during-query": drop_during_query, "query-during-compact": query_during_compact}


def test_an_ingest_while_another_holds_the_archive_refuses_in_one_line_then_runs(
        site: dict[str, Path], tmp_path: Path) -> None:
    """The default run's twin of the loops below, one process against this one's ingest
    lock. Before: the line named no rule ("another ingest is running on this archive")."""
    arch = _copy(site, tmp_path)
    with store.locked(str(arch)):
        before = [f for f in sized_tree(arch) if f[0] != ".lock"]
        assert not waited_or_refused(start("ingest", site["b"], "--archive", arch))
        assert [f for f in sized_tree(arch) if f[0] != ".lock"] == before  # nothing written
    ingest([str(site["b"])], arch)  # run again, as the line says
    _settled(arch, sums(site["serial"]))


@pytest.mark.slow  # four kinds, eight moments each: about a hundred processes
@pytest.mark.parametrize("kind", sorted(CASES))
def test_processes_at_once_on_one_archive_wait_or_refuse_and_hold_a_serial_runs_rows(
        site: dict[str, Path], tmp_path: Path, kind: str) -> None:
    for i, delay in enumerate((0.0, 0.1, 0.3, 0.6, 0.9, 1.2, 1.6, 2.0)):
        work = tmp_path / f"{i}"
        work.mkdir()
        CASES[kind](site, work, delay)
        shutil.rmtree(work)
