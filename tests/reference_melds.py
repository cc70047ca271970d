"""The meld reader as first written (plain, raising, set-based): the oracle the fast reader in
:mod:`buraco_log.melds` is checked against. Kept verbatim; do not optimise."""

from __future__ import annotations

from collections.abc import Sequence

from buraco_log.cards import ACE, JOKER, RANK, SUIT, Card
from buraco_log.melds import CanastraClass, MeldError, Reading, meld_words
from buraco_log.rules import Rules


def read_meld(cards: Sequence[Card], rules: Rules) -> Reading:
    """Read ``cards`` as a meld under ``rules`` or raise :class:`MeldError` naming the rule."""
    n = len(cards)
    naturals: list[Card] = []
    twos: list[Card] = []
    jokers: list[Card] = []
    for c in cards:
        rank = RANK[c] if 0 <= c < JOKER else 0
        if c == JOKER:
            if not rules.jokers:  # no card of a preset without jokers, first as any code
                unit = "tile" if rules.rendering == "tiles" else "card"
                raise MeldError("meld.not_a_card", (), f"#{c} is no {unit} of the "
                                f"{rules.name} preset (it has no jokers)")
            jokers.append(c)
        elif rank == 2:
            twos.append(c)
        elif rank:
            naturals.append(c)
        else:
            raise MeldError("meld.not_a_card", (), f"{c!r} is not a card code")
    if n < 3:
        raise MeldError("meld.too_few_cards", cards,
                        f"a meld needs at least 3 {meld_words(rules)['cards']}")
    if not naturals:
        # A set of 2s (its 2s stand for 2s: not wild), with at most one joker; two wilds
        # otherwise (RULES.md §1, §5).
        if len(jokers) < 2 and len(twos) >= 2:
            what = "2s and a wild" if jokers else "2s alone"
            raise MeldError("meld.set_of_twos", cards, f"{what} make no meld (no set of 2s): "
                            f"it needs two natural {meld_words(rules)['cards']}")
        raise MeldError("meld.too_many_wilds", cards,
                        f"needs at least two natural {meld_words(rules)['cards']}")
    ranks = {RANK[c] for c in naturals}
    suits = {SUIT[c] for c in naturals}
    if naturals and len(ranks) == 1 and len(naturals) >= 2:
        return _read_set(cards, naturals, twos + jokers, rules)
    if len(suits) <= 1:
        suit = SUIT[naturals[0]] if naturals else SUIT[twos[0]]
        return _read_run(cards, suit, naturals, twos, jokers, rules)
    if len(ranks) == 1:
        return _read_set(cards, naturals, twos + jokers, rules)
    raise MeldError(
        "meld.not_a_meld",
        cards,
        f"neither a set (one {meld_words(rules)['rank']}) nor a run "
        f"(one {meld_words(rules)['suit']}, consecutive)",
    )


def _read_set(
    cards: Sequence[Card], naturals: list[Card], wilds: list[Card], rules: Rules
) -> Reading:
    if len(wilds) > 1:
        raise _too_many_wilds(cards, wilds, rules)
    # Three cards or more with at most one wild: at least two naturals, as every meld needs.
    n = len(cards)
    canastra: CanastraClass | None = None
    if n >= rules.canastra_size and rules.canastra_from_sets:
        canastra = "dirty" if wilds else "clean"
    return Reading(
        "set", n, rank=RANK[naturals[0]], wild=wilds[0] if wilds else None, canastra=canastra
    )


def _read_run(
    cards: Sequence[Card],
    suit: int,
    naturals: list[Card],
    twos: list[Card],
    jokers: list[Card],
    rules: Rules,
) -> Reading:
    own_twos = [c for c in twos if SUIT[c] == suit]
    other_twos = [c for c in twos if SUIT[c] != suit]
    # Canonical reading: a same-suit 2 is natural whenever the meld is valid read that way.
    attempts: list[tuple[list[Card], list[Card]]] = []
    if own_twos:
        attempts.append(([*naturals, own_twos[0]], [*jokers, *other_twos, *own_twos[1:]]))
    attempts.append((naturals, [*jokers, *twos]))
    first_error: MeldError | None = None
    for nats, wilds in attempts:
        if len(wilds) > 1:
            # Two wilds, where the own 2 read as natural left a gap: the wilds are the fault.
            if first_error is None or first_error.rule == "meld.run_not_consecutive":
                first_error = _too_many_wilds(cards, wilds, rules)
            continue
        try:
            return _layout(cards, suit, [RANK[c] for c in nats], wilds[0] if wilds else None, rules)
        except MeldError as err:
            first_error = first_error or err
    assert first_error is not None
    raise first_error


