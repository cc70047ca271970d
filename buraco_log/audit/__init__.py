"""The referee's library: audit a match log, summarize it, compare two copies, explain a move.

:func:`audit_log` never raises for a bad log: whatever is wrong becomes a :class:`Finding` in the
returned :class:`Verdict`, in four sections:

- integrity: ``sealed``, ``unsealed``, ``torn`` (tail at an offset) or ``broken`` (at record N,
  byte offset, seq), or ``unreadable``. The later sections check the events read before damage.
- provenance: the deals re-derived from committed (or plain) seeds (:mod:`buraco_log.dealer`).
- legality: the first illegal event, with seq, rule id, seat, cards and the table just before.
- scoring: each hand's recorded score against the recomputed one, line by line.

The package has one module per question: ``integrity`` (reading the bytes), ``deals``
(provenance), ``legality``, ``scores`` (score facts), ``summary`` (``show``), ``diff``,
``explanation`` and ``files`` (which paths are logs); this module composes them into the verdict
and re-exports their public names.

Every rule id is documented in :mod:`buraco_log.ruleids`. Results are frozen msgspec structs:
``msgspec.to_builtins(verdict)`` is the stable JSON form ``buraco-log audit --format json``
prints. Core module: stdlib and msgspec only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, SupportsIndex

import msgspec

from buraco_log import log
from buraco_log.audit import settings
from buraco_log.audit.causes import after_illegal, deal_behind, sheet_findings, unchecked_note
from buraco_log.audit.deals import Provenance, provenance
from buraco_log.audit.diff import Diff, diff_events, diff_logs
from buraco_log.audit.explanation import Explanation, explain, explain_event
from buraco_log.audit.files import AnyPath, find_logs, is_log_file, path_text, same_files
from buraco_log.audit.findings import NO_SNAPSHOTS, SECTIONS, Finding, ordered, to_dict
from buraco_log.audit.integrity import (
    Integrity,
    IntegrityStatus,
    LogStream,
    Signed,
    _integrity_findings,
    load,
    load_iter,
    log_not_started,
    not_started,
    read_log,
    read_log_signed,
    reordered_metadata,
    repeated_signature,
)
from buraco_log.audit.legality import IllegalEvent, Legality, _illegal
from buraco_log.audit.scores import HandCheck, ScoreLine, Scoring, SideCheck, _scoring, score_lines
from buraco_log.audit.settings import REQUIRE_COMMITMENT_ENV, Setting, SettingsError
from buraco_log.audit.stream import audit_iter
from buraco_log.audit.summary import (
    HandSummary,
    ScoreMismatch,
    SeatLine,
    Summary,
    read_and_summarize,
    rule_overrides,
    show_log,
    summarize,
    summarize_stream,
)
from buraco_log.errors import LogFormatError
from buraco_log.events import AnyEvent, MatchEnded, MatchStarted
from buraco_log.signing.check import HeldReceipt, ReadPast, Signing, time_notes
from buraco_log.signing.check import Problem as SigningProblem
from buraco_log.signing.check import check as check_signatures
from buraco_log.signing.keys import Keyring
from buraco_log.timeline import Timeline

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


@dataclasses.dataclass(frozen=True)
class SigningOptions:
    """How an audit checks signatures (docs/signing.md): the trusted keys, the players'
    receipts (each applied to the log of its match), and whether signatures are required.
    Requiring signatures also requires a commitment.

    ``by_match``: True, each receipt is checked against the log of its match only (several
    logs audited); False, every receipt against every log, so a receipt for another match is
    a finding (``sign.receipt_other_match``), as ``buraco-log audit LOG --receipt R`` says it;
    None (the default): False for :func:`audit_log` and :func:`audit_events` (one log), True
    for :func:`audit_many` of several logs. It was True, and ``audit_log`` silently dropped a
    receipt for another match that the command reports."""

    keyring: Keyring | None = None
    receipts: tuple[HeldReceipt, ...] = ()
    require_signatures: bool = False
    by_match: bool | None = None


def signing_options(keys: Sequence[str] = (), receipts: Sequence[str] = (),
                    require_signatures: bool | None = None, *, by_match: bool | None = None,
                    environ: Mapping[str, str] | None = None) -> SigningOptions:
    """The audit's signing options from the command line and the site settings (flag, then
    environment, then ``[audit]`` in the config file). Raises :class:`SettingsError` or
    ``SigningError`` (one line) for a setting, key file or receipt that cannot be used."""
    from buraco_log.signing.check import load_receipts
    from buraco_log.signing.keys import SigningError, load_keyring

    trusted = settings.keys(list(keys), environ)
    required = settings.require_signatures(require_signatures, environ)
    try:
        keyring = load_keyring(list(trusted.value)) if trusted.value else None
    except SigningError as exc:
        if trusted.source == "--keys":
            raise
        # a path the user never typed on this command line: say where it came from, as a
        # config file named by BURACO_LOG_CONFIG is said
        raise SigningError(f"{exc} (the trusted keys named by {trusted.source})") from None
    held = tuple(load_receipts(list(receipts)))
    if keyring is None and (held or required.value):
        what = "checking a receipt" if held else f"requiring signatures ({required.source})"
        raise SettingsError(f"{what} needs the site's trusted public keys: --keys DIR_OR_FILE, "
                            f"{settings.KEYS_ENV}, or keys in [audit] of the config file")
    return SigningOptions(keyring, held, required.value, by_match)


class Verdict(msgspec.Struct, frozen=True):
    """One log's audit. ``ok`` is True when there are no findings (exit status 0)."""

    path: str
    match_id: str | None
    rules: str | None
    players: tuple[str, ...]
    events: int
    ok: bool
    findings: tuple[Finding, ...]
    integrity: Integrity
    provenance: Provenance
    legality: Legality
    scoring: Scoring
    # What an OK verdict does not prove, said instead of left to guess ("integrity: unsealed,
    # ...", a missing reveal, deals nothing backs), and whether the match never started.
    notes: tuple[str, ...] = ()
    not_started: bool = False
    signing: Signing = Signing()


