"""Issue 13 item 10 (archive side): an archive that commits its deals makes requiring a
commitment its own default, and a query finds the stored matches that carry none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log.archive import ingest, query, store
from buraco_log.errors import ArchiveError
from buraco_log.events import AnyEvent, MatchEnded, MatchStarted
from tests import brokenlogs as bl

ROOT = Path(__file__).resolve().parents[2]


def stripped(events: list[AnyEvent]) -> list[AnyEvent]:
    """A committed match with its commitment and its reveal removed (it audits clean)."""
    out: list[AnyEvent] = []
    for e in events:
        if isinstance(e, MatchStarted):
            e = msgspec.structs.replace(e, commitment=None)
        elif isinstance(e, MatchEnded):
            e = msgspec.structs.replace(e, server_seed=None)
        out.append(e)
    return out


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("committed")
    paths = {}
    for name, seed, strip in (("fair", 11, False), ("stripped", 12, True),
                              ("stripped-later", 13, True), ("stripped-off", 15, True)):
        events = bl.fair_match("thirteen-quick", 2, seed)
        paths[name] = bl.write(d / f"{name}.blog", stripped(events) if strip else events)
    cut = bl.fair_match("thirteen-quick", 2, 14)
    paths["cut"] = bl.write(d / "cut.blog", cut[:-1])  # MatchEnded, with the reveal, cut off
    return paths


def ingest_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "ingest", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def test_by_default_a_stripped_match_is_stored_and_a_query_finds_it(
        logs: dict[str, Path], tmp_path: Path) -> None:
    arch = tmp_path / "a"
    report = ingest([str(logs["fair"]), str(logs["stripped"])], arch)
    assert (report.added, report.errors, report.require_commitment) == (2, [], False)
    found = query(arch, "SELECT source_path, provenance FROM matches "
                        "WHERE provenance <> 'committed'").to_pylist()
    assert found == [{"source_path": str(logs["stripped"]), "provenance": "none"}]


def test_an_archive_that_requires_commitment_refuses_a_stripped_match_from_then_on(
        logs: dict[str, Path], tmp_path: Path) -> None:
    arch = tmp_path / "a"
    r = ingest_cli(str(logs["fair"]), str(logs["stripped"]), "--archive", str(arch),
                   "--require-commitment")
    assert r.returncode == 1, r.stderr
    assert "deals must be committed" in r.stdout
    assert f"refused: {logs['stripped']}: seq 1 [deal.commitment_missing]" in r.stdout
    marker = json.loads((arch / "archive.json").read_text())
    assert marker["settings"] == {"require_commitment": True}
    # A later ingest without the option keeps the archive's setting.
    r = ingest_cli(str(logs["stripped-later"]), "--archive", str(arch), "--format", "json")
    assert r.returncode == 1
    later = json.loads(r.stdout)
    assert later["require_commitment"] is True and later["added"] == 0
    assert [e["rule"] for e in later["errors"]] == ["deal.commitment_missing"]
    rows = query(arch, "SELECT source_path, code, rule FROM errors ORDER BY source_path"
                 ).to_pylist()
    assert rows == [
        {"source_path": str(logs["stripped-later"]), "code": "provenance",
         "rule": "deal.commitment_missing"},
        {"source_path": str(logs["stripped"]), "code": "provenance",
         "rule": "deal.commitment_missing"},
    ]
    assert query(arch, "SELECT provenance FROM matches").to_pylist() == [
        {"provenance": "committed"}]
    r = ingest_cli(str(logs["fair"].parent / "no-such-dir"), "--archive", str(arch),
                   "--no-require-commitment")
    assert r.returncode == 2  # a mistyped path: a usage error, the setting untouched
    assert store.settings(str(arch)).require_commitment
    # Turned off, the next stripped match is stored again, and found by its provenance.
    r = ingest_cli(str(logs["stripped-off"]), "--archive", str(arch), "--no-require-commitment")
    assert r.returncode == 0, r.stdout
    assert not store.settings(str(arch)).require_commitment
    assert query(arch, "SELECT source_path FROM matches WHERE provenance <> 'committed'"
                 ).to_pylist() == [{"source_path": str(logs["stripped-off"])}]


def test_a_match_cut_before_its_reveal_is_never_stored(logs: dict[str, Path],
                                                       tmp_path: Path) -> None:
    for strict in (False, True):
        report = ingest([str(logs["cut"])], tmp_path / f"a{strict}", require_commitment=strict)
        assert report.added == 0 and len(report.errors) == 1


@pytest.mark.parametrize("settings", [
    {"require_commitment": "yes"}, {"require_commitment": 1}, {"no_such_setting": True}, [],
])
def test_bad_archive_settings_are_refused_naming_the_marker(tmp_path: Path,
                                                            settings: object) -> None:
    root = store.create_archive(str(tmp_path / "a"))
    marker = Path(root) / "archive.json"
    meta = json.loads(marker.read_text())
    marker.write_text(json.dumps({**meta, "settings": settings}))
    with pytest.raises(ArchiveError, match=r"archive\.json: bad archive settings"):
        store.settings(root)


def test_an_unknown_setting_cannot_be_set(tmp_path: Path) -> None:
    root = store.create_archive(str(tmp_path / "a"))
    with pytest.raises(ArchiveError, match="no archive setting 'strict'"):
        store.set_setting(root, "strict", True)
