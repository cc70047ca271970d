"""An event whose fields hold the wrong types (a seat that is a string, a note that is an int):
msgspec encodes whatever a field holds, so the writer wrote it, acknowledged it, and every
reader then stopped at that record (the rest of the log unreadable). Every writer mode refuses
it as kind ``validate`` naming the field, and keeps the events before it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import log
from buraco_log.audit import read_log
from buraco_log.errors import LogFormatError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim" / "classic-2p-000000.blog"
MODES: list[dict[str, Any]] = [{}, {"validate": False},
                               {"validate": False, "batched": True}, {"batched": True}]
BAD = [("note", 5), ("seat", "x"), ("seat", None), ("cards", "8d")]


@pytest.mark.parametrize("mode", MODES, ids=["validated", "plain", "batched", "validated-batched"])
@pytest.mark.parametrize(("field", "value"), BAD, ids=[f for f, _ in BAD])
def test_an_event_a_reader_could_not_decode_is_refused(tmp_path: Path, mode: dict[str, Any],
                                                       field: str, value: object) -> None:
    events = log.read_events(EXAMPLE)
    assert type(events[3]).__name__ == "MeldLaid"
    bad = msgspec.structs.replace(events[3], **{field: value})
    path = tmp_path / "m.blog"
    with pytest.raises(LogFormatError, match=rf"cannot be recorded: .*field {field!r}") as err, \
            log.Writer(path, **mode) as w:
        for e in events[:3]:
            w.append(e)
        w.append(bad)
        w.flush()
    assert err.value.kind == "validate" and err.value.seq == 3
    got, integrity = read_log(path)
    assert got == events[:3] and integrity.status == "sealed", integrity


def test_append_many_refuses_it_too_and_keeps_what_came_before(tmp_path: Path) -> None:
    events = log.read_events(EXAMPLE)
    bad = msgspec.structs.replace(events[5], seq=events[5].seq, at="noon")
    path = tmp_path / "m.blog"
    with pytest.raises(LogFormatError, match="field 'at'"), \
            log.Writer(path, validate=False, batched=True) as w:
        w.append_many([*events[:5], bad, *events[6:9]])
        w.flush()
    assert log.read_events(path) == events[:5]


# -- events too large for one record: a reader refuses a segment over log.MAX_PAYLOAD ----------


@pytest.mark.parametrize("mode", MODES, ids=["validated", "plain", "batched", "validated-batched"])
def test_an_event_larger_than_a_record_is_refused_and_the_log_stays_readable(
        tmp_path: Path, mode: dict[str, Any]) -> None:
    """It was written; batched, with the events before it in one segment: the whole log then
    read as 0 events ('segment of 17825810 bytes exceeds the limit')."""
    events = log.read_events(EXAMPLE)
    big = msgspec.structs.replace(events[3], note="x" * (log.MAX_PAYLOAD + 1))
    path = tmp_path / "m.blog"
    with pytest.raises(LogFormatError, match="a log's record holds at most") as err, \
            log.Writer(path, **mode) as w:
        for e in events[:3]:
            w.append(e)
        w.append(big)
        w.flush()
    assert err.value.kind == "range" and err.value.seq == 3
    got, integrity = read_log(path)
    assert got == events[:3] and integrity.status == "sealed", integrity


@pytest.mark.parametrize("mode", MODES, ids=["validated", "plain", "batched", "validated-batched"])
def test_a_batch_larger_than_a_record_is_split_into_records_a_reader_takes(
        tmp_path: Path, mode: dict[str, Any]) -> None:
    events = log.read_events(EXAMPLE)
    large = [msgspec.structs.replace(e, note="y" * (3 << 20)) for e in events[3:12]]
    path = tmp_path / "m.blog"
    with log.Writer(path, **mode) as w:
        for e in [*events[:3], *large]:
            w.append(e)
    got, integrity = read_log(path)
    assert got == [*events[:3], *large] and integrity.status == "sealed", integrity


def test_an_event_the_json_form_cannot_hold_is_refused_by_convert(tmp_path: Path) -> None:
    """A JSON line is at most 1 MiB (LOG_FORMAT.md): converting a log holding a larger event
    wrote a file that every reader refused at that line. It is refused, naming the event, and
    no file is left; an event just under the bound converts and reads back."""
    from buraco_log import jsonl

    events = log.read_events(EXAMPLE)
    for size, fits in ((jsonl.MAX_LINE + 10, False), (jsonl.MAX_LINE - 400, True)):
        noted = [*events[:3], msgspec.structs.replace(events[3], note="z" * size), *events[4:]]
        src, dst = tmp_path / f"{size}.blog", tmp_path / f"{size}.jsonl"
        log.write_log(src, noted)
        if fits:
            jsonl.convert(src, dst, "jsonl")
            assert jsonl.read_jsonl(dst) == noted
            continue
        with pytest.raises(LogFormatError, match="as a JSON line") as err:
            jsonl.convert(src, dst, "jsonl")
        assert (err.value.path, err.value.seq, err.value.kind) == (str(src), 3, "limit")
        assert not dst.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == [src.name]
