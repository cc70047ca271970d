"""What a command's start imports: a log's `show` needs no worker pool (multiprocessing,
concurrent.futures) and no viewer command module; a `query` needs no pyarrow.compute and no
viewer. They were about 14% of `show`'s CPU and 10% of `query`'s, at every start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from buraco_log import archive
from tests.cli.probes import ROOT

GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"


def _imported(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "cli", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines()}


def test_show_starts_without_the_pool_or_the_viewer() -> None:
    imported = _imported("show", str(GOLDEN))
    assert "buraco_log.audit" in imported  # the measure reads what it should
    assert not imported & {"multiprocessing", "concurrent.futures", "buraco_log.audit.pool",
                           "cli.view_cmd", "tomllib"}  # tomllib: house rules, a config file


def test_query_starts_without_pyarrow_compute_or_the_viewer(tmp_path: Path) -> None:
    archive.ingest([str(GOLDEN)], str(tmp_path / "a"))
    imported = _imported("query", str(tmp_path / "a"), "select count(*) from matches")
    # its native module: importtime names no line "duckdb" once the package is imported
    # through importlib with the signals held off (buraco_log.archive), only its parts
    assert "_duckdb" in imported
    assert not imported & {"pyarrow.compute", "cli.view_cmd"}
