"""`compact`: small batches merged into few, every row kept, crash-safe at every step.

An archive fed one log per ingest (an hourly or daily job) is five batches here; compacted, it
must hold exactly the same rows (only the `batch` column names the new batch), verify clean,
answer every report as before, and never show a row twice or miss one, even when the process
is killed at any rename or unlink of the compaction.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from buraco_log.archive import ingest, query, report, store
from buraco_log.archive.compact import _conform, compact, plan
from buraco_log.archive.fixity import verify_archive
from buraco_log.errors import ArchiveError
from tests.archive.compact_sums import checksums
from tests.archive.conftest import Corpus
from tests.archive.killed_at import KILLER

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def one_per_batch(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four good logs and one refused, each ingested on its own: five batches."""
    arch = tmp_path_factory.mktemp("compact") / "a"
    bad = next(p for p, code in corpus.bad.items() if code == "incomplete")
    for log in [*corpus.good[:4], bad]:
        ingest([log], arch, jobs=1)
    assert len(store.manifests(str(arch))) == 5
    return arch


@pytest.fixture
def fresh(one_per_batch: Path, tmp_path: Path) -> Path:
    arch = tmp_path / "a"
    shutil.copytree(one_per_batch, arch)
    for d, _dirs, names in os.walk(arch):  # copytree kept the read-only bits; tests edit
        for n in names:
            os.chmod(os.path.join(d, n), 0o644)
    return arch


def parts(arch: Path) -> list[str]:
    return sorted(str(p.relative_to(arch)) for p in arch.rglob("part-*.parquet")
                  if "_ratings" not in p.parts)


def test_compact_merges_the_batches_and_keeps_every_row(fresh: Path) -> None:
    before, files = checksums(fresh), parts(fresh)
    sections = [(s.name, s.rows) for s in report(fresh).sections]
    rep = compact(str(fresh))
    assert (rep.batches_before, rep.batches_after) == (5, 1)
    assert rep.files_before == len(files) and rep.files_after == len(parts(fresh))
    assert rep.files_after < rep.files_before
    [merge] = rep.merges
    assert sorted(merge.replaces) == sorted(os.path.basename(f).split(".")[0].removeprefix(
        "part-") for f in files if f.startswith("matches/") or f.startswith("errors/"))
    assert checksums(fresh) == before  # the same rows, `ingested_at` kept
    assert [(s.name, s.rows) for s in report(fresh).sections] == sections
    batches = query(fresh, "SELECT DISTINCT batch FROM matches UNION "
                           "SELECT DISTINCT batch FROM errors").column("batch").to_pylist()
    assert batches == [merge.batch]
    assert os.listdir(fresh / "_batches") == [f"{merge.batch}.json"]
    assert all(f"part-{merge.batch}.parquet" in f for f in parts(fresh))
    fixity = verify_archive(str(fresh))
    assert fixity.ok and fixity.verified == fixity.files == rep.files_after


def test_a_second_compact_finds_nothing_and_ingest_still_knows_every_log(
        fresh: Path, corpus: Corpus) -> None:
    compact(str(fresh))
    again = compact(str(fresh))
    assert again.merges == [] and again.batches_before == again.batches_after == 1
    rep = ingest(corpus.good[:4], fresh, jobs=1)
    assert (rep.added, rep.already_stored) == (0, 4)


def test_a_dry_run_writes_nothing(fresh: Path) -> None:
    def listing() -> list[tuple[str, int]]:
        return sorted((str(p), p.stat().st_mtime_ns) for p in fresh.rglob("*"))

    seen = listing()
    rep = compact(str(fresh), dry_run=True)
    assert len(rep.merges) == 1 and rep.batches_after == 1 and rep.dry_run
    assert rep.merges[0].batch == ""
    assert listing() == seen


def test_before_keeps_the_batches_of_that_day_and_later_apart(fresh: Path) -> None:
    today = datetime.datetime.now(datetime.UTC).date()
    assert compact(str(fresh), before=today).merges == []
    assert len(store.manifests(str(fresh))) == 5
    assert len(compact(str(fresh), before=today + datetime.timedelta(days=1)).merges) == 1


def _record(batch: str, events: int, day: str = "2026-01-01") -> dict[str, Any]:
    return {"batch": batch, "committed_at": f"{day}T00:00:00.000+00:00", "files": {},
            "rows": {"events": events}}


