"""Fault probes of the commands that read one log for a person: replay, explain, moves, show,
diff, view, review. Hostile option values and odd logs, in real subprocesses with a timeout.

The promises (docs/cli.md, Conventions): one line on stderr naming the file (or the option),
a non-zero exit, no traceback, and with ``-f json`` one JSON document on stdout, an error as
``{"error": {...}}``, whatever went wrong: a bad option value too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from buraco_log import jsonl
from tests.cli.outputs import GOOD, assert_error, copy, run, run_all

HUGE = str(10**30)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("readers")
    copy(GOOD, d, "good.blog")
    data = GOOD.read_bytes()  # one record holds all its events
    (d / "header-only.blog").write_bytes(data[:20])  # a match not started
    (d / "damaged.blog").write_bytes(data[:5000] + bytes([data[5000] ^ 0xFF]) + data[5001:])
    (d / "torn.blog").write_bytes(data[:len(data) // 2])
    jsonl.convert(GOOD, d / "good.jsonl", "jsonl")
    lines = (d / "good.jsonl").read_text().splitlines()
    head = json.loads(lines[0]) | {"sealed": False}
    events = [json.loads(line) for line in lines[1:-1]]
    (d / "no-start.jsonl").write_text("\n".join(  # the deal comes first: seq 0 is illegal
        [json.dumps(head)] + [json.dumps(e | {"seq": i}) for i, e in enumerate(events[1:30])])
        + "\n")
    (d / "no-players.jsonl").write_text("\n".join(
        [json.dumps(head), json.dumps(events[0] | {"players": [], "sides": []})]
        + [json.dumps(e) for e in events[1:30]]) + "\n")
    return d


def _error(out: str) -> dict[str, object]:
    data = json.loads(out)
    assert list(data) == ["error"], data
    error: dict[str, object] = data["error"]
    return error


# -- a bad option value, with -f json: the usage error is JSON on stdout too ----------------------


@pytest.mark.parametrize("args", [
    ["replay", "good.blog", "--at", "-1"],
    ["replay", "good.blog", "--at", "x"],
    ["replay", "good.blog", "--seat", "-3"],
    ["explain", "good.blog", "--at", "not-a-number"],
    ["explain", "good.blog"],  # --at is required
    ["moves", "good.blog", "--at", "-2"],
    ["review", "good.blog", "--seat", "-1"],
    ["review", "good.blog"],  # --seat is required
    ["show", "good.blog", "--no-such-option"],
], ids=lambda a: "-".join(a).replace("good.blog", ""))
def test_a_usage_error_with_json_asked_is_json_on_stdout(box: Path, args: list[str]) -> None:
    r = run(*args, "-f", "json", cwd=box)
    line = assert_error(r, 2, "usage: ", json_out=True)
    error = _error(r.out)
    assert error["code"] == "usage" and error["exit_status"] == 2
    assert str(error["message"]) in line


@pytest.mark.parametrize("spelling", [["--format=json"], ["-fjson"], ["-f", "table", "-fjson"]],
                         ids=["--format=json", "-fjson", "the-last-wins"])
def test_every_spelling_of_json_is_read(box: Path, spelling: list[str]) -> None:
    r = run("replay", "good.blog", "--at", "-1", *spelling, cwd=box)
    assert_error(r, 2, "'--at'", json_out=True)
    assert _error(r.out)["exit_status"] == 2


def test_a_usage_error_without_json_leaves_stdout_empty(box: Path) -> None:
    assert_error(run("replay", "good.blog", "--at", "-1", "-f", "table", cwd=box), 2, "'--at'")


# -- replay, explain, moves: a seq, hand or turn the log does not have, with -f json --------------


@pytest.mark.parametrize(("args", "code", "needles"), [
    (["replay", "good.blog", "--at", "539"], 2, ["good.blog", "no seq 539 (seqs 0 to 538)"]),
    (["replay", "good.blog", "--at", HUGE], 2, ["good.blog", f"no seq {HUGE}"]),
    (["replay", "good.blog", "--hand", "99"], 2, ["good.blog", "no hand 99 (hands 0 to 10)"]),
    (["replay", "good.blog", "--hand", "0", "--turn", HUGE], 2, ["good.blog", "no turn"]),
    (["replay", "good.blog", "--seat", "2"], 2, ["good.blog", "no seat 2 in a 2-player"]),
    (["replay", "good.blog", "--at", "3", "--hand", "1"], 2, ["either --at or --hand"]),
    (["replay", "good.blog", "--turn", "1"], 2, ["--turn needs --hand"]),
    (["replay", "good.blog", "--step", "--ignore-integrity"], 2, ["--step does not combine"]),
    (["replay", "header-only.blog"], 2, ["header-only.blog", "holds no events yet"]),
    (["explain", "good.blog", "--at", "539"], 2, ["good.blog", "seq 539", "no seq 539"]),
    (["explain", "good.blog", "--at", HUGE], 2, ["good.blog", f"no seq {HUGE}"]),
    (["moves", "good.blog", "--at", "539"], 2, ["good.blog", "no seq 539"]),
    (["moves", "header-only.blog"], 2, ["header-only.blog", "holds no events yet"]),
], ids=lambda a: "-".join(a) if isinstance(a, list) and isinstance(a[0], str) and
   a[0] in ("replay", "explain", "moves") else None)
def test_what_the_log_does_not_have_is_one_line_and_json_with_json(
        box: Path, args: list[str], code: int, needles: list[str]) -> None:
    """Before, replay/explain/moves -f json left stdout empty on these errors."""
    r, table = run_all([*args, "-f", "json"], args, cwd=box)
    line = assert_error(r, code, *needles, json_out=True)
    error = _error(r.out)
    assert error["exit_status"] == code and error["message"] == line.removeprefix(
        "buraco-log: error: ")
    assert_error(table, code, *needles)  # the table form: stdout empty


def test_a_seq_the_log_has_gives_json(box: Path) -> None:
    r = run("replay", "good.blog", "--at", "538", "-f", "json", cwd=box)
    assert r.code == 0 and json.loads(r.out)["seq"] == 538


# -- review of a match not started ----------------------------------------------------------------


def test_review_of_a_log_with_no_event_yet_says_so_not_that_it_is_no_log(box: Path) -> None:
    line = assert_error(run("review", "header-only.blog", "--seat", "0", cwd=box), 2,
                        "header-only.blog", "holds no events yet")
    assert "not a log" not in line


# -- a log damaged before its first intact event: a damaged log (exit 1), not "not a log" -------


@pytest.mark.parametrize("name", ["damaged.blog", "torn.blog"])
@pytest.mark.parametrize("command", [["view", "-o", "page.html"],
                                     ["review", "--seat", "0", "--budget", "1x1"]],
                         ids=["view", "review"])
def test_a_log_damaged_in_its_first_record_is_a_finding_naming_the_byte(
        box: Path, name: str, command: list[str]) -> None:
    """It was exit 2 and, for review, "not a log"; replay says exit 1, a damaged log."""
    line = assert_error(run(command[0], name, *command[1:], cwd=box), 1, f"{name}, byte 20",
                        "damaged" if name == "damaged.blog" else "torn")
    assert "not a log" not in line
    assert not (box / "page.html").exists()
    assert_error(run("replay", name, cwd=box), 1, f"{name}, byte 20")  # as replay says


def test_view_of_a_match_not_started_stays_a_usage_error(box: Path) -> None:
    assert_error(run("view", "header-only.blog", "-o", "page.html", cwd=box), 2,
                 "header-only.blog", "no events yet")


@pytest.mark.parametrize(("name", "needle"), [
    ("no-start.jsonl", "[match.not_started]"),
    ("no-players.jsonl", "the match start names no player"),
])
@pytest.mark.parametrize("partial", [[], ["--partial"]], ids=["strict", "partial"])
def test_review_of_a_log_that_does_not_start_with_a_match_names_seq_0(
        box: Path, name: str, needle: str, partial: list[str]) -> None:
    """It said "--seat 0: the match has seats 0 to -1" (exit 2)."""
    line = assert_error(run("review", name, "--seat", "0", "--budget", "1x1", *partial,
                            cwd=box), 1, name, needle)
    assert "0 to -1" not in line


# -- --ignore-integrity on a log of one record damaged mid-way -----------------------------------

BIRIBA = GOOD.parent / "biriba-4p-000000.blog"  # 500 events, all in one record


def test_ignore_integrity_reads_the_events_before_the_damage_inside_a_record(box: Path) -> None:
    """A simulated match is one record: one changed byte that breaks its MessagePack left
    --ignore-integrity with 0 events ("the log holds no events")."""
    data = BIRIBA.read_bytes()
    cut = len(data) // 2
    (box / "biriba-damaged.blog").write_bytes(data[:cut] + bytes([data[cut] ^ 0xFF])
                                              + data[cut + 1:])
    r = run("replay", "biriba-damaged.blog", "--ignore-integrity", "--at", "100", cwd=box)
    assert r.code == 1, r  # shown, and the damage a finding all the same
    first = r.out.splitlines()[0]
    assert first.startswith("WARNING: biriba-damaged.blog failed its integrity check")
    read = int(first.rsplit(": ", 1)[1].split()[0])
    assert 100 < read < 500, first
    assert r.out.splitlines()[1].startswith("seq 100 ")
    strict = run("replay", "biriba-damaged.blog", cwd=box)
    assert_error(strict, 1, "biriba-damaged.blog, byte 20")


def test_the_array_items_of_a_record_are_cut_at_the_first_broken_one() -> None:
    import msgspec

    from buraco_log.forensic import _array_items

    values = [1, -1, 2**40, -(2**40), 1.5, "x" * 40, "y" * 300, b"z" * 70000,
              {"a": [None, True, False]}, list(range(20)), {str(i): i for i in range(20)},
              msgspec.msgpack.Ext(1, b"abc"), msgspec.msgpack.Ext(2, b"a" * 300)]
    data = msgspec.msgpack.encode(values)
    assert [msgspec.msgpack.decode(i) for i in _array_items(data)] == values
    for cut in range(len(data)):  # a cut record: the whole items before the cut, no error
        items = _array_items(data[:cut])
        assert [msgspec.msgpack.decode(i) for i in items] == values[:len(items)]
    assert _array_items(b"") == [] and _array_items(b"\x01") == []
    assert _array_items(b"\x92\x01\xc1") == [b"\x01"]  # 0xc1 is never used
    bomb = b"\x91" * 100_000 + b"\x01"  # nesting: no recursion
    assert _array_items(b"\x91" + bomb) == [bomb]


# -- names that are terminal control sequences ----------------------------------------------------

HOSTILE = ("ana\x1b[2J\x1b]0;pwned\x07", "bob\r\nseq 999 FORGED\x9b31m\u202e")


@pytest.fixture(scope="module")
def hostile(box: Path) -> Path:
    """A legal match whose player names and match id clear the screen, retitle the terminal,
    forge an output line and reverse the text, if printed as they are."""
    import msgspec

    from buraco_log import events as ev
    from buraco_log import log
    from buraco_log.rules import PRESETS
    from buraco_log.simulate import simulate_match

    events = list(simulate_match(PRESETS["classic"], 2, seed="esc", index=0))
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    events[0] = msgspec.structs.replace(start, match_id="m\x1b[31mred",
                                        players=tuple(ev.Player(name=n) for n in HOSTILE))
    # an illegal last event, so that notes and errors name a player too
    discard = next(e for e in reversed(events) if isinstance(e, ev.CardDiscarded))
    events = [*events[:discard.seq], msgspec.structs.replace(discard, card=64)]
    path = box / "hostile.blog"
    with log.Writer(path, validate=False) as w:
        for e in events:
            w.append(e)
    return path


@pytest.mark.parametrize("args", [
    ["show"], ["replay"], ["replay", "--at", "5", "--seat", "1"], ["explain", "--at", "5"],
    ["moves", "--at", "5"], ["diff", str(GOOD)],
    ["review", "--seat", "1", "--budget", "1x1", "--partial"],
    ["review", "--seat", "1", "--budget", "1x1"],  # refused: the error names the player
    ["view", "-o", "/dev/null"],
], ids=lambda a: "-".join(a).replace(str(GOOD), "good"))
def test_control_characters_in_names_are_escaped_on_the_terminal(hostile: Path,
                                                                  args: list[str]) -> None:
    r = run(args[0], hostile, *args[1:])
    assert r.code is not None and "Traceback" not in r.err, r.err[-600:]
    both = r.out + r.err
    for bad in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
        assert bad not in both, (bad, both[:600])
    assert not any(line.startswith("seq 999 FORGED") for line in both.splitlines())
    if args[0] in ("show", "replay", "explain"):
        assert "\\x1b" in r.out  # shown escaped, not dropped


def test_terminal_safe_keeps_what_is_printable() -> None:
    from cli.safetext import terminal_safe, terminal_safe_lines

    assert terminal_safe("ünï ♠ 🂡 10♦ <b>\t") == "ünï ♠ 🂡 10♦ <b>\\x09"
    assert terminal_safe("a\nb\x1b[0m\u2028\u202e\x7f") == \
        "a\\x0ab\\x1b[0m\\u2028\\u202e\\x7f"
    assert terminal_safe_lines("one\ntwo\x1b") == "one\ntwo\\x1b"


# -- view of a log read from standard input ------------------------------------------------------


def test_view_of_stdin_without_output_is_refused_not_written_into_a_deleted_folder(
        box: Path) -> None:
    """The page went beside the temporary copy of stdin, in a folder removed at once, and the
    command said "wrote /tmp/buraco-log-stdin-.../stdin.html" with exit 0."""
    r = run("view", "-", stdin=GOOD.read_bytes(), cwd=box)
    assert_error(r, 2, "<stdin>", "-o FILE")
    assert "/tmp/" not in r.err
    done = run("view", "-", "-o", "from-stdin.html", stdin=GOOD.read_bytes(), cwd=box)
    assert done.code == 0 and (box / "from-stdin.html").read_bytes().startswith(b"<!DOCTYPE")
    out = run("view", "-", "-o", "-", stdin=GOOD.read_bytes(), cwd=box)
    assert out.code == 0 and out.out.startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_diff_of_stdin_with_itself_is_refused(box: Path, fmt: str) -> None:
    """Both '-' read the one stream once, so any log was "identical" to itself (exit 0)."""
    r = run("diff", "-", "-", "-f", fmt, stdin=GOOD.read_bytes(), cwd=box)
    assert_error(r, 2, "standard input holds one log", json_out=fmt == "json")
    one = run("diff", "-", "good.blog", stdin=GOOD.read_bytes(), cwd=box)
    assert one.code == 0 and "identical" in one.out


def test_step_takes_a_key_of_two_minus_signs_as_an_unknown_key(box: Path) -> None:
    """'--5' passed as a number, and int() raised a traceback."""
    r = run("replay", "good.blog", "--at", "5", "--step", stdin=b"--5\n-5\n7\nq\n", cwd=box)
    assert r.code == 0 and "Traceback" not in r.err, r.err[-600:]
    assert "unknown key '--5'" in r.err and "no seq -5 (0 to 538)" in r.err
    assert [ln.split()[1] for ln in r.out.splitlines() if ln.startswith("seq ")] == ["5", "7"]


def test_step_with_json_is_refused_as_it_would_print_many_documents(box: Path) -> None:
    """Each key press printed one more JSON document: stdout was no longer one JSON."""
    r = run("replay", "good.blog", "--step", "-f", "json", stdin=b"n\nn\nq\n", cwd=box)
    assert_error(r, 2, "--step", "--format json", json_out=True)
    assert json.loads(r.out)["error"]["exit_status"] == 2


# -- a seq at or past an illegal event ------------------------------------------------------------

ILLEGAL = Path(__file__).resolve().parents[2] / "examples" / "disputes" / "illegal.log"


@pytest.mark.parametrize(("command", "seq", "needle"), [
    ("replay", 30, "seq 30 is past the first illegal event, seq 23"),
    ("replay", 23, "seq 23 is the first illegal event"),
    ("moves", 23, "seq 23 is the first illegal event"),  # it said "is past ... seq 23"
])
def test_a_seq_past_the_illegal_event_is_one_error_line(command: str, seq: int,
                                                        needle: str) -> None:
    """replay printed its note on the illegal event, then the error: two lines."""
    # a finding about the log (1) for every command; moves said 2, a usage error
    assert_error(run(command, ILLEGAL, "--at", seq), 1, str(ILLEGAL), needle,
                 "known up to seq 22")


@pytest.mark.parametrize(("name", "needle"), [
    ("no-start.jsonl", "seq 0 is illegal: the log must open with"),
    ("no-players.jsonl", "seq 0 is illegal: "),
])
@pytest.mark.parametrize("args", [[], ["-f", "json"], ["--step"]], ids=["table", "json", "step"])
def test_replay_of_a_log_whose_first_event_is_illegal_is_a_finding_not_an_empty_table(
        box: Path, name: str, needle: str, args: list[str]) -> None:
    """It printed a note, then an empty table at "seq -1, hand -1", and exited 0."""
    r = run("replay", name, *args, stdin=b"q\n", cwd=box)
    line = assert_error(r, 1, name, needle, "no table to show", json_out=args == ["-f", "json"])
    assert "seq -1" not in line and re.search(r" \[match\.[a-z_]+\]$", line), line
    if args == ["-f", "json"]:
        assert json.loads(r.out)["error"]["seq"] == 0


def test_show_of_a_log_that_does_not_open_with_the_match_start_says_so(box: Path) -> None:
    """It said the first event "could not be read": it was read, and is a deal."""
    r = run("show", "no-start.jsonl", cwd=box)
    # the summary, then the finding on stderr: exit 1, as for damage
    assert r.code == 1 and r.lines[0].endswith("(the summary covers the events before it; "
                                               "`buraco-log audit` for details) "
                                               "[match.not_started]"), r
    lines = r.out.splitlines()
    assert lines[0] == "match     unknown: the log does not open with the match start"
    assert lines[-1].startswith("ILLEGAL   seq 0 [match.not_started]")


def test_a_seq_error_names_its_seq_once() -> None:
    """ "seq 30: seq 30 is past ...": the error's own seq prefix doubled the one its text had."""
    line = assert_error(run("replay", ILLEGAL, "--at", 30), 1, "seq 30 is past")
    assert "seq 30: seq 30" not in line


