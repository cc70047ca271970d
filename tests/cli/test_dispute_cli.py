"""`buraco-log show|replay|audit|diff|explain`: formats, exit codes, errors, entry point."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from buraco_log import audit
from buraco_log.cards import format_card as describe_card
from buraco_log.events import AnyEvent
from buraco_log.timeline import Timeline
from cli.main import app
from tests import brokenlogs as bl

runner = CliRunner()


@pytest.fixture(scope="module")
def clean() -> list[AnyEvent]:
    return bl.fair_match("thirteen-quick", 2, 1)


@pytest.fixture()
def logs(tmp_path: Path, clean: list[AnyEvent]) -> dict[str, Path]:
    illegal, _ = bl.with_illegal_discard(clean)
    score, _ = bl.with_wrong_score(clean, 100)
    out = {
        "clean": bl.write(tmp_path / "clean.log", clean),
        "illegal": bl.write(tmp_path / "illegal.log", illegal),
        "score": bl.write(tmp_path / "score.log", score),
        "tampered": bl.write(tmp_path / "tampered.log", clean, segment=16),
    }
    bl.tamper(out["tampered"], 2)
    return out


def run(*args: object) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def as_json(obj: object) -> object:
    return json.loads(json.dumps(msgspec.to_builtins(obj)))


# -- every command, every format, and json equal to the library

def test_show_prints_the_summary_and_its_json_is_the_library_summary(
        logs: dict[str, Path]) -> None:
    code, out, err = run("show", logs["clean"])
    assert code == 0 and err == ""
    assert "thirteen-quick" in out and "winner" in out and "sealed" in out
    code, out, _ = run("show", logs["clean"], "--format", "json")
    assert code == 0 and json.loads(out) == as_json(audit.show_log(logs["clean"]))


def test_show_reads_the_log_once(logs: dict[str, Path],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A million-event log took as long again when `show` read it a second time for the
    melds below the summary."""
    from buraco_log.audit import integrity

    reads: list[str] = []
    real = integrity._read  # every reader of a log's bytes, a list or a stream

    def counted(path: str, *args: Any) -> Any:
        reads.append(path)
        return real(path, *args)

    monkeypatch.setattr(integrity, "_read", counted)
    code, out, _ = run("show", logs["clean"])
    assert code == 0 and "melds" in out  # the melds below the summary were shown
    assert reads == [str(logs["clean"])]


