"""Fault probes of the CLI (round 43).

- An event holding an integer outside the signed 64-bit range was "unreadable" (exit 2) to
  `verify`, `replay` and `explain`, and a broken log (exit 1) to `show` and `audit`: the one
  rule now is that a file that begins as a log and is damaged further on is a finding (1).
- A writer given ``-o /dev/stdout`` with standard output redirected to a file opened the file
  again: cut to nothing under what the shell had written, then written from byte 0. Now our
  own standard output (or error, or ``/dev/fd/N``) is written where it stands, as ``-o -``.
- `query` and `report` into a FIFO no program reads waited for ever (the docs promise 10 s).
- `report -f html -o /dev/stdout` wrote its match pages into /dev/matches/.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.probes import ROOT, cli, one_error_line

GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"


def _with_huge_seat(tmp_path: Path) -> Path:
    """The golden classic match with seq 2's seat set to 2**63, one past the range."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    draw = json.loads(lines[3])
    assert draw["t"] == "dr" and draw["seq"] == 2  # what this probe edits
    draw["seat"] = 2**63
    lines[3] = json.dumps(draw)
    path = tmp_path / "huge.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_an_integer_outside_the_64_bit_range_is_a_damaged_log_to_every_reader(
        tmp_path: Path) -> None:
    path = _with_huge_seat(tmp_path)
    for command in (["verify"], ["replay"], ["explain", "--at", "1"], ["show"]):
        line = one_error_line(cli(*command, path), 1)
        assert line.startswith(f"buraco-log: error: {path}, line 4, seq 2: "), line
        assert "field 'seat' holds an integer outside the signed 64-bit range" in line, line
    audited = cli("audit", "-f", "json", path)
    assert audited.returncode == 1, audited.stderr
    assert "log.range" in audited.stdout


