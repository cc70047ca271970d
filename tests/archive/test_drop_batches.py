"""store.drop_batches: the delete half of a delete-then-append re-ingest (of one day's logs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from buraco_log.archive import connect, ingest, store
from buraco_log.errors import ArchiveError
from tests.archive.conftest import Corpus


def count(path: Path, sql: str) -> int:
    con = connect(path)
    try:
        row = con.execute(sql).fetchone()
    finally:
        con.close()
    assert row is not None
    return int(row[0])


def test_dropping_a_days_batches_then_ingesting_the_day_again_restores_the_archive(
        corpus: Corpus, tmp_path: Path) -> None:
    day1, day2 = tmp_path / "day1", tmp_path / "day2"
    day1.mkdir()
    day2.mkdir()
    for i, p in enumerate(corpus.good[:6]):
        shutil.copy(p, (day1 if i < 3 else day2) / Path(p).name)
    arch = tmp_path / "arch"
    first = ingest([str(day1)], arch)
    second = ingest([str(day2)], arch)
    before = {t: sorted(Path(f).name for f in fs)
              for t, fs in store.committed_files(str(arch)).items()}
    assert count(arch, "SELECT count(*) FROM matches") == 6
    removed = store.drop_batches(str(arch), second.batches)
    assert any(r.startswith("_batches/") for r in removed)
    assert any(r.startswith("events/") for r in removed)
    assert count(arch, "SELECT count(*) FROM matches") == 3
    assert {b["batch"] for b in store.manifests(str(arch))} == set(first.batches)
    again = ingest([str(day2)], arch)  # the day's logs are new to the archive again
    assert (again.added, again.already_stored, again.duplicates) == (3, 0, 0)
    assert count(arch, "SELECT count(*) FROM matches") == 6
    after = {t: len(fs) for t, fs in store.committed_files(str(arch)).items()}
    assert after == {t: len(fs) for t, fs in before.items()}


def test_an_unknown_batch_drops_nothing(corpus: Corpus, tmp_path: Path) -> None:
    arch = tmp_path / "arch"
    rep = ingest(corpus.good[:2], arch)
    with pytest.raises(ArchiveError, match="no committed batch 20990101T000000Z-00000000"):
        store.drop_batches(str(arch), [*rep.batches, "20990101T000000Z-00000000"])
    assert [m["batch"] for m in store.manifests(str(arch))] == rep.batches
    assert count(arch, "SELECT count(*) FROM matches") == 2
