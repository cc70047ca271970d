"""A site ingesting a year of matches one night at a time: nights cut by SIGKILL and run again,
a compact every few nights, a day dropped and ingested again. The archive must end as a
one-shot ingest of the same logs leaves it: every table's rows (DuckDB over the Parquet files,
sorted row hashes, commit columns aside), the stored ratings, and a clean ``verify``."""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from buraco_log.archive import connect, ingest, store
from buraco_log.archive.compact import compact
from buraco_log.archive.fixity import verify_archive
from buraco_log.log import read_events
from tests import brokenlogs
from tests.archive.corpus import make_corpus
from tests.archive.tablehashes import TABLES, rows
from tests.cli.probes import ROOT


def assert_as_one_shot(nightly: Path, nights: list[Path], one: Path) -> dict[str, list[int]]:
    ingest([str(n) for n in nights], one)
    got, want = rows(nightly), rows(one)
    for t in TABLES:
        assert len(got[t]) == len(want[t]), (t, len(got[t]), len(want[t]))
        assert got[t] == want[t], t
    assert want["matches"], "no match stored: nothing was compared"
    mine, theirs = store.current_ratings(str(nightly)), store.current_ratings(str(one))
    assert mine is not None and theirs is not None
    assert pq.read_table(mine).equals(pq.read_table(theirs))
    for arch in (nightly, one):
        fix = verify_archive(str(arch))
        assert fix.ok and not fix.leftovers, (arch, fix.problems, fix.leftovers)
    return want


def nights_of(base: Path, logs: list[str], per: int) -> list[Path]:
    """The logs in one directory a night, ``per`` a night, linked (no copy)."""
    out = []
    for i in range(0, len(logs), per):
        night = base / f"night-{i // per + 1:03d}"
        night.mkdir(parents=True)
        for log in logs[i:i + per]:
            os.link(log, night / os.path.basename(log))
        out.append(night)
    return out


def batches_of(archive: Path, night: Path) -> list[str]:
    con = connect(archive)
    try:
        return [b for (b,) in con.execute(
            "SELECT DISTINCT batch FROM matches WHERE starts_with(source_path, ?)",
            [f"{night}/"]).fetchall()]
    finally:
        con.close()


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return make_corpus(str(tmp_path_factory.mktemp("year55") / "logs"), 3, seed="archive55",
                       jobs=1)


@pytest.mark.slow  # 0.6 CPU-s, but five commits' fsyncs: 7.5 s on the shared test machine
def test_nights_compacted_and_a_day_dropped_equal_one_shot(logs: list[str], tmp_path: Path
                                                             ) -> None:
    """Three nights of one log: a compact after the second, the last day dropped and ingested
    again (delete, then append), then the archive against a one-shot ingest."""
    nights = nights_of(tmp_path / "site", logs, 1)
    arch = tmp_path / "nightly"
    for i, night in enumerate(nights, 1):
        assert ingest([str(night)], arch).added == 1
        if i == 2:
            assert compact(str(arch)).merges
    day = nights[-1]
    dropped = batches_of(arch, day)
    assert len(dropped) == 1
    store.drop_batches(str(arch), dropped)
    assert batches_of(arch, day) == []
    assert ingest([str(day)], arch).added == 1
    assert_as_one_shot(arch, nights, tmp_path / "one")


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    """The command run whole; exit 1 is an ingest's that refused a log (a live one)."""
    r = subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=300, check=False,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r
    return r


def _killed(rng: random.Random, *args: object) -> None:
    """The command, SIGKILLed (with its workers) at a moment between 0 and 1.5 s."""
    p = subprocess.Popen([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    time.sleep(rng.uniform(0.0, 1.5))
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=60)


DROP = ("import sys; from buraco_log.archive import store; "
        "store.drop_batches(sys.argv[1], sys.argv[2:])")


@pytest.mark.slow
@pytest.mark.parametrize("seed", [55, 56])
def test_a_season_of_nights_killed_compacted_and_redone_equals_one_shot(
        seed: int, tmp_path: Path) -> None:
    """Twelve nights of two logs through the command line, each night's ingest SIGKILLed at a
    random moment one time in three and run again, a compact every four nights (itself
    SIGKILLed one time in two), and a recent day dropped (the drop SIGKILLed one time in two,
    then done) and ingested again. Some nights hold a live log cut before its end (refused),
    finished the next night."""
    rng = random.Random(seed)
    logs = make_corpus(str(tmp_path / "logs"), 24, seed=f"archive55-{seed}", jobs=2)
    nights = nights_of(tmp_path / "site", logs, 2)
    for night, finished in list(itertools.pairwise(nights))[::3]:
        log = sorted(finished.iterdir())[0]
        brokenlogs.write(night / f"live-{log.name}", read_events(log)[:-5])
    arch = tmp_path / "nightly"
    for i, night in enumerate(nights, 1):
        jobs = rng.choice([1, 2])
        if rng.random() < 1 / 3:
            _killed(rng, "ingest", night, "--archive", arch, "-j", jobs)
        assert _cli("ingest", night, "--archive", arch, "-j", jobs).returncode in (0, 1)
        if i % 4 == 0:
            if rng.random() < 0.5:
                _killed(rng, "compact", arch)
            assert _cli("compact", arch).returncode == 0
        if i % 4 == 2:  # the day before, not compacted yet: delete, then append
            day = nights[i - 2]
            held = batches_of(arch, day)
            assert held
            if rng.random() < 0.5:
                p = subprocess.Popen([sys.executable, "-c", DROP, arch, *held], cwd=ROOT,
                                     start_new_session=True,
                                     env=dict(os.environ, PYTHONPATH=str(ROOT)))
                time.sleep(rng.uniform(0.0, 0.6))
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=60)
            left = batches_of(arch, day)
            if left:
                store.drop_batches(str(arch), left)
            assert batches_of(arch, day) == []
            assert _cli("ingest", day, "--archive", arch).returncode in (0, 1)
    assert assert_as_one_shot(arch, nights, tmp_path / "one")["errors"], "no live log refused"
