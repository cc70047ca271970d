"""Fault probes of signed logs (third round): an unsigned tail (a note, a finding when
signatures are required: docs/signing.md), a moved start time, ``BURACO_LOG_KEYS=":"``, a
key of the wrong site, cut signature records, a receipt of another log, and key files that
others may read or write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.audit import read_log, settings
from buraco_log.events import AnyEvent
from buraco_log.signing.check import HeldReceipt
from buraco_log.signing.keys import Signer, SigningError, load_keyring, load_signer, write_key_pair
from buraco_log.signing.record import Receipt, receipt_json
from tests.signing.helpers import audit, match, ring, rules_of, write_signed

ROOT = Path(__file__).resolve().parents[2]
JAN = 1767225600000  # 2026-01-01, inside the site key's window


def _cli(*args: str | Path, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("BURACO_LOG_")}
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL, env={**base, **(env or {})})


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("site3")
    files = write_key_pair(d / "keys", "site", valid_from="2026-01-01",
                           valid_until="2026-06-01")
    signer = load_signer(files.private)
    events = [msgspec.structs.replace(e, at=JAN + 1000 * e.seq)
              for e in match(key_id=signer.key_id)]
    got = write_signed(d / "m.blog", events, signer, receipts_at=[10, 40])
    for seq, signed in got.items():
        (d / f"r{seq}.json").write_bytes(receipt_json(Receipt.of(signed, seat=seq % 2)))
    return d


def _site_events(site: Path) -> list[AnyEvent]:
    events, integ = read_log(site / "m.blog")
    assert integ.status == "sealed"
    return list(events)


def test_an_unsigned_tail_is_a_note_or_when_required_a_finding(site: Path,
                                                               tmp_path: Path) -> None:
    events = _site_events(site)
    signer = load_signer(site / "keys" / "site.key")
    path = tmp_path / "tail.blog"
    write_signed(path, events[:200], signer)
    with log.Writer(path, sealed=True, validate=False) as w:  # events nobody signed
        for e in events[200:]:
            w.append(e)
    keyring = load_keyring([site / "keys"])
    lax = audit(path, keyring)
    assert lax.ok and any("events 200 to 262 are signed by no signature" in n
                          for n in lax.notes)
    strict = audit(path, keyring, required=True)
    assert "sign.tail_unsigned" in rules_of(strict)


def test_a_moved_start_time_is_caught(site: Path, tmp_path: Path) -> None:
    events = _site_events(site)
    moved = list(events)
    moved[0] = msgspec.structs.replace(events[0], at=JAN + 200 * 86_400_000)  # July: retired
    keyring = load_keyring([site / "keys"])
    receipts = [held_receipt(_receipt(site, 10))]
    # rechained: the signatures cannot follow; the receipt shows the change
    log.write_log(tmp_path / "moved.blog", moved)
    v = audit(tmp_path / "moved.blog", keyring, receipts)
    assert "sign.receipt_changed" in rules_of(v) and not v.ok
    # signed again by the site key itself: outside its window, and the receipt still differs
    write_signed(tmp_path / "resigned.blog", moved, load_signer(site / "keys" / "site.key"))
    v = audit(tmp_path / "resigned.blog", keyring, receipts)
    assert {"sign.key_window", "sign.receipt_changed"} <= set(rules_of(v))


def held_receipt(r: Receipt) -> HeldReceipt:
    return HeldReceipt(r, "forged.json")


def _receipt(site: Path, seq: int) -> Receipt:
    return msgspec.json.decode((site / f"r{seq}.json").read_bytes(), type=Receipt)


def test_keys_env_naming_no_path_leaves_the_config_files_keys(site: Path,
                                                              tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[audit]\nkeys = "{site / "keys"}"\n')
    for value in (":", "::", " : "):  # it was "no keys", over the config file's
        env = {"BURACO_LOG_CONFIG": str(cfg), "BURACO_LOG_KEYS": value}
        assert settings.keys((), env).value == (str(site / "keys"),), value
    assert settings.keys((), {"BURACO_LOG_KEYS": "a::b"}).value == ("a", "b")
    r = _cli("audit", site / "m.blog", env={"BURACO_LOG_CONFIG": str(cfg),
                                            "BURACO_LOG_KEYS": ":"})
    assert r.returncode == 0 and "; verified" in r.stdout, r.stdout + r.stderr
    # without a config file: no keys at all, so requiring signatures is a usage error
    r = _cli("audit", site / "m.blog", "--require-signatures", env={"BURACO_LOG_KEYS": ":"})
    assert r.returncode == 2 and "trusted public keys" in r.stderr


def test_a_log_signed_by_another_sites_key(site: Path, tmp_path: Path) -> None:
    other = Signer.generate()
    path = tmp_path / "other.blog"
    write_signed(path, match(key_id=other.key_id), other)
    assert rules_of(audit(path, load_keyring([site / "keys"]))) == ["sign.untrusted"]
    # the same log verifies for a referee who trusts that key
    keyring = ring(other, load_signer(site / "keys" / "site.key"))
    assert audit(path, keyring).ok


def test_a_cut_signature_record_is_a_torn_tail_never_an_ok(site: Path, tmp_path: Path) -> None:
    signer = load_signer(site / "keys" / "site.key")
    full = tmp_path / "end.blog"
    events = _site_events(site)
    write_signed(full, events, signer, sign_at="end", sealed=False)
    data = full.read_bytes()
    keyring = load_keyring([site / "keys"])
    for cut in (1, 40, 100):
        path = tmp_path / f"cut{cut}.blog"
        path.write_bytes(data[:-cut])
        v = audit(path, keyring)
        assert not v.ok and v.integrity.status == "torn", cut
        assert "signature record cut short" in (v.integrity.message or "")
        # named by the event it follows, as every other error of a signature record
        assert f"after seq {events[-1].seq}" in (v.integrity.message or ""), v.integrity
        assert audit(path, keyring, required=True).signing is not None


def test_a_receipt_of_another_match_or_another_log(site: Path, tmp_path: Path) -> None:
    signer = load_signer(site / "keys" / "site.key")
    keyring = load_keyring([site / "keys"])
    other = [msgspec.structs.replace(e, at=JAN + e.seq) for e in
             match(seed="another", key_id=signer.key_id)]
    got = write_signed(tmp_path / "o.blog", other, signer, receipts_at=[10])
    (tmp_path / "ro.json").write_bytes(receipt_json(Receipt.of(got[10], seat=1)))
    r = _cli("audit", site / "m.blog", "--keys", site / "keys", "--receipt", tmp_path / "ro.json")
    assert r.returncode == 1 and "[sign.receipt_other_match]" in r.stdout, r.stdout + r.stderr
    # the other match's receipt with this log's match id: not the site's signature
    forged = msgspec.structs.replace(Receipt.of(got[10], seat=1),
                                     match_id=_receipt(site, 10).match_id)
    v = audit(site / "m.blog", keyring, [held_receipt(forged)])
    assert rules_of(v) == ["sign.receipt_invalid"]
    r = _cli("audit", site / "m.blog", "--keys", site / "keys", "--receipt", site / "r40.json",
             "--receipt", site / "r10.json")
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_private_key_others_may_read_is_refused(site: Path, tmp_path: Path) -> None:
    files = write_key_pair(tmp_path / "k", "site")
    assert load_signer(files.private).key_id == files.key_id
    for mode in (0o644, 0o640, 0o602):
        os.chmod(files.private, mode)
        with pytest.raises(SigningError, match=r"a private key that others may read or write "
                                               rf"\(mode {mode:04o}\).*chmod 600"):
            load_signer(files.private)
    os.chmod(files.private, 0o400)
    assert load_signer(files.private).key_id == files.key_id


@pytest.mark.parametrize("which", ["site.pub", "revoked"])
def test_a_trusted_key_file_anyone_may_write_is_refused(site: Path, tmp_path: Path,
                                                        which: str) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "site.pub").write_bytes((site / "keys" / "site.pub").read_bytes())
    (keys / "revoked").write_text("# none\n")
    os.chmod(keys / which, 0o666)
    r = _cli("audit", site / "m.blog", "--keys", keys)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"buraco-log: error: {keys / which}: a trusted key file that others may write (mode "
        f"0666): anyone could add a key to trust or take a revocation out; chmod o-w "
        f"{keys / which}"]
    os.chmod(keys / which, 0o664)  # group-writable: the umask 002 of many systems
    assert _cli("audit", site / "m.blog", "--keys", keys).returncode == 0


def test_a_key_file_of_bad_content_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pub"
    for content in (b"", b"{}", b"[1]", b'{"key_id": 1}', b"\x00\xff" * 10, b"[" * 100_000):
        bad.write_bytes(content)
        with pytest.raises(SigningError) as caught:
            load_keyring([bad])
        assert str(caught.value).startswith(f"{bad}: ") and "\n" not in str(caught.value)
