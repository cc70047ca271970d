"""Fault probes, archive: the query sandbox against what it already refuses (a query past its
memory spills nowhere, a statement hidden behind a look-alike of ``;`` or in a comment); and a
site engineer's year: logs of one name in two directories, a log changed after its ingest, a
batch dropped and its logs ingested again, and `compact` killed at every step, each held
against a fresh ingest of the same logs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest, query, store, views
from buraco_log.archive.compact import compact
from buraco_log.archive.fixity import verify_archive
from buraco_log.errors import ArchiveError
from buraco_log.log import read_events
from tests import brokenlogs
from tests.archive.filetree import sized_tree
from tests.archive.killed_at import KILLER

ROOT = Path(__file__).resolve().parents[2]


def test_a_query_past_its_memory_limit_spills_nowhere(three: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from inside the archive (DuckDB's default spill directory is `.tmp` in the working
    directory): the query runs out of memory in one line, and no file appears anywhere."""
    before = sized_tree(three)
    monkeypatch.chdir(three)
    assert query(three, "SELECT current_setting('temp_directory') AS t").to_pylist() == [
        {"t": ""}]
    with pytest.raises(ArchiveError, match=r"^query: out of memory under the 40MB limit"):
        query(three, "SELECT count(*) FROM (SELECT i, string_agg(i::VARCHAR) FROM "
                     "range(1500000) t(i) GROUP BY i)", memory_limit="40MB", bound=False)
    assert sized_tree(three) == before


SPILL_INTO = ["SET temp_directory = '{archive}'", "PRAGMA temp_directory = '{archive}'",
              "RESET temp_directory", "SET max_temp_directory_size = '1TB'"]


@pytest.mark.parametrize("sql", SPILL_INTO)
def test_the_spill_directory_cannot_be_set_by_the_check_nor_on_the_locked_connection(
        three: Path, sql: str) -> None:
    """Refused by the statement check, and by DuckDB itself on the locked connection."""
    import duckdb

    sql = sql.format(archive=three)
    with pytest.raises(ArchiveError, match=r"only read-only SELECT statements"):
        query(three, sql)
    con = views.connect(three)
    try:
        with pytest.raises(duckdb.Error, match=r"(?i)locked"):
            con.execute(sql)
        assert con.execute("SELECT current_setting('temp_directory')").fetchall() == [("",)]
    finally:
        con.close()


HIDDEN = [
    # a Greek question mark (U+037E) looks like ';' and is none
    ("SELECT 1\u037e COPY (SELECT 1) TO '{out}'", "Parser Error"),
    ("SELECT '; COPY (SELECT 1) TO ''{out}'''", None),  # a string
    ("CREATE TEMP VIEW matches AS SELECT 1", "not CREATE"),  # shadows a view
]


@pytest.mark.parametrize(("sql", "said"), HIDDEN, ids=[s[:26] for s, _ in HIDDEN])
def test_a_second_statement_hidden_in_the_text_never_runs(
        three: Path, tmp_path: Path, sql: str, said: str | None) -> None:
    out = tmp_path / "x.csv"
    sql = sql.format(out=out)
    if said is None:
        assert query(three, sql).num_rows == 1
    else:
        with pytest.raises(ArchiveError, match=said):
            query(three, sql)
    assert not out.exists()
    assert query(three, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 3}]


# -- a site engineer's year ----------------------------------------------------------------

# Order-free sums of every view, without what differs from one ingest to another (the batch,
# the time of the ingest): an archive fed log by log, compacted, dropped and fed again holds
# the same as one fresh ingest of the same logs. One query: a query opens the views again.
_NOT_THE_RUN = "EXCLUDE (batch, ingested_at)"
TABLES = ("matches", "hands", "events", "melds", "players", "errors")
SUMS = "SELECT " + ", ".join(
    f"(SELECT {{'n': count(*), 'h': bit_xor(hash(x))}} FROM (SELECT * "
    f"{_NOT_THE_RUN if t in ('matches', 'errors') else ''} FROM {t}) x) AS {t}" for t in TABLES)


def sums(archive: Path) -> dict[str, Any]:
    got: dict[str, Any] = query(archive, SUMS).to_pylist()[0]
    return got


