"""Fault probes, ingest, second round: ingests creating one archive at the same moment, logs
that hold no event, every kind of bad log landing in the errors table with its own seq and
rule, an ingest killed (SIGKILL) at random moments and run again, foreign files dropped into
the archive, an archive reached through a link, and an empty source directory."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from buraco_log import audit
from buraco_log.archive import ingest, query, report, store
from buraco_log.errors import ArchiveError
from buraco_log.events import CardDrawn, MatchStarted
from buraco_log.log import read_events
from tests import brokenlogs
from tests.archive.conftest import Corpus

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


def _create(root: str) -> str:
    try:
        store.create_archive(root)
        return "ok"
    except ArchiveError as exc:
        return str(exc)


def test_ingests_creating_one_archive_at_once_never_refuse_each_other(tmp_path: Path) -> None:
    """Before: one creator could list the directory just after another had written the
    marker, and refused it as "exists, is not empty and is not an archive" (about 1 round in
    20 with eight processes)."""
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(8) as pool:
        for i in range(80):
            root = str(tmp_path / f"a{i}")
            results = pool.map(_create, [root] * 8)
            assert results == ["ok"] * 8, results
            # the records' directory is made with the marker (round 40)
            assert sorted(os.listdir(root)) == [store.LOCK, store.BATCHES, store.MARKER]


def test_a_setting_stored_by_the_first_creator_survives_a_later_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The creator that lost the race (it saw no marker, then another ingest created the
    archive and stored a setting) neither refuses the directory nor writes its default
    marker over the other's."""
    root = tmp_path / "a"
    store.create_archive(str(root))
    store.set_setting(str(root), "require_commitment", True)
    marker = (root / store.MARKER).read_bytes()
    real = store.is_archive
    calls = [0]

    def late(path: str) -> bool:  # the first look came before the other creator's marker
        calls[0] += 1
        return False if calls[0] == 1 else real(path)

    monkeypatch.setattr(store, "is_archive", late)
    assert store.create_archive(str(root)) == os.path.realpath(root)
    monkeypatch.setattr(store, "is_archive", real)
    assert (root / store.MARKER).read_bytes() == marker
    assert store.settings(str(root)).require_commitment is True
    assert not [n for n in os.listdir(root) if ".tmp-" in n]


def test_a_log_that_holds_no_event_is_not_started_with_no_seq(tmp_path: Path) -> None:
    """Before: an empty file was refused as a torn log (integrity, log.torn) at seq 0, and a
    log holding a header alone as an illegal seq 0 ("does not open with MatchStarted"): no
    event 0 exists in either, and the audit says both never started, undamaged."""
    logs = tmp_path / "logs"
    logs.mkdir()
    whole = (SIM / "classic-2p-000000.blog").read_bytes()
    (logs / "empty.blog").write_bytes(b"")
    (logs / "half-header.blog").write_bytes(whole[:10])
    brokenlogs.write(logs / "header-only.blog", [])
    brokenlogs.write(logs / "header-only-unsealed.blog", [], sealed=False)
    start = read_events(SIM / "classic-2p-000000.blog")[:1]
    brokenlogs.write(logs / "start-only.blog", start)
    arch = tmp_path / "a"
    rep = ingest([str(logs)], arch)
    assert rep.added == 0 and len(rep.errors) == 5
    rows = {Path(r["source_path"]).name: r for r in query(
        arch, "SELECT source_path, code, rule, seq, message FROM errors").to_pylist()}
    for name in ("empty.blog", "half-header.blog", "header-only.blog",
                 "header-only-unsealed.blog"):
        r = rows[name]
        assert (r["code"], r["rule"], r["seq"]) == ("incomplete", "archive.not_started", None)
        assert "not started" in r["message"] and "only finished matches" in r["message"]
        assert audit.audit_log(str(logs / name)).not_started
    # one event, MatchStarted at seq 0: started, and cut after it
    assert (rows["start-only.blog"]["rule"], rows["start-only.blog"]["seq"]) == \
        ("archive.incomplete", 0)


def _first_draw(events: list[Any], after: int) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, CardDrawn) and i > after)


