"""A club's year of matches holding what is no log: each entry one line naming its rule.

Before: a FIFO, a device or a file the auditor may not read said `unreadable: ...` with no
rule (a damaged header said `[log.header]`); a directory named like a log (`m12.blog/`, made by
a mistaken mkdir or an unzip) holding no log was passed over unsaid, and so was an empty
directory given beside other paths.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log import log
from tests.log.cli_run import REPO
from tests.signing.helpers import match


def _as_other_user() -> list[str] | None:
    """The command prefix that runs as a user who cannot read a mode-0 file: none needed for
    an ordinary user; root reads every file, so setpriv to nobody; None if it cannot be."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return None if setpriv is None else [
        setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture(scope="module")
def club() -> Iterator[Path]:
    """A season directory: one good log and every kind of entry that is none, in a tree
    anyone may enter (the batch runs as another user when the tests run as root)."""
    top = Path(tempfile.mkdtemp(prefix="club51-"))
    try:
        top.chmod(0o755)
        season = top / "2026"
        season.mkdir(mode=0o755)
        log.write_log(season / "a-good.blog", match(seed="club51"))
        (season / "a-good.blog").chmod(0o644)
        os.mkfifo(season / "b-fifo.blog")  # no writer: opening it to read would block
        os.symlink("/dev/zero", season / "c-device.blog")  # never ends
        (season / "d-empty.blog").write_bytes(b"")
        with open(season / "e-sparse.blog", "wb") as f:
            f.truncate(2 << 30)  # 2 GiB of holes: no disk used
        shutil.copyfile(season / "a-good.blog", season / "f-secret.blog")
        (season / "f-secret.blog").chmod(0)  # the auditor may not read it
        (season / "m12.blog").mkdir(mode=0o755)  # a directory named like a log, holding none
        (top / "2025").mkdir(mode=0o755)  # a season with no log at all
        yield season
    finally:
        shutil.rmtree(top)


def _verdict_lines(out: str) -> dict[str, list[str]]:
    """Each verdict's lines by the file name it starts with."""
    got: dict[str, list[str]] = {}
    name = ""
    for line in out.splitlines():
        if line.startswith(os.sep):
            name = Path(line.split(":", 1)[0]).name
            got[name] = [line]
        elif name and line.startswith(" "):
            got[name].append(line)
    return got


def test_a_batch_names_the_rule_of_each_entry_that_is_no_log_and_goes_on(club: Path) -> None:
    as_other = _as_other_user()
    if as_other is None:
        pytest.skip("run as root, which reads any file whatever its mode, and no setpriv to "
                    "run the audit as nobody")
    empty = club.parent / "2025"
    env = dict(os.environ, PYTHONPATH=str(REPO), HOME=str(club.parent), COLUMNS="200",
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("BURACO_LOG_CONFIG", None)
    started = time.monotonic()
    p = subprocess.run([*as_other, sys.executable, "-m", "cli.main", "audit", str(club),
                        str(empty), "--jobs", "1"], capture_output=True, text=True,
                       timeout=60, cwd=REPO, env=env)  # a FIFO with no writer must not block
    assert time.monotonic() - started < 30
    assert p.returncode == 1 and "Traceback" not in p.stderr, (p.stdout, p.stderr)
    got = _verdict_lines(p.stdout)
    assert got["a-good.blog"][0].split()[1] == "OK", got["a-good.blog"]
    expected = {
        "b-fifo.blog": "unreadable [log.filetype]: not a regular file (a FIFO)",
        "c-device.blog": "unreadable [log.filetype]: not a regular file (a character device)",
        "e-sparse.blog": "[log.header]: the file header is 20 zero bytes",
        "f-secret.blog": "unreadable [log.unreadable]: Permission denied",
        "m12.blog": "unreadable [log.filetype]: a directory, not a log",
    }
    for name, said in expected.items():
        integrity = [line for line in got[name] if line.lstrip().startswith("integrity")]
        assert len(integrity) == 1 and said in integrity[0], (name, got[name])
    assert got["d-empty.blog"][0].endswith("NOT STARTED")  # a match that never started
    assert list(got) == ["a-good.blog", "b-fifo.blog", "c-device.blog", "d-empty.blog",
                         "e-sparse.blog", "f-secret.blog", "m12.blog"]  # its siblings first
    assert "of which 5 are not logs" in p.stdout.splitlines()[-1], p.stdout.splitlines()[-1]
    assert f"buraco-log: note: {empty}: no logs in this directory" in p.stderr.splitlines()
    assert stat.S_IMODE((club / "f-secret.blog").stat().st_mode) == 0  # nothing changed it
