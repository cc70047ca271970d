"""Fault probes, round 37: an ingest ended by SIGTERM (alone, and with its whole process group)
commits what was checked and says so in one line, exit 143; a FLOAT column of a query prints
as the float asked for in every format. Real processes of the CLI, real DuckDB over Parquet."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from tests.archive.conftest import Archived

REPO = Path(__file__).resolve().parents[2]

# The CLI with each chunk check slowed a little: it notes its pid in argv[1] first, so the
# test can send its signal once some chunks are checked and more remain.
SLOW_CHECK = """
import importlib, os, sys, time
mod = importlib.import_module("buraco_log.archive.ingest")
marker, real = sys.argv[1], mod.check_chunk
def check_chunk(*args, **kwargs):
    with open(marker, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(0.4)
    return real(*args, **kwargs)
mod.check_chunk = check_chunk
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.main import run
run()
"""


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["buraco-log", *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False, stdin=subprocess.DEVNULL, cwd=REPO)


def _count(arch: Path) -> int:
    r = _cli("query", arch, "SELECT count(*) AS n FROM matches", "-f", "csv")
    assert r.returncode == 0, r
    return int(r.stdout.split()[1])


@pytest.fixture
def logs(archived: Archived, tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    for p in archived.corpus.good[:12]:
        shutil.copy(p, d)
    return d


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, process groups")
@pytest.mark.parametrize(("jobs", "group"), [(1, False), (2, False), (2, True)])
def test_a_sigterm_mid_ingest_commits_what_was_checked_and_says_so(
        logs: Path, tmp_path: Path, jobs: int, group: bool) -> None:
    """Before: the ingest died of SIGTERM without a word on stderr, the checked matches lost;
    sent to the process group, its forked workers inherited the handler and printed
    tracebacks, and the ingest hung."""
    arch, marker = tmp_path / "arch", tmp_path / "checks"
    p = subprocess.Popen([sys.executable, "-c", SLOW_CHECK, str(marker), "ingest", str(logs),
                          "-a", str(arch), "--jobs", str(jobs)], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        # a worker notes a check only once its previous one is done: some are checked
        while not (marker.exists() and len(marker.read_text().split()) >= 2 * jobs + 1):
            assert p.poll() is None and time.monotonic() < deadline, "no chunk checked"
            time.sleep(0.02)
        if group:
            os.killpg(p.pid, signal.SIGTERM)
        else:
            p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    assert p.returncode == 143, (p.returncode, err)
    # "error:" since probe 44, as every command's interrupt line is
    assert err.strip().splitlines() == ["buraco-log: error: terminated (SIGTERM): what was "
                                        "checked is committed; run the same command again to "
                                        "check the rest"], err
    assert "Traceback" not in err
    added = int(out.split(": ")[1].split()[0])
    assert 0 < added < 12, out
    assert not list((arch / ".staging").rglob("*")) if (arch / ".staging").exists() else True
    assert _count(arch) == added
    again = _cli("ingest", logs, "-a", arch, "--jobs", "1")
    assert again.returncode == 0, again
    assert f"{added} already stored" in again.stdout, again.stdout
    assert _count(arch) == 12


FLOATS = ("SELECT 0.1::FLOAT AS f, [0.1::FLOAT, NULL] AS l, 0.1::DOUBLE AS d, "
          "{'a': 1.1::FLOAT, 'b': 1.1::DOUBLE} AS s, MAP {'k': 3.3::FLOAT} AS m, "
          "16777217::FLOAT AS big, 3.4028235e38::FLOAT AS top")


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl", "table"])
def test_a_float_column_prints_as_the_float_asked_for(archived: Archived, fmt: str) -> None:
    # before: 0.10000000149011612 (the float32 widened to a double) in csv, json and jsonl,
    # and in lists, structs and maps in the table too
    r = _cli("query", archived.path, FLOATS, "-f", fmt)
    assert r.returncode == 0, r
    assert "0.100000001" not in r.stdout and "1.100000023" not in r.stdout, r.stdout
    assert "3.29999995" not in r.stdout, r.stdout
    if fmt == "jsonl":
        row = json.loads(r.stdout)
        assert row == {"f": 0.1, "l": [0.1, None], "d": 0.1, "s": {"a": 1.1, "b": 1.1},
                       "m": [["k", 3.3]], "big": 16777216.0, "top": 3.4028235e38}
    if fmt == "csv":
        assert r.stdout.splitlines()[1].startswith("0.1,"), r.stdout


def test_a_double_keeps_every_digit_beside_a_float(archived: Archived) -> None:
    r = _cli("query", archived.path, "SELECT 0.1::FLOAT + 0 AS w, 0.1::FLOAT::DOUBLE AS d, "
             "{'x': 0.1::FLOAT::DOUBLE} AS s", "-f", "jsonl")
    assert r.returncode == 0, r
    assert json.loads(r.stdout) == {"w": 0.1, "d": 0.10000000149011612,
                                    "s": {"x": 0.10000000149011612}}


def test_parquet_output_keeps_the_float_type(archived: Archived, tmp_path: Path) -> None:
    out = tmp_path / "f.parquet"
    r = _cli("query", archived.path, "SELECT 0.1::FLOAT AS f", "-f", "parquet", "-o", out)
    assert r.returncode == 0, r
    t = pq.read_table(out)
    assert str(t.schema.field("f").type) == "float"
