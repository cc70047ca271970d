"""Fault probes, Spark engine: the report's `--timeout` (it was refused with `--engine spark`:
"a Spark report has no time limit"), which bounds the whole report, the wait at the readers'
gate included, as the local report's does."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport
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