def test_each_bad_log_lands_in_the_errors_table_with_its_own_seq_and_rule(
        tmp_path: Path) -> None:
    """The seq and rule of each break are known from how it was made; the audit names the
    same first finding."""
    events = read_events(SIM / "classic-3p-000000.blog")
    logs = tmp_path / "logs"
    logs.mkdir()
    expected: dict[str, tuple[str, str, int | None]] = {}

    i = _first_draw(events, 30)  # a draw by the seat after the one whose turn it is
    draw = events[i]
    assert isinstance(draw, CardDrawn)
    wrong = list(events)
    wrong[i] = msgspec.structs.replace(draw, seat=(draw.seat + 1) % 3)
    brokenlogs.write(logs / "wrong-seat.blog", wrong)
    expected["wrong-seat.blog"] = ("legality", "turn.not_your_turn", i)

    illegal, seq = brokenlogs.with_illegal_discard(events)
    brokenlogs.write(logs / "illegal-discard.blog", illegal)
    expected["illegal-discard.blog"] = ("legality", "discard.card_not_in_hand", seq)

    scored, seq = brokenlogs.with_wrong_score(events)
    brokenlogs.write(logs / "wrong-score.blog", scored)
    expected["wrong-score.blog"] = ("scoring", "score.mismatch", seq)

    n = len(events)  # one more draw after MatchEnded
    extra = msgspec.structs.replace(draw, seq=n)
    brokenlogs.write(logs / "after-the-end.blog", [*events, extra])
    expected["after-the-end.blog"] = ("legality", "match.over", n)

    brokenlogs.write(logs / "cut.blog", events[:200])
    expected["cut.blog"] = ("incomplete", "archive.incomplete", 199)

    assert isinstance(events[0], MatchStarted)  # left out: the log opens with a deal
    brokenlogs.write(logs / "no-start.blog",
                     [msgspec.structs.replace(e, seq=k) for k, e in enumerate(events[1:50])])
    # the audit's sections run integrity, provenance, legality: the deal check is the first
    # to miss the start (then legality's match.not_started, at the same seq 0)
    expected["no-start.blog"] = ("provenance", "deal.commitment_missing", 0)

    tampered = logs / "tampered.blog"
    shutil.copy(SIM / "classic-3p-000000.blog", tampered)
    brokenlogs.tamper(tampered, 0)
    expected["tampered.blog"] = ("integrity", "log.chain", None)  # seq: checked below

    arch = tmp_path / "a"
    rep = ingest([str(logs)], arch, jobs=2, chunk_size=1)
    assert rep.added == 0 and len(rep.errors) == len(expected)
    rows = {Path(r["source_path"]).name: r for r in query(
        arch, "SELECT source_path, code, rule, seq, verdict_json FROM errors").to_pylist()}
    assert rows.keys() == expected.keys()
    for name, (code, rule, seq) in expected.items():
        r = rows[name]
        got = (r["code"], r["rule"], r["seq"] if seq is not None else None)
        assert got == (code, rule, seq), name
        v = audit.audit_log(str(logs / name))
        if code != "incomplete":  # the audit passes an unfinished match: ingest wants it whole
            assert (v.findings[0].rule, v.findings[0].seq) == (r["rule"], r["seq"]), name
            assert json.loads(r["verdict_json"])["findings"][0]["rule"] == rule
    # the tampered record is record 0: its break is at or before that record's last seq
    assert rows["tampered.blog"]["seq"] is not None


# The library's ingest with tiny batches: a batch is committed after almost every log, so a
# kill can fall anywhere among stagings, renames, records and the ratings.
RUN = ("from buraco_log.archive import ingest; "
       "ingest([{src!r}], {arch!r}, jobs={jobs}, chunk_size=1, commit_events=1, "
       "commit_seconds=0.0)")

SUMS = {t: f"SELECT count(*) AS n, bit_xor(hash(x)) AS h FROM (SELECT * EXCLUDE ({ex}) FROM {t}) x"
        for t, ex in (("matches", "ingested_at, batch"), ("hands", "preset"),
                      ("events", "preset"), ("melds", "preset"), ("players", "preset"),
                      ("errors", "ingested_at, batch"))}


