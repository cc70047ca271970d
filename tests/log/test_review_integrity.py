"""Review: how damaged or edited logs are detected and reported.

Edits a cheating player or a broken disk could make, checked through ``log.verify`` and
``audit.audit_log`` (the integrity section: status, kind, record, byte offset, seq) and, for a
few, the installed ``buraco-log`` command (exit status, empty stdout on errors, one line on
stderr, no traceback). The expected outcomes are the ones promised by ``schema/LOG_FORMAT.md``
and the README sections "The match log" and "The dispute workflow".
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit, jsonl, log
from buraco_log import events as ev
from buraco_log.errors import LogFormatError
from tests import brokenlogs as bl
from tests.log.samples import put, sample_events, segment_offsets, write

HEADER = 20


@pytest.fixture(scope="module")
def match() -> list[ev.AnyEvent]:
    """A complete, fairly dealt match (311 events): its audit is clean."""
    return bl.fair_match("thirteen-quick", 2, 1)


def _hsize(sealed: bool) -> int:
    return 16 + (32 if sealed else 0) + 8


def _split(path: Path) -> tuple[bytes, list[bytes], list[tuple[int, int, int]]]:
    """File header, the bytes of each record, and (offset, first seq, count) of each record."""
    data = path.read_bytes()
    segs = segment_offsets(path)
    starts = [off for off, _, _ in segs] + [len(data)]
    records = [data[starts[k] : starts[k + 1]] for k in range(len(segs))]
    return data[:HEADER], records, segs


def _build(groups: list[list[ev.AnyEvent]], sealed: bool) -> bytes:
    """A log laid out by hand from LOG_FORMAT.md, whatever seqs the events carry (a forger's
    tool: every checksum and the chain are right)."""
    head = b"BURACOLG" + struct.pack("<HHI", 1, ev.FORMAT_VERSION, 1 if sealed else 0)
    out = [head + struct.pack("<I", zlib.crc32(head))]
    chain = hashlib.sha256(b"buraco-log chain\x00" + struct.pack("<H", ev.FORMAT_VERSION))
    for group in groups:
        payload = ev.encode_many(group)
        for e in group:
            chain.update(ev.encode(e))
        seg = struct.pack("<IIQ", len(payload), len(group), group[0].seq)
        if sealed:
            seg += chain.digest()
        seg += struct.pack("<I", zlib.crc32(payload))
        out.append(seg + struct.pack("<I", zlib.crc32(seg)) + payload)
    return b"".join(out)


def _fix_segment_crc(data: bytearray, off: int, sealed: bool) -> None:
    hsize = _hsize(sealed)
    crc = zlib.crc32(bytes(data[off : off + hsize - 4]))
    data[off + hsize - 4 : off + hsize] = struct.pack("<I", crc)


def _fix_header_crc(data: bytearray) -> None:
    data[16:20] = struct.pack("<I", zlib.crc32(bytes(data[:16])))


def _integrity(path: Path) -> tuple[object, ...]:
    i = audit.audit_log(path).integrity
    return (i.status, i.kind, i.record, i.offset, i.seq, i.events)


def _verify_error(path: Path) -> LogFormatError:
    with pytest.raises(LogFormatError) as exc:
        log.verify(path)
    assert exc.value.path == str(path)
    return exc.value


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("buraco-log")
    if exe is None:
        pytest.skip("buraco-log is not installed")
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=60)


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("buraco-log: error: ")
    return lines[0]


# -- whole records removed, duplicated, swapped ----------------------------------------------


@pytest.mark.parametrize("sealed", [True, False])
@pytest.mark.parametrize("edit", ["remove", "duplicate", "swap", "swap-far"])
def test_moved_records_are_broken_at_the_first_bad_record_with_its_seq(
    tmp_path: Path, match: list[ev.AnyEvent], sealed: bool, edit: str
) -> None:
    path = bl.write(tmp_path / "m.blog", match, sealed=sealed, segment=16)
    header, records, segs = _split(path)
    k = 5
    parts = list(records)
    bad = k
    if edit == "remove":
        del parts[k]
    elif edit == "duplicate":
        parts.insert(k + 1, records[k])
        bad = k + 1
    elif edit == "swap":
        parts[k], parts[k + 1] = parts[k + 1], parts[k]
    else:
        parts[k], parts[k + 7] = parts[k + 7], parts[k]
    out = tmp_path / "edited.blog"
    out.write_bytes(header + b"".join(parts))
    offset, seq = segs[bad][0], segs[bad][1]
    assert seq == 16 * bad
    err = _verify_error(out)
    assert (err.kind, err.offset, err.seq) == ("seq", offset, seq)
    v = audit.audit_log(out)
    assert _integrity(out) == ("broken", "seq", bad, offset, seq, seq)
    assert [(f.rule, f.offset, f.seq) for f in v.findings if f.section == "integrity"] == [
        ("log.seq", offset, seq)
    ]
    assert v.legality.events_checked == seq and not v.ok


@pytest.mark.parametrize("sealed", [True, False])
def test_removing_the_last_record_leaves_a_valid_shorter_log_that_only_the_head_exposes(
    tmp_path: Path, match: list[ev.AnyEvent], sealed: bool
) -> None:
    path = bl.write(tmp_path / "m.blog", match, sealed=sealed, segment=16)
    whole = log.verify(path)
    header, records, segs = _split(path)
    out = tmp_path / "short.blog"
    out.write_bytes(header + b"".join(records[:-1]))
    info = log.verify(out)
    assert info.torn is None and info.events == segs[-1][1] and info.head != whole.head
    assert info.head == log.head_digest(match[: segs[-1][1]])
    v = audit.audit_log(out)
    assert v.integrity.status == ("sealed" if sealed else "unsealed")
    assert not v.legality.complete  # only the missing MatchEnded shows it (documented)


def test_a_forged_record_in_an_unsealed_log_passes_the_checksums(
    tmp_path: Path, match: list[ev.AnyEvent]
) -> None:
    path = bl.write(tmp_path / "m.blog", match, sealed=False, segment=16)
    bl.tamper(path, 4)
    info = log.verify(path)  # documented: no protection against a careful forger
    assert info.torn is None and info.events == len(match) and not info.sealed
    assert info.head != log.head_digest(match)
    assert audit.audit_log(path).integrity.status == "unsealed"


# -- bytes flipped: file header, segment header, payload, chain -------------------------------


def test_every_byte_of_the_file_header_flipped_is_broken_at_byte_0(tmp_path: Path) -> None:
    src = write(tmp_path / "a.blog", sample_events(6))
    data = src.read_bytes()
    bad = tmp_path / "bad.blog"
    for i in range(HEADER):
        flipped = bytearray(data)
        flipped[i] ^= 0x01
        put(bad, bytes(flipped))
        kind = "header" if i < 8 else "damage"
        err = _verify_error(bad)
        assert (err.kind, err.offset) == (kind, 0), i
        status, k, _record, offset, _seq, events = _integrity(bad)
        assert (status, k, offset, events) == ("broken", kind, 0, 0), i


def test_file_header_damage_names_no_record(tmp_path: Path) -> None:
    src = write(tmp_path / "a.blog", sample_events(6))
    data = src.read_bytes()
    bad = tmp_path / "bad.blog"
    for i in range(8, HEADER):
        flipped = bytearray(data)
        flipped[i] ^= 0x01
        put(bad, bytes(flipped))
        v = audit.audit_log(bad)
        assert v.integrity.record is None, i
        assert "record 0" not in v.findings[0].message, i


@pytest.mark.parametrize("sealed", [True, False])
def test_a_flipped_sealed_flag_is_damage(tmp_path: Path, sealed: bool) -> None:
    src = write(tmp_path / "a.blog", sample_events(8), sealed=sealed)
    data = bytearray(src.read_bytes())
    data[12] ^= 1
    bad = tmp_path / "bad.blog"
    bad.write_bytes(bytes(data))
    assert _integrity(bad)[:2] == ("broken", "damage")
    err = _verify_error(bad)
    assert (err.kind, err.offset) == ("damage", 0)
    # A forger who also fixes the header CRC: the segments no longer frame.
    _fix_header_crc(data)
    bad.write_bytes(bytes(data))
    err = _verify_error(bad)
    assert (err.kind, err.offset, err.seq) == ("damage", HEADER, 0)
    assert _integrity(bad) == ("broken", "damage", 0, HEADER, 0, 0)


def test_an_unknown_flag_or_layout_with_a_fixed_crc_is_refused(tmp_path: Path) -> None:
    src = write(tmp_path / "a.blog", sample_events(4))
    data = bytearray(src.read_bytes())
    data[12] |= 4
    _fix_header_crc(data)
    bad = tmp_path / "bad.blog"
    bad.write_bytes(bytes(data))
    err = _verify_error(bad)
    assert (err.kind, err.offset) == ("version", 12) and "0x5" in err.message  # a newer release
    data = bytearray(src.read_bytes())
    data[8] = 2
    _fix_header_crc(data)
    bad.write_bytes(bytes(data))
    err = _verify_error(bad)
    assert (err.kind, err.offset) == ("version", 8)


@pytest.mark.parametrize("sealed", [True, False])
def test_every_segment_header_byte_flipped_is_damage_at_that_record(
    tmp_path: Path, match: list[ev.AnyEvent], sealed: bool
) -> None:
    path = bl.write(tmp_path / "m.blog", match, sealed=sealed, segment=16)
    data = path.read_bytes()
    off, seq, _ = segment_offsets(path)[3]
    bad = tmp_path / "bad.blog"
    for i in range(off, off + _hsize(sealed)):
        flipped = bytearray(data)
        flipped[i] ^= 0x40
        put(bad, bytes(flipped))
        err = _verify_error(bad)
        assert (err.kind, err.offset, err.seq) == ("damage", off, seq), i
        assert _integrity(bad) == ("broken", "damage", 3, off, seq, seq), i


@pytest.mark.parametrize("sealed", [True, False])
def test_payload_bytes_flipped_are_damage_at_that_record(
    tmp_path: Path, match: list[ev.AnyEvent], sealed: bool
) -> None:
    path = bl.write(tmp_path / "m.blog", match, sealed=sealed, segment=16)
    data = path.read_bytes()
    segs = segment_offsets(path)
    bad = tmp_path / "bad.blog"
    for k in (0, 7, len(segs) - 1):  # the first, a middle and the complete last record
        off, seq, _ = segs[k]
        end = segs[k + 1][0] if k + 1 < len(segs) else len(data)
        for i in range(off + _hsize(sealed), end, 13):
            flipped = bytearray(data)
            flipped[i] ^= 0x02
            put(bad, bytes(flipped))
            assert _integrity(bad) == ("broken", "damage", k, off, seq, seq), (k, i)


def test_a_chain_field_changed_with_its_crc_fixed_breaks_the_chain(
    tmp_path: Path, match: list[ev.AnyEvent]
) -> None:
    path = bl.write(tmp_path / "m.blog", match, segment=16)
    off, seq, _ = segment_offsets(path)[3]
    data = bytearray(path.read_bytes())
    data[off + 16 + 5] ^= 0xFF
    _fix_segment_crc(data, off, sealed=True)
    path.write_bytes(bytes(data))
    err = _verify_error(path)
    assert (err.kind, err.offset, err.seq) == ("chain", off, seq)
    assert _integrity(path) == ("broken", "chain", 3, off, seq, seq)


@pytest.mark.parametrize("sealed", [True, False])
def test_forged_segment_header_fields_with_a_fixed_crc(
    tmp_path: Path, match: list[ev.AnyEvent], sealed: bool
) -> None:
    path = bl.write(tmp_path / "m.blog", match, sealed=sealed, segment=16)
    data = path.read_bytes()
    off, seq, _ = segment_offsets(path)[3]
    bad = tmp_path / "bad.blog"
    for field, kind in ((8, "seq"), (4, "decode"), (0, "damage")):  # first_seq, count, length
        forged = bytearray(data)
        forged[off + field] += 1
        _fix_segment_crc(forged, off, sealed)
        bad.write_bytes(bytes(forged))
        err = _verify_error(bad)
        assert (err.kind, err.offset, err.seq) == (kind, off, seq), field
        assert _integrity(bad) == ("broken", kind, 3, off, seq, seq), field


# -- an event whose seq skips ----------------------------------------------------------------


@pytest.mark.parametrize("sealed", [True, False])
def test_an_event_whose_seq_skips_inside_a_record_is_refused_at_that_record(
    tmp_path: Path, sealed: bool
) -> None:
    events = sample_events(15)
    groups = [events[0:5], list(events[5:10]), events[10:15]]
    groups[1][2] = msgspec.structs.replace(groups[1][2], seq=9)  # 7 -> 9: a skip
    path = tmp_path / "skip.blog"
    path.write_bytes(_build(groups, sealed))
    record1 = HEADER + _hsize(sealed) + len(ev.encode_many(groups[0]))
    err = _verify_error(path)
    assert (err.kind, err.offset) == ("seq", record1)
    assert "has seq 9, expected 7" in err.message
    status, kind, record, offset, _seq, events_read = _integrity(path)
    assert (status, kind, record, offset, events_read) == ("broken", "seq", 1, record1, 5)


def test_a_skip_inside_a_record_names_the_event_and_drops_the_whole_record(
    tmp_path: Path,
) -> None:
    """README (audit): the seq given is the first one not read, or for an event whose own seq
    is wrong inside an intact record, that event's expected seq; the record is not used."""
    events = sample_events(15)
    groups = [events[0:5], list(events[5:10]), events[10:15]]
    groups[1][2] = msgspec.structs.replace(groups[1][2], seq=9)
    path = tmp_path / "skip.blog"
    path.write_bytes(_build(groups, sealed=True))
    i = audit.audit_log(path).integrity
    assert (i.events, i.record, i.seq, i.kind) == (5, 1, 7, "seq")
    assert i.message == "event 2 of the record has seq 9, expected 7"


