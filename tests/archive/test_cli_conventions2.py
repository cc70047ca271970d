"""The archive commands keep the CLI's conventions: ``-o -`` is standard output (it wrote a
file named ``-``), ``-f text`` is ``-f table``, and an archive path that is a file is a usage
error (exit 2) in ingest as in query and report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.archive import ingest
from tests.archive.corpus import make_corpus

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL, env=_env())


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def two_matches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("conv")
    logs = make_corpus(str(base / "logs"), 2, seed="conv")
    ingest(logs, base / "archive")
    return base / "archive"


@pytest.mark.parametrize("command", [
    ["query", "SELECT count(*) AS n FROM matches", "-f", "csv"],
    ["report", "-f", "json"],
])
def test_dash_output_is_standard_output(two_matches: Path, tmp_path: Path,
                                        command: list[str]) -> None:
    to_stdout = cli(command[0], str(two_matches), *command[1:], cwd=tmp_path)
    dash = cli(command[0], str(two_matches), *command[1:], "-o", "-", cwd=tmp_path)
    assert (dash.returncode, dash.stderr) == (0, "")
    assert dash.stdout == to_stdout.stdout != ""
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("command", [
    ["query", "SELECT count(*) AS n FROM matches"],
    ["report"],
])
def test_text_is_table(two_matches: Path, tmp_path: Path, command: list[str]) -> None:
    table = cli(command[0], str(two_matches), *command[1:], "-f", "table", cwd=tmp_path)
    text = cli(command[0], str(two_matches), *command[1:], "-f", "text", cwd=tmp_path)
    assert table.returncode == text.returncode == 0
    assert text.stdout == table.stdout != ""


def test_parquet_to_standard_output_is_a_whole_file(two_matches: Path, tmp_path: Path) -> None:
    """`-o -` as `-o /dev/stdout` (it was refused: "needs --output FILE"); a terminal is
    refused (tests/cli/test_fault_probes_cli44.py)."""
    import pyarrow.parquet as pq

    with open(tmp_path / "out.parquet", "wb") as out:
        r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(two_matches),
                            "SELECT 1 AS x", "-f", "parquet", "-o", "-"], cwd=tmp_path,
                           stdout=out, stderr=subprocess.PIPE, text=True, timeout=120,
                           check=False, stdin=subprocess.DEVNULL, env=_env())
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert pq.read_table(tmp_path / "out.parquet").to_pylist() == [{"x": 1}]


def test_an_archive_that_is_a_file_is_a_usage_error_everywhere(two_matches: Path, tmp_path: Path
                                                               ) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not an archive")
    logs = sorted((two_matches.parent / "logs").glob("*.blog"))
    runs = [cli("ingest", str(logs[0]), "-a", str(afile), cwd=tmp_path),
            cli("query", str(afile), "SELECT 1", cwd=tmp_path),
            cli("report", str(afile), cwd=tmp_path)]
    assert [r.returncode for r in runs] == [2, 2, 2]
    assert all(len(r.stderr.splitlines()) == 1 and str(afile) in r.stderr for r in runs)
    assert afile.read_text() == "not an archive"
