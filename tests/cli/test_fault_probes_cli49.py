"""CLI probes: one card notation in every command, one error line shape, `verify` of many logs,
and outputs that cannot be written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.cli.batch import start_all as _batch
from tests.cli.probes import ROOT

SIM = ROOT / "examples" / "sim"
CARDS_LOG = SIM / "classic-2p-000000.blog"
TILES_LOG = SIM / "burako-2p-000000.blog"

SYMBOLS = re.compile("[♣♦♥♠🃏🟡🔵🔴⚫]")
LETTER_CARD = re.compile(r"\b(?:[2-9TJQKA][cdhs]|JK)\b")
TILE = re.compile(r"\b(?:1[0-3]|[1-9])[ybrk]\b")
UTF8 = {"LANG": "C.UTF-8", "LC_ALL": "", "LC_CTYPE": "", "NO_COLOR": ""}


def _cards(every_command: bool) -> None:
    disputes = ROOT / "examples" / "disputes"
    writers: list[tuple[list[object], re.Pattern[str]]] = [
        (["replay", CARDS_LOG, "--at", 40], LETTER_CARD),
        (["moves", CARDS_LOG, "--at", 40], LETTER_CARD)]
    if every_command:
        writers += [
            (["replay", TILES_LOG, "--at", 40], TILE), (["moves", TILES_LOG, "--at", 40], TILE),
            (["show", CARDS_LOG], LETTER_CARD), (["explain", CARDS_LOG, "--at", 40], LETTER_CARD),
            (["audit", disputes / "illegal.log"], LETTER_CARD),
            (["diff", disputes / "fair-thirteen.log", disputes / "illegal.log"], LETTER_CARD)]
    symbols: list[object] = ["moves", CARDS_LOG, "--at", 40, "--cards", "symbols"]
    done = _batch([(UTF8, args) for args, _ in writers] + [
        (UTF8, symbols), ({**UTF8, "NO_COLOR": "1"}, symbols), ({**UTF8, "LC_ALL": "C"}, symbols),
        (UTF8, ["moves", CARDS_LOG, "--cards", "suits"])][:len(writers) + 3 + every_command])
    for (args, card), r in zip(writers, done, strict=False):
        assert r.returncode in (0, 1), (args, r.stderr)
        assert not SYMBOLS.search(r.stdout + r.stderr), (args[0], SYMBOLS.findall(r.stdout))
        assert card.search(r.stdout), (args[0], r.stdout[:300])
    for at in range(0, 4 if every_command else 2, 2):  # replay's hand holds moves' discards
        replay, moves = done[at].stdout, done[at + 1].stdout
        seat = re.search(r"seat (\d+) \(.*?\) to move", moves)
        assert seat is not None, moves
        hand = re.search(rf"^  seat {seat.group(1)} .*\(\d+\): (.*)$", replay, re.M)
        discards = re.findall(r"^  discard (\S+)$", moves, re.M)
        assert hand is not None and discards, (replay, moves)
        assert set(discards) <= set(hand.group(1).split())  # the same cards, written alike
    shown, no_color, c_locale = done[len(writers):len(writers) + 3]
    assert shown.returncode == 0 and SYMBOLS.search(shown.stdout), shown.stdout
    for plain in (no_color, c_locale):
        assert plain.returncode == 0 and not SYMBOLS.search(plain.stdout), plain.stdout
        assert LETTER_CARD.search(plain.stdout)
    if every_command:
        bad = done[-1]
        assert bad.returncode == 2 and "--cards" in bad.stderr and not bad.stdout


def test_moves_writes_cards_as_replay_does_and_symbols_only_when_asked() -> None:
    """`moves` wrote 3♦ where `replay`, `explain`, `audit` and the log itself write 3d (and
    Burako's 12🔴 where the others write 12r), in a UTF-8 locale. `--cards symbols` asks for
    the symbols, which NO_COLOR and LC_ALL=C turn back into letters."""
    _cards(every_command=False)


@pytest.mark.slow
def test_every_command_writes_cards_as_the_log_does() -> None:
    _cards(every_command=True)


# -- one error line shape -------------------------------------------------------------------------

SHAPE = re.compile(
    r"^buraco-log: (?P<kind>error|usage): (?P<subject>.+?)"
    r"(?P<where>: seq \d+(?: is illegal)?|(?:, byte \d+)?(?:, line \d+)?(?:, seq \d+)?)[:;] "
    r"(?P<message>.+?)(?: \[(?P<rule>[a-z]+(?:\.[a-z_]+)+)\])?$")
"""Every error line: the file (or the option) it is about, the byte offset or seq where the
log breaks a rule, what happened, and last the rule."""

ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"
CLEAN = ROOT / "examples" / "disputes" / "fair-thirteen.log"
HEAD = "441422bb4f27a3abb8978c128dffacf919044073ca6d3ef5b66f38c854b8784d"  # CLEAN's head digest

# (command line with {log} for the log read, the option value that is wrong)
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    "show": (["show", "{log}"], ["-f", "nope"]),
    "replay": (["replay", "{log}"], ["--at", "x"]),
    "explain": (["explain", "{log}", "--at", "1"], ["-f", "nope"]),
    "moves": (["moves", "{log}"], ["--cards", "nope"]),
    "verify": (["verify", "{log}"], ["-f", "nope"]),
    "audit": (["audit", "{log}"], ["-j", "x"]),
    "diff": (["diff", str(CLEAN), "{log}"], ["-f", "nope"]),
    "seal": (["seal", "{log}"], ["-f", "nope"]),
    "repair": (["repair", "{log}"], ["-f", "nope"]),
    "convert": (["convert", "{log}", "-o", "out.jsonl", "--to", "jsonl"], ["--to", "nope"]),
    "view": (["view", "{log}", "-o", "page.html"], ["--seat", "x"]),
    "ingest": (["ingest", "{log}", "--archive", "arch"], ["-j", "x"]),
}
REPORTS = {"audit", "diff", "ingest"}
"""Commands whose findings are their report on stdout (exit 1; a refused ingest too), not an
error line."""
ILLEGAL_REFUSED = {"show", "replay", "moves"}
"""Commands whose answer an illegal move cuts short: an error line, exit 1 (the others check
no legality, answer before it, or report it)."""
# class -> (exit status, is the log's own data at fault: then a seq or byte and a rule)
CLASSES: dict[str, tuple[int, bool]] = {
    "not a log": (2, True), "damaged": (1, True), "illegal": (1, True),
    "bad value": (2, False), "missing": (2, False), "directory": (2, False)}


def _log_for(kind: str, box: Path) -> str:
    if kind == "not a log":
        (box / "notes.log").write_text("the score sheet, typed up\n")
        return "notes.log"
    if kind == "damaged":  # torn inside its first record: no event is intact
        (box / "cut.log").write_bytes(ILLEGAL.read_bytes()[:3000])
        return "cut.log"
    if kind == "illegal":
        (box / "illegal.log").write_bytes(ILLEGAL.read_bytes())
        return "illegal.log"
    if kind == "directory":
        (box / "adir").mkdir(exist_ok=True)
        return "adir"
    (box / "good.log").write_bytes(CLEAN.read_bytes())
    return "good.log" if kind == "bad value" else "missing.log"


def _runs(commands: list[str], box: Path) -> list[tuple[str, str, Path, list[str]]]:
    runs = []
    for command in commands:
        args, bad = COMMANDS[command]
        for kind in CLASSES:
            if (kind == "illegal" and command not in ILLEGAL_REFUSED) or \
                    (command in REPORTS and kind in ("damaged", "illegal", "not a log")) or \
                    (command == "ingest" and kind == "directory"):  # a folder of logs to add
                continue
            cwd = box / f"{command}-{kind.replace(' ', '-')}"
            cwd.mkdir()
            log = _log_for(kind, cwd)
            line = [a.replace("{log}", log) for a in args] + (bad if kind == "bad value" else [])
            runs.append((command, kind, cwd, line))
    return runs


def _check_shapes(commands: list[str], box: Path) -> None:
    runs = _runs(commands, box)
    procs = _batch_in([(cwd, line) for _, _, cwd, line in runs])
    for (command, kind, cwd, _), r in zip(runs, procs, strict=True):
        status, of_the_data = CLASSES[kind]
        assert r.returncode == status, (command, kind, r.returncode, r.stderr)
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
        errors = [x for x in r.stderr.splitlines() if not x.startswith("buraco-log: note: ")]
        assert len(errors) == 1, (command, kind, r.stderr)
        shape = SHAPE.match(errors[0])
        assert shape is not None, (command, kind, errors[0])
        if kind == "bad value":
            assert shape["kind"] == "usage" and "--" in shape["subject"], errors[0]
            continue
        assert shape["kind"] == "error" and _log_for(kind, cwd) in shape["subject"], errors[0]
        if of_the_data:  # where in the log, and the rule it broke
            assert shape["where"] and shape["rule"], (command, kind, errors[0])
        if command in ("convert", "view"):  # nothing half-written
            assert not (cwd / "out.jsonl").exists() and not (cwd / "page.html").exists()


def _batch_in(runs: list[tuple[Path, list[str]]]) -> list[CompletedProcess[str]]:
    base = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "cli", *args], cwd=cwd, env=base,
                              stdin=subprocess.DEVNULL, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for cwd, args in runs]
    done = []
    for (_, args), proc in zip(runs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        done.append(CompletedProcess(args, proc.returncode, out, err))
    return done


def test_every_error_class_of_replay_has_one_line_shape(tmp_path: Path) -> None:
    """An illegal move's line had its [rule] mid-line (`seq 23 is illegal [RULE]; the table
    ...`, `seq 23 [RULE] seat 1 ...`), a damaged log's at the end."""
    _check_shapes(["replay"], tmp_path)


@pytest.mark.slow
def test_every_error_class_of_every_command_has_one_line_shape(tmp_path: Path) -> None:
    _check_shapes(list(COMMANDS), tmp_path)


# -- verify of several logs -----------------------------------------------------------------------


def test_verify_takes_several_logs_says_each_then_one_summary_and_exits_with_the_worst(
        tmp_path: Path) -> None:
    """`verify A B` was a usage error ("Got unexpected extra argument"): one log a run."""
    good = tmp_path / "good.log"
    good.write_bytes(CLEAN.read_bytes())
    cut = tmp_path / "cut.log"
    cut.write_bytes(ILLEGAL.read_bytes()[:3000])
    notes = tmp_path / "notes.log"
    notes.write_text("the score sheet, typed up\n")
    every, js = _batch_in([
        (tmp_path, ["verify", "good.log", "cut.log", "notes.log", "missing.log"]),
        (tmp_path, ["verify", "good.log", "cut.log", "-f", "json"])])
    assert every.returncode == 2, every.stderr  # the worst: a file not read as a log
    assert every.stdout.splitlines()[0].startswith("good.log: 313 events in 1 record, sealed")
    assert every.stdout.splitlines()[-1] == ("verified 4 logs: 1 whole, 1 torn, 0 damaged, "
                                             "2 not read as a log")
    errors = every.stderr.splitlines()
    assert [SHAPE.match(x) is not None for x in errors] == [True] * 3, errors
    assert [SHAPE.match(x)["subject"] for x in errors] == [  # type: ignore[index]
        "cut.log", "notes.log", "missing.log"]
    assert errors[0].endswith("[log.torn]") and errors[1].endswith("[log.header]")
    assert js.returncode == 1  # the worst: a damaged log
    got = json.loads(js.stdout)
    assert [g["path"] for g in got] == ["good.log", "cut.log"]
    assert got[0]["events"] == 313 and got[1]["error"]["rule"] == "log.torn"
    whole = subprocess.run([sys.executable, "-m", "cli", "verify", "-", "good.log"], cwd=tmp_path,
                           input=CLEAN.read_bytes(), capture_output=True, check=False,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert whole.returncode == 0 and whole.stderr == b"", whole.stderr
    assert whole.stdout.decode().splitlines() == [
        f"<stdin>: 313 events in 1 record, sealed, format version 1, head {HEAD}",
        f"good.log: 313 events in 1 record, sealed, format version 1, head {HEAD}",
        "verified 2 logs: 2 whole, 0 damaged, 0 not read as a log"]


# -- --html FILE: audit's spelling, read as -f html -o FILE where that is the command's ----------


def test_html_file_is_read_as_format_html_output_file_where_a_page_is_the_answer(
        tmp_path: Path) -> None:
    """`review LOG --html page.html` said "No such option: --html", where `audit` takes it:
    one spelling of "write the page to FILE" works in both."""
    review = ["review", str(CLEAN), "--seat", "0", "--budget", "1x1r0"]
    alias, other = _batch_in([(tmp_path, [*review, "--html=a.html"]),
                              (tmp_path, ["replay", str(CLEAN), "--html", "c.html"])])
    assert alias.returncode == 0, alias.stderr
    assert alias.stdout == "" and (tmp_path / "a.html").read_text().lstrip().startswith("<!")
    # a command that writes no page has no --html, said as any unknown option
    assert other.returncode == 2 and "No such option: --html" in other.stderr
    assert not (tmp_path / "c.html").exists()


# -- outputs that cannot be written ---------------------------------------------------------------

# (where, the exit status: a place the caller named wrong is 2, a write that failed is 1)
UNWRITABLE = [("nodir/out.{ext}", 2), ("/sys/out.{ext}", 2), ("/proc/out.{ext}", 2),
              ("/dev/full", 1)]
WRITERS: dict[str, tuple[list[str], str]] = {
    "convert": (["convert", str(CLEAN), "--to", "jsonl", "-o"], "jsonl"),
    "view": (["view", str(CLEAN), "-o"], "html"),
    "audit": (["audit", str(CLEAN), "-q", "--html"], "html"),
    "review": (["review", str(CLEAN), "--seat", "0", "--budget", "1x1r0", "-f", "html", "-o"],
               "html"),
}


def _unwritable(commands: list[str], box: Path,
                places: list[tuple[str, int]] = UNWRITABLE) -> None:
    if not Path("/sys").is_dir() or not Path("/dev/full").exists():
        pytest.skip("needs Linux's /sys and /dev/full")
    runs = [(command, where.format(ext=WRITERS[command][1]), status)
            for command in commands for where, status in places]
    done = _batch_in([(box, [*WRITERS[c][0], where]) for c, where, _ in runs])
    for (command, where, status), r in zip(runs, done, strict=True):
        errors = [x for x in r.stderr.splitlines() if not x.startswith("buraco-log: note: ")]
        assert r.returncode == status, (command, where, r.returncode, r.stderr)
        assert len(errors) == 1 and SHAPE.match(errors[0]), (command, where, r.stderr)
        assert where in errors[0] and "Traceback" not in r.stderr
    assert sorted(p.name for p in box.iterdir()) == []  # nothing made, nothing left over


def test_convert_to_a_place_that_cannot_be_written_is_the_callers_error_as_for_every_writer(
        tmp_path: Path) -> None:
    """`convert -o /sys/out.jsonl` (EACCES) and `-o /proc/out.jsonl` (ENOENT) exited 1, a
    failed write, where `view`, `audit --html` and `review -o` say 2 of the same place."""
    _unwritable(["convert"], tmp_path, UNWRITABLE[1:3])


@pytest.mark.slow
def test_every_writer_refuses_a_place_that_cannot_be_written_in_one_line(tmp_path: Path) -> None:
    _unwritable(list(WRITERS), tmp_path)
