"""An empty path given to an archive command (an unset variable: `ingest "$LOGS" -a A`) is a
usage line naming the argument or option. It was Path(""), that is ".": `ingest '' -a A`
ingested every log under the current directory, `query -o ''` was an internal error."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
_ARCHIVE_OPT = "'--archive' / '-a' (env var: 'BURACO_LOG_ARCHIVE')"


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("archive") / "arc"
    done = _cli(ROOT, "ingest", str(LOG), "-a", str(where))
    assert done.returncode == 0, done.stderr
    return where


@pytest.mark.parametrize(("args", "named"), [
    (("ingest", "", "-a", "{a}"), "'SOURCES'"),
    (("ingest", "match.blog", "-a", ""), _ARCHIVE_OPT),
    (("query", "", "SELECT 1"), "'[ARCHIVE]'"),
    (("report", ""), "'[ARCHIVE]'"),
    (("compact", ""), "'[ARCHIVE]'"),
    (("query", "-a", "", "SELECT 1"), _ARCHIVE_OPT),
])
def test_an_empty_path_is_a_usage_line_and_nothing_is_touched(
        tmp_path: Path, archive: Path, args: tuple[str, ...], named: str) -> None:
    shutil.copyfile(LOG, tmp_path / "match.blog")  # what '.' would have ingested
    before = sorted(p.name for p in archive.rglob("*"))
    done = _cli(tmp_path, *(a.replace("{a}", str(archive)) for a in args))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"buraco-log: usage: Invalid value for {named}: an empty name (an unset variable?)"), lines
    assert done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["match.blog"]
    assert sorted(p.name for p in archive.rglob("*")) == before


@pytest.mark.parametrize("args", [("query", "{a}", "SELECT 1", "-o", ""),
                                  ("report", "{a}", "-o", "")])
def test_an_empty_output_name_is_the_error_line_view_and_convert_give(
        tmp_path: Path, archive: Path, args: tuple[str, ...]) -> None:
    """As `view -o ''` and `convert -o ''` say it (it was typer's usage wording here)."""
    before = sorted(p.name for p in archive.rglob("*"))
    done = _cli(tmp_path, *(a.replace("{a}", str(archive)) for a in args))
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "buraco-log: error: --output '': an empty name; name the file (or '-' for stdout)"]
    assert done.stdout == "" and list(tmp_path.iterdir()) == []
    assert sorted(p.name for p in archive.rglob("*")) == before
