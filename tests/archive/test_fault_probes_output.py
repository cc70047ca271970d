"""Fault probes, query output: values DuckDB can return that Python, JSON or Parquet cannot
hold as they are must never end in a traceback, invalid JSON or a silently lost column.

Each probe runs ``buraco-log query`` as a real process under a timeout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.archive.conftest import Archived

ROOT = Path(__file__).resolve().parents[2]
TEXT_FORMATS = ("table", "json", "jsonl", "csv")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def strict_json(text: str) -> object:
    """JSON as RFC 8259 has it: NaN and Infinity are not numbers there."""
    def refuse(word: str) -> object:
        raise ValueError(f"not JSON: {word}")
    return json.loads(text, parse_constant=refuse)


# DuckDB's infinite timestamps and dates, and times past year 9999: Python's datetime cannot
# hold them, and every text format died with an OverflowError traceback.
OUT_OF_PYTHON = ("SELECT 'infinity'::TIMESTAMP AS t, '-infinity'::DATE AS d, "
                 "'infinity'::TIMESTAMPTZ AS z, ['infinity'::DATE] AS l, "
                 "{'x': '-infinity'::TIMESTAMP} AS s, '294247-01-10'::TIMESTAMP AS far")


@pytest.mark.parametrize("fmt", TEXT_FORMATS)
def test_values_python_cannot_hold_come_out_as_text(archived: Archived, fmt: str) -> None:
    r = run("query", str(archived.path), OUT_OF_PYTHON, "--format", fmt)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "infinity" in r.stdout and "-infinity" in r.stdout
    if fmt == "jsonl":
        row = strict_json(r.stdout)
        assert isinstance(row, dict)
        assert (row["t"], row["d"], row["l"], row["s"]) == (
            "infinity", "-infinity", ["infinity"], {"x": "-infinity"})
        assert "out of range" in row["far"]


def test_test_all_types_is_written_in_every_text_format(archived: Archived) -> None:
    # the four processes at once (one after another: 10 s of the default run)
    procs = [subprocess.Popen([sys.executable, "-m", "cli.main", "query", str(archived.path),
                               "SELECT * FROM test_all_types()", "--format", fmt], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for fmt in TEXT_FORMATS]
    for fmt, p in zip(TEXT_FORMATS, procs, strict=True):
        out, err = p.communicate(timeout=120)
        r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (fmt, r.stderr[-500:])
        if fmt == "json":
            rows = strict_json(r.stdout)
            assert isinstance(rows, list) and len(rows) == 3


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_json_output_is_json_with_nan_infinity_and_huge_integers(archived: Archived,
                                                                  fmt: str) -> None:
    sql = ("SELECT 'nan'::DOUBLE AS n, 'inf'::DOUBLE AS i, ['-inf'::DOUBLE, 1.5] AS l, "
           "170141183460469231731687303715884105727::HUGEINT AS h, "
           "12345678901234567890::DECIMAL(38, 0) AS d0, 1.25::DECIMAL(10, 2) AS d2")
    r = run("query", str(archived.path), sql, "--format", fmt)
    assert r.returncode == 0, r.stderr
    data = strict_json(r.stdout)
    row = data[0] if isinstance(data, list) else data
    assert row == {"n": None, "i": None, "l": [None, 1.5],
                   "h": 170141183460469231731687303715884105727,
                   "d0": 12345678901234567890, "d2": 1.25}


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_json_keeps_every_column_of_a_result_with_repeated_names(archived: Archived,
                                                                 fmt: str) -> None:
    r = run("query", str(archived.path), "SELECT 1 AS a, 2 AS a, 3 AS a_1", "--format", fmt)
    assert r.returncode == 0, r.stderr
    data = strict_json(r.stdout)
    row = data[0] if isinstance(data, list) else data
    assert row == {"a": 1, "a_2": 2, "a_1": 3}


@pytest.mark.parametrize("sql", ["SELECT INTERVAL 3 DAY AS i",
                                 "SELECT 1::UNION(a INT, b VARCHAR) AS u"])
def test_parquet_output_of_a_type_parquet_lacks_is_one_line(archived: Archived, tmp_path: Path,
                                                            sql: str) -> None:
    out = tmp_path / "r.parquet"
    r = run("query", str(archived.path), sql, "--format", "parquet", "-o", str(out))
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.startswith("buraco-log: error: query: --format parquet cannot hold")
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []  # no half-written file, no temporary left


@pytest.mark.parametrize("option,status", [
    (["--memory-limit", "0B"], 1),
    (["--memory-limit", "1B"], 1),
    # beyond what DuckDB can take (2^63 bytes or more): exit 2 before DuckDB starts
    (["--memory-limit", "9" * 30 + "GB"], 2),
    (["--memory-limit", "9" * 400 + "GB"], 2),
])
def test_limits_that_cannot_work_are_one_line_errors(archived: Archived, option: list[str],
                                                     status: int) -> None:
    """Each was a traceback: an OOM while the views were made, an overflow in setrlimit."""
    r = run("query", str(archived.path), "SELECT count(*) FROM matches", "-f", "csv", *option)
    assert (r.returncode, r.stdout) == (status, ""), r.stderr[-800:]
    assert r.stderr.startswith("buraco-log: error: ") and r.stderr.count("\n") == 1


def test_a_thread_count_above_the_bound_is_a_usage_error(archived: Archived) -> None:
    """--threads 100000 tried to start 100,000 threads (and ran for minutes): the option's
    range now refuses it before anything runs."""
    r = run("query", str(archived.path), "SELECT count(*) FROM matches", "-f", "csv",
            "--threads", "100000")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr[-800:]
    assert r.stderr.startswith("buraco-log: usage: ") and r.stderr.count("\n") == 1
    assert "less than or equal to 1024" in r.stderr


def test_many_threads_within_the_range_run(archived: Archived) -> None:
    """--threads 500 aborted the process: the memory bound left no room for their stacks."""
    r = run("query", str(archived.path), "SELECT count(*) AS n FROM matches", "-f", "csv",
            "--threads", "500")
    assert r.returncode == 0, r.stderr[-800:]
    assert r.stdout.startswith("n\n")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_an_output_that_is_a_link_into_proc_is_written_into_not_renamed_over(
        archived: Archived, tmp_path: Path, fmt: str) -> None:
    """``-o /dev/stdout`` with stdout redirected to a file: /dev/stdout is a regular file
    through a link into /proc, and the rename replaced the link itself (as root, /dev/stdout
    became a regular file for everyone). The same with a link of our own, harmlessly."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    captured = tmp_path / "captured"
    with open(captured, "wb") as out:
        p = subprocess.run([sys.executable, "-m", "cli.main", "query", str(archived.path),
                            "SELECT 42 AS answer", "--format", fmt, "-o", str(link)],
                           cwd=ROOT, stdout=out, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink(), "the link was replaced by the output"
    data = captured.read_bytes()
    assert (b"42" in data) if fmt == "csv" else data.startswith(b"PAR1")


def test_a_link_to_an_output_file_stays_a_link(archived: Archived, tmp_path: Path) -> None:
    real = tmp_path / "results" / "answer.csv"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "answer.csv"
    link.symlink_to(real)
    r = run("query", str(archived.path), "SELECT 42 AS answer", "--format", "csv", "-o",
            str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and "42" in real.read_text()
    assert sorted(p.name for p in real.parent.iterdir()) == ["answer.csv"]