def test_the_hand_built_log_matches_the_writer_byte_for_byte(tmp_path: Path) -> None:
    events = sample_events(12)
    for sealed in (True, False):
        path = tmp_path / f"w{sealed}.blog"
        with log.Writer(path, sealed=sealed, validate=False, batched=True, batch_events=5) as w:
            w.append_many(events)
        assert path.read_bytes() == _build([events[0:5], events[5:10], events[10:]], sealed)


def test_the_writer_refuses_an_event_whose_seq_skips_and_writes_nothing(tmp_path: Path) -> None:
    events = sample_events(4)
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False) as w:
        w.append(events[0])
        size = path.stat().st_size
        with pytest.raises(LogFormatError) as exc:
            w.append(msgspec.structs.replace(events[1], seq=2))
        assert (exc.value.kind, exc.value.seq, exc.value.offset) == ("seq", 2, size)
    assert path.stat().st_size == size and log.read_events(path) == events[:1]


# -- cut, deleted or inserted bytes ----------------------------------------------------------


@pytest.mark.parametrize(("mode", "sealed"), [("durable", True), ("batched", False)])
def test_cut_at_every_byte_the_audit_gives_a_valid_prefix_or_a_torn_tail(
    tmp_path: Path, mode: str, sealed: bool
) -> None:
    events = sample_events(10, seed=4)
    src = write(tmp_path / "src.blog", events, mode=mode, sealed=sealed)
    data = src.read_bytes()
    segs = segment_offsets(src)
    bounds = {off: seq for off, seq, _ in segs} | {len(data): len(events)}
    cut = tmp_path / "cut.blog"
    status = "sealed" if sealed else "unsealed"
    for size in range(len(data)):
        put(cut, data[:size])
        got, integ = audit.read_log(cut)
        if size in bounds:
            assert (integ.status, integ.events, integ.offset) == (status, bounds[size], None)
            assert got == events[: bounds[size]]
            continue
        if size < HEADER:
            expect = ("torn", "torn", 0, 0, 0, 0)
        else:
            k = max(n for n, (off, _, _) in enumerate(segs) if off < size)
            off, seq, _ = segs[k]
            expect = ("torn", "torn", k, off, seq, seq)
        assert (integ.status, integ.kind, integ.record, integ.offset, integ.seq,
                integ.events) == expect, size
        assert got == events[: expect[4]]