UNSEALED_NOTE = "integrity: unsealed, edits that keep each record's CRC are not detectable"
"""The note of every unsealed binary log: without the chain, a record rewritten with its CRC
recomputed reads as intact (schema/LOG_FORMAT.md)."""
UNSEALED_JSONL_NOTE = ("integrity: unsealed JSON Lines, which has no checksum of its own: an "
                       "edit of any line is not detectable")
"""The note of an unsealed JSON Lines log: its lines carry no CRC (it said "edits that keep
each record's CRC", as of a binary log)."""

NOTHING_READ_NOTE = "no event was read: deals, legality and scores were not checked"
"""The last note of a verdict whose bytes gave no event (not a log, unreadable, cut inside
its first record): its other sections report on nothing ("0 events legal")."""

_WHOLE = ("sealed", "unsealed")


def damage_note(events: int, integrity: Integrity, sig: Signing) -> str | None:
    """The last note of a damaged log's verdict: what its later sections cover (None for a
    whole log). A broken chain does not say where the change is (the record where it broke,
    or one before it; for JSON Lines, any event before the line that failed): those events
    are read, not proven intact, except as far as a signature read before the break covers
    them. In the library, not the command line: ``audit -f json`` must say it too."""
    if integrity.status in _WHOLE:
        return None
    if not events:
        return NOTHING_READ_NOTE
    n = integrity.events
    if integrity.kind != "chain":
        return f"later sections cover the {n} events read intact"
    text = f"later sections cover the {n} events read before the chain broke"
    if sig.last_signed_seq is None or not sig.signatures or sig.verified is False:
        return text + ", not proven intact: the change may be in any of them"
    s = sig.last_signed_seq
    if sig.verified:
        return (text + f"; the site's verified signature proves seq 0 to {s}: the change is "
                f"after seq {s}")
    return (text + f"; a signature covers seq 0 to {s} (not verified: no trusted keys), so the "
            f"change is after it unless the signatures were replaced too")


def _notes(events: Sequence[AnyEvent], integrity: Integrity, prov: Provenance,
           required: bool) -> list[str]:
    notes = ([UNSEALED_JSONL_NOTE if integrity.format == "jsonl" else UNSEALED_NOTE]
             if integrity.status == "unsealed" else [])
    if prov.second_start is not None:
        events = [e for e in events if e.seq < prov.second_start]  # the first match's
        k = prov.after_second
        notes.append(f"provenance: a second match start, of another match id, at seq "
                     f"{prov.second_start} (see legality): the {k} deal{'s' if k != 1 else ''} "
                     "after it belong to that match, and were not checked against the first "
                     "start's commitment")
    n = prov.unchecked
    if n:
        deals = f"{n} deal{'s' if n != 1 else ''}"
        were = "were" if n != 1 else "was"
        # no commitment, no reveal to miss: an unfinished log without one says what it lacks
        if prov.commitment is not None and not any(type(e) is MatchEnded for e in events):
            ends = ("the match has no MatchEnded before the second start"
                    if prov.second_start is not None else "the log ends without MatchEnded")
            notes.append(f"provenance: {ends}: the reveal is missing and {deals} {were} not "
                         "checked")
        elif prov.commitment is None:
            notes.append(f"provenance: no commitment or plain seed backs {deals}: "
                         f"{'it was' if n == 1 else 'they were'} not checked"
                         + ("" if required else " (requiring a commitment makes "
                         f"this a finding: --require-commitment, or {REQUIRE_COMMITMENT_ENV}=1)"))
    return notes