def _layout(
    cards: Sequence[Card], suit: int, ranks: list[int], wild: Card | None, rules: Rules
) -> Reading:
    aces = ranks.count(ACE)
    fixed = sorted(r for r in ranks if r != ACE)
    if len(set(fixed)) != len(fixed):
        raise MeldError("meld.duplicate_in_run", cards,
                        f"a run holds each {meld_words(rules)['rank']} once")
    options: list[list[int]] = []
    if aces == 0:
        options.append(fixed)
    elif aces == 1:
        options += [[1, *fixed], [*fixed, 14]]
    elif aces == 2 and rules.ace_both_ends:
        options.append([1, *fixed, 14])
    else:
        raise MeldError(
            "meld.duplicate_in_run",
            cards,
            f"a run holds at most two {meld_words(rules)['aces']}, one at each end"
            if rules.ace_both_ends
            else f"a run holds one {meld_words(rules)['ace']} (low or high, never both)",
        )
    max_run = rules.max_run()
    readings: list[Reading] = []  # one for each place the ace can sit
    for pos in options:
        lo, hi = pos[0], pos[-1]
        span = hi - lo + 1
        missing = span - len(pos)
        if missing == 0:
            size = span + (1 if wild is not None else 0)
            if size <= max_run:
                readings.append(_run(suit, size, lo, hi, wild, None, len(pos), rules))
        elif missing == 1 and wild is not None:
            gap = next(p for p in range(lo, hi + 1) if p not in pos)
            readings.append(_run(suit, span, lo, hi, wild, gap, max(gap - lo, hi - gap), rules))
    if readings:
        # The ace low is the reading, unless only the ace high makes the canastra semi-clean
        # (A..6, wild, 8..K holds 8..K-A: seven naturals in a row).
        semi = [r for r in readings[1:] if r.canastra == "semi_clean"]
        return semi[0] if readings[0].canastra == "dirty" and semi else readings[0]
    if len(cards) > max_run:
        raise MeldError("meld.run_too_long", cards,
                        f"a run has at most {max_run} {meld_words(rules)['cards']}")
    if _wraps(ranks) or (wild is not None and _wraps_through_a_wild_ace(ranks)):
        raise MeldError("meld.run_wraps", cards, f"a run never wraps {meld_words(rules)['wrap']}")
    raise MeldError(
        "meld.run_not_consecutive",
        cards,
        "not consecutive" + (" even with the wild filling one gap" if wild is not None else ""),
    )


def _wraps(ranks: list[int]) -> bool:
    """Would these ranks be (nearly) a run if K and A were followed by 2? For the message only."""
    if ACE not in ranks:
        return False
    wraps = False
    for shift in range(13):
        pos = sorted((r - 1 - shift) % 13 for r in ranks)
        missing = pos[-1] - pos[0] + 1 - len(pos)
        ace = (-shift) % 13  # where the ace sits after the shift
        if len(set(pos)) == len(pos) and missing <= 1:
            if not pos[0] < ace < pos[-1]:
                return False  # a reading with the ace at one end: the hole is a plain gap
            wraps = True
    return wraps


def _wraps_through_a_wild_ace(ranks: list[int]) -> bool:
    """K, 2 and no ace: would the wild, standing for the ace, close them into one run on the
    circle of ranks (K♥ JK 2♥)? For the message only."""
    if ACE in ranks or 13 not in ranks or 2 not in ranks:
        return False
    for shift in range(13):
        pos = sorted((r - 1 - shift) % 13 for r in [*ranks, ACE])
        if len(set(pos)) == len(pos) and pos[-1] - pos[0] + 1 == len(pos):
            return True
    return False


def _run(
    suit: int,
    size: int,
    lo: int,
    hi: int,
    wild: Card | None,
    gap: int | None,
    longest_natural_stretch: int,
    rules: Rules,
) -> Reading:
    canastra: CanastraClass | None = None
    if size >= rules.canastra_size:
        if wild is None:
            canastra = "clean"
            if rules.royal_canastras and lo == 1 and hi == 14:
                canastra = "ace_to_ace"
            elif rules.royal_canastras and lo == 1 and hi == 13:
                canastra = "royal"
        elif rules.semi_clean and longest_natural_stretch >= rules.canastra_size:
            canastra = "semi_clean"
        else:
            canastra = "dirty"
    return Reading("run", size, suit=suit, lo=lo, hi=hi, wild=wild, gap=gap, canastra=canastra)


def _too_many_wilds(cards: Sequence[Card], wilds: Sequence[Card], rules: Rules) -> MeldError:
    return MeldError("meld.too_many_wilds", cards,
                     f"{len(wilds)} wild {meld_words(rules)['cards']}; at most one")
