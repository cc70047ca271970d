"""The command line as another program's dependency: what a script, a cron job or a web
backend meets when it runs buraco-log with odd settings around it."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli import common
from cli.common import NamedStdout, fail
from cli.jsonkeys import ERROR, KEYS
from cli.main import app
from tests.command_line import EXE, REPO, run


@pytest.mark.slow
@pytest.mark.parametrize("columns", ["0", "00"])
def test_help_under_a_columns_that_is_no_width_is_the_whole_help(columns: str) -> None:
    # a terminal that reports no size (COLUMNS=0): rich drew the help 0 columns wide, one
    # empty line and exit 0
    result = CliRunner().invoke(app, ["show", "--help"], env={"COLUMNS": columns})
    assert result.exit_code == 0
    assert "Usage:" in result.output and "--format" in result.output, result.output


@pytest.mark.slow
@pytest.mark.skipif(EXE is None, reason="needs the installed buraco-log")
@pytest.mark.parametrize("width", ["abc", "0", "-3"])
def test_help_under_a_terminal_width_that_is_no_width_is_the_whole_help(width: str) -> None:
    # typer reads TERMINAL_WIDTH as it loads: 'abc' was a traceback, '0' an empty help
    result = run("show", "--help", env={"TERMINAL_WIDTH": width})
    assert result.code == 0 and "Traceback" not in result.err, result.err
    assert "Usage:" in result.out and "--format" in result.out, result.out


GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _json(args: list[str]) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, [*args, "-f", "json"])
    return result.exit_code, json.loads(result.stdout)


def test_replay_json_has_findings_in_every_table_empty_when_there_are_none() -> None:
    # jq's `.findings | length` met a missing key on a sound log, a list on an illegal one
    clean_code, clean = _json(["replay", str(GOLDEN / "fair-thirteen.log")])
    illegal_code, illegal = _json(["replay", str(GOLDEN / "illegal.log")])
    assert (clean_code, illegal_code) == (0, 1)
    assert clean.keys() == illegal.keys()
    assert clean["findings"] == [] and illegal["findings"][0]["rule"]


def test_repair_json_has_one_key_set_whether_sound_torn_dry_run_or_repaired(
        tmp_path: Path) -> None:
    sound = tmp_path / "sound.log"
    shutil.copyfile(GOLDEN / "fair-thirteen.log", sound)
    torn = tmp_path / "torn.log"
    torn.write_bytes(sound.read_bytes() + b"\x01\x02\x03")  # a crash's half record
    runs = [_json(["repair", str(sound)]), _json(["repair", str(torn), "--dry-run"])]
    assert [code for code, _ in runs] == [0, 0]
    docs = [doc for _, doc in runs]
    assert docs[0].keys() == docs[1].keys() == KEYS["repair"].keys(), docs
    assert docs[0]["would_cut_bytes"] is None and docs[1]["would_cut_bytes"] == 3
    assert docs[1]["backup"] is None and docs[1]["cut_bytes"] is None


def test_an_error_after_part_of_a_json_answer_glues_no_second_document_onto_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the console script's stdout, with rows already streamed (`query -f json` failing
    # part-way): the error's object was written after the cut array, two documents in one
    out = io.StringIO()
    # as a run without --debug: a test before this one in the process may have run with it
    monkeypatch.setattr(common.State, "debug", False)
    monkeypatch.setattr(sys, "stdout", NamedStdout(out))
    sys.stdout.write('[\n  {\n    "i": 0\n  },\n  {')
    exit_ = fail("query: Error: Invalid Input Error: boom", as_json=True)
    assert exit_.exit_code == 1
    assert out.getvalue() == '[\n  {\n    "i": 0\n  },\n  {'  # what was written, alone
    line = capsys.readouterr().err
    assert line.startswith("buraco-log: error: query:") and "cut short" in line
    assert line.count("\n") == 1


@pytest.mark.slow
@pytest.mark.skipif(EXE is None, reason="needs the installed buraco-log")
def test_a_json_query_that_fails_part_way_ends_its_list_with_the_error_object(
        tmp_path: Path) -> None:
    from buraco_log.archive.ingest import ingest

    ingest([GOLDEN / "fair-thirteen.log"], tmp_path / "arch")
    sql = ("SELECT i FROM range(400000) t(i) "
           "WHERE CASE WHEN i > 300000 THEN error('boom') ELSE true END")
    result = run("query", tmp_path / "arch", sql, "-f", "json", "--timeout", "0", "--threads", "1")
    assert result.code == 1 and '"i": 0' in result.out  # rows came before the failure
    doc = json.loads(result.out)  # one document: never a second one glued after it
    assert doc[0] == {"i": 0} and doc[-1]["error"]["exit_status"] == 1  # and no row
    assert result.out.count('"error"') == 1 and len(result.lines) == 1


def _runs(tmp: Path) -> list[tuple[str, list[str]]]:
    """Each documented command on a sound log and on the logs its other paths take."""
    fair, illegal = str(GOLDEN / "fair-thirteen.log"), str(GOLDEN / "illegal.log")
    wrong, tampered = str(GOLDEN / "wrong-score.log"), str(GOLDEN / "tampered.log")
    unsealed = tmp / "unsealed.blog"
    shutil.copyfile(REPO / "examples" / "format" / "v2-unsealed.blog", unsealed)
    runs = [("convert", ["convert", fair, "-o", str(tmp / "c.jsonl")]),
            ("seal", ["seal", str(unsealed)]), ("seal", ["seal", str(unsealed)]),
            ("keys new", ["keys", "new", "k", "--dir", str(tmp / "keys")]),
            ("simulate", ["simulate", "-o", str(tmp / "sim"), "-j", "1"]),
            ("demo", ["demo", "-o", str(tmp / "demo.blog"), "--players", "2",
                      "--rules", "thirteen-quick"]),
            ("diff", ["diff", fair, fair]), ("diff", ["diff", illegal, fair]),
            ("diff", ["diff", tampered, fair])]
    torn = tmp / "torn.log"
    torn.write_bytes((GOLDEN / "fair-thirteen.log").read_bytes() + b"\x01\x02\x03")
    runs += [("repair", ["repair", str(torn), "--dry-run"]), ("repair", ["repair", str(torn)]),
             ("repair", ["repair", str(torn)])]  # torn, dry run; repaired; then sound
    for log in (fair, illegal, wrong):
        runs += [("show", ["show", log]), ("replay", ["replay", log]),
                 ("replay", ["replay", log, "--at", "5", "--seat", "1"]),
                 ("explain", ["explain", log, "--at", "23"]),
                 ("explain", ["explain", log, "--at", "3"]),
                 ("moves", ["moves", log, "--at", "10"]), ("moves", ["moves", log, "--at", "9"]),
                 ("audit", ["audit", log]), ("verify", ["verify", log])]
    return runs


@pytest.mark.slow
def test_every_json_answer_has_exactly_the_keys_the_reference_documents(
        tmp_path: Path) -> None:
    # the reference (docs/cli.md, from cli.jsonkeys) is what a program reading -f json has
    seen: dict[str, int] = {}
    for command, args in _runs(tmp_path):
        code, doc = _json(args)
        assert "error" not in doc, (args, doc)
        assert sorted(doc) == sorted(KEYS[command]), (args, code)
        seen[command] = seen.get(command, 0) + 1
    assert seen.keys() == KEYS.keys()


@pytest.mark.slow
def test_the_reference_names_every_key_of_the_json_error_object() -> None:
    code, doc = _json(["verify", str(GOLDEN / "tampered.log")])
    assert code == 1 and doc["error"].keys() <= ERROR.keys()
    known = {"code", "message", "exit_status", "path", "seq", "offset", "rule"}
    assert known <= doc["error"].keys()
    assert doc["error"]["exit_status"] == code


def _stdin_closed() -> None:
    os.close(0)


@pytest.mark.slow
@pytest.mark.skipif(EXE is None, reason="needs the installed buraco-log")
def test_keys_new_passphrase_with_standard_input_closed_and_no_terminal_is_a_usage_error(
        tmp_path: Path) -> None:
    # a daemon or a cron job (`<&-`, no controlling terminal): it was an internal error
    # (AttributeError), after a "Passphrase: " prompt nobody could answer
    p = subprocess.run([str(EXE), "keys", "new", "k", "--dir", str(tmp_path), "--passphrase",
                        "-f", "json"], capture_output=True, stdin=None, timeout=60,
                       start_new_session=True, preexec_fn=_stdin_closed, check=False)
    assert p.returncode == 2, p.stderr
    error = json.loads(p.stdout)["error"]
    assert error["code"] == "usage" and "standard input is closed" in error["message"]
    assert p.stderr.decode().startswith("buraco-log: error: --passphrase:")
    assert not list(tmp_path.iterdir())  # no key made
