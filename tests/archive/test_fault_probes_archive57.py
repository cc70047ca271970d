"""Fault probes, archive: an archive ten years old, and a path that is not an archive.

Found: `report DIR` and `query DIR` of a directory that is not an archive (a directory of
logs, the usual slip), `compact DIR` and `ingest --archive DIR` of a directory that holds
other files exited 1, as for a finding, where `report FILE` and `verify DIR` exited 2, the
status of a path that is not what the command reads. Every command now exits 2 there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from buraco_log.archive import store

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "format" / "v2.jsonl"


def _commands(target: Path) -> list[list[str]]:
    t = str(target)
    return [["report", t], ["query", t, "SELECT 1"], ["compact", t], ["compact", t, "--dry-run"],
            ["verify", t], ["ingest", str(EXAMPLE), "--archive", t]]


@pytest.mark.slow  # the command line in this process: 0.9 s to import, 0.2 s a command
@pytest.mark.parametrize("what", ["directory of logs", "file", "missing"])
def test_every_command_exits_2_on_a_path_that_is_not_an_archive(tmp_path: Path,
                                                                what: str) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    runner = CliRunner()
    target = tmp_path / "logs"
    if what == "directory of logs":
        target.mkdir()
        shutil.copy(EXAMPLE, target / "m.jsonl")
    elif what == "file":
        shutil.copy(EXAMPLE, target)
    for argv in _commands(target):
        if what == "missing" and argv[0] == "ingest":
            continue  # a missing directory is made into an archive
        r = runner.invoke(app, argv)
        assert r.exit_code == 2, (argv, r.exit_code, r.stderr)
        assert r.stdout == "" and r.stderr.count("\n") == 1, (argv, r.stdout, r.stderr)
        assert r.stderr.startswith(f"buraco-log: error: {target}"), (argv, r.stderr)
    if what == "directory of logs":
        assert sorted(p.name for p in target.iterdir()) == ["m.jsonl"]  # nothing written


def test_the_library_says_not_an_archive_by_its_own_class(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    for call in (store.check_archive, store.create_archive):
        with pytest.raises(store.NotAnArchive) as caught:
            call(str(tmp_path))
        assert caught.value.exit_status == 2
    made = store.create_archive(str(tmp_path / "new"))  # an archive: no refusal
    assert store.check_archive(made) == made


# -- the key index: a night's ingest reads what it needs, not every batch ------------------------

SIM = Path(__file__).resolve().parents[2] / "examples" / "sim"
NIGHTS = [[SIM / "thirteen-quick-2p-000000.blog"], [SIM / "thirteen-quick-4p-000000.blog"],
          [SIM / "burako-2p-000000.blog", SIM / "mega-2p-000000.blog"]]


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The part files read from here on (store.read_columns is the archive's one reader of
    committed files' columns, as ingest, compact and the ratings read them)."""
    read: list[str] = []
    real = store.read_columns

    def counting(paths: list[str], columns: list[str]) -> object:
        read.extend(paths)
        return real(paths, columns)

    monkeypatch.setattr(store, "read_columns", counting)
    return read


def _batch_files(arch: Path, batch: str) -> set[str]:
    record = next(r for r in store.manifests(str(arch)) if r["batch"] == batch)
    return {str(arch / rel) for rels in record["files"].values() for rel in rels}


@pytest.mark.slow  # three ingests: 0.6 s on a quiet machine
def test_a_nights_ingest_reads_no_file_of_the_batches_before_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from buraco_log.archive import ingest

    arch = tmp_path / "a"
    first = ingest([str(NIGHTS[0][0])], arch, jobs=1)
    read = _reads(monkeypatch)
    second = ingest([str(NIGHTS[1][0])], arch, jobs=1)
    assert (second.added, second.errors) == (1, [])
    old = _batch_files(arch.resolve(), first.batches[0])
    # before: the matches and errors files of every batch (what is stored), then the matches
    # and players files of every batch again (the ratings), each night
    assert not old.intersection(read), sorted(old.intersection(read))
    assert set(read) <= _batch_files(arch.resolve(), second.batches[0])
    third = ingest([str(NIGHTS[0][0]), str(NIGHTS[1][0])], arch, jobs=1)  # known by the index
    assert (third.added, third.already_stored) == (0, 2)


def _known_from_every_file(arch: Path) -> tuple[object, ...]:
    """What store.known said before the index: read from every committed file."""
    files = store.committed_files(str(arch))
    m = store.read_columns(files["matches"], ["digest", "game_id", "file_sha256", "log_format",
                                              "match_id", "source_path"]).to_pylist()
    e = store.read_columns(files["errors"], ["file_sha256", "source_path", "rule", "message"]
                           ).to_pylist() if files["errors"] else []
    return ({r["digest"]: r["game_id"] for r in m},
            {(r["file_sha256"], r["log_format"] == "jsonl") for r in m},
            {(r["file_sha256"], r["source_path"].endswith(".jsonl")) for r in e},
            {(r["source_path"], r["rule"], r["message"]) for r in e if not r["file_sha256"]},
            {r["match_id"] for r in m}, {r["source_path"] for r in m})