@pytest.mark.parametrize(("log", "seq", "code", "needle"), [
    (ILLEGAL, 30, 1, "seq 23 is illegal [discard.card_not_in_hand]"),  # a finding about the log
    (GOOD, 539, 2, "the page holds seqs 0 to 538"),  # a seq the log does not have: usage
])
def test_view_at_a_seq_the_page_cannot_open_at(tmp_path: Path, log: Path, seq: int, code: int,
                                               needle: str) -> None:
    assert_error(run("view", log, "--at", seq, "-o", tmp_path / "p.html"), code, str(log),
                 needle)
    assert not (tmp_path / "p.html").exists()


def test_replay_of_an_illegal_log_still_notes_it_beside_the_table() -> None:
    r = run("replay", ILLEGAL)
    # the end asked for stops short of it: the table, then the finding, exit 1
    assert r.code == 1 and r.out.startswith("seq 22 ")
    assert r.lines == [f"buraco-log: error: {ILLEGAL}: seq 23 is illegal; the table is known "
                       "up to seq 22 [discard.card_not_in_hand]"]


@pytest.mark.parametrize("command", [["explain", "--at", "5"], ["moves"], ["replay"],
                                     ["show"]])
def test_the_json_error_of_a_log_on_stdin_names_stdin_not_its_temporary_copy(
        box: Path, command: list[str]) -> None:
    """The "path" of the error object was /tmp/buraco-log-stdin-.../stdin.blog, a file
    removed by the time a program read it."""
    damaged = (box / "damaged.blog").read_bytes()
    r = run(command[0], "-", *command[1:], "-f", "json", stdin=damaged, cwd=box)
    assert r.code == 1 and "buraco-log-stdin" not in r.out + r.err, r
    data = json.loads(r.out)
    if "error" in data:
        assert data["error"]["path"] == "<stdin>"


@pytest.mark.parametrize("command", [
    ["replay"], ["view", "-o", "/dev/null"],
    ["review", "--seat", "0", "--budget", "1x2r1", "--partial", "-o", "/dev/null"],
])
def test_notes_about_a_log_on_stdin_name_stdin(command: list[str]) -> None:
    """Notes and warnings on stderr named /tmp/buraco-log-stdin-.../stdin.blog."""
    r = run(command[0], "-", *command[1:], stdin=ILLEGAL.read_bytes())
    assert r.code == 1, r  # replay's end, view, review --partial: a finding
    assert "<stdin>: seq 23 is illegal" in r.err
    assert "buraco-log-stdin" not in r.err + r.out
