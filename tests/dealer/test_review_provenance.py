"""Review: deal provenance (``check_deals`` and ``audit.provenance``) against the README.

Forged deals, wrong or missing reveals, late commitments, player seeds, plain seeds, mixed
matches, every preset and player count, and the split between provenance findings and the
legality and scoring sections of a verdict.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit
from buraco_log import dealer as dealer_module
from buraco_log.dealer import (
    SHUFFLE_ID,
    FairDealer,
    check_deals,
    commitment_of,
    deal,
    deal_seeded,
    hand_key,
)
from buraco_log.events import (
    AnyEvent,
    CardDrawn,
    FirstDrawRejected,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchStarted,
    Player,
)
from buraco_log.jsonl import binary_to_jsonl
from buraco_log.rules import PRESETS, preset, side_of
from tests import brokenlogs as bl

R = msgspec.structs.replace
SERVER = "the review server seed"
PSEEDS = ("ana's seed", "bruno's seed")

PRESET_COUNTS = [(name, n) for name in PRESETS for n in preset(name).player_counts]


# -- helpers ------------------------------------------------------------------------------------


def deals_only(
    name: str = "burraco",
    players: int = 2,
    hands: int = 4,
    first_dealer: int = 0,
    *,
    server: str = SERVER,
    player_seeds: tuple[str, ...] = PSEEDS,
    plain: dict[int, str] | None = None,
    commit: bool = True,
    reveal: bool = True,
) -> list[AnyEvent]:
    """MatchStarted, ``hands`` deals and MatchEnded (no play): the deal events only.

    ``plain`` maps a hand number to a plain seed that deal is made from instead.
    """
    rules = preset(name)
    dealer = FairDealer(server, player_seeds)
    events: list[AnyEvent] = [
        MatchStarted(
            "review",
            rules,
            tuple(Player(f"p{i}") for i in range(players)),
            tuple(side_of(s, players) for s in range(players)),
            first_dealer=first_dealer,
            commitment=dealer.commitment if commit else None,
            player_seeds=dealer.player_seeds,
            seq=0,
            at=1_000,
        )
    ]
    for k in range(hands):
        d = (first_dealer + k) % players
        seq = len(events)
        if plain and k in plain:
            hs = deal_seeded(rules, players, k, d, plain[k], seq=seq)
        else:
            hs = dealer.deal(rules, players, k, d, seq=seq)
        events.append(R(hs, at=2_000 + k))
    events.append(
        MatchEnded(server_seed=dealer.server_seed if reveal else None, seq=len(events), at=9_000)
    )
    return events


def found(findings: object) -> list[tuple[str, int | None]]:
    return [(f.rule, f.seq) for f in findings]  # type: ignore[attr-defined]


def prov(events: list[AnyEvent], require: bool = False) -> audit.Provenance:
    return audit.provenance(events, require)


def hs_at(events: list[AnyEvent], i: int) -> HandStarted:
    ev = events[i]
    assert isinstance(ev, HandStarted)
    return ev


def deal_index(events: list[AnyEvent], hand: int) -> int:
    return next(i for i, e in enumerate(events) if isinstance(e, HandStarted) and e.hand == hand)


def bl_commitment(events: list[AnyEvent]) -> str | None:
    start = events[0]
    assert isinstance(start, MatchStarted)
    return start.commitment


def unsealed(events: list[AnyEvent]) -> audit.Integrity:
    return audit.Integrity("unsealed", "binary", len(events), 1, "")


def by_section(v: audit.Verdict, section: str) -> list[tuple[str, int | None]]:
    return [(f.rule, f.seq) for f in v.findings if f.section == section]


def differing(cards: tuple[int, ...], other: tuple[int, ...]) -> tuple[int, int]:
    """Indexes i in cards and j in other with different cards (so a swap changes something)."""
    for i, a in enumerate(cards):
        for j, b in enumerate(other):
            if a != b:
                return i, j
    raise AssertionError("no two different cards")


@pytest.fixture(scope="module")
def played() -> list[AnyEvent]:
    return bl.fair_match("burraco", 2, 1)


# -- forgeries of one deal ---------------------------------------------------------------------


def swap_two_hands(hs: HandStarted) -> HandStarted:
    h0, h1 = list(hs.hands[0]), list(hs.hands[1])
    i, j = differing(hs.hands[0], hs.hands[1])
    h0[i], h1[j] = h1[j], h0[i]
    return R(hs, hands=(tuple(h0), tuple(h1), *hs.hands[2:]))


def swap_hand_and_morto(hs: HandStarted) -> HandStarted:
    h, m = list(hs.hands[1]), list(hs.mortos[0])
    i, j = differing(hs.hands[1], hs.mortos[0])
    h[i], m[j] = m[j], h[i]
    hands = (hs.hands[0], tuple(h), *hs.hands[2:])
    return R(hs, hands=hands, mortos=(tuple(m), *hs.mortos[1:]))


def swap_stock_and_hand(hs: HandStarted) -> HandStarted:
    h, s = list(hs.hands[0]), list(hs.stock)
    i, j = differing(hs.hands[0], hs.stock[::-1])
    j = len(s) - 1 - j
    h[i], s[j] = s[j], h[i]
    return R(hs, hands=(tuple(h), *hs.hands[1:]), stock=tuple(s))


def change_upcard(hs: HandStarted) -> HandStarted:
    assert hs.upcard is not None
    j = next(j for j, c in enumerate(hs.stock) if c != hs.upcard)
    s = list(hs.stock)
    up, s[j] = s[j], hs.upcard
    return R(hs, upcard=up, stock=tuple(s))


def reorder_stock_bottom(hs: HandStarted) -> HandStarted:
    s = list(hs.stock)
    j = next(j for j in range(len(s) - 2, -1, -1) if s[j] != s[-1])
    s[j], s[-1] = s[-1], s[j]
    return R(hs, stock=tuple(s))


def swap_mortos(hs: HandStarted) -> HandStarted:
    return R(hs, mortos=(hs.mortos[1], hs.mortos[0], *hs.mortos[2:]))


def rotate_seats(hs: HandStarted) -> HandStarted:
    return R(hs, hands=(*hs.hands[1:], hs.hands[0]))


FORGERIES: dict[str, Callable[[HandStarted], HandStarted]] = {
    "hands": swap_two_hands,
    "hand-morto": swap_hand_and_morto,
    "stock-hand": swap_stock_and_hand,
    "upcard": change_upcard,
    "stock-order": reorder_stock_bottom,
    "mortos-swapped": swap_mortos,
    "seats-rotated": rotate_seats,
}
WHERE = {
    "hands": "hand of seat 0",
    "hand-morto": "hand of seat 1",
    "stock-hand": "hand of seat 0",
    "upcard": "upcard",
    "stock-order": "stock differs",
    "mortos-swapped": "morto of side 0",
    "seats-rotated": "hand of seat 0",
}


@pytest.mark.parametrize("kind", sorted(FORGERIES))
@pytest.mark.parametrize("hand", [0, 1, 3])
def test_a_forged_deal_is_blamed_at_its_seq_and_no_other(kind: str, hand: int) -> None:
    events = deals_only("burraco", 2, hands=4)
    i = deal_index(events, hand)
    events[i] = FORGERIES[kind](hs_at(events, i))
    got = check_deals(events)
    assert found(got) == [("deal.mismatch", events[i].seq)]
    assert f"hand {hand}: " in got[0].message and WHERE[kind] in got[0].message
    p = prov(events)
    assert (p.status, p.revealed, p.deals) == ("committed", True, 4)
    assert [(f.section, f.rule, f.seq) for f in p.findings] == [
        ("provenance", "deal.mismatch", events[i].seq)
    ]


def test_a_forged_deal_in_a_four_player_partnership_match_is_blamed() -> None:
    events = deals_only("thirteen", 4, hands=3, first_dealer=2)
    assert check_deals(events) == []
    events[2] = swap_two_hands(R(hs_at(events, 2)))
    events[3] = swap_mortos(hs_at(events, 3))
    assert found(check_deals(events)) == [("deal.mismatch", 2), ("deal.mismatch", 3)]


def test_a_hand_with_an_extra_card_and_a_short_stock_is_a_mismatch() -> None:
    events = deals_only()
    hs = hs_at(events, 2)
    events[2] = R(hs, hands=((*hs.hands[0], hs.stock[0]), hs.hands[1]), stock=hs.stock[1:])
    got = check_deals(events)
    assert found(got) == [("deal.mismatch", 2)]
    assert "seat 0" in got[0].message


def test_a_stock_cut_short_or_grown_is_a_mismatch() -> None:
    events = deals_only()
    hs = hs_at(events, 1)
    events[1] = R(hs, stock=hs.stock[:-1])
    events[2] = R(hs_at(events, 2), stock=(*hs_at(events, 2).stock, 5))
    got = check_deals(events)
    assert found(got) == [("deal.mismatch", 1), ("deal.mismatch", 2)]
    assert f"stock has {len(hs.stock) - 1} cards, expected {len(hs.stock)}" in got[0].message


def test_a_deal_from_another_server_seed_is_a_mismatch_though_well_shuffled() -> None:
    """The rigged deal is a real shuffle, just not the committed one."""
    events = deals_only()
    other = FairDealer("a seed the dealer liked better", PSEEDS)
    events[3] = R(other.deal(preset("burraco"), 2, 2, 0, seq=3), at=2_002)
    assert found(check_deals(events)) == [("deal.mismatch", 3)]


def test_a_deal_of_another_hand_renumbered_is_a_mismatch() -> None:
    events = deals_only()
    later = hs_at(events, 3)  # hand 2's deal, dealer 0
    events[1] = R(later, hand=0, seq=1)  # reused as hand 0 (also dealt by seat 0)
    got = check_deals(events)
    assert found(got) == [("deal.mismatch", 1)]
    assert "hand 0: " in got[0].message


# -- hand number, dealer, seats ----------------------------------------------------------------


def test_a_wrong_hand_number_is_a_mismatch_at_that_deal_only() -> None:
    events = deals_only()
    events[2] = R(hs_at(events, 2), hand=5)
    got = check_deals(events)
    assert found(got) == [("deal.mismatch", 2)]
    assert "numbered hand 5, but it is hand 1" in got[0].message


def test_a_wrong_dealer_is_a_mismatch_naming_the_rotation() -> None:
    events = deals_only("classic", 3, hands=4, first_dealer=1)
    events[3] = R(hs_at(events, 3), dealer=0)  # hand 2 rotates to seat 0 -> (1 + 2) % 3 = 0
    assert check_deals(events) == []  # that was its dealer already
    events[3] = R(hs_at(events, 3), dealer=2)
    got = check_deals(events)
    assert found(got) == [("deal.mismatch", 3)]
    assert "dealer is seat 2, the rotation gives seat 0" in got[0].message


def test_a_first_dealer_changed_after_the_fact_breaks_every_deal() -> None:
    """Shifting first_dealer and every recorded dealer with it still moves who got which hand."""
    events = deals_only("burraco", 2, hands=3)
    events[0] = R(events[0], first_dealer=1)
    for i in (1, 2, 3):
        events[i] = R(hs_at(events, i), dealer=(1 + i - 1) % 2)
    assert found(check_deals(events)) == [("deal.mismatch", s) for s in (1, 2, 3)]


# -- commitment and reveal ---------------------------------------------------------------------


def test_a_commitment_to_another_seed_is_a_seed_mismatch_at_the_match_end() -> None:
    events = deals_only()
    events[0] = R(events[0], commitment=commitment_of("what was really committed"))
    p = prov(events)
    assert found(p.findings) == [("deal.seed_mismatch", 5)]
    assert (p.status, p.revealed) == ("committed", True)


def test_a_revealed_seed_with_a_trailing_newline_does_not_match() -> None:
    """sha256 of the seed text as is: `printf %s SEED | sha256sum`, no newline."""
    events = deals_only()
    events[-1] = R(events[-1], server_seed=SERVER + "\n")
    assert found(check_deals(events)) == [("deal.seed_mismatch", 5)]
    assert events[0].commitment == hashlib.sha256(SERVER.encode()).hexdigest()  # type: ignore


def test_a_unicode_server_seed_commits_by_its_utf8_bytes() -> None:
    seed = "sêmente-ção-🂡"
    events = deals_only(server=seed, player_seeds=("ñ", "über"))
    assert events[0].commitment == hashlib.sha256(seed.encode("utf-8")).hexdigest()  # type: ignore
    assert check_deals(events) == []
    assert prov(events).findings == ()


def test_the_seed_never_revealed_in_a_finished_match_is_a_finding() -> None:
    events = deals_only(reveal=False)
    p = prov(events)
    assert found(p.findings) == [("deal.not_revealed", 5)]
    assert (p.status, p.revealed, p.deals) == ("committed", False, 4)


def test_an_unfinished_log_is_not_yet_a_missing_reveal() -> None:
    events = deals_only()[:-1]
    p = prov(events)
    assert p.findings == ()
    assert (p.status, p.revealed, p.deals) == ("committed", False, 4)
    # check_deals itself (the log stops) does report it, without a seq
    assert found(check_deals(events)) == [("deal.not_revealed", None)]


def test_an_unrevealed_unfinished_committed_log_reports_its_plain_deal() -> None:
    events = deals_only(plain={1: "plain-1"})[:-1]
    events[2] = swap_two_hands(hs_at(events, 2))
    p = prov(events)
    assert p.status == "mixed"
    # Issue 13 item 8: in a committed match a plain seed backs nothing the players agreed to.
    assert found(p.findings) == [("deal.not_committed", 2)]


def test_a_wrong_reveal_blames_the_seed_not_the_deals() -> None:
    events = deals_only()
    events[-1] = R(events[-1], server_seed="guess")
    events[2] = swap_two_hands(hs_at(events, 2))  # cannot be checked without the real seed
    assert found(check_deals(events)) == [("deal.seed_mismatch", 5)]


def test_a_commitment_stamped_after_the_first_deal_is_late_even_in_a_played_log() -> None:
    events = bl.fair_match("thirteen-quick", 2, 1)
    first = hs_at(events, 1)
    events[0] = R(events[0], at=5_000)
    events[1] = R(first, at=4_999)
    v = audit.audit_events(events, unsealed(events))
    assert by_section(v, "provenance") == [("deal.commitment_late", 0)]
    assert by_section(v, "legality") == [] and by_section(v, "scoring") == []


def test_a_commitment_stamped_at_the_same_instant_as_the_deal_is_not_late() -> None:
    events = deals_only()
    events[0] = R(events[0], at=2_000)  # the first deal has at=2000: not after it
    assert check_deals(events) == []


def test_a_commitment_with_a_later_seq_is_late_and_the_deals_still_checked() -> None:
    events = deals_only()
    events = [R(hs_at(events, 1), seq=0), R(events[0], seq=1), *events[2:]]
    events[2] = swap_two_hands(hs_at(events, 2))
    rules = {r for r, _ in found(check_deals(events))}
    assert rules == {"deal.commitment_late", "deal.mismatch"}
    assert ("deal.mismatch", 2) in found(check_deals(events))
    assert all(s == 1 for r, s in found(check_deals(events)) if r == "deal.commitment_late")


def test_a_commitment_stamped_after_a_later_deal_is_late() -> None:
    """README: the commitment is late when it came after the first deal "by at". Deal 1 is
    stamped 2001 and the commitment 5000: the commitment came after deal 1, so after deal 0."""
    events = deals_only()
    events[0] = R(events[0], at=5_000)
    events[1] = R(hs_at(events, 1), at=None)  # strip the stamp of the first deal only
    assert found(check_deals(events)) == [("deal.commitment_late", 0)]


def insert_after(events: list[AnyEvent], i: int, ev: AnyEvent) -> list[AnyEvent]:
    """``ev`` inserted after ``events[i]`` with the next seq; later seqs move up by one."""
    seq = events[i].seq + 1
    return [*events[: i + 1], R(ev, seq=seq), *[R(e, seq=e.seq + 1) for e in events[i + 1 :]]]


def test_a_commitment_changed_mid_match_is_not_the_one_checked(played: list[AnyEvent]) -> None:
    """A second MatchStarted (with a new commitment) is illegal; the audit keeps the first
    commitment, so a reveal of the new seed does not match it."""
    new = FairDealer("the swapped-in seed", ("p0-1", "p1-1"))
    forged = insert_after(played, 1, R(played[0], commitment=new.commitment))
    forged[-1] = R(forged[-1], server_seed=new.server_seed)
    p = prov(forged)
    assert p.commitment == bl_commitment(played)
    assert found(p.findings) == [("deal.seed_mismatch", forged[-1].seq)]
    v = audit.audit_events(forged, unsealed(forged))
    assert by_section(v, "provenance") == [("deal.seed_mismatch", forged[-1].seq)]
    assert v.legality.first_illegal is not None
    assert (v.legality.first_illegal.seq, v.legality.first_illegal.rule) == (
        2, "match.already_started")


def test_a_commitment_added_in_a_second_match_start_does_not_commit_the_match(
    played: list[AnyEvent]
) -> None:
    bare = [R(played[0], commitment=None), *played[1:]]
    forged = insert_after(bare, 1, played[0])  # the commitment, after the first deal
    p = prov(forged)
    assert (p.status, p.commitment, p.revealed) == ("none", None, True)
    v = audit.audit_events(forged, unsealed(forged), require_commitment=True)
    assert by_section(v, "provenance") == [("deal.commitment_missing", 1)]
    assert v.legality.first_illegal is not None
    assert (v.legality.first_illegal.seq, v.legality.first_illegal.rule) == (
        2, "match.already_started")


def test_no_commitment_cannot_be_late() -> None:
    """There is no commitment to be late; the misplaced match start is a legality matter."""
    events = deals_only(plain={0: "a", 1: "b"}, commit=False, reveal=False, hands=2)
    events = [R(hs_at(events, 1), seq=0), R(events[0], seq=1), *events[2:]]
    p = prov(events)
    assert p.status == "plain_seeds"
    assert "deal.commitment_late" not in [f.rule for f in p.findings]


def test_revealed_and_the_not_revealed_finding_agree() -> None:
    events = deals_only()
    events.append(MatchEnded(seq=len(events)))  # a second end, revealing nothing
    p = prov(events)
    assert p.revealed == ("deal.not_revealed" not in [f.rule for f in p.findings])


# -- player seeds ------------------------------------------------------------------------------


def test_reordered_player_seeds_break_every_committed_deal() -> None:
    events = deals_only(hands=3)
    events[0] = R(events[0], player_seeds=PSEEDS[::-1])
    assert found(check_deals(events)) == [("deal.mismatch", s) for s in (1, 2, 3)]


def test_dropped_or_added_player_seeds_break_every_committed_deal() -> None:
    for seeds in ((PSEEDS[0],), (*PSEEDS, ""), ()):
        events = deals_only(hands=2)
        events[0] = R(events[0], player_seeds=seeds)
        assert found(check_deals(events)) == [("deal.mismatch", 1), ("deal.mismatch", 2)], seeds


def test_player_seeds_split_differently_are_different_seeds() -> None:
    """Each seed is length-prefixed: ("ab", "c") and ("a", "bc") must give different deals."""
    events = deals_only(hands=2, player_seeds=("ab", "c"))
    events[0] = R(events[0], player_seeds=("a", "bc"))
    assert found(check_deals(events)) == [("deal.mismatch", 1), ("deal.mismatch", 2)]


def test_plain_seeded_deals_ignore_the_player_seeds() -> None:
    events = deals_only(plain={0: "p0", 1: "p1"}, commit=False, reveal=False, hands=2)
    events[0] = R(events[0], player_seeds=("changed", "entirely"))
    assert check_deals(events, require_commitment=True) == []


def test_hand_key_follows_the_documented_message() -> None:
    """Independent of the implementation: the README's msg with byte (not char) lengths."""
    seeds = ("ção", "🂡x", "")
    msg = b"buraco_log/deal/v1" + struct.pack(">I", len(seeds))
    for s in seeds:
        b = s.encode("utf-8")
        msg += struct.pack(">I", len(b)) + b
    msg += struct.pack(">I", 7)
    assert hand_key("sêmente", seeds, 7) == hmac.digest("sêmente".encode(), msg, "sha256")


