"""Private keys handed over by mistake, passphrases with their line end, and long receipt lists.

A private key of another kind (RSA, EC, X25519) was refused as "not an Ed25519 key" without
saying what it was; a published key or a PEM public key given where the private key is needed,
and an encrypted key given its passphrase file's whole text (newline included), were all "not a
PEM private key, or a wrong passphrase". Each now says what the file holds or why the
passphrase failed. Every receipt was verified twice (once to find the receipts the log agrees
with, once to judge it), and a repeated receipt again each time: 10,480 receipts took 3.4 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from cryptography.hazmat.primitives import serialization as ser
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa, x25519

from buraco_log.signing import keys as keys_mod
from buraco_log.signing.check import load_receipts
from buraco_log.signing.keys import load_keyring, load_signer, write_key_pair
from buraco_log.signing.record import Receipt, receipt_json
from tests.signing.helpers import audit, match, rules_of, write_signed

ROOT = Path(__file__).resolve().parents[2]
LOAD = ("import sys\nfrom buraco_log.signing.keys import SigningError, load_signer\n"
        "secret = open(sys.argv[2], 'rb').read() if sys.argv[2] else None\n"
        "try:\n    load_signer(sys.argv[1], secret)\n"
        "except SigningError as exc:\n    print(exc)\n    sys.exit(2)\n")


def _load(path: Path, passphrase: Path | None = None) -> str:
    """load_signer's one-line refusal, from a fresh interpreter (exit 2 means it refused),
    given the whole of the file ``passphrase`` as the passphrase."""
    r = subprocess.run([sys.executable, "-c", LOAD, str(path), str(passphrase or "")], cwd=ROOT,
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr, (r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: "), lines
    return lines[0]


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


def _private(path: Path, key: object) -> Path:
    path.write_bytes(key.private_bytes(  # type: ignore[attr-defined]
        ser.Encoding.PEM, ser.PrivateFormat.PKCS8, ser.NoEncryption()))
    path.chmod(0o600)
    return path


@pytest.mark.parametrize(("make", "kind"), [
    (lambda: rsa.generate_private_key(65537, 1024), "an RSA private key"),
    (lambda: ec.generate_private_key(ec.SECP256R1()), "an elliptic-curve (EC) private key"),
    (x25519.X25519PrivateKey.generate, "an X25519 (key agreement) private key"),
])
def test_a_private_key_of_another_kind_is_named_by_its_kind(
        tmp_path: Path, make: object, kind: str) -> None:
    line = _load(_private(tmp_path / "other.key", make()))  # type: ignore[operator]
    assert f"{kind}, not an Ed25519 one" in line


def test_a_public_key_where_the_private_key_is_needed_says_so(tmp_path: Path) -> None:
    files = write_key_pair(tmp_path, "site")
    assert "a published key (NAME.pub), not a private key" in _load(Path(files.public))
    pem = tmp_path / "site.pem"
    pem.write_bytes(ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        ser.Encoding.PEM, ser.PublicFormat.SubjectPublicKeyInfo))
    assert "a PEM public key, not a private key" in _load(pem)
    ssh = _private(tmp_path / "id_ed25519", ed25519.Ed25519PrivateKey.generate())
    ssh.write_bytes(ed25519.Ed25519PrivateKey.generate().private_bytes(
        ser.Encoding.PEM, ser.PrivateFormat.OpenSSH, ser.NoEncryption()))
    assert "an OpenSSH private key" in _load(ssh)


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_a_passphrase_with_its_line_end_is_told_apart_from_a_wrong_one(
        tmp_path: Path, end: bytes) -> None:
    # keys new takes the passphrase file's first line without its line end (decided in
    # docs/signing.md); a program that passes the file's whole text is told why it fails
    pf = tmp_path / "pass"
    pf.write_bytes(b"s3cret" + end)
    r = _cli("keys", "new", "site", "--dir", tmp_path, "--passphrase-file", pf)
    assert r.returncode == 0, r.stderr
    key = tmp_path / "site.key"
    assert load_signer(key, b"s3cret").key_id  # the line, without its end
    assert "ends with a line end" in _load(key, pf)
    huge = tmp_path / "huge"
    huge.write_bytes(b"x" * 1_000_000)
    wrong = _load(key, huge)  # a huge wrong one: one line, no hint
    assert "a wrong passphrase: it does not open the key" in wrong and "line end" not in wrong


def test_keys_new_refuses_a_dangling_link_where_a_key_would_go(tmp_path: Path) -> None:
    (tmp_path / "site.key").symlink_to(tmp_path / "elsewhere.key")
    r = _cli("keys", "new", "site", "--dir", tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert f"{tmp_path / 'site.key'}: already exists (refusing to overwrite a key" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site.key"]
    assert not (tmp_path / "elsewhere.key").exists()


@pytest.fixture(scope="module")
def receipted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("receipts38")
    signer = load_signer(write_key_pair(d / "keys", "site").private)
    events = match(key_id=signer.key_id)
    heads = write_signed(d / "m.blog", events, signer, receipts_at=range(1, len(events)))
    items = [json.loads(receipt_json(Receipt.of(h, seat=h.seq % 2))) for h in heads.values()]
    (d / "all.json").write_text(json.dumps(items * 20))  # a player's list, each one repeated
    return d


def test_each_distinct_receipt_is_verified_once(
        receipted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real = keys_mod.verify

    def counting(public_key: bytes, signature: bytes, message: bytes) -> bool:
        nonlocal calls
        calls += 1
        return real(public_key, signature, message)

    keyring = load_keyring([receipted / "keys" / "site.pub"])
    receipts = json.loads((receipted / "all.json").read_text())
    distinct = len(receipts) // 20
    monkeypatch.setattr(keys_mod, "verify", counting)
    verdict = audit(receipted / "m.blog", keyring, load_receipts([str(receipted / "all.json")]))
    assert rules_of(verdict) == []
    signatures = distinct + 1  # the log's own, one per event: receipts were taken after seq 1..
    assert calls == signatures + distinct, (calls, signatures, distinct)


def test_thousands_of_receipts_check_clean_in_one_line(receipted: Path) -> None:
    r = _cli("audit", receipted / "m.blog", "--keys", receipted / "keys" / "site.pub",
             "--receipt", receipted / "all.json")
    n = len(json.loads((receipted / "all.json").read_text()))
    assert r.returncode == 0 and f"{n} receipts checked" in r.stdout, r.stdout + r.stderr
    assert n > 5000 and os.path.getsize(receipted / "all.json") < 1 << 24


def test_a_receipt_whose_key_id_is_in_capitals_is_still_the_sites(
        receipted: Path, tmp_path: Path) -> None:
    # the key id is not signed (a tool that writes hex in capitals changed only its case);
    # it was sign.receipt_invalid, "not among the trusted keys", and the proof was lost
    one = json.loads((receipted / "all.json").read_text())[40]
    one["key_id"] = one["key_id"].upper()
    path = tmp_path / "upper.json"
    path.write_text(json.dumps(one))
    r = _cli("audit", receipted / "m.blog", "--keys", receipted / "keys" / "site.pub",
             "--receipt", path)
    assert r.returncode == 0 and "1 receipt checked" in r.stdout, r.stdout + r.stderr
    # and still proof: the same receipt against a log changed after its seq
    one["head"] = "00" * 32
    path.write_text(json.dumps(one))
    r = _cli("audit", receipted / "m.blog", "--keys", receipted / "keys" / "site.pub",
             "--receipt", path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "[sign.receipt_invalid]" in r.stdout and "does not verify" in r.stdout, r.stdout


def test_keys_new_that_fails_leaves_no_directory_it_made(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    r = _cli("keys", "new", "k" * 300, "--dir", keys)  # a file name longer than any allowed
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "File name too long" in lines[0], lines
    assert not keys.exists()


@pytest.mark.parametrize(("revoke", "rule"), [(True, "sign.revoked"), (False, "sign.untrusted")])
def test_a_signature_mid_log_by_a_revoked_or_unknown_key_is_named_so(
        receipted: Path, tmp_path: Path, revoke: bool, rule: str) -> None:
    # the first signature's key was judged by its trust rule, a later one's was "sign.invalid"
    ring = tmp_path / "ring"
    ring.mkdir()
    (ring / "site.pub").write_bytes((receipted / "keys" / "site.pub").read_bytes())
    other = load_signer(write_key_pair(tmp_path, "other").private)
    if revoke:
        (ring / "other.pub").write_bytes((tmp_path / "other.pub").read_bytes())
        (ring / "revoked").write_text(other.key_id + "\n")
    jsonl = tmp_path / "m.jsonl"
    assert _cli("convert", receipted / "m.blog", "-o", jsonl).returncode == 0
    lines = jsonl.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines)
              if line.startswith('{"log": "signature"') and json.loads(line)["seq"] == 100)
    sig = json.loads(lines[at])
    by_other = other.sign_head(sig["match_id"], 100, bytes.fromhex(sig["head"]))
    lines[at] = json.dumps(dict(sig, key_id=other.key_id,
                                signature=by_other.signature.hex())) + "\n"
    jsonl.write_text("".join(lines))
    r = _cli("audit", jsonl, "--keys", ring)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert f"seq 100 [{rule}] the signature after seq 100: key {other.key_id}" in r.stdout, r.stdout
    assert "[sign.invalid]" not in r.stdout


@pytest.mark.parametrize("mode", [0o777, 0o1777])
def test_a_keys_directory_anyone_may_write_is_refused(
        receipted: Path, tmp_path: Path, mode: int) -> None:
    # its .pub files were refused so; the directory was not, and anyone could add a key to it
    ring = tmp_path / "ring"
    ring.mkdir()
    (ring / "site.pub").write_bytes((receipted / "keys" / "site.pub").read_bytes())
    ring.chmod(mode)
    r = _cli("audit", receipted / "m.blog", "--keys", ring)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [
        f"buraco-log: error: {ring}: a trusted keys directory that others may write "
        f"(mode {mode:04o}): anyone could add a key to trust; chmod o-w {ring}"]
    ring.chmod(0o755)
    assert _cli("audit", receipted / "m.blog", "--keys", ring).returncode == 0


def test_a_revoked_file_that_links_nowhere_is_an_error_not_no_revocations(
        receipted: Path, tmp_path: Path) -> None:
    # it was skipped as absent, and a key the site had revoked stayed trusted
    ring = tmp_path / "ring"
    ring.mkdir()
    (ring / "site.pub").write_bytes((receipted / "keys" / "site.pub").read_bytes())
    (ring / "revoked").symlink_to(tmp_path / "moved-away")
    r = _cli("audit", receipted / "m.blog", "--keys", ring)
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr, r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"buraco-log: error: {ring / 'revoked'}: ")
