"""Speed probe 42: the archive commands that read (query, report, verify) never import pandas.

pyarrow imports pandas, where it is installed (the [spark] extra installs it), the first time
pa.array is given a list: flatten built its kind dictionary that way at import time, and every
query, report and verify paid some 0.2 s of CPU for a module it never used (hundreds of runs in
the test suite). Only ingest, which builds tables, needs it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Runs each command in one process, as the console script would, then says whether pandas
# was imported: after the command (its SystemExit) the process is still there to ask.
PROBE = """
import sys
sys.argv = ["buraco-log", *sys.argv[1:]]
from cli.main import app
try:
    app()
except SystemExit as done:
    code = done.code
print("pandas" in sys.modules, code, file=sys.stderr)
"""


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from buraco_log import log
    from buraco_log.archive import ingest
    from buraco_log.rules import preset
    from buraco_log.simulate import simulate_match

    root = tmp_path_factory.mktemp("speed42")
    (root / "logs").mkdir()
    log.write_log(root / "logs" / "m.blog", simulate_match(preset("thirteen-quick"), 2,
                                                           seed="speed42"))
    ingest([str(root / "logs")], root / "a")
    return root / "a"


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None,
                    reason="pandas is not installed: nothing could import it")
@pytest.mark.parametrize("args", [["query", "SELECT count(*) AS n FROM events", "-f", "csv"],
                                  ["report"], ["verify"]], ids=lambda a: a[0])
def test_a_reading_archive_command_does_not_import_pandas(archive: Path, args: list[str]
                                                         ) -> None:
    argv = [args[0], str(archive), *args[1:]]
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                       timeout=120, cwd=REPO, check=False)
    assert r.stderr.splitlines()[-1:] == ["False 0"], r
