"""Fault probes of signing (round 47): `keys new` killed between giving its temporary the name
NAME.key and removing it left a hidden 0600 `.keys-new-*.tmp` holding the private key, for
ever; the next `keys new` into that directory now removes it (only a regular file of exactly
that name, owned by the user, older than the process), and says so in one line. A real
process, killed for real (SIGKILL) at that point."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

ROOT = Path(__file__).resolve().parents[2]

# `keys new` whose hard link NAME.key -> temporary is made, and the process then killed
# before the temporary is removed (as a power cut or the OOM killer would).
KILLED_AFTER_LINK = """
import os, signal, sys
from buraco_log import log
def place_new(tmp, path):
    os.link(tmp, path)
    os.kill(os.getpid(), signal.SIGKILL)
log.place_new = place_new
sys.argv = ["buraco-log", *sys.argv[1:]]
from cli.main import run
run()
"""


def _cli(*args: object, script: str | None = None) -> subprocess.CompletedProcess[str]:
    head = ["-c", script] if script else ["-m", "cli"]
    return subprocess.run([sys.executable, *head, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _leftovers(d: Path) -> list[Path]:
    return sorted(d.glob(".keys-new-*.tmp"))


def test_the_next_keys_new_removes_the_secret_key_a_crash_left_and_says_so(
        tmp_path: Path) -> None:
    d = tmp_path / "keys"
    d.mkdir(mode=0o700)
    crashed = _cli("keys", "new", "site", "-d", d, script=KILLED_AFTER_LINK)
    assert crashed.returncode == -9, crashed.stderr
    left = _leftovers(d)  # the private key's, linked as site.key, and the public key's
    (secret,) = [p for p in left if b"PRIVATE KEY" in p.read_bytes()]
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and len(left) == 2
    key = (d / "site.key").read_bytes()
    past = time.time() - 60  # the crash was before this run (its process is younger)
    for p in left:
        os.utime(p, (past, past))
    # others that must stay: another name, a link of the name, a file newer than the process
    # (a `keys new` running beside it), a file of the pattern with another name around it
    keep = [d / ".keys-new-0123456789ab.tmp.bak", d / ".keys-new-XYZ.tmp"]
    for p in keep:
        p.write_bytes(b"x")
        os.utime(p, (past, past))
    link = d / ".keys-new-aaaaaaaaaaaa.tmp"
    link.symlink_to(d / "site.key")
    younger = d / ".keys-new-bbbbbbbbbbbb.tmp"
    younger.write_bytes(b"y")
    os.utime(younger, (time.time() + 3600,) * 2)
    done = _cli("keys", "new", "other", "-d", d)
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.splitlines()
    assert line == (f"buraco-log: note: removed 2 temporary files an interrupted `keys new` "
                    f"left in {d} (a private key may have been in them): "
                    f"{left[0].name}, {left[1].name}"), line
    assert not any(p.exists() for p in left)
    assert (d / "site.key").read_bytes() == key  # the key the crashed run placed stays
    assert all(p.exists() for p in keep) and link.is_symlink() and younger.exists()
    assert _leftovers(d) == sorted([link, younger, keep[1]])


def test_a_refused_keys_new_still_removes_the_leftover(tmp_path: Path) -> None:
    """Refused (the name exists), it removes them all the same: the user reruns the same
    command after a crash, and is told "already exists"."""
    d = tmp_path / "keys"
    d.mkdir(mode=0o700)
    assert _cli("keys", "new", "site", "-d", d, script=KILLED_AFTER_LINK).returncode == -9
    for p in _leftovers(d):
        os.utime(p, (time.time() - 60,) * 2)
    again = _cli("keys", "new", "site", "-d", d)
    assert again.returncode == 2
    assert "removed 2 temporary files" in again.stderr and "already exists" in again.stderr
    assert _leftovers(d) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_leftover_of_another_user_is_not_touched(tmp_path: Path) -> None:
    """The library's cleaning, and write_key_pair's result names what it removed."""
    from buraco_log.signing import keys
    from buraco_log.signing.keys import clean_leftovers

    d = tmp_path / "keys"
    d.mkdir()
    theirs = d / ".keys-new-cccccccccccc.tmp"
    theirs.write_bytes(b"z")
    os.chown(theirs, 12345, 12345)
    mine = d / ".keys-new-dddddddddddd.tmp"
    mine.write_bytes(b"z")
    for p in (theirs, mine):
        os.utime(p, (time.time() - 60,) * 2)
    assert clean_leftovers(str(d)) == (str(mine),)
    assert theirs.exists() and not mine.exists()
    mine.write_bytes(b"z")
    os.utime(mine, (time.time() - 60,) * 2)
    made = keys.write_key_pair(d, "site")
    assert made.removed_leftovers == (str(mine),) and theirs.exists()