def audit_events(events: Iterable[AnyEvent], integrity: Integrity, path: str = "", *,
                 require_commitment: bool = False, signed: Signed | None = None,
                 signing: SigningOptions | None = None) -> Verdict:
    """Audit events already read (``integrity`` says how the bytes held up).

    With ``require_commitment``, deals that no commitment or plain seed backs are findings
    (``deal.commitment_missing``), for sites where every deal must be provably fair.
    ``signed`` holds the log's signature records; ``signing`` says how to check them.
    """
    events = events if isinstance(events, Sequence) else list(events)  # each section reads it
    signing = signing or SigningOptions()
    if signing.by_match is None:  # one log audited: every receipt given is for it
        signing = dataclasses.replace(signing, by_match=False)
    signed = signed or Signed()
    require_commitment = require_commitment or signing.require_signatures
    if not_started(events, integrity):  # issue 20: not an audit failure, and said so
        what = ("no events" if integrity.status in ("sealed", "unsealed")
                else f"no whole header ({integrity.message}; delete the file: no event is in it)")
        # ... unless a player holds a receipt for it (one log audited: every receipt is for
        # it): the site signed events this file no longer holds, so it was cut to nothing.
        held = [] if signing.by_match else list(signing.receipts)
        sig, problems = check_signatures(
            events, (), keyring=signing.keyring, receipts=held,
            required=False) if held else (Signing(), [])
        cut = tuple(Finding("signing", p.rule, p.message, seq=p.seq) for p in problems)
        return Verdict(
            path=path, match_id=None, rules=None, players=(), events=0, ok=not cut,
            findings=cut, integrity=integrity,
            provenance=Provenance("none", None, False, 0, ()),
            legality=Legality(0, False, None), scoring=Scoring((), None, (), True),
            notes=() if cut else (f"not started: the log holds {what}: a match that never "
                                  "received an event",),
            not_started=not cut, signing=sig,
        )
    findings = _integrity_findings(integrity)
    prov = provenance(events, require_commitment)
    findings += prov.findings
    tl = Timeline(events, snapshot_every=NO_SNAPSHOTS)  # the audit never jumps back
    illegal = _illegal(tl)
    after: tuple[int, ...] = ()
    if illegal is not None:
        cause = deal_behind(events, prov, illegal.seq)
        follows = (f"; it follows from the changed deal at seq {cause} [deal.mismatch]: with "
                   "the deal its seeds give, the hand replays legally through it"
                   if cause is not None else "")
        if cause is not None:
            illegal = msgspec.structs.replace(illegal, follows_from=cause)
        findings.append(Finding("legality", illegal.rule,
                                f"first illegal event: seq {illegal.seq}: {illegal.message}"
                                + follows, seq=illegal.seq))
        after = after_illegal(events, illegal.seq)
    # A wrong winner is a legality matter the reducer meets only after the totals check;
    # beside wrong totals it is said in their scoring finding, as the reducer says it
    # (`explain` and `show` name score.mismatch there, RULES.md §9 before §10).
    end = next((e for e in tl.events if isinstance(e, MatchEnded)), None)
    if (illegal is None and end is not None and end.winner is not None
            and end.winner != tl.final.winner and tl.final.winner is not None
            and (end.totals is None or end.totals == tl.final.totals)):
        findings.append(Finding("legality", "match.wrong_winner",
                                f"recorded winner side {end.winner}, but side "
                                f"{tl.final.winner} won", seq=end.seq))
    scoring, score_findings = _scoring(tl)
    findings += score_findings
    if illegal is not None:  # what can still be checked past it: the sheet against itself
        findings += sheet_findings(events, illegal.seq, [
            tuple(x.total for x in r.scores) for r in tl.final.results])
        if after:
            scoring = msgspec.structs.replace(scoring, after_illegal=after, ok=False)
    start = events[0] if events and isinstance(events[0], MatchStarted) else None
    sig, problems = signature_check(path, events, integrity, signed, signing)
    findings += [Finding("signing", p.rule, p.message, seq=p.seq) for p in problems]
    notes = _notes(events, integrity, prov, require_commitment)
    if illegal is not None and after:
        notes.append(unchecked_note(events, illegal.seq, after))
    unsealed = [n for n in notes if n in (UNSEALED_NOTE, UNSEALED_JSONL_NOTE)]
    if (unsealed and sig.verified and events and sig.last_signed_seq == events[-1].seq):
        # Each signature was checked against the chain the reader computes from the events,
        # sealed or not, and the last covers every event: an edit anywhere would not verify.
        notes.remove(unsealed[0])
    if sig.signatures and sig.verified is None:
        notes.append(f"signing: {sig.signatures} signature(s) {sig.by_whom()} not "
                     "verified: no trusted keys given (--keys)")
    if (tail := _unsigned_tail(events, sig, integrity, keyed=signing.keyring is not None,
                               version=signed.version)) is not None:
        notes.append(tail)
    notes += time_notes(events, sig, signing.keyring, time.time_ns() // 1_000_000)
    if (damage := damage_note(len(events), integrity, sig)) is not None:
        notes.append(damage)  # last: the text output prints it below the sections
    return Verdict(
        path=path,
        match_id=start.match_id if start is not None else None,
        rules=start.rules.name if start is not None else None,
        players=tuple(p.name for p in start.players) if start is not None else (),
        events=len(events),
        ok=not findings,
        findings=ordered(findings),
        integrity=integrity,
        provenance=prov,
        legality=Legality(events_checked=len(tl.events), complete=tl.final.phase == "over",
                          first_illegal=illegal),
        scoring=scoring,
        notes=tuple(notes),
        signing=sig,
    )


def signature_check(path: str, events: Sequence[AnyEvent], integrity: Integrity,
                    signed: Signed, signing: SigningOptions
                    ) -> tuple[Signing, list[SigningProblem]]:
    """The signature check of the log at ``path`` read as ``events``, as the audit runs it
    with ``signing`` (the match page's signing line says the same)."""
    start = events[0] if events and isinstance(events[0], MatchStarted) else None
    match_id = start.match_id if start is not None else None
    receipts = [r for r in signing.receipts
                if not signing.by_match or r.receipt.match_id == match_id]
    sig, problems = check_signatures(
        events, signed.signatures, version=signed.version, keyring=signing.keyring,
        receipts=receipts, required=signing.require_signatures,
        complete_read=integrity.status in ("sealed", "unsealed"),
        read_past=_read_past(path, events, integrity) if receipts else None,
        torn=integrity.status == "torn")
    return sig, list(problems)


def _read_past(path: str, events: Sequence[AnyEvent], integrity: Integrity
               ) -> ReadPast | None:
    """The log's events read on past a break in its chain whose records' checksums hold
    (``chain``, or a signature record out of place: ``seq``), for its receipts; None for
    other damage, where a changed byte may be the disk's and not an edit."""
    if not path or integrity.status != "broken" or integrity.kind not in ("chain", "seq"):
        return None
    from buraco_log.forensic import read_anyway

    try:
        salvage = read_anyway(path)
    except (OSError, LogFormatError):  # changed since it was read, or gone: as it was read
        return None
    if salvage.failure is None or salvage.rule not in ("log.chain", "log.seq"):
        return None  # the file changed between the two reads
    where = (f"line {integrity.record}" if integrity.format == "jsonl"
             and integrity.record is not None else f"byte {integrity.offset}")
    return ReadPast(salvage.events, salvage.read_to_end, where,
                    events[-1].seq if events else None, integrity.format != "jsonl")


NO_SIGNATURE_NOTE = "signing: the log holds no signature"
"""How the note of a log audited with trusted keys that holds no signature and names no key
starts (a batch run with --quiet counts it among the logs whose events no signature covers)."""


def _unsigned_tail(events: Sequence[AnyEvent], sig: Signing, integrity: Integrity, *,
                   keyed: bool = False, version: int = log.SIGNED_VERSION) -> str | None:
    """The note of a signed log whose last events no signature covers, when signatures are
    not required (then it is the finding ``sign.tail_unsigned``). Anyone holding the file can
    cut it back to a signed head and write events after it with the chain recomputed: an OK
    verdict must not be read as "the site signed all of it". ``keyed``: trusted keys were
    given, so the referee asked for the site's signatures, and a log with none says so even
    when its start names no key."""
    if sig.required or not events:
        return None
    # A torn or damaged log is read up to the break: a signature past it (or the one cut
    # short) cannot be read, so the note speaks of the signatures read intact.
    intact = "" if integrity.status in ("sealed", "unsealed") else " read intact"
    if not sig.signatures:  # stripped whole (no key needed), or a writer that never signed
        if sig.key_id is None and keyed:
            # A keeper who strips the signatures and the start's key id (or writes the log
            # as format version 1, which holds neither) left an audit with --keys saying OK
            # and not one word of signing: the keys given checked nothing.
            older = (f"it is format version {version}, which holds no signatures, and "
                     if version < log.SIGNED_VERSION else "")
            return (f"{NO_SIGNATURE_NOTE}{intact} and its match start records "
                    f"no signing key ({older}a signed log's start names its key): the trusted "
                    "keys given checked nothing, and nothing shows the site wrote any of it "
                    "(requiring signatures makes this a finding: --require-signatures, or "
                    f"{settings.REQUIRE_SIGNATURES_ENV}=1)")
        if sig.key_id is None:
            return None  # an unsigned log that never meant to be signed, audited without keys
        return (f"signing: the match start records key {sig.key_id} but the log holds no "
                f"signature{intact}: nothing shows the site wrote any of it (requiring "
                "signatures makes this a finding: --require-signatures, or "
                f"{settings.REQUIRE_SIGNATURES_ENV}=1)")
    if sig.last_signed_seq is None:
        return None
    last = events[-1].seq
    if sig.last_signed_seq >= last:
        return None
    first = sig.last_signed_seq + 1
    one = first == last
    what = f"event {first} is" if one else f"events {first} to {last} are"
    return (f"signing: {what} signed by no signature{intact} (the last signs seq "
            f"{sig.last_signed_seq}): nothing shows the site wrote {'it' if one else 'them'} "
            "(requiring signatures makes this a finding: --require-signatures, or "
            f"{settings.REQUIRE_SIGNATURES_ENV}=1)")


def audit_log(path: AnyPath, *, require_commitment: bool = False,
              signing: SigningOptions | None = None) -> Verdict:
    """Audit one log file (binary, or JSON Lines by its ``.jsonl`` name).

    Never raises for a bad log: unreadable files, damage, illegal moves and wrong scores all
    come back as findings. ``verdict.ok`` is True when there are none.
    """
    path = path_text(path)  # a bytes path names the file, not "b'...'"
    # The whole log is held (130-170 bytes an event), where `show` and `replay` stream it: the
    # deals' provenance, the signatures' chain heads, the sheet past an illegal event and the
    # notes each read the events again.
    events, integrity, signed = read_log_signed(path)
    verdict = audit_events(events, integrity, path, require_commitment=require_commitment,
                           signed=signed, signing=signing)
    reordered = reordered_metadata(path, events, integrity, signed.version)
    if reordered is not None:
        # before the damage note, which stays last (the text output prints it below the
        # sections)
        notes = verdict.notes
        verdict = msgspec.structs.replace(verdict,
                                          notes=(*notes[:-1], reordered, *notes[-1:]))
    if (repaired := _repair_note(path, verdict)) is not None:
        verdict = msgspec.structs.replace(verdict, notes=(*verdict.notes, repaired))
    return verdict


def _repair_note(path: str, verdict: Verdict) -> str | None:
    """A log that ends before a receipt's seq, with the backup ``buraco-log repair`` keeps
    beside it: the note that it was repaired, which the log itself does not say (the
    finding could only say "cut, or an early copy")."""
    import glob
    import re

    if verdict.integrity.status not in _WHOLE or not any(
            f.rule == "sign.receipt_cut" for f in verdict.findings):
        return None
    backups = [b for b in sorted(glob.glob(glob.escape(path) + ".bak*"))
               if re.fullmatch(r"\.bak(\.[0-9]+)?", b[len(path):]) and os.path.isfile(b)]
    if not backups:
        return None
    return (f"signing: {', '.join(backups)} {'is' if len(backups) == 1 else 'are'} beside the "
            "log: `buraco-log repair` keeps there the bytes it cuts off a torn tail (`cat LOG "
            "LOG.bak` gives the log as it was): the log was repaired after a crash, so it may end "
            "where the crash left it rather than where someone cut it; the site handed out a "
            "receipt for events its log did not keep")


class Verdicts(list[Verdict]):
    """:func:`audit_many`'s verdicts, in the order of the paths (a list, equal to the list of
    the same verdicts), with the receipts that went to no log.

    ``unmatched``: receipts for a match none of the logs holds (its log is missing, or cut
    so that no event names its match): each is a player's proof that the site signed a match
    the referee was not given. A receipt whose match a log of the batch holds under another
    match id (renamed) is not among them: it is that log's ``sign.receipt_changed``.

    ``deaths``: each worker process that died during the batch (killed, out of memory), as
    (the log it was on, or None between logs; its exit status, -N for signal N). The batch
    went on without it: the log it was on was audited again alone (its verdict says so).

    ``ok`` is False when any verdict has findings, any receipt is unmatched or any worker
    died, as ``buraco-log audit`` exits 1 for each."""

    unmatched: tuple[HeldReceipt, ...] = ()
    deaths: tuple[tuple[str | None, int | None], ...] = ()

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self) and not self.unmatched and not self.deaths


