"""An interrupted ingest: nothing half-committed is ever seen, and running it again finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from buraco_log.archive import ingest, query, store
from tests.archive.conftest import Corpus

REPO = Path(__file__).resolve().parents[2]


def count(archive: Path) -> tuple[int, int, int]:
    t = query(archive, "SELECT (SELECT count(*) FROM matches) AS m, "
                       "(SELECT count(DISTINCT digest) FROM matches) AS d, "
                       "(SELECT count(*) FROM events) AS e")
    r = t.to_pylist()[0]
    return r["m"], r["d"], r["e"]


def full(corpus: Corpus, tmp_path: Path) -> tuple[int, int, int]:
    ref = tmp_path / "reference"
    ingest(corpus.good, ref)
    return count(ref)


def test_a_crash_before_the_batch_record_leaves_nothing_visible(
        corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arch = tmp_path / "a"
    real = store._atomic_json

    def crash(path: str, data: object) -> None:
        if store.BATCHES in path and path.endswith(".json"):  # the record, not the intent
            raise KeyboardInterrupt  # as if killed after every file was renamed in
        real(path, data)

    monkeypatch.setattr(store, "_atomic_json", crash)
    with pytest.raises(KeyboardInterrupt):
        ingest(corpus.good, arch)
    monkeypatch.undo()
    assert list(arch.rglob("part-*.parquet"))  # the renamed files are there ...
    assert count(arch) == (0, 0, 0)  # ... but belong to no committed batch
    again = ingest(corpus.good, arch)
    assert again.recovered and again.added == len(corpus.good)
    assert count(arch) == full(corpus, tmp_path)
    assert not list((arch / store.STAGING).iterdir())


def test_a_crash_while_staging_leaves_nothing_visible(
        corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arch = tmp_path / "a"
    calls = {"n": 0}
    real = store.pq.write_table

    def crash(*args: object, **kw: object) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # as if killed in the middle of a file
        real(*args, **kw)

    monkeypatch.setattr(store.pq, "write_table", crash)
    with pytest.raises(KeyboardInterrupt):
        ingest(corpus.good, arch)
    monkeypatch.undo()
    assert (arch / store.STAGING).exists()
    assert count(arch) == (0, 0, 0)
    again = ingest(corpus.good, arch)
    assert any(p.startswith(store.STAGING) for p in again.recovered)
    assert count(arch) == full(corpus, tmp_path)


def test_batches_committed_before_a_crash_are_kept_and_not_redone(
        corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arch = tmp_path / "a"
    real = store.commit
    calls = {"n": 0}

    def crash(*args: object, **kw: object) -> object:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(5, "Input/output error")
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "commit", crash)
    with pytest.raises(OSError):
        ingest(corpus.good, arch, chunk_size=4, commit_events=1)  # one batch per chunk
    monkeypatch.undo()
    kept = count(arch)[0]
    assert kept == 8
    again = ingest(corpus.good, arch)
    assert (again.already_stored, again.added) == (8, len(corpus.good) - 8)
    assert count(arch) == full(corpus, tmp_path)


def test_a_killed_ingest_process_can_simply_be_run_again(corpus: Corpus, tmp_path: Path) -> None:
    arch = tmp_path / "a"
    code = ("import sys\nfrom buraco_log.archive import ingest\n"
            f"ingest(sys.argv[1:], {str(arch)!r}, chunk_size=2, commit_events=1)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, *corpus.good], cwd=REPO)
    deadline = time.monotonic() + 60
    batches = arch / store.BATCHES
    while time.monotonic() < deadline and proc.poll() is None:
        if batches.is_dir() and len(os.listdir(batches)) >= 2:
            break
        time.sleep(0.01)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    m, d, _ = count(arch)
    assert m == d  # whatever was committed, nothing twice
    ingest(corpus.good, arch)
    assert count(arch) == full(corpus, tmp_path)


def test_two_ingests_never_write_at_once(corpus: Corpus, tmp_path: Path) -> None:
    from buraco_log.errors import ArchiveError

    arch = tmp_path / "a"
    store.create_archive(str(arch))
    with store.locked(str(arch)), pytest.raises(ArchiveError, match="another ingest"):
        ingest(corpus.good[:1], arch)


def test_ingest_refuses_a_directory_that_is_not_an_archive(corpus: Corpus,
                                                           tmp_path: Path) -> None:
    from buraco_log.errors import ArchiveError

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ArchiveError, match="not an archive"):
        ingest(corpus.good[:1], tmp_path)


def test_ctrl_c_commits_what_was_checked_and_a_rerun_finishes(
        corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    ingest_mod = importlib.import_module("buraco_log.archive.ingest")  # not the function
    arch = tmp_path / "a"
    real = ingest_mod.check_chunk
    calls = {"n": 0}

    def interrupt(items: object, strict: bool) -> object:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(items, strict)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest_mod, "check_chunk", interrupt)
    rep = ingest(corpus.good, arch, chunk_size=4)
    monkeypatch.undo()
    assert rep.interrupted and rep.added == 8
    assert count(arch)[0] == 8
    again = ingest(corpus.good, arch)
    assert (again.already_stored, again.added, again.interrupted) == (8, len(corpus.good) - 8,
                                                                      False)
    assert count(arch) == full(corpus, tmp_path)