# -- plain seeds, mixed, none, --require-commitment --------------------------------------------


def test_plain_seeds_per_deal_are_each_checked() -> None:
    events = deals_only(plain={0: "s0", 1: "s1", 2: "s2", 3: "s3"}, commit=False, reveal=False)
    p = prov(events)
    assert (p.status, p.commitment, p.revealed, p.deals) == ("plain_seeds", None, False, 4)
    assert p.findings == ()
    assert prov(events, require=True).findings == ()
    events[3] = change_upcard(hs_at(events, 3))
    assert found(prov(events).findings) == [("deal.mismatch", 3)]


def test_a_plain_seed_swapped_for_another_deals_seed_is_a_mismatch() -> None:
    events = deals_only(plain={0: "s0", 1: "s1"}, commit=False, reveal=False, hands=2)
    events[1] = R(hs_at(events, 1), seed="s1")  # hand 0 now claims hand 1's seed
    assert found(prov(events).findings) == [("deal.mismatch", 1)]


def test_a_plain_seed_deal_keyed_with_the_player_seeds_is_a_mismatch() -> None:
    rules = preset("burraco")
    events = deals_only(plain={0: "s0"}, commit=False, reveal=False, hands=1)
    wrong = deal(rules, 2, 0, 0, hand_key("s0", PSEEDS, 0), seq=1, seed="s0")
    events[1] = R(wrong, at=2_000)
    assert found(check_deals(events)) == [("deal.mismatch", 1)]


