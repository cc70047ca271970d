"""Fault probes, archive: an archive ten years old, and a path that is not an archive.

Found: `report DIR` and `query DIR` of a directory that is not an archive (a directory of
logs, the usual slip), `compact DIR` and `ingest --archive DIR` of a directory that holds
other files exited 1, as for a finding, where `report FILE` and `verify DIR` exited 2, the
status of a path that is not what the command reads. Every command now exits 2 there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from buraco_log.archive import store

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "format" / "v2.jsonl"


def _commands(target: Path) -> list[list[str]]:
    t = str(target)
    return [["report", t], ["query", t, "SELECT 1"], ["compact", t], ["compact", t, "--dry-run"],
            ["verify", t], ["ingest", str(EXAMPLE), "--archive", t]]


@pytest.mark.slow  # the command line in this process: 0.9 s to import, 0.2 s a command
@pytest.mark.parametrize("what", ["directory of logs", "file", "missing"])
def test_every_command_exits_2_on_a_path_that_is_not_an_archive(tmp_path: Path,
                                                                what: str) -> None:
    from typer.testing import CliRunner

    from cli.main import app

    runner = CliRunner()
    target = tmp_path / "logs"
    if what == "directory of logs":
        target.mkdir()
        shutil.copy(EXAMPLE, target / "m.jsonl")
    elif what == "file":
        shutil.copy(EXAMPLE, target)
    for argv in _commands(target):
        if what == "missing" and argv[0] == "ingest":
            continue  # a missing directory is made into an archive
        r = runner.invoke(app, argv)
        assert r.exit_code == 2, (argv, r.exit_code, r.stderr)
        assert r.stdout == "" and r.stderr.count("\n") == 1, (argv, r.stdout, r.stderr)
        assert r.stderr.startswith(f"buraco-log: error: {target}"), (argv, r.stderr)
    if what == "directory of logs":
        assert sorted(p.name for p in target.iterdir()) == ["m.jsonl"]  # nothing written


def test_the_library_says_not_an_archive_by_its_own_class(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    for call in (store.check_archive, store.create_archive):
        with pytest.raises(store.NotAnArchive) as caught:
            call(str(tmp_path))
        assert caught.value.exit_status == 2
    made = store.create_archive(str(tmp_path / "new"))  # an archive: no refusal
    assert store.check_archive(made) == made
