"""The real command line (as installed), touching a marker file as it opens its query in DuckDB:
a probe signals it then, however long the start took on a loaded machine, instead of after a
fixed sleep (too early there, and a query of a trillion rows then ran on for minutes)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

QUERY_STARTED = """
import pathlib, sys
from buraco_log import archive
from buraco_log.archive import confine
marker, real = pathlib.Path(sys.argv[1]), archive.open_query
def open_query(*args, **kwargs):
    marker.touch()
    return real(*args, **kwargs)
archive.open_query = open_query
# the query's process may write its output alone (confine): and the marker's directory
real_confine = confine.confine
def confined(dirs=(), files=(), readable=None):
    return real_confine([*dirs, (str(marker.parent), confine.MAKE_REG | confine.WRITE_FILE)],
                        files, readable)
confine.confine = confined
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.entry import run
run()
"""


def wait_for(marker: Path, proc: subprocess.Popen[bytes] | subprocess.Popen[str],
             timeout: float = 60) -> None:
    """Until ``marker`` exists; fails at once if ``proc`` ended first, or after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"ended before its query: {proc.communicate()}")
        assert time.monotonic() < deadline, f"no query opened in {timeout} s"
        time.sleep(0.02)
