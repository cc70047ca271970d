"""A pooled ingest imports what its workers' first chunk imports before the pool forks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

CHILD = """
import sys
from buraco_log.archive import ingest as ingest_module
sys.modules.pop("pandas", None)  # not imported yet by anything here, whatever is installed
mod = sys.modules["buraco_log.archive.ingest"]
assert "pyarrow.compute" not in sys.modules, "imported before the pool: the probe proves nothing"
seen = {}
def fake_pool(*args, **kwargs):
    seen["compute"] = "pyarrow.compute" in sys.modules
    seen["pandas"] = "pandas" in sys.modules
    raise SystemExit(0 if seen["compute"] and (seen["pandas"] or not has_pandas) else 3)
import importlib.util
has_pandas = importlib.util.find_spec("pandas") is not None
mod.worker_pool = fake_pool
mod._run_pool(iter(()), 2, lambda out: None, lambda: None, False)
"""


@pytest.mark.slow
def test_a_pooled_ingest_imports_pyarrow_compute_and_pandas_before_its_workers_fork() -> None:
    # Forked workers inherit the coordinator's modules; imported only on first use, each worker
    # imported pandas (where the spark extra installs it) and pyarrow.compute again: 0.6 s of
    # CPU more for a 2-job ingest of 600 logs (1.9-2.4 s against 1.4-1.5).
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
