"""The deal audit: a fair match passes; tampering, a wrong seed or a late commitment is caught."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_log.dealer import FairDealer, Finding, check_deals, deal_seeded
from buraco_log.events import AnyEvent, HandStarted, MatchEnded, MatchStarted, Player
from buraco_log.rules import preset


def fair_match(
    name: str = "biriba", players: int = 2, hands: int = 3, first_dealer: int = 0
) -> list[AnyEvent]:
    rules = preset(name)
    dealer = FairDealer("the server seed", ("alice's seed", "bob's seed"))
    events: list[AnyEvent] = [
        MatchStarted(
            match_id="m1",
            rules=rules,
            players=tuple(Player(f"p{i}") for i in range(players)),
            sides=tuple(i % rules.sides(players) for i in range(players)),
            first_dealer=first_dealer,
            commitment=dealer.commitment,
            player_seeds=dealer.player_seeds,
            seq=0,
            at=1000,
        )
    ]
    for k in range(hands):
        events.append(
            msgspec.structs.replace(
                dealer.deal(rules, players, k, (first_dealer + k) % players, seq=len(events)),
                at=2000 + k,
            )
        )
    events.append(MatchEnded(server_seed=dealer.server_seed, seq=len(events)))
    return events


def rules_of(findings: list[Finding]) -> list[tuple[str, int | None]]:
    return [(f.rule, f.seq) for f in findings]


def test_a_fair_match_has_no_findings() -> None:
    assert check_deals(fair_match()) == []
    assert check_deals(fair_match("classic", 6, 4, first_dealer=3)) == []


def test_a_tampered_deal_is_caught_at_its_seq() -> None:
    events = fair_match()
    hs = events[2]
    assert isinstance(hs, HandStarted)
    # Swap one card of seat 0's hand with the top of the stock.
    hand0 = (hs.stock[0], *hs.hands[0][1:])
    events[2] = msgspec.structs.replace(
        hs, hands=(hand0, hs.hands[1]), stock=(hs.hands[0][0], *hs.stock[1:])
    )
    findings = check_deals(events)
    assert rules_of(findings) == [("deal.mismatch", 2)]
    assert "seat 0" in findings[0].message


def test_a_reordered_stock_is_a_mismatch() -> None:
    events = fair_match()
    hs = events[1]
    assert isinstance(hs, HandStarted)
    events[1] = msgspec.structs.replace(hs, stock=(hs.stock[1], hs.stock[0], *hs.stock[2:]))
    assert rules_of(check_deals(events)) == [("deal.mismatch", 1)]


def test_reordering_the_cards_within_a_hand_is_no_mismatch() -> None:
    events = fair_match()
    hs = events[1]
    assert isinstance(hs, HandStarted)
    events[1] = msgspec.structs.replace(hs, hands=tuple(tuple(sorted(h)) for h in hs.hands))
    assert check_deals(events) == []


def test_a_wrong_revealed_seed_is_caught() -> None:
    events = fair_match()
    events[-1] = MatchEnded(server_seed="another seed", seq=events[-1].seq)
    assert rules_of(check_deals(events)) == [("deal.seed_mismatch", 4)]


def test_a_seed_never_revealed_is_reported() -> None:
    events = fair_match()
    events[-1] = MatchEnded(seq=events[-1].seq)
    assert rules_of(check_deals(events)) == [("deal.not_revealed", 4)]
    assert rules_of(check_deals(events[:-1])) == [("deal.not_revealed", None)]


def test_a_commitment_recorded_after_the_deal_is_caught() -> None:
    events = fair_match()
    # The match start (carrying the commitment) comes after the first deal in the stream.
    late = [events[1], events[0], *events[2:]]
    assert ("deal.commitment_late", 0) in rules_of(check_deals(late))


def test_a_commitment_stamped_after_the_first_deal_is_caught() -> None:
    events = fair_match()
    events[0] = msgspec.structs.replace(events[0], at=5000)
    assert rules_of(check_deals(events)) == [("deal.commitment_late", 0)]


def test_a_commitment_with_a_later_seq_than_the_deal_is_caught() -> None:
    events = fair_match()
    events[0] = msgspec.structs.replace(events[0], seq=7)
    assert ("deal.commitment_late", 7) in rules_of(check_deals(events))


def test_a_match_without_commitment_is_reported_unless_not_required() -> None:
    events = fair_match()
    events[0] = msgspec.structs.replace(events[0], commitment=None)
    assert rules_of(check_deals(events)) == [("deal.commitment_missing", 1)]
    assert check_deals(events, require_commitment=False) == []


def test_a_changed_player_seed_breaks_every_deal() -> None:
    events = fair_match()
    events[0] = msgspec.structs.replace(events[0], player_seeds=("alice's seed", "mallory"))
    assert rules_of(check_deals(events)) == [("deal.mismatch", s) for s in (1, 2, 3)]


def test_a_replayed_hand_number_is_a_mismatch() -> None:
    events = fair_match()
    events[2] = msgspec.structs.replace(events[1], seq=2)  # hand 0's deal dealt again
    assert rules_of(check_deals(events)) == [("deal.mismatch", 2)]


def test_a_wrong_dealer_is_a_mismatch() -> None:
    events = fair_match()
    events[1] = msgspec.structs.replace(events[1], dealer=1)
    findings = check_deals(events)
    assert rules_of(findings) == [("deal.mismatch", 1)]
    assert "dealer" in findings[0].message


def test_an_unknown_shuffle_is_reported() -> None:
    events = fair_match()
    events[1] = msgspec.structs.replace(events[1], shuffle="python-random")
    assert rules_of(check_deals(events)) == [("deal.unknown_shuffle", 1)]


def test_plain_seeded_deals_are_checked_against_their_seed() -> None:
    rules = preset("thirteen")
    start = fair_match("thirteen")[0]
    start = msgspec.structs.replace(start, commitment=None)
    hs = deal_seeded(rules, 2, 0, 0, "plain", seq=1)
    assert check_deals([start, hs, MatchEnded(seq=2)]) == []
    bad = msgspec.structs.replace(hs, seed="other")
    assert rules_of(check_deals([start, bad, MatchEnded(seq=2)])) == [("deal.mismatch", 1)]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data())
def test_swapping_any_two_different_cards_of_a_deal_is_caught(data: st.DataObject) -> None:
    events = fair_match("burraco", 2, hands=2)
    k = data.draw(st.sampled_from([1, 2]))
    hs = events[k]
    assert isinstance(hs, HandStarted)
    places = [list(h) for h in hs.hands] + [list(m) for m in hs.mortos] + [list(hs.stock)]
    flat = [(i, j) for i, p in enumerate(places) for j in range(len(p))]
    a, b = data.draw(st.sampled_from(flat)), data.draw(st.sampled_from(flat))
    (ia, ja), (ib, jb) = a, b
    if places[ia][ja] == places[ib][jb]:
        return  # copies of one card are interchangeable: nothing changed
    places[ia][ja], places[ib][jb] = places[ib][jb], places[ia][ja]
    n = len(hs.hands)
    tampered = msgspec.structs.replace(
        hs,
        hands=tuple(tuple(p) for p in places[:n]),
        mortos=tuple(tuple(p) for p in places[n:-1]),
        stock=tuple(places[-1]),
    )
    events[k] = tampered
    same_place_reorder = ia == ib and ia < len(places) - 1
    found = rules_of(check_deals(events))
    assert found == ([] if same_place_reorder else [("deal.mismatch", k)])
