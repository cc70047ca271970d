"""Fault probes of the audit library (round 44c): a receipt for another match.

`audit_log(path, signing=signing_options(keys, receipts))`, with its default options, dropped
a receipt for another match without a word (``by_match`` defaulted to True: each receipt was
kept only for the log of its match, and this one log was not it), while `buraco-log audit
LOG --receipt R` reports it (`sign.receipt_other_match`, exit 1). One log audited: every
receipt given is for it, in the library as in the command; several logs (`audit_many`):
each receipt goes to the log of its match.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log.audit import audit_log, audit_many, signing_options
from buraco_log.signing.keys import load_signer, write_key_pair
from buraco_log.signing.record import Receipt, receipt_json
from tests.cli.probes import cli_batch
from tests.signing.helpers import match, write_signed


def test_the_library_reports_a_receipt_for_another_match_as_the_command_does(
        tmp_path: Path) -> None:
    signer = load_signer(write_key_pair(tmp_path / "keys", "site").private)
    mine, theirs = tmp_path / "mine.blog", tmp_path / "theirs.blog"
    write_signed(mine, match(key_id=signer.key_id)[:30], signer)
    held = write_signed(theirs, match("other", key_id=signer.key_id)[:30], signer,
                        receipts_at=[10])[10]
    receipt = tmp_path / "r10.json"
    receipt.write_bytes(receipt_json(Receipt.of(held, seat=1)))
    (done,) = cli_batch([["audit", mine, "--keys", tmp_path / "keys", "--receipt", receipt]])
    assert done.returncode == 1 and "[sign.receipt_other_match]" in done.stdout, done
    options = signing_options([str(tmp_path / "keys")], [str(receipt)])  # the defaults
    v = audit_log(mine, signing=options)
    assert not v.ok
    assert [(f.rule, f.seq) for f in v.findings] == [("sign.receipt_other_match", 10)], v
    # one log in audit_many is one log audited too; with its match's log beside it, the
    # receipt goes to that log, which extends it
    assert [f.rule for f in audit_many([mine], signing=options)[0].findings] == [
        "sign.receipt_other_match"]
    both = audit_many([mine, theirs], signing=options)
    assert [v.ok for v in both] == [True, True], [v.findings for v in both]
    assert both[1].signing.receipts == 1 and both[0].signing.receipts == 0
