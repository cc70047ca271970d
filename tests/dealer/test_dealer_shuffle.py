"""The shuffle and the deal: golden vectors, an independent reference, deal layout."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_log.cards import deck, format_cards, parse_cards
from buraco_log.dealer import (
    SHUFFLE_ID,
    FairDealer,
    commitment_of,
    deal,
    deal_seeded,
    hand_key,
    shuffle,
)
from buraco_log.rules import PRESETS, preset
from tests.dealer.fisher_yates import fisher_yates

GOLDEN = json.loads((Path(__file__).parent / "golden_vectors.json").read_text("utf-8"))


def reference_shuffle(cards: list[int], key: bytes) -> list[int]:
    """The algorithm as the docs state it, written separately: a whole stream up front."""
    stream = b"".join(
        hmac.new(key, i.to_bytes(8, "big"), hashlib.sha256).digest() for i in range(64)
    )
    words = [int.from_bytes(stream[k : k + 4], "big") for k in range(0, len(stream), 4)]
    return fisher_yates(cards, words)


def test_the_golden_vectors_name_this_shuffle() -> None:
    assert GOLDEN["shuffle"] == SHUFFLE_ID == "fy-hmac-sha256-v1"


@pytest.mark.parametrize("vec", GOLDEN["shuffles"], ids=lambda v: v["key"][:8])
def test_a_key_always_gives_the_committed_deck_order(vec: dict[str, object]) -> None:
    key = bytes.fromhex(str(vec["key"]))
    order = shuffle(deck(int(str(vec["jokers"]))), key)
    assert format_cards(order) == vec["order"]
    assert list(parse_cards(str(vec["order"]))) == order


@pytest.mark.parametrize("vec", GOLDEN["hand_keys"], ids=lambda v: f"{v['hand']}")
def test_hand_keys_and_commitments_match_the_golden_vectors(vec: dict[str, object]) -> None:
    seeds = [str(s) for s in vec["player_seeds"]]  # type: ignore[attr-defined]
    assert hand_key(str(vec["server_seed"]), seeds, int(str(vec["hand"]))).hex() == vec["key"]
    assert commitment_of(str(vec["server_seed"])) == vec["commitment"]


def test_the_commitment_is_plain_sha256_of_the_seed_text() -> None:
    assert commitment_of("abc") == hashlib.sha256(b"abc").hexdigest()


@given(st.binary(min_size=1, max_size=64), st.sampled_from([0, 2, 4]))
def test_the_shuffle_follows_the_documented_algorithm(key: bytes, jokers: int) -> None:
    cards = deck(jokers)
    order = shuffle(cards, key)
    assert order == reference_shuffle(cards, key)
    assert Counter(order) == Counter(cards)


def test_player_seeds_and_hand_number_change_the_key() -> None:
    keys = {
        hand_key("s", (), 0),
        hand_key("s", (), 1),
        hand_key("s", ("a",), 0),
        hand_key("s", ("a", ""), 0),
        hand_key("s", ("", "a"), 0),
        hand_key("t", (), 0),
    }
    assert len(keys) == 6


@pytest.mark.parametrize(
    ("name", "players"), [(n, p) for n, r in PRESETS.items() for p in r.player_counts]
)
def test_a_deal_gives_every_card_once_in_the_documented_layout(name: str, players: int) -> None:
    rules = preset(name)
    key = hand_key("layout", (), 0)
    order = shuffle(deck(rules.jokers), key)
    hs = deal(rules, players, 0, dealer=players - 1, key=key, seq=1)
    assert hs.shuffle == SHUFFLE_ID and hs.seed is None and hs.seq == 1
    assert len(hs.hands) == players
    # Seat 0 sits after the dealer (the last seat), so it takes the first block.
    assert list(hs.hands[0]) == order[: rules.hand_size]
    assert all(len(h) == rules.hand_size for h in hs.hands)
    assert len(hs.mortos) == (rules.sides(players) if rules.morto else 0)
    assert all(len(m) == rules.morto_size for m in hs.mortos)
    assert (hs.upcard is not None) == rules.initial_upcard
    everything = [c for h in hs.hands for c in h] + [c for m in hs.mortos for c in m]
    everything += [hs.upcard] if hs.upcard is not None else []
    assert everything + list(hs.stock) == order


def test_the_seat_after_the_dealer_gets_the_first_cards() -> None:
    rules = preset("classic")
    key = hand_key("x", (), 0)
    order = shuffle(deck(0), key)
    hs = deal(rules, 4, 0, dealer=1, key=key, seq=0)
    assert list(hs.hands[2]) == order[:11]
    assert list(hs.hands[3]) == order[11:22]
    assert list(hs.hands[0]) == order[22:33]
    assert list(hs.hands[1]) == order[33:44]


def test_a_plain_seeded_deal_records_its_seed() -> None:
    hs = deal_seeded(preset("burraco"), 2, 3, 1, "demo", seq=9)
    assert hs.seed == "demo"
    assert hs == deal(preset("burraco"), 2, 3, 1, hand_key("demo", (), 3), seq=9, seed="demo")


def test_a_fair_dealer_commits_to_a_fresh_secret_seed() -> None:
    a, b = FairDealer(), FairDealer()
    assert a.server_seed != b.server_seed and len(a.server_seed) == 64
    assert a.commitment == commitment_of(a.server_seed)
    d = FairDealer("fixed", ("p1",))
    assert d.deal(preset("mega"), 4, 2, 2, seq=5) == deal(
        preset("mega"), 4, 2, 2, hand_key("fixed", ("p1",), 2), seq=5
    )