def _ratings_agree(arch: Path) -> None:
    import pyarrow.parquet as pq

    from buraco_log.archive import connect
    from buraco_log.archive.report import LEADERBOARD_ROWS, ratings_of_rows

    stored = store.current_ratings(str(arch))
    assert stored is not None
    fresh = ratings_of_rows(connect(arch).sql(LEADERBOARD_ROWS).to_arrow_table())
    assert pq.read_table(stored).equals(fresh)


@pytest.mark.slow  # seven ingests, a compact and a drop
def test_the_key_index_follows_compact_drop_damage_and_an_archive_without_one(
        tmp_path: Path) -> None:
    import os

    from buraco_log.archive import ingest
    from buraco_log.archive.compact import compact

    arch = (tmp_path / "a").resolve()
    bad = tmp_path / "bad.blog"
    bad.write_bytes(b"BURACOLG" + bytes(64))  # refused: an errors row, known by its hash
    for night in NIGHTS:
        ingest([str(p) for p in night] + [str(bad)], arch, jobs=1)
    assert store.known(str(arch)) == _known_from_every_file(arch)
    compact(str(arch))  # three batches into one: the index's batches are all gone
    assert len(store.manifests(str(arch))) == 1
    assert store.known(str(arch)) == _known_from_every_file(arch)
    _ratings_agree(arch)
    vs = SIM / "vs-random"
    late = sorted(str(p) for p in vs.iterdir() if p.suffix == ".blog")[:1] if vs.is_dir() \
        else [str(SIM / "classic-2p-000000.blog")]
    report = ingest(late, arch, jobs=1)
    assert report.added == 1
    store.drop_batches(str(arch), report.batches)  # dropped: its match is not stored now
    again = ingest(late, arch, jobs=1)
    assert (again.added, again.already_stored) == (1, 0)  # not "already stored"
    assert store.known(str(arch)) == _known_from_every_file(arch)
    _ratings_agree(arch)
    # an index damaged (its bytes replaced) or gone is read again from the files, never
    # trusted: the same logs are known as stored, a new one is added
    index = arch / "_index"
    for name in os.listdir(index):
        if name.startswith("matches-"):
            os.chmod(index / name, 0o644)
            (index / name).write_bytes(b"PAR1 not an index")
    assert store.known(str(arch)) == _known_from_every_file(arch)
    shutil.rmtree(index)  # as an archive written by a version that keeps no index
    last = ingest([str(SIM / "classic-2p-000000.blog"), *late], arch, jobs=1)
    assert (last.added, last.already_stored) == (1, 1)
    assert store.known(str(arch)) == _known_from_every_file(arch)
    _ratings_agree(arch)
    from buraco_log.archive.fixity import verify_archive
    checked = verify_archive(str(arch))
    assert checked.ok and not checked.leftovers, checked


@pytest.mark.parametrize("meta", [
    {"version": 2}, {"format": "other"}, {"files": {"matches": "../matches.parquet"}},
    {"files": {"matches": "/etc/passwd"}}, {"batches": ["b1"]}, {"odd": None}])
def test_a_key_index_record_not_of_this_version_is_never_trusted(
        tmp_path: Path, meta: dict[str, object]) -> None:
    import json

    from buraco_log.archive import keyindex

    root = store.create_archive(str(tmp_path / "a"))
    index = Path(root) / keyindex.INDEX
    index.mkdir()
    good = {"format": keyindex.FORMAT, "version": keyindex.VERSION, "batches": {},
            "odd": [], "files": {k: f"{k}-x.parquet" for k in keyindex.COLUMNS}}
    (index / "current.json").write_text(json.dumps(good))
    assert keyindex._current(root) == good
    files = good["files"]
    assert isinstance(files, dict)
    bad = {**good, **meta, "files": {**files, **meta.get("files", {})}}  # type: ignore[dict-item]
    (index / "current.json").write_text(json.dumps(bad))
    assert keyindex._current(root) is None


@pytest.mark.slow  # an ingest and a query: 0.5 s on a quiet machine
def test_a_query_of_one_partition_opens_no_matches_file_of_another(tmp_path: Path) -> None:
    """Before, every query read the footer of every matches file (to line up columns added
    within the layout by name), whatever its WHERE: 3 s a query at 1,000 nightly batches.
    Shown here by a matches file of another partition that cannot be read at all (its bytes
    replaced, its size and time kept, so only reading it tells): a query of one partition
    never opens it."""
    import os

    from buraco_log.archive import ingest, query

    arch = (tmp_path / "a").resolve()
    ingest([str(SIM / "burako-2p-000000.blog"), str(SIM / "mega-2p-000000.blog")], arch, jobs=1)
    other = next(arch.glob("matches/preset=mega/*/part-*.parquet"))
    st = other.stat()
    os.chmod(other, 0o644)
    other.write_bytes(b"\0" * st.st_size)
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    got = query(str(arch), "SELECT count(*) AS n FROM matches m JOIN players p "
                           "USING (game_id) WHERE m.preset = 'burako' AND p.preset = 'burako'")
    assert got.to_pylist() == [{"n": 2}]
    events = query(str(arch), "SELECT count(*) AS n FROM events WHERE preset = 'burako'")
    assert events.to_pylist()[0]["n"] > 0
