"""Fault probes, round 43, of the archive: a run's own staging directory is removed without
recursion (a tree deeper than Python's recursion limit planted there during the run was
'RecursionError' after the commit); the summary's cap of stronger copies named one a line."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buraco_log.archive import ingest, spark, store
from buraco_log.archive.store import CommitError
from tests.cli.probes import ROOT, cli

SIM = ROOT / "examples" / "sim"
LOGS = sorted(SIM.glob("thirteen-quick-2p-*.blog"))[:2]
DEPTH = 1100  # past the recursion limit (1,000); 2,200 bytes of path, within PATH_MAX


def _plant(base: str) -> None:
    where = base
    os.makedirs(where, exist_ok=True)
    for _ in range(DEPTH):
        where = os.path.join(where, "d")
        os.mkdir(where)
    Path(where, "x").write_bytes(b"x")


def _planting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """Wrap ``store.NAME`` (called during a commit, the stage still there) so that it plants
    a deep tree in every stage of the archive's .staging first; returns the stages planted."""
    planted: list[str] = []
    real: Callable[..., Any] = getattr(store, name)

    def plant_then(root: str, *args: Any, **kwargs: Any) -> Any:
        staging = os.path.join(root, store.STAGING)
        for run in os.listdir(staging) if os.path.isdir(staging) else ():
            _plant(os.path.join(staging, run, "deep"))
            planted.append(os.path.join(staging, run))
        return real(root, *args, **kwargs)

    monkeypatch.setattr(store, name, plant_then)
    return planted


def test_a_committed_ingest_removes_a_deep_tree_planted_in_its_stage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: RecursionError out of ingest, after its batch was committed."""
    planted = _planting(monkeypatch, "end_intent")
    report = ingest([str(LOGS[0])], tmp_path / "arch")
    assert report.added == 1 and planted
    assert not any(os.path.exists(p) for p in planted)


def test_a_failed_commit_removes_a_deep_tree_planted_in_its_stage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit fails (a full disk) with a deep tree in its stage: one CommitError, the
    stage gone (it holds the space a rerun needs). Before: RecursionError."""
    planted = _planting(monkeypatch, "note_intent")

    def full(path: str, data: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store, "_atomic_json", full)
    with pytest.raises(CommitError, match="No space left on device"):
        ingest([str(LOGS[0])], tmp_path / "arch")
    assert planted and not any(os.path.exists(p) for p in planted)


def test_spark_clean_up_removes_a_deep_tree_in_its_stage(tmp_path: Path) -> None:
    """The Spark engine's clean-up after a run (no JVM needed: each of its Spark steps is
    skipped when it fails). Before: RecursionError."""
    stage = tmp_path / store.STAGING / "run1"
    _plant(str(stage / "deep"))
    spark._clean_up(None, None, str(tmp_path), "run1", False)  # type: ignore[arg-type]
    assert not stage.exists()


def test_discard_tree_follows_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    stage = tmp_path / "stage"
    _plant(str(stage))
    os.symlink(outside, stage / "link")
    os.symlink(outside, tmp_path / "as-link")
    store.discard_tree(str(stage))
    store.discard_tree(str(tmp_path / "as-link"))
    assert not stage.exists() and (outside / "keep").read_text() == "kept"


# -- the summary names 20 stronger copies, then says how many more ---------------------------

V2 = ROOT / "examples" / "format" / "v2.jsonl"
MATCH = "sim-classic-2p-1c3486710156-000000"
COPIES = 23


def test_the_summary_names_twenty_stronger_copies_and_counts_the_rest(tmp_path: Path) -> None:
    """The live (unsealed) copy stored, then 23 sealed copies (copies of the same bytes are
    named once): 20 lines name a copy each, one says '... and 3 more'; --format json lists
    all 23."""
    live, sealed = tmp_path / "live", tmp_path / "sealed"
    live.mkdir()
    sealed.mkdir()
    lines = V2.read_text().splitlines(keepends=True)
    assert lines[-1].startswith('{"log": "end"')
    (live / "m.jsonl").write_text("".join(lines[:-1]))
    signatures = [i for i, x in enumerate(lines) if x.startswith('{"log": "signature"')]
    for k in range(COPIES):  # each without one signature record: 23 distinct files
        kept = [x for i, x in enumerate(lines) if i != signatures[k]]
        (sealed / f"m{k:02d}.jsonl").write_text("".join(kept))
    arch = tmp_path / "arch"
    assert cli("ingest", live, "--archive", arch).returncode == 0
    done = cli("ingest", sealed, "--archive", arch)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert f"{COPIES} duplicates" in out[0], out[0]
    named = [x for x in out[1:] if f"a sealed copy of stored match {MATCH}" in x]
    assert [x.split(":")[0] for x in named] == [str(sealed / f"m{i:02d}.jsonl")
                                                for i in range(20)]
    more = f"... and {COPIES - 20} more stronger copies (--format json lists them all)"
    assert out[1:] == [*named, more]
    js = cli("ingest", sealed, "--archive", arch, "--format", "json")
    assert js.returncode == 0, js.stderr
    listed = json.loads(js.stdout)["stronger_copies"]
    assert [c["path"] for c in listed] == [str(sealed / f"m{i:02d}.jsonl")
                                           for i in range(COPIES)]