def _sums(arch: Path) -> dict[str, Any]:
    return {t: query(arch, sql).to_pylist()[0] for t, sql in SUMS.items()}


def _start(src: Path, arch: Path, jobs: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", RUN.format(src=str(src), arch=str(arch),
                                                              jobs=jobs)],
                            cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def test_an_ingest_killed_at_random_moments_converges_to_the_uninterrupted_rows(
        corpus: Corpus, tmp_path: Path) -> None:
    src = tmp_path / "logs"
    src.mkdir()
    for p in corpus.good[:10]:
        shutil.copy(p, src)
    for p, code in corpus.bad.items():
        if code in ("legality", "incomplete"):
            shutil.copy(p, src)
    ref = tmp_path / "ref"
    assert _start(src, ref, 1).wait(timeout=300) == 0
    expected = _sums(ref)
    assert expected["matches"]["n"] == 10 and expected["errors"]["n"] == 2
    rng = random.Random(20261204)
    arch = tmp_path / "a"
    records = arch / store.BATCHES
    kills = 0
    for _ in range(3):
        # killed once the run has committed one or two more batches, a moment later: within
        # the next batch's staging, renames or record, or the ratings after the last one
        goal = len(list(records.glob("*.json"))) + rng.choice([1, 2]) if records.is_dir() \
            else rng.choice([1, 2])
        proc = _start(src, arch, rng.choice([1, 2]))
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and (
                not records.is_dir() or len(list(records.glob("*.json"))) < goal):
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.03))
        if proc.poll() is not None:
            break
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        kills += 1
        # what is visible is whole: every stored match has its hands, events and players
        seen = query(arch, "SELECT (SELECT count(*) FROM matches) AS m, "
                     "(SELECT count(DISTINCT game_id) FROM hands) AS h, "
                     "(SELECT count(DISTINCT game_id) FROM events) AS e, "
                     "(SELECT count(DISTINCT game_id) FROM players) AS p").to_pylist()[0]
        assert seen["m"] == seen["h"] == seen["e"] == seen["p"] < 10, seen
    assert kills >= 2
    assert _start(src, arch, 2).wait(timeout=300) == 0
    assert _sums(arch) == expected
    leftovers = [os.path.join(d, n) for d, _, ns in os.walk(arch) for n in ns
                 if ".tmp-" in n or store.STAGING in d]
    assert leftovers == []


def test_foreign_files_in_the_archive_are_neither_read_nor_deleted(
        corpus: Corpus, tmp_path: Path) -> None:
    src = tmp_path / "logs"
    src.mkdir()
    for p in corpus.good[:3]:
        shutil.copy(p, src)
    arch = tmp_path / "a"
    ingest([str(src)], arch)
    before = _sums(arch)
    part = next((arch / "matches").glob("preset=*/month=*"))
    foreign = [arch / "notes.txt", part / "README", part / "garbage.parquet",
               arch / "matches" / "other.parquet", arch / "errors" / "stats.parquet"]
    for f in foreign[:3]:
        f.write_bytes(b"not the archive's\n")
    # well-formed Parquet with rows a reader would count, not named as a part of any batch
    pq.write_table(pa.table({"game_id": [1, 2], "match_id": ["x", "y"]}), foreign[3])
    foreign[4].parent.mkdir()  # no log was refused: no errors directory yet
    pq.write_table(pa.table({"code": ["x"]}), foreign[4])
    assert _sums(arch) == before
    assert report(arch).matches == 3
    for p in corpus.good[3:5]:
        shutil.copy(p, src)
    # a .parquet file in a table's directory is read by every glob over the table
    # (docs/archive.md, Fixity): ingest names it and deletes nothing; other files it passes by
    with pytest.raises(ArchiveError, match=r"3 part file\(s\) .*errors/stats\.parquet.* "
                                           r"\[archive\.part_unrecorded\]$"):
        ingest([str(src)], arch)
    assert all(f.exists() for f in foreign)
    for f in foreign[2:]:
        f.rename(tmp_path / f"{f.parent.name}-{f.name}")
    rep = ingest([str(src)], arch)
    assert (rep.added, rep.already_stored, rep.errors) == (2, 3, [])
    assert all(f.exists() for f in foreign[:2])
    assert query(arch, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 5}]


