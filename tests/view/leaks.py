"""What a seat's page must not show: the cards it cannot see."""

from __future__ import annotations

import re
from collections import Counter

from buraco_log.cards import Style, format_cards, sort_key
from buraco_log.events import CardDrawn
from buraco_log.state import State
from buraco_log.timeline import Timeline, card_style
from tests.view.pages import data_of, frames_of


def _visible(s: State, seat: int) -> Counter[int]:
    seen: Counter[int] = Counter(s.hands[seat]) if s.hands else Counter()
    seen.update(s.pile)
    for side in s.melds:
        for m in side:
            seen.update(m.cards)
    return seen


def _seen_lists(s: State, seat: int) -> list[tuple[int, ...]]:
    out = [s.hands[seat], s.pile] if s.hands else [s.pile]
    return out + [m.cards for side in s.melds for m in side]


def _forms(cards: tuple[int, ...] | list[int], style: Style) -> list[bytes]:
    """The ways the page could write these cards: JSON code lists (as held or as dealt) and
    text."""
    out = []
    for order in (list(cards), sorted(cards, key=sort_key)):
        out.append(("[" + ",".join(map(str, order)) + "]").encode())
        out.append(format_cards(order, style).encode())
    return out


def leaks(page: bytes, tl: Timeline, seat: int) -> list[str]:
    """Every way ``page`` shows ``seat`` a card it could not see; empty for a good page."""
    found: list[str] = []
    data = data_of(page)
    text = page.decode("utf-8")
    outside = re.sub(r'(?s)<script type="application/json" id="bl-data">.*?</script>', "", text)
    if re.search(r'data-card="\d', outside) or re.search(r"\b(?:[2-9TJQKA]|10)[cdhs]\b", outside):
        found.append("a card outside the data element")
    style = card_style(tl.rules)
    # What the seat sees at some point of the match may be in the file: a morto it takes later
    # shows up as its hand, and that is no leak.
    seen_forms = b"\n".join(
        form for seq in range(tl.last_seq + 1) for cards in _seen_lists(tl.state_at(seq), seat)
        for form in _forms(cards, style))
    for seq, f in enumerate(frames_of(data)):
        s = tl.state_at(seq)
        hidden_keys = [k for k in f if (re.fullmatch(r"h\d+", k) and k != f"h{seat}")
                       or re.fullmatch(r"d\d+", k)]
        if hidden_keys:
            found.append(f"seq {seq}: frame keys {hidden_keys}")
        shown: Counter[int] = Counter()
        for k, v in f.items():
            if re.fullmatch(r"[hd]\d+|p", k):
                shown.update(v)
            elif re.fullmatch(r"m\d+", k):
                for meld in v:
                    shown.update(meld[3])
        if shown - _visible(s, seat):
            found.append(f"seq {seq}: frame shows {sorted((shown - _visible(s, seat)).elements())}")
        hidden = [h for i, h in enumerate(s.hands) if i != seat and len(h) >= 4]
        hidden += [m for m in s.mortos if len(m) >= 4]
        if len(s.stock) >= 4:
            hidden.append(s.stock)
        for cards in hidden:
            for form in _forms(cards, style):
                if form in page and form not in seen_forms:
                    found.append(f"seq {seq}: hidden cards {form[:40]!r} in the bytes")
    for seq, ev in enumerate(tl.events):
        if isinstance(ev, CardDrawn) and ev.seat != seat:
            drawn = format_cards([ev.card], style)
            if data["moves"][seq].endswith(drawn):
                found.append(f"seq {seq}: the move list names the card seat {ev.seat} drew")
    return found
