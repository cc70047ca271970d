"""Fault probes, round 39, of an ingest killed by SIGKILL mid-run, as a real `buraco-log
ingest` process paused at a chosen step and killed there: with a batch's part files half
renamed into their partitions, with its record written but its staging left, and while the
ratings were being stored. Every reader sees each committed batch whole and nothing of the
cut one, verify passes, and the same command run again stores exactly what a clean ingest
stores, leaving nothing behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import fixity, ingest, query, store
from tests.archive.conftest import Corpus
from tests.command_line import sigint_default

ROOT = Path(__file__).resolve().parents[2]
LOGS = 8  # two logs a batch: four batches

# The real command, committing a batch every two logs, paused at a step: "partial" after the
# second part file of the second batch is renamed into its partition (its record not yet
# written); "record" once the second batch's record is in place (its staging not yet
# removed); "ratings" once the ratings file is written beside its final name.
PAUSED = """
import functools, pathlib, sys, time
import buraco_log.archive as archive
from buraco_log.archive import store
marker, point = pathlib.Path(sys.argv[1]), sys.argv[2]
archive.ingest = functools.partial(archive.ingest, chunk_size=2, commit_events=1)
seen = {"partial": 0}
def pause():
    marker.touch()
    time.sleep(120)
fsync_dir = store._fsync_dir
def paused_fsync_dir(path):
    fsync_dir(path)
    if "/preset=" in path:
        seen["partial"] += 1
        if point == "partial" and seen["partial"] == 7:
            pause()
    # the second batch's record made durable (counted in records: _batches is synced for
    # other files too, such as the readers' gate)
    elif (point == "record" and path.endswith(store.BATCHES)
          and len(store.manifests(path[: -len(store.BATCHES)].rstrip("/"))) >= 2):
        pause()
store._fsync_dir = paused_fsync_dir
write_table = store.pq.write_table
def paused_write_table(table, where, *args, **kwargs):
    write_table(table, where, *args, **kwargs)
    if point == "ratings" and store.RATINGS in str(where):
        pause()