@pytest.mark.parametrize(("mode", "sealed"), [("durable", True), ("batched", False)])
def test_a_byte_deleted_or_inserted_is_torn_only_at_the_end(
    tmp_path: Path, mode: str, sealed: bool
) -> None:
    src = write(tmp_path / "src.blog", sample_events(10, seed=6), mode=mode, sealed=sealed)
    data = src.read_bytes()
    segs = segment_offsets(src)
    last_off = segs[-1][0]
    bad = tmp_path / "bad.blog"
    for i in range(len(data)):
        put(bad, data[:i] + data[i + 1 :])
        _, integ = audit.read_log(bad)
        k = max((n for n, (off, _, _) in enumerate(segs) if off <= i), default=None)
        if k is None:  # the file header
            assert (integ.status, integ.offset) == ("broken", 0), i
        elif i >= last_off + _hsize(sealed):  # the last record's payload comes up short
            assert (integ.status, integ.offset, integ.record) == ("torn", last_off, k), i
        else:
            assert (integ.status, integ.kind, integ.offset, integ.record, integ.seq) == (
                "broken", "damage", segs[k][0], k, segs[k][1]), i
    for i in range(len(data) + 1):
        put(bad, data[:i] + b"\x07" + data[i:])
        _, integ = audit.read_log(bad)
        if i == len(data):  # one stray byte after the last record: a header cut short
            assert (integ.status, integ.offset, integ.seq) == ("torn", len(data), 10)
        else:
            assert integ.status == "broken" and integ.kind in ("header", "damage"), i