@pytest.fixture(scope="module")
def arch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive of the golden classic match, built once (in-process: faster than ingest)."""
    from buraco_log.archive import ingest

    root = tmp_path_factory.mktemp("cli43") / "arch"
    assert ingest([str(GOLDEN)], str(root)).added == 1
    return root


def _shell(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``script`` in bash, ``bl`` standing for this tree's buraco-log."""
    bl = f"{shlex.quote(sys.executable)} -m cli"
    done: subprocess.CompletedProcess[str] = subprocess.run(
        ["bash", "-c", f"bl() {{ {bl} \"$@\"; }}\n{script}"], capture_output=True, text=True,
        cwd=ROOT, timeout=120, check=False, stdin=subprocess.DEVNULL,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return done


def test_writers_given_our_own_stdout_write_after_what_the_shell_wrote(tmp_path: Path,
                                                                     arch: Path) -> None:
    out, page = tmp_path / "out.txt", tmp_path / "page.html"
    q = shlex.quote
    done = _shell(
        f"{{ echo ONE; bl query {q(str(arch))} 'select count(*) as n from matches' -f csv "
        f"-o /dev/stdout; echo TWO; bl view {q(str(GOLDEN))} -o /dev/stdout; echo THREE; }} "
        f"> {q(str(out))}\n"
        # appended to, and standard error as the output: the page, then the line saying so
        f"echo FOUR > {q(str(page))}; bl view {q(str(GOLDEN))} -o /dev/stderr 2>> {q(str(page))}",
        tmp_path)
    assert done.returncode == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("ONE\nn\n1\nTWO\n<!DOCTYPE html>"), text[:200]
    assert text.endswith("</html>\nTHREE\n"), text[-200:]
    said = page.read_text(encoding="utf-8")
    assert said.startswith("FOUR\n<!DOCTYPE html>"), said[:200]
    assert re.search(r"</html>\nwrote /dev/stderr \([\d,]+ bytes\)\n\Z", said), said[-200:]


def test_parquet_into_a_pipe_through_dev_stdout_is_a_whole_file(arch: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cli", "query", str(arch), "select 7 as n", "-f", "parquet",
         "-o", "/dev/stdout"], capture_output=True, cwd=ROOT, timeout=120, check=False,
        stdin=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr  # it was "lseek failed" (exit 1)
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert pq.read_table(pa.BufferReader(done.stdout)).to_pylist() == [{"n": 7}]


def test_report_as_html_into_dev_null_writes_no_pages_into_dev(arch: Path) -> None:
    before = set(os.listdir("/dev"))
    done = cli("report", arch, "-f", "html", "-o", "/dev/null")
    assert done.returncode == 0, done.stderr
    assert set(os.listdir("/dev")) - before == set()


@pytest.mark.parametrize("command", ["query", "report"])
def test_query_and_report_into_a_fifo_nobody_reads_give_up(tmp_path: Path, arch: Path,
                                                          command: str) -> None:
    os.mkfifo(tmp_path / "fifo")
    sql = ["select 1 as n", "-f", "csv"] if command == "query" else []
    # the wait shortened as the FIFO probes of convert and view do
    done = subprocess.run(
        [sys.executable, "-c", "import sys, buraco_log.outpaths as o; o.FIFO_WAIT = 0.3; "
         "sys.argv[0] = 'buraco-log'; from cli.entry import run; run()",
         command, str(arch), *sql, "-o", str(tmp_path / "fifo")],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
        stdin=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    line = one_error_line(done, 1)
    assert line == (f"buraco-log: error: {command}: cannot write {tmp_path / 'fifo'}: a FIFO "
                    "that no program opened for reading within 0.3 s; nothing was written")


def test_each_command_is_found_in_the_module_the_lazy_start_loads_for_it() -> None:
    """`buraco-log NAME` loads only COMMANDS[NAME]'s module: the table must name the module
    that registers NAME, and the full app must hold no command the table misses."""
    import typer

    from cli import main

    full = typer.main.get_command(main.app)
    assert isinstance(full, typer.core.TyperGroup)
    assert set(full.commands) == set(main.COMMANDS)
    assert list(full.commands)[:3] == ["convert", "schema", "seal"]  # MODULES order kept
    for name, module in main.COMMANDS.items():
        registered = {c.name or c.callback.__name__ for c in main._app.registered_commands
                      if c.callback is not None and c.callback.__module__ == f"cli.{module}"}
        groups = {g.name for g in main._app.registered_groups}
        assert name in registered | groups, (name, module)


def test_audit_and_ingest_say_a_missing_path_as_every_command_does(tmp_path: Path) -> None:
    """They wrote their own "no such file or directory", also for a loop of links."""
    os.symlink(tmp_path / "b.blog", tmp_path / "a.blog")
    os.symlink(tmp_path / "a.blog", tmp_path / "b.blog")
    line = one_error_line(cli("audit", tmp_path / "gone.blog"), 2)
    assert line == f"buraco-log: error: {tmp_path / 'gone.blog'}: No such file or directory"
    line = one_error_line(cli("ingest", tmp_path / "a.blog", "-a", tmp_path / "arch"), 2)
    assert line == f"buraco-log: error: {tmp_path / 'a.blog'}: Too many levels of symbolic links"
    assert not (tmp_path / "arch").exists()


@pytest.mark.parametrize("command", ["query", "report"])
def test_query_and_report_into_a_missing_directory_are_usage_errors_as_view_says(
        tmp_path: Path, arch: Path, command: str) -> None:
    """They ran the query first, then exited 1, with no JSON error object on stdout."""
    target = tmp_path / "missing" / "out.json"
    sql = ["select 1 as n"] if command == "query" else []
    done = cli(command, arch, *sql, "-f", "json", "-o", target)
    line = one_error_line(done, 2)
    assert line == f"buraco-log: error: {target}: no such directory: {target.parent}", line
    assert json.loads(done.stdout)["error"]["exit_status"] == 2
    assert not target.parent.exists()
