"""Fault probes of the general CLI, round 41.

- ``demo -o X.jsonl`` was refused ("the demo writes a binary log ... name it .blog, then
  convert"): a user naming the file .jsonl wants JSON Lines. It now writes them, the same events
  the binary log would hold (its head digest too), through the JSON Lines writer.
- A damaged log's JSON error gave `code` and `kind`, not the rule its audit finding names;
  `show` named the byte where the damage starts but not the seq.
- A SIGTERM while typer built the command group (before any command ran) was a traceback and
  death by SIGINT; one while click parsed the options was exit 130 without a word.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from buraco_log import jsonl, log
from tests.cli.probes import ROOT, cli, one_error_line


def test_demo_to_a_jsonl_name_writes_json_lines_that_replay_and_convert_back(
        tmp_path: Path) -> None:
    done = cli("demo", "--players", "2", "--seed", "s41", "-o", "d.jsonl", "-f", "json",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["audit"]["ok"] is True
    assert "buraco-log convert d.jsonl -o d.blog" in report["next"]  # not -o d.jsonl again
    path = tmp_path / "d.jsonl"
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(first)["log"] == "buraco-log"  # text, not the binary magic
    events = jsonl.read_jsonl(path)
    assert len(events) == report["events"]
    assert os.listdir(tmp_path) == ["d.jsonl"]  # no temporary left
    # replays as a log, and converts back to the very events (and head) the binary holds
    assert cli("replay", path, "--at", "5").returncode == 0
    back = cli("convert", path, "-o", tmp_path / "d.blog")
    assert back.returncode == 0, back.stderr
    assert log.read_events(tmp_path / "d.blog") == events
    binary = cli("demo", "--players", "2", "--seed", "s41", "-o", "b.blog", cwd=tmp_path)
    assert binary.returncode == 0, binary.stderr
    assert log.read_events(tmp_path / "b.blog") == events
    assert log.verify(tmp_path / "b.blog").head == log.verify(tmp_path / "d.blog").head


def test_demo_to_a_jsonl_name_in_a_missing_directory_is_one_line_and_no_file(
        tmp_path: Path) -> None:
    line = one_error_line(cli("demo", "--players", "2", "-o", "no/d.jsonl", cwd=tmp_path), 2)
    assert "no/d.jsonl" in line
    assert os.listdir(tmp_path) == []


def test_the_json_error_of_a_damaged_log_names_the_rule_the_audit_finding_names(
        tmp_path: Path) -> None:
    # it gave only "code": "log.format" and "kind": "damage"; the audit's finding said
    # "rule": "log.damage", and a referee's script had to map one onto the other
    done = cli("demo", "--players", "2", "-o", "d.blog", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = bytearray((tmp_path / "d.blog").read_bytes())
    data[len(data) // 2] ^= 0x40
    (tmp_path / "d.blog").write_bytes(bytes(data))
    finding = json.loads(cli("audit", tmp_path / "d.blog", "-f", "json").stdout)["findings"][0]
    for command in (("replay",), ("explain", "--at", "3"), ("moves", "--at", "3")):
        done = cli(*command, tmp_path / "d.blog", "-f", "json")
        line = one_error_line(done, 1)
        error = json.loads(done.stdout)["error"]
        assert error["rule"] == finding["rule"] == f"log.{error['kind']}", (command, error)
        assert f"{error['path']}, byte {error['offset']}, seq {error['seq']}: " in line
    # show prints the summary of what is intact, then says where it stops: with the seq too
    line = one_error_line(cli("show", tmp_path / "d.blog"), 1)
    assert f", byte {finding['offset']}, seq {finding['seq']}: broken: " in line
    missing = cli("replay", tmp_path / "none.blog", "-f", "json")
    assert "rule" not in json.loads(missing.stdout)["error"]  # no log: no rule of one broken


_TERM_WHILE_TYPER_BUILDS = """
import os, signal, sys
import typer.main
from cli import main
real = typer.main.get_group
def get_group(*args, **kwargs):  # the SIGTERM lands while typer reads the commands' signatures
    os.kill(os.getpid(), signal.SIGTERM)
    return real(*args, **kwargs)
typer.main.get_group = get_group
sys.argv = ["buraco-log", "rules", "list"]
main.run()
"""


def test_a_sigterm_before_the_command_runs_is_one_line_and_143(tmp_path: Path) -> None:
    # typer builds the click group (a second on a loaded machine) outside click's catch: a
    # SIGTERM then was a KeyboardInterrupt traceback, and the process died of SIGINT (-2)
    done = subprocess.run([sys.executable, "-c", _TERM_WHILE_TYPER_BUILDS], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert one_error_line(done, 143) == "buraco-log: error: terminated (SIGTERM)"
    assert done.stdout == ""


_TERM_WHILE_CLICK_PARSES = """
import os, signal, sys
import typer.core
from cli import main
real = typer.core.TyperGroup.make_context
def make_context(self, *args, **kwargs):  # the SIGTERM lands while the options are parsed
    os.kill(os.getpid(), signal.SIGTERM)
    return real(self, *args, **kwargs)
typer.core.TyperGroup.make_context = make_context
sys.argv = ["buraco-log", "rules", "list"]
main.run()
"""


def test_a_sigterm_while_the_options_are_parsed_is_one_line_and_143() -> None:
    # typer answers an interrupt outside the command with 130 and no word (for a SIGTERM too):
    # `audit -j 2` stopped in its first half second exited 130 in silence, 15 runs in 40
    done = subprocess.run([sys.executable, "-c", _TERM_WHILE_CLICK_PARSES], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert one_error_line(done, 143) == "buraco-log: error: terminated (SIGTERM)"
    assert done.stdout == ""
