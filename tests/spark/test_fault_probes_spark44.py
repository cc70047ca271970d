"""Fault probes, Spark engine, round 44: a match stored under a match id that another stored
match holds (other content) is named as the local engine names it
(tests/archive/test_fault_probes_archive44.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest
from tests.archive.one_id import one_id_matches


@pytest.mark.spark
@pytest.mark.slow  # two Spark ingests: a minute on the loaded machine
def test_spark_names_a_match_under_a_stored_matchs_id_as_local(
        spark: Any, tmp_path: Path) -> None:
    from buraco_log.archive import spark as engine

    src, match_id = one_id_matches(tmp_path / "one-id")
    for name in ("spark", "local"):
        ingest([str(src / "a.blog")], tmp_path / name)
    ours = engine.ingest([src / "b.blog"], tmp_path / "spark", spark=spark)
    local = ingest([str(src / "b.blog")], tmp_path / "local")
    assert ours.shared_match_ids == local.shared_match_ids
    assert [(s.path, s.match_id, s.others) for s in ours.shared_match_ids] == [
        (str(src / "b.blog"), match_id, [str(src / "a.blog")])]
    both = engine.ingest([src], tmp_path / "spark2", spark=spark)
    assert both.shared_match_ids == ingest([str(src)], tmp_path / "local2").shared_match_ids
    assert len(both.shared_match_ids) == 1


@pytest.mark.spark
@pytest.mark.slow  # a Spark ingest
def test_spark_places_no_part_through_a_partition_directory_that_is_a_link(
        spark: Any, tmp_path: Path) -> None:
    """Before: the first match of a preset went through a link placed where its partition
    would be, its committed part out of the archive (the local engine's: probe 44)."""
    from buraco_log.archive import spark as engine
    from buraco_log.archive import store
    from buraco_log.errors import ArchiveError

    sim = Path(__file__).parents[2] / "examples" / "sim"
    arch, outside = tmp_path / "arch", tmp_path / "outside"
    ingest([str(sim / "classic-2p-000000.blog")], arch)
    outside.mkdir()
    link = arch / "matches" / "preset=burako"
    link.symlink_to(outside)
    with pytest.raises(ArchiveError, match=f"^{link}: symbolic links are not allowed"):
        engine.ingest([sim / "burako-2p-000000.blog"], arch, spark=spark)
    assert list(outside.iterdir()) == [] and len(store.manifests(str(arch))) == 1
