"""A format-2 log, an unsealed copy of it, one with fewer events, and what an archive stored of
each."""

from __future__ import annotations

from pathlib import Path

from buraco_log.archive import query
from tests.cli.probes import ROOT

V2 = ROOT / "examples" / "format" / "v2.jsonl"


def _lines() -> list[str]:
    return V2.read_text().splitlines(keepends=True)


def _unsealed(path: Path) -> Path:
    """The match without its end line: a live log, copied before the recorder closed it."""
    lines = _lines()
    assert lines[-1].startswith('{"log": "end"')
    path.write_text("".join(lines[:-1]))
    return path


def _fewer(path: Path) -> Path:
    """The sealed match without its last signature record (40 of 41)."""
    lines = _lines()
    assert lines[-2].startswith('{"log": "signature"')
    path.write_text("".join(lines[:-2] + lines[-1:]))
    return path


def _stored(arch: Path) -> list[tuple[str, str, bool]]:
    rows = query(arch, "SELECT source_path, integrity, signed FROM matches").to_pylist()
    return [(Path(r["source_path"]).name, r["integrity"], r["signed"]) for r in rows]
