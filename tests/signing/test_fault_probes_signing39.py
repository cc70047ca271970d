"""Fault probes 39, signing: who signed a log, key files of the wrong shape, key ids in capitals.

Before: the audit's signing line named only the key the match start records ("287 signatures
by key A") even when another key made every record, or several keys made them, and a start
recording no key gave "by key None". A private key file that is empty, raw key bytes, DER, a
PEM cut short or a certificate was "not a PEM private key, or a wrong passphrase", though no
passphrase was given. A published key whose id is written in capitals was refused as one whose
"key id does not match the public key" (receipts and revoked files take capitals).
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from cryptography.hazmat.primitives import serialization as ser
from cryptography.hazmat.primitives.asymmetric import ed25519

from buraco_log.signing.keys import Signer, SigningError, load_keyring, load_signer
from tests.cli.probes import cli, one_error_line
from tests.signing.helpers import audit, match, write_signed_by

ROOT = Path(__file__).resolve().parents[2]
A, B = Signer.generate(), Signer.generate()


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("keys")
    for name, s in (("a", A), ("b", B)):
        (d / f"{name}.pub").write_bytes(msgspec.json.encode(s.public()))
    return d


def _signing_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("  signing     "))


def test_a_log_whose_records_another_key_made_names_that_key(tmp_path: Path, keys: Path) -> None:
    events = match(key_id=A.key_id)
    path = write_signed_by(tmp_path / "b.blog", events, {e.seq: B for e in events})
    r = cli("audit", path, "--keys", keys)
    assert r.returncode == 1, r.stdout + r.stderr
    line = _signing_line(r.stdout)
    assert (f"{len(events)} signatures by key {B.key_id} (the match start records key "
            f"{A.key_id}), the last after seq {events[-1].seq}; NOT verified") in line, line
    assert "[sign.key_mismatch]" in r.stdout


def test_a_log_signed_by_two_keys_names_each_with_its_count(tmp_path: Path, keys: Path) -> None:
    events = match(key_id=A.key_id)
    path = write_signed_by(tmp_path / "ab.blog", events,
                      {e.seq: A if e.seq <= 100 else B for e in events})
    r = cli("audit", path, "--keys", keys)
    line = _signing_line(r.stdout)
    assert (f"signatures by 2 keys ({A.key_id}: 101, {B.key_id}: {len(events) - 101}; the "
            f"match start records key {A.key_id})") in line, line
    got = json.loads(cli("audit", path, "-f", "json").stdout)["signing"]
    assert got["signers"] == {A.key_id: 101, B.key_id: len(events) - 101}
    assert got["key_id"] == A.key_id


def test_a_start_recording_no_key_names_the_key_that_signed(tmp_path: Path) -> None:
    events = match(key_id=None)
    path = write_signed_by(tmp_path / "none.blog", events, {events[-1].seq: A})
    r = cli("audit", path)
    assert "by key None" not in r.stdout, r.stdout
    assert (f"1 signature by key {A.key_id} (the match start records no key)"
            in _signing_line(r.stdout))
    note = next(n for n in r.stdout.splitlines() if "not verified: no trusted keys" in n)
    assert f"by key {A.key_id} (the match start records no key)" in note


def test_a_log_its_own_key_signed_is_summed_up_as_before(tmp_path: Path) -> None:
    events = match(key_id=A.key_id)
    path = write_signed_by(tmp_path / "a.blog", events, {e.seq: A for e in events[::50]})
    v = audit(path)
    assert v.signing.by_whom() == f"by key {A.key_id}"
    assert v.signing.signers == {A.key_id: len(events[::50])}


def _pem(key: ed25519.Ed25519PrivateKey, enc: ser.KeySerializationEncryption) -> bytes:
    return key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8, enc)


_KEY = ed25519.Ed25519PrivateKey.generate()
_HINT = "buraco-log reads PEM PKCS #8 keys, as 'buraco-log keys new' writes them"


@pytest.mark.parametrize(("content", "why"), [
    (b"", "an empty file: no private key in it"),
    (b"\n\n", "an empty file: no private key in it"),
    (_KEY.private_bytes_raw(), f"32 bytes without PEM armour (a raw key?): {_HINT}"),
    (_KEY.private_bytes_raw().hex().encode() + b"\n",
     f"64 hex digits without PEM armour (a raw key?): {_HINT}"),
    (_KEY.private_bytes(ser.Encoding.DER, ser.PrivateFormat.PKCS8, ser.NoEncryption()),
     f"a binary (DER) file, not PEM: {_HINT}"),
    (bytes(range(256)) * 4, f"no '-----BEGIN' line: not a PEM file: {_HINT}"),
    (_pem(_KEY, ser.NoEncryption())[:60], "a damaged PEM private key: its armour is there, "
     "but what it holds does not decode (cut short, or changed)"),
    (b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
     f"a PEM 'CERTIFICATE', not a private key: {_HINT}"),
    (b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n",
     "a damaged PEM encrypted private key: its armour is there, but what it holds does not "
     "decode (cut short, or changed)"),
], ids=["empty", "blank", "raw", "raw-hex", "der", "binary", "cut", "certificate",
        "encrypted-damaged"])
def test_a_private_key_of_the_wrong_shape_says_what_it_is(
        tmp_path: Path, content: bytes, why: str) -> None:
    path = tmp_path / "site.key"
    path.write_bytes(content)
    path.chmod(0o600)
    with pytest.raises(SigningError) as exc:
        load_signer(path)  # no passphrase given: "or a wrong passphrase" was never the cause
    assert str(exc.value) == f"{path}: {why}"


def test_a_wrong_passphrase_is_still_named_so(tmp_path: Path) -> None:
    path = tmp_path / "site.key"
    path.write_bytes(_pem(_KEY, ser.BestAvailableEncryption(b"right")))
    path.chmod(0o600)
    with pytest.raises(SigningError, match="a wrong passphrase: it does not open the key"):
        load_signer(path, b"wrong")
    assert load_signer(path, b"right").public_key == _KEY.public_key().public_bytes_raw()


def test_a_published_key_whose_id_is_in_capitals_is_trusted(tmp_path: Path) -> None:
    events = match(key_id=A.key_id)
    path = write_signed_by(tmp_path / "a.blog", events, {events[-1].seq: A})
    pub = tmp_path / "a.pub"
    pub.write_bytes(msgspec.json.encode(msgspec.structs.replace(
        A.public(), key_id=A.key_id.upper())))
    ring = load_keyring([pub])
    assert list(ring.keys) == [A.key_id]
    r = cli("audit", path, "--keys", pub)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"1 signature by key {A.key_id}, the last after seq {events[-1].seq}; verified" in (
        _signing_line(r.stdout))


def test_a_published_key_whose_id_is_not_its_key_is_still_refused(tmp_path: Path) -> None:
    pub = tmp_path / "a.pub"
    pub.write_bytes(msgspec.json.encode(msgspec.structs.replace(A.public(), key_id=B.key_id)))
    line = one_error_line(cli("audit", ROOT / "examples/format/v2.blog", "--keys", pub), 2)
    assert line.endswith(f"{pub}: key {B.key_id}: the key id does not match the public key")