def test_a_plain_seed_deal_must_use_its_own_hand_number() -> None:
    rules = preset("burraco")
    events = deals_only(plain={0: "s0", 1: "s1"}, commit=False, reveal=False, hands=2)
    # hand 1's deal keyed as if it were hand 0 of seed "s1"
    wrong = deal(rules, 2, 1, 1, hand_key("s1", (), 0), seq=2, seed="s1")
    events[2] = R(wrong, at=2_001)
    assert found(check_deals(events)) == [("deal.mismatch", 2)]


def test_a_mixed_match_reports_its_plain_deal_and_checks_the_committed_ones() -> None:
    events = deals_only(plain={2: "plain two"})
    p = prov(events)
    assert (p.status, p.revealed, p.deals) == ("mixed", True, 4)
    assert found(p.findings) == [("deal.not_committed", 3)]
    assert found(prov(events, require=True).findings) == [("deal.not_committed", 3)]
    events[3] = swap_stock_and_hand(hs_at(events, 3))  # the plain deal
    events[4] = swap_hand_and_morto(hs_at(events, 4))  # a committed deal
    assert found(prov(events).findings) == [("deal.not_committed", 3), ("deal.mismatch", 4)]


def test_a_mixed_match_that_never_reveals_still_reports_its_plain_deal() -> None:
    events = deals_only(plain={2: "plain two"}, reveal=False)
    events[3] = swap_stock_and_hand(hs_at(events, 3))
    events[2] = swap_stock_and_hand(hs_at(events, 2))  # committed: cannot be checked
    p = prov(events)
    assert p.status == "mixed"
    assert found(p.findings) == [("deal.not_revealed", 5), ("deal.not_committed", 3)]


