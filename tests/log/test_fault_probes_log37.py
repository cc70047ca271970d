"""Fault probes of the log readers, round 37: reading a long JSON Lines log costs time in
proportion to its lines, not a type evaluation per line."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from buraco_log.errors import LogFormatError
from buraco_log.jsonl import JsonlReader

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "examples" / "golden" / "classic.jsonl"


def test_reading_json_lines_evaluates_each_event_class_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: every event line asked msgspec for its class's fields, which evaluates the
    class's annotations (~160 us a line): a 200 MiB log of six million short lines took many
    minutes to read before the first bad line was reported."""
    lines = GOLDEN.read_text().splitlines()[:4]
    hostile = tmp_path / "long.jsonl"
    hostile.write_text("\n".join(lines) + "\n" + '{"t":"dr","seat":0,"card":"4c"}\n' * 500
                       + '{"t": \n')
    calls = 0
    real = msgspec.structs.fields

    def counting(cls: object) -> object:
        nonlocal calls
        calls += 1
        return real(cls)  # type: ignore[arg-type]

    monkeypatch.setattr(msgspec.structs, "fields", counting)
    with pytest.raises(LogFormatError) as caught:
        for _ in JsonlReader(hostile):
            pass
    assert caught.value.line == 505
    assert calls <= 20
