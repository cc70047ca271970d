"""Fault probes, Spark engine, round 42c: of copies of one match, the Spark engine keeps the
stronger (sealed, then more signature records) and stores a stronger copy of a stored match
in its place, as the local engine does (tests/archive/test_fault_probes_archive42c.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest
from tests.archive.unsealed_v2 import V2, _fewer, _stored, _unsealed


@pytest.mark.spark
@pytest.mark.slow  # two Spark ingests: a minute on the loaded machine
def test_spark_keeps_and_names_stronger_copies_as_local(spark: Any, tmp_path: Path) -> None:
    from buraco_log.archive import spark as engine

    src, later, live = tmp_path / "src", tmp_path / "later", tmp_path / "live"
    for d in (src, later, live):
        d.mkdir()
    _unsealed(src / "a.jsonl")
    _fewer(src / "b.jsonl")
    shutil.copy(V2, src / "c.jsonl")
    ours = engine.ingest([src], tmp_path / "spark", spark=spark)
    local = ingest([src], tmp_path / "local")
    assert _stored(tmp_path / "spark") == _stored(tmp_path / "local") == \
        [("c.jsonl", "sealed", True)]
    assert (ours.duplicates, ours.stronger_copies) == (local.duplicates,
                                                       local.stronger_copies) == (2, [])
    assert engine.table_checksums(tmp_path / "spark") == engine.table_checksums(
        tmp_path / "local")
    _unsealed(live / "m.jsonl")
    shutil.copy(V2, later / "m.jsonl")
    for name in ("spark2", "local2"):
        ingest([live], tmp_path / name)
    ours = engine.ingest([later], tmp_path / "spark2", spark=spark)
    local = ingest([later], tmp_path / "local2")
    # each engine stores the sealed copy in place of the live one (its own new batch)
    assert [(c.path, c.stronger, c.replaced in ours.batches) for c in ours.stronger_copies] \
        == [(c.path, c.stronger, c.replaced in local.batches) for c in local.stronger_copies] \
        == [(str(later / "m.jsonl"), ["sealed"], True)]
    assert _stored(tmp_path / "spark2") == _stored(tmp_path / "local2") == \
        [("m.jsonl", "sealed", True)]
    assert engine.table_checksums(tmp_path / "spark2") == engine.table_checksums(
        tmp_path / "local2")
