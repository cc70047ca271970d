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


# -- every frozen log, both forms, both ways ----------------------------------------------------

DATA = Path(__file__).resolve().parent / "data"
CARRIED = {"bytes": 3708, "events": 246, "sealed": True, "version": 2, "signatures": 0,
           "head": "506abac53796424dd0ccb35d0a38c0b8e59f2e4941c06b784d3ab93fa1d31693"}
"""``tests/log/data/v2-carried.blog``: a match of format v2 carried on from totals (120, 45)
(``TotalsCarried``, tag ``tc``, which the frozen logs of examples/format/ do not hold), frozen
with its JSON Lines form; never rewritten."""
FROZEN = {**{FORMAT / name: want for name, want in EXPECTED.items()},
          DATA / "v2-carried.blog": CARRIED}


@pytest.mark.parametrize("path", sorted(FROZEN), ids=lambda p: p.name)
def test_every_frozen_log_reads_verifies_and_converts_both_ways_to_its_frozen_bytes(
        path: Path, tmp_path: Path) -> None:
    """Binary and JSON Lines of every format version ever written: each form reads to the same
    events under the same head, binary -> JSON Lines gives the frozen JSON Lines byte for byte,
    and JSON Lines -> binary -> JSON Lines settles on one text (a v1 log is written back as v2:
    the same events under the new version's head, after which nothing moves)."""
    want = FROZEN[path]
    assert path.stat().st_size == want["bytes"]  # frozen, not remade by today's writer
    frozen_jsonl = path.with_suffix(".jsonl")
    info = log.verify(path)
    assert (info.version, info.sealed, info.events, info.head, info.signatures) == (
        want["version"], want["sealed"], want["events"], want["head"], want.get("signatures", 0))
    events = log.read_events(path)
    reader = jsonl.JsonlReader(frozen_jsonl, refuse_repeats=True)
    assert list(reader) == events
    assert (reader.version, reader.head, len(reader.signatures)) == (
        want["version"], want["head"], want.get("signatures", 0))

    out = jsonl.convert(path, tmp_path / "a.jsonl", "jsonl")
    assert out.head == want["head"]
    assert (tmp_path / "a.jsonl").read_bytes() == frozen_jsonl.read_bytes()

    back = jsonl.convert(frozen_jsonl, tmp_path / "b.blog", "binary")
    assert log.read_events(tmp_path / "b.blog") == events
    assert back.version == 2 and back.signatures == want.get("signatures", 0)
    assert (back.head == want["head"]) is (want["version"] == 2)
    again = jsonl.convert(tmp_path / "b.blog", tmp_path / "c.jsonl", "jsonl")
    if want["version"] == 2:
        assert (tmp_path / "c.jsonl").read_bytes() == frozen_jsonl.read_bytes()
    last = jsonl.convert(tmp_path / "c.jsonl", tmp_path / "d.blog", "binary")
    jsonl.convert(tmp_path / "d.blog", tmp_path / "e.jsonl", "jsonl")
    assert last.head == again.head == back.head
    assert (tmp_path / "e.jsonl").read_bytes() == (tmp_path / "c.jsonl").read_bytes()
    assert (tmp_path / "d.blog").read_bytes() == (tmp_path / "b.blog").read_bytes()


def test_the_frozen_carried_match_replays_from_its_carried_totals() -> None:
    path = DATA / "v2-carried.blog"
    events = log.read_events(path)
    assert [type(e).__name__ for e in events[:3]] == ["MatchStarted", "TotalsCarried",
                                                      "HandStarted"]
    r = Replayer()
    for event in events:
        r.step(event)
    state = r.state()
    # one hand of thirteen-quick from (120, 45): the totals the match end records
    assert (state.phase, list(state.totals), state.winner) == ("over", [440, 1670], 1)
    assert jsonl.read_jsonl(path.with_suffix(".jsonl")) == events
