"""Fault probes 42, signing: what `show` calls a log with a repeated signature record, and the
ruling on two signatures of one head by different keys (docs/signing.md, "Co-signing").

- `show`'s integrity line called a log holding a copied signature record "sealed" (its stderr
  line and exit 1 said the failure): it now says broken at the copy's byte (line, in JSON
  Lines) in `verify`'s words, and the JSON summary's integrity says so too.
- Ruling: a second key's signature of a head inside the log is no co-signature the format
  knows (the match start records one signing key, and the writer signs with that one only);
  it stays an audit finding (`sign.duplicate`, `sign.key_mismatch`, whichever keys are
  trusted), not a `verify` refusal: `verify` has no keys, so it cannot tell the site's record
  from the other, and the events and chain are intact. Rewrites keep both records, so the
  trace survives `convert` both ways. A witness co-signs outside the log, with a receipt
  that `audit --receipt` checks by the witness's own key.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import jsonl, log
from buraco_log.signing.check import load_receipts
from buraco_log.signing.keys import Signer, SigningError, load_keyring
from buraco_log.signing.record import Receipt, receipt_json
from tests.cli.probes import cli
from tests.signing.copied import _copied
from tests.signing.helpers import audit, held, match, ring, rules_of, write_signed

SITE, WITNESS = Signer.generate(), Signer.generate()


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 30 events of a match, signed after each (sealed)."""
    path = tmp_path_factory.mktemp("signed42") / "m.blog"
    write_signed(path, match(key_id=SITE.key_id)[:30], SITE)
    return path


def _integrity_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("log "))


def test_show_calls_a_log_with_a_copied_signature_record_broken_at_its_byte(
        signed: Path, tmp_path: Path) -> None:
    bad, at = _copied(signed, tmp_path / "dup.blog", 10, 1)
    done = cli("show", bad)
    assert done.returncode == 1 and "sign.duplicate" in done.stderr, done.stderr
    line = _integrity_line(done.stdout)
    assert "sealed" not in line, line
    assert line.startswith(f"log       {bad}: broken, 30 events in 30 records; BROKEN at byte "
                           f"{at} [log.seq]: the signature record after seq 10 repeats the "
                           "one before it"), line
    shown = json.loads(cli("show", "-f", "json", bad).stdout)["integrity"]
    assert (shown["status"], shown["offset"], shown["kind"]) == ("broken", at, "seq"), shown


def test_show_names_the_line_of_a_copied_signature_line_in_json_lines(
        signed: Path, tmp_path: Path) -> None:
    good = tmp_path / "m.jsonl"
    jsonl.convert(signed, good, "jsonl")
    lines = good.read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(b'{"log": "signature"')][5]
    bad = tmp_path / "dup.jsonl"
    bad.write_bytes(b"".join([*lines[:at + 1], lines[at], *lines[at + 1:]]))
    done = cli("show", bad)
    assert done.returncode == 1, done.stderr
    line = _integrity_line(done.stdout)
    assert f"BROKEN at line {at + 2} [log.seq]: the signature line after seq 5 repeats" in (
        line), line


def _cosigned(path: Path) -> Path:
    """The site's signed log with the witness's signature of the head after seq 5 too."""
    events = match(key_id=SITE.key_id)[:12]
    with log.Writer(path, signer=SITE) as w:
        for event in events:
            w.append(event)
            if event.seq == 5:
                w.put_signature(WITNESS.sign_head(events[0].match_id, 5, bytes.fromhex(w.head)))
    return path


def test_a_second_key_in_the_log_is_a_finding_even_when_both_keys_are_trusted(
        tmp_path: Path) -> None:
    path = _cosigned(tmp_path / "two.blog")
    assert log.verify(path).signatures == 13  # verify has no keys: both records read
    found = rules_of(audit(path, ring(SITE, WITNESS)))
    assert "sign.duplicate" in found and "sign.key_mismatch" in found, found


def test_convert_both_ways_keeps_both_records_so_the_finding_survives(tmp_path: Path) -> None:
    path = _cosigned(tmp_path / "two.blog")
    there, back = tmp_path / "two.jsonl", tmp_path / "back.blog"
    jsonl.convert(path, there, "jsonl")
    jsonl.convert(there, back, "binary")
    assert back.read_bytes() == path.read_bytes()
    assert "sign.duplicate" in rules_of(audit(back, ring(SITE, WITNESS)))