@pytest.fixture(scope="module")
def logs(three: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The three matches and an unfinished log (refused), each in a directory of its own."""
    site = tmp_path_factory.mktemp("year")
    src = sorted((three.parent / "logs").glob("*.blog"))
    out = []
    for i, log in enumerate(src):
        (site / f"d{i}").mkdir()
        out.append(Path(shutil.copy(log, site / f"d{i}" / "match.blog")))
    (site / "live").mkdir()
    out.append(brokenlogs.write(site / "live" / "match.blog", read_events(src[0])[:-5]))
    return out


def test_logs_of_one_name_in_two_directories_are_two_matches(logs: list[Path],
                                                             tmp_path: Path) -> None:
    r = ingest([str(p.parent) for p in logs], tmp_path / "a")
    assert (r.added, r.duplicates, len(r.errors)) == (3, 0, 1)
    got = query(tmp_path / "a", "SELECT source_path FROM matches ORDER BY 1").to_pylist()
    assert [g["source_path"] for g in got] == [str(p) for p in logs[:3]]


@pytest.mark.slow  # five ingests: held already, kept out of the default run's budget
def test_a_log_changed_after_its_ingest_adds_a_match_and_a_drop_and_ingest_make_it_fresh(
        logs: list[Path], tmp_path: Path) -> None:
    """docs/archive.md, "A log changed after its ingest": the archive holds every version
    ever ingested under that path (committed batches are never rewritten); dropping the
    batches that hold the old one and ingesting again leaves what a fresh ingest holds."""
    site = tmp_path / "site"
    shutil.copytree(logs[0].parents[1], site)
    arch = tmp_path / "a"
    first = ingest([str(site / "d0"), str(site / "d1")], arch)
    shutil.copy(logs[2], site / "d0" / "match.blog")  # another match, the same name
    second = ingest([str(site / "d0"), str(site / "d1")], arch)
    assert (second.added, second.already_stored) == (1, 1)
    held = query(arch, "SELECT count(*) AS n FROM matches WHERE source_path = "
                       f"'{site / 'd0' / 'match.blog'}'").to_pylist()
    assert held == [{"n": 2}]
    fresh = tmp_path / "fresh"
    ingest([str(site / "d0"), str(site / "d1")], fresh)
    assert sums(arch)["matches"]["n"] == sums(fresh)["matches"]["n"] + 1
    store.drop_batches(str(arch), first.batches)
    again = ingest([str(site / "d0"), str(site / "d1")], arch)
    assert (again.added, again.already_stored) == (1, 1)
    assert sums(arch) == sums(fresh)
    assert verify_archive(str(arch)).ok


def _fed_log_by_log(logs: list[Path], arch: Path) -> None:
    for log in logs:
        ingest([str(log)], arch)
    assert len(store.manifests(str(arch))) == len(logs)
    for d, _dirs, names in os.walk(arch):  # copies of it are changed by the tests
        for n in names:
            os.chmod(os.path.join(d, n), 0o644)


@pytest.fixture(scope="module")
def year(logs: list[Path], tmp_path_factory: pytest.TempPathFactory
         ) -> tuple[Path, dict[str, Any]]:
    """An archive fed one log per ingest, and the sums of a fresh ingest of the same logs."""
    base = tmp_path_factory.mktemp("year-arch")
    _fed_log_by_log(logs, base / "fed")
    ingest([str(p) for p in logs], base / "fresh")
    return base / "fed", sums(base / "fresh")


KILLED = ("fsync", "replace", "unlink", "link", "rmdir")


def _compact(arch: Path, name: str, k: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", KILLER, name, str(k), "compact", str(arch)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


def _killed_then_run_again(year: tuple[Path, dict[str, Any]], name: str, k: int,
                           work: Path, left: str | None = None) -> None:
    """Compact a copy of the year's archive, killed at the ``k``-th call of ``os.<name>``
    (``left``: a pattern of what that kill must leave); it verifies and holds the fresh
    ingest's rows, and so it does after the next compact, which leaves nothing behind."""
    arch, want = year
    copy = work / f"{name}-{k}"
    shutil.copytree(arch, copy)
    killed = _compact(copy, name, k)
    assert killed.returncode == -9, killed.stderr
    if left is not None:
        assert list(copy.glob(left)), f"no {left}: kill it at another call"
    fixity = verify_archive(str(copy))
    assert fixity.ok, (name, k, fixity.problems)
    assert sums(copy) == want, (name, k)
    compact(str(copy))  # what the next compact does
    fixity = verify_archive(str(copy))
    assert fixity.ok and not fixity.leftovers, (name, k, fixity)
    assert sums(copy) == want, (name, k)
    assert len(store.manifests(str(copy))) == 1
    shutil.rmtree(copy)


@pytest.mark.parametrize(("k", "left"), [
    (13, "_ratings/.tmp-*"),
    pytest.param(9, "_index/.tmp-*", marks=pytest.mark.slow)])  # a compaction in a process
def test_compact_killed_writing_the_ratings_leaves_nothing_after_the_next_compact(
        year: tuple[Path, dict[str, Any]], tmp_path: Path, k: int, left: str) -> None:
    """The default run's twin of the loop below. The 13th os.replace renames the ratings'
    temporary file into place (6 parts, the record's, the key index's three files and its
    record, then it); the 9th the key index's first file. Before: the next compact, with
    nothing to merge, left `_ratings/.tmp-....parquet` for good, a leftover that verify said
    the next ingest or compact removes."""
    _killed_then_run_again(year, "replace", k, tmp_path, left=left)


@pytest.mark.slow  # every call of five os functions: about a hundred compactions
@pytest.mark.parametrize("name", KILLED)
def test_compact_killed_at_every_step_verifies_and_holds_a_fresh_ingests_rows(
        year: tuple[Path, dict[str, Any]], tmp_path: Path, name: str) -> None:
    count = tmp_path / "count"
    shutil.copytree(year[0], count)
    r = _compact(count, name, 0)
    assert r.returncode == 0, r.stderr
    total = int(r.stderr.split("calls ")[1])
    if name in ("fsync", "replace", "unlink"):
        assert total > 2, name  # a compaction of four batches makes these calls
    for k in range(1, total + 1):
        _killed_then_run_again(year, name, k, tmp_path)