store.pq.write_table = paused_write_table
sys.argv = ["buraco-log", *sys.argv[3:]]
from cli.main import run
run()
"""

SUMS = {t: f"SELECT count(*) AS n, bit_xor(hash(x)) AS h FROM (SELECT * {ex} FROM {t}) x"
        for t, ex in (("matches", "EXCLUDE (batch, ingested_at)"), ("hands", ""),
                      ("events", ""), ("melds", ""), ("players", ""))}


def sums(a: Path) -> dict[str, Any]:
    return {t: query(a, sql).to_pylist()[0] for t, sql in SUMS.items()}


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=180, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def logs(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("logs39c")
    for p in corpus.good[:LOGS]:
        (d / Path(p).name).write_bytes(Path(p).read_bytes())
    return d


@pytest.fixture(scope="module")
def reference(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    a = tmp_path_factory.mktemp("ref39c") / "a"
    assert ingest([str(logs)], a).added == LOGS
    return sums(a)


def committed_rows(a: Path) -> dict[str, int]:
    """What the batch records say each table holds."""
    rows = dict.fromkeys(SUMS, 0)
    for m in store.manifests(str(a)):
        for t in rows:
            rows[t] += m["rows"][t]
    return rows


@pytest.mark.parametrize("point", ["partial", pytest.param("record", marks=pytest.mark.slow),
                                   pytest.param("ratings", marks=pytest.mark.slow)])
def test_an_ingest_killed_mid_commit_shows_no_partial_batch_and_a_rerun_is_exact(
        logs: Path, reference: dict[str, Any], tmp_path: Path, point: str) -> None:
    a, marker = tmp_path / "a", tmp_path / "paused"
    proc = subprocess.Popen([sys.executable, "-c", PAUSED, str(marker), point, "ingest",
                             str(logs), "--archive", str(a), "--jobs", "1"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "never paused"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        proc.kill()
        proc.wait()
    batches = len(store.manifests(str(a)))
    assert batches == (1 if point == "partial" else 2 if point == "record" else LOGS // 2)
    if point == "partial":  # the cut batch's renamed part files are there, and unread
        staged = {p.name for p in a.glob("*/preset=*/month=*/part-*.parquet")}
        assert len(staged) > batches
    seen = {t: r["n"] for t, r in sums(a).items()}
    assert seen == committed_rows(a) and seen["matches"] == 2 * batches, seen
    checked = fixity.verify_archive(str(a))
    assert checked.ok and checked.verified == checked.files, checked.problems
    again = cli("ingest", logs, "--archive", a, "--jobs", "1")
    assert again.returncode == 0, again.stderr
    assert f"{2 * batches:,} already stored" in again.stdout, again.stdout
    assert sums(a) == reference
    checked = fixity.verify_archive(str(a))
    assert checked.ok and checked.leftovers == [], checked
    assert not (a / store.STAGING).exists() or not any((a / store.STAGING).iterdir())
    ratings = sorted(p.name for p in (a / store.RATINGS).iterdir())
    assert len(ratings) == 2 and "current.json" in ratings, ratings  # no temporary left


# The command under a file size limit: a write past it fails (EFBIG) as on a full disk.
LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


def test_a_compact_that_cannot_write_says_to_run_the_compact_again(logs: Path,
                                                                    tmp_path: Path) -> None:
    """Before: "... run the ingest again once there is room): writing ...: Error writing bytes
    to file. Detail: [errno 27] File too large" (the words of Arrow, the wrong command)."""
    a = tmp_path / "a"
    for log in sorted(logs.iterdir())[:3]:
        ingest([str(log)], a)
    before = {p: p.read_bytes() for p in a.rglob("*") if p.is_file() and p.name != store.LOCK}
    r = subprocess.run([sys.executable, "-c", LIMITED, "4096", "compact", str(a)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, check=False,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"buraco-log: error: {a}: batch "), r.stderr
    assert "run the compact again once there is room" in r.stderr, r.stderr
    assert r.stderr.endswith(": File too large\n") and "Error writing" not in r.stderr
    after = {p: p.read_bytes() for p in a.rglob("*") if p.is_file() and p.name != store.LOCK}
    assert after == before


# compact, paused once the merged batch's second file is staged
PAUSED_COMPACT = """
import pathlib, sys, time
from buraco_log.archive import store
marker, calls, real = pathlib.Path(sys.argv[1]), [0], store._stage
def paused(*args, **kwargs):
    out = real(*args, **kwargs)
    calls[0] += 1
    if calls[0] == 2:
        marker.touch()
        time.sleep(120)
    return out
store._stage = paused
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


@pytest.mark.slow  # 10 s on the loaded CI machine: three ingests, two compacts
@pytest.mark.parametrize(("sig", "code", "said"), [
    (signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted")])
def test_a_compact_cut_by_a_signal_is_one_line_and_the_next_one_finishes(
        logs: Path, tmp_path: Path, sig: int, code: int, said: str) -> None:
    """Before: SIGTERM ended compact without a word (status -15), Ctrl-C said "interrupted"
    alone, with no word of what was left or what to do."""
    a, marker = tmp_path / "a", tmp_path / "paused"
    for log in sorted(logs.iterdir())[:3]:
        ingest([str(log)], a)
    before = sums(a)
    proc = subprocess.Popen([sys.executable, "-c", PAUSED_COMPACT, str(marker), "compact",
                             str(a)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            preexec_fn=sigint_default)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "never paused"
            time.sleep(0.05)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert (proc.returncode, stdout) == (code, ""), stderr
    assert stderr.count("\n") == 1 and stderr.startswith(
        f"buraco-log: error: compact: {said}: the merges already committed stay"), stderr
    assert "run the same command again" in stderr
    assert sums(a) == before
    again = cli("compact", a)
    assert again.returncode == 0 and "merged 3 batches into 1" in again.stdout, again
    assert sums(a) == before and len(store.manifests(str(a))) == 1
    assert fixity.verify_archive(str(a)).leftovers == []