def test_the_plan_merges_small_batches_in_order_up_to_the_target() -> None:
    records = [_record("a", 30), _record("b", 30), _record("c", 30), _record("d", 60),
               _record("e", 10), _record("f", 10), _record("g", 80)]
    # d (60 of 100) and g are big enough already and stay; a+b+c+e fill one batch, and f,
    # left alone, is nothing to merge
    assert [[r["batch"] for r in g] for g in plan(records, 100)] == [["a", "b", "c", "e"]]
    # with a target of 60, batches of 30 are half of it: only e and f are small
    assert [[r["batch"] for r in g] for g in plan(records, 60)] == [["e", "f"]]
    # a lone small batch is nothing to merge
    assert plan([_record("a", 1), _record("b", 99)], 100) == []
    late = [_record("a", 1, "2026-01-01"), _record("b", 1, "2026-01-02"),
            _record("c", 1, "2026-01-02")]
    assert plan(late, 100, before=datetime.date(2026, 1, 2)) == []
    assert len(plan(late, 100, before=datetime.date(2026, 1, 3))[0]) == 3


def test_batches_of_different_partitions_are_left_as_they_are(tmp_path: Path) -> None:
    """Merged, they would keep one file per partition each: a rewrite for nothing."""
    arch = tmp_path / "a"
    for log in ("burako-2p-000000.blog", "mega-2p-000000.blog"):
        ingest([str(ROOT / "examples" / "sim" / log)], arch, jobs=1)
    seen = sorted(os.listdir(arch / "_batches"))
    rep = compact(str(arch))
    assert rep.merges == [] and sorted(os.listdir(arch / "_batches")) == seen
    ingest([str(ROOT / "examples" / "sim" / "mega-4p-000000.blog")], arch, jobs=1)
    [merge] = compact(str(arch)).merges  # the two mega batches share their partitions
    assert len(merge.replaces) == 3 and merge.files_after < merge.files_before


def test_ctrl_c_between_merges_keeps_the_merges_done_and_a_rerun_finishes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arch = tmp_path / "a"
    for log in ("mega-2p", "thirteen-2p", "mega-4p", "thirteen-4p"):
        ingest([str(ROOT / "examples" / "sim" / f"{log}-000000.blog")], arch, jobs=1)
    before = checksums(arch)

    def by_preset(records: list[dict[str, Any]], *_a: Any) -> list[list[dict[str, Any]]]:
        # two merges, each of two batches of one partition (batch ids of one second sort
        # by their random part: the plan's own grouping would vary from run to run)
        return [[r for r in records if f"preset={p}/" in r["files"]["events"][0]]
                for p in ("mega", "thirteen")]

    from buraco_log.archive import compact as module

    monkeypatch.setattr(module, "plan", by_preset)
    real, calls = store.commit, [0]

    def interrupted_second(*a: Any, **kw: Any) -> dict[str, Any]:
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(store, "commit", interrupted_second)
    with pytest.raises(KeyboardInterrupt):
        compact(str(arch))
    monkeypatch.undo()
    assert checksums(arch) == before
    assert len(store.manifests(str(arch))) == 3  # the first merge stays, the second did not
    again = compact(str(arch))  # the plan of its own: the three batches left are small
    assert len(again.merges) == 1 and len(store.manifests(str(arch))) == 1
    assert checksums(arch) == before and verify_archive(str(arch)).ok


def test_a_damaged_file_is_refused_and_nothing_changes(fresh: Path) -> None:
    victim = fresh / next(f for f in parts(fresh) if f.startswith("events/"))
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    records = sorted(os.listdir(fresh / "_batches"))
    r = cli("compact", str(fresh))
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and str(victim) in r.stderr, r.stderr
    assert "damaged archive file" in r.stderr
    assert sorted(os.listdir(fresh / "_batches")) == records
    assert not (fresh / store.STAGING).exists() or not os.listdir(fresh / store.STAGING)


@pytest.mark.parametrize("kind", ["fifo", "link", "missing"])
def test_a_part_that_is_no_regular_file_is_refused_at_once(fresh: Path, kind: str) -> None:
    """A record without fingerprints (written before they were kept) gave a FIFO put in a
    part's place straight to the Parquet reader, which waited on it for ever."""
    victim = fresh / next(f for f in parts(fresh) if f.startswith("hands/"))
    for record_path in (fresh / "_batches").iterdir():
        record = json.loads(record_path.read_text())
        record.pop("fingerprints", None)
        record_path.write_text(json.dumps(record))
    victim.unlink()
    if kind == "fifo":
        os.mkfifo(victim)
    elif kind == "link":
        victim.symlink_to(fresh / next(f for f in parts(fresh) if f.startswith("events/")))
    r = cli("compact", str(fresh))
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r
    assert r.stderr.count("\n") == 1 and str(victim) in r.stderr, r.stderr
    assert len(store.manifests(str(fresh))) == 5