def test_a_witness_co_signs_with_a_receipt_outside_the_log(signed: Path, tmp_path: Path
                                                           ) -> None:
    info = log.verify(signed)
    start = match(key_id=SITE.key_id)[0]
    cosigned = WITNESS.sign_head(start.match_id, 29, bytes.fromhex(info.head))
    verdict = audit(signed, ring(SITE, WITNESS), [held(cosigned)])
    assert verdict.ok and rules_of(verdict) == [], verdict.findings
    # and it proves what the site's own receipts prove: a log cut after it is caught
    cut = tmp_path / "cut.blog"
    write_signed(cut, match(key_id=SITE.key_id)[:20], SITE)
    assert "sign.receipt_cut" in rules_of(audit(cut, ring(SITE, WITNESS), [held(cosigned)]))


# -- a key named twice in one object of a key file, keyring or receipt --------------------------
# msgspec kept the last value without a word: a keyring's second "revoked": [] took the
# revocation out (the key was trusted), a .pub's second "valid_until" lifted the key's end,
# while the file still showed both to a person, or to a tool that keeps the first value.


def _pub(signer: Signer, **fields: object) -> str:
    return json.dumps({**msgspec.to_builtins(signer.public()), **fields})


def test_a_keyring_that_names_revoked_twice_is_refused_not_read_as_no_revocation(
        signed: Path, tmp_path: Path) -> None:
    ring_file = tmp_path / "ring.json"
    ring_file.write_text(f'{{"keys": [{_pub(SITE)}], "revoked": ["{SITE.key_id}"], '
                         '"revoked": []}')
    with pytest.raises(SigningError, match=r"ring\.json: duplicate key 'revoked': JSON parsers "
                       "disagree on which value counts, so the file is refused"):
        load_keyring([ring_file])
    done = cli("audit", signed, "--keys", ring_file)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr == (f"buraco-log: error: {ring_file}: duplicate key 'revoked': JSON "
                           "parsers disagree on which value counts, so the file is refused\n")


def test_a_published_key_that_names_its_window_twice_is_refused(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o755)
    text = _pub(SITE, valid_until="2020-01-01T00:00:00Z")
    (keys / "site.pub").write_text(text[:-1] + ', "valid_until": null}')
    with pytest.raises(SigningError, match=r"site\.pub: duplicate key 'valid_until'"):
        load_keyring([keys])
    (keys / "site.pub").write_text(text)  # named once: read
    assert load_keyring([keys]).keys[SITE.key_id].valid_until is not None


def test_a_receipt_that_names_a_field_twice_is_refused(signed: Path, tmp_path: Path) -> None:
    start = match(key_id=SITE.key_id)[0]
    one = Receipt.of(SITE.sign_head(start.match_id, 29,
                                    bytes.fromhex(log.verify(signed).head)), seat=1)
    text = receipt_json(one).decode()
    path = tmp_path / "r.json"
    path.write_text(text.replace('"seat": 1', '"seat": 1, "seat": 0'))
    with pytest.raises(SigningError, match=r"r\.json: duplicate key 'seat'.* receipt file is "
                       "refused"):
        load_receipts([str(path)])
    twice = text.replace('"seq": 29', '"seq": 29, "seq": 3')
    path.write_text(f"[{text}, {twice}]")  # the second of a list
    with pytest.raises(SigningError, match="duplicate key 'seq'"):
        load_receipts([str(path)])
    path.write_text(text)
    assert [r.receipt for r in load_receipts([str(path)])] == [one]


def test_a_lone_surrogate_or_nan_in_a_key_file_is_named_not_called_truncated(
        tmp_path: Path) -> None:
    ring_file = tmp_path / "ring.json"
    ring_file.write_text(f'{{"keys": [{_pub(SITE)}], "revoked": ["\\ud800"]}}')
    with pytest.raises(SigningError) as caught:
        load_keyring([ring_file])
    assert "the escape \\ud800 at byte " in str(caught.value), caught.value
    assert "half of a UTF-16 surrogate pair" in str(caught.value)
    ring_file.write_text(_pub(SITE).replace('"valid_from": null', '"valid_from": NaN'))
    with pytest.raises(SigningError, match=r"not JSON: NaN at byte \d+ is not JSON"):
        load_keyring([ring_file])
