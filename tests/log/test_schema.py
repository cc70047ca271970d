"""The committed schema/ equals the generated one."""

from __future__ import annotations

from pathlib import Path

from buraco_log import schemafile

SCHEMA = Path(__file__).resolve().parents[2] / "schema"


def test_the_committed_event_schema_is_up_to_date() -> None:
    stale = schemafile.stale(SCHEMA)
    assert not stale, (
        f"schema/ is out of date ({', '.join(stale)}): run `{schemafile.COMMAND}` and commit"
    )


def test_writing_the_schema_twice_changes_nothing(tmp_path: Path) -> None:
    assert schemafile.write(tmp_path) == ["events.schema.json"]
    assert schemafile.write(tmp_path) == []
