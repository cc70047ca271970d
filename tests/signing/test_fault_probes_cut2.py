"""A signed log cut to nothing, audited with a player's receipt.

A log that holds no event (a whole header and nothing after it, a header cut short, an empty
file) is NOT STARTED, exit 0: a match that never received an event. But a player's receipt
says the site signed events of that match; a keeper who cut the log back to its header escaped
the receipt that way (NOT STARTED, exit 0, the receipt never checked, even with signatures
required). Audited alone with a receipt, such a log is now ``sign.receipt_cut``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log.audit import SigningOptions, audit_log
from buraco_log.signing.keys import Signer, load_signer, write_key_pair
from buraco_log.signing.record import Receipt, receipt_json
from tests.signing.helpers import held, match, ring, rules_of, write_signed

ROOT = Path(__file__).resolve().parents[2]
HEADER = 20  # the file header (schema/LOG_FORMAT.md)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Signer, Path, Path]:
    """(directory, signer, the signed log, seat 0's receipt for seq 40 as a file)."""
    d = tmp_path_factory.mktemp("cut")
    signer = load_signer(write_key_pair(d / "keys", "site").private)
    receipts = write_signed(d / "m.blog", match(key_id=signer.key_id), signer, receipts_at=[40])
    (d / "r40.json").write_bytes(receipt_json(Receipt.of(receipts[40], seat=0)))
    return d, signer, d / "m.blog", d / "r40.json"


def _cut(src: Path, dst: Path, size: int) -> Path:
    dst.write_bytes(src.read_bytes()[:size])
    return dst


def _audit_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "audit", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("size", [HEADER, 10, 0], ids=["header", "half-header", "empty"])
def test_a_log_cut_to_nothing_is_a_cut_for_the_receipt(
        site: tuple[Path, Signer, Path, Path], tmp_path: Path, size: int) -> None:
    d, _, log, receipt = site
    cut = _cut(log, tmp_path / "cut.blog", size)
    r = _audit_cli(cut, "--keys", d / "keys", "--receipt", receipt)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "NOT STARTED" not in r.stdout and "delete the file" not in r.stdout
    match_id = match()[0].match_id  # type: ignore[union-attr]
    assert (f"    seq 40 [sign.receipt_cut] the receipt for seq 40 that seat 0 holds "
            f"({receipt}) shows the site signed match {match_id!r} up to seq 40, but the log "
            "holds no events (it was cut, or is a copy taken before seq 40 was written: the "
            "site's log must reach seq 40)") in r.stdout.splitlines()


def test_without_a_receipt_it_is_still_not_started(
        site: tuple[Path, Signer, Path, Path], tmp_path: Path) -> None:
    d, _, log, _ = site
    cut = _cut(log, tmp_path / "cut.blog", HEADER)
    r = _audit_cli(cut, "--keys", d / "keys", "--require-signatures")
    assert r.returncode == 0 and "NOT STARTED" in r.stdout


def test_a_receipt_no_trusted_key_made_proves_nothing_against_it(
        site: tuple[Path, Signer, Path, Path], tmp_path: Path) -> None:
    _, signer, log, _ = site
    cut = _cut(log, tmp_path / "cut.blog", HEADER)
    stranger = Signer.generate()
    fake = stranger.sign_head(match()[0].match_id, 40, bytes(32))  # type: ignore[union-attr]
    # one log named alone: every receipt is for it (by_match off), as the command does
    v = audit_log(cut, signing=SigningOptions(ring(signer), (held(fake),), by_match=False))
    assert rules_of(v) == ["sign.receipt_invalid"] and not v.not_started
    assert f"key {stranger.key_id} is not among the trusted keys" in v.findings[0].message


def test_in_a_directory_the_receipt_names_the_match_no_log_holds(
        site: tuple[Path, Signer, Path, Path], tmp_path: Path) -> None:
    d, _, log, receipt = site
    logs = tmp_path / "logs"
    logs.mkdir()
    _cut(log, logs / "cut.blog", HEADER)
    r = _audit_cli(logs, "--keys", d / "keys", "--receipt", receipt)
    assert r.returncode == 1 and "which none of the logs audited holds" in r.stderr


@pytest.fixture(scope="module")
def signed_at_end(tmp_path_factory: pytest.TempPathFactory) -> tuple[Signer, Path]:
    """(signer, an unsealed log whose one signature record is its last record)."""
    d = tmp_path_factory.mktemp("end")
    signer = load_signer(write_key_pair(d / "keys", "site").private)
    write_signed(d / "m.blog", match(key_id=signer.key_id), signer, sign_at="end", sealed=False)
    return signer, d / "m.blog"


def test_a_torn_last_signature_leaves_the_intact_events_noted_as_unsigned(
        signed_at_end: tuple[Signer, Path], tmp_path: Path) -> None:
    """With its only signature cut short, the intact events are signed by nothing read: the
    verdict says so (it said nothing of signing at all, though the keys were given)."""
    signer, log_path = signed_at_end
    whole = audit_log(log_path, signing=SigningOptions(ring(signer)))
    assert whole.ok and whole.signing.signatures == 1 and whole.signing.verified
    assert not [n for n in whole.notes if n.startswith("signing:")]
    cut = _cut(log_path, tmp_path / "cut.blog", log_path.stat().st_size - 5)
    v = audit_log(cut, signing=SigningOptions(ring(signer)))
    assert v.integrity.status == "torn" and v.signing.signatures == 0
    assert (f"signing: the match start records key {signer.key_id} but the log holds no "
            "signature read intact: nothing shows the site wrote any of it") in "\n".join(v.notes)
