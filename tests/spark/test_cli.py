"""`--engine spark` from the command line, in real subprocesses: one-line errors when the extra
or Java is missing, usage errors, and (slow) ingest, report, query and spark-submit end to end."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport
from tests.spark.conftest import SparkCorpus, spark_missing

EXE = shutil.which("buraco-log") or "buraco-log"
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def run(args: list[str], env: dict[str, str] | None = None, timeout: float = 600
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def needs_spark() -> None:
    why = spark_missing()
    if why is not None:
        if IN_CI:
            pytest.fail(f"CI must run the Spark tests: {why}")
        pytest.skip(why)


@pytest.fixture
def hidden_pyspark(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``import pyspark`` fails, as without the extra."""
    shim = tmp_path / "shim" / "pyspark"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError(\"No module named 'pyspark'\")\n")
    old = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": str(shim.parent) + (os.pathsep + old if old else "")}


@pytest.fixture
def hidden_java(tmp_path: Path) -> dict[str, str]:
    """PATH without java, no JAVA_HOME: the Python and buraco-log are still found."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("buraco-log", "python", "python3"):
        src = shutil.which(name)
        if src:
            (bin_dir / name).symlink_to(src)
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin/nonexistent", "JAVA_HOME": ""}
    return env


COMMANDS = [
    ["ingest", "LOGS", "--archive", "ARCH", "--engine", "spark"],
    ["query", "ARCH", "SELECT count(*) FROM matches", "--engine", "spark"],
    ["report", "ARCH", "--engine", "spark"],
]


def fill(args: list[str], logs: Path, arch: Path) -> list[str]:
    return [str(logs) if a == "LOGS" else str(arch) if a == "ARCH" else a for a in args]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_without_the_extra_spark_commands_say_what_to_install_in_one_line(
        args: list[str], hidden_pyspark: dict[str, str],
        local_archive: tuple[Path, IngestReport], spark_corpus: SparkCorpus) -> None:
    r = run(fill(args, spark_corpus.a, local_archive[0]), hidden_pyspark)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1, r.stderr
    assert "--engine spark needs pyspark" in r.stderr
    assert "pip install 'buraco-log[spark]'" in r.stderr


def test_without_the_extra_everything_else_still_works(
        hidden_pyspark: dict[str, str], local_archive: tuple[Path, IngestReport]) -> None:
    r = run(["query", str(local_archive[0]), "SELECT count(*) AS n FROM matches", "-f", "json"],
            hidden_pyspark)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [{"n": local_archive[1].added}]


@pytest.mark.spark
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_without_java_spark_commands_say_what_to_install_in_one_line(
        args: list[str], hidden_java: dict[str, str],
        local_archive: tuple[Path, IngestReport], spark_corpus: SparkCorpus,
        tmp_path: Path) -> None:
    needs_spark()
    arch = local_archive[0]
    if args[0] == "ingest":
        arch = tmp_path / "new"
    r = run(fill(args, spark_corpus.a, arch), hidden_java)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert "--engine spark needs Java" in r.stderr
    assert "openjdk-17-jre-headless" in r.stderr
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("extra", [["--master", "local[2]"], ["--conf", "a=b"]])
def test_spark_options_without_the_spark_engine_are_a_usage_error(
        extra: list[str], local_archive: tuple[Path, IngestReport]) -> None:
    r = run(["report", str(local_archive[0]), *extra])
    assert (r.returncode, r.stdout) == (2, "")
    assert "--master and --conf go with --engine spark" in r.stderr


def test_a_conf_that_is_not_key_value_is_a_usage_error(
        local_archive: tuple[Path, IngestReport]) -> None:
    r = run(["report", str(local_archive[0]), "--engine", "spark", "--conf", "novalue"])
    assert (r.returncode, r.stdout) == (2, "")
    assert "KEY=VALUE" in r.stderr


@pytest.mark.slow
@pytest.mark.spark
def test_ingest_report_and_query_on_spark_from_the_command_line(
        spark_corpus: SparkCorpus, local_archive: tuple[Path, IngestReport],
        tmp_path: Path) -> None:
    """Three JVMs: the commands as a user runs them, against the local engine's answers."""
    needs_spark()
    from buraco_log.archive.spark import table_checksums

    arch = tmp_path / "arch"
    r = run(["ingest", str(spark_corpus.root), "--archive", str(arch), "--engine", "spark",
             "--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=4",
             "--format", "json"])
    assert r.returncode == 1, r.stderr  # the corpus holds refused logs
    rep: dict[str, Any] = json.loads(r.stdout)
    assert rep["added"] == local_archive[1].added
    assert table_checksums(arch) == table_checksums(local_archive[0])
    ours = run(["report", str(arch), "--engine", "spark", "--format", "json", "--top", "0"])
    ref = run(["report", str(arch), "--format", "json", "--top", "0"])
    assert ours.returncode == ref.returncode == 0, ours.stderr
    mine, theirs = json.loads(ours.stdout), json.loads(ref.stdout)
    for a, b in zip(mine["sections"], theirs["sections"], strict=True):
        assert (a["name"], a["columns"]) == (b["name"], b["columns"])
        assert json.dumps(a["rows"]) == json.dumps(b["rows"]) or \
            [[str(v) for v in r] for r in a["rows"]] == [[str(v) for v in r] for r in b["rows"]]
    q = run(["query", str(arch), "SELECT * FROM parquet.`/etc`", "--engine", "spark"])
    assert (q.returncode, q.stdout) == (1, "")
    assert "only the archive's views" in q.stderr and q.stderr.count("\n") == 1


@pytest.mark.slow
@pytest.mark.spark
def test_the_spark_submit_entry_point(spark_corpus: SparkCorpus,
                                      local_archive: tuple[Path, IngestReport],
                                      tmp_path: Path) -> None:
    needs_spark()
    import pyspark

    from buraco_log.archive import spark as engine

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    arch = tmp_path / "arch"
    r = subprocess.run(
        [str(submit), "--master", "local[2]", "--conf", f"spark.pyspark.python={sys.executable}",
         engine.__file__, "ingest", str(spark_corpus.root), "--archive", str(arch)],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable})
    assert r.returncode == 1, r.stderr[-2000:]  # refused logs among the corpus
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["added"] == local_archive[1].added
    assert engine.table_checksums(arch) == engine.table_checksums(local_archive[0])