# -- garbage after the end, empty files, zero-filled files -----------------------------------


def test_garbage_appended_is_torn_when_shorter_than_a_header_else_damage(
    tmp_path: Path, match: list[ev.AnyEvent]
) -> None:
    path = bl.write(tmp_path / "m.blog", match, segment=16)
    data = path.read_bytes()
    n = len(segment_offsets(path))
    bad = tmp_path / "bad.blog"
    bad.write_bytes(data + b"abc")
    assert _integrity(bad) == ("torn", "torn", n, len(data), len(match), len(match))
    bad.write_bytes(data + b"\xa5" * 100)
    assert _integrity(bad) == ("broken", "damage", n, len(data), len(match), len(match))
    err = _verify_error(bad)
    assert (err.kind, err.offset, err.seq) == ("damage", len(data), len(match))
    with pytest.raises(LogFormatError):
        log.repair(bad)  # damage is never cut off
    assert bad.read_bytes() == data + b"\xa5" * 100
    assert not Path(str(bad) + ".bak").exists()
    bad.write_bytes(data + bytes(4096))
    assert _integrity(bad) == ("torn", "torn", n, len(data), len(match), len(match))


def test_an_empty_file_is_a_torn_header_that_repair_refuses_to_touch(tmp_path: Path) -> None:
    path = tmp_path / "empty.blog"
    path.write_bytes(b"")
    assert _integrity(path) == ("torn", "torn", 0, 0, 0, 0)
    # what `audit` says of a match that never received an event is tests/unit/test_audit.py's
    with pytest.raises(LogFormatError) as exc:
        log.repair(path)
    assert (exc.value.kind, exc.value.offset) == ("torn", 0)
    assert path.read_bytes() == b"" and not Path(str(path) + ".bak").exists()


