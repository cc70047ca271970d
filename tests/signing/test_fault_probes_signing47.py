"""Fault probes of signing (round 47): `keys new` killed between giving its temporary the name
NAME.key and removing it left a hidden 0600 `.keys-new-*.tmp` holding the private key, for
ever; the next `keys new` into that directory now removes it (only a regular file of exactly
that name, owned by the user, older than the process), and says so in one line. A real
process, killed for real (SIGKILL) at that point."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log.signing.keys import Signer
from buraco_log.signing.record import SignedHead

ROOT = Path(__file__).resolve().parents[2]

# `keys new` whose hard link NAME.key -> temporary is made, and the process then killed
# before the temporary is removed (as a power cut or the OOM killer would).
KILLED_AFTER_LINK = """
import os, signal, sys
from buraco_log import log
def place_new(tmp, path):
    os.link(tmp, path)
    os.kill(os.getpid(), signal.SIGKILL)
log.place_new = place_new
sys.argv = ["buraco-log", *sys.argv[1:]]
from cli.main import run
run()
"""


def _cli(*args: object, script: str | None = None) -> subprocess.CompletedProcess[str]:
    head = ["-c", script] if script else ["-m", "cli"]
    return subprocess.run([sys.executable, *head, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _leftovers(d: Path) -> list[Path]:
    return sorted(d.glob(".keys-new-*.tmp"))


def test_the_next_keys_new_removes_the_secret_key_a_crash_left_and_says_so(
        tmp_path: Path) -> None:
    d = tmp_path / "keys"
    d.mkdir(mode=0o700)
    crashed = _cli("keys", "new", "site", "-d", d, script=KILLED_AFTER_LINK)
    assert crashed.returncode == -9, crashed.stderr
    left = _leftovers(d)  # the private key's, linked as site.key, and the public key's
    (secret,) = [p for p in left if b"PRIVATE KEY" in p.read_bytes()]
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and len(left) == 2
    key = (d / "site.key").read_bytes()
    past = time.time() - 60  # the crash was before this run (its process is younger)
    for p in left:
        os.utime(p, (past, past))
    # others that must stay: another name, a link of the name, a file newer than the process
    # (a `keys new` running beside it), a file of the pattern with another name around it
    keep = [d / ".keys-new-0123456789ab.tmp.bak", d / ".keys-new-XYZ.tmp"]
    for p in keep:
        p.write_bytes(b"x")
        os.utime(p, (past, past))
    link = d / ".keys-new-aaaaaaaaaaaa.tmp"
    link.symlink_to(d / "site.key")
    younger = d / ".keys-new-bbbbbbbbbbbb.tmp"
    younger.write_bytes(b"y")
    os.utime(younger, (time.time() + 3600,) * 2)
    done = _cli("keys", "new", "other", "-d", d)
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.splitlines()
    assert line == (f"buraco-log: note: removed 2 temporary files an interrupted `keys new` "
                    f"left in {d} (a private key may have been in them): "
                    f"{left[0].name}, {left[1].name}"), line
    assert not any(p.exists() for p in left)
    assert (d / "site.key").read_bytes() == key  # the key the crashed run placed stays
    assert all(p.exists() for p in keep) and link.is_symlink() and younger.exists()
    assert _leftovers(d) == sorted([link, younger, keep[1]])


def test_a_refused_keys_new_still_removes_the_leftover(tmp_path: Path) -> None:
    """Refused (the name exists), it removes them all the same: the user reruns the same
    command after a crash, and is told "already exists"."""
    d = tmp_path / "keys"
    d.mkdir(mode=0o700)
    assert _cli("keys", "new", "site", "-d", d, script=KILLED_AFTER_LINK).returncode == -9
    for p in _leftovers(d):
        os.utime(p, (time.time() - 60,) * 2)
    again = _cli("keys", "new", "site", "-d", d)
    assert again.returncode == 2
    assert "removed 2 temporary files" in again.stderr and "already exists" in again.stderr
    assert _leftovers(d) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_leftover_of_another_user_is_not_touched(tmp_path: Path) -> None:
    """The library's cleaning, and write_key_pair's result names what it removed."""
    from buraco_log.signing import keys
    from buraco_log.signing.keys import clean_leftovers

    d = tmp_path / "keys"
    d.mkdir()
    theirs = d / ".keys-new-cccccccccccc.tmp"
    theirs.write_bytes(b"z")
    os.chown(theirs, 12345, 12345)
    mine = d / ".keys-new-dddddddddddd.tmp"
    mine.write_bytes(b"z")
    for p in (theirs, mine):
        os.utime(p, (1, 1))  # older than this (long-lived) test process
    assert clean_leftovers(str(d)) == (str(mine),)
    assert theirs.exists() and not mine.exists()
    mine.write_bytes(b"z")
    os.utime(mine, (1, 1))
    made = keys.write_key_pair(d, "site")
    assert made.removed_leftovers == (str(mine),) and theirs.exists()


# -- a cheater's probes: keys, receipts, keyrings -------------------------------------------------

def _signers() -> tuple[Signer, Signer]:
    return Signer.generate(), Signer.generate()


def test_a_log_signed_on_with_another_key_after_an_edit_says_which_key_signs_what(
        tmp_path: Path) -> None:
    """Signed by the site's key to seq 20, then edited and signed on with another key: the
    finding said only "one key signs a log", never which events the trusted key vouches for,
    nor which key the referee trusts."""
    from tests.signing.helpers import audit, match, ring, write_signed_by

    site, other = _signers()
    events = match("resigned", key_id=site.key_id)
    last = events[-1].seq
    log = write_signed_by(tmp_path / "m.blog", events, {10: site, 20: site, last: other})
    v = audit(log, ring(site))
    by_rule = {f.rule: f.message for f in v.findings}
    assert set(by_rule) == {"sign.key_mismatch", "sign.untrusted"}, by_rule
    assert by_rule["sign.key_mismatch"].endswith(
        f"; key {site.key_id} (trusted) signs seq 0 to 20 (2 signatures), then key "
        f"{other.key_id} (not trusted: it is not among the trusted keys) signs seq 21 to "
        f"{last} (1 signature)"), by_rule
    assert by_rule["sign.untrusted"].endswith(f"; the trusted key is {site.key_id}"), by_rule


def test_a_log_re_signed_whole_with_another_key_names_the_key_the_referee_trusts(
        tmp_path: Path) -> None:
    from tests.signing.helpers import audit, match, ring, write_signed

    site, other = _signers()
    write_signed(tmp_path / "m.blog", match("whole", key_id=other.key_id), other, batch=50)
    v = audit(tmp_path / "m.blog", ring(site))
    (f,) = v.findings
    assert f.rule == "sign.untrusted"
    assert f.message.endswith(f"; the trusted key is {site.key_id}"), f.message


Forked = tuple[Signer, dict[int, SignedHead], dict[int, SignedHead], Path]


@pytest.fixture(scope="module")
def forked(tmp_path_factory: pytest.TempPathFactory) -> Forked:
    """The site's key signing two histories of one match id: the log (receipts at 30, 60)
    and another (a receipt at 30); and a third history, signed too, as a log."""
    from tests.signing.helpers import match, write_signed

    tmp_path = tmp_path_factory.mktemp("forked")
    site, _ = _signers()
    first = match("fork-a", key_id=site.key_id)
    second = match("fork-b", key_id=site.key_id)
    third = match("fork-c", key_id=site.key_id)
    for evs in (second, third):
        evs[0] = msgspec.structs.replace(evs[0], match_id=first[0].match_id)
    log = tmp_path / "log.blog"
    # batched: a durable append per event (an fsync each) is not what is probed here
    mine = write_signed(log, first, site, receipts_at=[30, 60], batch=50)
    theirs = write_signed(tmp_path / "other.blog", second, site, receipts_at=[30], batch=50)
    write_signed(tmp_path / "third.blog", third, site, batch=50)
    return site, mine, theirs, log


def test_two_receipts_for_one_seq_neither_the_logs_say_the_site_signed_two_histories(
        forked: Forked) -> None:
    """Each was "changed after the site signed it", and nothing said that the two genuine
    receipts themselves disagree: the site's writer signed two histories (a fork)."""
    from tests.signing.helpers import audit, held, ring

    site, mine, theirs, log = forked
    v = audit(log.parent / "third.blog", ring(site),
              [held(mine[30], 1), held(theirs[30], 2)])
    assert [f.rule for f in v.findings] == ["sign.receipt_changed"] * 2
    for f, other in zip(v.findings, (2, 1), strict=True):
        assert (f"; the receipt for seq 30 that seat {other} holds (seat{other}.json) signs "
                "another head at seq 30: the site's writer signed two different histories of "
                "the match, and this log is neither") in f.message, f.message


