"""Fault probes of the CLI (round 45).

- `--at N` past the events read from a damaged log: `view` said 1 (the damage may hold seq N),
  `replay`, `explain` and `moves --ignore-integrity` said "the log has no seq N", 2, as for a
  seq an intact log does not hold. Every command now says 1, naming the damage's rule; so do
  `replay --hand`/`--turn` past the events read.
- `replay --hand H` of a hand the log holds past its first illegal event said "the log has no
  hand H (hands 0 to 0)", 2: the hands counted were the legal ones. It is a finding (1), as
  `--at` of a seq there is; a hand the log does not hold stays 2, the hands it holds named.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import brokenlogs as bl
from tests.cli.probes import ROOT, cli_batch, one_error_line
from tests.cli.terminal import _stderr_on_a_terminal

ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"  # seq 23 illegal; hands 0 and 1


@pytest.fixture(scope="module")
def torn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A binary log cut in the middle of a record: seqs 0 to 111 read, the rest lost."""
    path = bl.write(tmp_path_factory.mktemp("torn") / "torn.log",
                    bl.fair_match("thirteen-quick", 2, 1), segment=16)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def test_at_past_the_events_read_from_a_damaged_log_is_a_finding_for_every_command(
        torn: Path, tmp_path: Path) -> None:
    anyway = "--ignore-integrity"
    runs: list[list[object]] = [
        ["explain", torn, "--at", 200, anyway], ["replay", torn, "--at", 200, anyway],
        ["moves", torn, "--at", 200, anyway],
        ["view", torn, "--at", 200, "-o", tmp_path / "p.html"],
        ["replay", torn, "--at", 9999, anyway],
        ["replay", torn, "--at", 200, anyway, "-f", "json"],
        ["replay", torn, "--hand", 5, anyway], ["replay", torn, "--at", 40, anyway]]
    done = cli_batch(runs, cwd=tmp_path)
    for d in done[:5]:  # was 2 ("the log has no seq 200 (seqs 0 to 111)") but for view
        line = one_error_line(d, 1)
        assert str(torn) in line and "no seq" not in line, (d.args, line)
        assert "[log.torn]" in line or "torn tail" in line, (d.args, line)
        assert d.stdout == "", d.args
    assert not list(tmp_path.glob("*.html"))
    error = json.loads(done[5].stdout)["error"]
    assert (error["exit_status"], error["seq"], error["rule"]) == (1, 200, "log.torn"), error
    line = one_error_line(done[6], 1)  # a hand the damage may hold
    assert "hand 5 is past the events read from the damaged log (seqs 0 to 111)" in line, line
    before = done[7]  # a seq read is answered, the log's damage a finding all the same
    assert before.returncode == 1 and before.stdout.splitlines()[1].startswith("seq 40 "), (
        before.stderr)


def test_a_hand_held_past_an_illegal_event_is_a_finding(tmp_path: Path) -> None:
    past, absent, turn = cli_batch([["replay", ILLEGAL, "--hand", 1],
                                    ["replay", ILLEGAL, "--hand", 9],
                                    ["replay", ILLEGAL, "--hand", 1, "--turn", 0, "-f", "json"]],
                                   cwd=tmp_path)
    line = one_error_line(past, 1)  # was 2: "the log has no hand 1 (hands 0 to 0)"
    assert "hand 1: seq 127 is past the first illegal event, seq 23" in line, line
    assert "[discard.card_not_in_hand]" in line, line
    line = one_error_line(absent, 2)
    assert line.endswith("the log has no hand 9 (hands 0 to 1)"), line
    error = json.loads(turn.stdout)["error"]
    assert (error["exit_status"], error["rule"]) == (1, "discard.card_not_in_hand"), error


def test_a_changed_log_read_to_its_end_has_no_seq_past_it_for_view_too(tmp_path: Path) -> None:
    """A log whose chain is broken but whose every record decodes, read anyway to its end:
    `replay --ignore-integrity --at 9999` says the log has no seq 9999 (2); `view
    --ignore-integrity` said the damage stopped the page (1)."""
    tampered = ROOT / "examples" / "disputes" / "tampered.log"
    runs: list[list[object]] = [
        ["view", tampered, "--ignore-integrity", "--at", 9999, "-o", "p.html"],
        ["replay", tampered, "--ignore-integrity", "--at", 9999]]
    for d in cli_batch(runs, cwd=tmp_path):
        line = one_error_line(d, 2)
        assert "the log has no seq 9999 (seqs 0 to 312)" in line, (d.args, line)
    assert list(tmp_path.iterdir()) == []


# -- a page's file of the longest name a file may have ----------------------------------------

def test_a_page_may_have_the_longest_name_a_file_may_have(tmp_path: Path) -> None:
    """`view`, `review` and `audit --html` wrote their page beside it under a temporary name
    of the page's name and more: a page named with 251 bytes or more (a file may have 255)
    failed with "File name too long", exit 2."""
    log = tmp_path / ("L" * 250 + ".log")
    log.write_bytes(ILLEGAL.read_bytes())
    page = "P" * 250 + ".html"  # 255 bytes
    view, audit = cli_batch([["view", log.name, "--at", 5, "-o", page],
                             ["audit", log.name, "-j", 1, "--html", "a" + page[1:]]],
                            cwd=tmp_path)
    assert view.returncode == 0, view.stderr
    assert audit.returncode == 1 and "File name too long" not in audit.stderr, audit.stderr
    for name in (page, "a" + page[1:]):
        assert (tmp_path / name).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([log.name, page, "a" + page[1:]])