def test_a_part_with_a_column_of_another_type_is_refused_in_one_line(fresh: Path) -> None:
    import pyarrow.parquet as pq

    victim = fresh / next(f for f in parts(fresh) if f.startswith("players/"))
    t = pq.read_table(victim, partitioning=None)
    i = t.schema.get_field_index("name")
    t = t.set_column(i, "name", pa.array([[1]] * t.num_rows, pa.list_(pa.int8())))
    pq.write_table(t, victim)
    for record_path in (fresh / "_batches").iterdir():  # as if committed so
        record = json.loads(record_path.read_text())
        rel = str(victim.relative_to(fresh))
        if rel in record.get("fingerprints", {}):
            record["fingerprints"][rel] = list(store.fingerprint(str(victim)))
            record_path.write_text(json.dumps(record))
    r = cli("compact", str(fresh))
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr, r
    assert r.stderr.count("\n") == 1 and str(victim) in r.stderr, r.stderr
    assert len(store.manifests(str(fresh))) == 5


def test_rows_other_than_the_records_say_are_refused(fresh: Path) -> None:
    first = sorted((fresh / "_batches").iterdir())[0]
    record = json.loads(first.read_text())
    record["rows"]["events"] += 1  # the record says one more row than its files hold
    first.write_text(json.dumps(record))
    with pytest.raises(ArchiveError, match=f"^{first}: damaged batch record: it says its "
                       r"events files hold .* \[archive\.record_damaged\]$"):
        compact(str(fresh))
    assert len(store.manifests(str(fresh))) == 5


def test_a_record_naming_compacted_batches_badly_is_a_damaged_record(fresh: Path) -> None:
    first = sorted((fresh / "_batches").iterdir())[0]
    record = json.loads(first.read_text())
    record["compacted"] = [record["batch"]]  # itself
    first.write_text(json.dumps(record))
    with pytest.raises(ArchiveError, match="damaged batch record: its list of compacted"):
        store.manifests(str(fresh))


def test_dropping_a_merged_batch_names_the_batch_that_holds_it(fresh: Path) -> None:
    old = store.manifests(str(fresh))[0]["batch"]
    [merge] = compact(str(fresh)).merges
    with pytest.raises(ArchiveError, match=f"compact merged it into batch {merge.batch}"):
        store.drop_batches(str(fresh), [old])
    store.drop_batches(str(fresh), [merge.batch])
    assert checksums(fresh)["events"]["n"] == 0


def test_compact_waits_for_no_one_while_an_ingest_holds_the_lock(fresh: Path) -> None:
    with store.locked(str(fresh)), pytest.raises(ArchiveError, match="another ingest"):
        compact(str(fresh))


def test_a_file_written_before_a_column_was_added_gets_it_as_nulls(fresh: Path) -> None:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    part = fresh / next(f for f in parts(fresh) if f.startswith("matches/"))
    whole = pq.read_table(part, partitioning=None)
    old = whole.drop(["signed", "key_id"])  # as written before those columns were added
    got = _conform(old, "matches")
    want = store.stored_schema("matches")  # `signed` is written non-nullable: here NULL
    assert got.schema == pa.schema([f.with_nullable(True) if f.name == "signed" else f
                                    for f in want])
    assert got.column("signed").null_count == got.num_rows == whole.num_rows
    assert got.drop(["signed", "key_id"]).equals(old.select(got.drop(["signed",
                                                                      "key_id"]).column_names))


def test_matches_files_older_than_a_column_merge_with_newer_ones(fresh: Path) -> None:
    """An archive whose first batches were ingested before `matches.signed` and `key_id`
    existed (they read as NULL): compact crashed casting those NULLs to the non-nullable
    `signed` ("Casting field 'signed' with null values to non-nullable")."""
    import pyarrow.parquet as pq

    for record_path in sorted((fresh / "_batches").iterdir())[:2]:
        record = json.loads(record_path.read_text())
        for rel in record["files"]["matches"]:
            t = pq.read_table(fresh / rel, partitioning=None)
            pq.write_table(t.drop(["signed", "key_id"]), fresh / rel, compression="zstd")
            record["fingerprints"][rel] = list(store.fingerprint(str(fresh / rel)))
        record_path.write_text(json.dumps(record))
    signed = "SELECT count(signed) AS known, count(*) AS n FROM matches"
    before, seen = checksums(fresh), query(fresh, signed).to_pylist()
    assert seen[0]["known"] < seen[0]["n"]  # old rows say nothing of signatures
    compact(str(fresh))
    assert len(store.manifests(str(fresh))) == 1
    assert checksums(fresh) == before and query(fresh, signed).to_pylist() == seen
    assert verify_archive(str(fresh)).ok