def unmatched_receipts(verdicts: Iterable[Verdict], signing: SigningOptions | None
                       ) -> tuple[HeldReceipt, ...]:
    """The receipts of ``signing`` for a match none of ``verdicts`` holds, when each receipt
    goes to its match's log (``by_match``, which None decides as :func:`audit_many` does: for
    several logs; with it False every log was given every receipt, and one of another match
    is that log's ``sign.receipt_other_match``). By match id alone: :func:`audit_many`'s
    ``unmatched`` also leaves out the receipts of a log of the batch that was renamed."""
    verdicts = list(verdicts)
    by_match = signing.by_match if signing is not None else None
    if signing is None or not (len(verdicts) != 1 if by_match is None else by_match):
        return ()
    matches = {v.match_id for v in verdicts}
    return tuple(h for h in signing.receipts if h.receipt.match_id not in matches)


def _claim_renamed(verdicts: Verdicts, signing: SigningOptions | None) -> None:
    """Give each unmatched receipt to the log of the batch that is its match renamed (the
    match id in its start changed after the site signed it, to shake the receipt off): that
    log's ``sign.receipt_changed``, as one log audited with the receipt says it, where the
    batch said only that no log holds the receipt's match. The other receipts of that match
    are judged against the log as the match it was. Only logs that reach its seq and whose
    start records the receipt's key, or that hold no signature the keys trust (a renamed
    match's signatures no longer verify: its keeper strips them and the start's key id, or
    signs again), are read again (and only when a receipt is unmatched)."""
    if signing is None or signing.keyring is None or not verdicts.unmatched:
        return
    groups: dict[tuple[str, str], list[HeldReceipt]] = {}
    for h in verdicts.unmatched:
        groups.setdefault((h.receipt.match_id, h.receipt.key_id), []).append(h)
    claimed: set[int] = set()
    for (match_id, key_id), held in groups.items():
        first = min(h.receipt.seq for h in held)
        for i, v in enumerate(verdicts):
            # a log re-chained under the site's old signatures breaks at the first of them:
            # its events are read on past the break (``_read_past``), as alone
            edited = v.integrity.status == "broken" and v.integrity.kind in ("chain", "seq")
            # a keeper who renamed the match cannot keep the site's signatures: the log holds
            # none and its start no key, or it was signed again by a key not trusted
            stripped = v.signing.key_id is None or v.signing.verified is False
            if (i in claimed or v.match_id is None
                    or (v.signing.key_id != key_id and not stripped)
                    or (v.events <= first and not edited)):
                continue
            events, integrity, signed = read_log_signed(v.path)
            past = _read_past(v.path, events, integrity)
            whole = integrity.status in _WHOLE
            _, problems = check_signatures(events, (), version=signed.version,
                                           keyring=signing.keyring, receipts=held,
                                           complete_read=whole, read_past=past)
            renamed = [p for p in problems if p.rule == "sign.receipt_changed"]
            if not renamed:
                continue
            seqs = {p.seq for p in renamed}
            rest = [h for h in held if h.receipt.seq not in seqs]
            if past is not None:
                events, whole = list(past.events), past.to_end
            if rest and events and isinstance(events[0], MatchStarted):
                restored = [msgspec.structs.replace(events[0], match_id=match_id,
                                                    key_id=key_id), *events[1:]]
                renamed += check_signatures(restored, (), version=signed.version,
                                            keyring=signing.keyring, receipts=rest,
                                            complete_read=whole)[1]
            found = tuple(Finding("signing", p.rule, p.message, seq=p.seq) for p in renamed)
            verdicts[i] = msgspec.structs.replace(
                v, findings=(*v.findings, *found), ok=False,
                signing=msgspec.structs.replace(v.signing,
                                                receipts=v.signing.receipts + len(held)))
            claimed.add(i)
            verdicts.unmatched = tuple(h for h in verdicts.unmatched if h not in held)
            break