def test_a_file_of_zeros_is_damage_that_names_its_zero_bytes(tmp_path: Path) -> None:
    # round 41: it was "not a buraco-log file (bad magic)", where fewer than 20 zero bytes
    # are a match not started; zero bytes are what a crash leaves, not another kind of file
    # (still no log header: exit 2), and 4,096 of them may have held events
    path = tmp_path / "zeros.blog"
    path.write_bytes(bytes(4096))
    err = _verify_error(path)
    assert (err.kind, err.offset, err.seq) == ("header", 0, None)
    assert "20 zero bytes (NUL)" in err.message and "bad magic" not in err.message
    assert _integrity(path) == ("broken", "header", None, 0, None, 0)
    assert audit.find_logs([tmp_path]) == [str(path)]  # a damaged .blog is never passed over


def test_seal_and_repair_refuse_a_damaged_log_and_leave_it_as_it_was(
    tmp_path: Path, match: list[ev.AnyEvent]
) -> None:
    path = bl.write(tmp_path / "m.blog", match, sealed=False, segment=16)
    data = bytearray(path.read_bytes())
    off = segment_offsets(path)[2][0]
    data[off + 30] ^= 0x10
    path.write_bytes(bytes(data))
    before = sorted(os.listdir(tmp_path))
    for action in (log.seal, log.repair):
        with pytest.raises(LogFormatError) as exc:
            action(path)
        assert (exc.value.kind, exc.value.offset) == ("damage", off)
        assert path.read_bytes() == bytes(data)
        assert sorted(os.listdir(tmp_path)) == before  # no temporary file, no backup left


