"""Truncation at every byte, a bit flip at every byte, and whole records moved about.

Each test counts what it checked and asserts 100%: every case is either the valid log it should
be, a torn tail at the right offset with the events before the cut intact, or damage reported
with the offset of the damaged record (and the first bad seq) as a LogFormatError.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.log.samples import put, sample_events, segment_offsets, write

LOGS = [("durable", True), ("batched", True), ("durable", False), ("batched", False)]


def _segment_of(offsets: list[tuple[int, int, int]], byte: int) -> tuple[int, int, int] | None:
    """The segment holding ``byte`` (None for the file header)."""
    found = None
    for seg in offsets:
        if seg[0] <= byte:
            found = seg
    return found


@pytest.mark.parametrize("every", [
    # the default run cuts at each record's edges (two bytes either side) and every 7th byte
    pytest.param(False, id="sampled"), pytest.param(True, id="every-byte", marks=pytest.mark.slow)])
@pytest.mark.parametrize(("mode", "sealed"), LOGS)
def test_truncating_at_every_byte_gives_a_valid_prefix_or_a_torn_tail(
    tmp_path: Path, mode: str, sealed: bool, every: bool
) -> None:
    events = sample_events(24, seed=3)
    src = write(tmp_path / "src.blog", events, mode=mode, sealed=sealed)
    data = src.read_bytes()
    offsets = segment_offsets(src)
    boundaries = {off: seq for off, seq, _ in offsets} | {len(data): len(events)}
    cut = tmp_path / "cut.blog"
    sizes = sorted({0, 1, log.HEADER_SIZE - 1, *_bytes_to_try(offsets, 0, len(data), every)})
    handled = 0
    for size in sizes:
        put(cut, data[:size])
        info = log.verify(cut)
        if size in boundaries:  # a cut between records leaves a shorter valid log
            assert info.torn is None
            assert info.events == boundaries[size]
        else:
            assert info.torn is not None, size
            seg = _segment_of(offsets, size - 1)
            expected = 0 if size < log.HEADER_SIZE else (seg[0] if seg else log.HEADER_SIZE)
            assert info.torn.offset == expected
            assert info.torn.size == size - expected
            kept = 0 if seg is None or size < log.HEADER_SIZE else seg[1]
            assert info.events == kept
            assert log.read_events(cut, allow_torn=True) == events[:kept]
            with pytest.raises(LogFormatError) as exc:
                log.read_events(cut)
            assert exc.value.kind == "torn"
            assert exc.value.offset == expected
        handled += 1
    assert handled == (len(data) if every else len(sizes))  # 100% of the offsets, or the sample


@pytest.mark.parametrize(("mode", "sealed"), LOGS)
def test_one_flipped_bit_anywhere_is_reported_with_the_damaged_records_offset(
    tmp_path: Path, mode: str, sealed: bool
) -> None:
    src = write(tmp_path / "src.blog", sample_events(16, seed=5), mode=mode, sealed=sealed)
    data = src.read_bytes()
    offsets = segment_offsets(src)
    bad = tmp_path / "bad.blog"
    detected = 0
    for i in range(len(data)):
        flipped = bytearray(data)
        flipped[i] ^= 1 << (i % 8)
        put(bad, bytes(flipped))
        with pytest.raises(LogFormatError) as exc:
            log.verify(bad)
        seg = _segment_of(offsets, i)
        assert exc.value.kind != "torn"
        assert exc.value.offset == (seg[0] if seg and i >= log.HEADER_SIZE else 0) or (
            exc.value.offset is not None and i < log.HEADER_SIZE
        )
        if seg and i >= log.HEADER_SIZE:
            assert exc.value.seq == seg[1]
        detected += 1
    assert detected == len(data)


def test_every_bit_of_every_byte_of_a_small_log_is_covered(tmp_path: Path) -> None:
    src = write(tmp_path / "src.blog", sample_events(4, seed=9), mode="durable")
    data = src.read_bytes()
    bad = tmp_path / "bad.blog"
    for i in range(len(data)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            put(bad, bytes(flipped))
            with pytest.raises(LogFormatError) as exc:
                log.verify(bad)
            assert exc.value.offset is not None and exc.value.kind != "torn"


def _records(path: Path) -> tuple[bytes, list[bytes], list[int]]:
    data = path.read_bytes()
    offsets = segment_offsets(path)
    starts = [off for off, _, _ in offsets] + [len(data)]
    records = [data[starts[k] : starts[k + 1]] for k in range(len(offsets))]
    return data[: log.HEADER_SIZE], records, [seq for _, seq, _ in offsets]


def _first_bad(path: Path) -> LogFormatError:
    with pytest.raises(LogFormatError) as exc:
        log.verify(path)
    assert exc.value.kind in ("seq", "chain")
    return exc.value


@pytest.mark.parametrize(("mode", "sealed"), LOGS)
def test_deleted_duplicated_swapped_or_inserted_records_name_the_first_bad_seq(
    tmp_path: Path, mode: str, sealed: bool
) -> None:
    events = sample_events(30, seed=11)
    header, records, seqs = _records(write(tmp_path / "a.blog", events, mode=mode, sealed=sealed))
    # A fork: the same match up to seq 10, then other events with the same seqs.
    forked = events[:10] + sample_events(30, seed=12)[10:]
    _, fork_records, fork_seqs = _records(
        write(tmp_path / "b.blog", forked, mode=mode, sealed=sealed)
    )
    bad = tmp_path / "bad.blog"
    n = len(records)
    checked = 0

    def check(parts: list[bytes], seq: int) -> None:
        nonlocal checked
        put(bad, header + b"".join(parts))
        err = _first_bad(bad)
        assert err.seq == seq, (parts, err)
        assert (
            err.offset
            == len(header)
            + sum(
                len(p)
                for p in parts[
                    : next(k for k, p in enumerate(parts) if k >= len(records) or p != records[k])
                ]
            )
            or err.kind == "seq"
        )
        checked += 1

    for i in range(n - 1):  # deleting the last record leaves a shorter valid log (see docs)
        check(records[:i] + records[i + 1 :], seqs[i])
    for i in range(n):
        check(
            [*records[: i + 1], records[i], *records[i + 1 :]],
            seqs[i + 1] if i + 1 < n else len(events),
        )
    for i in range(n - 1):
        check([*records[:i], records[i + 1], records[i], *records[i + 2 :]], seqs[i])
    for i in range(n):
        for j in range(i + 1, n):
            swapped = list(records)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            check(swapped, seqs[i])
    fork_point = next(k for k in range(n) if fork_records[k] != records[k])
    for i in range(fork_point, n - 1):  # insert the other log's record carrying the right seq
        extra = fork_records[fork_seqs.index(seqs[i])]
        consistent = not sealed or i == fork_point  # fits the chain: the next record is bad
        check([*records[:i], extra, *records[i:]], seqs[i + 1] if consistent else seqs[i])
    assert checked >= 3 * n - 2


def test_deleting_the_last_record_changes_the_head_digest(tmp_path: Path) -> None:
    events = sample_events(12)
    src = write(tmp_path / "a.blog", events)
    head = log.verify(src).head
    header, records, _ = _records(src)
    short = tmp_path / "short.blog"
    short.write_bytes(header + b"".join(records[:-1]))
    info = log.verify(short)
    assert info.events == len(events) - 1 and info.head != head


GOLDEN = Path(__file__).resolve().parents[2] / "examples" / "format" / "v1.blog"


# The real log's byte loops: by default every byte within 2 of a record boundary, every 7th
# and every 97th (the replayed sample); every byte of the log with -m slow. Each verify reads
# the whole 11 KB log, and the small logs above are walked byte by byte in the default run.
EVERY_BYTE = [pytest.param(False, id="sampled"),
              pytest.param(True, id="every-byte", marks=pytest.mark.slow)]


def _bytes_to_try(offsets: list[tuple[int, int, int]], start: int, end: int,
                  every: bool, stride: int = 7) -> list[int]:
    if every:
        return list(range(start, end))
    edges = {off + d for off, _, _ in offsets for d in range(-2, 3)} | {end - 1, end - 2}
    return [i for i in range(start, end) if i in edges or i % stride == 0 or i % 97 == 0]


@pytest.mark.parametrize("every", EVERY_BYTE)
def test_a_real_match_log_cut_anywhere_keeps_a_replayable_prefix(tmp_path: Path,
                                                                 every: bool) -> None:
    from buraco_log.reducer import Replayer

    data = GOLDEN.read_bytes()
    events = log.read_events(GOLDEN)
    offsets = segment_offsets(GOLDEN)
    ends = {off: seq for off, seq, _ in offsets} | {len(data): len(events)}
    cut = tmp_path / "cut.blog"
    # every cut inside a record reads alike (its record torn): the edges, and a cut in 29
    for size in _bytes_to_try(offsets, log.HEADER_SIZE + 1, len(data), every, stride=29):
        put(cut, data[:size])
        info = log.verify(cut)
        seg = _segment_of(offsets, size - 1)
        assert seg is not None
        kept = ends[size] if size in ends else seg[1]
        assert info.events == kept and (info.torn is None) == (size in ends)
        if size % 97 == 0:  # replaying is slower than reading: a sample of the cuts
            r = Replayer()
            for event in log.read_events(cut, allow_torn=True):
                r.step(event)
            assert r.state().seq == kept - 1


@pytest.mark.parametrize("every", EVERY_BYTE)
def test_a_real_match_log_with_any_byte_flipped_is_refused(tmp_path: Path, every: bool) -> None:
    data = GOLDEN.read_bytes()
    offsets = segment_offsets(GOLDEN)
    bad = tmp_path / "bad.blog"
    for i in _bytes_to_try(offsets, log.HEADER_SIZE, len(data), every):
        flipped = bytearray(data)
        flipped[i] ^= 0x80 >> (i % 8)
        put(bad, bytes(flipped))
        with pytest.raises(LogFormatError) as exc:
            log.verify(bad)
        seg = _segment_of(offsets, i)
        assert seg is not None and exc.value.offset == seg[0] and exc.value.seq == seg[1]


def test_a_zero_filled_tail_is_torn_but_zeros_followed_by_data_are_damage(tmp_path: Path) -> None:
    events = sample_events(8)
    src = write(tmp_path / "a.blog", events)
    data = src.read_bytes()
    path = tmp_path / "z.blog"
    path.write_bytes(data + b"\x00" * 4096)  # blocks allocated, never written: a crash
    info = log.verify(path)
    assert info.torn is not None and info.torn.offset == len(data) and info.events == 8
    assert "zero-filled" in info.torn.reason
    path.write_bytes(data + b"\x00" * 100 + b"\x01")
    with pytest.raises(LogFormatError) as exc:
        log.verify(path)
    assert exc.value.kind == "damage" and exc.value.offset == len(data) and exc.value.seq == 8
