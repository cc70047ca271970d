"""Fault probes of the CLI (round 44b): what a CLI helper found and left.

- `explain --at SEQ` past an illegal event explained the illegal event instead and exited 0,
  where `replay`, `moves` and `view` exit 1 for the same request (docs/cli.md: a seq past
  an illegal event is a finding, 1).
- A `query` table redirected to a file was cut to `$COLUMNS` when the shell exported it;
  only a terminal is cut now (`-o FILE` never was).
- `buraco-log help` and `buraco-log help CMD` were "No such command 'help'" (exit 2).
- `convert --validate` from a binary log to JSON Lines did not validate (its help said
  "(binary)"): an illegal event is refused either way now, nothing written.
- `ingest`'s interrupt lines had no "error:", unlike every other command's; `convert`,
  `seal` and `repair` said a SIGTERM as Ctrl-C ("interrupted", 130 for 143).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.probes import ROOT, cli_batch, one_error_line, stdout_on_a_terminal
from tests.cli.signal_inside import _SIGNAL_INSIDE, SMALL
from tests.command_line import sigint_default

ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"
RULE = "[discard.card_not_in_hand]"


# -- a seq past an illegal event: a finding (1) for every command -------------------------------


def test_every_command_asked_for_a_seq_past_the_illegal_event_exits_1_naming_it(
        tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    runs = [["explain", ILLEGAL, "--at", 40], ["replay", ILLEGAL, "--at", 40],
            ["moves", ILLEGAL, "--at", 40], ["view", ILLEGAL, "--at", 40, "-o", page],
            ["explain", ILLEGAL, "--at", 40, "-f", "json"], ["explain", ILLEGAL, "--at", 23]]
    *same, js, at_illegal = cli_batch(runs, cwd=tmp_path)
    for done in same:
        line = one_error_line(done, 1)
        for needle in (str(ILLEGAL), "40", "seq 23", RULE):
            assert needle in line, (done.args, line)
    assert same[0].stdout == "", same[0].stdout  # no explanation of another event
    assert "past the first illegal event, seq 23" in one_error_line(same[0], 1)
    assert not page.exists()
    one_error_line(js, 1)
    error = json.loads(js.stdout)["error"]
    assert (error["exit_status"], error["seq"]) == (1, 40) and RULE in error["message"], error
    # the illegal event itself is what explain is for: explained, exit 0
    assert at_illegal.returncode == 0 and f"ILLEGAL {RULE}" in at_illegal.stdout, at_illegal


# -- query tables: only a terminal is cut -----------------------------------------------------


@pytest.fixture(scope="module")
def arch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    a = tmp_path_factory.mktemp("arch44b") / "arch"
    (done,) = cli_batch([["ingest", SMALL, "-a", a, "-j", 1]])
    assert done.returncode == 0, done.stderr
    return a


LONG = "SELECT repeat('x', 150) AS long, 'short' AS kind"


def test_a_query_table_in_a_file_is_whole_though_columns_is_exported(
        arch: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "60"}
    redirected = tmp_path / "redirected.txt"
    with redirected.open("w") as out:  # `query ... > FILE`
        done = subprocess.run([sys.executable, "-m", "cli", "query", arch, LONG], stdout=out,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=120,
                              check=False)
    assert done.returncode == 0, done.stderr
    (named,) = cli_batch([["query", arch, LONG, "-o", tmp_path / "named.txt"]],
                         env={"COLUMNS": "60"})
    assert named.returncode == 0, named.stderr
    for path in (redirected, tmp_path / "named.txt"):
        rows = path.read_text().splitlines()
        assert rows[2] == "x" * 150 + "  short", (path, rows)
    code, shown, err = stdout_on_a_terminal(["query", arch, LONG], env={"COLUMNS": "60"})
    assert code == 0 and "…" in shown, (shown, err)  # a terminal is still cut to its width
    assert max(map(len, shown.splitlines())) <= 60, shown


# -- help as a command ------------------------------------------------------------------------


def test_help_as_a_command_prints_what_help_as_an_option_prints() -> None:
    pairs = [(["help"], ["--help"]), (["help", "show"], ["show", "--help"]),
             (["help", "rules", "show"], ["rules", "show", "--help"]),
             (["--debug", "help", "audit"], ["audit", "--help"])]
    runs = [words for pair in pairs for words in pair] + [["help", "help"], ["help", "nope"]]
    *done, twice, unknown = cli_batch(runs, env={"COLUMNS": "100"})
    done += [twice, done[1]]  # `help help` is the tool's help: the `--help` run above
    for asked, option in zip(done[::2], done[1::2], strict=True):
        assert asked.returncode == 0 and not asked.stderr, (asked.args, asked.stderr)
        assert asked.stdout == option.stdout and "Usage: buraco-log" in asked.stdout, asked.args
    assert "buraco-log help COMMAND" in done[0].stdout  # the tool's help says it
    line = one_error_line(unknown, 2)
    assert "No such command 'nope'" in line, line


# -- convert --validate, either way -----------------------------------------------------------


def test_convert_validate_refuses_an_illegal_binary_log_and_writes_nothing(
        tmp_path: Path) -> None:
    kept = tmp_path / "kept.jsonl"
    kept.write_text("an older file\n")
    jsonl_illegal = tmp_path / "illegal.jsonl"
    (plain,) = cli_batch([["convert", ILLEGAL, "-o", jsonl_illegal]])  # no --validate: as is
    assert plain.returncode == 0, plain.stderr
    runs = [["convert", ILLEGAL, "-o", tmp_path / "new.jsonl", "--validate"],
            ["convert", ILLEGAL, "-o", "-", "--validate"],
            ["convert", ILLEGAL, "-o", kept, "--validate", "--overwrite"],
            ["convert", jsonl_illegal, "-o", tmp_path / "new.blog", "--validate"],
            ["convert", SMALL, "-o", tmp_path / "legal.jsonl", "--validate"]]
    *refused, back, legal = cli_batch(runs, cwd=tmp_path)
    for done in refused:
        line = one_error_line(done, 1)
        assert line.startswith(f"buraco-log: error: {ILLEGAL}, seq 23: seat 1 "), line
        assert line.endswith(f" {RULE}"), line
        assert done.stdout == "", done.stdout[:200]
    line = one_error_line(back, 1)
    assert f"{jsonl_illegal}, line 25, seq 23: seat 1 " in line and line.endswith(f" {RULE}")
    assert kept.read_text() == "an older file\n"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["illegal.jsonl", "kept.jsonl", "legal.jsonl"], left
    assert legal.returncode == 0 and "313 events" in legal.stdout, legal.stderr


# -- interrupts: one line, "buraco-log: error: [SUBJECT: ]HOW ..." ---------------------------


LINE = re.compile(r"buraco-log: error: (\S+: )?(interrupted|terminated \(SIGTERM\))($|[ :;])")


def _signalled(runs: list[tuple[str, list[object]]], cwd: Path
               ) -> list[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _SIGNAL_INSIDE, sig, *map(str, args)],
                              cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=sigint_default)
             for sig, args in runs]
    done = []
    for (_, args), proc in zip(runs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(args, proc.returncode, out, err))
    return done


def test_a_sigterm_to_the_log_writers_is_said_as_one_and_ingest_says_error(
        tmp_path: Path) -> None:
    shutil.copy(SMALL, tmp_path / "g.blog")
    for name in ("seal", "repair"):
        shutil.copy(ROOT / "examples" / "golden" / "classic.jsonl", tmp_path / f"{name}.jsonl")
    runs: list[tuple[str, list[object]]] = [
        ("SIGTERM", ["convert", "g.blog", "-o", "out.jsonl"]),
        ("SIGTERM", ["seal", "seal.jsonl"]), ("SIGTERM", ["repair", "repair.jsonl"]),
        ("SIGINT", ["convert", "g.blog", "-o", "out2.jsonl"]),
        ("SIGINT", ["ingest", "g.blog", "-a", "arch", "-j", 1])]
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    done = _signalled(runs, tmp_path)
    for (sig, args), d in zip(runs, done, strict=True):
        status = 143 if sig == "SIGTERM" else 130
        line = one_error_line(d, status)
        assert LINE.match(line), (args, line)
        assert ("terminated (SIGTERM)" in line) == (sig == "SIGTERM"), (args, line)
    ingest = one_error_line(done[-1], 130)
    assert ingest == ("buraco-log: error: interrupted: nothing was committed; run the same "
                      "command again"), ingest
    now = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "arch"}
    assert now == before  # nothing written, nothing rewritten, no temporary left


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_every_command_says_an_interrupt_in_one_format(sig: str, tmp_path: Path,
                                                       arch: Path) -> None:
    """The sweep behind the fast test above: every command, 130 or 143, one line."""
    shutil.copy(SMALL, tmp_path / "g.blog")
    shutil.copy(ROOT / "examples" / "golden" / "classic.jsonl", tmp_path / "g.jsonl")
    commands: list[list[object]] = [
        ["show", "g.blog"], ["replay", "g.blog"], ["explain", "g.blog", "--at", 5],
        ["moves", "g.blog", "--at", 5], ["audit", "g.blog", "-j", 1],
        ["diff", "g.blog", "g.blog"], ["verify", "g.blog"],
        ["convert", "g.blog", "-o", "o.jsonl"], ["seal", "g.jsonl"], ["repair", "g.jsonl"],
        ["rules", "show", "classic"], ["keys", "new", "k"], ["demo", "-o", "d.blog"],
        ["simulate", "-o", "sim", "--no-progress"], ["view", "g.blog", "-o", "v.html"],
        ["review", "g.blog", "--seat", 0], ["ingest", "g.blog", "-a", "a2", "-j", 1],
        ["query", arch, "SELECT 1"], ["report", arch], ["compact", arch]]
    done = _signalled([(sig, c) for c in commands], tmp_path)
    status = 143 if sig == "SIGTERM" else 130
    for d in done:
        line = one_error_line(d, status)
        assert LINE.match(line), (d.args, line)
