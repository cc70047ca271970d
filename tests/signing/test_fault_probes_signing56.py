"""A site key's life over years: many published keys, keys dropped from a later key list,
revoked keys, one key twice in a keyring file.

Before: every published key was checked twice (as its file was read, and again by the
Keyring), each time with three point doublings of two modular inverses each to find a key of
small order, so 100,000 `.pub` files took over a minute of CPU time to load; a player's receipt
whose key a referee's (later, rewritten) key list no longer held was "not a valid signature of
the site", as a forged one is, and a revoked key's receipt the same, with no word of why; one
key twice in one keyring file "depended on the order the files are read" and was "also in"
that same file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log.signing import keys
from buraco_log.signing.keys import Keyring, PublicKey, Signer, SigningError, load_keyring
from buraco_log.signing.record import Receipt, SignedHead, key_id_of, receipt_json
from tests.signing.helpers import audit, held, match, rules_of, write_signed

ROOT = Path(__file__).resolve().parents[2]
OLD, NEW = Signer.generate(), Signer.generate()  # the site's key, and the one it rotated to


def _pub_dir(path: Path, signers: list[Signer]) -> Path:
    path.mkdir()
    for i, s in enumerate(signers):
        (path / f"k{i:06d}.pub").write_bytes(msgspec.json.encode(s.public()))
    return path


# -- many keys -----------------------------------------------------------------------------


def test_each_published_key_is_checked_once_as_it_is_read(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    signers = [Signer.generate() for _ in range(20)]
    ring = _pub_dir(tmp_path / "keys", signers)
    real, seen = keys.key_problem, []

    def counted(k: PublicKey) -> str | None:
        seen.append(k.key_id)
        return real(k)

    monkeypatch.setattr(keys, "key_problem", counted)
    loaded = load_keyring([ring])
    assert set(loaded.keys) == {s.key_id for s in signers}
    assert sorted(seen) == sorted(s.key_id for s in signers)  # it was each twice


def test_a_published_key_costs_one_modular_exponentiation(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """The small-order check was three doublings with two modular inverses each (six costly
    `pow`s beside the one that decodes the point): 10^5 keys took minutes."""
    costly = 0

    def counted(base: int, exp: int, mod: int | None = None) -> int:
        nonlocal costly
        if mod is not None and (exp < 0 or exp > 1 << 16):
            costly += 1
        return pow(base, exp, mod)

    monkeypatch.setattr(keys, "pow", counted, raising=False)
    genuine = [Signer.generate().public() for _ in range(10)]
    assert all(keys.key_problem(k) is None for k in genuine)
    assert costly <= len(genuine), costly


def _double8_is_identity(raw: bytes) -> bool:
    """[8]P is the identity: the reference the set lookup replaced (affine Edwards
    doubling), for the points it was asked of."""
    p = 2**255 - 19
    d = -121665 * pow(121666, -1, p) % p
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    u, v = (y * y - 1) % p, (d * y * y + 1) % p
    x = u * pow(v, 3, p) * pow(u * pow(v, 7, p), (p - 5) // 8, p) % p
    if (v * x * x - u) % p:
        x = x * pow(2, (p - 1) // 4, p) % p
    assert (v * x * x - u) % p == 0
    if x % 2 != raw[31] >> 7:
        x = p - x
    for _ in range(3):
        xx, yy, xy = x * x % p, y * y % p, x * y % p
        t = d * xx * yy % p
        x, y = 2 * xy * pow(1 + t, -1, p) % p, (yy + xx) * pow(1 - t, -1, p) % p
    return x == 0 and y == 1


SMALL_ORDER = ["00" * 32, "00" * 31 + "80", "01" + "00" * 31, "ec" + "ff" * 30 + "7f",
               "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
               "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
               "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
               "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"]


@pytest.mark.parametrize("point", SMALL_ORDER)
def test_every_point_of_small_order_is_refused(point: str) -> None:
    raw = bytes.fromhex(point)
    assert _double8_is_identity(raw)  # the eight are the whole torsion subgroup
    why = keys.key_problem(PublicKey(key_id_of(raw), point))
    assert why is not None and "small order" in why, why


def test_genuine_keys_are_no_points_of_small_order() -> None:
    for _ in range(8):
        s = Signer.generate()
        assert not _double8_is_identity(s.public_key)
        assert keys.key_problem(s.public()) is None


def test_one_key_twice_in_one_keyring_file_is_said_of_its_entries(tmp_path: Path) -> None:
    public = msgspec.json.decode(msgspec.json.encode(OLD.public()))
    ring = tmp_path / "ring.json"
    ring.write_text(json.dumps({"keys": [public, {**public, "valid_until": "2027-01-01"}]}))
    with pytest.raises(SigningError) as err:
        load_keyring([ring])
    said = str(err.value)
    assert said.startswith(f"{ring}: key {OLD.key_id} is published twice"), said
    assert "its entries are read (both in this file)" in said and "also in" not in said, said
    # the same key twice alike is read once
    ring.write_text(json.dumps({"keys": [public, public]}))
    assert list(load_keyring([ring]).keys) == [OLD.key_id]


def test_one_key_and_window_written_two_ways_is_one_key(tmp_path: Path) -> None:
    """A key list republished by another tool: the same bound as a date and as its midnight
    in UTC, the key's hex in capitals. It was "published twice with different validity
    windows", and the referee could not load the site's own keys."""
    first = tmp_path / "2026" / "site.pub"
    first.parent.mkdir()
    first.write_bytes(msgspec.json.encode(OLD.public(None, "2027-01-01")))
    public = msgspec.json.decode(msgspec.json.encode(OLD.public(None, "2027-01-01")))
    for again in ({**public, "valid_until": "2027-01-01T00:00:00Z"},
                  {**public, "valid_until": "2027-01-01T01:00:00+01:00"},
                  {**public, "public_key": public["public_key"].upper()}):
        ring = tmp_path / "later.json"
        ring.write_text(json.dumps({"keys": [again]}))
        loaded = load_keyring([first, ring])
        assert list(loaded.keys) == [OLD.key_id]
        assert loaded.keys[OLD.key_id].window() == (None, keys._ms("2027-01-01"))
        ring.write_text(json.dumps({"keys": [public, again]}))  # in one file too
        assert list(load_keyring([ring]).keys) == [OLD.key_id]
    # a window that differs by a millisecond is still refused
    ring.write_text(json.dumps({"keys": [{**public, "valid_until": "2027-01-01T00:00:00.001Z"}]}))
    with pytest.raises(SigningError, match="published twice with different validity windows"):
        load_keyring([first, ring])


