"""An unsealed log whose verified signatures cover every event.

The audit notes of every unsealed log that "edits that keep each record's CRC are not
detectable". With signatures it is not so: each signature is checked against the chain the
reader computes from the events themselves (sealed or not), so once the site's signatures are
verified up to the last event an edit anywhere is caught, and the note misled the referee into
doubting a log that proves itself. It is left out then; it stays when the signatures are not
verified or stop short of the end.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log.audit import UNSEALED_NOTE
from buraco_log.signing.keys import Signer
from tests import brokenlogs as bl
from tests.signing.helpers import audit, match, ring, write_signed

SITE = Signer.generate()


@pytest.fixture()
def unsealed(tmp_path: Path) -> Path:
    path = tmp_path / "m.blog"
    write_signed(path, match(key_id=SITE.key_id), SITE, batch=16, sealed=False)
    return path


def test_verified_signatures_to_the_end_need_no_unsealed_note(unsealed: Path) -> None:
    v = audit(unsealed, ring(SITE))
    assert v.ok and v.integrity.status == "unsealed" and v.signing.verified is True
    assert UNSEALED_NOTE not in v.notes


def test_and_indeed_an_edit_keeping_the_crc_is_caught(unsealed: Path) -> None:
    assert len(bl.segment_offsets(unsealed)) > 3
    bl.tamper(unsealed, 2)  # records: events 0-15, a signature, events 16-31, ...
    v = audit(unsealed, ring(SITE))
    assert not v.ok and v.integrity.status == "broken" and v.integrity.kind == "chain"
    # the signature after seq 31 no longer signs the chain the reader computes
    assert v.integrity.message is not None
    assert v.integrity.message.startswith("the signature record after seq 31 signs seq 31 with a "
                                          "head that is not this log's")


def test_without_keys_the_note_stays(unsealed: Path) -> None:
    v = audit(unsealed)
    assert v.ok and v.signing.verified is None and UNSEALED_NOTE in v.notes


def test_signatures_that_stop_short_of_the_end_keep_the_note(tmp_path: Path) -> None:
    events = match(key_id=SITE.key_id)
    path = tmp_path / "short.blog"
    write_signed(path, events[:100], SITE, sealed=False)
    from buraco_log import log

    with log.Writer(path, validate=False) as w:  # the rest appended with no signer
        for e in events[100:]:
            w.append(e)
    v = audit(path, ring(SITE))
    assert v.ok and v.signing.last_signed_seq == 99
    assert UNSEALED_NOTE in v.notes
