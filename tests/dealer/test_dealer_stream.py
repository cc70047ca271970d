"""The shuffle's fast paths give the documented stream and order, rejections included."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_log import dealer
from buraco_log.cards import deck
from tests.dealer.fisher_yates import fisher_yates


@given(st.binary(min_size=0, max_size=100), st.integers(0, 5), st.integers(1, 20))
def test_the_block_stream_is_hmac_sha256_of_the_counter(key: bytes, start: int, n: int) -> None:
    counters = [i.to_bytes(8, "big") for i in range(start, start + n)]
    want = b"".join(hmac.digest(key, c, "sha256") for c in counters)
    words = dealer._blocks(key, start, n)
    assert b"".join(w.to_bytes(4, "big") for w in words) == want


@pytest.mark.parametrize("rejected_at", [0, 1, 13, 50, 105])
def test_a_rejected_draw_takes_the_next_word_and_more_blocks(
    monkeypatch: pytest.MonkeyPatch, rejected_at: int
) -> None:
    """A rejection has odds below 1e-7 a draw, so the stream is forged to force some."""
    real = dealer._blocks
    key = hashlib.sha256(b"rejections").digest()
    stream = list(real(key, 0, 40))
    for k in range(rejected_at, rejected_at + 8):  # 8 rejections: 115 words, past 14 blocks
        stream[k] = 2**32 - 1  # at or above the limit of every range that is no power of 2

    def forged(_key: bytes, start: int, count: int) -> tuple[int, ...]:
        return tuple(stream[start * 8 : (start + count) * 8])

    monkeypatch.setattr(dealer, "_blocks", forged)
    calls: list[int] = []
    monkeypatch.setattr(dealer, "_blocks", lambda k, s, c: calls.append(s) or forged(k, s, c))
    cards = deck(4)
    assert dealer.shuffle(cards, key) == fisher_yates(cards, stream)
    assert calls == [0, 14]  # one batch, then one more block on demand
    assert dealer.shuffle(cards, key) != fisher_yates(cards, list(real(key, 0, 40)))


def test_small_and_large_decks_shuffle_like_the_reference() -> None:
    key = b"k" * 70  # longer than the hash block: the key is hashed first
    for n in (0, 1, 2, 9, 108, 300):
        cards = list(range(n))
        assert dealer.shuffle(cards, key) == fisher_yates(cards, list(dealer._blocks(key, 0, 60)))
