"""The archive commands: exit codes, formats, stdout clean on errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from buraco_log.archive import query, report
from cli.main import app
from tests.archive.conftest import Archived, Corpus

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_ingest_reports_refused_logs_and_exits_1(corpus: Corpus, tmp_path: Path) -> None:
    code, out, _ = run("ingest", str(corpus.root / "bad"), corpus.good[0], "--archive",
                       str(tmp_path / "a"), "--jobs", "1")
    assert code == 1
    assert ": 1 match added (" in out
    assert out.count("refused: ") == len(corpus.bad)


def test_ingest_of_a_mistyped_path_is_a_usage_error_and_creates_nothing(corpus: Corpus,
                                                                       tmp_path: Path) -> None:
    code, out, err = run("ingest", corpus.good[0], str(tmp_path / "no-such-dir"), "--archive",
                         str(tmp_path / "a"))
    assert (code, out) == (2, "")
    assert "no-such-dir: No such file or directory" in err  # strerror, as every command
    assert not (tmp_path / "a").exists()


def test_ingest_of_good_logs_exits_0_and_json_is_the_report(corpus: Corpus,
                                                            tmp_path: Path) -> None:
    code, out, _ = run("ingest", *corpus.good[:3], "--archive", str(tmp_path / "a"),
                       "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert (data["added"], data["errors"], data["files"]) == (3, [], 3)


def test_query_json_equals_the_library(archived: Archived) -> None:
    sql = "SELECT match_id, totals, winner_side FROM matches ORDER BY match_id"
    code, out, _ = run("query", str(archived.path), sql, "--format", "json")
    assert code == 0
    assert json.loads(out) == query(archived.path, sql).to_pylist()


def test_query_formats(archived: Archived, tmp_path: Path) -> None:
    sql = "SELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY kind"
    expected = query(archived.path, sql).to_pylist()
    _, csv_out, _ = run("query", str(archived.path), sql, "--format", "csv")
    assert csv_out.splitlines()[0] == "kind,n" and len(csv_out.splitlines()) == len(expected) + 1
    _, jsonl_out, _ = run("query", str(archived.path), sql, "--format", "jsonl")
    assert [json.loads(line) for line in jsonl_out.splitlines()] == expected
    _, table_out, _ = run("query", str(archived.path), sql)
    assert table_out.split()[:2] == ["kind", "n"]
    target = tmp_path / "out.parquet"
    code, out, _ = run("query", str(archived.path), sql, "--format", "parquet", "-o", str(target))
    assert (code, out) == (0, "")
    assert pq.read_table(target).to_pylist() == expected


def test_parquet_without_output_goes_into_a_pipe_whole(archived: Archived) -> None:
    """No --output: a pipe gets the whole file, as with `-o -` (a terminal is refused:
    tests/cli/test_fault_probes_cli44.py). A real process: its stdout is the pipe."""
    r = subprocess.run([sys.executable, "-m", "cli.main", "query", str(archived.path),
                        "SELECT 1 AS x", "--format", "parquet"], capture_output=True,
                       timeout=120, check=False, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert pq.read_table(io.BytesIO(r.stdout)).to_pylist() == [{"x": 1}]


def test_a_refused_query_exits_1_with_one_line_and_nothing_on_stdout(archived: Archived) -> None:
    code, out, err = run("query", str(archived.path), "COPY matches TO '/tmp/x.csv'")
    assert (code, out) == (1, "")
    assert err.startswith("buraco-log: error: query: ") and err.count("\n") == 1


def test_query_on_a_directory_that_is_not_an_archive(tmp_path: Path) -> None:
    code, out, err = run("query", str(tmp_path), "SELECT 1")
    assert (code, out) == (2, "")  # as `query FILE`: the user's slip, not a finding
    assert "not an archive" in err


def test_report_json_equals_the_library_apart_from_timings(archived: Archived) -> None:
    code, out, _ = run("report", str(archived.path), "--format", "json")
    assert code == 0
    data = json.loads(out)
    lib = report(archived.path)
    assert [s["name"] for s in data["sections"]] == [s.name for s in lib.sections]
    assert [s["rows"] for s in data["sections"]] == [
        json.loads(json.dumps(s.rows)) for s in lib.sections]


def test_report_html_is_one_self_contained_page(archived: Archived, tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    code, _, _ = run("report", str(archived.path), "--format", "html", "-o", str(target))
    assert code == 0
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 7
    for external in ("<script", "<link", "src=", "url(", "@import"):
        assert external not in page


def test_report_table_has_every_section(archived: Archived) -> None:
    code, out, _ = run("report", str(archived.path))
    assert code == 0
    for title in ("Win rate by preset", "Canastras by class", "discard pile",
                  "how hands end", "morto", "leaderboard"):
        assert title in out


def test_json_output_handles_decimals_times_lists_and_structs(archived: Archived) -> None:
    sql = ("SELECT 1.5 AS x, TIMESTAMPTZ '2026-01-02 03:04:05+00' AS t, [1, 2] AS l, "
           "{'a': 1} AS s, 'ab'::BLOB AS b")
    code, out, _ = run("query", str(archived.path), sql, "--format", "json")
    assert code == 0
    assert json.loads(out) == [{"x": 1.5, "t": "2026-01-02T03:04:05+00:00", "l": [1, 2],
                                "s": {"a": 1}, "b": "6162"}]


def test_the_cli_defaults_mirror_the_archive_defaults() -> None:
    from buraco_log import archive as lib
    from buraco_log.archive import views
    from cli import archive_cmd

    assert archive_cmd.DEFAULT_THREADS == lib.DEFAULT_THREADS
    assert archive_cmd.MAX_THREADS == views.MAX_THREADS
    assert archive_cmd.DEFAULT_MEMORY_LIMIT == lib.DEFAULT_MEMORY_LIMIT


def test_commands_other_than_the_archive_load_neither_duckdb_nor_pyarrow() -> None:
    import subprocess
    import sys

    code = "import sys, cli.main; print(sorted({'duckdb', 'pyarrow'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