def audit_many(
    paths: Iterable[AnyPath], *, workers: int = 1,
    on_done: Callable[[Verdict], None] | None = None, require_commitment: bool = False,
    signing: SigningOptions | None = None,
    on_no_pool: Callable[[OSError], None] | None = None,
) -> Verdicts:
    """Audit many logs, in ``workers`` processes; results in the order of ``paths``.

    ``on_done`` is called in this process as each verdict arrives (for a progress bar); an
    exception it raises stops the batch (the workers with it) and comes out of this call.
    No more workers are started than there are logs. Receipts for a match none of the logs
    holds are the result's ``unmatched`` (and make its ``ok`` False). A worker killed
    mid-batch (SIGKILL, the OOM killer) costs only the log it was on, audited again alone
    (:func:`_audit_in_pools`); the result's ``deaths`` say so (and make its ``ok`` False).
    Worker processes that cannot be started (``ulimit -n``, ``ulimit -u``): the logs left are
    audited in this process, as with ``workers=1``, and ``on_no_pool`` is told why (it was
    an OSError out of this call, "Too many open files", where one process worked).
    """
    if isinstance(paths, str | bytes | os.PathLike):  # audited letter by letter
        raise TypeError(f"audit_many takes a list of paths, not one path ({paths!r}): "
                        "audit_log audits one log")
    if isinstance(workers, bool) or not isinstance(workers, SupportsIndex):
        raise TypeError(f"workers is a whole number of processes, not {workers!r}")
    files = [path_text(p) for p in paths]
    if signing is not None and signing.by_match is None:  # each receipt to its match's log
        signing = dataclasses.replace(signing, by_match=len(files) != 1)
    workers = min(operator.index(workers), len(files))  # 10**6 workers for two logs hung
    if workers <= 1 or len(files) <= 1:
        out = Verdicts()
        for p in files:
            v = _audit_safely(p, require_commitment, signing)
            if on_done is not None:
                on_done(v)
            out.append(v)
        out.unmatched = unmatched_receipts(out, signing)
        _claim_renamed(out, signing)
        return out
    results: list[Verdict | None] = [None] * len(files)

    def done(i: int, v: Verdict) -> None:
        results[i] = v
        if on_done is not None:
            on_done(v)

    from buraco_log.audit.pool import NoWorkers

    why: OSError | None = None
    try:
        deaths = _audit_in_pools(files, workers, require_commitment, signing, done)
    except NoWorkers as exc:  # no pool to be had: this process audits what is left
        why, deaths = OSError(exc.errno, exc.strerror), []  # not its traceback: the pool
    if why is not None:
        import gc

        gc.collect()  # the half-made pool's pipes: each log after was "Too many open files"
        if on_no_pool is not None:
            on_no_pool(why)
        for i, p in enumerate(files):
            if results[i] is None:
                done(i, _audit_safely(p, require_commitment, signing))
    finished = Verdicts(v for v in results if v is not None)
    finished.deaths = tuple(deaths)
    finished.unmatched = unmatched_receipts(finished, signing)
    _claim_renamed(finished, signing)
    return finished