# -- receipts judged years later -------------------------------------------------------------


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[int, SignedHead]]:
    """A log the site signed with OLD, and the receipts it handed out at seqs 10 and 20."""
    path = tmp_path_factory.mktemp("old") / "m.blog"
    receipts = write_signed(path, match(key_id=OLD.key_id), OLD, sign_at="end", batch=1000,
                            receipts_at=[10, 20])
    return path, receipts


def _forged(r: SignedHead) -> SignedHead:
    return msgspec.structs.replace(r, signature=bytes(64))


def test_a_receipt_by_a_key_left_out_of_a_later_key_list_cannot_be_checked(
        signed: tuple[Path, dict[int, SignedHead]]) -> None:
    path, receipts = signed
    # the site's key list, rewritten years later: the old key left out
    v = audit(path, Keyring([NEW.public()]), [held(receipts[10], 0), held(_forged(receipts[20]))])
    assert rules_of(v) == ["sign.untrusted", "sign.receipt_invalid", "sign.receipt_invalid"]
    for f in v.findings[1:]:
        # a key the referee does not hold says nothing of the signature: the genuine receipt
        # and the forged one both read "not a valid signature", as of a forgery
        assert "not a valid signature" not in f.message, f.message
        assert f"cannot be checked: key {OLD.key_id} is not among the trusted keys" in f.message
        assert "NAME.pub" in f.message
    # with the old key published, the genuine receipt holds and the forged one is said so
    v = audit(path, Keyring([OLD.public(), NEW.public()]),
              [held(receipts[10], 0), held(_forged(receipts[20]))])
    assert rules_of(v) == ["sign.receipt_invalid"] and v.findings[0].seq == 20
    said = v.findings[0].message
    assert "is not a valid signature of the site: the signature does not verify" in said


