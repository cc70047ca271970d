"""Hostile bytes: random and mutated input, oversized and deeply nested payloads, unknown
types and fields. The only outcome besides a valid log is a LogFormatError."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import zlib
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.log.samples import put, sample_events, write

ROOT = Path(__file__).resolve().parents[2]
FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _header(sealed: bool = False) -> bytes:
    return log._file_header(ev.FORMAT_VERSION, sealed)


def _segment(payload: bytes, count: int, first_seq: int = 0) -> bytes:
    return log._segment(payload, count, first_seq, None)


def _outcome(path: Path) -> str:
    try:
        info = log.verify(path)
        log.read_events(path, allow_torn=True)
    except LogFormatError as exc:
        assert exc.path == str(path) and exc.offset is not None
        return exc.kind
    return "torn" if info.torn else "ok"


@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes_give_only_project_errors(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "r.blog"
    put(path, data)
    _outcome(path)


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_after_a_valid_header_give_only_project_errors(
    tmp_path: Path, data: bytes
) -> None:
    path = tmp_path / "r.blog"
    put(path, _header() + data)
    _outcome(path)


@FUZZ
@given(payload=st.binary(min_size=1, max_size=300), count=st.integers(1, 20))
def test_random_payloads_in_valid_frames_give_only_project_errors(
    tmp_path: Path, payload: bytes, count: int
) -> None:
    path = tmp_path / "r.blog"
    put(path, _header() + _segment(log._array_header(count) + payload, count))
    _outcome(path)


_SAMPLE = sample_events(12, seed=21)


@FUZZ
@given(
    edits=st.lists(
        st.tuples(
            st.sampled_from(["flip", "set", "insert", "delete", "cut"]),
            st.integers(0, 10_000),
            st.integers(0, 255),
        ),
        min_size=1,
        max_size=6,
    ),
    sealed=st.booleans(),
)
def test_mutated_logs_give_only_project_errors(
    tmp_path: Path, edits: list[tuple[str, int, int]], sealed: bool
) -> None:
    src = tmp_path / f"src{int(sealed)}.blog"
    if not src.exists():
        write(src, _SAMPLE, mode="batched", sealed=sealed)
    data = bytearray(src.read_bytes())
    for op, where, value in edits:
        i = where % max(1, len(data))
        if op == "flip" and data:
            data[i] ^= 1 << (value % 8)
        elif op == "set" and data:
            data[i] = value
        elif op == "insert":
            data[i:i] = bytes([value])
        elif op == "delete" and data:
            del data[i]
        elif op == "cut":
            del data[i:]
    path = tmp_path / "m.blog"
    put(path, bytes(data))
    _outcome(path)


@FUZZ
@given(data=st.binary(max_size=200))
def test_the_nesting_scanner_only_raises_value_error(data: bytes) -> None:
    with contextlib.suppress(ValueError):
        log.msgpack_depth(data)


def test_the_nesting_scanner_measures_depth() -> None:
    assert log.msgpack_depth(msgspec.msgpack.encode([1, [2, {"a": [3]}]])) == 4
    assert log.msgpack_depth(msgspec.msgpack.encode([])) == 1
    assert log.msgpack_depth(ev.encode_many(_SAMPLE)) <= 5
    with pytest.raises(ValueError, match="deeper"):
        log.msgpack_depth(b"\x91" * 100 + b"\x01")


def test_an_oversized_frame_is_refused_before_it_is_read(tmp_path: Path) -> None:
    head = log._SEG_HEAD.pack(log.MAX_PAYLOAD + 1, 1, 0) + (0).to_bytes(4, "little")
    frame = head + zlib.crc32(head).to_bytes(4, "little")
    path = tmp_path / "big.blog"
    path.write_bytes(_header() + frame + b"\x00" * 64)
    with pytest.raises(LogFormatError) as exc:
        log.verify(path)
    assert exc.value.kind == "limit" and exc.value.offset == log.HEADER_SIZE


def test_unknown_event_types_and_fields_are_named(tmp_path: Path) -> None:
    path = tmp_path / "u.blog"
    zz = msgspec.msgpack.encode([["zz", 1, 2, 0, None, None]])
    path.write_bytes(_header() + _segment(zz, 1))
    with pytest.raises(LogFormatError) as exc:
        log.verify(path)
    assert "unknown event type 'zz'" in str(exc.value) and exc.value.seq == 0
    extra = msgspec.msgpack.encode([["dr", 1, 2, 0, None, None, 99]])
    path.write_bytes(_header() + _segment(extra, 1))
    with pytest.raises(LogFormatError) as exc:
        log.verify(path)
    assert "'dr' has 1 unknown field(s) after 'note'" in str(exc.value)


DEEP = """
import sys, threading
from pathlib import Path
from buraco_log import log, events as ev
from buraco_log.errors import LogFormatError
threading.stack_size(256 * 1024)  # a small stack: an unchecked decode would crash
sys.setrecursionlimit(10**7)
path = Path(sys.argv[1])
deep = b"\\x91" * 1_000_000 + b"\\x01"
cases = [
    b"\\x91" + b"\\x96\\xa2dr" + deep + b"\\x01\\x00\\xc0\\xc0",  # in a field
    b"\\x91" + deep,  # instead of the event
]
def run():
    for payload in cases:
        path.write_bytes(log._file_header(ev.FORMAT_VERSION, False)
                         + log._segment(payload, 1, 0, None))
        try:
            log.verify(path)
        except LogFormatError as exc:
            print(exc.kind)
    try:
        log.decode_records(cases[1], ev.FORMAT_VERSION)
    except LogFormatError as exc:
        print(exc.kind)