def test_an_archive_reached_through_a_link_is_the_same_archive(corpus: Corpus,
                                                               tmp_path: Path) -> None:
    real = tmp_path / "real"
    link = tmp_path / "link"
    ingest([corpus.good[0]], real)
    link.symlink_to(real, target_is_directory=True)
    rep = ingest([corpus.good[0], corpus.good[1]], link)
    assert (rep.added, rep.already_stored) == (1, 1)
    assert query(link, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 2}]
    assert _sums(link) == _sums(real)
    assert not any(os.path.islink(os.path.join(d, n))
                   for d, ds, ns in os.walk(real) for n in ds + ns)


def test_an_empty_source_directory_makes_an_empty_archive_every_report_reads(
        tmp_path: Path) -> None:
    src = tmp_path / "none"
    src.mkdir()
    (src / "notes.txt").write_text("not a log\n")  # not a log name: not looked at
    arch = tmp_path / "a"
    r = cli("ingest", str(src), "--archive", str(arch), "--format", "json")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    out = json.loads(r.stdout)
    assert (out["files"], out["added"], out["errors"], out["batches"]) == (0, 0, [], [])
    assert store.manifests(str(arch)) == []
    r = cli("report", str(arch))
    assert r.returncode == 0 and r.stdout.startswith("0 matches, 0 events\n"), r.stderr
    assert r.stdout.count("(no data)") == len(report(arch).sections)


@pytest.mark.parametrize("kind", ["link", "directory", "fifo"])
def test_a_lock_that_is_not_a_plain_file_is_one_line_and_nothing_is_created_outside(
        corpus: Corpus, tmp_path: Path, kind: str) -> None:
    """Before: a .lock that was a symbolic link was followed, and ingest created the file it
    named, outside the archive; a directory there was a bare "Is a directory"."""
    arch = tmp_path / "a"
    ingest([corpus.good[0]], arch)
    lock = arch / store.LOCK
    lock.unlink()
    outside = tmp_path / "elsewhere.lock"
    if kind == "link":
        lock.symlink_to(outside)
    elif kind == "directory":
        lock.mkdir()
    else:
        os.mkfifo(lock)
    before = sorted(p.name for p in arch.rglob("*"))
    r = cli("ingest", corpus.good[1], "--archive", str(arch))
    assert r.returncode != 0 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and f"{lock}: " in r.stderr, r.stderr
    said = {"link": "symbolic links are not allowed inside an archive",
            "directory": "cannot open the ingest lock: Is a directory",
            "fifo": "the ingest lock is not a regular file"}[kind]
    assert said in r.stderr
    assert not outside.exists()
    assert sorted(p.name for p in arch.rglob("*")) == before
    if kind != "link":  # (queries refuse any link inside an archive)
        assert query(arch, "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 1}]


def test_a_file_named_twice_is_one_file_not_a_duplicate(tmp_path: Path) -> None:
    """``ingest a.blog ./a.blog DIR`` (DIR holding a.blog) named one file three times: it said
    "3 logs ... 2 duplicates", as for two copies of a match under other names."""
    src = tmp_path / "src"
    shutil.copytree(SIM, src)
    logs = sorted(src.glob("*.blog"))
    copy = src / f"copy-of-{logs[0].name}"
    shutil.copyfile(logs[0], copy)
    one = str(logs[0])
    names = [one, one, os.path.relpath(one), str(src)]
    r = ingest(names, tmp_path / "arch")
    found = len(audit.find_logs([src]))
    assert r.files == found, r  # each file once, under the first name given
    assert r.duplicates == 1, r  # the copy under another name is still a copy
    assert r.added == found - 1 and not r.errors, r
    paths = query(tmp_path / "arch", "SELECT source_path FROM matches").column(0).to_pylist()
    assert len(paths) == len(set(paths)) == found - 1
