"""Signed copies of the example logs and the byte span of one record in them, for the probes that
tamper with a signed log."""

from __future__ import annotations

from pathlib import Path

import msgspec

from buraco_log import log
from buraco_log.audit import read_log_signed
from buraco_log.signing import keys
from buraco_log.signing import record as sigrec
from tests.signing.helpers import match, write_signed

SIGNER = keys.Signer.generate()
ENV = {"BURACO_LOG_KEYS": "", "BURACO_LOG_REQUIRE_SIGNATURES": "0"}


def _signed(tmp_path: Path, *, sealed: bool = True) -> tuple[Path, Path]:
    """A complete match signed every 32 events, and its published key."""
    path = tmp_path / "m.blog"
    write_signed(path, match(key_id=SIGNER.key_id), SIGNER, batch=32, sealed=sealed)
    pub = tmp_path / "site.pub"
    pub.write_bytes(msgspec.json.encode(SIGNER.public()))
    return path, pub


def _record_span(path: Path, index: int) -> tuple[int, int]:
    """Where the ``index``-th signature record of ``path`` lies, frame header included."""
    data = path.read_bytes()
    reader = log.Reader(path)
    reader.read_header()
    payload = sigrec.encode(read_log_signed(path)[2].signatures[index])
    at = data.index(payload)
    reader.close()
    return at - reader._seg_head_size, at + len(payload)


def _with_copy(path: Path, dst: Path, index: int, times: int = 1) -> int:
    """``path`` with its ``index``-th signature record repeated right after itself; the seq it
    signs."""
    start, end = _record_span(path, index)
    data = path.read_bytes()
    dst.write_bytes(data[:end] + data[start:end] * times + data[end:])
    return read_log_signed(path)[2].signatures[index].seq
