"""Fault probes, round 41, of the DuckDB archive: part files of batch records deleted by hand
are refused, never deleted as the leftovers of an interrupted run (intent records tell the
two apart), while a genuinely interrupted ingest, compact or drop is still cleaned up; the
sandbox no longer shows the home directory; refused logs' names as the errors table has them."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.archive import ingest, query, store
from buraco_log.archive.compact import compact
from buraco_log.archive.fixity import verify_archive
from buraco_log.errors import ArchiveError
from tests.archive.killed_at import killed
from tests.cli.probes import ROOT, cli, one_error_line

SIM = ROOT / "examples" / "sim"


def tree(arch: Path) -> dict[str, str]:
    """Every file of the archive but the lock: relative path -> SHA-256 of its bytes."""
    return {str(p.relative_to(arch)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(arch.rglob("*")) if p.is_file() and p.name != store.LOCK}


def batches(arch: Path) -> list[str]:
    return [m["batch"] for m in store.manifests(str(arch))]


def parts_of(arch: Path, batch: str) -> list[Path]:
    return sorted(arch.rglob(f"part-{batch}.parquet"))


def matches(arch: Path) -> list[str]:
    return sorted(query(arch, "SELECT source_path FROM matches").column("source_path")
                  .to_pylist())


# -- batch records deleted by hand ------------------------------------------------------------

def test_parts_whose_records_were_deleted_by_hand_are_refused_and_kept(arch: Path,
                                                                       tmp_path: Path) -> None:
    """Before: compact (and ingest) deleted all five files of the batch as "uncommitted"."""
    gone = batches(arch)[0]
    (arch / "_batches" / f"{gone}.json").unlink()
    before = tree(arch)
    assert len(parts_of(arch, gone)) == 5
    for args in (("compact", arch), ("ingest", SIM / "classic-2p-000000.blog", "--archive", arch)):
        line = one_error_line(cli(*args), 1)
        assert line.startswith(f"buraco-log: error: {arch}: 5 part file(s) belong to no batch "
                               "record and to no interrupted run ("), line
        assert f"part-{gone}.parquet" in line and "and 3 more" in line, line
        assert line.endswith("restore them from a backup, or move those files out of the "
                             "archive if their rows are not wanted; nothing was deleted "
                             "[archive.part_unrecorded]"), line
        assert tree(arch) == before
    with pytest.raises(ArchiveError, match="belong to no batch record"):
        store.drop_batches(str(arch), [batches(arch)[0]])
    assert tree(arch) == before
    # moved out, as the line says: the archive works again
    for p in parts_of(arch, gone):
        p.rename(tmp_path / f"{p.parent.parent.parent.name}.parquet")
    assert cli("compact", arch).returncode == 0
    assert len(matches(arch)) == 2


def test_verify_names_each_part_of_no_record_as_a_problem(arch: Path) -> None:
    """Before: verify passed, counting them as leftovers the next ingest removes."""
    gone = batches(arch)[1]
    (arch / "_batches" / f"{gone}.json").unlink()
    r = cli("verify", arch)
    assert r.returncode == 1 and "5 part files of no batch record" in r.stdout, r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 5 and all("[archive.part_unrecorded]" in x and f"part-{gone}" in x
                                   and "drop the batch" not in x for x in lines), lines
    assert verify_archive(str(arch)).leftovers == []


# -- interrupted runs, cleaned up as before -------------------------------------------------


def test_an_ingest_killed_between_its_renames_and_its_record_is_cleaned_up(
        arch: Path) -> None:
    log = SIM / "classic-2p-000000.blog"
    # rename 1 places the intent record, 2 the first part: killed at the third
    killed("replace", 3, "ingest", log, "--archive", arch, "--jobs", "1")
    intents = list((arch / "_batches").glob("*.intent"))
    assert len(intents) == 1
    batch = intents[0].name.removesuffix(".intent")
    assert parts_of(arch, batch) and not (arch / "_batches" / f"{batch}.json").exists()
    fixity = verify_archive(str(arch))  # as a verify sees a commit under way: no problem
    assert fixity.ok and f"_batches/{batch}.intent" in fixity.leftovers
    assert {str(p.relative_to(arch)) for p in parts_of(arch, batch)} <= set(fixity.leftovers)
    r = cli("ingest", log, "--archive", arch)
    assert r.returncode == 0 and "cleaned up after an interrupted ingest: " in r.stdout, r
    assert not parts_of(arch, batch) and not list((arch / "_batches").glob("*.intent"))
    assert len(matches(arch)) == 4


def test_a_compact_killed_while_removing_what_it_replaced_is_finished(arch: Path) -> None:
    """unlink 1 ends the merged batch's intent, 2-4 the replaced records, then their files:
    killed among the files, which no record names any more (only the "compacted" list)."""
    before = matches(arch)
    old = batches(arch)
    killed("unlink", 6, "compact", arch)
    assert not any((arch / "_batches" / f"{b}.json").exists() for b in old)
    assert any(parts_of(arch, b) for b in old)  # the case this is about
    assert matches(arch) == before
    assert compact(str(arch)).recovered
    assert not any(parts_of(arch, b) for b in old) and matches(arch) == before


def test_a_drop_cut_short_after_its_records_went_is_finished(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim, *kept = batches(arch)
    calls = [0]
    real = store.recover

    def recover(root: str, *args: float) -> list[str]:
        calls[0] += 1
        if calls[0] == 2:  # the one after the records went: as if killed there
            raise KeyboardInterrupt
        return real(root, *args)

    monkeypatch.setattr(store, "recover", recover)
    with pytest.raises(KeyboardInterrupt):
        store.drop_batches(str(arch), [victim])
    monkeypatch.undo()
    assert parts_of(arch, victim) and batches(arch) == kept
    assert len(list((arch / "_batches").glob("drop-*.intent"))) == 1
    assert compact(str(arch)).recovered
    assert not parts_of(arch, victim) and not list((arch / "_batches").glob("*.intent"))
    assert len(matches(arch)) == 2


def test_a_drop_cut_short_before_its_records_went_keeps_the_batch(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = batches(arch)[0]
    real = store.note_intent

    def note(*args: object) -> None:
        real(*args)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "note_intent", note)
    with pytest.raises(KeyboardInterrupt):
        store.drop_batches(str(arch), [victim])
    monkeypatch.undo()
    files = parts_of(arch, victim)
    assert len(files) == 5 and victim in batches(arch)
    assert ingest([str(SIM / "classic-2p-000000.blog")], arch).added == 1  # the intent goes,
    # the batch stays whole
    assert parts_of(arch, victim) == files and not list((arch / "_batches").glob("*.intent"))
    assert victim in batches(arch) and len(matches(arch)) == 4


def test_an_interrupted_ingest_of_an_older_version_is_still_cleaned_up(arch: Path) -> None:
    """No intent record then, but its staging directory, removed only after its record."""
    batch = "20260101T000000Z-0badf00d"
    (arch / ".staging" / batch / "matches").mkdir(parents=True)
    part = arch / "matches" / "preset=classic" / "month=unknown" / f"part-{batch}.parquet"
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_bytes(b"PAR1 renamed in, no record")
    assert store.recover(str(arch)) == [str(part.relative_to(arch))]
    assert not part.exists()


def test_a_compaction_cut_short_then_its_batch_dropped_brings_nothing_back(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replaced batches' records were still there when the merged batch was dropped: with
    the merged record gone they were committed again, and its rows came back."""
    calls = [0]
    real = store.recover

    def recover(root: str, *args: float) -> list[str]:
        calls[0] += 1
        if calls[0] == 2:  # compact's clean-up after its commit
            raise KeyboardInterrupt
        return real(root, *args)

    monkeypatch.setattr(store, "recover", recover)
    with pytest.raises(KeyboardInterrupt):
        compact(str(arch))
    monkeypatch.undo()
    assert len(list((arch / "_batches").glob("*.json"))) == 4
    (merged,) = batches(arch)
    store.drop_batches(str(arch), [merged])
    assert batches(arch) == [] and matches(arch) == []
    assert not list(arch.rglob("part-*.parquet"))