# -- JSON Lines --------------------------------------------------------------------------------


@pytest.fixture
def jsonl_lines(tmp_path: Path, match: list[ev.AnyEvent]) -> list[str]:
    src = bl.write(tmp_path / "m.blog", match)
    jsonl.binary_to_jsonl(src, tmp_path / "m.jsonl")
    lines = (tmp_path / "m.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == len(match) + 2  # header line, events, end line
    return lines


def _jsonl_integrity(tmp_path: Path, name: str, data: str | bytes) -> tuple[object, ...]:
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    i = audit.audit_log(path).integrity
    assert i.format == "jsonl" and i.offset is None
    return (i.status, i.kind, i.record, i.seq, i.events)


def test_json_lines_removed_reordered_or_duplicated_are_broken_at_that_line(
    tmp_path: Path, jsonl_lines: list[str]
) -> None:
    lines = jsonl_lines  # line n (from 1) holds seq n - 2
    removed = lines[:5] + lines[6:]  # seq 4 gone: line 6 now holds seq 5
    assert _jsonl_integrity(tmp_path, "r.jsonl", "".join(removed)) == (
        "broken", "seq", 6, 4, 4)
    swapped = [*lines[:5], lines[6], lines[5], *lines[7:]]
    assert _jsonl_integrity(tmp_path, "s.jsonl", "".join(swapped)) == (
        "broken", "seq", 6, 4, 4)
    duplicated = [*lines[:6], lines[5], *lines[6:]]
    assert _jsonl_integrity(tmp_path, "d.jsonl", "".join(duplicated)) == (
        "broken", "seq", 7, 5, 5)
    obj = json.loads(lines[9])
    obj["seq"] += 3  # a seq that skips
    skipped = [*lines[:9], json.dumps(obj) + "\n", *lines[10:]]
    assert _jsonl_integrity(tmp_path, "k.jsonl", "".join(skipped)) == (
        "broken", "seq", 10, 8, 8)
    with pytest.raises(LogFormatError) as exc:
        jsonl.read_jsonl(tmp_path / "k.jsonl")
    assert (exc.value.kind, exc.value.line, exc.value.seq) == ("seq", 10, 8)
    assert "expected 8" in exc.value.message


def test_json_lines_edited_without_fixing_the_head_break_the_chain_at_the_end_line(
    tmp_path: Path, jsonl_lines: list[str], match: list[ev.AnyEvent]
) -> None:
    lines = list(jsonl_lines)
    obj = json.loads(lines[40])
    obj["note"] = "edited"
    lines[40] = json.dumps(obj) + "\n"
    n = len(lines)
    assert _jsonl_integrity(tmp_path, "e.jsonl", "".join(lines)) == (
        "broken", "chain", n, None, len(match))  # the end line holds no seq
    # The last event removed, the end line kept: the count no longer matches.
    short = jsonl_lines[:-2] + jsonl_lines[-1:]
    assert _jsonl_integrity(tmp_path, "l.jsonl", "".join(short)) == (
        "broken", "seq", n - 1, None, len(match) - 1)
    # An event after the end line.
    after = [*jsonl_lines, jsonl_lines[5]]
    assert _jsonl_integrity(tmp_path, "a.jsonl", "".join(after)) == (
        "broken", "jsonl", n + 1, len(match), len(match))


def test_a_head_mismatch_names_the_end_line_even_with_a_comment_after_it(
    tmp_path: Path, jsonl_lines: list[str]
) -> None:
    lines = list(jsonl_lines)
    obj = json.loads(lines[40])
    obj["note"] = "edited"
    lines[40] = json.dumps(obj) + "\n"
    end_line = len(lines)
    text = "".join(lines) + "\n# checked by the referee\n"  # blank and # lines are skipped
    path = tmp_path / "c.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LogFormatError) as exc:
        jsonl.read_jsonl(path)
    assert exc.value.kind == "chain"
    assert exc.value.line == end_line


def test_json_lines_without_the_end_line_are_unsealed_not_broken(
    tmp_path: Path, jsonl_lines: list[str], match: list[ev.AnyEvent]
) -> None:
    # Documented: the end line is optional; without it there is nothing to check against.
    assert _jsonl_integrity(tmp_path, "n.jsonl", "".join(jsonl_lines[:-1])) == (
        "unsealed", None, None, None, len(match))
    v = audit.audit_log(tmp_path / "n.jsonl")
    assert v.ok and v.integrity.head == log.head_digest(match)


def test_json_lines_with_a_bad_line_are_broken_at_that_line(
    tmp_path: Path, jsonl_lines: list[str]
) -> None:
    lines = jsonl_lines
    text = "".join([*lines[:7], "this is not json\n", *lines[7:]])
    assert _jsonl_integrity(tmp_path, "x.jsonl", text) == ("broken", "jsonl", 8, 6, 6)
    raw = "".join(lines[:7]).encode() + b'{"t": "dr", "note": "\xff\xfe"}\n' + "".join(
        lines[7:]).encode()
    assert _jsonl_integrity(tmp_path, "u.jsonl", raw) == ("broken", "jsonl", 8, 6, 6)
    arr = "".join([*lines[:3], "[1, 2, 3]\n", *lines[3:]])
    assert _jsonl_integrity(tmp_path, "y.jsonl", arr) == ("broken", "jsonl", 4, 2, 2)


def test_json_lines_with_crlf_line_endings_read_the_same(
    tmp_path: Path, jsonl_lines: list[str], match: list[ev.AnyEvent]
) -> None:
    crlf = "".join(jsonl_lines).replace("\n", "\r\n").encode("utf-8")
    assert _jsonl_integrity(tmp_path, "w.jsonl", crlf) == (
        "sealed", None, None, None, len(match))
    assert jsonl.read_jsonl(tmp_path / "w.jsonl") == match
    assert audit.audit_log(tmp_path / "w.jsonl").ok
    # A CRLF file with a line removed is still broken at the right line.
    lines = crlf.split(b"\r\n")
    del lines[5]
    assert _jsonl_integrity(tmp_path, "v.jsonl", b"\r\n".join(lines)) == (
        "broken", "seq", 6, 4, 4)


def test_json_lines_cut_at_every_byte_never_crash_and_never_pass_a_half_line(
    tmp_path: Path,
) -> None:
    events = sample_events(6, seed=2)
    src = write(tmp_path / "a.blog", events)
    jsonl.binary_to_jsonl(src, tmp_path / "a.jsonl")
    data = (tmp_path / "a.jsonl").read_bytes()
    spans = []  # (start, end without the newline, holds an event) of every line
    pos = 0
    for raw in data.split(b"\n")[:-1]:
        spans.append((pos, pos + len(raw), "t" in json.loads(raw)))
        pos += len(raw) + 1
    assert sum(e for _, _, e in spans) == len(events) and len(spans) == len(events) + 2
    cut = tmp_path / "cut.jsonl"
    for size in range(len(data) + 1):
        put(cut, data[:size])
        got, integ = audit.read_log(cut)
        whole = [e for _, end, e in spans if end <= size]
        kept = sum(whole)
        if any(start < size < end for start, end, _ in spans):  # half a line: a torn tail
            start = next(start for start, end, _ in spans if start < size < end)
            assert (integ.status, integ.kind, integ.record, integ.events, integ.offset) == (
                "torn", "torn", len(whole) + 1, kept, start), size
        else:
            status = "sealed" if len(whole) == len(spans) else "unsealed"
            assert (integ.status, integ.events) == (status, kept), size
        assert got == events[:kept]


# -- the installed command -----------------------------------------------------------------------


def test_cli_verify_of_damage_is_one_line_naming_byte_and_seq(
    tmp_path: Path, match: list[ev.AnyEvent]
) -> None:
    path = bl.write(tmp_path / "m.blog", match, segment=16)
    offset = bl.tamper(path, 4)
    result = _cli("verify", path)
    assert result.returncode == 1 and result.stdout == ""
    line = _one_error_line(result)
    assert line.startswith(f"buraco-log: error: {path}, byte {offset}, seq 64: ")
    assert "integrity chain broken" in line
    zeros = tmp_path / "zeros.blog"
    zeros.write_bytes(bytes(4096))
    result = _cli("verify", zeros)
    no_header = LogFormatError("zeros", offset=0, kind="header").exit_status  # 2: no log header
    assert result.returncode == no_header and result.stdout == ""
    assert _one_error_line(result).startswith(
        f"buraco-log: error: {zeros}, byte 0: the file header is 20 zero bytes (NUL), not a "
        "log header")


def test_cli_audit_of_damaged_logs_prints_the_verdict_and_exits_1(
    tmp_path: Path, match: list[ev.AnyEvent], jsonl_lines: list[str]
) -> None:
    path = bl.write(tmp_path / "s.blog", match, segment=16)
    header, records, segs = _split(path)
    path.write_bytes(header + b"".join(records[:5] + records[6:]))
    result = _cli("audit", path)
    assert result.returncode == 1 and result.stderr == ""
    assert "Traceback" not in result.stdout
    assert (f"BROKEN at record 5, byte {segs[5][0]}, seq 80 [log.seq]") in result.stdout
    (tmp_path / "j.jsonl").write_text("".join(jsonl_lines[:5] + jsonl_lines[6:]))
    result = _cli("audit", tmp_path / "j.jsonl", "--format", "json")
    assert result.returncode == 1 and result.stderr == ""
    integ = json.loads(result.stdout)["integrity"]
    assert (integ["status"], integ["kind"], integ["record"], integ["seq"]) == (
        "broken", "seq", 6, 4)


def test_cli_verify_of_a_torn_tail_keeps_stdout_empty(tmp_path: Path) -> None:
    path = write(tmp_path / "a.blog", sample_events(10))
    last = segment_offsets(path)[-1][0]
    path.write_bytes(path.read_bytes()[:-3])
    result = _cli("verify", path)
    assert result.returncode == 1
    line = _one_error_line(result)
    assert line.startswith(f"buraco-log: error: {path}, byte {last}") and "torn tail" in line
    assert result.stdout == ""


def test_cli_verify_of_an_empty_file_gives_advice_that_works(tmp_path: Path) -> None:
    path = tmp_path / "empty.blog"
    path.write_bytes(b"")
    # An empty file is a match that never started: verify says so, exit 0,
    # and its advice (delete the file) is the one repair gives too.
    verify = _cli("verify", path)
    assert verify.returncode == 0 and verify.stderr == ""
    line = verify.stdout.strip()
    assert line.startswith(f"{path}: NOT STARTED") and "delete the file" in line
    repair = _cli("repair", path)
    # nothing to repair in a match not started: exit 2, as repair's other refusals of input it
    # cannot act on (it said "the file header itself is incomplete", exit 1)
    assert repair.returncode == 2 and repair.stdout == ""
    assert "delete the file" in _one_error_line(repair)
    assert "a match not started" in _one_error_line(repair)
    assert "repair" not in line
