"""Fault probes, Spark engine: a log written over since an earlier ingest is named in the
report as the local engine names it (tests/archive/test_fault_probes_archive51.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest

SIM = Path(__file__).resolve().parents[2] / "examples" / "sim"


@pytest.mark.spark
@pytest.mark.slow  # a Spark ingest: tens of seconds on the loaded machine
def test_spark_names_a_log_written_over_as_local(spark: Any, tmp_path: Path) -> None:
    from buraco_log.archive import spark as engine

    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(SIM / "thirteen-quick-2p-000000.blog", site / "m.blog")
    for name in ("spark", "local"):
        ingest([site], tmp_path / name)
    os.unlink(site / "m.blog")
    shutil.copy(SIM / "thirteen-quick-4p-000000.blog", site / "m.blog")
    ours = engine.ingest([site], tmp_path / "spark", spark=spark)
    local = ingest([site], tmp_path / "local")
    assert ours.reused_paths == local.reused_paths
    assert [(r.path, r.earlier) for r in ours.reused_paths] == [
        (str(site / "m.blog"), ["sim-thirteen-quick-2p-c2fe5768311e-000000"])]