# -- progress bars: none on a dumb terminal ---------------------------------------------------


def test_no_progress_bar_on_a_dumb_terminal(tmp_path: Path) -> None:
    """A dumb terminal (TERM=dumb) cannot redraw a bar: `audit`, `review` and `simulate` drew
    none, yet each left an empty line ("\\r\\n") on it."""
    good = ROOT / "examples" / "disputes" / "fair-thirteen.log"
    audit = ["audit", good, ILLEGAL, "-j", 1]
    dumb_audit, dumb_sim = _stderr_on_a_terminal(
        [audit, ["simulate", "--rules", "thirteen-quick", "--matches", 2, "-j", 1, "-o", "sim"]],
        tmp_path, "dumb")
    (status, out, shown), = _stderr_on_a_terminal([audit], tmp_path, "xterm")
    assert status == 1 and b"audit" in shown and b"2/2" in shown  # the bar, where it is drawn
    assert dumb_audit[0] == 1 and dumb_audit[1] == out  # the same report on stdout
    assert dumb_audit[2] == b"", dumb_audit[2]  # was b"\r\n"
    assert dumb_sim[0] == 0 and dumb_sim[2] == b"", dumb_sim[2]
    assert len(list((tmp_path / "sim").iterdir())) == 2


# -- keys new -f json: every refusal is JSON on stdout ----------------------------------------

def test_keys_new_refusals_are_json_on_stdout_as_every_json_error_is(tmp_path: Path) -> None:
    """A bad key name, a passphrase file that is missing or holds none, or both passphrase
    options left stdout empty under -f json (a key that exists already gave the JSON
    error)."""
    (tmp_path / "pass").write_text("\n")
    runs: list[list[object]] = [
        ["keys", "new", "a/b", "-f", "json"],
        ["keys", "new", "k", "-f", "json", "--passphrase-file", "pass"]]
    for d in cli_batch(runs, cwd=tmp_path):
        line = one_error_line(d, 2)
        error = json.loads(d.stdout)["error"]  # was "": no JSON
        assert error["exit_status"] == 2 and line.endswith(error["message"]), (d.args, error)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pass"]  # no key written


# -- a usage error's JSON into an output that takes none --------------------------------------

def test_a_usage_errors_json_into_a_full_or_closed_stdout_is_still_one_line_and_2(
        tmp_path: Path) -> None:
    """`replay --bogus -f json > /dev/full` (or `| true`, or `>&-`) printed a traceback after
    the usage line and exited 1: the JSON error's write was outside every catch."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "cli", "replay", "--bogus", "-f", "json"]
    read, write = os.pipe()
    os.close(read)  # a reader gone before the first write: `| true`
    with open("/dev/full", "wb") as full:
        procs = [subprocess.Popen(args, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                  stdout=out, stderr=subprocess.PIPE, text=True)
                 for out in (full, write)]
        procs.append(subprocess.Popen(args, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True, preexec_fn=lambda: os.close(1)))  # `>&-`
        os.close(write)
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            done = subprocess.CompletedProcess(args, proc.returncode, "", err)
            line = one_error_line(done, 2)  # was 1, with a traceback
            assert line.startswith("buraco-log: usage: No such option: --bogus"), line


# -- a process started without standard error --------------------------------------------------

def test_without_stderr_the_data_is_still_written_and_nothing_else(tmp_path: Path) -> None:
    """`2>&-` (cron lines, daemons): asking whether stderr is a terminal, for a progress bar,
    was an internal error: `audit` of two logs and `simulate` printed nothing and exited 1;
    `--debug` wrote its traceback into stdout's JSON."""
    import os
    import subprocess
    import sys

    good = ROOT / "examples" / "disputes" / "fair-thirteen.log"
    runs: list[list[object]] = [
        ["audit", good, ILLEGAL, "-j", 1],
        ["simulate", "--rules", "thirteen-quick", "--matches", 1, "-j", 1, "-o", "sim"],
        ["--debug", "replay", ILLEGAL, "-f", "json"]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=tmp_path,
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True,
                              preexec_fn=lambda: os.close(2))  # `2>&-`
             for args in runs]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    (audit, audited), (sim, simulated), (replay, replayed) = [
        (p.returncode, out) for p, out in zip(procs, outs, strict=True)]
    assert audit == 1 and f"{good.name}: OK" in audited and "2 logs" in audited, audited
    assert sim == 0 and "1 match of thirteen-quick" in simulated, simulated
    assert len(list((tmp_path / "sim").iterdir())) == 1
    assert replay == 1 and "Traceback" not in replayed, replayed  # the finding: exit 1
    assert json.loads(replayed)["seq"] == 22  # the last legal table, as without --debug


def test_a_full_stderr_loses_the_lines_not_the_exit_status(tmp_path: Path) -> None:
    """`2>/dev/full`: the failed error line made `show` of a missing file (and a usage error)
    exit 1, not 2, and `view` exit 1 after it had written its page ("wrote ..." failed)."""
    import os
    import subprocess
    import sys

    runs: list[list[object]] = [["show", "missing.blog"],
                                ["view", ILLEGAL, "--at", 5, "-o", "p.html"],
                                ["replay", ILLEGAL]]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open("/dev/full", "wb") as full:
        procs = [subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)],
                                  cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=full) for args in runs]
        done = [(p.communicate(timeout=120)[0], p.returncode) for p in procs]
    assert [status for _, status in done] == [2, 0, 1], done  # was [1, 1, 1]
    assert (tmp_path / "p.html").stat().st_size > 1000
    assert b"seq 22" in done[2][0]  # the table, before the finding that has no line to say it
