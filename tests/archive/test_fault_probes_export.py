"""Fault probes of `query` output and errors as real processes on the shared archive: a glob
or a never-committed part name in the user's SQL said as DuckDB's refusal (not as an archive
that changed under the query)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.archive.conftest import Archived

REPO = Path(__file__).resolve().parents[2]


def _run(*args: object, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("where", ["matches/*/*/*.parquet", "matches/**/*.parquet",
                                   "_ratings/*.parquet", "matches/part-never.parquet"])
def test_a_path_the_sql_names_that_was_never_committed_is_not_an_archive_that_changed(
        archived: Archived, where: str) -> None:
    # before: "the archive changed while the query ran (.../*.parquet was removed by a
    # compact or a batch drop ...): run it again", for a glob that no run could ever read
    path = os.path.join(os.path.realpath(archived.path), where)
    r = _run("query", archived.path, f"SELECT count(*) FROM read_parquet('{path}')")
    assert r.returncode == 1 and r.stdout == "", r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "disabled by configuration" in lines[0], r.stderr
    assert "changed while the query ran" not in r.stderr
