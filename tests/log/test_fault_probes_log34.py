"""Fault probes of the log, round 34: a record of millions of tiny items whose first is no event.

The typed decode refuses such a record at its first item; explaining why (which event, which
field) used to decode the whole payload untyped first, a Python list per item: a 16 MiB record
of empty arrays took 12 seconds and 1.2 GB to be refused. The explanation now reads one item at
a time and stops at the first bad one, as does the forensic reader (``--ignore-integrity``).
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import forensic, jsonl, log
from buraco_log.errors import LogFormatError
from tests.log.samples import sample_events

ITEMS = 2_000_000  # two million empty arrays: a 2 MB record


def _hostile_log(path: Path, fill: bytes = b"\x90") -> None:
    """A valid header and one record of ``ITEMS`` copies of ``fill`` (checksums right)."""
    payload = b"\xdd" + ITEMS.to_bytes(4, "big") + fill * ITEMS
    path.write_bytes(log._file_header(ev.FORMAT_VERSION, False)
                     + log._segment(payload, ITEMS, log.FIRST_SEQ, None))


def _peak(call: object) -> tuple[int, float]:
    tracemalloc.start()
    began = time.monotonic()
    try:
        call()  # type: ignore[operator]
    finally:
        took = time.monotonic() - began
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak, took


@pytest.mark.parametrize("fill", [b"\x90", b"\x00"])
def test_a_record_of_millions_of_tiny_items_is_refused_at_the_first_without_decoding_all(
    tmp_path: Path, fill: bytes
) -> None:
    path = tmp_path / "m.blog"
    _hostile_log(path, fill)

    def read() -> None:
        with pytest.raises(LogFormatError) as caught:
            log.read_events(path)
        assert caught.value.kind == "unknown" and caught.value.seq == log.FIRST_SEQ
        assert caught.value.offset == log.HEADER_SIZE
        assert "record is not an event array" in caught.value.message

    peak, took = _peak(read)
    assert peak < 16 * 1024 * 1024, f"{peak:,} bytes to refuse a 2 MB record"
    assert took < 3.0


def test_reading_such_a_record_anyway_stops_at_its_first_item(tmp_path: Path) -> None:
    path = tmp_path / "m.blog"
    _hostile_log(path)
    salvage: list[forensic.Salvage] = []
    peak, took = _peak(lambda: salvage.append(forensic.read_anyway(path)))
    assert salvage[0].events == [] and salvage[0].offset == log.HEADER_SIZE
    assert peak < 16 * 1024 * 1024, f"{peak:,} bytes to salvage nothing from a 2 MB record"
    assert took < 3.0


def test_the_item_by_item_decode_reads_what_the_whole_decode_read() -> None:
    events = sample_events(40)
    payload = ev.encode_many(events)
    assert log.decode_records(payload, ev.FORMAT_VERSION) == events
    # version 1: the upcaster gives a start its key_id, every other event is the same
    v1 = log._array_header(len(events)) + b"".join(ev.encode_as(e, 1) for e in events)
    assert log.decode_records(v1, 1) == events
    assert log.decode_records(log._array_header(0), 1) == []


@pytest.mark.parametrize(("payload", "says"), [
    (ev.encode_many(sample_events(3)) + b"\x01", "1 bytes after the array of 3 events"),
    (b"\xdd\x00", "array header runs past the end"),
    (b"\x93" + ev.encode(sample_events(1)[0]), "runs past the end"),  # 3 announced, 1 there
    (b"\x91" + b"\x91" * 40 + b"\x01", "nesting deeper than 32"),
    (msgspec.msgpack.encode({"t": 1}), "not an array"),
    (b"\x01\x02", "trailing characters"),
])
def test_a_malformed_payload_is_still_one_decode_error(payload: bytes, says: str) -> None:
    with pytest.raises(LogFormatError) as caught:
        log.decode_records(payload, ev.FORMAT_VERSION, first_seq=7)
    assert caught.value.kind in ("decode", "unknown") and says in caught.value.message


# -- two logs joined into one file ----------------------------------------------------------------

GOLDEN = Path(__file__).resolve().parents[2] / "examples" / "format"


@pytest.mark.parametrize("name", ["v2.blog", "v2-unsealed.blog"])
def test_two_logs_joined_into_one_file_are_named_so_at_the_second_header(
    tmp_path: Path, name: str
) -> None:
    one = (GOLDEN / name).read_bytes()
    path = tmp_path / "joined.blog"
    path.write_bytes(one + one)
    with pytest.raises(LogFormatError) as caught:
        log.verify(path)
    assert caught.value.kind == "damage" and caught.value.offset == len(one)
    assert "second log's file header" in caught.value.message
    path.write_bytes(one)  # either log alone reads as before
    assert log.verify(path).valid_bytes == len(one)


def test_a_damaged_record_header_is_still_called_a_checksum_mismatch(tmp_path: Path) -> None:
    one = bytearray((GOLDEN / "v2-unsealed.blog").read_bytes())
    one[log.HEADER_SIZE + 1] ^= 0x01
    path = tmp_path / "m.blog"
    path.write_bytes(bytes(one))
    with pytest.raises(LogFormatError, match="segment header checksum mismatch"):
        log.verify(path)


# -- a hostile value is not echoed whole into the error line --------------------------------------

JSONL = GOLDEN / "v2-unsealed.jsonl"
DRAW = b'{"t":"dr","seat":1,"card":"Kh","seq":11}'  # line 13 of the golden JSON Lines


@pytest.mark.parametrize(("old", "new", "says"), [
    (b'"card":"Kh"', b'"card":"' + b"x" * 500_000 + b'"', "is not a card"),
    (b'"t":"dr"', b'"t":"' + b"z" * 500_000 + b'"', "unknown event type"),
    (b'"t":"dr"', b'"t":"dr","' + b"k" * 500_000 + b'":1', "unknown field"),
], ids=["card", "event-type", "key"])
def test_a_half_megabyte_value_in_a_json_line_gives_a_short_error(
    tmp_path: Path, old: bytes, new: bytes, says: str
) -> None:
    text = JSONL.read_bytes()
    assert text.count(DRAW) == 1
    path = tmp_path / "m.jsonl"
    path.write_bytes(text.replace(DRAW, DRAW.replace(old, new)))
    with pytest.raises(LogFormatError) as caught:
        list(jsonl.JsonlReader(path))
    assert caught.value.line == 13 and says in caught.value.message
    assert len(caught.value.message) <= log.MAX_MESSAGE + 40
    assert "characters ...]" in caught.value.message


def test_a_short_value_in_a_json_line_is_still_named_whole(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_bytes(JSONL.read_bytes().replace(DRAW, DRAW.replace(b'"Kh"', b'"Kx"')))
    with pytest.raises(LogFormatError) as caught:
        list(jsonl.JsonlReader(path))
    assert caught.value.message == "field 'card': 'Kx' is not a card: unknown suit or colour"


def test_a_half_megabyte_event_type_in_a_binary_record_gives_a_short_error(
    tmp_path: Path
) -> None:
    events = sample_events(2)
    for tag, whole in (("z" * 500_000, False), ("zz", True)):
        payload = (log._array_header(3) + ev.encode_many(events)[1:]
                   + msgspec.msgpack.encode([tag, 1, 2, 2]))
        path = tmp_path / "m.blog"
        path.write_bytes(log._file_header(ev.FORMAT_VERSION, False)
                         + log._segment(payload, 3, log.FIRST_SEQ, None))
        with pytest.raises(LogFormatError, match="unknown event type") as caught:
            log.verify(path)
        assert caught.value.seq == 2
        assert (repr(tag) in caught.value.message) is whole
        assert len(caught.value.message) <= log.MAX_MESSAGE
