"""Fault probes of signing: hostile key files, keyrings and receipts given to `audit`, in real
subprocesses with a timeout (a hang fails instead of blocking the run).

Every bad file is one line on stderr naming it, exit 2, no traceback: never a hang on a FIFO or
a device, never a recursion error on deep nesting."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.log.test_fault_probes_log import EXAMPLES, assert_error, run

pytest.importorskip("cryptography")

SIGNED = EXAMPLES / "format" / "v2.blog"
PUB = EXAMPLES / "format" / "v2.pub"
DEEP_ARRAY = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 100_000 + b"1" + b"}" * 100_000


@pytest.mark.parametrize("content", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
@pytest.mark.parametrize("where", ["receipt", "key file", "keyring member"])
def test_deeply_nested_json_in_a_key_or_receipt_is_one_line(tmp_path: Path, content: bytes,
                                                            where: str) -> None:
    bad = tmp_path / "deep.pub"
    bad.write_bytes(content)
    if where == "receipt":
        args = ["--keys", PUB, "--receipt", bad]
    elif where == "key file":
        args = ["--keys", bad]
    else:
        ring = tmp_path / "ring"
        ring.mkdir()
        shutil.copy(PUB, ring)
        bad = bad.rename(ring / "deep.pub")
        args = ["--keys", ring]
    assert_error(run("audit", SIGNED, *args, timeout=30), 2, str(bad))


@pytest.mark.parametrize("where", ["receipt", "key file", "keyring member", "revoked"])
def test_a_fifo_as_a_key_or_receipt_is_refused_at_once(tmp_path: Path, where: str) -> None:
    ring = tmp_path / "ring"
    ring.mkdir()
    shutil.copy(PUB, ring)
    fifo = ring / {"receipt": "r.json", "key file": "k.pub", "keyring member": "evil.pub",
                   "revoked": "revoked"}[where]
    os.mkfifo(fifo)
    args = {"receipt": ["--keys", PUB, "--receipt", fifo], "key file": ["--keys", fifo],
            "keyring member": ["--keys", ring], "revoked": ["--keys", ring]}[where]
    r = run("audit", SIGNED, *args, timeout=20)
    assert_error(r, 2, str(fifo), "not a regular file (a FIFO)")


@pytest.mark.parametrize("option", ["--keys", "--receipt"])
def test_a_device_as_a_key_or_receipt_is_refused_not_read_forever(option: str) -> None:
    args = ["--keys", "/dev/zero"] if option == "--keys" else [
        "--keys", PUB, "--receipt", "/dev/zero"]
    assert_error(run("audit", SIGNED, *args, timeout=20), 2, "/dev/zero", "not a regular file")


def test_a_huge_key_file_is_refused_by_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.pub"
    big.write_bytes(b" " * (2 << 20) + PUB.read_bytes())
    assert_error(run("audit", SIGNED, "--keys", big, timeout=20), 2, str(big), "larger than")


def test_a_keyring_file_holding_keys_still_reads(tmp_path: Path) -> None:
    ring = tmp_path / "ring.json"
    ring.write_bytes(b'{"keys": [' + PUB.read_bytes() + b'], "revoked": []}')
    r = run("audit", SIGNED, "--keys", ring, "-q", timeout=60)
    assert r.code == 0, r
    assert "Traceback" not in r.err
