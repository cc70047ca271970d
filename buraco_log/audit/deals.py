"""Provenance: where the deals came from, re-derived by :mod:`buraco_log.dealer`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from buraco_log.audit.findings import Finding
from buraco_log.dealer import DEAL_EVENTS, check_deals
from buraco_log.errors import BuracoLogError
from buraco_log.events import (
    AnyEvent,
    HandStarted,
    MatchEnded,
    MatchStarted,
)


class Provenance(msgspec.Struct, frozen=True):
    """Where the deals came from. ``status``: committed, plain_seeds, mixed or none."""

    status: Literal["committed", "plain_seeds", "mixed", "none"]
    commitment: str | None
    revealed: bool  # the server seed was revealed at the match end
    deals: int
    findings: tuple[Finding, ...]
    unchecked: int = 0  # deals not re-derived: no seed backs them, or the seed is not revealed
    # The seq of a start of another match, if the log holds one: the deals after it belong to
    # that match, whose seeds the first start's commitment says nothing about (checked
    # against it, they were "deal.mismatch" and "deal.seed_mismatch" findings blaming the site
    # for a reveal that is the other match's). Legality names the second start itself.
    second_start: int | None = None
    after_second: int = 0  # deals recorded after it, not checked


def provenance(events: Sequence[AnyEvent], require_commitment: bool = False) -> Provenance:
    """Deal provenance: every recorded deal re-derived from its committed or plain seeds.

    A second match start of another match id begins another match (two logs run together):
    the deals after it are counted in ``after_second``, not checked against the first start's
    commitment. One of the same match id (a commitment swapped mid-match) leaves every deal
    this match's, checked against the first commitment."""
    # One pass picks the few events provenance reads (exact types: final classes); an ingest
    # checks every match's deals, and a second pass over all events cost a fifth of the check.
    marks = [e for e in events if type(e) in DEAL_EVENTS]
    starts = [e for e in marks if type(e) is MatchStarted]
    other = next((e for e in starts[1:] if e.match_id != starts[0].match_id), None)
    if other is not None:
        second = next(i for i, e in enumerate(events) if e is other)
        mark = next(i for i, e in enumerate(marks) if e is other)
        first = _provenance(events[:second], require_commitment, marks[:mark])
        return msgspec.structs.replace(
            first, second_start=other.seq,
            after_second=sum(1 for e in marks[mark:] if type(e) is HandStarted))
    return _provenance(events, require_commitment, marks)


def _provenance(events: Sequence[AnyEvent], require_commitment: bool,
                marks: Sequence[AnyEvent]) -> Provenance:
    start: MatchStarted | None = None
    end: MatchEnded | None = None
    deals = 0
    plain = 0
    for e in marks:
        tp = type(e)
        if tp is HandStarted:
            deals += 1
            plain += e.seed is not None  # type: ignore[union-attr]
        elif tp is MatchStarted:
            if start is None:
                start = e  # type: ignore[assignment]
        elif tp is MatchEnded and end is None:
            end = e  # type: ignore[assignment]
    commitment = start.commitment if start is not None else None
    status: Literal["committed", "plain_seeds", "mixed", "none"]
    if commitment is not None:
        status = "mixed" if plain else "committed"
    else:
        status = "plain_seeds" if plain else "none"
    # Deal provenance is checked where seeds were committed (or given); an uncommitted match
    # has nothing to re-derive, and that is its status, not a finding.
    try:
        # The marks are every event check_deals reads: it skips its own pass over them all.
        found = check_deals(marks, require_commitment=require_commitment)
        if end is None and not require_commitment:
            # The seed is revealed at the match end: not yet, in an unfinished (or cut) log.
            # The verdict says so in a note; a site that requires commitments gets a finding.
            found = [f for f in found if f.rule != "deal.not_revealed"]
    except (BuracoLogError, ValueError, IndexError, KeyError, TypeError) as exc:
        found = []
        extra = [Finding("provenance", "deal.mismatch", f"cannot check the deals: {exc}")]
    else:
        extra = []
    revealed = end is not None and end.server_seed is not None
    if commitment is None:
        unchecked = deals - plain  # plain seeds are re-derived; nothing backs the others
    elif revealed and not any(f.rule == "deal.seed_mismatch" for f in found):
        unchecked = plain  # committed deals re-derived; a plain one in a committed match is not
    else:
        unchecked = deals
    plain_words = _Derived(marks, start, end) if any(
        f.rule == "deal.mismatch" for f in found) else None
    return Provenance(
        status=status, commitment=commitment, revealed=revealed, deals=deals,
        unchecked=unchecked,
        findings=tuple(Finding("provenance", f.rule,
                               plain_words.message(f.seq, f.message)
                               if plain_words is not None and f.rule == "deal.mismatch"
                               else f.message,
                               seq=_seq_of(f.rule, f.seq, events))
                       for f in found) + tuple(extra),
    )


_MEANING = ("the seeds fix every deal before play, so the cards were changed after the deal, "
            "or not dealt from these seeds")
"""What a deal that differs from its seeds' means, said to a referee after the difference."""


