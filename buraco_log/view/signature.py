"""The page's line on the log's signatures: whether the log is signed, by which key, whether the
signatures were verified against trusted keys, and which seqs no signature covers.

A referee who printed the page for a hearing could not tell a verified log from an unsigned
one: only ``sign.*`` findings of ``audit --html`` showed, as marks at a seq. The line is said
from what :func:`buraco_log.signing.check.check` finds, the code ``audit --keys`` runs, with
the same arguments the audit passes it (never a second reading of the signatures).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from buraco_log.signing.check import Signing

if TYPE_CHECKING:
    from buraco_log.audit import Integrity, Signed, SigningOptions
    from buraco_log.events import AnyEvent


class _Found(Protocol):  # a signing Problem, or the audit Finding made of it
    @property
    def rule(self) -> str: ...


_WHY = {
    "sign.untrusted": "its key is not among the trusted keys",
    "sign.revoked": "its key is revoked",
    "sign.key_window": "its key does not sign matches started then",
    "sign.invalid": "a signature does not verify (forged, or its bytes were changed)",
    "sign.key_mismatch": "a signature is by another key than the match start records",
}
"""Why signatures are not verified, by the rule of the first signing finding (its whole text
is the audit's finding, ``audit --keys``)."""


def status_line(sig: Signing, found: Sequence[_Found], last: int | None, *,
                whole: bool = True) -> str:
    """The page's signing line for what the audit found (``sig``, its ``sign.*`` findings
    ``found``) of a log whose last event read is ``last``; ``whole``: the whole file was read
    (not stopped by damage: a signature past it was not read, so none "is in the log")."""
    rules = list(dict.fromkeys(f.rule for f in found))
    said: set[str] = set()
    n = sig.signatures
    if not n:
        text = ("unsigned: the log holds no signature" if whole else
                "no signature in the events read intact (the damage stops the read; any "
                "signature past it was not read)")
        said.add("sign.unsigned")
    else:
        records = f"{n} signature{'s' if n != 1 else ''} {sig.by_whom()}"
        covered = f"seq 0 to {sig.last_signed_seq}"
        if sig.verified is None:
            text = (f"NOT checked (no trusted keys given: --keys): {records}, the last after "
                    f"seq {sig.last_signed_seq}; anyone can recompute such signatures")
        elif sig.verified:
            text = f"verified: signed {sig.by_whom()} (trusted), {covered} covered"
        else:
            why = next((r for r in rules if r in _WHY), None)
            said.add(why or "")
            text = (f"NOT verified: {records}, the last after seq {sig.last_signed_seq}"
                    + (f"; {_WHY[why]} [{why}]" if why is not None else ""))
        if last is not None and sig.last_signed_seq is not None and sig.last_signed_seq < last:
            first = sig.last_signed_seq + 1
            seqs = f"seq {first}" if first == last else f"seq {first} to {last}"
            text += f"; {seqs} covered by no signature"
            said.add("sign.tail_unsigned")
    if sig.receipts:
        off = [r for r in rules if r.startswith("sign.receipt")]
        r = sig.receipts
        text += (f"; {r} receipt{'s' if r != 1 else ''} checked: "
                 + (f"a receipt disagrees [{', '.join(off)}]" if off else "the log extends "
                    + ("it" if r == 1 else "them")))
        said.update(off)
    rest = [r for r in rules if r not in said]
    if rest:
        text += f" (also found: {', '.join(rest)})"
    return "Signing: " + text


def signature_status(path: str, events: Sequence[AnyEvent], integ: Integrity, signed: Signed,
                     options: SigningOptions | None) -> str:
    """The signing line of the log at ``path`` read as ``events``, checked as ``audit``
    checks it with ``options`` (its ``--keys`` and ``--receipt``; None: no keys given)."""
    from buraco_log.audit import SigningOptions, signature_check

    sig, problems = signature_check(path, events, integ, signed, options or SigningOptions())
    return status_line(sig, problems, events[-1].seq if events else None,
                       whole=integ.status in ("sealed", "unsealed"))