def test_a_damaged_intent_record_is_one_line_and_nothing_is_deleted(arch: Path) -> None:
    (arch / "_batches" / "x.intent").write_text("{not json")
    before = tree(arch)
    line = one_error_line(cli("compact", arch), 1)
    assert line.startswith(f"buraco-log: error: {arch}/_batches/x.intent: unreadable intent "
                           "record"), line
    assert line.endswith("; delete it (the next ingest or compact then names the part files "
                         "of no batch record, if any, and deletes none)"), line
    assert tree(arch) == before
    (arch / "_batches" / "x.intent").write_text('{"batches": 3}')
    before = tree(arch)
    with pytest.raises(ArchiveError, match="damaged intent record: no list of batches; delete "
                                           "it"):
        compact(str(arch))
    assert tree(arch) == before


def test_a_commit_that_fails_after_placing_files_takes_them_back(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = store._atomic_json

    def full(path: str, data: object) -> None:
        if path.endswith(".json") and "_batches" in path:
            raise OSError(28, "No space left on device")
        real(path, data)

    before = tree(arch)
    monkeypatch.setattr(store, "_atomic_json", full)
    with pytest.raises(store.CommitError, match="No space left on device"):
        ingest([str(SIM / "classic-2p-000000.blog")], arch)
    monkeypatch.undo()
    after = tree(arch)
    assert {k: v for k, v in after.items() if not k.startswith("_ratings")} == \
        {k: v for k, v in before.items() if not k.startswith("_ratings")}


# -- the sandbox and the names of refused logs ----------------------------------------------

def test_the_sandbox_shows_no_directory_of_the_users_home(arch: Path) -> None:
    """current_setting('secret_directory') gave "/root/.duckdb/stored_secrets" as data."""
    home = os.path.expanduser("~")
    got = query(arch, "SELECT current_setting('secret_directory') AS d").to_pylist()
    assert got == [{"d": "/dev/null"}]
    values = query(arch, "SELECT name, value FROM duckdb_settings()").to_pylist()
    assert values and not [v for v in values if home in str(v["value"])]
    r = cli("query", arch, "SELECT name FROM duckdb_settings() WHERE value LIKE '%.duckdb%'")
    assert r.returncode == 0 and ".duckdb" not in r.stdout.replace("value LIKE", ""), r


def test_a_refused_log_whose_name_is_not_utf8_is_named_as_the_errors_table_names_it(
        tmp_path: Path) -> None:
    """The line showed U+FFFD (the raw byte), the JSON a lone surrogate, the table \\xfe."""
    src = tmp_path / "src"
    src.mkdir()
    Path(os.fsdecode(bytes(src) + b"/torn\xfe.blog")).write_bytes(b"BURACOLG torn")
    a, b = tmp_path / "a", tmp_path / "b"
    r = subprocess.run([sys.executable, "-m", "cli", "ingest", str(src), "--archive", str(a)],
                       cwd=ROOT, capture_output=True, timeout=120, check=False,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    stored = query(a, "SELECT source_path FROM errors").column("source_path").to_pylist()
    assert stored == [f"{src}/torn\\xfe.blog"]
    refused = [x for x in r.stdout.decode().splitlines() if x.startswith("refused: ")]
    assert len(refused) == 1 and refused[0].startswith(f"refused: {stored[0]}: "), r.stdout
    assert b"\xfe" not in r.stdout
    j = cli("ingest", src, "--archive", b, "-f", "json")
    assert "\\udcfe" not in j.stdout
    assert [e["path"] for e in json.loads(j.stdout)["errors"]] == stored


def test_a_part_whose_name_is_not_utf8_is_named_with_xnn_by_verify_and_compact(
        arch: Path) -> None:
    """verify said part-\\udcff (and a lone surrogate in its JSON) where the refusal of
    compact and the tables say \\xff."""
    junk = Path(os.fsdecode(bytes(arch) + b"/matches/part-\xff.parquet"))
    junk.write_bytes(b"")
    line = one_error_line(cli("compact", arch), 1)
    assert "(matches/part-\\xff.parquet)" in line, line
    r = cli("verify", arch)
    assert r.returncode == 1 and r.stderr.startswith(
        f"buraco-log: error: {arch}/matches/part-\\xff.parquet: "), r
    assert r.stderr.rstrip().endswith(" [archive.part_unrecorded]"), r
    j = cli("verify", arch, "-f", "json")
    assert "\\udcff" not in j.stdout
    assert [(p["path"], p["batch"]) for p in json.loads(j.stdout)["problems"]] == [
        ("matches/part-\\xff.parquet", "\\xff")]
    assert junk.exists()


def test_a_clean_up_cut_short_is_finished_by_the_next(
        arch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parts go before what names them: the staging directory of an older version's
    run went first, and a clean-up cut short after it left parts that nothing named."""
    batch = "20260101T000000Z-0badf00d"
    (arch / ".staging" / batch / "matches").mkdir(parents=True)
    for table in ("matches", "hands"):
        part = arch / table / "preset=classic" / "month=unknown" / f"part-{batch}.parquet"
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_bytes(b"PAR1 renamed in, no record")
    calls = [0]
    real = os.unlink

    def unlink(path: str, *args: object, **kw: object) -> None:
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt  # as if killed between the two parts
        real(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", unlink)
    with pytest.raises(KeyboardInterrupt):
        store.recover(str(arch))
    monkeypatch.undo()
    assert len(parts_of(arch, batch)) == 1
    assert len(store.recover(str(arch))) == 1 and not parts_of(arch, batch)


def test_a_dry_run_of_compact_refuses_what_compact_would_refuse(arch: Path) -> None:
    """It said "would merge 2 batches into 1", exit 0, where compact refuses the archive."""
    (arch / "_batches" / f"{batches(arch)[0]}.json").unlink()
    before = tree(arch)
    line = one_error_line(cli("compact", arch, "--dry-run"), 1)
    assert "5 part file(s) belong to no batch record" in line, line
    assert tree(arch) == before


def test_an_archive_is_never_made_inside_another(arch: Path) -> None:
    """Made in a table's directory, its parts were the outer archive's parts of no record:
    the outer's next clean-up deleted them (refused since intent records, but made anyway)."""
    before = tree(arch)
    for inner in (arch / "matches" / "nested", arch / "x" / "y"):
        line = one_error_line(cli("ingest", SIM / "classic-2p-000000.blog", "--archive", inner),
                              1)
        assert line == (f"buraco-log: error: {inner}: inside the archive {arch}; an archive "
                        "cannot be made inside another: choose a directory outside it"), line
        assert not inner.exists()
    assert tree(arch) == before


def test_leftovers_whose_names_are_not_utf8_are_listed_with_xnn(arch: Path) -> None:
    """compact's and ingest's JSON listed them with a lone surrogate (\\udcfe)."""
    junk = os.fsdecode(bytes(arch) + b"/matches/x.tmp-\xfe")
    Path(junk).write_bytes(b"")
    r = cli("compact", arch, "-f", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["recovered"] == ["matches/x.tmp-\\xfe"]
    Path(junk).write_bytes(b"")
    r = cli("ingest", SIM / "classic-2p-000000.blog", "--archive", arch, "-f", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["recovered"] == ["matches/x.tmp-\\xfe"]
    assert not Path(junk).exists()


def test_a_link_in_staging_names_no_interrupted_run(arch: Path, tmp_path: Path) -> None:
    """Only a directory a run made there tells a part of no record for that run's."""
    batch = "20260101T000000Z-0badf00d"
    (tmp_path / "elsewhere").mkdir()
    (arch / ".staging").mkdir(exist_ok=True)
    (arch / ".staging" / batch).symlink_to(tmp_path / "elsewhere")
    part = arch / "matches" / "preset=classic" / "month=unknown" / f"part-{batch}.parquet"
    part.parent.mkdir(parents=True, exist_ok=True)
    part.write_bytes(b"PAR1 someone's rows")
    with pytest.raises(ArchiveError, match=r"1 part file\(s\) belong to no batch record"):
        store.recover(str(arch))
    assert part.exists()
