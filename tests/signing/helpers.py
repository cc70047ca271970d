"""Signed match logs for the signing tests: simulated matches, a fresh key, receipts."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import msgspec

from buraco_log import log
from buraco_log.audit import SigningOptions, Verdict, audit_log
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.rules import preset
from buraco_log.signing.check import HeldReceipt
from buraco_log.signing.keys import Keyring, Signer
from buraco_log.signing.record import Receipt, SignedHead


@functools.lru_cache(maxsize=16)
def _simulated(seed: str, rules: str) -> tuple[AnyEvent, ...]:
    from buraco_log.simulate import simulate_match

    return tuple(simulate_match(preset(rules), 2, seed=seed))


def match(seed: str = "sign", rules: str = "thirteen-quick",
          key_id: str | None = None) -> list[AnyEvent]:
    """A complete simulated match (committed deals), its start recording ``key_id``."""
    events = list(_simulated(seed, rules))
    events[0] = msgspec.structs.replace(events[0], key_id=key_id)
    return events


def write_signed(path: Path, events: Iterable[AnyEvent], signer: Signer, *,
                 sign_at: Literal["segment", "end"] = "segment", batch: int = 0,
                 receipts_at: Iterable[int] = (), sealed: bool = True) -> dict[int, SignedHead]:
    """Write ``events`` with ``signer``: one durable append per event (``batch`` 0) or
    batches of ``batch``; returns the receipts handed out after the seqs in ``receipts_at``."""
    want = set(receipts_at)
    out: dict[int, SignedHead] = {}
    with log.Writer(path, signer=signer, sign_at=sign_at, sealed=sealed,
                    batched=batch > 0, batch_events=max(1, batch)) as w:
        for event in events:
            w.append(event)
            if event.seq in want:
                out[event.seq] = w.receipt()
    return out


def write_signed_by(path: Path, events: list[AnyEvent], signer_of: dict[int, Signer]) -> Path:
    """``events`` with a signature record after each seq in ``signer_of``, by that signer,
    whatever key the start records (as a forger splicing records would write them)."""
    start = events[0]
    assert isinstance(start, MatchStarted)
    with log.Writer(path) as w:
        for event in events:
            w.append(event)
            if (signer := signer_of.get(event.seq)) is not None:
                w.flush()
                w.put_signature(signer.sign_head(start.match_id, event.seq,
                                                 bytes.fromhex(w.head)))
    return path


def ring(*signers: Signer, revoked: Iterable[str] = ()) -> Keyring:
    return Keyring([s.public() for s in signers], revoked)


def held(signed: SignedHead, seat: int | None = 1) -> HeldReceipt:
    return HeldReceipt(Receipt.of(signed, seat), f"seat{seat}.json")


def audit(path: Path, keyring: Keyring | None = None, receipts: Iterable[HeldReceipt] = (),
          required: bool = False) -> Verdict:
    return audit_log(path, signing=SigningOptions(keyring, tuple(receipts), required))


def rules_of(v: Verdict, section: str = "signing") -> list[str]:
    return [f.rule for f in v.findings if f.section == section]
