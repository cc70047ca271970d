"""Verify a log's signatures and the players' receipts, as audit findings.

The log's reader has already checked that every signature record signs exactly the chain's
head where it stands (``buraco_log.log.Reader``); here the signatures meet the trusted keys
(:class:`~buraco_log.signing.keys.Keyring`) and the receipts meet the log's chain. The
``cryptography`` package is imported only when there are keys to verify with.

Rule ids (``buraco_log.ruleids``): ``sign.unsigned``, ``sign.key_mismatch``,
``sign.untrusted``, ``sign.revoked``, ``sign.key_window``, ``sign.invalid``,
``sign.tail_unsigned``, ``sign.end_missing``, ``sign.duplicate``, ``sign.receipt_changed``,
``sign.receipt_cut``, ``sign.receipt_invalid``, ``sign.receipt_other_match``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import msgspec

from buraco_log import events as ev
from buraco_log import log
from buraco_log.safetext import quoted
from buraco_log.signing import record

if TYPE_CHECKING:
    from buraco_log.signing.keys import Keyring


class Signing(msgspec.Struct, frozen=True):
    """What the audit found about a log's signatures.

    ``verified`` is None when no trusted keys were given (the signatures were then only
    checked against the chain, which anyone can recompute), True when every signature is by
    a trusted key and valid, False otherwise.
    """

    key_id: str | None = None  # the key the match start records
    signatures: int = 0  # signature records in the log
    last_signed_seq: int | None = None
    verified: bool | None = None
    receipts: int = 0  # receipts checked against this log
    required: bool = False
    # Signature records per key id that made them, in order of first appearance: a log
    # whose records another key made (or whose start records none) must not be summed up
    # as signed by the start's key alone.
    signers: dict[str, int] = {}

    def by_whom(self) -> str:
        """Who made the signature records, as a summary says it: "by key K" when the key the
        match start records made them all; otherwise every key with its count, and the key
        the start records (a referee must not read the start's key as the signer)."""
        if not self.signers or list(self.signers) == [self.key_id]:
            return f"by key {self.key_id}"
        start = "the match start records " + (
            "no key" if self.key_id is None else f"key {self.key_id}")
        if len(self.signers) == 1:
            return f"by key {next(iter(self.signers))} ({start})"
        counts = ", ".join(f"{k}: {n}" for k, n in self.signers.items())
        return f"by {len(self.signers)} keys ({counts}; {start})"


class Problem(msgspec.Struct, frozen=True):
    """One signing finding before it becomes an audit ``Finding`` (same rule, seq, line)."""

    rule: str
    message: str
    seq: int | None = None


class ReadPast(msgspec.Struct, frozen=True):
    """A log's events read on past a break in its chain (``buraco_log.forensic.read_anyway``),
    for its receipts: a log edited with its records' checksums recomputed but not its
    signatures breaks at the first signature record, and its receipts were said to reach
    past "the events that could be read" when every event could be read and compared."""

    events: Sequence[ev.AnyEvent]
    to_end: bool  # every record decoded to the end of the file
    where: str  # the break, as a finding names it ("byte 961")
    intact: int | None  # the last seq read before the break (None: none was)
    checksums: bool = True  # each record has a checksum that holds (binary; JSON Lines: none)


class HeldReceipt(msgspec.Struct, frozen=True):
    """A receipt and the file it came from (named in messages)."""

    receipt: record.Receipt
    source: str = ""

    def holder(self) -> str:
        """Who holds the receipt, as a finding names them: its seat, else its file."""
        if self.receipt.seat is not None:
            return f"seat {self.receipt.seat}"
        return self.source or "a player"


def heads_at(events: Sequence[ev.AnyEvent], seqs: set[int], version: int) -> dict[int, bytes]:
    """The chain's digest after each seq in ``seqs`` (those the events reach)."""
    chain = log.chain_start(version)
    out: dict[int, bytes] = {}
    for event in events:
        chain.update(ev.encode(event) if version == ev.FORMAT_VERSION
                     else ev.encode_as(event, version))
        if event.seq in seqs:
            out[event.seq] = chain.digest()
    return out


def check(
    events: Sequence[ev.AnyEvent],
    signatures: Sequence[record.SignedHead],
    *,
    version: int = ev.FORMAT_VERSION,
    keyring: Keyring | None = None,
    receipts: Sequence[HeldReceipt] = (),
    required: bool = False,
    complete_read: bool = True,
    read_past: ReadPast | None = None,
    torn: bool = False,
) -> tuple[Signing, list[Problem]]:
    """Check ``signatures`` (read from the log holding ``events``) and ``receipts``.

    ``required``: a log must be signed by its recorded key up to its last event, and end with
    ``MatchEnded``. ``complete_read``: the whole file was read (not stopped by damage, which
    the integrity section reports already). ``read_past``: the log's events read on past a
    break in its chain whose records' checksums hold (an edit, not disk damage); the receipts
    are compared with those. ``torn``: the read stopped at a torn tail, what a crash leaves.
    """
    start = events[0] if events and isinstance(events[0], ev.MatchStarted) else None
    # a key id is hex: its capitals are the same id (a receipt's, a `revoked` line's), and
    # a record's is not signed, so a copy that wrote it in capitals is the same log
    key_id = start.key_id.lower() if start is not None and start.key_id is not None else None
    signatures = [s if s.key_id == s.key_id.lower() else msgspec.structs.replace(
        s, key_id=s.key_id.lower()) for s in signatures]
    problems: list[Problem] = []
    last = events[-1].seq if events else None
    last_signed = signatures[-1].seq if signatures else None
    match_id = start.match_id if start is not None else None
    started_at = start.at if start is not None else None

    verified: bool | None = None
    proven: int | None = None  # the last seq a trusted signature of the site's vouches for
    if signatures:
        if key_id is None:
            problems.append(Problem(
                "sign.key_mismatch",
                f"the log holds {len(signatures)} signature record(s) but its match start "
                "names no signing key (key_id): a signed log names its key at its start, so "
                "the start was changed or the records were added", seq=events[0].seq
                if events else None))
        for signed in signatures if key_id is not None else ():  # None: said just above
            if signed.key_id != key_id or signed.match_id != match_id:
                ids = quoted(signed.match_id, match_id or "")
                # the match named only where it differs: the same id twice hid the key
                problems.append(Problem(
                    "sign.key_mismatch",
                    f"the signature after seq {signed.seq} is by key {signed.key_id}"
                    + (f" for match {ids[0]}" if signed.match_id != match_id else "")
                    + f"; the match start records key {key_id}"
                    + (f" and match {ids[1]}" if signed.match_id != match_id else "")
                    + ": one key signs a log, the one its start records"
                    + _who_signed_what(signatures, keyring, started_at), seq=signed.seq))
                break
        if keyring is not None:
            verified = not problems
            trust = keyring.problem(signatures[0].key_id, started_at)
            if trust is not None:
                verified = False
                rule = _trust_rule(keyring, signatures[0].key_id)
                problems.append(Problem(
                    rule, f"the signature after seq {signatures[0].seq} (the log's first): "
                    f"{trust}: {_worth(rule, started_at)}"
                    f"{_trusted(keyring, signatures[0].key_id)}", seq=signatures[0].seq))
            else:
                for signed in signatures:
                    why = keyring.check(signed, started_at)
                    if why is None and (signed.key_id, signed.match_id) == (key_id, match_id):
                        proven = signed.seq  # the site's word for the events up to here
                    if why is not None:
                        verified = False
                        # a later signature by a revoked or unknown key is that, as the
                        # first's is, not "invalid" (the keyring decides, not the words)
                        rule = (_trust_rule(keyring, signed.key_id)
                                if keyring.problem(signed.key_id, started_at) else "sign.invalid")
                        problems.append(Problem(
                            rule, f"the signature after seq {signed.seq}: {why}: "
                            f"{_worth(rule, started_at)}"
                            + (_trusted(keyring, signed.key_id) if rule != "sign.invalid"
                               else ""),
                            seq=signed.seq))
                        break
    if (twice := _signed_twice(signatures)) is not None:
        problems.append(twice)
    if required:
        if not signatures:
            problems.append(Problem(
                "sign.unsigned",
                "the log holds no signature: signatures are required"
                + ("" if key_id is None else f" (its match start records key {key_id})")
                + ": the signatures were stripped, or the site never signed it; only the "
                "site's log, signed, shows what it recorded",
                seq=events[0].seq if events else None))  # the start, not "seq -"
        elif complete_read and last is not None and last_signed != last:
            first = last_signed + 1 if last_signed is not None else 0
            what = f"event {last} is" if first == last else f"events {first} to {last} are"
            problems.append(Problem(
                "sign.tail_unsigned",
                f"{what} signed by no signature (the last signs seq {last_signed}): signatures "
                "are required", seq=(last_signed + 1) if last_signed is not None else None))
        if complete_read and events and not any(
                isinstance(e, ev.MatchEnded) for e in reversed(events)):
            problems.append(Problem(
                "sign.end_missing",
                f"the log ends at seq {last} without MatchEnded: a signed match must be "
                "complete (its end may have been cut)", seq=last))
    if receipts:
        problems += _receipts(events if read_past is None else read_past.events, receipts,
                              version=version, keyring=keyring, match_id=match_id,
                              key_id=key_id, started_at=started_at,
                              complete_read=complete_read if read_past is None
                              else read_past.to_end, past=read_past, torn=torn,
                              proven=proven)
    return Signing(key_id=key_id, signatures=len(signatures), last_signed_seq=last_signed,
                   verified=verified, receipts=len(receipts), required=required,
                   signers=_signers(signatures)), problems


_WORTH = {
    "sign.untrusted": "it shows nothing of what the site signed (a key of someone else's, or "
    "the site's key is missing from the trusted keys)",
    "sign.revoked": "a revoked key may have leaked, so its signature shows nothing of what the "
    "site signed, whenever the match says it was played (a revocation has no date: whoever "
    "holds a leaked key can sign a match dated before it; ask the site for the log signed by "
    "its current key)",
    "sign.key_window": "the site did not sign matches started then with that key",
    "sign.invalid": "the record names that key, but the key did not make it (forged, or its "
    "bytes were changed)",
}
"""What a signature that is not trusted is worth, said to a referee after the reason."""


def _worth(rule: str, started_at: int | None) -> str:
    """What a signature the keyring does not trust is worth (``_WORTH``); a key's window
    against a start with no time says that the start cannot be placed in it (it said "the
    site did not sign matches started then", of a start with no "then")."""
    if rule == "sign.key_window" and started_at is None:
        return "nothing places this match inside the window in which the site signs with it"
    return _WORTH[rule]


def _trusted(keyring: Keyring, signer: str = "") -> str:
    """Which keys the referee trusts, said beside a signature by another: the log's signer
    was named, the key it should have been was not. ``signer``, trusted but outside its
    window, is not named again as "the trusted key" (it read as trusted after all)."""
    ids = sorted(k for k in keyring.keys if k not in keyring.revoked and k != signer)
    if not ids:
        if signer in keyring.keys and signer not in keyring.revoked:
            return ""  # outside its window: the only trusted key is the one named
        return "; no key is trusted (every trusted key given is revoked)"
    named = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    other = "other " if signer in keyring.keys and signer not in keyring.revoked else ""
    return f"; the {other}trusted key{'s are' if len(ids) > 1 else ' is'} {named}"


def _who_signed_what(signatures: Sequence[record.SignedHead], keyring: Keyring | None,
                     started_at: int | None) -> str:
    """Which key signs which seqs of a log signed by more than one, each said trusted or not
    when there are trusted keys: a log signed, edited and signed on with another key said
    only "one key signs a log", and the referee could not tell which events the site's key
    vouches for."""
    runs: list[list[object]] = []  # [key id, first seq, last seq, signatures]
    after = -1
    for signed in signatures:
        if runs and runs[-1][0] == signed.key_id:
            runs[-1][2:] = [signed.seq, int(str(runs[-1][3])) + 1]
        else:
            runs.append([signed.key_id, after + 1, signed.seq, 1])
        after = signed.seq
    if len({r[0] for r in runs}) < 2:
        return ""
    parts = []
    for key, first, last, n in runs:
        trust = ""
        if keyring is not None:
            why = keyring.problem(str(key), started_at)
            if why is not None and why.startswith(f"key {key} "):
                why = "it " + why[len(f"key {key} "):]  # the key is named just before
            trust = " (trusted)" if why is None else f" (not trusted: {why})"
        count = f"{n} signature{'s' if n != 1 else ''}"
        parts.append(f"key {key}{trust} signs seq {first} to {last} ({count})")
    return "; " + ", then ".join(parts)


def _signers(signatures: Sequence[record.SignedHead]) -> dict[str, int]:
    out: dict[str, int] = {}
    for signed in signatures:
        out[signed.key_id] = out.get(signed.key_id, 0) + 1
    return out


def _signed_twice(signatures: Sequence[record.SignedHead]) -> Problem | None:
    """A finding at the first head signed by more than one record, or None.

    A writer records one signature per head (``Writer.sign_head`` and ``put_signature`` never
    sign a head twice; ``seal`` and ``convert`` carry each record once), and Ed25519 gives one
    signature per key and head. A second record after the same seq was put in the file by
    something other than the writer (a copy, or a signature replayed from elsewhere): the
    file is not the log as the site wrote it, and its signature count is inflated."""
    seen: dict[int, int] = {}
    for signed in signatures:
        seen[signed.seq] = seen.get(signed.seq, 0) + 1
    repeated = [seq for seq, n in seen.items() if n > 1]
    if not repeated:
        return None
    first = repeated[0]
    copies = sum(n - 1 for n in seen.values())
    others = (f"; {copies} extra record(s) in all, at {len(repeated)} heads"
              if len(repeated) > 1 or seen[first] > 2 else "")
    return Problem(
        "sign.duplicate",
        f"{seen[first]} signature records sign the head after seq {first}{others}: a writer "
        "records one signature per head, so the file holds records the site's writer did not "
        "write (copied or replayed)", seq=first)


def _trust_rule(keyring: Keyring, key_id: str) -> str:
    """The rule of a key the keyring does not trust for this match, from the keyring itself
    (never from the words of the reason, which quote the key id the log chose)."""
    if key_id in keyring.revoked:
        return "sign.revoked"
    if key_id not in keyring.keys:
        return "sign.untrusted"
    return "sign.key_window"


def _verdicts(keyring: Keyring | None) -> Callable[[record.SignedHead], str | None]:
    """``keyring.check_signature``, each distinct signed head checked once: a player's list
    may repeat receipts, and each check is an Ed25519 verify (10,000 receipts were verified
    twice each, once to find the receipts the log agrees with and once to judge them)."""
    seen: dict[record.SignedHead, str | None] = {}

    def check(signed: record.SignedHead) -> str | None:
        if signed not in seen:
            seen[signed] = None if keyring is None else keyring.check_signature(signed)
        return seen[signed]
    return check


def _renamed_heads(events: Sequence[ev.AnyEvent], receipts: Sequence[HeldReceipt],
                   version: int) -> Callable[[record.Receipt], str | None]:
    """Whether ``events``, their start's match id set to a receipt's, reach the receipt's
    head at its seq: the log is the receipt's match under another id. Said as what was set
    back: "match id", or "match id and key id" when the start's key id had to be set to the
    receipt's too (a keeper who renames the match must strip the site's signatures, which no
    longer verify, and takes the start's key id out with them: the receipt was called one of
    another match, to audit with "its match's log"). The chain is computed once per match id
    and key (a list of 10,000 receipts of another match is read in one pass)."""
    seqs: dict[str, set[int]] = {}
    for h in receipts:
        seqs.setdefault(h.receipt.match_id, set()).add(h.receipt.seq)
    done: dict[tuple[str, str | None], dict[int, bytes]] = {}

    def reaches(r: record.Receipt, start: ev.MatchStarted, key_id: str | None) -> bool:
        if (r.match_id, key_id) not in done:
            as_signed = [msgspec.structs.replace(start, match_id=r.match_id, key_id=key_id),
                         *events[1:]]
            done[r.match_id, key_id] = heads_at(as_signed, seqs[r.match_id], version)
        head = done[r.match_id, key_id].get(r.seq)
        return head is not None and head.hex() == r.head.lower()

    def renamed(r: record.Receipt) -> str | None:
        start = events[0] if events else None
        if not isinstance(start, ev.MatchStarted):
            return None
        if reaches(r, start, start.key_id):
            return "match id"
        # a witness's receipt is by another key than the start's: tried as it stands first
        if start.key_id != r.key_id and reaches(r, start, r.key_id):
            return "match id and key id"
        return None
    return renamed


def _invalid(held: HeldReceipt, why: str, keyring: Keyring | None) -> str:
    """A receipt the trusted keys do not vouch for, said by what the keyring knows of its key:
    a key it does not hold cannot say the signature is bad (a referee whose published key
    list has since left out a retired key read "not a valid signature", as of a forgery),
    and a revoked key's signature may be genuine and still prove nothing."""
    k = held.receipt.key_id
    if keyring is not None and k in keyring.revoked:
        return (f"{_named(held)} proves nothing about the log: {why}, and a revoked key may "
                "have leaked, so whatever it signed is no proof, whenever it was handed out (a "
                "revocation has no date: whoever holds a leaked key can sign any head)")
    if keyring is not None and k not in keyring.keys:
        return (f"{_named(held)} cannot be checked: key {k} is not among the trusted keys (a "
                "key of someone else's, or a key of the site's left out of the keys given, as "
                "a key list published later may leave out a retired key): unchecked, it "
                "proves nothing about the log; audit again with that key's NAME.pub to check "
                "it")
    return f"{_named(held)} is not a valid signature of the site: {why}: it proves nothing " \
        "about the log"


def _named(held: HeldReceipt) -> str:
    """A receipt as a finding names it: its seq, who holds it and the file it came from."""
    r = held.receipt
    if r.seat is not None:
        return (f"the receipt for seq {r.seq} that seat {r.seat} holds"
                + (f" ({held.source})" if held.source else ""))
    return f"the receipt for seq {r.seq}" + (f" in {held.source}" if held.source else "")


def _receipts(events: Sequence[ev.AnyEvent], receipts: Sequence[HeldReceipt], *,
              version: int, keyring: Keyring | None, match_id: str | None,
              key_id: str | None, started_at: int | None,
              complete_read: bool = True, past: ReadPast | None = None,
              torn: bool = False, proven: int | None = None) -> list[Problem]:
    problems: list[Problem] = []
    # events read past a break in the chain: said with every comparison made with them
    read = ("" if past is None else f"; the log's events were read on past the break in its "
            f"chain at {past.where} (see integrity)"
            + (", each record's checksum intact: an edit, not damage on disk"
               if past.checksums else ""))
    last = events[-1].seq if events else None
    heads = heads_at(events, {h.receipt.seq for h in receipts}, version)
    verdict = _verdicts(keyring)
    renamed = _renamed_heads(events, receipts, version)
    # Seqs where a genuine receipt agrees with the log: another receipt there with another head
    # shows the site signed two versions of the match (and showed its players different logs).
    genuine = [h for h in receipts if h.receipt.match_id == match_id
               and (keyring is None or verdict(h.receipt.signed_head()) is None)]
    agreed = {h.receipt.seq: h for h in genuine if heads.get(h.receipt.seq) is not None
              and heads[h.receipt.seq].hex() == h.receipt.head.lower()}
    if proven is not None and any(h.receipt.seq <= proven and h.receipt.seq not in agreed
                                  and h.receipt.seq in heads for h in genuine):
        proven = None  # a receipt it covers disagrees: the site signed this history anew
    for held in sorted(receipts, key=lambda h: h.receipt.seq):
        r = held.receipt
        if events and r.match_id != match_id:  # no event: nothing says which match it was
            theirs, ours = quoted(r.match_id, match_id or "")
            # a receipt the site never signed proves nothing of any match: say so with it
            why = verdict(r.signed_head()) if keyring is not None else None
            if why is None and keyring is not None and (back := renamed(r)) is not None:
                # the site's own head of this very log under the receipt's match id: the
                # match was renamed to shake the receipt off, not another match's receipt
                now = ("" if back == "match id" else " and its start records "
                       + ("no key" if key_id is None else f"key {key_id}"))
                problems.append(Problem(
                    "sign.receipt_changed",
                    f"{_named(held)} is for match {theirs}, and the log is that match "
                    f"renamed {ours}{now}: with its start's {back} set back"
                    + ("" if back == "match id" else f" (to key {r.key_id}, the receipt's)")
                    + f", the log matches the receipt at seq {r.seq}; the {back} "
                    f"{'was' if back == 'match id' else 'were'} changed after the site signed "
                    "it", seq=r.seq))
                continue
            problems.append(Problem(
                "sign.receipt_other_match",
                f"{_named(held)} is for match {theirs}, not this log's {ours}"
                + ("" if why is None else f"; nor is it a valid signature of the site: {why}")
                + ": audit it with its match's log (given together, each receipt goes to "
                "its match's log)", seq=r.seq))
            continue
        signed = r.signed_head()
        why = None
        besides = ""  # what else the receipt shows about the log, said with a change or a cut
        if past is not None and (past.intact is None or r.seq > past.intact):
            besides = read
        if keyring is not None:
            # Judged by its own key: a forger who rewrote the start to record another key (or
            # none) must not turn the player's proof into "not the site's".
            why = verdict(signed)
            if why is None and r.key_id != key_id and events:
                now = "no key" if key_id is None else f"key {key_id}"
                besides += (f"; the receipt is by trusted key {r.key_id}, the log's match start "
                            f"records {now}")
            if why is None and (window := keyring.window_problem(r.key_id, started_at)):
                besides += f"; {window} (as this log records its start)"
        elif r.key_id != key_id:
            why = f"it is by key {r.key_id}, the log's match start records key {key_id}"
        if why is not None:
            problems.append(Problem("sign.receipt_invalid", _invalid(held, why, keyring),
                                    seq=r.seq))
            continue
        if (last is None or r.seq > last) and not complete_read:
            # the file goes on but could not be read (damage, a torn tail): not proof of a cut
            # not "intact": a broken chain leaves the events before it read, not proven
            read = ("no event of the log could be read" if last is None
                    else f"only seq 0 to {last} of the log could be read")
            why = "it is damaged; see integrity"
            if torn:  # read as a crash's work, which it cannot be: the receipt came after
                why = ("it ends in a torn tail, as a crash leaves a log, but the site's writer "
                       "makes each event durable before it hands out its receipt: the log was "
                       "cut short mid-record, or is a copy taken while it was being written, "
                       "or the disk lost writes it had acknowledged; the site's log must reach "
                       f"seq {r.seq}")
            problems.append(Problem(
                "sign.receipt_cut",
                f"{_named(held)} shows the site signed match {r.match_id!r} up to seq {r.seq}, "
                f"but {read} ({why}){besides}",
                seq=r.seq))
        elif last is None or r.seq > last:
            ends = "holds no events" if last is None else f"ends at seq {last}"
            # a copy taken before the receipted seq was written reads the same as a log cut
            # back: the file alone cannot tell them apart, so both are said
            how = (f"it was cut, or is a copy taken before seq {r.seq} was written: the "
                   f"site's log must reach seq {r.seq}")
            if events and isinstance(events[-1], ev.MatchEnded):
                # not merely cut: the match end it holds came after the receipted seq was signed
                how = "it was cut and its end rewritten: it ends with MatchEnded"
            # "changed after seq N" read as "somewhere past seq N", where the log holds nothing
            problems.append(Problem(
                "sign.receipt_cut",
                f"{_named(held)} shows the site signed match {r.match_id!r} up to seq {r.seq}, "
                f"but the log {ends} ({how}){besides}", seq=r.seq))
        elif heads.get(r.seq) != signed.head:
            theirs = f"the log's head at seq {r.seq} is {heads[r.seq].hex()[:16]}..., the " \
                f"receipt's {r.head[:16]}..."
            later = min((s for s in agreed if s >= r.seq), default=None)
            if later is not None:
                # The site's own signature vouches for the log at or after this seq, so the
                # site signed this log's events up to here, and the receipt's other ones: a
                # fork by the site's writer, not a log changed after it signed (which it said).
                at = ("there" if later == r.seq else
                      f"at seq {later}, which covers the log's events up to seq {r.seq}")
                problems.append(Problem(
                    "sign.receipt_changed",
                    f"{_named(held)} does not match the log, and {_named(agreed[later])} signs "
                    f"the log's head {at}: the site's writer signed two different histories of "
                    f"match {r.match_id!r} (two different heads at seq {r.seq}), so it showed "
                    f"its players different games; {theirs}{besides}", seq=r.seq))
                continue
            rival = next((h for h in genuine if h.receipt.seq == r.seq
                          and h.receipt.head.lower() != r.head.lower()), None)
            if rival is not None:  # neither is the log's: the receipts alone show the fork
                besides += (f"; {_named(rival)} signs another head at seq {r.seq}: the "
                            "site's writer signed two different histories of the match, and "
                            "this log is neither")
            # The change is at or before the receipt's seq, never "after" it: a referee
            # looked past seq N for an edit made before it. Where an earlier receipt still
            # agrees, the change lies between the two.
            since = max((s for s in agreed if s < r.seq), default=None)
            where = (f"seq {since + 1} to {r.seq} was changed after the site signed it; the "
                     f"log still matches {_named(agreed[since])}" if since is not None
                     else f"seq 0 to {r.seq} was changed after the site signed it")
            if (past is not None and proven is not None and proven < r.seq
                    and r.key_id == key_id and (since is None or proven > since)):
                # An edit that left the site's signature records in place breaks the chain at
                # the first after it, and those before it verify: the change lies after the
                # last (it said "seq 0 to 40" where the integrity note said "after seq 29").
                # Not of a log whose chain holds: its keeper may hold the key and have signed
                # the edit anew, the change before its last signature.
                where = (f"seq {proven + 1} to {r.seq} was changed after the site signed it; "
                         f"the site's own signature after seq {proven} in the log verifies")
            problems.append(Problem(
                "sign.receipt_changed",
                f"{_named(held)} does not match the log: an event in {where}; "
                f"{theirs}{besides}", seq=r.seq))
    return problems


MAX_RECEIPTS_FILE = 1 << 24
"""Largest receipt file read (a receipt is about 300 bytes)."""


def load_receipts(paths: Sequence[str]) -> list[HeldReceipt]:
    """Receipts from JSON files, each one receipt object or an array of them; one-line
    ``SigningError`` naming the file when one is not."""
    from buraco_log.jsonl import json_problem
    from buraco_log.signing.keys import (
        SigningError,
        cut_short,
        other_encoding,
        read_small,
        refuse_duplicate_key,
    )

    out: list[HeldReceipt] = []
    for path in paths:
        data = read_small(path, "a buraco-log receipt", MAX_RECEIPTS_FILE)
        before = len(out)
        try:
            # typed: deep nesting fails at its first level instead of recursing
            items = msgspec.json.decode(data, type=record.Receipt | list[record.Receipt])
            if items == []:
                raise ValueError("an empty list: the file holds no receipt")
            many = isinstance(items, list)
            for i, receipt in enumerate(items if isinstance(items, list) else [items]):
                try:
                    receipt.signed_head()  # hex of the right sizes, seq in range
                    if not receipt.key_id:  # said "key  is not among the trusted keys"
                        raise ValueError("key_id is empty: a receipt names the key that "
                                         "signed it")
                except ValueError as exc:  # name the item: the file may hold hundreds
                    if many:
                        raise ValueError(f"{exc} - at `$[{i}]`") from None
                    raise
                # the key id is hex the signature does not cover: its case is presentation
                # (as in a revoked file), and a player's proof must not fail on it
                out.append(HeldReceipt(
                    msgspec.structs.replace(receipt, key_id=receipt.key_id.lower()), path))
        except (msgspec.MsgspecError, ValueError) as exc:
            if not data.strip():
                raise SigningError(f"{path}: an empty file: no receipt in it") from None
            if data.startswith(b"\xef\xbb\xbf"):  # saved by an editor that adds one
                raise SigningError(f"{path}: the file starts with a byte order mark (EF BB BF): "
                                   "a receipt is UTF-8 JSON without one (save it without BOM)"
                                   ) from None
            if (encoding := other_encoding(data)) is not None:  # saved by a Windows tool
                raise SigningError(f"{path}: {encoding}") from None
            if (other := _what_else(data)) is not None:
                raise SigningError(f"{path}: {other}, not a receipt: a receipt is the JSON a "
                                   "game server hands a player (match_id, seq, head, key_id, "
                                   "signature)") from None
            why = (cut_short(json_problem(data, exc), data)
                   if isinstance(exc, msgspec.DecodeError) else str(exc))
            if "unknown field" in why:  # a note a player added, a server's extra field
                why += (" (a receipt holds match_id, seq, head, key_id, signature, and "
                        "optionally seat and receipt, its format version: remove the others, "
                        "which its signature does not cover)")
            raise SigningError(f"{path}: not a buraco-log receipt: {why}") from None
        if len(out) > before:  # decoded: a key named twice would be read one way of two
            refuse_duplicate_key(path, data, "receipt file")
    return out


def _what_else(data: bytes) -> str | None:
    """What a file given as a receipt is instead, when it is another buraco-log file: a log
    or a published key, given in the wrong place (its decode error said only "malformed" or
    "unknown field")."""
    if data.startswith(log.MAGIC):
        return "a binary match log"
    head = data.lstrip()[:4096]
    if head.startswith(b"{") and b'"public_key"' in head:
        return "a published key (NAME.pub)"
    if not head.startswith(b"{"):
        return None
    if b'"log": "buraco-log"' in head or b'"log":"buraco-log"' in head:
        return "a JSON Lines match log"
    if b'"log": "signature"' in head or b'"log":"signature"' in head:
        return "a signature line of a JSON Lines log (a receipt once its \"log\" field is removed)"
    return None


CLOCK_SLACK_MS = 5 * 60 * 1000
"""How far after the auditing machine's clock a log may date an event before the audit notes
it: clocks that keep time agree within seconds, so five minutes leaves room for a machine's
clock that drifted, and none for a zone taken for UTC (hours)."""


def time_notes(events: Sequence[ev.AnyEvent], signing: Signing, keyring: Keyring | None,
               now_ms: int) -> list[str]:
    """Notes on the times a log records, judged against ``now_ms`` (the auditing machine's
    clock, ms since the epoch) and the trusted keys' windows. A log holds no trusted clock:
    its times are the writer's word, so these are notes for the referee, never findings.

    - An event dated more than :data:`CLOCK_SLACK_MS` after ``now_ms``: no event is written
      before it happens, so the site's clock was wrong (or the time was written by hand).
    - Signed events dated after the signing key's ``valid_until`` when the match started
      inside its window: a match may run past a key's end by the hours it lasts; days or
      months later, the key was used after it retired, or the start was dated back."""
    from buraco_log.signing.keys import _gap, _shown, _when

    notes: list[str] = []
    dated = [e for e in events if e.at is not None]
    latest = max(dated, key=lambda e: e.at or 0, default=None)
    if latest is not None and latest.at is not None and latest.at > now_ms + CLOCK_SLACK_MS:
        notes.append(
            f"time: the log dates seq {latest.seq} at {_when(latest.at)}, "
            f"{_gap(latest.at - now_ms)} after this machine's clock ({_when(now_ms)}): no "
            "event is written before it happens, so the site's clock was wrong or the time "
            "was written by hand (a log holds no trusted clock: a key's window is judged by "
            "the start as the log records it)")
    start = events[0] if events and isinstance(events[0], ev.MatchStarted) else None
    key_id, last = signing.key_id, signing.last_signed_seq
    if (keyring is None or start is None or start.at is None or key_id is None
            or last is None or key_id in keyring.revoked or key_id not in keyring.keys
            or keyring.window_problem(key_id, start.at) is not None):
        return notes
    key = keyring.keys[key_id]
    end = key.window()[1]
    after = [e for e in dated if e.seq <= last and end is not None and (e.at or 0) >= end]
    if end is not None and after:
        late = max(after, key=lambda e: e.at or 0)
        assert late.at is not None
        notes.append(
            f"signing: key {key_id} retired at {_shown(key.valid_until or '')}; the match "
            f"started inside its window, and its signatures cover events dated after that, "
            f"up to seq {late.seq} at {_when(late.at)} ({_gap(late.at - end)} later): a match "
            "runs past a key's end by the hours it lasts; days or more read as the key used "
            "after it retired, or the start dated back into its window")
    return notes


__all__ = ["CLOCK_SLACK_MS", "HeldReceipt", "Problem", "ReadPast", "Signing", "check",
           "heads_at", "load_receipts", "time_notes"]
