"""Fault probes, Spark engine: the report's `--timeout` (it was refused with `--engine spark`:
"a Spark report has no time limit"), which bounds the whole report, the wait at the readers'
gate included, as the local report's does; and `--threads` or `--jobs` given with `--master`,
which nothing reads there (they were ignored without a word)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from buraco_log.archive import IngestReport, ingest
from cli.main import app
from tests.archive.readers import gate_held, writer_at_the_gate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def site(local_archive: tuple[Path, IngestReport], tmp_path: Path) -> Path:
    shutil.copytree(local_archive[0], tmp_path / "site")
    return tmp_path / "site"


def test_a_spark_report_waiting_at_the_gate_stops_at_its_time_limit(spark: Any,
                                                                    site: Path) -> None:
    """Before: spark.report took no timeout, and waited at the gate for the writer."""
    from buraco_log.archive import spark as engine

    with writer_at_the_gate(site, 30.0):  # it ends when the reader goes, after this
        t0 = time.monotonic()
        with pytest.raises(engine.QueryTimeout, match=r"^report: stopped after the 1 s "):
            engine.report(site, spark=spark, timeout=1.0)
        took = time.monotonic() - t0
        assert gate_held(site)  # the limit, not the gate, ended it
    assert took < 15, took  # 1 s, and the cancelled group's wind-down (a loaded machine)


@pytest.mark.slow  # a JVM of its own
def test_the_spark_report_command_honours_its_timeout(site: Path) -> None:
    """Before: `--timeout 1` with `--engine spark` was a usage error (exit 2)."""
    out = site.parent / "r.html"
    with writer_at_the_gate(site, 120.0):
        p = subprocess.run([sys.executable, "-m", "cli", "report", str(site), "--engine",
                            "spark", "--master", "local[1]", "--timeout", "1", "-f", "html",
                            "-o", str(out)], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
        assert gate_held(site)
    assert p.returncode == 1 and p.stdout == "", p.stderr
    assert p.stderr.strip().splitlines()[-1] == (
        "buraco-log: error: report: stopped after the 1 s time limit (--timeout; 0 for no "
        f"limit); nothing was written to {out}")
    assert not out.exists()


@pytest.mark.parametrize("args", [
    ["query", "ARCH", "SELECT 1", "--threads", "4"],
    ["ingest", "LOGS", "-a", "ARCH", "--jobs", "3"],
])
def test_a_local_size_given_with_a_master_is_refused_naming_it(args: list[str],
                                                               tmp_path: Path) -> None:
    """Before: ignored without a word (`--master` decides), the run went on. No JVM starts."""
    arch, logs = tmp_path / "arch", tmp_path / "logs"
    logs.mkdir()
    ingest([str(logs)], arch)  # an archive with nothing in it
    made = sorted(os.listdir(arch))
    args = [str(arch) if a == "ARCH" else str(logs) if a == "LOGS" else a for a in args]
    r = CliRunner().invoke(app, [*args, "--engine", "spark", "--master", "local[1]"])
    option, value = args[-2:]
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"buraco-log: error: {option} {value}: sizes Spark's local mode "
                        "(local[N]) only; with --master the cluster's settings decide (--conf "
                        "spark.executor.cores=N)\n")
    assert sorted(os.listdir(arch)) == made  # no run started


@pytest.mark.parametrize("command", [["report"], ["query", "SELECT 1 AS n"]])
def test_an_archive_of_a_newer_layout_is_refused_before_spark_starts(
        command: list[str], tmp_path: Path) -> None:
    """Before: Spark started first (seconds to minutes), and only then said the version; here
    JAVA_HOME names no Java, so a start says that instead. No JVM starts."""
    arch = tmp_path / "arch"
    ingest([str(tmp_path)], arch)  # an archive with nothing in it
    (arch / "archive.json").write_text('{"format": "buraco_log archive", "version": 99}')
    args = [command[0], str(arch), *command[1:], "--engine", "spark"]
    r = CliRunner().invoke(app, args, env={"JAVA_HOME": str(tmp_path)})
    assert (r.exit_code, r.stdout) == (2, ""), r.output
    assert r.stderr == (f"buraco-log: error: {arch}: archive layout version 99, this "
                        "buraco_log reads version 2 only: use the buraco_log that wrote it "
                        "(a newer one); nothing was changed [archive.layout]\n")
