"""Fault probes of the CLI, round 38: house rules nested too deeply, a huge seq at the --step
prompt, review --threshold out of range, where `show` places a JSON Lines log it cannot read, and
JSON Lines whose lines end in a carriage return alone after a comment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.probes import one_error_line as _one_error_line

ROOT = Path(__file__).resolve().parents[2]
JSONL = ROOT / "examples" / "golden" / "classic.jsonl"  # 18 events, seqs 0 to 17, one hand


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, input=stdin,
                          stdin=subprocess.DEVNULL if stdin is None else None)


# -- 1. house rules nested too deeply ---------------------------------------------------------

_DEEP = {
    "arrays": "a = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "inline-tables": 'preset = "classic"\npoints = ' + "{b = " * 100_000 + "1"
                     + "}" * 100_000 + "\n",
}


@pytest.mark.parametrize(("shape", "command"), [("arrays", ("rules", "show")),
                                                ("inline-tables", ("rules", "show")),
                                                ("arrays", ("simulate", "--rules"))])
def test_house_rules_nested_too_deeply_are_one_line_and_exit_2(
        tmp_path: Path, shape: str, command: tuple[str, ...]) -> None:
    """Before: 'internal error: RecursionError: maximum recursion depth exceeded', exit 1."""
    path = tmp_path / "deep.toml"
    path.write_text(_DEEP[shape])
    out = tmp_path / "out"
    extra = ("-o", str(out)) if command[0] == "simulate" else ()
    done = _cli(*command, str(path), *extra)
    line = _one_error_line(done, 2)
    assert done.stdout == ""
    assert line == f"buraco-log: error: {path}: not a house-rules TOML file: nested too deeply"
    assert not out.exists()


# -- 2. a huge seq or hand at the --step prompt --------------------------------------------

_PROMPT = re.compile(r"\[seq \d+/17\] n next, p previous, <seq> or h<hand> jump, q quit> ")


def _step(keys: str) -> tuple[list[str], list[str]]:
    """What the --step prompt said to each key (its lines between prompts), and the seqs its
    prompts stood at."""
    done = _cli("replay", str(JSONL), "--step", stdin=keys)
    assert done.returncode == 0, done.stderr
    said = [part.strip() for part in _PROMPT.split(done.stderr) if part.strip()]
    return said, re.findall(r"\[seq (\d+)/17\]", done.stderr)


def test_a_seq_or_hand_past_the_log_at_the_step_prompt_says_so() -> None:
    """Before: a seq of more than 9 digits was "unknown key '99999999999999999999'"."""
    keys = ["1000", "99999999999999999999", "-99999999999999999999", str(10**30), "9" * 4000,
            "h99999999999999999999"]
    said, _ = _step("".join(f"{k}\n" for k in keys) + "q\n")
    assert said == [
        "no seq 1000 (0 to 17)",  # as it was: the huge ones now say the same
        "no seq 99999999999999999999 (0 to 17)",
        "no seq -99999999999999999999 (0 to 17)",
        "no seq 10000000000000000000... (0 to 17)",  # clipped: the line may hold 4,095 digits
        "no seq 99999999999999999999... (0 to 17)",
        "the log has no hand 99999999999999999999 (hands 0 to 0)"]


def test_a_huge_seq_at_the_step_prompt_leaves_the_table_where_it_was() -> None:
    said, seqs = _step("5\n99999999999999999999\nn\n" + "0" * 30 + "7\nq\n")
    assert said == ["no seq 99999999999999999999 (0 to 17)"]
    assert seqs == ["0", "5", "5", "6", "7"]  # n went on from 5; leading zeros are no digits


# -- 3. review --threshold out of range ------------------------------------------------------

@pytest.mark.parametrize(("value", "fmt"), [("nan", "text"), ("nan", "json"), ("inf", "text"),
                                            ("-inf", "text"), ("-1", "json"), ("1e400", "text")])
def test_review_threshold_out_of_range_names_the_option_and_the_range(
        value: str, fmt: str) -> None:
    """Before: nan and -inf said 'Input should be greater than or equal to 0', inf '--threshold:
    inf is not a number of points'."""
    done = _cli("review", str(JSONL), "--seat", "0", f"--threshold={value}", "-f", fmt)
    line = _one_error_line(done, 2)
    shown = {"1e400": "inf", "-1": "-1"}.get(value, value)
    assert line == (f"buraco-log: error: --threshold {shown}: out of range; give hand points, "
                    "a finite number 0 or more")
    if fmt == "json":
        assert json.loads(done.stdout)["error"]["exit_status"] == 2
    else:
        assert done.stdout == ""


