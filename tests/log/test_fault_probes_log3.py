"""Fault probes of the log, third round: power loss in a signed log (events and their
signature written with one fsync), stale temporaries of a killed convert, and the strictness
of JSON Lines' first and end lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log import log

pytest.importorskip("cryptography")

from buraco_log.signing.keys import Signer
from tests.signing.helpers import match

ROOT = Path(__file__).resolve().parents[2]
SECTOR = 512


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def _signed_with_unsynced_write(path: Path, sealed: bool) -> int:
    """A signed log whose last write (60 events and their signature record, one fsync) is
    the part a power loss may tear; returns where that write starts."""
    signer = Signer.generate()
    events = match(key_id=signer.key_id)
    with log.Writer(path, signer=signer, sealed=sealed, batched=True, batch_events=1000) as w:
        for event in events[:20]:
            w.append(event)
            w.flush()
        start = path.stat().st_size
        for event in events[20:80]:
            w.append(event)
    assert log.verify(path).events == 80
    return start


def _sector_states(data: bytes, start: int) -> list[tuple[int, bytes]]:
    """Every file a power loss can leave by losing one sector of the write from ``start``
    (never written: zeros; the last one up to the end of the file)."""
    states = []
    for sector in range(start - start % SECTOR, len(data), SECTOR):
        if sector + SECTOR <= start:
            continue
        lost = bytearray(data)
        begin = max(sector, start)
        end = min(sector + SECTOR, len(data))
        lost[begin:end] = bytes(end - begin)
        states.append((sector, bytes(lost)))
    return states


@pytest.mark.parametrize("sealed", [True, False])
def test_a_signed_logs_last_write_with_a_sector_lost_is_a_torn_tail_that_repair_cuts(
    tmp_path: Path, sealed: bool
) -> None:
    path = tmp_path / "signed.blog"
    start = _signed_with_unsynced_write(path, sealed)
    data = path.read_bytes()
    states = _sector_states(data, start)
    assert len(states) >= 2
    for sector, lost in states:
        torn = tmp_path / f"t{sector}.blog"
        torn.write_bytes(lost)
        if sector <= start:
            continue  # the events record's header lost: damage, as in an unsigned log (docs)
        info = log.verify(torn)  # before: damage at `start`, which repair refuses
        assert info.torn is not None and info.torn.offset >= start, (sector, info)
        # the events record lost a sector: cut from it; only the signature record's end was
        # lost: the events are whole (never acknowledged, and signed by no record): cut it
        assert info.events == (20 if info.torn.offset == start else 80)
        done = _cli("repair", str(torn))
        assert done.returncode == 0, done.stderr
        assert torn.read_bytes() == data[:info.torn.offset]
        assert log.verify(torn).events == info.events
        torn.unlink()
        Path(f"{torn}.bak").unlink()


def test_a_bit_flip_in_the_last_events_of_a_signed_log_is_still_damage(tmp_path: Path) -> None:
    path = tmp_path / "signed.blog"
    start = _signed_with_unsynced_write(path, True)
    data = bytearray(path.read_bytes())
    data[start + 300] ^= 0x10
    path.write_bytes(bytes(data))
    done = _cli("verify", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "damage" in done.stderr or "checksum" in done.stderr
    assert _cli("repair", str(path)).returncode != 0