def test_a_match_with_neither_is_none_and_a_finding_only_when_required() -> None:
    events = deals_only(commit=False, reveal=False)
    p = prov(events)
    assert (p.status, p.commitment, p.revealed, p.deals, p.findings) == (
        "none", None, False, 4, ())
    strict = prov(events, require=True)
    assert strict.status == "none"
    assert [(f.section, f.rule, f.seq) for f in strict.findings] == [
        ("provenance", "deal.commitment_missing", 1)
    ]


def test_an_unbacked_deal_among_plain_seeded_ones_is_reported() -> None:
    """README: where deals carry plain seeds "every deal is re-derived"; only a match with
    *neither* is exempt; `deal.commitment_missing` = a deal without a plain seed, and no
    commitment was published. Here hand 1 is neither re-derivable nor reported."""
    events = deals_only(plain={0: "s0", 2: "s2", 3: "s3"}, commit=False, reveal=False)
    rigged = R(FairDealer("anything", ()).deal(preset("burraco"), 2, 1, 1, seq=2), at=2_001)
    events[2] = rigged
    p = prov(events)
    assert p.status == "plain_seeds"
    assert found(p.findings) == [("deal.commitment_missing", 2)]


def test_a_plain_seeded_match_with_a_stray_reveal_is_still_plain() -> None:
    events = deals_only(plain={0: "s0", 1: "s1"}, commit=False, hands=2)
    p = prov(events)
    assert (p.status, p.commitment, p.findings) == ("plain_seeds", None, ())