def test_show_of_a_log_damaged_from_its_first_record_says_what_is_unknown(
        logs: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "damaged.log"
    data = bytearray(logs["clean"].read_bytes())
    off, hsize, _ = bl.segment_offsets(logs["clean"])[0]
    data[off + hsize + 5] ^= 0xFF  # inside the first record's payload: its checksum fails
    path.write_bytes(bytes(data))
    code, out, err = run("show", path)  # the summary of what is intact, and exit 1: damage
    assert code == 1 and err.startswith(f"buraco-log: error: {path}, byte ") and "broken" in err
    assert len(err.splitlines()) == 1
    lines = out.splitlines()
    assert lines[0] == "match     unknown: the log's first event could not be read"
    assert "BROKEN at record 0" in lines[2] and "None" not in out


def test_show_of_a_log_with_no_event_says_it_holds_none(tmp_path: Path) -> None:
    """It said the first event "could not be read" of a log with nothing to read."""
    for name, text in [("empty.jsonl", ""),
                       ("header.jsonl", '{"log": "buraco-log", "version": 2, "sealed": true}\n')]:
        path = tmp_path / name
        path.write_text(text)
        code, out, err = run("show", path)
        assert code == 0 and err == "", (name, err)
        assert out.splitlines()[0] == "match     unknown: the log holds no events", (name, out)


def test_a_file_that_is_no_log_reads_unknown_and_an_empty_log_has_no_seqs(
        tmp_path: Path) -> None:
    junk = tmp_path / "junk.blog"
    junk.write_bytes(b"hello, not a log\n")
    code, out, _ = run("audit", junk)  # named alone and no log at all: exit 2
    assert code == 2 and out.splitlines()[0].startswith(
        f"{junk}: FINDINGS (1)  match unknown  rules unknown  0 events")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out, err = run("explain", empty, "--at", 1)
    # a match not started has no seq: 2, as any seq the match does not have (it said 1)
    assert (code, out) == (2, "") and err.strip().endswith("there is no seq 1 [log.empty]")
    empty_blog = tmp_path / "empty.blog"
    empty_blog.write_bytes(b"")
    code, out, err = run("explain", empty_blog, "--at", 0)
    # a match not started, as audit says it (it said "torn", exit 1)
    assert code == 2 and "[log.empty]" in err and "repair" not in err


def test_replay_json_is_the_library_table_view(logs: dict[str, Path]) -> None:
    tl = Timeline(audit.load(logs["clean"]))
    code, out, _ = run("replay", logs["clean"], "--at", 40, "--seat", 1, "-f", "json")
    view = as_json(tl.view(40, seat=1))
    got = json.loads(out)
    recent = got.pop("recent")
    # the command's JSON has `findings` in every table, [] when the library's view has none
    assert code == 0 and got == {"findings": [], **{k: v for k, v in view.items()
                                                    if k != "recent"}}
    # the recent events are objects for programs, with the same words people read
    assert [f"seq {r['seq']}: {r['text']}" for r in recent] == view["recent"]
    assert [r["event"] for r in recent] == [type(tl.events[r["seq"]]).__name__ for r in recent]
    code, out, _ = run("replay", logs["clean"], "--hand", 1, "--turn", 3, "-f", "json")
    assert code == 0 and json.loads(out)["seq"] == tl.seq_of(1, 3)
    code, out, _ = run("replay", logs["clean"])
    assert code == 0 and f"seq {tl.last_seq} " in out and "recent" in out


def test_replay_for_a_seat_hides_the_other_hands(logs: dict[str, Path]) -> None:
    code, out, _ = run("replay", logs["clean"], "--at", 40, "--seat", 0)
    assert code == 0 and "hidden)" in out and "view of seat 0" in out


def test_a_seat_view_never_names_another_seats_draw(logs: dict[str, Path]) -> None:
    tl = Timeline(audit.load(logs["clean"]))
    draws = [e for e in tl.events if type(e).__name__ == "CardDrawn"]
    for e in draws[:12]:
        other = 1 - e.seat if e.seat in (0, 1) else 0
        mine = tl.recent(e.seq, 1, seat=e.seat)[0]
        theirs = tl.recent(e.seq, 1, seat=other)[0]
        assert mine.endswith(f"drew {describe_card(e.card)}"), mine
        assert theirs.endswith("drew a card"), theirs  # the other seat never saw it
        assert tl.recent(e.seq, 1)[0] == mine  # the referee sees every card


def test_audit_json_is_the_library_verdict(logs: dict[str, Path]) -> None:
    for name in logs:
        code, out, err = run("audit", logs[name], "--format", "json")
        assert json.loads(out) == as_json(audit.audit_log(str(logs[name]))), name
        assert code == (0 if name == "clean" else 1) and err == ""


def test_audit_table_names_the_seq_rule_difference_and_record(logs: dict[str, Path],
                                                             clean: list[AnyEvent]) -> None:
    _, seq = bl.with_illegal_discard(clean)
    code, out, _ = run("audit", logs["illegal"])
    assert code == 1 and f"first illegal event at seq {seq} [discard.card_not_in_hand]" in out
    code, out, _ = run("audit", logs["score"])
    assert code == 1 and "difference +100" in out
    offset = bl.segment_offsets(logs["clean"].with_name("tampered.log"))[2][0]
    code, out, _ = run("audit", logs["tampered"])
    assert code == 1 and f"BROKEN at record 2, byte {offset}" in out
    code, out, _ = run("audit", logs["clean"])
    assert code == 0 and ": OK" in out


def test_auditing_a_directory_goes_on_past_bad_logs_and_sums_up(
        tmp_path: Path, logs: dict[str, Path]) -> None:
    (tmp_path / "junk.log").write_bytes(b"BURACOLG but not really a log")
    code, out, _ = run("audit", tmp_path, "-j", 2)
    assert code == 1
    assert out.strip().splitlines()[-1] == (
        "audited 5 logs: 1 clean, 4 with findings (integrity 2, legality 1, scoring 1); "
        "3 logs of a match an earlier log holds too (see their notes)")
    code, out, _ = run("audit", tmp_path, "--format", "json")
    paths = [v["path"] for v in json.loads(out)]
    assert paths == audit.find_logs([tmp_path])
    code, out, _ = run("audit", tmp_path, "-q")
    # no verdict of the clean log (the others' notes name it: the same match)
    assert not any(line.startswith(f"{tmp_path / 'clean.log'}:") for line in out.splitlines())


def test_diff_exits_0_for_equal_copies_and_1_for_different_ones(
        logs: dict[str, Path], clean: list[AnyEvent]) -> None:
    code, out, _ = run("diff", logs["clean"], logs["clean"])
    assert code == 0 and "identical" in out
    _, seq = bl.with_illegal_discard(clean)
    code, out, _ = run("diff", logs["clean"], logs["illegal"])
    assert code == 1 and f"first divergence at seq {seq}" in out
    code, out, _ = run("diff", logs["clean"], logs["illegal"], "--format", "json")
    assert json.loads(out) == as_json(audit.diff_logs(logs["clean"], logs["illegal"]))


def test_explain_prints_the_rule_text_and_the_facts(logs: dict[str, Path],
                                                    clean: list[AnyEvent]) -> None:
    _, seq = bl.with_illegal_discard(clean)
    code, out, _ = run("explain", logs["illegal"], "--at", seq)
    assert code == 0 and "ILLEGAL [discard.card_not_in_hand]" in out and "facts" in out
    code, out, _ = run("explain", logs["illegal"], "--at", seq, "-f", "json")
    assert json.loads(out) == as_json(audit.explain(logs["illegal"], seq))
    code, out, _ = run("explain", logs["clean"], "--at", 3)
    assert code == 0 and out.splitlines()[1].startswith("LEGAL")


def test_replay_step_moves_forwards_and_backwards(logs: dict[str, Path]) -> None:
    deal = Timeline(audit.load(logs["clean"])).seq_of(1)
    result = runner.invoke(app, ["replay", str(logs["clean"]), "--at", "10", "--step",
                                 "--recent", "1"], input="n\nn\np\n50\nh1\nh9\nq\n")
    seqs = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("seq ")]
    assert result.exit_code == 0 and seqs == ["10", "11", "12", "11", "50", str(deal)]
    assert "no hand 9" in result.stderr


