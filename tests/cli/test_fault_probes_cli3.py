"""One behaviour across commands: an empty log, an illegal later event, a read error, a
missing command, help into a closed pipe. Each case runs a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.memory import MEM, _read_fails

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "sim" / "classic-2p-000000.blog"


def cli(*argv: object, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cli", *map(str, argv)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=120, check=False)


@pytest.fixture(params=[0, 7], ids=["empty", "header-cut"])
def unstarted(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A log whose writer stopped before its header was whole: no event was ever in it."""
    path = tmp_path / "m.blog"
    path.write_bytes(GOOD.read_bytes()[: request.param])
    return path


def test_an_empty_log_is_not_started_in_verify_as_in_audit(unstarted: Path) -> None:
    assert cli("audit", unstarted).returncode == 0
    r = cli("verify", unstarted)
    # it said "torn tail ... delete the file", exit 1, where audit says NOT STARTED, exit 0
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith(f"{unstarted}: NOT STARTED: no whole header (") and \
        "delete the file" in r.stdout
    j = cli("verify", unstarted, "-f", "json")
    assert j.returncode == 0 and json.loads(j.stdout)["not_started"] is True


def test_verify_json_says_a_whole_log_is_started() -> None:
    r = cli("verify", GOOD, "-f", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["not_started"] is False


@pytest.mark.parametrize("argv", [["replay"], ["view", "-o", "-"], ["moves"],
                                  ["explain", "--at", "0"], ["review", "--seat", "0"]])
def test_an_empty_log_has_no_table_in_replay_as_a_header_alone(unstarted: Path,
                                                                argv: list[str]) -> None:
    r = cli(argv[0], unstarted, *argv[1:])
    # it said "torn tail: file header cut short", exit 1 (review: "damaged before its first
    # event", exit 1)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert "a match not started" in r.stderr and "[log.empty]" in r.stderr
    assert "torn" not in r.stderr and r.stderr.count("\n") == 1


def test_show_of_an_empty_log_is_a_summary_of_a_match_not_started(unstarted: Path) -> None:
    r = cli("show", unstarted)
    # it said "torn ... the summary covers the 0 events before it", exit 1
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "match     unknown: the log holds no events" in r.stdout
    # its log line said "torn, ... torn tail at byte 0" where verify says NOT STARTED
    assert "not started" in r.stdout and "torn" not in r.stdout


@pytest.fixture(scope="module")
def illegal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    from tests.brokenlogs import match, with_illegal_discard, write

    events, bad = with_illegal_discard(match("biriba", 4, seed=3))
    return write(tmp_path_factory.mktemp("ill") / "bad.blog", events), bad


def test_view_of_a_log_with_an_illegal_later_event_writes_the_page_and_exits_1(
        illegal: tuple[Path, int], tmp_path: Path) -> None:
    log, bad = illegal
    page = tmp_path / "bad.html"
    r = cli("view", log, "-o", page)
    # a referee's `view LOG && echo clean` said clean (exit 0)
    assert r.returncode == 1 and f"seq {bad} is illegal" in r.stderr
    assert page.read_bytes().startswith(b"<!DOCTYPE html>")
    assert "Traceback" not in r.stderr


def test_replay_and_show_of_the_end_of_an_illegal_log_show_it_and_exit_1(
        illegal: tuple[Path, int]) -> None:
    log, bad = illegal
    for argv in (["replay"], ["replay", "-f", "json"], ["show"]):
        r = cli(argv[0], log, *argv[1:])
        assert r.returncode == 1 and r.stdout, (argv, r.stderr)  # shown, then the finding
        assert r.stderr.startswith(f"buraco-log: error: {log}: seq {bad}") and \
            r.stderr.endswith(" [discard.card_not_in_hand]\n") and r.stderr.count("\n") == 1, \
            r.stderr
    json.loads(cli("replay", log, "-f", "json").stdout)  # still one JSON document
    # a table before the illegal event is what was asked for: a note, exit 0
    r = cli("replay", log, "--at", bad - 2)
    assert r.returncode == 0 and "note" in r.stderr


@pytest.mark.skipif(not _read_fails(MEM), reason="no file here whose read fails")
@pytest.mark.parametrize("argv", [["replay"], ["verify"], ["show"], ["diff", GOOD],
                                  ["explain", "--at", "1"], ["moves"], ["seal"],
                                  ["convert", "-o", "out.jsonl"]])
def test_a_log_whose_read_fails_exits_2_in_every_command(argv: list[object],
                                                         tmp_path: Path) -> None:
    r = cli(argv[0], MEM, *argv[1:], cwd=tmp_path)
    # show and diff said 2, the others 1: an input not readable as a log is 2
    assert r.returncode == 2, (argv, r.returncode, r.stderr)
    assert r.stderr.startswith(f"buraco-log: error: {MEM}: ") and "Traceback" not in r.stderr


def test_a_full_standard_output_stays_exit_1() -> None:
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "cli", "replay", str(GOOD)], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=120, check=False,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 1 and p.stderr == "buraco-log: error: <stdout>: No space left on " \
        "device\n", p.stderr


@pytest.mark.parametrize("group", [[], ["keys"], ["rules"]])
def test_a_group_without_its_command_is_a_usage_error(group: list[str]) -> None:
    r = cli(*group)
    # `keys` printed its help and exited 0: a script asking for nothing "succeeded"
    assert (r.returncode, r.stdout) == (2, ""), r.returncode
    assert r.stderr.startswith("buraco-log: usage: missing command: one of ")
    assert f"(see `{' '.join(['buraco-log', *group])} --help`)" in r.stderr
    assert "schema" not in r.stderr and r.stderr.count("\n") == 1


@pytest.mark.parametrize("argv", [["--help"], ["keys", "--help"], ["--version"],
                                  ["rules", "show", "-h"]])
def test_help_into_a_closed_pipe_stops_quietly_as_commands_do(argv: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    with subprocess.Popen([sys.executable, "-m", "cli", *argv], bufsize=0,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as p:
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()
        err = p.stderr.read()
        p.wait(timeout=120)
    # `--help | head` exited 1, where a command into `| head` exits 141
    assert (p.returncode, err) == (141, b""), (p.returncode, err)


def test_diff_of_two_copies_torn_alike_says_they_agree_and_which_is_damaged(
        tmp_path: Path) -> None:
    """The same events read from both, one copy or both torn: it said "first divergence at seq
    None", with "(no event)" on each side."""
    from tests.brokenlogs import match, tear, write

    events = match("classic", 2, seed=5)[:40]
    whole = write(tmp_path / "whole.blog", events, segment=1)
    torn = write(tmp_path / "torn.blog", match("classic", 2, seed=5)[:41], segment=1)
    tear(torn)  # the 41st event's record cut short: 40 events intact, as in `whole`
    r = cli("diff", torn, whole)
    assert r.returncode == 1 and "None" not in r.stdout, r.stdout
    assert "agree on all 40 events read intact, but A is torn" in r.stdout, r.stdout
    r = cli("diff", torn, torn)
    # each copy's damage with where it is (probe 40: it said only "A is torn and B is torn")
    assert r.returncode == 1 and "A is torn at byte " in r.stdout, r.stdout
    assert " and B is torn at byte " in r.stdout, r.stdout
    assert cli("diff", whole, whole).returncode == 0