# -- unknown shuffle ---------------------------------------------------------------------------


def test_an_unknown_shuffle_is_its_own_finding_at_that_deal() -> None:
    events = deals_only()
    events[2] = R(hs_at(events, 2), shuffle="fy-hmac-sha256-v2")
    events[3] = R(hs_at(events, 3), shuffle="python-random")
    p = prov(events)
    assert found(p.findings) == [("deal.unknown_shuffle", 2), ("deal.unknown_shuffle", 3)]
    assert all(hs_at(events, i).shuffle != SHUFFLE_ID for i in (2, 3))


def test_every_deal_records_the_shuffle_id() -> None:
    events = deals_only(plain={1: "x"})
    assert [hs_at(events, i).shuffle for i in (1, 2, 3, 4)] == [SHUFFLE_ID] * 4
    assert SHUFFLE_ID == "fy-hmac-sha256-v1"


# -- every preset and player count; determinism ------------------------------------------------


@pytest.mark.parametrize(("name", "players"), PRESET_COUNTS)
def test_every_preset_and_player_count_re_derives_cleanly(name: str, players: int) -> None:
    events = deals_only(name, players, hands=players + 1, first_dealer=players - 1)
    assert check_deals(events) == []
    p = prov(events, require=True)
    assert (p.status, p.revealed, p.deals, p.findings) == ("committed", True, players + 1, ())
    plain = deals_only(name, players, hands=2, plain={0: "a", 1: "b"}, commit=False)
    assert prov(plain, require=True).findings == ()
    # and one forgery in the last deal is caught there
    events[-2] = reorder_stock_bottom(hs_at(events, len(events) - 2))
    assert found(check_deals(events)) == [("deal.mismatch", players + 1)]


