"""Probe 42 (lead): a keyring path that is a loop of symbolic links is named for what it is;
a raw private key whose first byte is '{' is not taken for a published key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log.signing.keys import SigningError, load_keyring, load_signer

REPO = Path(__file__).resolve().parents[2]


def test_a_loop_of_links_as_a_key_path_says_so(tmp_path: Path) -> None:
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    with pytest.raises(SigningError, match=r"a: Too many levels of symbolic links$"):
        load_keyring([tmp_path / "a"])  # it said "no such file or directory"
    with pytest.raises(SigningError, match=r"nothere: No such file or directory$"):
        load_keyring([tmp_path / "nothere"])


def test_audit_names_the_loop_in_one_line(tmp_path: Path) -> None:
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "audit", str(REPO / "examples" / "format" / "v2.blog"),
         "--keys", str(tmp_path / "a")], capture_output=True, text=True, cwd=REPO)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    loop = tmp_path / "a"
    assert done.stderr == f"buraco-log: error: {loop}: Too many levels of symbolic links\n"


def test_a_raw_key_starting_with_a_brace_is_a_raw_key_not_a_published_one(
        tmp_path: Path) -> None:
    """1 random key in 256 starts with '{': it was "a published key (NAME.pub)" (a flaky CI
    run of the round-39 probe, whose key is generated afresh)."""
    path = tmp_path / "site.key"
    path.write_bytes(b"{" + bytes(range(0x80, 0x80 + 31)))  # 32 bytes, no UTF-8 text
    path.chmod(0o600)
    with pytest.raises(SigningError, match=r"site\.key: 32 bytes without PEM armour"):
        load_signer(path)
    path.write_bytes(b'{"key_id": ')  # a published key, cut: still said to be one
    with pytest.raises(SigningError, match=r"site\.key: a published key \(NAME\.pub\)"):
        load_signer(path)
