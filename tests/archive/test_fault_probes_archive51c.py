"""Fault probes, archive: an archive of an earlier layout (layout 1, frozen in
tests/archive/data, written by the buraco_log of that layout) and of a newer one. Every
command refuses it in one line naming both versions and the rule, changes nothing, and the
documented upgrade (its logs, listed from its own files, ingested into a new archive) holds
the same matches."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from buraco_log.archive import ingest, query, report, store
from buraco_log.archive.compact import compact
from buraco_log.archive.fixity import verify_archive
from buraco_log.errors import ArchiveError
from tests.archive.filetree import sized_tree

DATA = Path(__file__).resolve().parent / "data"
LAYOUT1 = DATA / "layout1"
LOGS1 = DATA / "layout1-logs"


@pytest.fixture
def old(tmp_path: Path) -> Path:
    a = tmp_path / "old"
    shutil.copytree(LAYOUT1, a)
    return a


def _attempts(a: Path, logs: Path) -> dict[str, object]:
    return {"query": lambda: query(a, "SELECT count(*) FROM matches"),
            "report": lambda: report(a), "verify": lambda: verify_archive(str(a)),
            "compact": lambda: compact(str(a)), "ingest": lambda: ingest([str(logs)], a),
            "drop": lambda: store.drop_batches(str(a), ["x"])}


def test_the_frozen_archive_is_of_layout_1() -> None:
    assert json.loads((LAYOUT1 / "archive.json").read_text())["version"] == 1
    events = duckdb.sql(f"SELECT * FROM read_parquet('{LAYOUT1}/events/**/*.parquet') "
                        "LIMIT 0").columns
    assert "pile" in events  # layout 2 stores no pile


def test_an_archive_of_layout_1_is_refused_by_every_command_in_one_line_naming_the_upgrade(
        old: Path) -> None:
    """Before: "... reads version 2 only: ingest its logs into a new archive", no rule,
    and no word of how to find the logs of an archive this buraco_log cannot read."""
    before = sized_tree(old)
    for name, attempt in _attempts(old, LOGS1).items():
        with pytest.raises(ArchiveError) as got:
            attempt()  # type: ignore[operator]
        line = str(got.value)
        assert line == (f"{old}: archive layout version 1, this buraco_log reads version 2 "
                        "only: upgrade it by ingesting its logs into a new archive "
                        "(docs/archive.md, \"Upgrading\", says how to list them); nothing "
                        "was changed [archive.layout]"), (name, line)
    assert sized_tree(old) == before


def test_an_archive_of_a_newer_layout_is_refused_naming_both_versions(old: Path) -> None:
    marker = old / "archive.json"
    marker.chmod(0o644)
    marker.write_text(json.dumps({"format": "buraco_log archive", "version": 3}))
    before = sized_tree(old)
    with pytest.raises(ArchiveError) as got:
        query(old, "SELECT 1")
    assert str(got.value) == (f"{old}: archive layout version 3, this buraco_log reads "
                              "version 2 only: use the buraco_log that wrote it (a newer "
                              "one); nothing was changed [archive.layout]")
    for name, attempt in _attempts(old, LOGS1).items():
        with pytest.raises(ArchiveError, match=r"layout version 3, .* version 2 only: "):
            attempt()  # type: ignore[operator]
        assert sized_tree(old) == before, name


@pytest.mark.slow  # an ingest and a query: the refusals above are the default run's
def test_the_documented_upgrade_holds_the_same_matches(tmp_path: Path) -> None:
    """docs/archive.md, "Upgrading": the logs listed from the old archive's own files, by
    plain DuckDB, and ingested into a new archive."""
    listed = duckdb.sql("SELECT DISTINCT source_path FROM read_parquet("
                        f"'{LAYOUT1}/matches/**/*.parquet') ORDER BY 1").fetchall()
    logs = [str(LOGS1 / Path(p).name) for (p,) in listed]  # the logs moved since
    new = tmp_path / "new"
    assert ingest(logs, new).added == len(logs) == 2
    old_rows = duckdb.sql("SELECT match_id, digest, events, hands, winner_side FROM read_parquet("
                          f"'{LAYOUT1}/matches/**/*.parquet') ORDER BY 1").fetchall()
    new_rows = query(new, "SELECT match_id, digest, events, hands, winner_side FROM matches "
                          "ORDER BY 1")
    assert [tuple(r.values()) for r in new_rows.to_pylist()] == old_rows
    assert verify_archive(str(new)).ok
