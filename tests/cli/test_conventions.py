"""One set of conventions for every command, walked table by table (docs/cli.md).

Exit status: 0 fine, 1 a finding in the log or archive, 2 a usage error or something that is
not readable as a log. An error is one line on stderr. ``--format json`` gives JSON on stdout,
on failure too (an object with an ``error``). ``-`` reads a log from standard input.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "sim" / "classic-2p-000000.blog"


@dataclass
class Result:
    code: int
    out: str
    err: str


def run(*argv: object, cwd: Path, stdin: bytes = b"") -> Result:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}
    env.pop("BURACO_LOG_ARCHIVE", None)
    p = subprocess.run([sys.executable, "-m", "cli.main", *map(str, argv)], input=stdin,
                       capture_output=True, cwd=cwd, env={**env, "PYTHONPATH": str(ROOT)},
                       timeout=300)
    return Result(p.returncode, p.stdout.decode(), p.stderr.decode())


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("conventions")
    shutil.copy(GOOD, d / "good.blog")
    data = GOOD.read_bytes()
    (d / "damaged.blog").write_bytes(data[:200] + bytes([data[200] ^ 0x40]) + data[201:])
    (d / "notes.txt").write_text("not a log\n")
    r = run("ingest", "good.blog", "--archive", "arch", "--jobs", 1, cwd=d)
    assert r.code == 0, r
    return d


# command -> the arguments after the log (a callable of the case's directory)
LOG_COMMANDS: dict[str, list[str]] = {
    "show": [],
    "replay": [],
    "verify": [],
    "audit": [],
    "moves": ["--at", "5"],
    "explain": ["--at", "5"],
    "diff": ["good.blog"],
}


def _one_error_line(r: Result, *needles: str) -> None:
    assert "Traceback" not in r.err, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("buraco-log: error: "), r
    for n in needles:
        assert n in lines[0], (n, r)


_GOOD_JSON: dict[tuple[Path, str], Result] = {}


def _good_json(box: Path, command: str) -> Result:
    """``COMMAND good.blog ... --format json``, run once for the tests that read it (box and
    good.blog are never changed)."""
    if (box, command) not in _GOOD_JSON:
        args = [command, "good.blog", *LOG_COMMANDS[command]]
        if command == "diff":
            args = ["diff", "good.blog", "good.blog"]
        _GOOD_JSON[box, command] = run(*args, "--format", "json", cwd=box)
    return _GOOD_JSON[box, command]


@pytest.mark.parametrize("command", sorted(LOG_COMMANDS))
def test_a_good_log_exits_0_with_json_on_stdout(box: Path, command: str) -> None:
    r = _good_json(box, command)
    assert r.code == 0 and r.err == "", r
    json.loads(r.out)


@pytest.mark.parametrize("command", sorted(LOG_COMMANDS))
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_missing_file_exits_2_naming_it(box: Path, command: str, fmt: str) -> None:
    r = run(command, "missing.blog", *LOG_COMMANDS[command], "--format", fmt, cwd=box)
    assert r.code == 2, r
    _one_error_line(r, "missing.blog")
    if fmt == "json":
        error = json.loads(r.out)["error"]
        assert error["exit_status"] == 2 and "missing.blog" in error["message"]
    else:
        assert r.out == ""


@pytest.mark.parametrize("command", sorted(LOG_COMMANDS))
def test_a_file_that_is_not_a_log_exits_2(box: Path, command: str) -> None:
    r = run(command, "notes.txt", *LOG_COMMANDS[command], cwd=box)
    assert r.code == 2, r
    if command == "audit":  # its report says why, on stdout
        assert "not a buraco-log file" in r.out and r.err == ""
    else:
        _one_error_line(r, "notes.txt", "byte 0")


def _future_log(box: Path) -> Path:
    """good.blog with the header's event format version set past this reader's."""
    import zlib

    from buraco_log import log

    data = GOOD.read_bytes()
    magic, layout, _version, flags, _crc = log._HEADER.unpack(data[:log.HEADER_SIZE])
    head = log._HEADER.pack(magic, layout, 99, flags, 0)[:-4]
    path = box / "future.blog"
    path.write_bytes(head + zlib.crc32(head).to_bytes(4, "little") + data[log.HEADER_SIZE:])
    return path


@pytest.mark.parametrize("command", sorted(LOG_COMMANDS))
def test_a_log_of_an_unknown_format_version_exits_2(box: Path, command: str) -> None:
    # Written by a newer buraco_log: this one cannot read it at all, as for a file that is not
    # a log (2), where a damaged log is a finding (1). audit said 1.
    _future_log(box)
    r = run(command, "future.blog", *LOG_COMMANDS[command], cwd=box)
    assert r.code == 2, r
    if command == "audit":
        assert "format version 99" in r.out and r.err == "", r
    else:
        _one_error_line(r, "future.blog", "format version 99")


@pytest.mark.parametrize("command", sorted(LOG_COMMANDS))
def test_a_damaged_log_exits_1(box: Path, command: str) -> None:
    r = run(command, "damaged.blog", *LOG_COMMANDS[command], cwd=box)
    assert r.code == 1, r
    if command == "audit":
        assert "FINDINGS" in r.out and r.err == ""
    else:
        _one_error_line(r, "damaged.blog", "byte ")


@pytest.mark.parametrize("command", sorted(set(LOG_COMMANDS) - {"diff"}))
def test_dash_reads_the_log_from_standard_input(box: Path, command: str) -> None:
    direct = _good_json(box, command)
    piped = run(command, "-", *LOG_COMMANDS[command], "--format", "json", cwd=box,
                stdin=GOOD.read_bytes())
    assert piped.code == 0 and piped.err == "", piped
    assert piped.out.replace("<stdin>", "good.blog") == direct.out


@pytest.mark.parametrize("command", ["seal", "repair"])
def test_commands_that_rewrite_in_place_refuse_dash(box: Path, command: str) -> None:
    r = run(command, "-", cwd=box, stdin=GOOD.read_bytes())
    assert r.code == 2, r
    _one_error_line(r, "in place")


@pytest.mark.parametrize("command", ["seal", "repair", "convert"])
def test_rewriting_commands_answer_in_json(box: Path, command: str, tmp_path: Path) -> None:
    log = Path(shutil.copy(box / "good.blog", tmp_path / "copy.blog"))
    extra = ["-o", tmp_path / "copy.jsonl"] if command == "convert" else []
    r = run(command, log, *extra, "--format", "json", cwd=box)
    assert r.code == 0 and r.err == "", r
    answer = json.loads(r.out)
    assert answer.get("events", answer.get("events_kept")) == 539
    bad = run(command, "missing.blog", *extra, "--format", "json", cwd=box)
    assert bad.code == 2 and json.loads(bad.out)["error"]["exit_status"] == 2, bad


def test_convert_dash_to_dash_round_trips(box: Path) -> None:
    as_jsonl = run("convert", "-", "-o", "-", cwd=box, stdin=GOOD.read_bytes())
    assert as_jsonl.code == 0 and as_jsonl.out.startswith('{"log": "buraco-log"'), as_jsonl
    back = subprocess.run([sys.executable, "-m", "cli.main", "convert", "-", "-o", "-"],
                          input=as_jsonl.out.encode(), capture_output=True, cwd=box,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert back.returncode == 0 and back.stdout.startswith(b"BURACOLG"), back.stderr
    verify = run("verify", "-", "--format", "json", cwd=box, stdin=back.stdout)
    assert json.loads(verify.out)["events"] == 539


def test_convert_never_replaces_a_file_without_overwrite(box: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("mine\n")
    r = run("convert", "good.blog", "-o", out, cwd=box)
    assert r.code == 2 and out.read_text() == "mine\n", r
    _one_error_line(r, str(out), "--overwrite")
    assert run("convert", "good.blog", "-o", out, "--overwrite", cwd=box).code == 0
    wrong = run("convert", "good.blog", "-o", tmp_path / "x.jsonl", "--to", "binary", cwd=box)
    _one_error_line(wrong, "already a binary log")  # names what is wrong, not the output


@pytest.mark.parametrize("args", [
    ["query", "arch", "SELECT count(*) AS n FROM matches"],
    ["query", "--archive", "arch", "SELECT count(*) AS n FROM matches"],
    ["report", "arch"],
    ["report", "-a", "arch"],
    ["rules", "list"],
    ["rules", "show", "biriba"],
])
def test_archive_and_rules_commands_answer_in_json(box: Path, args: list[str]) -> None:
    r = run(*args, "--format", "json", cwd=box)
    assert r.code == 0 and r.err == "", r
    json.loads(r.out)


@pytest.mark.parametrize("args", [
    ["query", "SELECT 1"],  # which archive?
    ["report"],
    ["query", "nowhere", "SELECT 1"],
    ["rules", "show", "no-such-preset"],
    ["simulate", "--rules", "no-such-preset"],
    ["demo", "--rules", "no-such-preset"],
    ["audit", "--jobs", "-1", "good.blog"],
])
def test_usage_errors_exit_2_in_one_line(box: Path, args: list[str]) -> None:
    r = run(*args, cwd=box)
    assert r.code == 2, r
    assert "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1, r


def test_archive_env_names_the_archive_for_every_archive_command(box: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BURACO_LOG_ARCHIVE": "arch"}
    p = subprocess.run([sys.executable, "-m", "cli.main", "query", "SELECT count(*) AS n FROM "
                        "matches", "-f", "json"], capture_output=True, cwd=box, env=env,
                       timeout=300)
    assert p.returncode == 0 and json.loads(p.stdout) == [{"n": 1}], p.stderr


def test_replay_step_starts_at_the_first_event_and_n_moves_on(box: Path) -> None:
    r = run("replay", "good.blog", "--step", cwd=box, stdin=b"n\nq\n")
    assert r.code == 0, r
    seqs = [line.split()[1] for line in r.out.splitlines() if line.startswith("seq ")]
    assert seqs == ["0", "1"], r.out
    assert "no seq" not in r.err


def test_show_of_house_rules_lists_only_what_differs_in_plain_words(box: Path,
                                                                     tmp_path: Path) -> None:
    house = tmp_path / "house.toml"
    house.write_text('preset = "classic"\ntarget_score = 3000\njokers = 4\nrelancinho = false\n')
    sim = run("simulate", "--rules", house, "-o", tmp_path / "sim", "--no-progress", cwd=box)
    assert sim.code == 0, sim
    (log,) = (tmp_path / "sim").glob("*.blog")
    line = run("show", log, cwd=box).out.splitlines()[1]
    assert line == ("rules     classic+house; house rules: jokers=4, relancinho=no, "
                    "target_score=3000, vulnerable_at=1500"), line


def test_query_tables_fit_the_terminal_unless_wide(box: Path) -> None:
    from tests.cli.probes import stdout_on_a_terminal

    sql = "SELECT 'short' AS kind, match_id, digest FROM matches"
    env = {"COLUMNS": "60"}  # a terminal's width, as shutil reads it (a pipe's is no width)
    code, cut, err = stdout_on_a_terminal(["query", "arch", sql], cwd=box, env=env)
    assert code == 0 and max(map(len, cut.splitlines())) <= 60, (cut, err)
    assert "…" in cut and cut.splitlines()[2].startswith("short  ")  # kept whole
    code, wide, err = stdout_on_a_terminal(["query", "arch", sql, "--wide"], cwd=box, env=env)
    assert code == 0 and "…" not in wide and len(wide.splitlines()[2]) > 100, (wide, err)


def test_fit_cuts_the_widest_columns_first() -> None:
    from cli.archive_cmd import MIN_COLUMN, _fit

    assert _fit([5, 10], 100) == [5, 10]
    widths = _fit([5, 300, 40], 80)
    assert widths[0] == 5 and widths[1] == widths[2] and sum(widths) + 4 <= 80
    assert _fit([300, 300, 300], 10) == [MIN_COLUMN] * 3  # never below the minimum


def test_report_json_is_the_same_run_after_run_and_timings_need_a_flag(box: Path) -> None:
    first = run("report", "arch", "-f", "json", cwd=box)
    second = run("report", "arch", "-f", "json", cwd=box)
    assert first.code == 0 and first.out == second.out, first
    assert all("ms" not in s for s in json.loads(first.out)["sections"])
    timed = json.loads(run("report", "arch", "-f", "json", "--timings", cwd=box).out)
    assert all(isinstance(s["ms"], float) for s in timed["sections"])