def test_audit_can_require_a_commitment(tmp_path: Path) -> None:
    path = bl.write(tmp_path / "m.log", bl.match("biriba", 4, 1, max_hands=1))
    assert run("audit", path)[0] == 0
    code, out, _ = run("audit", path, "--require-commitment")
    assert code == 1 and "deal.commitment_missing" in out


# -- errors: one line on stderr naming the file, nothing on stdout

@pytest.mark.parametrize("args", [
    ["show", "{missing}"],
    ["replay", "{clean}", "--at", "99999"],
    ["replay", "{clean}", "--hand", "42"],
    ["replay", "{tampered}"],
    ["explain", "{clean}", "--at", "99999"],
    ["diff", "{clean}", "{missing}"],
])
def test_errors_are_one_line_on_stderr_naming_the_file_with_empty_stdout(
        args: list[str], logs: dict[str, Path], tmp_path: Path) -> None:
    names = {k: str(v) for k, v in logs.items()} | {"missing": str(tmp_path / "missing.log")}
    argv = [a.format(**names) for a in args]
    code, out, err = run(*argv)
    # 2: not readable as a log, or a position the match lacks; 1: a damaged log
    assert code == (1 if "{tampered}" in args else 2) and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("buraco-log: error: ")
    assert any(a in lines[0] for a in argv if a.endswith(".log"))


def test_a_damaged_log_error_names_the_byte_offset(logs: dict[str, Path]) -> None:
    offset = bl.segment_offsets(logs["tampered"])[2][0]
    _, _, err = run("replay", logs["tampered"])
    assert f"byte {offset}" in err