def test_six_players_is_allowed_for_classic_and_dealt_to_six_seats() -> None:
    assert (preset("classic").player_counts[-1], ("classic", 6) in PRESET_COUNTS) == (6, True)
    hs = hs_at(deals_only("classic", 6, hands=1), 1)
    assert [len(h) for h in hs.hands] == [11] * 6
    assert len(hs.stock) == 104 - 66


def test_the_same_seeds_give_the_same_deal() -> None:
    rules = preset("thirteen")
    a = FairDealer(SERVER, PSEEDS).deal(rules, 4, 3, 3, seq=9)
    b = FairDealer(SERVER, PSEEDS).deal(rules, 4, 3, 3, seq=9)
    assert a == b
    assert a == deal(rules, 4, 3, 3, hand_key(SERVER, PSEEDS, 3), seq=9)
    assert deal_seeded(rules, 2, 1, 1, "d", seq=2) == deal_seeded(rules, 2, 1, 1, "d", seq=2)
    other = FairDealer(SERVER + "!", PSEEDS).deal(rules, 4, 3, 3, seq=9)
    assert other.stock != a.stock
    assert deals_only() == deals_only()


def test_a_fresh_dealer_commits_to_a_different_secret_every_time() -> None:
    a, b = FairDealer(player_seeds=PSEEDS), FairDealer(player_seeds=PSEEDS)
    assert a.server_seed != b.server_seed and a.commitment != b.commitment
    assert a.commitment == commitment_of(a.server_seed)
    assert len(a.server_seed) == 64 and int(a.server_seed, 16) >= 0


