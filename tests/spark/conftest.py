"""Fixtures: one local Spark session for the whole run, a small corpus in two directories, its
local-engine archive (the reference) and its Spark archive.

The Spark tests skip only when the [spark] extra or Java is missing, and never in CI (CI=true):
there a missing part fails them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import IngestReport, ingest
from buraco_log.jsonl import binary_to_jsonl
from buraco_log.log import read_events
from tests import brokenlogs
from tests.archive.corpus import make_corpus

IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
MASTER = "local[2,3]"  # two threads; a task may fail twice and still be retried
FILE_EVENTS = 300  # the second run's file size: several files a partition


def spark_missing() -> str | None:
    from buraco_log.archive.spark import SparkUnavailable, require

    try:
        require()
    except SparkUnavailable as exc:
        return str(exc)
    return None


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    why = spark_missing()
    if why is not None:
        if IN_CI:
            pytest.fail(f"CI must run the Spark tests: {why}")
        pytest.skip(why)
    from buraco_log.archive import spark as engine

    session = engine.session(MASTER)
    yield session
    session.stop()


@dataclass
class SparkCorpus:
    root: Path  # holds a/ and b/
    a: Path
    good: int  # distinct finished matches under root


@pytest.fixture(scope="session")
def spark_corpus(tmp_path_factory: pytest.TempPathFactory) -> SparkCorpus:
    """a/: 8 matches and bad logs; b/: 4 other matches (one only as JSON Lines), a JSON Lines
    copy of a match of a/ (same content digest, other bytes) and a byte copy of a bad log."""
    root = tmp_path_factory.mktemp("spark-corpus")
    a, b = root / "a", root / "b"
    first = make_corpus(str(a), 8, jobs=2)
    other = make_corpus(str(b), 4, seed="other", jobs=2)
    binary_to_jsonl(other[3], b / "only-as-jsonl.jsonl")
    os.unlink(other[3])
    binary_to_jsonl(first[0], b / "copy-of-a0.jsonl")
    events = read_events(first[1])
    brokenlogs.write(a / "unfinished.blog", events[:-5])
    shutil.copy(a / "unfinished.blog", b / "unfinished-copy.blog")
    illegal, _ = brokenlogs.with_illegal_discard(events)
    brokenlogs.write(a / "illegal.blog", illegal)
    torn = a / "torn.blog"
    shutil.copy(first[2], torn)
    brokenlogs.tear(torn)
    (a / "garbage.blog").write_bytes(b"BURACOLG" + bytes(range(200)))
    return SparkCorpus(root, a, good=12)


@pytest.fixture(scope="session")
def local_archive(spark_corpus: SparkCorpus, tmp_path_factory: pytest.TempPathFactory
                  ) -> tuple[Path, IngestReport]:
    """The reference: the whole corpus through the local engine."""
    path = tmp_path_factory.mktemp("spark-ref") / "local"
    return path, ingest([str(spark_corpus.root)], path, jobs=1)


@dataclass
class SparkRuns:
    """One archive built by four Spark ingests (see :func:`spark_runs`)."""

    path: Path
    failed: str  # the error of the job whose every write attempt failed
    after_failure: list[str]  # files outside .staging right after that job
    leftovers: list[str]  # what a killed run would leave, planted before run 1
    first: IngestReport  # a/ only; the first attempt of a check task fails
    second: IngestReport  # everything; the first attempt of a write task fails
    again: IngestReport  # everything again


def visible_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.parquet")
                  if ".staging" not in p.parts)


@pytest.fixture(scope="session")
def spark_runs(spark: Any, spark_corpus: SparkCorpus, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[SparkRuns]:
    from buraco_log.archive import spark as engine
    from buraco_log.errors import ArchiveError

    path = tmp_path_factory.mktemp("spark-archive") / "spark"
    try:
        spark.conf.set(engine.FAIL_FIRST, "always")
        with pytest.raises(ArchiveError) as failed:
            engine.ingest([str(spark_corpus.a)], path, spark=spark)
        after = visible_files(path)
        # What a driver killed mid-commit leaves: a staged file, a part no record lists.
        leftovers = [".staging/20260101T000000Z-0badf00d/x.parquet",
                     "events/preset=x/month=unknown/part-20260101T000000Z-0badf00d.parquet"]
        for rel in leftovers:
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_bytes(b"PAR1 half written")
        spark.conf.set(engine.FAIL_FIRST, "check")
        first = engine.ingest([str(spark_corpus.a)], path, spark=spark)
        spark.conf.set(engine.FAIL_FIRST, "write")
        # Small files: several per partition, so several batches commit.
        second = engine.ingest([str(spark_corpus.root)], path, spark=spark,
                               file_events=FILE_EVENTS)
        spark.conf.unset(engine.FAIL_FIRST)
        again = engine.ingest([str(spark_corpus.root)], path, spark=spark)
    finally:
        spark.conf.unset(engine.FAIL_FIRST)
    yield SparkRuns(path, str(failed.value), after, leftovers, first, second, again)
