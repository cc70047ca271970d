"""Fault probes of `query` and `report` as real processes on a real archive: player names
that a spreadsheet would run as formulas (csv keeps them exact, as docs/archive.md says), and
the counts of the ingest and report summary lines in the singular."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.archive import ingest

REPO = Path(__file__).resolve().parents[2]
# a name for each character a spreadsheet takes as the start of a formula
NAMES = ('=HYPERLINK("http://x","click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
         "\tTAB", "\rCR")


def _run(*args: object, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def formula_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three logs of one 2-player match each, whose players bear formula-looking names."""
    import msgspec

    from buraco_log import log
    from buraco_log.events import MatchStarted
    from buraco_log.rules import preset
    from buraco_log.simulate import simulate_match

    logs = tmp_path_factory.mktemp("formula-names") / "logs"
    logs.mkdir()
    for i in range(3):
        events = simulate_match(preset("thirteen-quick"), 2, seed="formula", index=i)
        start = events[0]
        assert isinstance(start, MatchStarted)
        players = tuple(msgspec.structs.replace(p, name=n) for p, n in
                        zip(start.players, NAMES[2 * i:2 * i + 2], strict=True))
        events[0] = msgspec.structs.replace(start, players=players)
        log.write_log(logs / f"m{i}.blog", events)
    return logs


@pytest.fixture(scope="module")
def formula_archive(formula_logs: Path) -> Path:
    arch = formula_logs.parent / "a"
    r = _run("ingest", formula_logs, "--archive", arch, "--jobs", "1")
    assert r.returncode == 0, r
    assert r.stdout.startswith("3 logs: 3 matches added ("), r.stdout
    return arch


PLAYERS = ("SELECT p AS player, -7 AS neg, -1.5 AS negf, '-3' AS negtext "
           "FROM matches, unnest(players) AS t(p) ORDER BY p")


def test_csv_keeps_formula_looking_names_and_negative_numbers_exact(
        formula_archive: Path, tmp_path: Path) -> None:
    # docs/archive.md: csv is for programs, every value as the log holds it (import it into
    # a spreadsheet as text); a quote put before '=' or '-' would change the data they read
    out = tmp_path / "players.csv"
    r = _run("query", formula_archive, PLAYERS, "-f", "csv", "-o", out)
    assert (r.returncode, r.stderr) == (0, ""), r
    text = out.read_bytes().decode("utf-8")  # as written: no newline translation
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["player", "neg", "negf", "negtext"]
    assert sorted(row[0] for row in rows[1:]) == sorted(NAMES)
    assert {tuple(row[1:]) for row in rows[1:]} == {("-7", "-1.5", "-3")}
    stdout = subprocess.run([sys.executable, "-m", "cli.main", "query", str(formula_archive),
                             PLAYERS, "-f", "csv"], capture_output=True, timeout=120, cwd=REPO)
    assert stdout.returncode == 0 and stdout.stdout.decode("utf-8") == text
    assert "'=" not in text and "'-" not in text and "'@" not in text


def test_json_and_jsonl_keep_the_names_raw(formula_archive: Path) -> None:
    r = _run("query", formula_archive, PLAYERS, "-f", "json")
    assert r.returncode == 0, r
    data = json.loads(r.stdout)
    assert sorted(d["player"] for d in data) == sorted(NAMES)
    assert {(d["neg"], d["negf"], d["negtext"]) for d in data} == {(-7, -1.5, "-3")}
    lines = _run("query", formula_archive, PLAYERS, "-f", "jsonl").stdout.splitlines()
    assert [json.loads(line) for line in lines] == data


def test_table_and_report_show_the_names_without_a_quote(formula_archive: Path) -> None:
    # the table is for people: a name is shown as it is, control characters escaped
    r = _run("query", formula_archive, PLAYERS)
    assert r.returncode == 0, r
    assert '=HYPERLINK("http://x","click")' in r.stdout and "\\x09TAB" in r.stdout
    assert "\\x0dCR" in r.stdout and "\r" not in r.stdout and "'=" not in r.stdout
    assert " -7 " in r.stdout and " -1.5 " in r.stdout
    rep = _run("report", formula_archive, "--top", "0")
    assert rep.returncode == 0, rep
    assert "@SUM(A1:A9)" in rep.stdout and "'@" not in rep.stdout


def _run_all(*runs: tuple[object, ...]) -> list[subprocess.CompletedProcess[str]]:
    """``_run`` of each, started at once (each a real process of its own)."""
    procs = [(args, subprocess.Popen([sys.executable, "-m", "cli.main", *map(str, args)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=REPO, env={**os.environ, "COLUMNS": "200"}))
             for args in runs]
    done = []
    for args, p in procs:
        out, err = p.communicate(timeout=120)
        done.append(subprocess.CompletedProcess(list(map(str, args)), p.returncode, out, err))
    return done


def test_summary_lines_count_one_in_the_singular(formula_logs: Path, tmp_path: Path) -> None:
    # (five processes, three archives apart: the ingests at once, then the reports at once)
    one = tmp_path / "one"
    one.mkdir()
    (one / "m0.blog").write_bytes((formula_logs / "m0.blog").read_bytes())
    arch = tmp_path / "a"
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "m0-again.blog").write_bytes((formula_logs / "m0.blog").read_bytes())
    empty = tmp_path / "empty"
    empty.mkdir()
    # an archive of no match (the command refuses a directory holding no log, exit 2)
    assert ingest([str(empty)], tmp_path / "e").added == 0
    r, again = _run_all(("ingest", one, "--archive", arch, "--jobs", "1"),
                        ("ingest", one, copy, "--archive", tmp_path / "b", "--jobs", "1"))
    assert r.returncode == 0, r
    line = r.stdout.splitlines()[0]
    assert line.startswith("1 log: 1 match added ("), line
    assert "0 already stored, 0 duplicates, 0 refused before, 0 refused now" in line, line
    assert again.returncode == 0, again
    assert again.stdout.startswith("2 logs: 1 match added ("), again.stdout
    assert "0 already stored, 1 duplicate, " in again.stdout, again.stdout
    html = tmp_path / "r.html"
    rep, as_html, of_none = _run_all(("report", arch), ("report", arch, "-f", "html", "-o", html),
                                     ("report", tmp_path / "e"))
    assert rep.returncode == 0, rep
    assert rep.stdout.startswith("1 match, ") and " events\n" in rep.stdout.splitlines(True)[0]
    assert as_html.returncode == 0
    assert '<p class="note">1 match, ' in html.read_text(encoding="utf-8")
    assert of_none.stdout.startswith("0 matches, 0 events\n")
