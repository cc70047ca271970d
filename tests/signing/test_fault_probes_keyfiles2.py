"""Key and receipt files in forms a site or a player plausibly hands over by mistake.

A PEM public key (``openssl pkey -pubout``) given as a trusted key, and a published key or a
receipt saved by an editor that writes a byte order mark, were refused as "not JSON: JSON is
malformed: invalid character (byte 1)". They are still refused (exit 2), saying what the file
is and what to give instead. A malformed private key is named and refused, whatever its form.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from cryptography.hazmat.primitives import serialization as ser
from cryptography.hazmat.primitives.asymmetric import ed25519

from buraco_log.signing.keys import SigningError, load_keyring, load_signer, write_key_pair
from buraco_log.signing.record import Receipt, receipt_json
from tests.signing.helpers import match, write_signed

ROOT = Path(__file__).resolve().parents[2]
BOM = b"\xef\xbb\xbf"


def _audit(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "audit", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("keyfiles")
    files = write_key_pair(d / "keys", "site")
    signer = load_signer(files.private)
    receipts = write_signed(d / "m.blog", match(key_id=signer.key_id), signer, receipts_at=[40])
    (d / "r40.json").write_bytes(receipt_json(Receipt.of(receipts[40], seat=1)))
    return d


def _one_error_line(r: subprocess.CompletedProcess[str], path: Path) -> str:
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"buraco-log: error: {path}: "), lines
    return lines[0]


def test_a_pem_public_key_is_named_as_such(site: Path, tmp_path: Path) -> None:
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    pem = tmp_path / "site.pub"
    pem.write_bytes(key.public_bytes(ser.Encoding.PEM, ser.PublicFormat.SubjectPublicKeyInfo))
    line = _one_error_line(_audit(site / "m.blog", "--keys", pem), pem)
    assert "a PEM file, not a buraco-log published key" in line
    assert "buraco-log keys new" in line


def test_a_published_key_with_a_byte_order_mark_says_so(site: Path, tmp_path: Path) -> None:
    pub = tmp_path / "site.pub"
    pub.write_bytes(BOM + (site / "keys" / "site.pub").read_bytes())
    line = _one_error_line(_audit(site / "m.blog", "--keys", pub), pub)
    assert "starts with a byte order mark (EF BB BF)" in line
    with pytest.raises(SigningError, match="byte order mark"):
        load_keyring([tmp_path])  # in a directory too


def test_a_receipt_with_a_byte_order_mark_says_so(site: Path, tmp_path: Path) -> None:
    receipt = tmp_path / "r.json"
    receipt.write_bytes(BOM + (site / "r40.json").read_bytes())
    line = _one_error_line(_audit(site / "m.blog", "--keys", site / "keys", "--receipt", receipt),
                           receipt)
    assert "starts with a byte order mark (EF BB BF): a receipt is UTF-8 JSON" in line


def test_the_files_as_written_are_taken(site: Path) -> None:
    r = _audit(site / "m.blog", "--keys", site / "keys", "--receipt", site / "r40.json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified; 1 receipt checked" in r.stdout


@pytest.mark.parametrize(("content", "passphrase", "why"), [
    (b"", None, "an empty file: no private key in it"),
    (bytes(range(256)) * 4, None, "no '-----BEGIN' line: not a PEM file: buraco-log reads PEM "
     "PKCS #8 keys, as 'buraco-log keys new' writes them"),
    (b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", None,
     "a damaged PEM private key: its armour is there, but what it holds does not decode (cut "
     "short, or changed)"),
], ids=["empty", "binary", "bad-pem"])
def test_a_malformed_private_key_is_one_line_naming_it(
        tmp_path: Path, content: bytes, passphrase: bytes | None, why: str) -> None:
    path = tmp_path / "site.key"
    path.write_bytes(content)
    with pytest.raises(SigningError) as exc:
        load_signer(path, passphrase)
    assert str(exc.value) == f"{path}: {why}"


def test_an_encrypted_key_with_a_wrong_or_missing_passphrase(tmp_path: Path) -> None:
    files = write_key_pair(tmp_path, "enc", passphrase=b"right")
    with pytest.raises(SigningError, match="the key is encrypted: give its passphrase"):
        load_signer(files.private)
    with pytest.raises(SigningError, match="a wrong passphrase: it does not open the key"):
        load_signer(files.private, b"wrong")
    assert load_signer(files.private, b"right").key_id == files.key_id


def test_an_empty_key_or_receipt_file_says_it_is_empty(site: Path, tmp_path: Path) -> None:
    empty = tmp_path / "site.pub"
    empty.write_bytes(b"\n")
    line = _one_error_line(_audit(site / "m.blog", "--keys", empty), empty)
    assert line.endswith(": an empty file: no published key in it")
    receipt = tmp_path / "r.json"
    receipt.write_bytes(b"")
    line = _one_error_line(_audit(site / "m.blog", "--keys", site / "keys", "--receipt", receipt),
                           receipt)
    assert line.endswith(": an empty file: no receipt in it")


@pytest.mark.parametrize(("field", "value", "why"), [
    ("head", "abcd", "head or signature has the wrong length - at `$[2]`"),
    ("signature", "zz" * 64, "head and signature must be hexadecimal - at `$[2]`"),
    ("seq", -1, "seq -1 is out of range - at `$[2]`"),
])
def test_a_bad_receipt_in_an_array_is_named_by_its_place(
        site: Path, tmp_path: Path, field: str, value: object, why: str) -> None:
    good = json.loads((site / "r40.json").read_text())
    bad = {**good, field: value}
    receipts = tmp_path / "all.json"
    receipts.write_text(json.dumps([good, good, bad]))
    line = _one_error_line(_audit(site / "m.blog", "--keys", site / "keys", "--receipt",
                                  receipts), receipts)
    assert line == f"buraco-log: error: {receipts}: not a buraco-log receipt: {why}"
