"""Fault probes of signing: hostile key files, keyrings and receipts given to `audit`, in real
subprocesses with a timeout (a hang fails instead of blocking the run).

Every bad file is one line on stderr naming it, exit 2, no traceback: never a hang on a FIFO or
a device, never a recursion error on deep nesting."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.log.cli_run import EXAMPLES, assert_error, run

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


def _ring_dir(tmp_path: Path, revoked: str | None = None) -> Path:
    ring = tmp_path / "ring"
    ring.mkdir()
    shutil.copy(PUB, ring)
    if revoked is not None:
        (ring / "revoked").write_text(revoked)
    return ring


def _key_id() -> str:
    return str(json.loads(PUB.read_bytes())["key_id"])


@pytest.mark.parametrize("spelling", [str.upper, lambda k: f"  {k}\t# leaked\r"],
                         ids=["capitals", "spaces"])
def test_a_revoked_key_id_in_capitals_or_with_spaces_still_revokes(tmp_path: Path,
                                                                   spelling: Any) -> None:
    ring = _ring_dir(tmp_path, spelling(_key_id()) + "\n")
    r = run("audit", SIGNED, "--keys", ring, "-q", timeout=60)
    assert r.code == 1, r
    assert "[sign.revoked]" in r.out, r.out


def test_a_revoked_line_that_is_not_a_key_id_is_an_error_naming_file_and_line(
        tmp_path: Path) -> None:
    ring = _ring_dir(tmp_path, f"# retired keys\n\n{_key_id()} leaked in March\n")
    assert_error(run("audit", SIGNED, "--keys", ring, timeout=30), 2,
                 f"{ring / 'revoked'}, line 3", "not a key id")


def test_a_keyring_files_revoked_list_is_read_in_any_case(tmp_path: Path) -> None:
    ring = tmp_path / "ring.json"
    ring.write_bytes(b'{"keys": [' + PUB.read_bytes() + b'], "revoked": ["'
                     + _key_id().upper().encode() + b'"]}')
    r = run("audit", SIGNED, "--keys", ring, "-q", timeout=60)
    assert r.code == 1 and "[sign.revoked]" in r.out, r


def test_a_bad_published_key_is_named_by_its_file(tmp_path: Path) -> None:
    data = json.loads(PUB.read_bytes())
    bad = tmp_path / "bad.pub"
    bad.write_text(json.dumps(dict(data, key_id="0000000000000000")))
    assert_error(run("audit", SIGNED, "--keys", bad, timeout=30), 2, str(bad),
                 "does not match the public key")
    bad.write_text(json.dumps(dict(data, valid_from="yesterday")))
    assert_error(run("audit", SIGNED, "--keys", bad, timeout=30), 2, str(bad), "malformed")


def test_one_key_published_twice_with_different_windows_is_refused_whatever_the_order(
        tmp_path: Path) -> None:
    ring = _ring_dir(tmp_path)
    data = json.loads(PUB.read_bytes())
    other = tmp_path / "later.pub"
    other.write_text(json.dumps(dict(data, valid_from="2099-01-01T00:00:00+00:00")))
    for order in ([ring, other], [other, ring]):
        args = [a for p in order for a in ("--keys", p)]
        assert_error(run("audit", SIGNED, *args, timeout=30), 2, _key_id(), "published twice")
    (tmp_path / "same.pub").write_bytes(PUB.read_bytes())  # the same key twice is fine
    r = run("audit", SIGNED, "--keys", ring, "--keys", tmp_path / "same.pub", "-q")
    assert r.code == 0, r


def _receipt(seq_index: int = 0) -> dict[str, Any]:
    """A real receipt of the signed example log: one of its own signature records."""
    from buraco_log import log
    from buraco_log.signing.record import Receipt, receipt_json

    with log.Reader(SIGNED) as reader:
        for _ in reader:
            pass
        signed = reader.signatures[seq_index]
    return dict(json.loads(receipt_json(Receipt.of(signed, seat=1))))


def test_a_real_receipt_of_the_example_log_checks_clean(tmp_path: Path) -> None:
    good = tmp_path / "r.json"
    good.write_text(json.dumps(_receipt(3)))
    r = run("audit", SIGNED, "--keys", PUB, "--receipt", good, "-q", timeout=60)
    assert r.code == 0, r


@pytest.mark.parametrize("content, words", [
    (lambda r: dict(r, receipt=2), "receipt format 2"),
    (lambda r: [], "holds no receipt"),
], ids=["future-format", "empty-list"])
def test_a_receipt_of_a_newer_format_or_an_empty_list_is_refused(tmp_path: Path, content: Any,
                                                                 words: str) -> None:
    # a receipt format this buraco_log does not know may mean something else; an empty file
    # checked nothing: both passed as clean
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps(content(_receipt(3))))
    assert_error(run("audit", SIGNED, "--keys", PUB, "--receipt", bad, timeout=60), 2,
                 str(bad), words)


# -- keys new --------------------------------------------------------------------------------


@pytest.mark.parametrize("args, words", [
    (["--valid-from", "2027-01-01", "--valid-until", "2026-01-01"], "valid for no match"),
    (["--valid-from", "notadate"], "not an ISO 8601"),
], ids=["empty-window", "bad-date"])
def test_keys_new_with_a_bad_window_is_a_usage_error_and_writes_nothing(
        tmp_path: Path, args: list[str], words: str) -> None:
    # a window that holds no time made a key valid for no match, with exit 0
    assert_error(run("keys", "new", "site", "-d", tmp_path, *args), 2, words)
    assert list(tmp_path.iterdir()) == []


def test_keys_new_into_a_file_says_it_is_not_a_directory(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    assert_error(run("keys", "new", "site", "-d", plain), 2, str(plain), "not a directory")


def test_a_published_key_whose_window_holds_no_time_is_refused(tmp_path: Path) -> None:
    data = json.loads(PUB.read_bytes())
    bad = tmp_path / "bad.pub"
    bad.write_text(json.dumps(dict(data, valid_from="2027-01-01", valid_until="2026-01-01")))
    assert_error(run("audit", SIGNED, "--keys", bad, timeout=30), 2, str(bad),
                 "valid for no match")


def test_junk_beside_the_keys_is_skipped(tmp_path: Path) -> None:
    # an editor's lock file (.#site.pub, a dangling link) made the whole keyring unreadable
    ring = _ring_dir(tmp_path)
    (ring / "README").write_text("the site's keys\n")
    (ring / "v2.pub.bak").write_text("junk")
    (ring / ".#v2.pub").symlink_to("someone@host.1234")
    (ring / ".v2.pub.swp").write_bytes(b"\x00junk")
    r = run("audit", SIGNED, "--keys", ring, "-q", timeout=60)
    assert r.code == 0, r


def test_a_json_lines_signature_with_a_huge_match_id_is_refused_as_the_binary_one_is(
        tmp_path: Path) -> None:
    # it verified clean, then convert failed naming its own output, and audit --keys said
    # 'unreadable: ValueError'
    lines = (EXAMPLES / "format" / "v2.jsonl").read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(b'{"log": "signature"'))
    lines[at] = json.dumps(dict(json.loads(lines[at]), match_id="x" * 70_000)).encode()
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join(lines))
    assert_error(run("verify", path), 1, f"{path}, line {at + 1}", "over the limit of 1024")
    r = run("audit", path, "--keys", PUB)
    assert r.code == 1 and "ValueError" not in r.out and "Traceback" not in r.err, r


def test_the_keyring_says_why_a_head_no_site_can_sign_fails_instead_of_raising() -> None:
    from buraco_log.signing.keys import load_keyring
    from buraco_log.signing.record import SignedHead

    ring = load_keyring([str(PUB)])
    signed = SignedHead("x" * 70_000, 3, b"\0" * 32, _key_id(), b"\0" * 64)
    why = ring.check(signed, None)
    assert why is not None and "can cover this head" in why


def test_keys_new_passphrase_file_uses_its_first_line_only(tmp_path: Path) -> None:
    # the help says the first line; the whole file (newlines and all) was the passphrase
    from buraco_log.signing.keys import load_signer

    pw = tmp_path / "pw"
    pw.write_bytes(b"correct horse\r\nsecond line\n")
    r = run("keys", "new", "site", "-d", tmp_path / "k", "--passphrase-file", pw)
    assert r.code == 0, r
    assert load_signer(tmp_path / "k" / "site.key", b"correct horse").key_id


@pytest.mark.parametrize("content", [b"", b"\n", b"\r\nsecret\n"], ids=["empty", "nl", "later"])
def test_keys_new_with_an_empty_passphrase_line_refuses_rather_than_not_encrypting(
        tmp_path: Path, content: bytes) -> None:
    pw = tmp_path / "pw"
    pw.write_bytes(content)
    assert_error(run("keys", "new", "site", "-d", tmp_path / "k", "--passphrase-file", pw), 2,
                 str(pw), "first line is empty")
    assert not (tmp_path / "k").exists()
