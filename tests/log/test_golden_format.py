"""The golden logs of examples/format/ are frozen: every later buraco_log must read and replay
them as they are, through the upcasters when the format version has moved on."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest

from buraco_log import jsonl, log
from buraco_log.errors import LogFormatError
from buraco_log.reducer import Replayer

FORMAT = Path(__file__).resolve().parents[2] / "examples" / "format"
EXPECTED = {
    name: want
    for path in sorted(FORMAT.glob("v*.expected.json"))
    for name, want in json.loads(path.read_text(encoding="utf-8")).items()
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_golden_log_of_an_earlier_format_still_reads_and_replays(name: str) -> None:
    want = EXPECTED[name]
    assert log.verify(FORMAT / name).signatures == want.get("signatures", 0)
    path = FORMAT / name
    info = log.verify(path)
    assert (info.events, info.segments, info.sealed, info.version, info.head) == (
        want["events"],
        want["segments"],
        want["sealed"],
        want["version"],
        want["head"],
    )
    events = log.read_events(path)
    r = Replayer()
    for event in events:
        r.step(event)
    state = r.state()
    assert state.phase == want["phase"] and list(state.totals) == want["totals"]
    assert jsonl.read_jsonl(path.with_suffix(".jsonl")) == events


def test_golden_logs_are_never_rewritten(tmp_path: Path) -> None:
    from tests.log import make_format_golden

    with pytest.raises(SystemExit, match="never rewritten"):
        make_format_golden.main()


def test_a_newer_format_reads_the_v1_golden_log_through_its_upcaster(monkeypatch: Any) -> None:
    """Version 2 added MatchStarted.key_id: v1 records are upcast before decoding."""
    from buraco_log import events as ev

    seen: list[int] = []
    real = ev.upcast

    def upcast(record: Any, version: int) -> Any:
        seen.append(version)
        return real(record, version)

    assert ev.FORMAT_VERSION >= 2
    monkeypatch.setattr(ev, "upcast", upcast)
    path = FORMAT / "v1.blog"
    events = log.read_events(path)
    assert len(events) == EXPECTED["v1.blog"]["events"] and set(seen) == {1}
    assert log.verify(path).head == EXPECTED["v1.blog"]["head"]
    with pytest.raises(LogFormatError) as exc:
        log.Writer(path, validate=False)
    assert exc.value.kind == "version"


def test_a_log_from_a_newer_buraco_log_is_refused_by_version(tmp_path: Path) -> None:
    from buraco_log import events as ev

    data = bytearray((FORMAT / "v1.blog").read_bytes())
    head = bytes(data[:16])
    head = head[:10] + (ev.FORMAT_VERSION + 1).to_bytes(2, "little") + head[12:16]
    data[:20] = head + zlib.crc32(head).to_bytes(4, "little")
    path = tmp_path / "future.blog"
    path.write_bytes(bytes(data))
    with pytest.raises(LogFormatError) as exc:
        log.verify(path)
    assert exc.value.kind == "version" and "not known" in str(exc.value)


@pytest.mark.parametrize("name", ["v1.blog", "v1-unsealed.blog"])
def test_a_v1_log_converts_to_its_own_v1_json_lines_and_keeps_its_head(
        name: str, tmp_path: Path) -> None:
    """Binary -> JSON Lines keeps the log's version, so the head digest (and an archive's
    de-duplication by it) is the same; JSON Lines -> binary writes the current version."""
    src = FORMAT / name
    out = tmp_path / "copy.jsonl"
    info = jsonl.convert(src, out, "jsonl")
    assert info.head == EXPECTED[name]["head"]
    assert out.read_bytes() == src.with_suffix(".jsonl").read_bytes()
    back = jsonl.convert(out, tmp_path / "back.blog", "binary")
    assert back.version == 2 and back.head != info.head
    assert log.read_events(tmp_path / "back.blog") == log.read_events(src)