def test_review_threshold_minus_zero_is_zero() -> None:
    done = _cli("review", str(JSONL), "--seat", "0", "--threshold=-0", "--budget", "2x2r0",
                "-f", "json")
    assert done.returncode == 0, done.stderr
    assert '"threshold": 0.0' in done.stdout  # it said -0.0


# -- 4. where `show` places a JSON Lines log it cannot read ---------------------------------

@pytest.mark.parametrize("version", ["99", "0"])
def test_show_places_a_bad_json_lines_version_where_verify_does(
        tmp_path: Path, version: str) -> None:
    """Before: show said 'byte 0' (a JSON Lines reader gives no offset), verify 'line 1, seq 0'."""
    path = tmp_path / "newer.jsonl"
    text = JSONL.read_text()
    assert text.startswith('{"log": "buraco-log", "version": 2,')
    path.write_text(text.replace('"version": 2', f'"version": {version}', 1))
    shown = _one_error_line(_cli("show", str(path)), 2)
    verified = _one_error_line(_cli("verify", str(path)), 2)
    assert shown == verified
    assert shown.startswith(f"buraco-log: error: {path}, line 1: JSON Lines of event "
                            f"format version {version}:"), shown
    error = json.loads(_cli("show", "-f", "json", str(path)).stdout)["error"]
    assert (error.get("offset"), error["line"], error.get("seq")) == (None, 1, None)  # not byte 0


# -- 5. carriage returns alone --------------------------------------------------------------

def _cr_only(tmp_path: Path, head: bytes) -> Path:
    path = tmp_path / "old-mac.jsonl"
    path.write_bytes((head + JSONL.read_bytes()).replace(b"\n", b"\r"))
    return path


@pytest.mark.parametrize("command", ["verify", "audit", "show"])
def test_cr_line_ends_after_a_comment_are_named_not_a_match_not_started(
        tmp_path: Path, command: str) -> None:
    """Before: the comment swallowed every event: 'a match not started', exit 0."""
    path = _cr_only(tmp_path, b"# exported on an old Mac\n")
    done = _cli(command, str(path))
    assert done.returncode == 1, done.stderr
    assert "not started" not in done.stdout + done.stderr
    said = (done.stdout if command == "audit" else done.stderr)
    assert "line 1, seq 0" in said and (
        "a comment line whose byte 24 is a carriage return (CR) alone: JSON Lines end each "
        "line in LF or CR LF") in said, said


def test_show_names_the_line_of_the_carriage_return_on_stderr(tmp_path: Path) -> None:
    """Before: '{path}: broken: not a JSON line: ...' with no line and no byte."""
    path = _cr_only(tmp_path, b"")
    done = _cli("show", str(path))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"buraco-log: error: {path}, line 1, seq 0: broken: not a JSON line: byte 52 of the "
        "line is a carriage return (CR) alone: JSON Lines end each line in LF or CR LF "
        "(convert the file's line ends) (the summary covers the 0 events before it) [log.jsonl]"]


def test_diff_names_the_line_of_a_json_lines_log_it_cannot_read(tmp_path: Path) -> None:
    path = _cr_only(tmp_path, b"")
    line = _one_error_line(_cli("diff", str(path), str(JSONL)), 1)
    # round 41: named as `verify` names it (seq too), not "not a readable log"
    assert line.startswith(f"buraco-log: error: {path}, line 1, seq 0: not a JSON "
                           "line: byte 52 of the line is a carriage return (CR) alone"), line


def test_a_comment_then_crlf_line_ends_are_still_read(tmp_path: Path) -> None:
    path = tmp_path / "windows.jsonl"
    path.write_bytes((b"# exported on Windows\n" + JSONL.read_bytes()).replace(b"\n", b"\r\n"))
    done = _cli("verify", str(path))
    assert done.returncode == 0, done.stderr
    assert "18 events" in done.stdout


# -- a path or a house-rules name holding controls, on stdout ------------------------------

_HOSTILE = "a\x1b]0;pwned\x07\nforged"  # sets a terminal's title, then forges a second line
_SHOWN = "a\\x1b]0;pwned\\x07\\x0aforged"


