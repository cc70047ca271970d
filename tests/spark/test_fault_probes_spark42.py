"""Fault probes, Spark engine, round 42: a ``file://`` URI source is taken literally, as a
local path is. Hadoop globbed it: a log under ``club[1]/`` named by its URI failed the whole
ingest ("PATH_NOT_FOUND"), and ``file://.../club[1]`` listed ``club1``'s files too."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "examples" / "sim"


@pytest.mark.parametrize(("source", "scanned"), [
    ("/a/club[1]/m*.blog", r"/a/club\[1\]/m\*.blog"),
    ("file:///a/club[1]/m.blog", r"file:///a/club\[1\]/m.blog"),
    ("file:/a/{x,y}?.blog", r"file:/a/\{x,y\}\?.blog"),
    ("hdfs://nn/a/club[1]", "hdfs://nn/a/club[1]"),  # another file system: as given
])
def test_a_local_source_is_scanned_literally_whatever_its_form(source: str,
                                                               scanned: str) -> None:
    from buraco_log.archive.spark import _scanned_as

    assert _scanned_as(source) == scanned


@pytest.mark.spark
@pytest.mark.slow  # a Spark ingest and a local one: 30 s on the loaded machine, first job
def test_file_uris_with_glob_characters_ingest_what_they_name(spark: Any,
                                                              tmp_path: Path) -> None:
    """A Spark ingest of two URIs: a log under club[1]/ (the run failed), and club[1]/
    itself beside club1/ (whose logs must not be read)."""
    from buraco_log.archive import spark as engine

    club, other = tmp_path / "club[1]", tmp_path / "club1"
    club.mkdir()
    other.mkdir()
    logs = sorted(SIM.glob("classic-2p-*.blog"))[:1] + sorted(SIM.glob("burako-*.blog"))[:2]
    for log in logs[:2]:
        shutil.copy(log, club / log.name)
    shutil.copy(logs[2], other / logs[2].name)
    uris = [(club / logs[0].name).as_uri().replace("%5B", "[").replace("%5D", "]"),
            f"file://{club}"]
    ours = engine.ingest(uris, tmp_path / "spark", spark=spark)
    local = ingest([str(club / logs[0].name), str(club)], tmp_path / "local")
    assert (ours.added, ours.errors) == (local.added, local.errors) == (2, [])
    assert engine.table_checksums(tmp_path / "spark") == engine.table_checksums(
        tmp_path / "local")
