"""CLI probes: `--cards symbols` on every command that writes cards, and the archive's lines
in the shape of their family (a report line on stdout, an error line on stderr)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from tests.cli.batch import start_all as _batch
from tests.cli.probes import ROOT

SIM = ROOT / "examples" / "sim"
DISPUTES = ROOT / "examples" / "disputes"
CARDS_LOG = SIM / "classic-2p-000000.blog"
TILES_LOG = SIM / "burako-2p-000000.blog"

SYMBOLS = re.compile("[♣♦♥♠🃏🟡🔵🔴⚫]")
LETTER_CARD = re.compile(r"(?<![\w./#-])(?:[2-9TJQKA][cdhs]|JK)(?![\w/-])")
UTF8 = {"LANG": "C.UTF-8", "LC_ALL": "", "LC_CTYPE": "", "NO_COLOR": ""}
PLAIN = ({**UTF8, "NO_COLOR": "1"}, {**UTF8, "LC_ALL": "C"})

# the symbols back to the log's letters, written here and not by the code under test
_BACK = [(re.compile(r"10([♣♦♥♠])"), r"T\1"), (re.compile("🃏"), "JK")] + [
    (re.compile(s), c) for s, c in zip("♣♦♥♠🟡🔵🔴⚫", "cdhsybrk", strict=True)]


def _letters(text: str) -> str:
    for symbol, letter in _BACK:
        text = symbol.sub(letter, text)
    return text


COMMANDS: list[list[object]] = [
    ["replay", CARDS_LOG, "--at", 40], ["show", CARDS_LOG], ["explain", CARDS_LOG, "--at", 40],
    ["diff", DISPUTES / "fair-thirteen.log", DISPUTES / "illegal.log"],
    ["audit", DISPUTES / "illegal.log"]]
SYM = ["--cards", "symbols"]


def test_every_command_that_writes_cards_takes_cards_symbols() -> None:
    """`--cards symbols` was `moves`' alone: `replay`, `show`, `explain`, `diff` and `audit`
    refused it (exit 2, "No such option"). Now each writes the same text with suit symbols
    (only the cards changed), letters under LC_ALL=C or NO_COLOR (each command under one of
    them), and its JSON as the log writes cards whatever is asked."""
    json_run: list[object] = ["replay", CARDS_LOG, "--at", 40, "-f", "json", *SYM]
    runs = [(UTF8, [*c, *SYM]) for c in COMMANDS] + [
        (PLAIN[i % 2], [*c, *SYM]) for i, c in enumerate(COMMANDS)] + [
        (UTF8, json_run), (UTF8, ["replay", TILES_LOG, "--at", 40, *SYM])]
    done = _batch(runs)
    n = len(COMMANDS)
    for cmd, shown, plain in zip(COMMANDS, done[:n], done[n:2 * n], strict=True):
        what = cmd[0]
        assert plain.returncode in (0, 1) and shown.returncode == plain.returncode, (
            what, shown.stderr)
        assert LETTER_CARD.search(plain.stdout) and not SYMBOLS.search(plain.stdout), what
        assert SYMBOLS.search(shown.stdout) and not LETTER_CARD.search(shown.stdout), (
            what, LETTER_CARD.findall(shown.stdout)[:5])
        assert _letters(shown.stdout) == plain.stdout, what  # the cards alone changed
        assert shown.stderr == plain.stderr, what  # error and note lines keep the letters
    as_json, tiles = done[2 * n:]
    assert as_json.returncode == 0 and '"Qd"' in as_json.stdout
    assert not SYMBOLS.search(as_json.stdout), as_json.stdout[:300]
    # Burako's tiles in colour; its joker has no symbol (as `moves --cards symbols` has it)
    assert tiles.returncode == 0 and "🔴" in tiles.stdout and "🃏" not in tiles.stdout
    assert re.search(r"^  seq 39: .* drew JK$", tiles.stdout, re.M), tiles.stdout


@pytest.mark.slow
def test_cards_symbols_under_no_color_and_c_locale_is_the_default_text() -> None:
    """Every command, asked for symbols where they cannot be shown (NO_COLOR, LC_ALL=C),
    writes exactly what it writes by default."""
    runs = [(UTF8, c) for c in COMMANDS] + [(env, [*c, *SYM]) for env in PLAIN for c in COMMANDS]
    done = _batch(runs)
    n = len(COMMANDS)
    for i, cmd in enumerate(COMMANDS):
        default = done[i]
        assert LETTER_CARD.search(default.stdout) and not SYMBOLS.search(default.stdout)
        for other in (done[n + i], done[2 * n + i]):
            assert (other.returncode, other.stdout) == (default.returncode, default.stdout), (
                cmd[0], other.stderr)


def _run(*args: object) -> CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120)


@pytest.mark.slow  # an ingest (DuckDB, Parquet): 2-3 s; test_fixity holds the verify line too
def test_archive_lines_are_shaped_as_their_family(tmp_path: Path) -> None:
    """`ingest`'s refused lines are report lines on stdout, shaped as `audit`'s findings
    (`seq N [rule] message`); `verify`'s lines are error lines on stderr, which end with their
    rule as every error line does (they had `FILE: [rule] message (...)`)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(DISPUTES / "illegal.log", logs)
    shutil.copy(DISPUTES / "fair-thirteen.log", logs)
    arch = tmp_path / "arch"
    r = _run("ingest", logs, "--archive", arch, "-j", 1)
    assert r.returncode == 1, r.stderr
    refused = [line for line in r.stdout.splitlines() if line.startswith("refused:")]
    assert refused == [f"refused: {logs / 'illegal.log'}: seq 23 [discard.card_not_in_hand] "
                       "first illegal event: seq 23: seat 1 (bruno) does not hold Ac"], r.stdout
    part = next(arch.glob("matches/**/*.parquet"))
    part.chmod(0o644)
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    v = _run("verify", arch)
    lines = v.stderr.splitlines()
    assert v.returncode == 1 and len(lines) == 1, v.stderr
    assert lines[0].startswith(f"buraco-log: error: {part}: "), lines
    assert lines[0].endswith(" [archive.part_changed]"), lines  # the rule last
    assert lines[0].count("[") == 1, lines


