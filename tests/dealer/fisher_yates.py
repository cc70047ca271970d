"""The textbook Fisher-Yates shuffle, the reference the dealer's shuffle is checked against."""

from __future__ import annotations


def fisher_yates(cards: list[int], words: list[int]) -> list[int]:
    """Fisher-Yates driven by 32-bit words, rejecting the biased top of each range."""
    out, w = list(cards), 0
    for i in range(len(out) - 1, 0, -1):
        m = i + 1
        while words[w] >= 2**32 - 2**32 % m:
            w += 1
        j = words[w] % m
        w += 1
        out[i], out[j] = out[j], out[i]
    return out