def test_a_revoked_keys_receipt_says_why_it_proves_nothing(
        signed: tuple[Path, dict[int, SignedHead]]) -> None:
    path, receipts = signed
    v = audit(path, Keyring([OLD.public(), NEW.public()], [OLD.key_id]), [held(receipts[10])])
    assert rules_of(v) == ["sign.revoked", "sign.receipt_invalid"]
    said = v.findings[1].message
    assert f"key {OLD.key_id} is revoked" in said
    assert "not a valid signature" not in said and "a revocation has no date" in said, said


@pytest.mark.slow
def test_the_referee_reads_an_unchecked_receipt_alike_in_text_and_json(
        signed: tuple[Path, dict[int, SignedHead]], tmp_path: Path) -> None:
    path, receipts = signed
    ring = _pub_dir(tmp_path / "published", [NEW])
    os.chmod(ring, 0o755)
    receipt = tmp_path / "r10.json"
    receipt.write_bytes(receipt_json(Receipt.of(receipts[10], seat=0)))
    argv = [sys.executable, "-m", "cli.main", "audit", str(path), "--keys", str(ring),
            "--receipt", str(receipt)]
    text = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    as_json = subprocess.run([*argv, "-f", "json"], cwd=ROOT, capture_output=True, text=True,
                             timeout=120, stdin=subprocess.DEVNULL)
    assert text.returncode == as_json.returncode == 1, (text.stderr, as_json.stderr)
    doc: Any = json.loads(as_json.stdout)
    verdict = doc[0] if isinstance(doc, list) else doc
    found = [f for f in verdict["findings"] if f["rule"] == "sign.receipt_invalid"]
    assert len(found) == 1 and found[0]["seq"] == 10
    assert "cannot be checked" in found[0]["message"]
    assert f"[sign.receipt_invalid] {found[0]['message']}" in text.stdout, text.stdout


@pytest.mark.slow
def test_a_hundred_thousand_published_keys_load_in_seconds(tmp_path: Path) -> None:
    """A site's key list over years, or a directory of many sites' keys: about 68 s of CPU
    time before (minutes of wall clock on a shared machine), so CPU time is measured."""
    ring = tmp_path / "keys"
    ring.mkdir()
    want = set()
    for i in range(100_000):
        s = Signer.generate()
        want.add(s.key_id)
        (ring / f"k{i:06d}.pub").write_bytes(msgspec.json.encode(s.public()))
    began = time.process_time()
    loaded = load_keyring([ring])
    spent = time.process_time() - began
    assert set(loaded.keys) == want
    assert spent < 40, spent


# -- the private key file ----------------------------------------------------------------------


@pytest.mark.parametrize("passphrase", [None, b"not it"])
def test_an_encrypted_key_others_may_read_is_refused_before_any_passphrase(
        tmp_path: Path, passphrase: bytes | None) -> None:
    """As ssh refuses it: it said "give its passphrase", or "a wrong passphrase", and that it
    may have leaked only once the right passphrase was given."""
    made = keys.write_key_pair(tmp_path, "site", passphrase=b"the passphrase")
    os.chmod(made.private, 0o640)
    with pytest.raises(SigningError) as err:
        keys.load_signer(made.private, passphrase)
    assert str(err.value).startswith(
        f"{made.private}: a private key that others may read or write (mode 0640)"), err.value
    os.chmod(made.private, 0o600)
    assert keys.load_signer(made.private, b"the passphrase").key_id == made.key_id


@pytest.mark.parametrize("name", ["revoked.txt", "REVOKED", "revocations"])
def test_a_revocation_list_under_another_name_is_refused_not_skipped(
        signed: tuple[Path, dict[int, SignedHead]], tmp_path: Path, name: str) -> None:
    """A site publishes `revoked.txt`; the referee puts it beside the `.pub` files. It was
    skipped without a word, and the revoked key's signatures audited as trusted."""
    path, _ = signed
    ring = _pub_dir(tmp_path / "keys", [OLD])
    (ring / name).write_text(f"{OLD.key_id}\n")
    (ring / "revoked~").write_text("")  # an editor's backup: not a list
    with pytest.raises(SigningError) as err:
        load_keyring([ring])
    said = str(err.value)
    assert said.startswith(f"{ring / name}: ") and "rename it 'revoked'" in said, said
    (ring / name).rename(ring / "revoked")
    assert rules_of(audit(path, load_keyring([ring]))) == ["sign.revoked"]
