"""Signed logs for the page's signing line (tests/view/test_fault_probes_sigpage58*.py): the
site's key pair in a keys folder as `keys new` writes it, a forger's key, and the four logs a
referee meets: signed by the site, unsigned, re-signed by another key, and a tail past the last
signature."""

from __future__ import annotations

from pathlib import Path

from buraco_log import log
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.signing.keys import Signer, write_key_pair
from tests.signing.helpers import match, write_signed


def _signed_at(path: Path, events: list[AnyEvent], seq: int, signer: Signer) -> None:
    """``events`` in one batch, a signature by ``signer`` after ``seq`` alone (or none: -1)."""
    start = events[0]
    assert isinstance(start, MatchStarted)
    with log.Writer(path, batched=True, batch_events=len(events)) as w:
        for event in events:
            w.append(event)
            if event.seq == seq:
                w.flush()
                w.put_signature(signer.sign_head(start.match_id, seq,
                                                 bytes.fromhex(w.head)))


class SignedLogs:
    """The folder ``root``: ``keys/site.pub`` (the trusted key) and the logs."""

    def __init__(self, root: Path) -> None:
        self.keys = root / "keys"
        self.keys.mkdir()
        self.site = Signer.generate()
        self.forger = Signer.generate()
        write_key_pair(self.keys, "site", signer=self.site)
        self.signed = root / "signed.blog"
        events = match(key_id=self.site.key_id)
        self.last = events[-1].seq
        # a player's receipt for the site's signed head after seq 100
        self.receipt = write_signed(self.signed, events, self.site, sign_at="end",
                                    batch=len(events), receipts_at=[100])[100]
        self.unsigned = root / "unsigned.blog"
        _signed_at(self.unsigned, match(), -1, self.site)
        # the whole log written again under the forger's key: its start names that key
        self.resigned = root / "resigned.blog"
        write_signed(self.resigned, match(key_id=self.forger.key_id), self.forger,
                     sign_at="end", batch=len(events))
        # signed by the site up to seq 20; the events after it covered by no signature
        self.tail_at = 20
        self.tail = root / "tail.blog"
        _signed_at(self.tail, match(key_id=self.site.key_id), self.tail_at, self.site)
