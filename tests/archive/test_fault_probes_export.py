"""Fault probes of `query` output and errors as real processes on the shared archive: csv
cells that keep every value (doubles to the last digit, blobs as hex like json) rather than
the table's six digits or Python's ``b'...'``, an INTERVAL that names its parts in every text
format, and a glob or a never-committed part name in the
user's SQL said as DuckDB's refusal (not as an archive that changed under the query); an
ingest into an archive named by a link that leads nowhere; and copies of one broken log in
one ingest, each refused and named (not counted as duplicate matches); the clean-up after a
kill while staging counts the files it removes; and a Ctrl-C during a commit lets the commit
finish and says that the run was interrupted; an archive.json that is no regular file is
named as such; compact says why small batches were left apart."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.archive.conftest import Archived

REPO = Path(__file__).resolve().parents[2]


def _run(*args: object, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.mark.parametrize("where", ["matches/*/*/*.parquet", "_ratings/*.parquet",
                                   "matches/part-never.parquet"])
def test_a_path_the_sql_names_that_was_never_committed_is_not_an_archive_that_changed(
        archived: Archived, where: str) -> None:
    # before: "the archive changed while the query ran (.../*.parquet was removed by a
    # compact or a batch drop ...): run it again", for a glob that no run could ever read
    path = os.path.join(os.path.realpath(archived.path), where)
    r = _run("query", archived.path, f"SELECT count(*) FROM read_parquet('{path}')")
    assert r.returncode == 1 and r.stdout == "", r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "disabled by configuration" in lines[0], r.stderr
    assert "changed while the query ran" not in r.stderr


EXACT = ("SELECT 1/3 AS third, 123456789.123::DOUBLE AS big, 2.0 ** 60 + 1 AS wide, "
         "1e-300 AS tiny, 'ab'::BLOB AS blob, NULL AS nothing, [1/3] AS nested, "
         "avg(margin) AS mean FROM matches")


def test_csv_keeps_doubles_and_blobs_exact(archived: Archived, tmp_path: Path) -> None:
    # before: 0.333333,1.23457e+08,1.15292e+18,1e-300,b'ab',... (six significant digits and
    # Python's bytes repr), while docs/archive.md says csv keeps every value exactly
    as_json = json.loads(_run("query", archived.path, EXACT, "-f", "json").stdout)[0]
    out = tmp_path / "exact.csv"
    for r in (_run("query", archived.path, EXACT, "-f", "csv"),
              _run("query", archived.path, EXACT, "-f", "csv", "-o", out)):
        assert r.returncode == 0 and r.stderr == "", r
        text = r.stdout or out.read_text(encoding="utf-8")
        header, row = list(csv.reader(io.StringIO(text)))
        cells = dict(zip(header, row, strict=True))
        for name in ("third", "big", "wide", "tiny", "mean"):
            assert float(cells[name]) == as_json[name], (name, cells[name])
        assert cells["big"] == "123456789.123" and cells["third"] == repr(1 / 3)
        assert cells["blob"] == "6162" == as_json["blob"]
        assert cells["nothing"] == "" and json.loads(cells["nested"]) == as_json["nested"]


@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_ingest_into_a_link_that_leads_nowhere_is_a_usage_error(
        archived: Archived, tmp_path: Path, kind: str) -> None:
    # before: "buraco-log: error: loop: File exists", exit 1, the same from the library
    link = tmp_path / kind
    if kind == "loop":
        os.symlink(tmp_path / "other", link)
        os.symlink(link, tmp_path / "other")
    else:
        os.symlink(tmp_path / "missing" / "archive", link)
    before = sorted(os.listdir(tmp_path))
    r = _run("ingest", archived.corpus.good[0], "-a", link)
    assert r.returncode == 2 and r.stdout == "", r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"buraco-log: error: {link}: a symbolic "
                                                   "link that leads nowhere"), r.stderr
    assert sorted(os.listdir(tmp_path)) == before

    from buraco_log.archive import ingest
    from buraco_log.errors import ArchiveError

    with pytest.raises(ArchiveError, match="a symbolic link that leads nowhere"):
        ingest([archived.corpus.good[0]], link)


def test_copies_of_a_refused_log_in_one_run_are_refused_and_named(
        archived: Archived, tmp_path: Path) -> None:
    # before: "4 logs: 1 match added (...), 0 already stored, 2 duplicates, 0 refused before,
    # 1 refused now" and one refused line: the two broken copies were called duplicate
    # matches and named nowhere, and the next run counted them as refused before
    src = tmp_path / "logs"
    src.mkdir()
    broken = next(p for p, code in archived.corpus.bad.items() if code == "legality")
    for name in ("a.blog", "b.blog", "c.blog"):
        shutil.copy(broken, src / name)
    shutil.copy(archived.corpus.good[0], src / "d.blog")
    shutil.copy(archived.corpus.good[0], src / "e.blog")
    arch = tmp_path / "arch"
    r = _run("ingest", src, "-a", arch, "--jobs", "1")
    assert r.returncode == 1, r
    lines = r.stdout.splitlines()
    assert lines[0].endswith("1 duplicate, 0 refused before, 3 refused now"), lines[0]
    named = sorted(line.split(": ")[1] for line in lines[1:] if line.startswith("refused: "))
    assert named == [str(src / n) for n in ("a.blog", "b.blog", "c.blog")], r.stdout
    assert sum(f"the same bytes as {src / 'a.blog'}: " in line for line in lines) == 2
    again = _run("ingest", src, "-a", arch, "--jobs", "1")
    assert again.stdout.splitlines()[0].endswith(
        "2 already stored, 0 duplicates, 3 refused before, 0 refused now"), again.stdout


def test_every_count_of_the_ingest_summary_has_thousands_separators(tmp_path: Path) -> None:
    # before: "5,000 logs: ..., 0 already stored, 0 duplicates, 5000 refused before, ..."
    src = tmp_path / "logs"
    src.mkdir()
    for i in range(1000):
        (src / f"{i:04d}.blog").write_bytes(b"BURACOLG" + i.to_bytes(2, "big"))
    arch = tmp_path / "arch"
    first = _run("ingest", src, "-a", arch, "--jobs", "1")
    assert first.returncode == 1 and "1,000 refused now" in first.stdout, first.stdout[:300]
    again = _run("ingest", src, "-a", arch, "--jobs", "1")
    assert again.returncode == 0, again
    assert again.stdout.splitlines()[0].endswith(" 1,000 refused before, 0 refused now")


def test_the_clean_up_after_a_kill_while_staging_counts_every_file(tmp_path: Path) -> None:
    # a SIGTERM while a batch was being staged left 40 files under .staging/<batch>/; the
    # next ingest removed them and said "1 uncommitted file(s)" (the batch directory)
    from buraco_log.archive import store

    arch = tmp_path / "arch"
    store.create_archive(str(arch))
    batch = arch / store.STAGING / "20261205T073023Z-b6296bc5"
    for table in ("events", "hands", "matches"):
        part = batch / table / "preset=classic" / "month=unknown"
        part.mkdir(parents=True)
        (part / "part-20261205T073023Z-b6296bc5.parquet").write_bytes(b"PAR1")
    empty = tmp_path / "none"
    empty.mkdir()
    r = _run("ingest", empty, "-a", arch)
    assert r.returncode == 0, r
    # no intent record yet (a run writes it after staging): ingest or compact (round 41b)
    assert r.stdout.splitlines()[-1] == ("cleaned up after an interrupted ingest or compact: 3 "
                                         "uncommitted file(s)"), r.stdout
    assert not (arch / store.STAGING).exists() or not any((arch / store.STAGING).iterdir())


# The CLI in a real process, with a Ctrl-C arriving as the batch's commit begins.
SIGINT_IN_COMMIT = """
import os, signal, sys
from buraco_log.archive import store
real = store.commit
def commit(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    return real(*args, **kwargs)
store.commit = commit
from cli.main import run
sys.argv = ["buraco-log", *sys.argv[1:]]
run()
"""


def test_a_ctrl_c_during_the_commit_lets_it_finish_and_says_interrupted(
        archived: Archived, tmp_path: Path) -> None:
    # before: "buraco-log: error: interrupted", exit 130, nothing committed and the staged
    # batch left under .staging (the whole run's checked work lost, where the docs say Ctrl-C
    # commits what was already checked); an interrupt the summary showed said nothing of it
    arch = tmp_path / "arch"
    logs = archived.corpus.good[:2]
    r = subprocess.run([sys.executable, "-c", SIGINT_IN_COMMIT, "ingest", *logs, "-a",
                        str(arch), "--jobs", "1"], capture_output=True, text=True,
                       timeout=120, cwd=REPO)
    assert r.returncode == 130, r
    assert r.stdout.startswith("2 logs: 2 matches added"), r
    assert r.stderr.strip().splitlines()[-1].startswith(
        "buraco-log: error: interrupted: what was checked is committed"), r.stderr
    assert not any((arch / ".staging").rglob("*.parquet"))
    n = _run("query", arch, "SELECT count(*) AS n FROM matches", "-f", "csv")
    assert n.stdout == "n\n2\n", n


def test_with_sigint_at_its_default_action_the_commit_finishes_and_then_it_kills(
        archived: Archived, tmp_path: Path) -> None:
    # the hold must not swallow a Ctrl-C that was to end the process
    arch = tmp_path / "arch"
    code = "import signal; signal.signal(signal.SIGINT, signal.SIG_DFL)\n" + SIGINT_IN_COMMIT
    r = subprocess.run([sys.executable, "-c", code, "ingest", archived.corpus.good[0], "-a",
                        str(arch), "--jobs", "1"], capture_output=True, text=True,
                       timeout=120, cwd=REPO)
    assert r.returncode == -2, r  # died of SIGINT
    n = _run("query", arch, "SELECT count(*) AS n FROM matches", "-f", "csv")
    assert n.stdout == "n\n1\n", n


INTERVALS = ("SELECT INTERVAL 1 MONTH + INTERVAL 3 DAY + INTERVAL 5 SECOND AS i, "
             "[INTERVAL 1 DAY] AS l, NULL::INTERVAL AS n")
PARTS = {"months": 1, "days": 3, "nanoseconds": 5_000_000_000}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "table"])
def test_an_interval_names_its_parts(archived: Archived, fmt: str) -> None:
    # before: json [1, 3, 5000000000] (which is which?), csv and table
    # "MonthDayNano(months=1, days=3, nanoseconds=5000000000)" (Python's repr)
    r = _run("query", archived.path, INTERVALS, "-f", fmt)
    assert r.returncode == 0 and r.stderr == "", r
    assert "MonthDayNano" not in r.stdout
    if fmt == "jsonl":
        assert json.loads(r.stdout) == {"i": PARTS, "l": [{"months": 0, "days": 1,
                                                             "nanoseconds": 0}], "n": None}
    elif fmt == "csv":
        header, row = list(csv.reader(io.StringIO(r.stdout)))
        assert header == ["i", "l", "n"] and json.loads(row[0]) == PARTS and row[2] == ""
    else:
        assert json.dumps(PARTS) in r.stdout


@pytest.mark.parametrize("command", ["query", "ingest"])
def test_a_marker_that_is_no_regular_file_is_named(
        archived: Archived, tmp_path: Path, command: str) -> None:
    # before: "not an archive (no archive.json; create one with ...)" from query, report and
    # compact, and "exists, is not empty and is not an archive" from ingest
    from buraco_log.archive import store

    arch = tmp_path / "arch"
    store.create_archive(str(arch))
    (arch / "archive.json").unlink()
    os.mkfifo(arch / "archive.json")
    args = (["query", arch, "SELECT 1"] if command == "query"
            else ["ingest", archived.corpus.good[0], "-a", arch])
    r = _run(*args, timeout=30)
    assert r.returncode == 1 and r.stdout == "", r
    assert r.stderr == (f"buraco-log: error: {arch}/archive.json: the archive's marker is not "
                        "a regular file; restore it from a backup\n"), r.stderr


def test_compact_says_why_small_batches_of_other_partitions_stay(
        archived: Archived, tmp_path: Path) -> None:
    # a batch of one match and a batch of one refused log: both small, but their files are
    # in different partitions, so a merge saves none. Before: "none small enough to merge"
    from buraco_log.archive import ingest

    arch = tmp_path / "arch"
    ingest([archived.corpus.good[0]], arch, jobs=1)
    ingest([next(iter(archived.corpus.bad))], arch, jobs=1)
    r = _run("compact", arch, "--dry-run")
    assert r.returncode == 0, r
    assert r.stdout.endswith("nothing to compact: 2 batches (6 files), merging the 2 small ones "
                             "would make no fewer files (their rows are in different "
                             "partitions)\n"), r.stdout
