"""Fault probes, Spark engine: a Spark query or report holds the readers' lock as the local
engine's do (a local ``compact`` removed the files a Spark query was reading), and a hint is
refused by what the statement says, not by Catalyst's class name ("UnresolvedHint")."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport, ingest, store
from buraco_log.errors import ArchiveError
from tests.spark.conftest import IN_CI, SparkCorpus, spark_missing

ROOT = Path(__file__).resolve().parents[2]
EXE = shutil.which("buraco-log") or "buraco-log"


def readers_held(root: Path) -> bool:
    """Whether some reader holds the archive's readers' lock (an exclusive try fails)."""
    fd = os.open(root / store.READERS, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def held_while(call: Callable[[], Any], root: Path) -> tuple[bool, Any]:
    """Run ``call`` in a thread; whether the readers' lock was seen held while it ran, and
    what it returned."""
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(call()), daemon=True)
    worker.start()
    seen = False
    while worker.is_alive():
        seen = seen or readers_held(root)
        time.sleep(0.002)
    worker.join()
    assert done, "the call failed"
    return seen, done[0]


def test_a_spark_query_holds_the_readers_lock_while_it_reads(
        spark: Any, local_archive: tuple[Path, IngestReport]) -> None:
    """Before: never held (a compact removed the files under it)."""
    from buraco_log.archive import spark as engine

    root = local_archive[0]
    seen, table = held_while(lambda: engine.query(root, "SELECT count(*) AS n FROM events",
                                                  spark=spark), root)
    assert seen
    assert table.column("n").to_pylist() == [local_archive[1].events]
    assert not readers_held(root)  # released at its end


@pytest.mark.slow  # its canned sections: half a minute on the loaded machine
def test_a_spark_report_holds_the_readers_lock_while_it_reads(
        spark: Any, local_archive: tuple[Path, IngestReport]) -> None:
    from buraco_log.archive import spark as engine

    root = local_archive[0]
    seen, rep = held_while(lambda: engine.report(root, spark=spark), root)
    assert seen and rep.matches == local_archive[1].added
    assert not readers_held(root)


@pytest.mark.parametrize(("sql", "said"), [
    ("SELECT /*+ BROADCAST(m) */ * FROM matches m", "/*+ BROADCAST(m) */"),
    ("SELECT /*+ REPARTITION(100000) */ game_id FROM matches", "/*+ REPARTITION(100000) */"),
    ("SELECT game_id FROM (SELECT /*+  COALESCE(3)\n */ * FROM matches)",
     "/*+ COALESCE(3) */"),
    ("SELECT '/*+ not a hint */' AS a, m.* FROM matches m JOIN hands h /*x*/ ON true "
     "WHERE m.game_id IN (SELECT /*+ rebalance */ game_id FROM players)", "/*+ rebalance */"),
])
def test_a_hint_is_refused_as_written_not_by_a_class_name(spark: Any, sql: str,
                                                          said: str) -> None:
    """Before: "query: only read-only queries are allowed, not UnresolvedHint"."""
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError) as err:
        engine.check_sql(spark, sql)
    assert str(err.value) == f"query: hints are not allowed: {said}"


# -- a Spark query in its own process, and a local compact in another --------------------------

# The command line with a shorter wait for readers at the end of compact (5 s by default).
CLI = r"""
import sys
from buraco_log.archive import store
store.WRITER_WAIT = float(sys.argv[1])
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


@pytest.mark.slow  # its own JVM: a minute or more on the loaded machine
def test_a_local_compact_leaves_the_files_a_spark_query_reads(
        spark_corpus: SparkCorpus, tmp_path: Path) -> None:
    """The query process is stopped while it holds the lock, a compact merges the two
    batches it reads and leaves their files, and the query, let go, gives every row. Before:
    the query held no lock, so the compact removed its files."""
    why = spark_missing()
    if why is not None:
        if IN_CI:
            pytest.fail(f"CI must run the Spark tests: {why}")
        pytest.skip(why)
    site = tmp_path / "site"
    logs = sorted(str(p) for p in spark_corpus.a.glob("thirteen-quick-*.blog"))[:2]
    events = sum(ingest([log], site, jobs=1).events for log in logs)
    assert len(store.manifests(str(site))) == 2
    q = subprocess.Popen([EXE, "query", str(site), "SELECT count(*) AS n FROM events",
                          "--engine", "spark", "--master", "local[1]", "--format", "csv"],
                         text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not readers_held(site):
            assert q.poll() is None, ("the query ended holding no lock", q.communicate())
            assert time.monotonic() < deadline
            time.sleep(0.002)
        q.send_signal(signal.SIGSTOP)  # the lock stays held: it goes with the process
        c = subprocess.run([sys.executable, "-c", CLI, "0.2", "compact", str(site)], cwd=ROOT,
                           text=True, capture_output=True, timeout=120)
        assert c.returncode == 0, c.stderr
        assert "left in place for the queries still reading them" in c.stdout, c.stdout
        q.send_signal(signal.SIGCONT)
        out, err = q.communicate(timeout=300)
        assert q.returncode == 0, err
        assert out.split() == ["n", str(events)]
    finally:
        if q.poll() is None:
            q.send_signal(signal.SIGCONT)
            q.kill()
            q.communicate()
