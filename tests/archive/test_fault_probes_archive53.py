"""Fault probes, round 53, of the archive: a site ingests live matches nightly.

A live log ingested before its end (a match still played) is refused as unfinished and
stored once finished. One ingested after ``MatchEnded`` but before its recorder closed it (a
JSON Lines log without its end line, a binary log written unsealed) was stored
``unsealed``; the finished, sealed log met the next night was only named ("the archive
keeps its copy"), every night again, and the archive kept ``unsealed`` for ever. Now the
sealed copy is stored in its place: the batch that held the old copy is rewritten as a
compaction, the other matches of that batch unchanged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.archive import ingest, query, store
from tests.archive.unsealed_v2 import V2, _unsealed
from tests.cli.probes import ROOT, cli

JSONL_MATCH = "sim-classic-2p-1c3486710156-000000"
UNSEALED_BLOG = ROOT / "examples" / "format" / "v2-unsealed.blog"
OTHER = ROOT / "examples" / "sim" / "burako-2p-000000.blog"
MID = ROOT / "examples" / "sim" / "classic-4p-000000.blog"
UNSEALED_MATCH = "sim-thirteen-quick-2p-d25bff467125-000000"
OTHER_MATCH = "sim-burako-2p-c2fe5768311e-000000"
MID_MATCH = "sim-classic-4p-c2fe5768311e-000000"
OTHER_EVENTS = len(log.read_events(OTHER))
MID_EVENTS = len(log.read_events(MID))


def _rows(arch: Path) -> list[tuple[str, str, str, int]]:
    """Each stored match: file name, match id, integrity, and its events in `events`."""
    got = query(arch, "SELECT regexp_extract(m.source_path, '[^/]+$') AS name, m.match_id, "
                      "m.integrity, (SELECT count(*) FROM events e WHERE e.game_id = m.game_id) "
                      "AS n FROM matches m ORDER BY name").to_pylist()
    return [(r["name"], r["match_id"], r["integrity"], r["n"]) for r in got]


def _night_one(live: Path) -> None:
    """What the nightly job finds while matches are still recorded."""
    live.mkdir()
    _unsealed(live / "j.jsonl")  # MatchEnded written, the end line not yet
    shutil.copy(UNSEALED_BLOG, live / "b.blog")  # a binary log written unsealed
    shutil.copy(OTHER, live / "other.blog")  # a finished match, in the same batch
    w = log.Writer(live / "mid.blog")  # a match still played: 300 events so far
    for e in log.read_events(MID)[:300]:
        w.append(e)
    w.close()


def _night_two(live: Path) -> None:
    """The recorders closed: every log whole and sealed."""
    shutil.copy(V2, live / "j.jsonl")
    log.seal(live / "b.blog")
    (live / "mid.blog").unlink()  # the recorder's file, now whole
    shutil.copy(MID, live / "mid.blog")


@pytest.mark.slow  # three ingests of four logs: 3 s on the loaded machine
def test_the_sealed_logs_of_the_next_night_replace_the_live_copies(tmp_path: Path) -> None:
    live, arch = tmp_path / "live", tmp_path / "arch"
    _night_one(live)
    first = ingest([live], arch)
    assert (first.added, [(e.rule, e.seq) for e in first.errors]) == (
        3, [("archive.incomplete", 299)])
    assert [r[2] for r in _rows(arch)] == ["unsealed", "unsealed", "sealed"]
    before = query(arch, "SELECT * EXCLUDE (batch) FROM matches WHERE source_path LIKE "
                         "'%other.blog' ").to_pylist()
    _night_two(live)
    second = ingest([live], arch)
    # before: 0 added, 2 duplicates, both named "the archive keeps its copy"; unsealed kept
    assert [(c.match_id, c.stronger, c.replaced is not None) for c in second.stronger_copies] \
        == [(UNSEALED_MATCH, ["sealed"], True), (JSONL_MATCH, ["sealed"], True)]
    assert second.duplicates == 2
    assert _rows(arch) == [("b.blog", UNSEALED_MATCH, "sealed", 245),
                           ("j.jsonl", JSONL_MATCH, "sealed", 716),
                           ("mid.blog", MID_MATCH, "sealed", MID_EVENTS),
                           ("other.blog", OTHER_MATCH, "sealed", OTHER_EVENTS)]
    assert query(arch, "SELECT count(*) AS n FROM events").to_pylist() == \
        [{"n": 245 + 716 + OTHER_EVENTS + MID_EVENTS}]
    # the match that was still played: refused then, stored now; the refusal stays in errors
    assert query(arch, "SELECT e.rule, e.seq FROM errors e WHERE EXISTS (SELECT 1 FROM "
                       "matches m WHERE m.source_path = e.source_path)").to_pylist() == \
        [{"rule": "archive.incomplete", "seq": 299}]
    # the other match of the rewritten batch: every column but the batch as it was
    assert query(arch, "SELECT * EXCLUDE (batch) FROM matches WHERE source_path LIKE "
                       "'%other.blog' ").to_pylist() == before
    # the old batch is gone, replaced: its id leads to the new one
    assert first.batches[0] not in [r["batch"] for r in store.manifests(str(arch))]
    assert store.merged_into(str(arch))[first.batches[0]] in second.batches
    # the night after: nothing more to say, nothing read again
    third = ingest([live], arch)
    assert (third.added, third.stronger_copies, third.already_stored) == (0, [], 4)




def test_the_sealed_log_replaces_the_live_copy_stored_the_night_before(
        tmp_path: Path) -> None:
    live, arch = tmp_path / "live", tmp_path / "arch"
    live.mkdir()
    shutil.copy(UNSEALED_BLOG, live / "b.blog")  # written unsealed, finished
    ingest([live], arch)
    log.seal(live / "b.blog")
    rep = ingest([live], arch)  # before: named, "the archive keeps its copy", unsealed kept
    assert [(c.match_id, c.stored_integrity, c.replaced) for c in rep.stronger_copies] == [
        (UNSEALED_MATCH, "unsealed", rep.batches[0])]
    assert _rows(arch) == [("b.blog", UNSEALED_MATCH, "sealed", 245)]


@pytest.mark.slow  # the old behaviour: test_fault_probes_archive42c.py holds it by default
def test_keep_stored_copies_leaves_the_live_copy_and_names_the_sealed_one(
        tmp_path: Path) -> None:
    live, arch = tmp_path / "live", tmp_path / "arch"
    live.mkdir()
    _unsealed(live / "j.jsonl")
    ingest([live], arch)
    shutil.copy(V2, live / "j.jsonl")
    rep = ingest([live], arch, replace_stored=False)
    assert [(c.match_id, c.replaced) for c in rep.stronger_copies] == [(JSONL_MATCH, None)]
    assert _rows(arch) == [("j.jsonl", JSONL_MATCH, "unsealed", 716)]


@pytest.mark.slow  # two CLI runs
def test_cli_says_the_sealed_copy_is_stored_in_place(tmp_path: Path) -> None:
    live, arch = tmp_path / "live", tmp_path / "arch"
    live.mkdir()
    _unsealed(live / "m.jsonl")
    assert cli("ingest", live, "--archive", arch).returncode == 0
    shutil.copy(V2, live / "m.jsonl")
    done = cli("ingest", live, "--archive", arch)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert "1 duplicate," in out[0]
    batch = query(arch, "SELECT batch FROM matches").to_pylist()[0]["batch"]
    assert out[1:] == [f"{live / 'm.jsonl'}: a sealed copy of stored match {JSONL_MATCH}, "
                       f"stored unsealed; stored in its place (batch {batch})"]
    assert cli("verify", arch).returncode == 0


def test_a_rotted_byte_query_reads_through_is_named_by_verify_with_part_and_rule(
        tmp_path: Path) -> None:
    """docs/archive.md, "What `query` trusts": a byte flipped with no newer modification
    time is not read back by `query`; `verify` names the part, its batch and the rule."""
    import os

    from buraco_log.archive.fixity import verify_archive

    arch = tmp_path / "arch"
    rep = ingest([OTHER], arch)
    part = next((arch / "matches").rglob("*.parquet"))
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0x01
    kept = part.stat().st_mtime_ns
    part.write_bytes(bytes(data))
    os.utime(part, ns=(kept, kept))  # as a bit rotted on the medium
    found = verify_archive(str(arch))
    assert [(p.path, p.batch, p.rule) for p in found.problems] == [
        (str(part.relative_to(arch)), rep.batches[0], "archive.part_changed")]


@pytest.mark.slow
def test_a_damaged_batch_keeps_its_copy_and_the_ingest_goes_on(tmp_path: Path) -> None:
    """The batch to rewrite holds a rotted part: it is left as it is (`verify` names it), the
    sealed copy is named as one the archive keeps, and the run's own work is committed."""
    import os

    live, arch = tmp_path / "live", tmp_path / "arch"
    live.mkdir()
    _unsealed(live / "j.jsonl")
    ingest([live], arch)
    part = next((arch / "events").rglob("*.parquet"))
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0x01
    kept = part.stat().st_mtime_ns
    part.write_bytes(bytes(data))
    os.utime(part, ns=(kept, kept))
    shutil.copy(V2, live / "j.jsonl")
    shutil.copy(OTHER, live / "other.blog")
    rep = ingest([live], arch)
    assert (rep.added, [(c.match_id, c.replaced) for c in rep.stronger_copies]) == (
        1, [(JSONL_MATCH, None)])
    assert query(arch, "SELECT integrity FROM matches ORDER BY integrity").to_pylist() == [
        {"integrity": "sealed"}, {"integrity": "unsealed"}]