def test_a_receipt_the_log_contradicts_before_a_later_receipt_it_extends_is_a_fork(
        forked: Forked) -> None:
    """The log extends the site's receipt for seq 60, so the site signed its events up to seq
    30 too; another receipt for seq 30 signs other events: the site's writer signed two
    histories. It said "an event in seq 0 to 30 was changed after the site signed it"."""
    from tests.signing.helpers import audit, held, ring

    site, mine, theirs, log = forked
    v = audit(log, ring(site), [held(mine[60], 1), held(theirs[30], 2)])
    (f,) = v.findings
    assert f.rule == "sign.receipt_changed" and f.seq == 30
    assert ("does not match the log, and the receipt for seq 60 that seat 1 holds (seat1.json) "
            "signs the log's head at seq 60, which covers the log's events up to seq 30: the "
            "site's writer signed two different histories of match ") in f.message, f.message
    assert "changed after the site signed it" not in f.message


def test_a_revoked_list_saved_with_a_bom_and_crlf_still_revokes(tmp_path: Path) -> None:
    """A `revoked` file from a Windows editor (BOM, CRLF, a comment first) refused the whole
    keyring: "line 1: '\\ufeff' is not a key id"."""
    from buraco_log.signing.keys import load_keyring
    from tests.signing.helpers import audit, match, write_signed

    site, _ = _signers()
    d = tmp_path / "keys"
    d.mkdir(mode=0o755)
    (d / "site.pub").write_bytes(msgspec.json.encode(site.public()))
    (d / "revoked").write_bytes(b"\xef\xbb\xbf# keys we revoked\r\n"
                                + site.key_id.upper().encode() + b"  # leaked\r\n")
    keyring = load_keyring([d])
    assert keyring.revoked == {site.key_id}
    write_signed(tmp_path / "m.blog", match("bom", key_id=site.key_id), site, batch=50)
    v = audit(tmp_path / "m.blog", keyring)
    assert [f.rule for f in v.findings] == ["sign.revoked"]
    assert v.findings[0].message.endswith("; no key is trusted (every trusted key given is "
                                          "revoked)"), v.findings[0].message
