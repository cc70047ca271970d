"""Fault probes, Spark engine: the query check parsed in a thread where the JVM had no active
session, so with Spark's default settings (variable substitution on), and a refusal named the
value of ``${env:NAME}`` or ``${system:NAME}``; statements that were already refused; and
what the Spark report checks of the committed files' bytes (their sizes, not their hashes)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport
from buraco_log.archive.fixity import verify_archive
from buraco_log.errors import ArchiveError


def _refusal(spark: Any, archive: Path, sql: str) -> str:
    from buraco_log.archive import spark as engine

    with pytest.raises(ArchiveError) as err:
        engine.query(archive, sql, spark=spark)
    text = str(err.value)
    assert "\n" not in text
    return text


SUBSTITUTED = ["system:java.home", "env:PATH"]


def _in_a_new_thread(spark: Any, sql: str) -> str:
    """The check's refusal of ``sql``, made in a thread of its own, as a query's is (a new
    JVM thread, with no active session of its own)."""
    from buraco_log.archive import spark as engine

    said: list[str] = []

    def run() -> None:
        try:
            engine.check_sql(spark, sql)
        except ArchiveError as exc:
            said.append(str(exc))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert len(said) == 1, sql
    return said[0]


@pytest.mark.parametrize("name", SUBSTITUTED)
def test_a_refused_query_names_no_value_of_the_environment_or_javas_properties(
        spark: Any, name: str) -> None:
    """Before: `SELECT * FROM `${system:java.home}`` was "only the archive's views can be
    read (...), not [/usr/lib/jvm/...]", and `${env:PATH}` named the JVM's PATH."""
    kind, _, key = name.partition(":")
    system = spark._jvm.java.lang.System
    value = str(system.getProperty(key) if kind == "system" else system.getenv(key))
    assert len(value) > 4
    said = _in_a_new_thread(spark, f"SELECT * FROM `${{{name}}}`")
    assert said.endswith(f"not [${{{name}}}]"), said  # the name as written
    assert value not in said


@pytest.mark.slow  # the views' start-up: 30 s on two loaded cores
def test_a_query_through_the_engine_names_no_value_of_javas_properties(
        spark: Any, local_archive: tuple[Path, IngestReport]) -> None:
    home = str(spark._jvm.java.lang.System.getProperty("java.home"))
    said = _refusal(spark, local_archive[0], "SELECT * FROM `${system:java.home}`")
    assert said.endswith("not [${system:java.home}]") and home not in said, said


HOLDS = [
    ("SET -v", "only read-only"),
    ("SELECT `reflect`('java.lang.System', 'getProperty', 'user.home')", "not allowed"),
    ("SELECT * FROM STREAM matches", "query:"),
    ("SELECT 1\u037e DROP VIEW matches", "query:"),  # a Greek question mark, not ';'
    ("\uff33\uff25\uff2c\uff25\uff23\uff34 1", "query:"),  # fullwidth SELECT
]


@pytest.mark.slow  # already refused; each opens the views (4 s)
@pytest.mark.parametrize(("sql", "said"), HOLDS, ids=[s[:24] for s, _ in HOLDS])
def test_statements_past_a_select_are_refused_in_one_line(
        spark: Any, local_archive: tuple[Path, IngestReport], sql: str, said: str) -> None:
    assert said in _refusal(spark, local_archive[0], sql)
    assert spark.catalog.tableExists("matches")


def _part(archive: Path) -> Path:
    return next(archive.glob("events/preset=*/month=*/part-*.parquet"))


def test_the_spark_report_refuses_a_part_of_another_size_and_verify_names_a_same_size_change(
        spark: Any, local_archive: tuple[Path, IngestReport], tmp_path: Path) -> None:
    """What docs/spark.md says the Spark report checks on the driver: every committed file's
    size against its batch record (one lstat each); a change of the same size is left to
    `verify`, which reads every byte."""
    from buraco_log.archive import spark as engine

    site = tmp_path / "site"
    shutil.copytree(local_archive[0], site)
    victim = _part(site)
    os.chmod(victim, 0o644)
    with open(victim, "ab") as f:
        f.write(b"\0")
    with pytest.raises(ArchiveError, match=r"damaged archive file: .* bytes, where batch") as err:
        engine.report(site, spark=spark)
    assert str(victim) in str(err.value) and "\n" not in str(err.value)
    # same size, one byte changed: the report's driver does not read it, verify names it
    with open(victim, "r+b") as f:
        f.truncate(victim.stat().st_size - 1)
        f.seek(8)
        first = f.read(1)
        f.seek(8)
        f.write(bytes([first[0] ^ 0xFF]))
    problems = verify_archive(str(site)).problems
    assert [(p.path, p.rule) for p in problems] == [
        (str(victim.relative_to(site)), "archive.part_changed")]
