"""Fault probes of the log, third round: power loss in a signed log (events and their
signature written with one fsync), stale temporaries of a killed convert, and the strictness
of JSON Lines' first and end lines."""

from __future__ import annotations

import fcntl
import os
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


# -- a killed convert or seal: stale temporaries ------------------------------------------------

KILL_AT_PUBLISH = """
import os, runpy, signal, sys
from buraco_log import jsonl, log
jsonl._publish = lambda *named: os.kill(os.getpid(), signal.SIGKILL)  # file whole, unnamed
log._hook = lambda point: point == "seal.before-rename" and os.kill(os.getpid(), signal.SIGKILL)
sys.argv = ["buraco-log", *sys.argv[1:]]
runpy.run_module("cli", run_name="__main__")
"""


def _killed(*args: str) -> None:
    done = subprocess.run([sys.executable, "-c", KILL_AT_PUBLISH, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, (done.returncode, done.stderr)


def _age(path: Path) -> None:
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))


def _log(path: Path, sealed: bool = True) -> None:
    signer = Signer.generate()
    with log.Writer(path, sealed=sealed, signer=signer) as w:
        for event in match(key_id=signer.key_id)[:30]:
            w.append(event)


@pytest.mark.parametrize("form", ["jsonl", "blog"])
def test_a_convert_killed_before_naming_its_file_leaves_a_temporary_the_next_one_removes(
    tmp_path: Path, form: str
) -> None:
    source = tmp_path / "in.blog"
    _log(source)
    if form == "blog":  # JSON Lines in, binary out
        assert _cli("convert", str(source), "-o", str(tmp_path / "in.jsonl")).returncode == 0
        source = tmp_path / "in.jsonl"
    out = tmp_path / f"out.{form}"
    _killed("convert", str(source), "-o", str(out))
    assert not out.exists()
    stale = [p for p in tmp_path.iterdir() if p.name.startswith(f".{out.name}.")]
    assert len(stale) == 1, stale
    for p in stale:
        _age(p)
    # what is not a killed conversion's stays: a user's file of such a name, a fresh
    # temporary (a conversion under way, not yet locked), one locked by a live conversion
    mine = tmp_path / f".{out.name}.0123456789ab.tmp"
    mine.write_text("my notes\n")
    _age(mine)
    fresh = tmp_path / f".{out.name}.aaaaaaaaaaaa.tmp"
    fresh.write_bytes(stale[0].read_bytes())
    held = tmp_path / f".{out.name}.bbbbbbbbbbbb.tmp"
    held.write_bytes(stale[0].read_bytes())
    _age(held)
    with open(held, "rb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        done = _cli("convert", str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert not stale[0].exists()  # before: every killed run left its copy of the log
    assert mine.exists() and fresh.exists() and held.exists()
    assert _cli("verify", str(out)).returncode == 0


def test_a_seal_killed_before_its_rename_leaves_a_copy_the_next_seal_removes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.blog"
    _log(path, sealed=False)
    before = path.read_bytes()
    _killed("seal", str(path))
    assert path.read_bytes() == before
    stale = [p for p in tmp_path.iterdir() if p.name.startswith(".m.blog.")]
    assert len(stale) == 1, stale
    _age(stale[0])
    done = _cli("seal", str(path))
    assert done.returncode == 0, done.stderr
    assert not stale[0].exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.blog"]
    assert log.verify(path).sealed


@pytest.mark.parametrize("which", ["first", "end"])
def test_an_unknown_key_on_a_json_lines_first_or_end_line_is_refused_naming_it(
    tmp_path: Path, which: str
) -> None:
    source = tmp_path / "in.blog"
    _log(source)
    good = tmp_path / "good.jsonl"
    assert _cli("convert", str(source), "-o", str(good)).returncode == 0
    lines = good.read_text().splitlines()
    at = 0 if which == "first" else len(lines) - 1
    lines[at] = lines[at][:-1] + ', "comment": "x"}'
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    done = _cli("verify", str(bad))  # before: accepted, the key silently dropped
    assert done.returncode != 0 and "Traceback" not in done.stderr
    line = done.stderr.strip().splitlines()
    assert len(line) == 1 and str(bad) in line[0] and f"line {at + 1}" in line[0]
    assert "'comment'" in line[0]