# -- played matches: provenance apart from legality and scoring --------------------------------


def undrawn_stock(events: list[AnyEvent], hand: int) -> int:
    """How many cards of hand ``hand``'s stock were never drawn (hands end by going out)."""
    i = deal_index(events, hand)
    drawn = 0
    for e in events[i + 1 :]:
        if isinstance(e, CardDrawn | FirstDrawRejected):
            drawn += 1
        if isinstance(e, HandEnded):
            assert e.reason == "went_out"
            break
    return len(hs_at(events, i).stock) - drawn


def test_the_played_match_is_clean(played: list[AnyEvent]) -> None:
    v = audit.audit_events(played, unsealed(played), require_commitment=True)
    assert v.ok and v.findings == ()
    assert (v.provenance.status, v.provenance.revealed, v.provenance.deals) == (
        "committed", True, 4)
    assert v.legality.complete


@pytest.mark.parametrize("hand", [0, 1, 2, 3])
def test_a_forged_undrawn_stock_in_a_played_hand_is_provenance_only(
    played: list[AnyEvent], hand: int
) -> None:
    assert undrawn_stock(played, hand) >= 2
    events = list(played)
    i = deal_index(events, hand)
    events[i] = reorder_stock_bottom(hs_at(events, i))
    v = audit.audit_events(events, unsealed(events))
    assert [(f.section, f.rule, f.seq) for f in v.findings] == [
        ("provenance", "deal.mismatch", events[i].seq)
    ]
    assert v.legality.first_illegal is None and v.scoring.ok


@pytest.mark.parametrize("kind", ["hands", "hand-morto", "stock-hand", "upcard"])
def test_a_forged_played_deal_keeps_provenance_and_legality_apart(
    played: list[AnyEvent], kind: str
) -> None:
    events = list(played)
    i = deal_index(events, 2)
    events[i] = FORGERIES[kind](hs_at(events, i))
    v = audit.audit_events(events, unsealed(events))
    assert by_section(v, "provenance") == [("deal.mismatch", events[i].seq)]
    # the forged deal is still the right material: anything illegal comes after it
    assert all(s is not None and s > events[i].seq for _, s in by_section(v, "legality"))
    assert not any(r.startswith("deal.") for r, _ in by_section(v, "legality"))


def test_a_renumbered_played_hand_is_in_both_sections_at_its_seq(
    played: list[AnyEvent]
) -> None:
    events = list(played)
    i = deal_index(events, 1)
    events[i] = R(hs_at(events, i), hand=2)
    v = audit.audit_events(events, unsealed(events))
    seq = events[i].seq
    assert by_section(v, "provenance") == [("deal.mismatch", seq)]
    assert v.legality.first_illegal is not None
    assert (v.legality.first_illegal.seq, v.legality.first_illegal.rule) == (seq, "hand.number")


