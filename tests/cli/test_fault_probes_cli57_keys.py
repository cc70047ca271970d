"""`keys new --overwrite` names its two files one after the other: a kill between the two
left the new private key beside the old published one, and nothing noticed (logs signed with
it failed verification at the referee's). The loader of a key pair now refuses such a pair,
naming both files."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from buraco_log.signing.keys import SigningError, load_signer, write_key_pair
from tests.command_line import EXE, run

pytest.importorskip("cryptography")


def test_a_key_beside_the_published_half_of_another_key_is_refused_naming_both(
        tmp_path: Path) -> None:
    mine = write_key_pair(tmp_path, "site")
    other = write_key_pair(tmp_path / "other", "site")
    shutil.copyfile(other.public, mine.public)  # what a cut-short --overwrite leaves
    with pytest.raises(SigningError) as caught:
        load_signer(mine.private)
    line = str(caught.value)
    assert "\n" not in line
    assert mine.private in line and mine.public in line
    assert mine.key_id in line and other.key_id in line


def test_a_matching_pair_and_a_key_with_no_published_key_beside_it_load(tmp_path: Path) -> None:
    files = write_key_pair(tmp_path, "site", valid_from="2026-01-01")
    assert load_signer(files.private).key_id == files.key_id
    os.unlink(files.public)  # a site may keep its published key elsewhere
    assert load_signer(files.private).key_id == files.key_id


def _strace_works() -> bool:
    strace = shutil.which("strace")
    if strace is None:
        return False
    probe = subprocess.run([strace, "-qq", "-o", os.devnull, "true"], capture_output=True,
                           check=False)
    return probe.returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(EXE is None or not _strace_works(), reason="needs strace (ptrace allowed)"
                    " and the installed buraco-log")
def test_a_keys_new_overwrite_killed_between_its_two_renames_leaves_a_pair_the_loader_refuses(
        tmp_path: Path) -> None:
    assert run("keys", "new", "site", "--dir", tmp_path).code == 0
    before = load_signer(tmp_path / "site.key").key_id
    # SIGKILL at the second rename: the new NAME.key is in place, the new NAME.pub is not
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", COLUMNS="200")  # no .pyc renames
    killed = subprocess.run(
        ["strace", "-f", "-qq", "-o", os.devnull, "-e", "trace=rename,renameat,renameat2",
         "-e", "inject=rename,renameat,renameat2:signal=KILL:when=2",
         str(EXE), "keys", "new", "site", "--dir", str(tmp_path), "--overwrite"],
        capture_output=True, env=env, timeout=60, check=False)
    assert killed.returncode in (-9, 137), killed
    with pytest.raises(SigningError, match=r"site\.pub") as caught:
        load_signer(tmp_path / "site.key")
    assert before in str(caught.value)  # the old published key, still beside the new one
    # the remedy the line gives: the pair made again, whole
    assert run("keys", "new", "site", "--dir", tmp_path, "--overwrite").code == 0
    assert load_signer(tmp_path / "site.key").key_id != before


@pytest.mark.slow
@pytest.mark.skipif(EXE is None or not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_keys_new_whose_report_meets_a_full_stdout_says_the_pair_was_made(tmp_path: Path) -> None:
    # a backend took exit 1 and "<stdout>: No space left on device" for "no key", and its
    # retry met "already exists"
    with open("/dev/full", "wb") as full:
        p = subprocess.run([str(EXE), "keys", "new", "site", "--dir", str(tmp_path), "-f", "json"],
                           stdout=full, stderr=subprocess.PIPE, timeout=60, check=False)
    assert p.returncode == 1
    line = p.stderr.decode()
    assert line.count("\n") == 1 and "No space left on device" in line
    made = load_signer(tmp_path / "site.key")
    assert f"the key pair was made all the same: key {made.key_id}" in line
    assert str(tmp_path / "site.pub") in line
