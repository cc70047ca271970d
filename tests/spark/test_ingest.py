"""Spark ingest against the local engine: the same rows, types, layout, dedupe and errors."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from buraco_log.archive import IngestReport, ingest, store
from buraco_log.archive.schema import PARTITIONED, TABLES
from buraco_log.archive.spark import table_checksums
from tests.spark.conftest import FILE_EVENTS, SparkCorpus, SparkRuns, visible_files

pytestmark = pytest.mark.spark


def test_a_failed_job_commits_nothing(spark_runs: SparkRuns) -> None:
    assert "nothing of this run was committed" in spark_runs.failed
    assert "injected failure" in spark_runs.failed
    assert "\n" not in spark_runs.failed
    assert spark_runs.after_failure == []


def test_what_a_killed_run_left_is_removed_first(spark_runs: SparkRuns) -> None:
    assert sorted(spark_runs.first.recovered) == sorted(
        spark_runs.leftovers)  # every staged file, as the local clean-up counts them
    for rel in spark_runs.leftovers:
        assert not (spark_runs.path / rel).exists()
    assert not (spark_runs.path / ".staging").exists() or \
        not any((spark_runs.path / ".staging").iterdir())


def test_every_table_equals_the_local_engines(
        spark_runs: SparkRuns, local_archive: tuple[Path, IngestReport]) -> None:
    """Retried tasks, an incremental second run and small files still give the same rows."""
    ours, ref = table_checksums(spark_runs.path), table_checksums(local_archive[0])
    assert set(ours) == set(TABLES)
    for table in TABLES:
        assert not ref[table].endswith(":0"), table  # the corpus fills every table
        assert ours[table] == ref[table], table


def test_the_checksum_sees_a_changed_row(spark_runs: SparkRuns, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(spark_runs.path, copy)
    victim = next(iter(store.committed_files(str(copy))["hands"]))
    t = pq.read_table(victim, partitioning=None)
    field = t.schema.field("total")
    t = t.set_column(t.schema.get_field_index("total"), field,
                     pa.array([v + 1 for v in t.column("total").to_pylist()], field.type))
    pq.write_table(t, victim)
    for record in (copy / store.BATCHES).glob("*.json"):  # as if committed so: its size
        data = json.loads(record.read_text())           # changed, which readers refuse
        rel = os.path.relpath(victim, copy)
        if rel in data.get("fingerprints", {}):
            data["fingerprints"][rel] = list(store.fingerprint(victim))
            record.write_text(json.dumps(data))
    before, after = table_checksums(spark_runs.path), table_checksums(copy)
    assert before["hands"] != after["hands"]
    assert {k for k in TABLES if before[k] != after[k]} == {"hands"}


def test_same_types_layout_and_file_names(
        spark_runs: SparkRuns, local_archive: tuple[Path, IngestReport]) -> None:
    ours = store.committed_files(str(spark_runs.path))
    ref = store.committed_files(str(local_archive[0]))
    records = {m["batch"]: m for m in store.manifests(str(spark_runs.path))}
    for table in TABLES:
        assert ours[table] and ref[table]
        ref_schema = pq.read_schema(ref[table][0])
        for f in ours[table]:
            assert pq.read_schema(f).equals(ref_schema, check_metadata=True), (table, f)
            batch = store.batch_of(os.path.basename(f))
            assert batch in records
            rel = os.path.relpath(f, spark_runs.path)
            assert rel in records[batch]["files"][table]
        dirs = {os.path.relpath(os.path.dirname(f), spark_runs.path) for f in ours[table]}
        assert dirs == {os.path.relpath(os.path.dirname(f), local_archive[0])
                        for f in ref[table]}
    # Output files sized by events, not one per task: the second run (file_events=300) wrote
    # each partition's new events in at most ceil(events / 300) files, one batch record each.
    second = set(spark_runs.second.batches)
    per_dir: dict[str, list[int]] = {}
    for f in ours["events"]:
        if store.batch_of(os.path.basename(f)) in second:
            per_dir.setdefault(os.path.dirname(f), []).append(pq.read_metadata(f).num_rows)
    assert per_dir
    for rows in per_dir.values():
        assert len(rows) <= math.ceil(sum(rows) / FILE_EVENTS)
    assert max(map(len, per_dir.values())) > 1
    assert len(spark_runs.second.batches) > 1
    # The first run (the default size) wrote one file a partition.
    first = set(spark_runs.first.batches)
    dirs = [os.path.dirname(f) for f in ours["events"]
            if store.batch_of(os.path.basename(f)) in first]
    assert len(dirs) == len(set(dirs))
    m = pq.ParquetDataset(ours["matches"]).read(columns=["batch", "ingested_at"])
    assert set(m.column("batch").to_pylist()) <= set(records)
    assert m.column("ingested_at").null_count == 0


def test_counts_and_errors_like_the_local_engine(
        spark_runs: SparkRuns, local_archive: tuple[Path, IngestReport],
        spark_corpus: SparkCorpus) -> None:
    ref = local_archive[1]
    first, second = spark_runs.first, spark_runs.second
    assert first.added + second.added == ref.added == spark_corpus.good
    assert first.events + second.events == ref.events
    assert first.files == 12 and second.files == ref.files == 18
    # a/: 8 matches and 4 refused; the second run finds those by file hash, and the byte copy
    # of a refused log in b/ too.
    assert (first.added, len(first.errors), first.already_stored) == (8, 4, 0)
    assert (second.already_stored, second.known_errors) == (8, 5)
    # b/: the JSON Lines copy of a match of a/ (same digest), the byte copy of a refused log.
    assert second.duplicates == 1
    assert [e.path for e in second.errors] == []
    # Locally both directories are one run: the copy in b/ is refused after its first.
    copies = [e for e in ref.errors if e.message.startswith("the same bytes as ")]
    assert [os.path.basename(e.path) for e in copies] == ["unfinished-copy.blog"]
    assert sorted((e.path, e.rule) for e in first.errors) == sorted(
        (e.path, e.rule) for e in ref.errors if e not in copies)
    errors = pq.ParquetDataset(store.committed_files(str(spark_runs.path))["errors"]).read()
    assert len(set(errors.column("file_sha256").to_pylist())) == errors.num_rows == 4
    verdicts = [json.loads(v) for v in errors.column("verdict_json").to_pylist() if v]
    assert verdicts  # refused logs carry the audit's verdict, as locally


def test_a_rerun_adds_nothing(spark_runs: SparkRuns) -> None:
    again = spark_runs.again
    assert (again.added, again.events, again.batches, again.errors) == (0, 0, [], [])
    assert again.files == spark_runs.second.files
    # Stored by hash: 11 binary logs and the JSON Lines one; the JSON Lines copy of a0 is
    # checked again and dropped by digest; the refused log and its copy by hash.
    assert (again.already_stored, again.duplicates, again.known_errors) == (12, 1, 5)


def test_the_local_engine_sees_the_spark_archive_as_its_own(
        spark_runs: SparkRuns, spark_corpus: SparkCorpus, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(spark_runs.path, copy)
    rep = ingest([str(spark_corpus.root)], copy, jobs=1)
    assert (rep.added, rep.errors, rep.batches) == (0, [], [])
    assert visible_files(copy) == visible_files(spark_runs.path)
    assert all(t in PARTITIONED or t == "errors" for t in TABLES)


def test_spark_batches_keep_the_fingerprints_verify_reads(spark_runs: SparkRuns) -> None:
    from buraco_log.archive import fixity

    for record in store.manifests(str(spark_runs.path)):
        rels = [rel for rels in record["files"].values() for rel in rels]
        assert sorted(record.get("fingerprints", {})) == sorted(rels), record["batch"]
    report = fixity.verify_archive(str(spark_runs.path))
    assert report.ok and report.unrecorded == 0 and report.verified == report.files > 0
