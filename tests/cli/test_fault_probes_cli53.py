"""CLI probes: `-f json` of a file name that is not UTF-8 is strict JSON; `query -f csv` on a
terminal; a match whose players have no names (a Burako table, blank names); every command
given what is no log (a directory, an empty file, a PNG, a Parquet file, a gzip of a log)."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import log
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from tests.cli.probes import ROOT, stdout_on_a_terminal

ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}


def _run_all(runs: list[list[object]], cwd: Path = ROOT) -> list[tuple[int, bytes, bytes]]:
    """``buraco-log ARGS`` for each of ``runs``, all at once, bytes captured: (status, stdout,
    stderr) in the order given. Arguments go as the file system's bytes (a name not UTF-8)."""
    procs = [subprocess.Popen([sys.executable, "-m", "cli",
                               *(a if isinstance(a, bytes) else os.fsencode(str(a))
                                 for a in args)],
                              cwd=cwd, env=ENV, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for args in runs]
    out = []
    for p in procs:
        o, e = p.communicate(timeout=120)
        out.append((p.returncode, o, e))
    return out


# -- 1. a file name that is not UTF-8, in -f json ----------------------------------------------


def test_json_of_a_name_that_is_not_utf8_is_strict_json_with_the_byte_escaped(
        tmp_path: Path) -> None:
    """Before: `"path": "a\\udcff.log"`, a lone surrogate: json.loads took it, a strict reader
    (msgspec, Go, Rust's serde_json) refused the whole document. Now the byte is the text
    ``\\xff``, as the error lines and the archive's tables write it."""
    folder = tmp_path / "club"
    folder.mkdir()
    name = os.fsdecode(b"a\xff.log")
    (folder / name).write_bytes(ILLEGAL.read_bytes())
    (folder / os.fsdecode(b"b\xfe.log")).write_bytes(ILLEGAL.read_bytes())  # a copy: a note
    one = folder / name
    runs = [["verify", "-f", "json", one], ["audit", "-f", "json", folder]]
    done = _run_all(runs)
    for args, (status, out, err) in zip(runs, done, strict=True):
        assert b"Traceback" not in err, (args, err)
        assert status in (0, 1), (args, status, err)
        doc = msgspec.json.decode(out)  # strict: a lone surrogate is refused
        text = msgspec.json.encode(doc).decode()
        assert "a\\\\xff.log" in text, (args, text[:300])  # the text a\xff.log, in JSON
    verdicts = msgspec.json.decode(done[1][1])
    assert [v["path"] for v in verdicts] == [f"{folder}/a\\xff.log", f"{folder}/b\\xfe.log"]
    # the copy's note names the first log as its path is written
    assert verdicts[1]["notes"][-1] == (f"the match is also in {folder}/a\\xff.log (an "
                                        "identical copy: the same events and head digest)")


# -- 2. query -f csv on a terminal --------------------------------------------------------------


@pytest.mark.slow
def test_csv_on_a_terminal_shows_control_characters_escaped_and_exact_elsewhere(
        tmp_path: Path) -> None:
    """Before: `query -f csv` wrote a match id's ESC sequence and BEL to the terminal as they
    are (run, not shown), where the table escapes them; to a pipe csv stays exact."""
    from buraco_log.archive import ingest

    logs = tmp_path / "logs"
    logs.mkdir()
    events = simulate_match(preset("thirteen-quick"), 2, seed="csv53")
    events[0] = msgspec.structs.replace(events[0], match_id="m\x1b[2J\x07id")
    log.write_log(logs / "m.blog", events)
    ingest([str(logs)], tmp_path / "a")
    args: list[object] = ["query", "-f", "csv", tmp_path / "a",
                          "SELECT match_id AS \"t\x1b[31m\" FROM matches"]
    status, shown, err = stdout_on_a_terminal(args, env={"NO_COLOR": "1"})
    assert status == 0, err
    assert "\x1b" not in shown and "\x07" not in shown, repr(shown)
    assert "m\\x1b[2J\\x07id" in shown and "t\\x1b[31m" in shown, repr(shown)
    piped = _run_all([args])[0]
    assert piped[0] == 0 and b"m\x1b[2J\x07id" in piped[1]  # for programs: exact


# -- 4. players with no names: a Burako table ---------------------------------------------------


@pytest.mark.slow
def test_a_burako_match_of_players_with_no_names_names_each_by_seat(tmp_path: Path) -> None:
    """Before: "side 0 ()", "turn: seat 1 ()", a dealer column " (seat 1)", "winner side 0
    ()", diff's "players[0].name:  vs ana"; now each blank name is its seat."""
    events = simulate_match(preset("burako"), 4, seed="blank53")
    start = events[0]
    blank = tuple(msgspec.structs.replace(p, name=n)
                  for p, n in zip(start.players, ("", " ", "", ""), strict=True))
    events[0] = msgspec.structs.replace(start, players=blank)
    path = tmp_path / "burako.blog"
    log.write_log(path, events)
    named = tmp_path / "named.blog"
    log.write_log(named, simulate_match(preset("burako"), 4, seed="blank53"))
    runs: list[list[object]] = [["show", path], ["replay", path, "--at", "5", "--seat", "1"],
                                ["explain", path, "--at", "5"], ["diff", path, named]]
    done = [(s, o.decode(), e.decode()) for s, o, e in _run_all(runs)]
    for args, (status, out, err) in zip(runs, done, strict=True):
        assert status in (0, 1) and "Traceback" not in err, (args, err)
        assert "()" not in out and "( " not in out, (args, out)
    show, replay, explain, diff = (d[1] for d in done)
    hands = show.split("\nhands\n", 1)[1].splitlines()
    assert hands[0].split()[:4] == ["hand", "dealer", "ended", "went"]
    assert all(row.split()[1:3] == ["seat", row.split()[2]] for row in hands[1:3]), hands
    assert "winner    side " in show and "(seat " in show.split("winner")[1]
    assert "side 0 (seat 0, seat 2)" in replay and "side 1 (seat 1, seat 3)" in replay
    assert "view of seat 1\n" in replay
    assert re.search(r"^  - turn: seat \d, turn \d+ of hand 0$", explain, re.M), explain
    assert "players[0].name: (empty) vs " in diff and "players[1].name: (blank) vs " in diff


# -- 5. every command given what is no log ------------------------------------------------------


def _not_logs(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    (folder / "dir.blog").mkdir()
    (folder / "empty.blog").write_bytes(b"")
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(17)
    (folder / "img.png").write_bytes(png)
    (folder / "img.blog").write_bytes(png)
    (folder / "t.parquet").write_bytes(b"PAR1" + bytes(40) + b"PAR1")
    (folder / "m.blog.gz").write_bytes(gzip.compress(ILLEGAL.read_bytes()))
    return {p.name: p for p in folder.iterdir()}


COMMANDS: list[list[str]] = [["show"], ["replay"], ["verify"], ["audit"], ["explain", "--at", "0"],
                             ["moves", "--at", "0"], ["seal"], ["repair"], ["convert", "-o", "X"],
                             ["view", "-o", "X"]]


@pytest.mark.slow
def test_every_command_given_what_is_no_log_says_one_line_naming_its_rule(tmp_path: Path) -> None:
    files = _not_logs(tmp_path / "in")
    runs: list[list[object]] = []
    for name, path in sorted(files.items()):
        for cmd in COMMANDS:
            out = tmp_path / f"out-{name}-{cmd[0]}.{'html' if cmd[0] == 'view' else 'jsonl'}"
            runs.append([c if c != "X" else out for c in cmd] + [path])
    for i in range(0, len(runs), 10):  # ten at a time: the machine is shared
        for args, (status, out, err) in zip(runs[i:i + 10], _run_all(runs[i:i + 10]),
                                            strict=True):
            path = Path(str(args[-1]))
            text = err.decode()
            assert "Traceback" not in text, (args, text)
            if path.name == "empty.blog" and args[0] in ("show", "verify", "audit"):
                assert status == 0, (args, text)  # a match not started: said, not refused
                continue
            if args[0] == "audit" and path.is_dir():  # searched as a directory
                assert status == 2 and text.endswith(f"{path}: no logs found\n"), (args, text)
                continue
            if args[0] == "audit":  # the verdict is on stdout, its rule in its line
                assert status == 2 and "[log." in out.decode(), (args, out)
                continue
            lines = text.splitlines()
            assert len(lines) == 1 and str(path) in lines[0], (args, lines)
            assert status == 2, (args, status, lines)  # what is no log: exit 2 (README)
            # the rule last: a directory's was missing, and an empty file's for seal,
            # repair and convert
            assert re.search(r" \[log\.[a-z]+\]$", lines[0]), (args, lines)
            if args[0] in ("convert", "view"):
                assert not Path(str(args[2])).exists(), args  # nothing written