def test_a_directory_holding_no_log_is_a_day_without_a_match_to_ingest_and_an_error_to_audit(
        tmp_path: Path) -> None:
    """A nightly `ingest` of a day without a match must not fail its job (0 logs, exit 0, the
    archive made); `audit DIR` of it is a referee pointing at the wrong place (exit 2)."""
    empty = tmp_path / "incoming"
    (empty / "2026-12").mkdir(parents=True)
    (empty / "notes.txt").write_text("no log here\n")
    arch = tmp_path / "arch"
    ingest, audit = _batch([(UTF8, ["ingest", empty, "--archive", arch]),
                            (UTF8, ["audit", empty])])
    assert (ingest.returncode, ingest.stderr) == (0, ""), ingest.stderr
    assert ingest.stdout.startswith("0 logs: 0 matches added"), ingest.stdout
    assert arch.is_dir()
    assert (audit.returncode, audit.stderr) == (2, f"buraco-log: error: {empty}: no logs found\n")


def test_a_player_named_as_a_card_keeps_the_name(tmp_path: Path) -> None:
    """Players called JK and Ah (initials) are names, not cards: `--cards symbols` must not
    write "seat 0 (🃏)" or a hands table whose dealer is A♥."""
    lines = (ROOT / "examples" / "golden" / "classic.jsonl").read_text().splitlines()
    assert lines[-1].startswith('{"log": "end"')  # the end line's digest holds the names
    text = "\n".join(lines[:-1]) + "\n"
    log = tmp_path / "initials.jsonl"
    log.write_text(text.replace('"name":"p0"', '"name":"JK"').replace('"name":"p1"',
                                                                      '"name":"Ah"'))
    replay, show = _batch([(UTF8, ["replay", log, *SYM]), (UTF8, ["show", log, *SYM])])
    assert replay.returncode == 0 and show.returncode == 0, replay.stderr + show.stderr
    assert SYMBOLS.search(replay.stdout) and SYMBOLS.search(show.stdout)
    assert re.search(r"^  seat 0 JK \(\d+\)", replay.stdout, re.M), replay.stdout
    assert "seat 0 (JK)" in replay.stdout and "(🃏)" not in replay.stdout, replay.stdout
    assert "side 1 (Ah)" in replay.stdout and "  seat 1 Ah (" in replay.stdout, replay.stdout
    hands = show.stdout.split("\nhands\n")[1].splitlines()[1]
    assert hands.split()[1] in ("JK", "Ah"), show.stdout  # the dealer, by name
    assert "🃏" not in show.stdout and "A♥" not in show.stdout.split("melds")[0], show.stdout