def test_cli_compact_says_what_it_merged(fresh: Path) -> None:
    dry = cli("compact", str(fresh), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"{fresh}: would merge 5 batches into 1 (")
    assert "nothing written" in dry.stdout
    done = cli("compact", "--archive", str(fresh), "-f", "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["batches_before"], out["batches_after"], len(out["merges"])) == (5, 1, 1)
    again = cli("compact", str(fresh))
    assert again.stdout == (f"{fresh}: nothing to compact: 1 batch ({out['files_after']} "
                            "files), none small enough to merge\n")
    for args, code in ((("compact", str(fresh / "nope")), 2),
                       (("compact", str(fresh / "_batches")), 2),  # not an archive
                       (("compact", str(fresh), "--before", "2026-13-01"), 2)):
        r = cli(*args)
        assert r.returncode == code and r.stdout == "" and "Traceback" not in r.stderr, r
        assert r.stderr.count("\n") == 1, r.stderr


@pytest.fixture(scope="module")
def calls(one_per_batch: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """How many times one compaction of the five batches calls os.replace and os.unlink."""
    out = {}
    for name in ("replace", "unlink"):
        arch = tmp_path_factory.mktemp("count") / "a"
        shutil.copytree(one_per_batch, arch)
        r = subprocess.run([sys.executable, "-c", KILLER, name, "0", "compact", str(arch)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
        out[name] = int(r.stderr.split("calls ")[1])
    return out


# One kill of each phase in the default run: a part renamed into place (0.0), the commit
# record (-2), the ratings after it (-1), the first and the last removal; the middle of the
# renames and of the removals are the same phases again, kept for the slow run.
@pytest.mark.parametrize(("name", "at"), [("replace", 0.0),
                                          pytest.param("replace", 0.5, marks=pytest.mark.slow),
                                          ("replace", -2), ("replace", -1), ("unlink", 0.0),
                                          pytest.param("unlink", 0.2, marks=pytest.mark.slow),
                                          ("unlink", -1)])
def test_killed_at_any_step_readers_see_every_row_once_and_a_rerun_finishes(
        fresh: Path, calls: dict[str, int], name: str, at: float) -> None:
    """replace -2 is the commit record (the last rename but the ratings'); unlink 0 is the
    first replaced record removed after the commit."""
    before = checksums(fresh)
    total = calls[name]
    k = total + int(at) if at < 0 else 1 + int(at * (total - 1))
    killed = subprocess.run([sys.executable, "-c", KILLER, name, str(k), "compact", str(fresh)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert killed.returncode == -9, killed.stderr
    assert checksums(fresh) == before  # between the kill and the rerun: no row twice or lost
    again = cli("compact", str(fresh))
    assert again.returncode == 0, again.stderr
    assert checksums(fresh) == before
    assert len(store.manifests(str(fresh))) == 1
    assert len(os.listdir(fresh / "_batches")) == 1
    fixity = verify_archive(str(fresh))
    assert fixity.ok and fixity.files == len(parts(fresh))


def test_a_query_that_began_before_a_compact_removed_its_files_says_so(
        fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The views list the committed files when the query begins; a compact committed and
    cleaned up in between. Before: DuckDB's "Permission Error: Cannot access file ...
    file system operations are disabled by configuration"."""
    stale = store.committed_files(str(fresh))
    compact(str(fresh))
    monkeypatch.setattr(store, "committed_files", lambda root: stale)
    with pytest.raises(ArchiveError, match=r"the archive changed while the query ran \(.*"
                                           r"part-.*\.parquet was removed by a compact"):
        query(fresh, "SELECT count(*) FROM events")
    monkeypatch.undo()
    assert query(fresh, "SELECT count(*) AS n FROM events").to_pylist()[0]["n"] > 0


def test_a_compact_between_opening_the_views_and_reading_them_is_read_again(
        fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other moment of the same race: the views were made over the old files, and the
    compact removed them before DuckDB read one ("Cannot access file ... file system
    operations are disabled by configuration"; since round 43 the query lists the archive
    again before its first rows, and counts every row once)."""
    from buraco_log.archive import views

    want = query(fresh, "SELECT count(*) AS n FROM events").to_pylist()
    real = views.create_views

    def then_compact(con: Any, root: Any, **kwargs: Any) -> None:
        real(con, root, **kwargs)
        compact(str(root))

    monkeypatch.setattr(views, "create_views", then_compact)
    # the query holds the readers' lock: the compact under it leaves the files it replaced
    # in place at once (it would wait for the query, which waits for it)
    monkeypatch.setattr(store, "WRITER_WAIT", 0.0)
    assert query(fresh, "SELECT count(*) AS n FROM events").to_pylist() == want
    monkeypatch.undo()
    assert len(store.manifests(str(fresh))) == 1
