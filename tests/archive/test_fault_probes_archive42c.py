"""Fault probes, round 42c, of the archive: a copy of a match that holds more than the copy
the archive keeps (its seal, more signature records) vanished as "1 duplicate". Ingested
live (unsealed), then sealed, the archive kept 'unsealed' for ever and nobody was told; in
one run the first copy by path was kept, however weak. Now one run keeps the stronger copy,
and a later run names the stronger copy it leaves out (text and JSON), exit status unchanged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from buraco_log.archive import StrongerCopy, ingest, query, store
from tests.archive.unsealed_v2 import V2, _fewer, _lines, _stored, _unsealed
from tests.cli.probes import cli

MATCH = "sim-classic-2p-1c3486710156-000000"


def _unsigned(path: Path) -> Path:
    """The sealed match without any signature record."""
    path.write_text("".join(x for x in _lines() if not x.startswith('{"log": "signature"')))
    return path


def test_one_run_keeps_the_sealed_copy_met_after_the_unsealed(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    _unsealed(src / "a.jsonl")
    shutil.copy(V2, src / "b.jsonl")
    rep = ingest([src], tmp_path / "arch")
    assert _stored(tmp_path / "arch") == [("b.jsonl", "sealed", True)]
    assert (rep.added, rep.duplicates, rep.errors, rep.stronger_copies) == (1, 1, [], [])
    # the swap leaves one copy's rows: no event twice
    assert query(tmp_path / "arch", "SELECT count(*) AS n FROM events").to_pylist() == \
        [{"n": 716}]


@pytest.mark.parametrize("chunk", [1, 128])  # in another chunk, in the same one
def test_one_run_keeps_the_copy_with_most_signature_records(tmp_path: Path,
                                                            chunk: int) -> None:
    src = tmp_path / "src"
    src.mkdir()
    _fewer(src / "a.jsonl")
    _unsigned(src / "b.jsonl")
    shutil.copy(V2, src / "c.jsonl")
    _unsealed(src / "d.jsonl")
    rep = ingest([src], tmp_path / "arch", chunk_size=chunk)
    assert _stored(tmp_path / "arch") == [("c.jsonl", "sealed", True)]
    assert (rep.added, rep.duplicates, rep.stronger_copies) == (1, 3, [])
    assert query(tmp_path / "arch", "SELECT count(*) AS n FROM events").to_pylist() == \
        [{"n": 716}]


def test_a_weaker_copy_after_the_sealed_one_is_a_plain_duplicate(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(V2, src / "a.jsonl")
    _unsealed(src / "b.jsonl")
    rep = ingest([src], tmp_path / "arch")
    assert (rep.added, rep.duplicates, rep.stronger_copies) == (1, 1, [])
    assert _stored(tmp_path / "arch") == [("a.jsonl", "sealed", True)]
    again = tmp_path / "again"
    again.mkdir()
    _unsealed(again / "c.jsonl")
    _fewer(again / "d.jsonl")  # signed, as the stored one: nothing more to tell
    later = ingest([again], tmp_path / "arch")
    assert (later.duplicates, later.stronger_copies) == (2, [])


def test_a_copy_committed_earlier_in_the_run_is_named_not_replaced(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    _unsealed(src / "a.jsonl")
    shutil.copy(V2, src / "b.jsonl")
    rep = ingest([src], tmp_path / "arch", chunk_size=1, commit_events=1,
                 replace_stored=False)  # as `ingest --keep-stored-copies`
    assert len(rep.batches) == 1 and rep.duplicates == 1
    assert _stored(tmp_path / "arch") == [("a.jsonl", "unsealed", True)]
    assert rep.stronger_copies == [StrongerCopy(
        str(src / "b.jsonl"), MATCH, ["sealed"], "sealed", 41, "unsealed", True, 41)]


def test_a_signed_copy_of_an_unsigned_stored_match_is_named(tmp_path: Path) -> None:
    first, later = tmp_path / "first", tmp_path / "later"
    first.mkdir()
    later.mkdir()
    _unsigned(first / "m.jsonl")
    ingest([first], tmp_path / "arch")
    shutil.copy(V2, later / "m.jsonl")
    rep = ingest([later], tmp_path / "arch", replace_stored=False)
    assert (rep.added, rep.duplicates) == (0, 1)
    assert rep.stronger_copies == [StrongerCopy(
        str(later / "m.jsonl"), MATCH, ["signatures"], "sealed", 41, "sealed", False, None)]
    assert _stored(tmp_path / "arch") == [("m.jsonl", "sealed", False)]  # not rewritten


def test_cli_names_the_sealed_copy_of_a_stored_unsealed_match(tmp_path: Path) -> None:
    """The lead's reproduction: live logs ingested, then the sealed ones."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _unsealed(a / "m.jsonl")
    shutil.copy(V2, b / "m.jsonl")
    arch = tmp_path / "arch"
    assert cli("ingest", a, "--archive", arch).returncode == 0
    done = cli("ingest", b, "--archive", arch, "--keep-stored-copies")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "0 matches added" in lines[0] and "1 duplicate," in lines[0]
    assert lines[1:] == [f"{b / 'm.jsonl'}: a sealed copy of stored match {MATCH}, stored "
                         "unsealed; the archive keeps its copy: docs/archive.md says how to "
                         "replace it"]
    js = cli("ingest", b, "--archive", arch, "--format", "json", "--keep-stored-copies")
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout)["stronger_copies"] == [{
        "path": str(b / "m.jsonl"), "match_id": MATCH, "stronger": ["sealed"],
        "integrity": "sealed", "signatures": 41, "stored_integrity": "unsealed",
        "stored_signed": True, "stored_signatures": None, "replaced": None}]


def test_the_documented_replacement_stores_the_sealed_copy(tmp_path: Path) -> None:
    """docs/archive.md: drop the batch that holds the weaker copy, ingest again (with
    ``--keep-stored-copies``, ingest leaves the weaker copy in place)."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _unsealed(a / "m.jsonl")
    shutil.copy(V2, b / "m.jsonl")
    arch = tmp_path / "arch"
    first = ingest([a], arch)
    assert ingest([b], arch, replace_stored=False).stronger_copies
    held = query(arch, f"SELECT DISTINCT batch FROM matches WHERE match_id = '{MATCH}'")
    assert held.column("batch").to_pylist() == first.batches
    store.drop_batches(str(arch), first.batches)
    rep = ingest([b, a], arch)
    assert (rep.added, rep.duplicates, rep.stronger_copies) == (1, 1, [])
    assert _stored(arch) == [("m.jsonl", "sealed", True)]
    assert Path(query(arch, "SELECT source_path FROM matches").to_pylist()[0]
                ["source_path"]).parent == b
