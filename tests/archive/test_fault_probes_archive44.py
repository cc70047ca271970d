"""Fault probes, round 44, of the DuckDB archive.

1. Fixtures: a test module never defines a fixture under the name of one its conftest holds
   (probe 42's ``three`` ingested other logs than the shared ``three``: which one a test saw
   hung on the module it sat in).
2. A partition directory that is a symbolic link out of the archive: ingest and compact
   refuse it (compact wrote its merged part where the link led); an archive that is itself a
   link is read and written.
3. Held: a part swapped for another archive's part of the same name and size (verify and
   report read its bytes), SQL with comments, ``;`` in strings, several statements, CTEs
   reaching outside the views, a huge CSV into a closed pipe, the report of an empty archive.
4. A match stored under a match id another stored match holds (other deals) is named by the
   ingest's summary and JSON (both were stored without a word); tests/spark/..._spark44
   holds the Spark engine to the same."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest, query, store
from buraco_log.errors import ArchiveError
from tests.archive.one_id import one_id_matches
from tests.cli.probes import ROOT, cli, one_error_line

TESTS = ROOT / "tests"
LOG = ROOT / "examples" / "sim" / "burako-2p-000000.blog"
AREAS = ("archive", "view", "spark")


def fixtures(path: Path) -> set[str]:
    """The names of the functions of ``path`` decorated as pytest fixtures (``name=`` too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            target = call.func if call else dec
            if ast.unparse(target) not in ("pytest.fixture", "fixture"):
                continue
            named = [k.value for k in (call.keywords if call else []) if k.arg == "name"]
            found.add(named[0].value if named and isinstance(named[0], ast.Constant)
                      else node.name)
    return found


@pytest.mark.parametrize("area", AREAS)
def test_no_test_module_shadows_a_fixture_of_its_conftest(area: str) -> None:
    """Before: test_fault_probes_archive42 (``three``, ``arch``), test_cli_conventions2,
    test_fault_probes_archive38, test_fault_probes_archive42b and test_fault_probes_damage
    (``arch``) each defined again a fixture tests/archive/conftest.py holds."""
    shared = fixtures(TESTS / "conftest.py") | fixtures(TESTS / area / "conftest.py")
    assert "arch" in shared or area != "archive"  # the scan reads what it must see
    clashes = {p.name: sorted(fixtures(p) & shared)
               for p in sorted((TESTS / area).glob("*.py")) if p.name != "conftest.py"}
    assert {k: v for k, v in clashes.items() if v} == {}


# -- 2. links: the archive itself, and a directory inside it ---------------------------------

def test_an_archive_that_is_a_link_is_read_and_written_where_it_leads(
        arch: Path, tmp_path: Path) -> None:
    """Held: the link is the archive's name (resolved once), nothing inside it is a link."""
    link = tmp_path / "link"
    link.symlink_to(arch)
    assert cli("ingest", LOG, "--archive", link).returncode == 0
    r = cli("query", link, "SELECT count(*) AS n FROM matches", "-f", "csv")
    assert (r.returncode, r.stdout) == (0, "n\n4\n"), r
    assert cli("compact", link).returncode == 0  # three CLI runs: each command's own resolve
    assert link.is_symlink() and len(store.manifests(str(arch))) == 1


def _linked_partition(arch: Path, outside: Path, table: str = "matches") -> Path:
    """``arch``'s first partition directory of ``table`` moved to ``outside``, a link to it
    left in its place; returns the link."""
    part = sorted((arch / table).glob("preset=*"))[0]
    shutil.move(part, outside)
    part.symlink_to(outside)
    return part


@pytest.mark.parametrize("command", ["ingest", "compact"])
def test_a_partition_directory_linking_out_of_the_archive_is_refused_by_writers(
        arch: Path, tmp_path: Path, command: str) -> None:
    """Before: exit 0. Ingest read the committed files where the link led; compact read them,
    wrote its merged part there (out of the archive, where nothing checks it) and left the
    replaced part beside it: "every row kept"."""
    outside = tmp_path / "outside"
    link = _linked_partition(arch, outside)
    before, tree_before = sorted(os.listdir(outside)), _files(outside)
    args = ("ingest", LOG, "--archive", arch) if command == "ingest" else ("compact", arch)
    line = one_error_line(cli(*args), 1)
    assert line == f"buraco-log: error: {link}: symbolic links are not allowed inside an archive"
    assert (sorted(os.listdir(outside)), _files(outside)) == (before, tree_before)
    assert not list((arch / store.STAGING).glob("*"))  # nothing staged left behind


def test_a_new_partition_directory_that_is_a_link_gets_no_part(arch: Path,
                                                               tmp_path: Path) -> None:
    """Before: the first match of a preset went through a link placed where its partition
    would be: its committed part out of the archive, where nothing checks it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    link = arch / "matches" / "preset=burako"
    link.symlink_to(outside)
    line = one_error_line(cli("ingest", LOG, "--archive", arch), 1)
    assert line == f"buraco-log: error: {link}: symbolic links are not allowed inside an archive"
    assert os.listdir(outside) == [] and len(store.manifests(str(arch))) == 3
    assert not list((arch / store.STAGING).iterdir())  # nothing staged is left to clean up
    link.unlink()
    assert cli("ingest", LOG, "--archive", arch).returncode == 0


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# -- 3. a part replaced by another archive's part of the same name ---------------------------

def test_a_part_swapped_for_another_archives_part_of_the_same_name_is_noticed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Held: two archives that gave one batch id to one log hold two matches files of one
    name and size, their ``ingested_at`` apart. Swapped, only the size check of every
    command passes it; verify and report read the bytes against the record (query does not,
    as docs/archive.md says)."""
    monkeypatch.setattr(store, "new_batch_id", lambda: "20261206T000000Z-deadbeef")
    a, b = tmp_path / "a", tmp_path / "b"
    assert ingest([str(LOG)], a).added == 1
    time.sleep(0.01)
    assert ingest([str(LOG)], b).added == 1
    rel = next(str(p.relative_to(a)) for p in a.glob("matches/*/*/*.parquet"))
    assert (a / rel).stat().st_size == (b / rel).stat().st_size
    assert (a / rel).read_bytes() != (b / rel).read_bytes()
    (a / rel).chmod(0o644)
    shutil.copyfile(b / rel, a / rel)
    verify = cli("verify", a)
    assert verify.returncode == 1 and f"{a / rel}: " in verify.stderr
    assert verify.stderr.rstrip().endswith(" [archive.part_changed]"), verify.stderr
    line = one_error_line(cli("report", a), 1)
    assert line.startswith(f"buraco-log: error: {a / rel}: damaged archive file: its bytes "
                           "changed since batch 20261206T000000Z-deadbeef committed it"), line


# -- 4. SQL: comments, statements, strings, CTEs ----------------------------------------------

@pytest.mark.parametrize(("sql", "rows"), [
    ("SELECT 1 AS a -- a comment", [{"a": 1}]),
    ("/* first */ SELECT 1 AS a /* ; SELECT 2 */", [{"a": 1}]),
    ("SELECT 1 AS a; -- one statement, then a comment", [{"a": 1}]),
    ("SELECT 'x;y' AS a;", [{"a": "x;y"}]),
    ("SELECT $$x;y$$ AS a", [{"a": "x;y"}]),
    ("SELECT 1 AS a -- ; DROP VIEW matches", [{"a": 1}]),
    ("WITH matches AS (SELECT 7 AS a) SELECT a FROM matches", [{"a": 7}]),
])
def test_sql_that_is_one_statement_runs(arch: Path, sql: str, rows: list[dict[str, Any]]
                                        ) -> None:
    """Held: a ``;`` in a comment, a string or a dollar-quoted string is no second
    statement; a CTE may shadow a view's name (its own rows)."""
    assert query(arch, sql).to_pylist() == rows


@pytest.mark.parametrize(("sql", "said"), [
    ("SELECT 1; SELECT 2", "query: exactly one statement is allowed, got 2"),
    ("WITH x AS (SELECT * FROM read_parquet('/etc/passwd')) SELECT * FROM x",
     'Cannot access file "/etc/passwd" - file system operations are disabled'),
    ("WITH x AS (SELECT * FROM '/etc/passwd') SELECT * FROM x",
     "Table with name /etc/passwd does not exist"),
    ("WITH x AS (SELECT * FROM read_csv('/etc/passwd')) SELECT * FROM x",
     'Cannot access file "/etc/passwd" - file system operations are disabled'),
])
def test_sql_that_reaches_outside_the_views_is_refused(arch: Path, sql: str, said: str) -> None:
    with pytest.raises(ArchiveError, match=re.escape(said)):
        query(arch, sql)


def test_a_huge_csv_into_a_closed_pipe_stops_quietly_with_141(arch: Path) -> None:
    """Held: ``| head -1`` of 300 million rows: the header, no traceback, exit 141 (docs/cli.md
    lists it), within moments."""
    t0 = time.monotonic()
    done = subprocess.run(
        f"{sys.executable} -m cli query {arch} 'SELECT * FROM range(300000000) t(i)' -f csv "
        "--timeout 0 | head -1; echo \"${PIPESTATUS[0]}\" >&2", shell=True,
        executable="/bin/bash", capture_output=True, text=True, cwd=ROOT, timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.stdout == "i\n" and done.stderr == "141\n", done
    assert time.monotonic() - t0 < 30


# -- 5. report of an empty archive ------------------------------------------------------------

def test_the_report_of_an_archive_without_a_match_has_every_section_empty(
        tmp_path: Path) -> None:
    arch = tmp_path / "empty"
    store.create_archive(str(arch))
    said = {fmt: cli("report", arch, "-f", fmt) for fmt in ("json", "table", "html")}
    assert all((r.returncode, r.stderr) == (0, "") for r in said.values()), said
    doc = json.loads(said["json"].stdout)
    assert (doc["matches"], doc["events"]) == (0, 0)
    n = len(doc["sections"])
    assert n > 0 and all(s["rows"] == [] for s in doc["sections"])
    assert said["table"].stdout.count("\n(no data)\n") == n, said["table"].stdout
    assert said["html"].stdout.count('<p class="note">No data.</p>') == n


# -- 6. a match id that another stored match holds ---------------------------------------------

@pytest.fixture(scope="module")
def one_id(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``a.blog`` and ``b.blog``: two clean matches (other deals) under one match id."""
    return one_id_matches(tmp_path_factory.mktemp("one-id"))


def _line(src: Path, match_id: str) -> str:
    return (f"{src / 'b.blog'}: stored, but match id {match_id} is held by another stored "
            f"match ({src / 'a.blog'}): two matches under one id (`buraco-log diff` compares "
            "the logs)")


def test_a_match_stored_under_another_matchs_id_is_named(one_id: tuple[Path, str],
                                                         tmp_path: Path) -> None:
    """Before: both stored without a word (audit of the two says "another log of the same
    match"), and the report counted the one match id as two matches."""
    src, match_id = one_id
    arch = tmp_path / "arch"
    first = cli("ingest", src / "a.blog", "--archive", arch)
    assert first.returncode == 0 and len(first.stdout.splitlines()) == 1, first
    done = cli("ingest", src / "b.blog", "--archive", arch)
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.stdout.splitlines()[1:] == [_line(src, match_id)]
    held = query(arch, "SELECT match_id, count(DISTINCT game_id) AS n FROM matches "
                       "GROUP BY match_id").to_pylist()
    assert held == [{"match_id": match_id, "n": 2}]  # both stored, as before


def test_one_run_names_the_later_of_two_matches_under_one_id(one_id: tuple[Path, str],
                                                             tmp_path: Path) -> None:
    src, match_id = one_id
    done = cli("ingest", src, "--archive", tmp_path / "arch", "-f", "json")
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["shared_match_ids"] == [
        {"path": str(src / "b.blog"), "match_id": match_id, "others": [str(src / "a.blog")]}]


def test_a_copy_or_another_id_is_no_shared_id(one_id: tuple[Path, str], tmp_path: Path) -> None:
    """A copy of a stored match under other bytes (its JSON Lines form) is a duplicate."""
    src, _ = one_id
    arch = tmp_path / "arch"
    assert ingest([str(src / "a.blog"), str(LOG)], arch).shared_match_ids == []
    assert cli("convert", src / "a.blog", "-o", tmp_path / "a.jsonl").returncode == 0
    again = ingest([str(tmp_path / "a.jsonl")], arch)
    assert (again.added, again.duplicates, again.shared_match_ids) == (0, 1, [])