@pytest.mark.parametrize("args", [
    ["replay", "{clean}", "--turn", "1"],
    ["replay", "{clean}", "--at", "3", "--hand", "1"],
    ["audit", "{missing}"],
    ["audit", "{empty_dir}"],
    ["replay", "{clean}", "--format", "xml"],
    ["explain", "{clean}"],
])
def test_usage_errors_exit_2_with_empty_stdout(args: list[str], logs: dict[str, Path],
                                               tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    names = {k: str(v) for k, v in logs.items()} | {"missing": str(tmp_path / "missing.log"),
                                                    "empty_dir": str(tmp_path / "empty")}
    code, out, _ = run(*[a.format(**names) for a in args])
    assert code == 2 and out == ""


def test_debug_shows_the_traceback_and_keeps_the_exit_status(logs: dict[str, Path]) -> None:
    # a seq the match does not have: exit 2 (docs/cli.md), with or without --debug
    args = ["replay", str(logs["clean"]), "--at", "99999"]
    plain = subprocess.run(["buraco-log", *args], capture_output=True, text=True, check=False)
    debug = subprocess.run(["buraco-log", "--debug", *args], capture_output=True, text=True,
                           check=False)
    assert plain.returncode == debug.returncode == 2, (plain.stderr, debug.stderr)
    assert "Traceback" not in plain.stderr and len(plain.stderr.splitlines()) == 1
    assert debug.stderr.startswith("Traceback (most recent call last):"), debug.stderr
    assert debug.stderr.splitlines()[-1] == plain.stderr.splitlines()[0]
    assert plain.stdout == debug.stdout == ""


def test_shell_completion_is_offered() -> None:
    result = runner.invoke(app, ["--help"])
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout


def test_help_paragraphs_are_reflowed_not_broken_where_the_docstring_wrapped() -> None:
    # The simulate docstring breaks "every move is / checked" across source lines.
    result = runner.invoke(app, ["simulate", "--help"], env={"COLUMNS": "200"})
    assert "every move is checked by the rules engine" in result.stdout
    listing = runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).stdout
    assert "head digests. Exit 1 if they differ." in listing


# -- the installed entry point, for real

def test_the_installed_entry_point_audits_a_log(logs: dict[str, Path]) -> None:
    exe = shutil.which("buraco-log")
    if exe is None:
        pytest.skip("buraco-log is not installed (pip install -e .)")
    ok = subprocess.run([exe, "audit", str(logs["clean"]), "--format", "json"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stderr == ""
    assert json.loads(ok.stdout) == as_json(audit.audit_log(str(logs["clean"])))
    bad = subprocess.run([exe, "audit", str(logs["illegal"]), str(logs["tampered"])],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "2 with findings" in bad.stdout
    err = subprocess.run([exe, "replay", str(logs["clean"]), "--at", "99999"],
                         capture_output=True, text=True, timeout=120)
    assert err.returncode == 2 and err.stdout == "" and str(logs["clean"]) in err.stderr


def test_the_progress_bar_goes_to_stderr_and_leaves_stdout_to_the_data(
        logs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli import dispute_cmd

    monkeypatch.setattr(dispute_cmd, "_stderr_is_terminal", lambda: True)
    seen: list[int] = []
    real = audit.audit_iter

    def spy(paths: list[str], **kw: object) -> Iterator[audit.Verdict]:
        files = list(paths)
        seen.append(len(files))  # the bar advances as each verdict passes on to stdout
        return real(files, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(audit, "audit_iter", spy)
    code, out, _ = run("audit", tmp_path, "--format", "json")
    assert code == 1 and seen == [4]
    assert [v["path"] for v in json.loads(out)] == audit.find_logs([tmp_path])



def test_diff_of_a_copy_converted_to_the_current_format_says_no_event_differs(
        tmp_path: Path) -> None:
    """Both copies whole, every event equal, heads different (the chain starts from the format
    version): it sent the reader to `verify`, which finds nothing in either copy."""
    from buraco_log import log

    v1 = Path(__file__).resolve().parents[2] / "examples" / "format" / "v1.blog"
    events = log.read_events(v1)
    v2 = tmp_path / "v2.blog"
    log.write_log(v2, events)
    code, out, _ = run("diff", v1, v2)
    assert code == 1 and "head digests differ" in out
    assert (f"the copies hold the same {len(events)} events, both whole; only their log-format "
            "versions differ") in out and "verify" not in out
    torn = tmp_path / "torn.blog"  # a damaged copy still names its damage
    torn.write_bytes(v2.read_bytes()[:-3])
    code, out, _ = run("diff", v2, torn)
    assert code == 1 and "no event differs" not in out
