"""JSON Lines interchange: lossless both ways, cards as text, integrity lines optional."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buraco_log import events as ev
from buraco_log import jsonl, log
from buraco_log.errors import LogFormatError
from tests.log.samples import match_events, sample_events, write


@pytest.mark.parametrize("sealed", [True, False])
def test_binary_to_jsonl_to_binary_keeps_the_events_and_the_head_digest(
    tmp_path: Path, sealed: bool
) -> None:
    events = sample_events(60)
    src = write(tmp_path / "a.blog", events, sealed=sealed)
    jsonl.convert(src, tmp_path / "a.jsonl", "jsonl")
    info = jsonl.convert(tmp_path / "a.jsonl", tmp_path / "b.blog", "binary")
    assert log.read_events(tmp_path / "b.blog") == events
    assert info.head == log.verify(src).head and info.sealed == sealed


def test_a_real_match_converts_byte_for_byte(tmp_path: Path) -> None:
    match = list(match_events())
    log.write_log(tmp_path / "m.blog", match)
    jsonl.convert(tmp_path / "m.blog", tmp_path / "m.jsonl", "jsonl")
    jsonl.convert(tmp_path / "m.jsonl", tmp_path / "n.blog", "binary", validate=True)
    assert (tmp_path / "m.blog").read_bytes() == (tmp_path / "n.blog").read_bytes()


def test_cards_are_written_as_text(tmp_path: Path) -> None:
    events = sample_events(40)
    write(tmp_path / "a.blog", events)
    jsonl.convert(tmp_path / "a.blog", tmp_path / "a.jsonl", "jsonl")
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert lines[0] == {"log": "buraco-log", "version": ev.FORMAT_VERSION, "sealed": True}
    assert lines[-1]["log"] == "end" and lines[-1]["events"] == 40
    hands = next(x for x in lines if x.get("t") == "hs")["hands"]
    assert all(isinstance(c, str) for hand in hands for c in hand)
    texts = [c for x in lines if x.get("t") == "ml" for c in x["cards"]]
    assert texts and all(isinstance(c, str) for c in texts)


HAND_WRITTEN = """\
# a hand typed in by a club secretary: no header, no seqs, no integrity lines
{"t": "ms", "match_id": "club-7", "rules": {"name": "classic"}, "players": [{"name": "Ana"}, \
{"name": "Bia"}], "sides": [0, 1]}
{"t": "hs", "hand": 0, "dealer": 1, "hands": [["7h", "10h", "JK"], ["7♥", "Th", "2c"]]}

{"t": "dr", "seat": 0, "card": "Ks", "note": "quick"}
{"t": "dc", "seat": 0, "card": 13}
"""


def test_hand_written_json_lines_are_read(tmp_path: Path) -> None:
    src = tmp_path / "club.jsonl"
    src.write_text(HAND_WRITTEN, encoding="utf-8")
    events = jsonl.read_jsonl(src)
    assert [e.seq for e in events] == [0, 1, 2, 3]
    hs = events[1]
    assert isinstance(hs, ev.HandStarted)
    assert hs.hands == ((2 * 16 + 7, 2 * 16 + 10, 64), (2 * 16 + 7, 2 * 16 + 10, 2))
    info = jsonl.convert(src, tmp_path / "club.blog", "binary")
    assert info.events == 4 and info.sealed
    assert log.read_events(tmp_path / "club.blog") == events


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('{"t": "dr", "seat": 0, "card": "7x"}', "7x"),
        ('{"t": "zz", "seat": 0}', "unknown event type 'zz'"),
        ('{"t": "dr", "seat": 0, "card": "7h", "colour": "red"}', "colour"),
        ('{"t": "dr", "seat": 0, "card": "7h", "seq": 9}', "expected 1"),
        ('{"t": "dr", "seat": 0', "not a JSON line"),
        ("[1, 2]", "JSON object"),
        ('{"t": "dr", "seat": ' + "[" * 100_000 + "]" * 100_000 + ', "card": "7h"}', "JSON"),
        ('{"log": "end", "events": 1, "head": "00"}', "head digest"),
        ('{"log": "end", "events": 5}', "end line says 5"),
    ],
)
def test_bad_lines_are_named_by_line_number(tmp_path: Path, line: str, words: str) -> None:
    src = tmp_path / "bad.jsonl"
    first = '{"t": "ms", "match_id": "x", "rules": {"name": "classic"}, "players": [], "sides": []}'
    src.write_text(first + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(LogFormatError) as exc:
        jsonl.read_jsonl(src)
    assert exc.value.line == 2 and exc.value.path == str(src)
    assert words in str(exc.value)


def test_a_changed_event_does_not_match_the_end_lines_head(tmp_path: Path) -> None:
    write(tmp_path / "a.blog", sample_events(10))
    jsonl.convert(tmp_path / "a.blog", tmp_path / "a.jsonl", "jsonl")
    text = (tmp_path / "a.jsonl").read_text()
    lines = text.splitlines()
    obj = json.loads(lines[5])
    obj["seat"] = 1 - obj.get("seat", 0)
    lines[5] = json.dumps(obj)
    (tmp_path / "b.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(LogFormatError) as exc:
        jsonl.convert(tmp_path / "b.jsonl", tmp_path / "b.blog", "binary")
    assert exc.value.kind == "chain"
    assert not (tmp_path / "b.blog").exists()


def test_convert_never_overwrites(tmp_path: Path) -> None:
    write(tmp_path / "a.blog", sample_events(3))
    (tmp_path / "a.jsonl").write_text("keep me")
    with pytest.raises(LogFormatError) as exc:
        jsonl.convert(tmp_path / "a.blog", tmp_path / "a.jsonl", "jsonl")
    assert exc.value.kind == "exists"
    assert (tmp_path / "a.jsonl").read_text() == "keep me"
