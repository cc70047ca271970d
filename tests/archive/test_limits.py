"""A query cannot take the machine down (issue 13, items 3 and 5): results stream out in
batches, and the whole process, DuckDB and Python, stays under the memory limit.

Each hostile query runs as a real `buraco-log query` process, started by a small parent
process that reports the peak RSS of its one child (``RUSAGE_CHILDREN``), so other tests'
children do not count. Before the fix, under ``--memory-limit 1GB``:
``SELECT * FROM range(20000000) -f csv`` reached 5.1 GB, ``length(repeat('x', 1500000000))``
3.0 GB, ``len(range(300000000))`` 14.7 GB.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.archive import open_query, query
from buraco_log.archive.views import HEADROOM, bounded_process, parse_size
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Archived

MiB = 1 << 20
LIMIT = "256MB"

_PARENT = """
import json, resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"code": r.returncode, "peak": peak, "out": r.stdout[:2000],
                  "err": r.stderr}))
"""


def run_measured(*args: str) -> tuple[int, int, str, str]:
    """Exit status, peak RSS in bytes, stdout (its start), stderr of one query process."""
    cmd = [sys.executable, "-c", _PARENT, sys.executable, "-m", "cli.main", "query", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=True)
    d = json.loads(r.stdout)
    return d["code"], d["peak"], d["out"], d["err"]


@pytest.fixture(scope="module")
def baseline(archived: Archived) -> int:
    """Peak RSS of a trivial query: the imports and DuckDB itself."""
    code, peak, _, _ = run_measured(str(archived.path), "SELECT 1", "--memory-limit", LIMIT)
    assert code == 0
    return peak


HOSTILE = [
    "SELECT length(repeat('x', 1500000000)) AS n",  # one huge string: outside DuckDB's limit
    pytest.param("SELECT length(lpad('x', 1500000000, 'y')) AS n",  # refused after 50 s
                 marks=pytest.mark.slow),
    "SELECT len(range(300000000)) AS n",  # one huge list value: 14.7 GB before
    "SELECT length(string_agg('xxxxxxxxxx', ',')) AS n FROM range(150000000)",
    "SELECT len(list(a.range * b.range)) AS n FROM range(20000) a, range(20000) b",
    "SELECT count(DISTINCT range) AS n FROM range(200000000)",
]


@pytest.mark.parametrize("sql", HOSTILE)
def test_a_query_that_outgrows_the_limit_is_refused_naming_it(
        sql: str, archived: Archived, baseline: int) -> None:
    code, peak, out, err = run_measured(str(archived.path), sql, "--memory-limit", LIMIT,
                                        "--format", "csv")
    assert (code, out) == (1, ""), err
    assert err.startswith(f"buraco-log: error: query: out of memory under the {LIMIT} limit")
    assert err.count("\n") == 1
    assert peak - baseline < parse_size(LIMIT) + HEADROOM  # type: ignore[operator]


def test_a_large_result_streams_out_in_bounded_memory(archived: Archived, baseline: int,
                                                      tmp_path: Path) -> None:
    # 3 million rows held as Python rows took about 1 GB more than the baseline.
    target = tmp_path / "out.csv"
    code, peak, _, err = run_measured(str(archived.path), "SELECT * FROM range(3000000)",
                                      "--memory-limit", LIMIT, "-f", "csv", "-o", str(target))
    assert code == 0, err
    with open(target, encoding="utf-8") as f:
        assert sum(1 for _ in f) == 3_000_001
    assert peak - baseline < 150 * MiB


def test_the_table_format_refuses_more_rows_than_it_holds(archived: Archived) -> None:
    code, _, out, err = run_measured(str(archived.path), "SELECT * FROM range(100001)")
    assert (code, out) == (1, "")
    assert "more than 100,000 rows for --format table" in err and err.count("\n") == 1


def test_a_query_that_fails_part_way_leaves_no_output_file(archived: Archived,
                                                          tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    sql = ("SELECT CASE WHEN range < 150000 THEN range ELSE error('boom at ' || range) END "
           "AS x FROM range(200000)")
    code, _, out, err = run_measured(str(archived.path), sql, "-f", "jsonl", "-o", str(target))
    assert (code, out) == (1, "")
    assert "boom at 150000" in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_streamed_output_equals_the_library_result(archived: Archived, fmt: str) -> None:
    sql = "SELECT game_id, seq, kind, cards FROM events ORDER BY game_id, seq LIMIT 12000"
    # the run to stdout started first, alongside the run to /dev/null (one after the other
    # they took 2.5 s a format)
    to_stdout = subprocess.Popen([sys.executable, "-m", "cli.main", "query", str(archived.path),
                                  sql, "-f", fmt], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
    code, _, _, err = run_measured(str(archived.path), sql, "-f", fmt, "-o", "/dev/null")
    out, err_out = to_stdout.communicate(timeout=120)
    assert code == 0, err
    assert to_stdout.returncode == 0, err_out
    r = subprocess.CompletedProcess(to_stdout.args, 0, out, err_out)
    expected = query(archived.path, sql).to_pylist()
    if fmt == "json":
        assert json.loads(r.stdout) == expected
        assert r.stdout == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"
    elif fmt == "jsonl":
        assert [json.loads(line) for line in r.stdout.splitlines()] == expected
    else:
        lines = r.stdout.splitlines()
        assert lines[0] == "game_id,seq,kind,cards" and len(lines) == len(expected) + 1


def test_an_empty_result_is_an_empty_json_array(archived: Archived) -> None:
    r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(archived.path),
                        "SELECT * FROM matches WHERE false", "-f", "json"],
                       capture_output=True, text=True, timeout=120, check=True)
    assert r.stdout == "[]\n"


def test_the_stream_hands_out_bounded_batches(archived: Archived) -> None:
    with open_query(archived.path, "SELECT * FROM range(25000)", batch_rows=10_000) as s:
        sizes = [b.num_rows for b in s]
    assert sum(sizes) == 25_000 and max(sizes) <= 10_000


def test_the_process_bound_is_lifted_after_the_query(archived: Archived) -> None:
    before = resource.getrlimit(resource.RLIMIT_DATA)
    with bounded_process("64MB") as cap:
        assert cap is not None and resource.getrlimit(resource.RLIMIT_DATA)[0] == cap
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
    with pytest.raises(ArchiveError, match="out of memory under the 64MB limit"):
        query(archived.path, "SELECT length(repeat('x', 500000000))", memory_limit="64MB")
    assert resource.getrlimit(resource.RLIMIT_DATA) == before


@pytest.mark.parametrize(("text", "size"), [
    ("1GB", 10**9), ("512MB", 512 * 10**6), ("1.5GiB", 3 << 29), ("64 kib", 64 << 10),
    ("10B", 10), ("1G", None), ("80%", None), ("", None), ("GB", None),
])
def test_sizes_read_like_duckdb(text: str, size: int | None) -> None:
    assert parse_size(text) == size