t = threading.Thread(target=run)
t.start()
t.join()
"""


def test_a_deeply_nested_payload_cannot_crash_the_process(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", DEEP, str(tmp_path / "d.blog")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["decode", "decode", "decode"]


def test_a_missing_or_unreadable_log_is_a_project_error(tmp_path: Path) -> None:
    from buraco_log import jsonl

    for call in (
        lambda: log.verify(tmp_path / "nope.blog"),
        lambda: log.Writer(tmp_path / "no" / "dir.blog", validate=False),
        lambda: log.repair(tmp_path / "nope.blog"),
        lambda: log.seal(tmp_path / "nope.blog"),
        lambda: jsonl.read_jsonl(tmp_path / "nope.jsonl"),
        lambda: jsonl.convert(tmp_path / "nope.blog", tmp_path / "x.jsonl", "jsonl"),
    ):
        with pytest.raises(LogFormatError) as exc:
            call()
        assert exc.value.kind == "io"
        assert "nope" in str(exc.value) or "dir.blog" in str(exc.value)


def _closed(t: object, seen: set[type], depth: int = 0) -> int:
    """Deepest nesting a value of msgspec type ``t`` can have; fails on an open type."""
    import msgspec.inspect as mi

    if isinstance(t, mi.AnyType):
        raise AssertionError("an untyped field: the typed decode would no longer bound nesting")
    if isinstance(t, mi.UnionType):
        return max(_closed(x, seen, depth) for x in t.types)
    if isinstance(t, mi.StructType):
        assert t.forbid_unknown_fields, f"{t.cls.__name__} must forbid unknown fields"
        if t.cls in seen:
            raise AssertionError(f"{t.cls.__name__} is recursive")
        inner = [_closed(f.type, seen | {t.cls}, depth + 1) for f in t.fields]
        return max([depth + 1, *inner])
    if isinstance(t, (mi.ListType, mi.VarTupleType, mi.SetType, mi.FrozenSetType)):
        return _closed(t.item_type, seen, depth + 1)
    if isinstance(t, mi.TupleType):
        return max([depth + 1, *(_closed(x, seen, depth + 1) for x in t.item_types)])
    if isinstance(t, mi.DictType):
        return max(_closed(t.key_type, seen, depth + 1), _closed(t.value_type, seen, depth + 1))
    return depth


def test_the_event_types_bound_the_nesting_of_the_typed_decode() -> None:
    """Why the fast path needs no byte scan: every type is closed and shallow."""
    import msgspec.inspect as mi

    assert _closed(mi.type_info(ev.AnyEvent), set()) <= log.MAX_DEPTH
