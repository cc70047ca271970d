"""Inputs that used to hang or crash (issue 13, items 4, 7, 11): non-regular files, integers no
log can hold, JSON objects with a repeated key. Each is one LogFormatError naming the file and
where, and at the CLI one line on stderr with exit 2."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log import events as ev
from buraco_log import jsonl, log
from buraco_log.errors import LogFormatError
from buraco_log.rules import preset
from tests.log.samples import sample_events

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_hang() -> Iterator[None]:
    """A call that blocks (the bug: a FIFO opened for reading waits for a writer forever)
    fails the test after 20 s instead of stopping the run."""

    def alarm(*_: object) -> None:
        raise AssertionError("blocked for 20 s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


# -- not a regular file ---------------------------------------------------------------------


def _hostile_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    """name -> (path, the words the error must use)."""
    fifo = tmp / "pipe.blog"
    os.mkfifo(fifo)
    zero = tmp / "zero.blog"
    zero.symlink_to("/dev/zero")
    directory = tmp / "dir.blog"
    directory.mkdir()
    sock = tmp / "sock.blog"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    s.close()
    return {
        "fifo": (fifo, "a FIFO"),
        "device": (zero, "a character device"),
        "directory": (directory, "a directory"),
        "socket": (sock, "socket"),
    }


def _readers(path: Path) -> list[Callable[[], object]]:
    return [
        lambda: log.verify(path),
        lambda: log.read_events(path),
        lambda: list(log.iter_events(path)),
        lambda: log.Reader(path),
        lambda: jsonl.read_jsonl(path),
        lambda: log.seal(path),
        lambda: log.repair(path),
        lambda: log.Writer(path, validate=False),
        lambda: log.LogLock(path),
        lambda: jsonl.convert(path, path.parent / "out.jsonl", "jsonl"),
        lambda: jsonl.convert(path, path.parent / "out.blog", "binary"),
    ]


def test_a_fifo_a_device_a_directory_or_a_socket_is_refused_at_once_by_every_reader(
    tmp_path: Path,
) -> None:
    for name, (path, words) in _hostile_files(tmp_path).items():
        for call in _readers(path):
            with pytest.raises(LogFormatError) as exc:
                call()
            assert exc.value.path == str(path), name
            assert exc.value.kind in ("filetype", "io"), (name, exc.value)
            if exc.value.kind == "filetype":
                assert words in str(exc.value) and "not a regular file" in str(exc.value)
                assert exc.value.exit_status == 2
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "out.blog").exists()


def test_a_symlink_to_a_regular_log_is_still_read(tmp_path: Path) -> None:
    events = sample_events(5)
    log.write_log(tmp_path / "real.blog", events, validate=False)
    (tmp_path / "link.blog").symlink_to(tmp_path / "real.blog")
    assert log.read_events(tmp_path / "link.blog") == events


def test_the_cli_refuses_a_fifo_in_one_line_with_exit_2(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.blog"
    os.mkfifo(fifo)
    for args in (["verify", str(fifo)], ["seal", str(fifo)]):  # the library test covers the rest
        result = subprocess.run(
            [sys.executable, "-m", "cli.main", *args],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )
        assert result.returncode == 2, (args, result.stderr)
        assert result.stdout == "" and "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert lines == [f"buraco-log: error: {fifo}: not a regular file (a FIFO): not read as a "
                         "log [log.filetype]"], args  # its rule named, as every refusal's


# -- integers outside the signed 64-bit range ----------------------------------------------


def _value(t: Any) -> Any:
    """A valid value of msgspec type ``t`` that exposes every integer it can hold."""
    if isinstance(t, mi.UnionType):
        ints = [x for x in t.types if not isinstance(x, mi.NoneType)]
        return _value(ints[0])
    if isinstance(t, mi.IntType):
        return 1
    if isinstance(t, mi.BoolType):
        return False
    if isinstance(t, mi.StrType):
        return "x"
    if isinstance(t, mi.LiteralType):
        return t.values[0]
    if isinstance(t, (mi.VarTupleType, mi.ListType)):
        return (_value(t.item_type), _value(t.item_type))
    if isinstance(t, mi.TupleType):
        return tuple(_value(x) for x in t.item_types)
    if isinstance(t, mi.DictType):
        return {"k": _value(t.value_type)}
    if isinstance(t, mi.StructType):
        if t.cls.__name__ == "Rules":
            return preset("classic")
        return t.cls(**{f.name: _value(f.type) for f in t.fields})
    raise AssertionError(f"no sample value for {t}")


def _every_event_type() -> list[ev.AnyEvent]:
    """One event of every type, every optional integer field filled in."""
    out = []
    for tag in sorted(ev.TAGS):
        info = mi.type_info(ev.TAGS[tag])
        assert isinstance(info, mi.StructType)
        fields = {f.name: _value(f.type) for f in info.fields}
        out.append(ev.from_dict({**msgspec.to_builtins(fields), "t": tag, "seq": 0}))
    return out


EVENTS = _every_event_type()


def _int_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield path
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _int_paths(item, (*path, i))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _int_paths(item, (*path, key))


def _set(value: Any, path: tuple[Any, ...], new: int) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


def _name(path: tuple[Any, ...]) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


# Every integer of every event type, as JSON objects (by name) and raw arrays (by position).
def _json(event: ev.AnyEvent) -> Any:
    return json.loads(json.dumps(ev.to_dict(event)))


def _array(event: ev.AnyEvent) -> Any:
    return msgspec.msgpack.decode(ev.encode(event))


JSON_SITES = [(i, p) for i, e in enumerate(EVENTS) for p in _int_paths(_json(e)) if p != ("seq",)]
ARRAY_SITES = [(i, p) for i, e in enumerate(EVENTS) for p in _int_paths(_array(e))]
INTS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([log.INT_MAX, log.INT_MAX + 1, log.INT_MIN, log.INT_MIN - 1, 2**64 - 1,
                     2**64, -(2**64), 2**70, -(2**70)]),
)
PROPERTY = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_the_samples_cover_every_event_type_and_integer_field() -> None:
    assert {type(e).__struct_config__.tag for e in EVENTS} == set(ev.TAGS)
    names = {_name(p).split("[")[0].split(".")[0] for _, p in JSON_SITES}
    assert {"at", "seat", "card", "hands", "stock", "upcard", "rules", "scores"} <= names


@PROPERTY
@given(site=st.sampled_from(JSON_SITES), value=INTS)
def test_any_integer_in_a_json_line_reads_or_is_one_range_error_naming_line_and_field(
    tmp_path: Path, site: tuple[int, tuple[Any, ...]], value: int
) -> None:
    index, path = site
    obj = _json(EVENTS[index])
    _set(obj, path, value)
    file = tmp_path / "big.jsonl"
    header = json.dumps({"log": "buraco-log", "version": ev.FORMAT_VERSION})
    file.write_text(f"{header}\n{json.dumps(obj)}\n")
    fits = log.INT_MIN <= value <= log.INT_MAX
    try:
        events = jsonl.read_jsonl(file)
    except LogFormatError as exc:
        if not fits:
            assert exc.kind == "range" and exc.line == 2 and exc.exit_status == 1
            assert f"field {_name(path)!r}" in str(exc) and str(file) in str(exc)
        else:
            assert exc.kind != "range"  # refused for another reason (a rules bound, ...)
        return
    assert fits, "an integer outside the signed 64-bit range was accepted"
    assert log.encode_checked(events[0])  # and it can be written in the binary form


@PROPERTY
@given(site=st.sampled_from(ARRAY_SITES), value=INTS)
def test_any_integer_in_a_binary_record_reads_or_is_refused_naming_seq_and_field(
    tmp_path: Path, site: tuple[int, tuple[Any, ...]], value: int
) -> None:
    index, path = site
    record = _array(EVENTS[index])
    _set(record, path, value)
    try:
        payload = msgspec.msgpack.encode([record])
    except OverflowError:  # MessagePack itself cannot hold it: the writer must refuse it
        assert not -(2**63) <= value < 2**64
        _writer_refuses(tmp_path, record, path)
        return
    file = tmp_path / "big.blog"
    file.write_bytes(log._file_header(ev.FORMAT_VERSION, False)
                     + log._segment(payload, 1, 0, None))
    fits = log.INT_MIN <= value <= log.INT_MAX
    try:
        events = log.read_events(file)
    except LogFormatError as exc:
        if not fits:
            assert exc.kind == "range" and exc.seq == 0 and exc.offset == log.HEADER_SIZE
            assert "field" in str(exc) and str(file) in str(exc) and exc.exit_status == 1
        else:
            assert exc.kind != "range"
        return
    assert fits, "an integer outside the signed 64-bit range was accepted"
    assert events[0].seq == 0


def _writer_refuses(tmp: Path, record: list[Any], path: tuple[Any, ...]) -> None:
    try:
        event = msgspec.convert(record, ev.AnyEvent)
    except (msgspec.ValidationError, ValueError):
        return  # the event type itself refuses the value: nothing to write
    for batched in (False, True):
        file = tmp / f"w{batched}.blog"
        file.unlink(missing_ok=True)  # each example writes afresh
        with pytest.raises(LogFormatError) as exc, \
                log.Writer(file, validate=False, batched=batched) as w:
            w.append(event)
            w.flush()
        if event.seq != 0:  # the seq itself: refused as the wrong seq first
            assert exc.value.kind == "seq"
        else:
            assert exc.value.kind == "range" and "field" in str(exc.value)
        assert log.read_events(file) == []  # nothing half-written


def test_a_writer_keeps_the_events_before_an_out_of_range_one_and_stops(tmp_path: Path) -> None:
    events = sample_events(6)
    bad = msgspec.structs.replace(events[3], at=2**64)
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False, batched=True)
    w.append_many(events[:3])
    w.append(bad)  # buffered: the fast path checks when it writes
    with pytest.raises(LogFormatError) as exc:
        w.flush()
    assert exc.value.kind == "range" and exc.value.seq == 3 and "'at'" in str(exc.value)
    with pytest.raises(LogFormatError):
        w.append(events[4])
    w.close()
    assert log.read_events(path) == events[:3]
    with log.Writer(path, validate=False) as w2, pytest.raises(LogFormatError) as exc:
        w2.append(msgspec.structs.replace(events[3], at=-(2**63) - 1))  # durable: at once
    assert exc.value.kind == "range" and exc.value.path == str(path)


def test_the_cli_names_line_and_field_of_a_huge_integer_and_exits_1(tmp_path: Path) -> None:
    # a damaged record, as `show` and `audit` call it (exit 2 was only verify's and replay's)
    value = 2**64  # the probe's value; the property tests above cover the whole range
    src = tmp_path / "a.blog"
    log.write_log(src, sample_events(6), validate=False)
    text = tmp_path / "a.jsonl"
    jsonl.convert(src, text, "jsonl")
    lines = text.read_text().splitlines()
    obj = json.loads(lines[3])
    obj["seat"] = value
    lines[3] = json.dumps(obj)
    text.write_text("\n".join(lines[:-1]) + "\n")
    for args in (["replay", str(text)], ["convert", str(text), "-o", str(tmp_path / "b.blog")]):
        result = subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        hint = " (--ignore-integrity reads it as far as its records decode)"
        assert result.stderr.strip().splitlines() == [
            f"buraco-log: error: {text}, line 4, seq 2: field 'seat' holds an integer outside "
            f"the signed 64-bit range ({log.INT_MIN} to {log.INT_MAX})"
            f"{hint if args[0] == 'replay' else ''} [log.range]"]
    assert not (tmp_path / "b.blog").exists()


# -- JSON objects with a repeated key -------------------------------------------------------


@pytest.mark.parametrize(
    "line, key",
    [
        ('{"t": "dr", "seat": 0, "card": "7h", "seat": 1}', "seat"),
        ('{"t": "dr", "t": "dc", "seat": 0, "card": "7h"}', "t"),
        ('{"t": "dr", "seat": 0, "card": "7h", "card": "8h"}', "card"),
        ('{"log": "buraco-log", "version": 1, "sealed": false, "sealed": true}', "sealed"),
    ],
)
def test_a_json_line_with_a_repeated_key_is_refused_naming_the_key(
    tmp_path: Path, line: str, key: str
) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(LogFormatError) as exc:
        jsonl.read_jsonl(path)
    assert exc.value.line == 1 and f"duplicate key {key!r}" in str(exc.value)


def test_a_repeated_key_inside_a_nested_object_is_refused_too(tmp_path: Path) -> None:
    src = tmp_path / "a.blog"
    log.write_log(src, sample_events(2), validate=False)
    text = tmp_path / "a.jsonl"
    jsonl.convert(src, text, "jsonl")
    lines = text.read_text().splitlines()
    lines[1] = lines[1].replace('"jokers":', '"jokers":4,"jokers":', 1)
    assert lines[1].count('"jokers"') == 2
    text.write_text("\n".join(lines) + "\n")
    with pytest.raises(LogFormatError, match="duplicate key 'jokers'") as exc:
        jsonl.read_jsonl(text)
    assert exc.value.line == 2


def test_the_same_key_in_sibling_objects_or_as_a_value_is_not_a_repeat(tmp_path: Path) -> None:
    events = sample_events(3)  # MatchStarted's players each have "name" and "id"
    src = tmp_path / "a.blog"
    log.write_log(src, events, validate=False)
    text = tmp_path / "a.jsonl"
    jsonl.convert(src, text, "jsonl")
    assert jsonl.read_jsonl(text) == events


# -- repair keeps only what is needed ------------------------------------------------------------


def _allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def test_repair_of_a_log_with_a_1_gib_sparse_zero_tail_keeps_a_sparse_backup_of_the_tail(
    tmp_path: Path,
) -> None:
    """The probe: a 12 KB log with a 1 GiB sparse zero tail left a 1.1 GB non-sparse .bak."""
    path = tmp_path / "a.blog"
    events = sample_events(60)
    log.write_log(path, events, validate=False)
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(size + 2**30)
    report = log.repair(path)
    assert report is not None and report.cut_offset == size and report.cut_bytes == 2**30
    assert report.backup is not None
    backup = Path(report.backup)
    assert backup.stat().st_size == 2**30  # the bytes that were cut, all of them
    assert _allocated(backup) < 1024 * 1024  # but they take no disk space
    assert path.stat().st_size == size and log.read_events(path) == events


def test_repair_backs_up_a_written_zero_tail_sparsely_and_keeps_nonzero_bytes_exactly(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.blog"
    log.write_log(path, sample_events(10), validate=False)
    good = path.read_bytes()
    tail = bytes(4 * 1024 * 1024)  # zeros written to disk (allocated), as a crash can leave
    path.write_bytes(good + tail)
    report = log.repair(path)
    assert report is not None and report.backup is not None
    backup = Path(report.backup)
    assert backup.read_bytes() == tail and _allocated(backup) < 64 * 1024
    # a torn record (non-zero bytes): the backup holds exactly them, log + backup = original
    path.write_bytes(good + good[log.HEADER_SIZE : log.HEADER_SIZE + 30])
    report = log.repair(path)
    assert report is not None and report.backup is not None and report.backup.endswith(".bak.1")
    assert path.read_bytes() + Path(report.backup).read_bytes() == good + good[
        log.HEADER_SIZE : log.HEADER_SIZE + 30]


def _zero_a_sector(path: Path, seg_offset: int, head: int) -> None:
    """Zero one whole 512-byte sector inside the payload of the segment at ``seg_offset``."""
    start = seg_offset + head
    sector = (start + 511) // 512 * 512
    with open(path, "r+b") as f:
        f.seek(sector)
        f.write(bytes(512))


def test_a_complete_last_record_with_a_zeroed_sector_is_a_torn_tail_that_repair_cuts(
    tmp_path: Path,
) -> None:
    """Lost pages: the record has its full length but one of its pages never reached the disk.
    As etcd does, that is a torn tail (never acknowledged), not damage."""
    events = sample_events(200)
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False, batched=True, batch_events=100) as w:
        w.append_many(events)
    from tests.log.samples import segment_offsets

    (_, _, _), (last, first_seq, _) = segment_offsets(path)
    _zero_a_sector(path, last, 56)
    info = log.verify(path)
    assert info.torn is not None and info.torn.offset == last and "partly zeroed" in (
        info.torn.reason) and info.events == first_seq
    report = log.repair(path)
    assert report is not None and log.read_events(path) == events[:first_seq]


def test_a_zeroed_sector_in_a_record_before_the_last_is_damage(tmp_path: Path) -> None:
    events = sample_events(300)
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False, batched=True, batch_events=100) as w:
        w.append_many(events)
    from tests.log.samples import segment_offsets

    offsets = segment_offsets(path)
    _zero_a_sector(path, offsets[1][0], 56)
    with pytest.raises(LogFormatError) as exc:
        log.verify(path)
    assert exc.value.kind == "damage" and exc.value.offset == offsets[1][0]


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_huge_integer_among_many_events_of_one_record_is_found_and_its_seq_named(
    tmp_path: Path, where: str
) -> None:
    """One record of a real match, where other events hold the bytes ``cf`` + high byte as
    plain data (card 207 before a nil): the reader places the huge value in its own event."""
    from buraco_log.rules import PRESETS
    from buraco_log.simulate import simulate_match

    events: list[ev.AnyEvent] = []
    records: list[Any] = []
    for index in range(20):  # a match with the pattern as data somewhere (most have it)
        events = simulate_match(PRESETS["classic"], 2, seed="huge", index=index)
        records = [_array(e) for e in events]
        if log._maybe_huge(msgspec.msgpack.encode(records)):
            break
    clean = msgspec.msgpack.encode(records)
    assert log._maybe_huge(clean), "no sample holds the pattern as plain data"
    suspects = log._suspects(clean, len(log._array_header(len(records))))
    assert 0 < len(suspects) < len(records) // 10  # only the events that hold it
    k = {"first": 0, "middle": 57, "last": len(records) - 1}[where]
    records[k][1 + type(events[k]).__struct_fields__.index("at")] = 2**63 + 5
    file = tmp_path / "many.blog"
    file.write_bytes(log._file_header(ev.FORMAT_VERSION, False)
                     + log._segment(msgspec.msgpack.encode(records), len(records), 0, None))
    with pytest.raises(LogFormatError) as exc:
        log.read_events(file)
    assert exc.value.kind == "range" and exc.value.seq == k and "'at'" in str(exc.value)


@pytest.mark.parametrize(
    "line, key",
    [  # a quote and colon inside a string must not hide a repeat from the quick count
        ('{"t": "dr", "seat": 0, "card": "7h", "note": "a\\":b", "seat": 1}', "seat"),
        ('{"t": "dr", "seat" : 0, "card": "7h", "seat"\t:\t1}', "seat"),
        ('{"t": "dr", "seat": 0, "card": "7h", "note": "x", "note": "\\u0022:"}', "note"),
    ],
)
def test_a_repeat_is_found_whatever_else_the_line_holds(tmp_path: Path, line: str,
                                                        key: str) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(LogFormatError) as exc:
        jsonl.read_jsonl(path)
    assert f"duplicate key {key!r}" in str(exc.value)


def test_a_note_holding_quotes_and_colons_is_read_as_written(tmp_path: Path) -> None:
    path = tmp_path / "note.jsonl"
    path.write_text('{"t": "dr", "seat": 0, "card": "7h", "note": "\\"a\\": \\"b\\":"}\n')
    (event,) = jsonl.read_jsonl(path)
    assert event.note == '"a": "b":'