@pytest.mark.parametrize("command", [("verify", "{log}"), ("seal", "{log}"),
                                     ("convert", "{log}", "-o", "{log}.jsonl")])
def test_a_path_holding_controls_is_escaped_on_stdout(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """Before: the path was printed as it is (click strips ANSI only when stdout is not a
    terminal; a newline forged a line even then), where every error escapes it."""
    log = tmp_path / f"{_HOSTILE}.blog"
    log.write_bytes((ROOT / "examples" / "format" / "v2.blog").read_bytes())
    done = _cli(*(a.format(log=log) for a in command))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and f"{tmp_path}/{_SHOWN}.blog" in lines[0], lines
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout


@pytest.mark.parametrize(("name", "shown"), [
    ("../../escaped", "'../../escaped'"),
    ("a\\u001b]0;pwned\\u0007\\nforged", "'a\\x1b]0;pwned\\x07\\nforged'"),
    ("..", "'..'"),
])
def test_a_house_rules_name_that_is_no_plain_name_is_refused(
        tmp_path: Path, name: str, shown: str) -> None:
    """Before: simulate named its logs after it, so name = "../../escaped" wrote
    escaped-2p-000000.blog two directories above the output directory; controls reached the
    terminal (rules show) and the log."""
    rules = tmp_path / "house.toml"
    rules.write_text(f'preset = "classic"\nname = "{name}"\n')
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    said = (f"buraco-log: error: {rules}: rules field 'name': {shown} is not a plain name: "
            "no '/', '\\', control or bidi character (it names the logs simulate and demo "
            "write)")
    for command in (("rules", "show", str(rules)),
                    ("simulate", "--rules", str(rules), "-o", str(work / "out"))):
        assert _one_error_line(_cli(*command), 2) == said
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b", "house.toml"]


def test_review_of_a_fifo_names_no_byte(tmp_path: Path) -> None:
    """Before: 'pipe.blog, byte 0: not a log: ...' of a FIFO it never opened."""
    pipe = tmp_path / "pipe.blog"
    os.mkfifo(pipe)
    line = _one_error_line(_cli("review", str(pipe), "--seat", "0"), 2)
    assert line == (f"buraco-log: error: {pipe}: not a regular file (a FIFO): not read as a log "
                    "[log.filetype]")


@pytest.mark.parametrize(("value", "said"), [
    ("5", "a preset's name in quotes, not a TOML integer"),
    ('["classic"]', "a preset's name in quotes, not a TOML array"),
    ("1979-05-27", "a preset's name in quotes, not a TOML date or time"),
    ('"Classic"', "unknown preset 'Classic' (known: classic, "),
])
def test_a_house_rules_preset_that_is_no_preset_name_is_the_preset_key_at_fault(
        tmp_path: Path, value: str, said: str) -> None:
    """Before: "rules field 'name': unknown preset '5'" (and "['classic']" for an array)."""
    path = tmp_path / "house.toml"
    path.write_text(f"preset = {value}\n")
    line = _one_error_line(_cli("rules", "show", str(path)), 2)
    assert line.startswith(f"buraco-log: error: {path}: rules field 'preset': {said}"), line


@pytest.mark.parametrize(("command", "said"), [
    (("demo",), "name the log's file"),
    (("view", str(JSONL)), "name the page's file (or '-' for stdout)"),
    (("convert", str(JSONL)), "name the new file (or '-' for standard output)"),
    (("convert", str(JSONL), "--to", "binary"), "name the new file (or '-' for standard "
                                                 "output)"),
])
def test_an_empty_output_name_is_said_to_be_empty(tmp_path: Path, command: tuple[str, ...],
                                                  said: str) -> None:
    """Before: `-o "$UNSET"` was Path(""), that is ".": '.: is a directory; name the log's file',
    or '.: say --to jsonl or --to binary', as simulate and review already said better."""
    done = subprocess.run([sys.executable, "-m", "cli", *command, "-o", ""], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert _one_error_line(done, 2) == f"buraco-log: error: --output '': an empty name; {said}"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [("verify", "-"), ("convert", "-", "-o", "{out}")])
def test_a_match_not_started_on_standard_input_is_no_file_to_delete(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """Before: '<stdin>: ... a match that never received an event; delete the file'."""
    out = tmp_path / "out.jsonl"
    done = subprocess.run([sys.executable, "-m", "cli", *(a.format(out=out) for a in command)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, input="")
    said = done.stdout + done.stderr
    assert "<stdin>: " in said and ("NOT STARTED" in said or "a match not started" in said)
    assert "delete the file" not in said, said
    assert not out.exists()


def test_step_through_a_log_read_from_standard_input_is_refused() -> None:
    """Before: the log used up standard input, so the prompt read no key and quit at once,
    exit 0, after one table."""
    done = subprocess.run([sys.executable, "-m", "cli", "replay", "-", "--step"], cwd=ROOT,
                          capture_output=True, timeout=60, input=JSONL.read_bytes())
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().splitlines() == [
        "buraco-log: error: --step reads its keys from standard input, which holds the log: "
        "give the log's path"]


@pytest.mark.parametrize(("command", "named"), [
    (("audit", ""), "'PATHS'"),
    (("show", ""), "'PATH'"),
    (("diff", str(JSONL), ""), "'B'"),
    (("seal", ""), "'PATH'"),
    (("audit", str(JSONL), "--html", ""), "'--html'"),
    (("keys", "new", "site", "-d", ""), "'--dir' / '-d'"),
])
def test_an_empty_path_is_a_usage_error_not_the_current_directory(
        tmp_path: Path, command: tuple[str, ...], named: str) -> None:
    """Before: '' was Path(""), that is ".": `audit "$UNSET"` audited every log under the
    current directory, `keys new site -d ""` wrote the keys there, the others said '.: a
    directory'."""
    (tmp_path / "match.jsonl").write_bytes(JSONL.read_bytes())
    done = subprocess.run([sys.executable, "-m", "cli", *command], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert _one_error_line(done, 2).startswith(
        f"buraco-log: usage: Invalid value for {named}: an empty name (an unset variable?)")
    assert done.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["match.jsonl"]


def test_a_comment_with_a_stray_carriage_return_and_no_line_after_it_is_still_skipped(
        tmp_path: Path) -> None:
    path = tmp_path / "noted.jsonl"
    path.write_bytes(b"# exported\rby hand\n" + JSONL.read_bytes())
    done = _cli("verify", str(path))
    assert done.returncode == 0, done.stderr
    assert "18 events" in done.stdout


@pytest.mark.parametrize("command", [("view", "{p}"), ("review", "{p}", "--seat", "0"),
                                     ("rules", "show", "{p}")])
def test_a_link_that_leads_nowhere_is_named_as_the_log_readers_name_it(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """Before: view and review said 'no such file' of a dangling link or a loop (show, verify
    and the rest name where it leads), rules show 'No such file or directory'."""
    suffix = ".toml" if command[0] == "rules" else ".blog"
    dangling, loop, other = (tmp_path / f"{n}{suffix}" for n in ("dangling", "loop", "other"))
    dangling.symlink_to(f"gone{suffix}")
    loop.symlink_to(other)
    other.symlink_to(loop)
    said = [_one_error_line(_cli(*(a.format(p=p) for a in command)), 2)
            for p in (dangling, loop)]
    tail = " (no house-rules file)" if command[0] == "rules" else ""
    assert said == [
        f"buraco-log: error: {dangling}: a symbolic link to 'gone{suffix}', which does not "
        f"exist{tail}",
        f"buraco-log: error: {loop}: Too many levels of symbolic links{tail}"]


def test_a_turn_of_a_hand_dealt_and_not_yet_played_says_no_turn_has_begun(
        tmp_path: Path) -> None:
    """Before: 'hand 0 has no turn 0 (turns 0 to -1)'."""
    path = tmp_path / "dealt.jsonl"  # the first line, the match's start and hand 0's deal
    path.write_text("".join(JSONL.read_text().splitlines(keepends=True)[:3]))
    line = _one_error_line(_cli("replay", str(path), "--hand", "0", "--turn", "0"), 2)
    assert line == f"buraco-log: error: {path}: hand 0 has no turn 0 (no turn begun)"


@pytest.mark.parametrize(("at", "said"), [
    ("-1", "no move: the next event starts the match (its rules and players: no player's "
           "choice)"),
    ("17", "no move: the match is over"),
])
def test_moves_where_nobody_is_to_move_says_why(at: str, said: str) -> None:
    """Before: 'no move: nothing follows phase new' before the match's start (which follows),
    'nothing follows phase over' at its end."""
    done = _cli("moves", str(JSONL), "--at", at)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == said