_BREAKS = 3  # pools broken with no worker on a log, before the logs left are given up


def _audit_in_pools(files: list[str], workers: int, require_commitment: bool,
                    signing: SigningOptions | None, done: Callable[[int, Verdict], None]
                    ) -> list[tuple[str | None, int | None]]:
    """Audit ``files`` in pools of ``workers`` processes, calling ``done(i, verdict)`` as each
    verdict arrives. A worker killed mid-batch (SIGKILL, the OOM killer) broke the pool, and
    the batch was one line with no verdict: a club checking 10,000 logs lost them all. Now
    the verdicts in are kept, the log the dead worker was on is audited again alone in a
    fresh process (dying again, its verdict is the finding ``pool.worker_died``), and the
    logs left go on in a fresh pool. The deaths: (the log a dead worker was on, its exit
    status), in order."""
    from concurrent.futures import as_completed

    from buraco_log.audit.pool import WorkerDied

    pending = list(range(len(files)))
    breaks = 0
    deaths: list[tuple[str | None, int | None]] = []
    while pending:
        finished: set[int] = set()
        chunk = max(1, min(64, len(pending) // (workers * 8)))
        parts = [pending[k:k + chunk] for k in range(0, len(pending), chunk)]
        try:
            with worker_pool(min(workers, len(parts)), f"auditing {len(files)} logs",
                             "no report was written") as pool:
                futures = {pool.submit(_audit_chunk, [files[i] for i in part],
                                       require_commitment, signing): part for part in parts}
                for future in as_completed(futures):
                    for i, v in zip(futures[future], future.result(), strict=True):
                        finished.add(i)
                        done(i, v)
            return deaths
        except WorkerDied as died:
            pending = [i for i in pending if i not in finished]
            blamed = []
            for label, status in died.died:
                j = _held(files, pending, label) if label else None
                deaths.append((files[j] if j is not None else None, status))
                if j is not None:
                    blamed.append((j, status))
            if not blamed:
                breaks += 1
                if breaks < _BREAKS:
                    continue
                # workers that keep dying between logs: the logs left are not audited
                last = died.died[0][1] if died.died else None
                for i in pending:
                    done(i, _died_verdict(files[i], last, between=breaks))
                return deaths
            for i, status in blamed:
                pending.remove(i)
                v, again = _audit_alone(files[i], status, require_commitment, signing)
                if again is not None:
                    deaths.append(again)
                done(i, v)
    return deaths


def _held(files: list[str], pending: list[int], label: str) -> int | None:
    """The index of the pending log a worker's label names (a label holds the first 1,023
    bytes of its path)."""
    want = os.fsencode(label)
    for i in pending:
        if os.fsencode(files[i])[:len(want)] == want and (
                files[i] == label or len(want) >= 1023):
            return i
    return None


def _audit_alone(path: str, status: int, require_commitment: bool,
                 signing: SigningOptions | None
                 ) -> tuple[Verdict, tuple[str | None, int | None] | None]:
    """The log a dead worker was on, audited again in a fresh process of its own (a log that
    takes the memory of one process, not of several at once, gets its verdict), said in a
    note; a second death is the verdict :func:`_died_verdict`, and the second death."""
    from buraco_log.audit.pool import WorkerDied

    try:
        with worker_pool(1, f"auditing {path} again", "") as pool:
            v = pool.submit(_audit_safely, path, require_commitment, signing).result()
    except WorkerDied as again:
        second = again.died[0][1] if again.died else None
        return _died_verdict(path, second, first=status), (path, second)
    return msgspec.structs.replace(v, notes=(*v.notes, (
        f"the process first auditing this log died ({signal_text(status)}): it was audited "
        "again, alone, in a fresh process"))), None


def signal_text(status: int | None) -> str:
    """A dead process's exit status as words: "signal 9, SIGKILL", "exit status 3"."""
    import signal

    if status is None:
        return "killed"
    if status >= 0:
        return f"exit status {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        return f"signal {-status}"
    return f"signal {-status}, {name}"


def _died_verdict(path: str, status: int | None, *, first: int | None = None,
                  between: int = 0) -> Verdict:
    """The verdict of a log whose checking process died, twice (``first``, then ``status``),
    or that was left when the workers kept dying ``between`` logs: the finding
    ``pool.worker_died``, so that the batch goes on and exits 1."""
    if between:
        what = (f"not audited: the checking processes died {between} times between logs "
                f"(the last, {signal_text(status)}: killed, or out of memory), so the logs "
                "left were not audited")
    else:
        what = (f"the process checking this log died ({signal_text(first)}), and so did a "
                f"fresh one checking it alone ({signal_text(status)}): killed, or out of "
                "memory; no verdict")
    return _no_verdict(path, "pool.worker_died",
                       what + "; `buraco-log audit LOG` audits one log in this process",
                       "not audited: its checking process died")


def _audit_chunk(paths: list[str], require_commitment: bool = False,
                 signing: SigningOptions | None = None) -> list[Verdict]:
    """:func:`_audit_safely` of each of ``paths``, in a pool's worker."""
    return [_audit_safely(p, require_commitment, signing) for p in paths]


def worker_pool(max_workers: int, doing: str = "the work",
                after: str = "") -> contextlib.AbstractContextManager[ProcessPoolExecutor]:
    """:func:`buraco_log.audit.pool.worker_pool`, imported when a pool is asked for:
    multiprocessing and concurrent.futures cost every command that audits one log its start
    (about 15 ms of `show`, `replay`, `explain`)."""
    from buraco_log.audit.pool import worker_pool as pool

    return pool(max_workers, doing, after)


def _audit_safely(path: str, require_commitment: bool = False,
                  signing: SigningOptions | None = None) -> Verdict:
    """:func:`audit_log`, with a defect of the audit itself reported as a finding of that log
    (rule ``audit.error``) so that one log never stops a batch."""
    # a pool's worker has the pool module (its initializer is there); one process has no
    # board to name the log on, so nothing to import
    pool = sys.modules.get("buraco_log.audit.pool")
    try:
        with pool.working_on(path) if pool is not None else contextlib.nullcontext():
            return audit_log(path, require_commitment=require_commitment, signing=signing)
    except Exception as exc:  # a defect in buraco_log, not in the log: keep the batch going
        return _no_verdict(path, "audit.error",
                           f"the audit failed: {type(exc).__name__}: {exc}",
                           f"{type(exc).__name__}: {exc}")


def _no_verdict(path: str, rule: str, message: str, cause: str) -> Verdict:
    """The verdict of a log the audit could not check: one finding, nothing read."""
    integrity = Integrity(status="unreadable", format="binary", events=0, records=0,
                          head=log.head_digest(()), kind="error", message=cause)
    return Verdict(
        path=path, match_id=None, rules=None, players=(), events=0, ok=False,
        findings=(Finding("integrity", rule, message),),
        integrity=integrity,
        provenance=Provenance("none", None, False, 0, ()),
        legality=Legality(0, False, None),
        scoring=Scoring((), None, (), True),
        notes=(NOTHING_READ_NOTE,),
    )


__all__ = [
    "NOTHING_READ_NOTE",
    "NO_SNAPSHOTS",
    "SECTIONS",
    "UNSEALED_JSONL_NOTE",
    "UNSEALED_NOTE",
    "Diff",
    "Explanation",
    "Finding",
    "HandCheck",
    "HandSummary",
    "IllegalEvent",
    "Integrity",
    "IntegrityStatus",
    "Legality",
    "LogStream",
    "Provenance",
    "ScoreLine",
    "ScoreMismatch",
    "Scoring",
    "SeatLine",
    "Setting",
    "SettingsError",
    "SideCheck",
    "Signed",
    "Signing",
    "SigningOptions",
    "Summary",
    "Verdict",
    "Verdicts",
    "audit_events",
    "audit_iter",
    "audit_log",
    "audit_many",
    "damage_note",
    "diff_events",
    "diff_logs",
    "explain",
    "explain_event",
    "find_logs",
    "is_log_file",
    "load",
    "load_iter",
    "log_not_started",
    "not_started",
    "ordered",
    "provenance",
    "read_and_summarize",
    "read_log",
    "read_log_signed",
    "repeated_signature",
    "rule_overrides",
    "same_files",
    "score_lines",
    "show_log",
    "signature_check",
    "signing_options",
    "summarize",
    "summarize_stream",
    "to_dict",
    "unmatched_receipts",
]
