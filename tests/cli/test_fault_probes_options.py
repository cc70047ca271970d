"""Fault probes, options: files and numbers given to options that must not hang the command
(a FIFO or an endless device as a passphrase file, a huge --matches). Real subprocesses with
timeouts, so a hang fails instead of blocking."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.outputs import EXE, assert_error, run

pytestmark = pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")

HUGE = str(10**23)


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "directory"])
def test_keys_new_passphrase_file_that_is_no_file_is_refused(tmp_path: Path, kind: str) -> None:
    source = {"fifo": tmp_path / "pass.fifo", "/dev/zero": Path("/dev/zero"),
              "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(source)  # no writer: a blocking open would wait for ever
    keys = tmp_path / "keys"
    keys.mkdir()
    r = run("keys", "new", "site", "--passphrase-file", source, "-d", keys, timeout=20)
    assert_error(r, 2, str(source))
    assert list(keys.iterdir()) == [], "a key was written without its passphrase"


def test_keys_new_passphrase_file_too_long_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * (1024 * 1024))
    r = run("keys", "new", "site", "--passphrase-file", big, "-d", tmp_path, timeout=20)
    assert_error(r, 2, str(big), "larger than 65,536 bytes: not a passphrase file")
    assert not (tmp_path / "site.key").exists()


def test_keys_new_passphrase_file_still_works(tmp_path: Path) -> None:
    secret = tmp_path / "pass"
    secret.write_bytes(b"correct horse\n")
    r = run("keys", "new", "site", "--passphrase-file", secret, "-d", tmp_path, timeout=30)
    assert r.code == 0 and "encrypted" in r.out and "NOT" not in r.out, r


def test_simulate_huge_match_count_is_refused_at_once(tmp_path: Path) -> None:
    r = run("simulate", "--matches", HUGE, "-o", tmp_path / "sim", timeout=20)
    assert_error(r, 2, "--matches")
    assert not (tmp_path / "sim").exists()