def test_a_wrong_dealer_in_a_played_hand_is_in_both_sections(played: list[AnyEvent]) -> None:
    events = list(played)
    i = deal_index(events, 3)
    events[i] = R(hs_at(events, i), dealer=0)
    v = audit.audit_events(events, unsealed(events))
    seq = events[i].seq
    assert by_section(v, "provenance") == [("deal.mismatch", seq)]
    assert v.legality.first_illegal is not None
    assert (v.legality.first_illegal.seq, v.legality.first_illegal.rule) == (
        seq, "deal.dealer_rotation")


def test_a_wrong_score_or_an_illegal_move_leaves_provenance_clean(
    played: list[AnyEvent]
) -> None:
    wrong, seq = bl.with_wrong_score(played)
    v = audit.audit_events(wrong, unsealed(wrong))
    assert v.provenance.findings == () and by_section(v, "provenance") == []
    assert [s for _, s in by_section(v, "scoring")] and not v.scoring.ok
    illegal, seq = bl.with_illegal_discard(played)
    v = audit.audit_events(illegal, unsealed(illegal))
    assert v.provenance.findings == ()
    assert v.legality.first_illegal is not None and v.legality.first_illegal.seq == seq
    assert by_section(v, "provenance") == []


def test_an_unfinished_played_log_says_its_reveal_is_missing(played: list[AnyEvent]) -> None:
    """Issue 13 item 10: a log cut before MatchEnded is never OK without saying that the
    reveal is missing and the deals were not checked; a site that requires commitments gets a
    finding (the cut may have removed the reveal)."""
    cut = played[: deal_index(played, 2) + 10]
    v = audit.audit_events(cut, unsealed(cut))
    assert v.findings == ()
    assert (v.provenance.status, v.provenance.revealed, v.provenance.deals) == (
        "committed", False, 3)
    assert v.provenance.unchecked == 3
    assert ("provenance: the log ends without MatchEnded: the reveal is missing and 3 deals "
            "were not checked") in v.notes
    v = audit.audit_events(cut, unsealed(cut), require_commitment=True)
    assert [(f.section, f.rule, f.seq) for f in v.findings] == [  # named where the log ends
        ("provenance", "deal.not_revealed", cut[-1].seq)]
    end = played[-1]
    assert isinstance(end, MatchEnded)
    hidden = [*played[:-1], R(end, server_seed=None)]
    v = audit.audit_events(hidden, unsealed(hidden))
    assert [(f.section, f.rule, f.seq) for f in v.findings] == [
        ("provenance", "deal.not_revealed", end.seq)
    ]


def test_a_forged_deal_is_found_through_audit_log_in_both_formats(
    tmp_path: Path, played: list[AnyEvent]
) -> None:
    events = list(played)
    i = deal_index(events, 3)
    events[i] = reorder_stock_bottom(hs_at(events, i))
    path = bl.write(tmp_path / "m.blog", events)
    binary_to_jsonl(path, tmp_path / "m.jsonl")
    for p in (path, tmp_path / "m.jsonl"):
        v = audit.audit_log(p)
        assert not v.ok
        assert [(f.section, f.rule, f.seq) for f in v.findings] == [
            ("provenance", "deal.mismatch", events[i].seq)
        ], p
        assert v.provenance.status == "committed" and v.provenance.revealed


def test_hand_keys_equal_hand_key_for_every_hand() -> None:
    keys = dealer_module.hand_keys(SERVER, PSEEDS)
    for k in (0, 1, 7, 2**32 - 1):
        assert keys(k) == hand_key(SERVER, PSEEDS, k)
    assert dealer_module.hand_keys(SERVER, ())(3) == hand_key(SERVER, (), 3)


def test_the_player_seeds_are_hashed_once_a_match_not_once_a_hand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A log may carry megabytes of player seeds and thousands of hands: hashing the seeds
    again for every hand made the check quadratic in the log's size (22 ms a hand for 5 MB of
    seeds). Every seed is framed by one ``_u32`` call; count them over a 12-hand check."""
    seeds = tuple(f"seed {i}" for i in range(500))
    events = deals_only(hands=12, player_seeds=seeds)
    calls = 0
    u32 = dealer_module._u32

    def counting(n: int) -> bytes:
        nonlocal calls
        calls += 1
        return u32(n)

    monkeypatch.setattr(dealer_module, "_u32", counting)
    assert check_deals(events) == []
    assert calls <= len(seeds) + 1 + 12  # the seeds and their count once, each hand's number
