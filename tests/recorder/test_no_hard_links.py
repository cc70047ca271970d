"""The recorder on a file system without hard links (FAT, exFAT, some network ones): a table's
new log and a log the journal creates again after a power loss are put in place by a rename
that never replaces a file, as `log.place_new` does for every new log."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from buraco_log.recorder import Recorder
from tests.recorder.powerloss import PowerLossOps, restore
from tests.recorder.sources import matches, on_disk, source_of


def _no_links(monkeypatch: pytest.MonkeyPatch) -> None:
    """``link(2)`` as FAT answers it."""
    def link(src: object, dst: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted", dst)
    monkeypatch.setattr(os, "link", link)


def _record(rec: Recorder, names: list[str], steps: int, start: int = 0) -> None:
    sources = matches()
    for step in range(start, start + steps):
        assert [rec.submit(n, source_of(n, sources)[step]).result() for n in names] \
            == [step] * len(names)


@pytest.mark.parametrize("sync", ["fsync", "syncfs", "journal"])
def test_new_tables_are_created_without_hard_links(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: str) -> None:
    _no_links(monkeypatch)
    names = ["a", "b", "c"]
    with Recorder(tmp_path, sync=sync) as rec:
        _record(rec, names, 6)
        assert rec.stats().created == 3
    for name in names:
        assert on_disk(str(tmp_path / f"{name}.blog")) == list(source_of(name, matches())[:6])
    # nothing left under a temporary name
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".blog")) \
        == [f"{n}.blog" for n in names]
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".new")]


def test_the_journal_creates_a_lost_log_again_without_hard_links(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_links(monkeypatch)
    ops = PowerLossOps(str(tmp_path))
    names = ["t0", "t1"]
    rec = Recorder(tmp_path, ops=ops, sync="journal", checkpoint_every=60)
    _record(rec, names, 5)
    image = ops.image()  # the logs' names were never made durable
    assert not any(name.endswith(".blog") for name in image)
    rec.close()
    restore(str(tmp_path), image, ops.imaged_names)
    with Recorder(tmp_path, sync="fsync") as again:
        assert again.stats().recreated == 2 and again.stats().recovered == 10
    for name in names:
        assert on_disk(str(tmp_path / f"{name}.blog")) == list(source_of(name, matches())[:5])
