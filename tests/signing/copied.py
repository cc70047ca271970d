"""A signed log with one of its signature records repeated: the copy a replay attack makes."""

from __future__ import annotations

from pathlib import Path

from buraco_log import log

SEALED_HEAD = log._SEG_HEAD.size + 32 + log._SEG_TAIL.size  # 56 bytes


def _span_after(data: bytes, seq: int) -> tuple[int, int]:
    """``(offset, end)`` of the signature record after ``seq`` in a sealed log."""
    off = log.HEADER_SIZE
    while off < len(data):
        length, count, first = log._SEG_HEAD.unpack_from(data, off)
        end = off + SEALED_HEAD + length
        if count == 0 and first == seq + 1:
            return off, end
        off = end
    raise AssertionError(f"no signature record after seq {seq}")


def _copied(signed: Path, dst: Path, seq: int, times: int) -> tuple[Path, int]:
    """``signed`` with the record after ``seq`` repeated ``times`` more; where the first
    copy starts."""
    data = signed.read_bytes()
    off, end = _span_after(data, seq)
    dst.write_bytes(data[:end] + data[off:end] * times + data[end:])
    return dst, end