class _Derived:
    """A ``deal.mismatch`` in a referee's words: the deal the seeds give, set beside the
    recorded one card by card (the dealer's own words, "stock differs from the derived deal at
    position 57 from the top", named no card and said nothing of what it meant). Where the
    deal cannot be derived again here, the dealer's words stay."""

    def __init__(self, marks: Sequence[AnyEvent], start: MatchStarted | None,
                 end: MatchEnded | None) -> None:
        self.start = start
        self.server_seed = end.server_seed if end is not None else None
        dealt = [m for m in marks if isinstance(m, HandStarted)]
        self.deals = {d.seq: (k, d) for k, d in enumerate(dealt)}  # k: the hand it is

    def message(self, seq: int | None, detail: str) -> str:
        try:
            words = self._difference(seq)
        except (BuracoLogError, ValueError, IndexError, KeyError, TypeError):
            words = None
        return detail if words is None else words

    def derived(self, seq: int | None) -> HandStarted | None:
        """The deal the seeds give for the hand whose recorded deal is at ``seq`` (None when
        they give none here: no seed revealed, a hand numbered wrong, a start missing)."""
        from buraco_log.cards import deck
        from buraco_log.dealer import (
            commitment_of,
            deal_from_order,
            hand_key,
            hand_keys,
            shuffle,
        )

        start = self.start
        if start is None or seq not in self.deals:
            return None
        k, d = self.deals[seq]
        if d.hand != k:  # numbered wrong: the dealer's words say so plainly
            return None
        if d.seed is not None:
            key = hand_key(d.seed, (), k)
        elif (self.server_seed is not None and start.commitment is not None
              and commitment_of(self.server_seed) == start.commitment.lower()):
            key = hand_keys(self.server_seed, start.player_seeds)(k)
        else:
            return None
        players = len(start.players)
        return deal_from_order(start.rules, players, k, (start.first_dealer + k) % players,
                               shuffle(deck(start.rules.jokers), key), seq=d.seq)

    def _difference(self, seq: int | None) -> str | None:
        derived = self.derived(seq)
        if derived is None or self.start is None or seq is None:
            return None
        k, d = self.deals[seq]
        rules = self.start.rules
        what = _what_differs(d, derived, "tile" if rules.rendering == "tiles" else "card")
        if what is None:
            return None
        return f"hand {k}: the deal in the log is not the one its seeds give: {what}; {_MEANING}"


def _cards(cards: Sequence[int]) -> str:
    from buraco_log.cards import format_card

    out = []
    for c in cards:
        try:
            out.append(format_card(c))
        except (ValueError, TypeError):  # a forged code that is no card
            out.append(f"code {c!r}")
    return " ".join(out) or "nothing"


def _apart(recorded: Sequence[int], derived: Sequence[int]) -> tuple[list[int], list[int]]:
    """The cards only the recorded group holds, and those only the derived one holds."""
    from collections import Counter

    a, b = Counter(recorded), Counter(derived)
    return sorted((a - b).elements()), sorted((b - a).elements())


def _what_differs(recorded: HandStarted, derived: HandStarted, unit: str) -> str | None:
    """The first difference between a recorded deal and the derived one, in plain words."""
    if recorded.dealer != derived.dealer:
        return (f"seat {recorded.dealer} dealt, where the deal passes from seat to seat and "
                f"this hand is seat {derived.dealer}'s to deal")
    groups = [(f"seat {i}'s hand", a, b) for i, (a, b) in enumerate(
        zip(recorded.hands, derived.hands, strict=False))]
    groups += [(f"side {i}'s morto", a, b) for i, (a, b) in enumerate(
        zip(recorded.mortos, derived.mortos, strict=False))]
    if len(recorded.hands) != len(derived.hands) or len(recorded.mortos) != len(derived.mortos):
        return None  # a deal of another shape: the dealer's words count them
    for name, a, b in groups:
        only_log, only_seeds = _apart(a, b)
        if only_log or only_seeds:
            return (f"{name} holds {_cards(only_log)} in the log, where the seeds deal "
                    f"{_cards(only_seeds)}")
    if recorded.upcard != derived.upcard:
        up = [_cards(() if c is None else (c,)) for c in (recorded.upcard, derived.upcard)]
        return f"the {unit} turned up is {up[0]} in the log, {up[1]} by the seeds"
    for i, (x, y) in enumerate(zip(recorded.stock, derived.stock, strict=False)):
        if x != y:
            return (f"{unit} {i + 1} of the stock, counting from the top, is {_cards([x])} in "
                    f"the log, {_cards([y])} by the seeds")
    if len(recorded.stock) != len(derived.stock):
        return (f"the stock holds {len(recorded.stock)} {unit}s in the log, "
                f"{len(derived.stock)} by the seeds")
    return None


def _seq_of(rule: str, seq: int | None, events: Sequence[AnyEvent]) -> int | None:
    """A finding's seq; a reveal missing because the log ends before MatchEnded is named at
    the last event, where the log ends (as ``sign.end_missing`` is), not at no seq ("seq -")."""
    if seq is None and rule == "deal.not_revealed" and events:
        return events[-1].seq
    return seq
