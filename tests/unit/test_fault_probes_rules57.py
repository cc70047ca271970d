"""What each preset plays, pinned to RULES.md by behaviour: the tests a changed knob of a preset
must fail (benchmarks/mutate_engine.py --presets changes one knob of one preset at a time; the
knobs a preset never reads are left out there, as equivalent).

Every expected value is written here from RULES.md §3, §9, §10 and §11, never read back from
the engine's presets.
"""

from __future__ import annotations

import pytest

from buraco_log.cards import JOKER
from buraco_log.dealer import deal_seeded
from buraco_log.errors import BuracoLogError
from buraco_log.rules import PRESETS

# RULES.md §11 (players, jokers, hand, morto, upcard); §1: 104 cards plus the jokers.
DEALS = {
    "classic": ((2, 3, 4, 6), 0, 11, False, False),
    "biriba": ((2, 3, 4), 0, 11, True, False),
    "bossa-nova": ((2, 3, 4), 0, 11, True, False),
    "thirteen": ((2, 4), 4, 13, True, True),
    "thirteen-quick": ((2, 4), 4, 13, True, True),
    "burraco": ((2, 4), 4, 11, True, True),
    "mega": ((2, 4), 4, 11, True, True),
    "burako": ((2, 4), 2, 11, True, False),
}


def test_the_table_names_every_preset() -> None:
    assert set(DEALS) == set(PRESETS)


@pytest.mark.parametrize("name", sorted(DEALS))
def test_each_preset_deals_as_rules_md_says(name: str) -> None:
    counts, jokers, hand, morto, upcard = DEALS[name]
    rules = PRESETS[name]
    for players in range(1, 8):
        if players not in counts:
            with pytest.raises(BuracoLogError):
                deal_seeded(rules, players, 0, 0, "s", seq=1)
            continue
        hs = deal_seeded(rules, players, 0, players - 1, "s", seq=1)
        sides = players if players <= 3 else 2  # §2: alone with 2 or 3, partners with 4 or 6
        assert [len(h) for h in hs.hands] == [hand] * players, (name, players)
        # §3: one morto of 11 cards a side in the morto variants.
        assert [len(m) for m in hs.mortos] == ([11] * sides if morto else []), (name, players)
        assert (hs.upcard is not None) == upcard, (name, players)
        cards = [c for part in (*hs.hands, *hs.mortos, hs.stock) for c in part]
        cards += [hs.upcard] if hs.upcard is not None else []
        assert len(cards) == 104 + jokers
        assert cards.count(JOKER) == jokers


# RULES.md §9, second table: clean, semi-clean, dirty, royal, going out, relancinho, morto not
# taken ("–": the preset has no such thing, so it scores nothing).
BONUSES = {
    "classic": (200, None, 100, None, 50, 100, 0),
    "biriba": (200, None, 100, None, 50, 100, 100),
    "bossa-nova": (200, None, 100, None, 50, 100, 100),
    "thirteen": (200, None, 100, None, 100, 0, 100),
    "thirteen-quick": (200, None, 100, None, 100, 0, 100),
    "burraco": (200, 150, 100, None, 100, 0, 100),
    "mega": (200, None, 100, None, 100, 0, 100),
    "burako": (200, None, 100, 500, 100, 0, 100),
}
# Side 0's table: a clean run, a run of seven naturals with a wild at its end (semi-clean where
# the preset knows it, else dirty), a dirty run (six naturals), the spades A..K (royal in
# burako, else clean) and a set of three.
TABLE = ("3h 4h 5h 6h 7h 8h 9h", "3d 4d 5d 6d 7d 8d 9d 2c", "3c 4c 5c 6c 7c 8c 2h",
         "As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs Ks", "Kd Kc Kh")
HAND = "2d Ad Kc 5s"  # side 1's cards left (with a joker where the material has one)


@pytest.mark.parametrize("name", sorted(BONUSES))
def test_each_preset_scores_a_hand_by_the_tables_of_rules_md(name: str) -> None:
    from buraco_log.cards import parse_cards
    from buraco_log.melds import read_meld
    from buraco_log.scoring import score_hand
    from buraco_log.state import Meld
    from tests.spec_points import spec_points

    clean, semi, dirty, royal, going_out, relancinho, morto = BONUSES[name]
    rules = PRESETS[name]
    classes = ["clean", "semi_clean" if semi else "dirty", "dirty",
               "royal" if royal else "clean", None]
    melds = []
    for i, (text, want) in enumerate(zip(TABLE, classes, strict=True)):
        cards = parse_cards(text)
        reading = read_meld(cards, rules)
        assert reading.canastra == want, (name, text)
        melds.append(Meld(i, 0, cards, reading.kind, reading.canastra, 0))
    hand = HAND + (" JK" if DEALS[name][1] else "")
    for relancinhos in (0, 1, 2):  # §7: per player, so two partners each earn it
        scores = score_hand(rules, (0, 1, 0, 1), 2, [(), parse_cards(hand), (), ()],
                            [melds, []], [True, False], [None, None], 0, [relancinhos, 0])
        bonus = clean + (semi or dirty) + dirty + (royal or clean)
        table = spec_points(name, " ".join(TABLE))
        assert scores[0].total == table + bonus + going_out + relancinhos * relancinho, name
        assert scores[1].total == -spec_points(name, hand) - morto, name


# RULES.md §11 and §4–§7, one row a preset: pile (must use top), first-turn redraw, a morto
# taken directly, the morto needs a canastra, relancinho, two sets of one rank, a 7-card set is
# a canastra, both aces in one run.
TURNS = {
    "classic": (False, True, True, False, True, False, True, False),
    "biriba": (False, True, True, False, True, False, True, False),
    "bossa-nova": (False, True, True, True, True, False, True, False),
    "thirteen": (True, False, True, False, False, False, True, False),
    "thirteen-quick": (True, False, True, False, False, False, True, False),
    "burraco": (False, False, True, False, False, False, True, False),
    "mega": (False, False, True, False, False, True, False, False),
    "burako": (False, False, False, False, False, False, True, True),
}


# A hand of no wild and nothing to meld with a king of hearts.
PLAIN = ("3c", "5d", "7s", "9c", "3d", "5s", "7c", "9d", "4h", "6s", "8c", "Ts", "4c")


def _hand(name: str, cards: str) -> str:
    """``cards`` topped up to the preset's hand (RULES.md §3: 11, 13 in thirteen): a 3 and a 4."""
    return cards + {11: "", 13: " 3c 4c"}[DEALS[name][2]]


@pytest.mark.parametrize("name", sorted(TURNS))
def test_each_preset_plays_a_turn_as_rules_md_says(name: str) -> None:
    from buraco_log.cards import parse_cards
    from buraco_log.melds import MeldError, read_meld
    from tests.scenario import Scenario

    must_use_top, redraw, direct, needs_canastra, relancinho, one_set, set_canastra, \
        both_aces = TURNS[name]
    rules = PRESETS[name]
    # §4.1: a pile whose top the player cannot use (a lone king) is refused under must-use-top.
    plain = " ".join(PLAIN[:DEALS[name][2]])
    if DEALS[name][4]:
        s = Scenario(name, hands={0: plain}, upcard="Kh")
    else:  # seat 0 throws the king, seat 1 (whole hand named) looks at it
        s = Scenario(name, hands={0: "Kh", 1: plain}, stock="Qs")
        s.draw().discard("Kh")
    if must_use_top:
        with s.illegal("pile.must_use_top"):
            s.take_pile()
    else:
        s.take_pile()
    # §4.1: the first player may reject the first card drawn, only under first_turn_redraw.
    s = Scenario(name, stock="Qs Jd")
    s.draw()
    if redraw:
        s.reject()
        assert s.state.pile[-1] == parse_cards("Qs")[0]
    else:
        with s.illegal("draw.redraw_not_allowed"):
            s.reject()
    # §7: the whole hand laid down in sets on the first turn, no canastra: the morto taken
    # directly (or, in classic, going out), unless the preset wants an indirect morto or a
    # canastra first; relancinho noted in the classic family.
    big = DEALS[name][2] == 13
    s = Scenario(name, hands={0: _hand(name, "3h 3s 3d 4h 4s 4d 5h 5s 5d 6h 6s")},
                 stock="6d")
    s.draw()
    for cards in ("3h 3s 3d" + " 3c" * big, "4h 4s 4d" + " 4c" * big, "5h 5s 5d"):
        s.meld(cards)
    last = "6h 6s 6d"
    if not direct:
        with s.illegal("morto.indirect_only"):
            s.meld(last)
    elif needs_canastra:
        with s.illegal("morto.needs_canastra"):
            s.meld(last)
    else:
        s.meld(last)
        assert s.state.hands[0] == ()
        s.morto(direct=True) if rules.morto else s.go_out()
        assert s.state.relancinho[0] == (1 if relancinho else 0)
    # §5: a side may hold one set of a rank in mega; every preset reads a 7-card set as a
    # canastra but mega (§6), and both aces of a suit in one run only in burako.
    s = Scenario(name, hands={0: _hand(name, "7h 7s 7d 7c 7h 7s 3c 8d Td Qc Ks")},
                 stock="2d")
    s.draw().meld("7h 7s 7d")
    if one_set:
        with s.illegal("meld.second_set_of_rank"):
            s.meld("7c 7h 7s")
    else:
        s.meld("7c 7h 7s")
    seven = read_meld(parse_cards("7h 7s 7d 7c 7h 7s 7d"), rules)
    assert seven.canastra == ("clean" if set_canastra else None)
    run = parse_cards("Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah")
    if both_aces:  # RULES.md §9: the ace-to-ace canastra is worth 1000
        from buraco_log.scoring import score_hand
        from buraco_log.state import Meld
        from tests.spec_points import spec_points

        assert read_meld(run, rules).canastra == "ace_to_ace"
        table = [Meld(0, 0, run, "run", "ace_to_ace", 0)]
        scores = score_hand(rules, (0, 1), 2, [(), ()], [table, []], [True, True],
                            [None, None], None, [0, 0])
        assert scores[0].total == spec_points(name, run) + 1000
    else:
        with pytest.raises(MeldError):
            read_meld(run, rules)


# RULES.md §10: the target of each preset; the classic family is vulnerable at half of it.
TARGETS = {"classic": 1500, "biriba": 1500, "bossa-nova": 1500, "thirteen": 2005,
           "thirteen-quick": 1005, "burraco": 2005, "mega": 3000, "burako": 3000}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_preset_ends_the_match_and_makes_a_side_vulnerable_where_rules_md_says(
        name: str) -> None:
    from buraco_log.scoring import match_decided
    from tests.scenario import Scenario, carried_in

    target = TARGETS[name]
    rules = PRESETS[name]
    assert match_decided(rules, (target - 1, 0)) is None
    assert match_decided(rules, (target - 5, target)) == 1
    vulnerable = name in ("classic", "biriba", "bossa-nova")
    for totals, short_ok in (((749, 0), True), ((750, 0), not vulnerable)):
        # an opening of 15 points, then one of exactly 75 (RULES.md §10: "at least 75")
        for opening, ok in ((("3h 4h 5h",), short_ok), (("Ah As Ad", "Jh Qh Kh"), True)):
            s = Scenario(name, hands={0: " ".join(opening) + " 9c"}, stock="6d")
            s = carried_in(s, totals)
            s.draw()
            for meld in opening:
                s.meld(meld)
            if ok:
                s.discard("9c")
            else:
                with s.illegal("vulnerable.opening_too_low"):
                    s.discard("9c")


@pytest.mark.parametrize("name", [n for n in sorted(DEALS) if DEALS[n][3]])
def test_an_indirect_morto_not_yet_played_stands_unless_an_opponent_went_out(name: str) -> None:
    """RULES.md §7: voided when an opponent goes out before the taker's next turn (the side
    pays the penalty, its cards are not counted); the stock running out leaves it standing."""
    from buraco_log.cards import parse_cards
    from buraco_log.scoring import score_hand
    from tests.spec_points import spec_points

    morto = parse_cards("Kd Qd 9c 5c")
    for went_out, total in ((None, -spec_points(name, morto)), (0, -100)):
        scores = score_hand(PRESETS[name], (0, 1), 2, [(), morto], [[], []], [True, True],
                            [None, 1], went_out, [0, 0])
        assert scores[1].total == total, (name, went_out)


@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova"])
def test_a_vulnerable_side_that_took_its_opening_back_needs_90(name: str) -> None:
    """RULES.md §10: a side that lays less than 75 takes those cards back and then needs 90."""
    from tests.scenario import Scenario, carried_in

    for melds, ok in ((("Ah As Ad", "Kh Kd Kc", "3c 3s 3d"), True), (("Ah As Ad", "Kh Kd Kc"),
                                                                    False)):
        s = Scenario(name, hands={0: "4h 5h 6h Ah As Ad Kh Kd Kc 3c 3s"}, stock="3d")
        s = carried_in(s, (750, 0))
        s.draw().meld("4h 5h 6h").retract()
        for meld in melds:
            s.meld(meld)
        if ok:
            s.discard("4h")
        else:
            with s.illegal("vulnerable.opening_too_low"):
                s.discard("4h")


@pytest.mark.parametrize("name", ["biriba", "thirteen", "thirteen-quick", "burraco", "mega"])
def test_going_out_after_a_direct_morto_needs_a_canastra_but_in_biriba(name: str) -> None:
    """RULES.md §7: all morto presets except biriba need a canastra to go out."""
    from tests.scenario import Scenario

    big = DEALS[name][2] == 13
    s = Scenario(name, hands={0: _hand(name, "3h 3s 3d 4h 4s 4d 5h 5s 5d 6h 6s")},
                 stock="6d", mortos={0: "7h 7s 7d 8h 8s 8d 9h 9s 9d 9c Kc"})
    s.draw()
    for cards in ("3h 3s 3d" + " 3c" * big, "4h 4s 4d" + " 4c" * big, "5h 5s 5d", "6h 6s 6d"):
        s.meld(cards)
    s.morto(direct=True).meld("7h 7s 7d").meld("8h 8s 8d")
    if name == "biriba":
        s.meld("9h 9s 9d 9c").discard("Kc").go_out()
        assert s.state.phase == "out"
    else:  # the meld that would leave only the king to throw is refused
        with s.illegal("go_out.needs_canastra"):
            s.meld("9h 9s 9d 9c")


@pytest.mark.parametrize("name", sorted(DEALS))
def test_the_stock_floor_of_each_preset(name: str) -> None:
    """RULES.md §8: a player who must draw from a stock of ``stock_floor`` cards or fewer (0;
    2 in mega) cannot; the hand ends there (under must-use-top, when the pile is no use)."""
    from tests.scenario import Scenario

    floor = 2 if name == "mega" else 0
    s = Scenario(name)
    while len(s.state.stock) > floor + 1:
        s.pass_turn()
    with s.illegal("hand.not_over"):
        s.end_hand("stock_out")
    s.pass_turn()
    assert len(s.state.stock) == floor
    with s.illegal("stock.floor_reached"):
        s.draw(None if s.state.stock else "Kc")  # the stock's top, or any card when none
    if PRESETS[name].pile_pickup == "free":
        s.end_hand("stock_out")
        assert s.state.phase != "draw"


def test_burako_takes_its_morto_indirectly_with_no_canastra_and_no_relancinho() -> None:
    """RULES.md §7: burako takes the morto only by a discard, needs no canastra for it, and
    knows no relancinho (a classic-family bonus); going out needs a canastra."""
    from tests.scenario import Scenario

    s = Scenario("burako", hands={0: "3h 3s 3d 3c 4h 4s 4d 4c 5h 5s 5d"}, stock="Kc Qd Jd",
                 mortos={0: "7h 7s 7d 8h 8s 8d 9h 9s 9d Jh Js"})
    s.draw()
    for cards in ("3h 3s 3d 3c", "4h 4s 4d 4c", "5h 5s 5d"):
        s.meld(cards)
    s.discard("Kc").morto(direct=False)
    assert s.state.morto_taken[0]
    assert s.state.relancinho == (0, 0)
    # Going out later, by melding the morto down: it needs a canastra (§7, all but biriba).
    s.pass_turn().draw()
    for cards in ("7h 7s 7d", "8h 8s 8d", "9h 9s 9d"):
        s.meld(cards)
    with s.illegal("go_out.needs_canastra"):
        s.meld("Jh Js Jd")


def test_a_top_that_fits_nowhere_is_refused_as_such_though_going_out_is_barred() -> None:
    """RULES.md §4.1 (must use top): a king that fits no meld of the side and no two cards of
    the hand is refused for that; the side's barred going out (§7: no canastra yet after its
    morto) is not the reason, and the referee's message must not say it is."""
    from tests.scenario import Scenario

    s = Scenario("thirteen", hands={0: _hand("thirteen", "3h 3s 3d 4h 4s 4d 5h 5s 5d 6h 6s"),
                                    1: "Kh"},
                 stock="6d", mortos={0: " ".join(PLAIN[:11])})
    s.draw()
    for cards in ("3h 3s 3d 3c", "4h 4s 4d 4c", "5h 5s 5d", "6h 6s 6d"):
        s.meld(cards)
    s.morto(direct=True).discard("3c")
    s.pass_turn(discard="Kh")
    with s.illegal("pile.must_use_top"):
        s.take_pile()
    text = str(s.last_error)
    assert "with two cards from the hand or on a meld" in text, text
    assert "to throw" not in text, text


@pytest.mark.parametrize("name", ["classic", "burako"])
def test_a_run_with_a_third_ace_is_refused_as_a_repeated_rank(name: str) -> None:
    """RULES.md §5: one ace a run (both ends only with ``ace_both_ends``), so a third ace is a
    rank repeated, whether or not the preset allows two; the reader and the plain reference
    reader (tests/reference_melds.py) say so alike."""
    from buraco_log.cards import parse_cards
    from buraco_log.melds import MeldError, read_meld
    from tests import reference_melds

    for text in ("Ah Ah Ah 3h 4h", "Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Qh Kh Ah Ah"):
        cards = parse_cards(text)
        for reader in (read_meld, reference_melds.read_meld):
            with pytest.raises(MeldError) as info:
                reader(cards, PRESETS[name])
            assert info.value.rule == "meld.duplicate_in_run", (name, text, reader)


def test_house_rules_take_points_as_a_table_or_a_whole_value_and_refuse_anything_else() -> None:
    """``derive``: nested ``points``/``bonuses`` merge a dict into the preset's, take a whole
    value as it is, and refuse a number with the knob named (never a TypeError)."""
    from buraco_log.errors import RulesError
    from buraco_log.rules import Bonuses, CardPoints, derive

    assert derive("burraco", points={"joker": 40}).points == CardPoints(joker=40, two=20)
    assert derive("burraco", points=CardPoints(joker=40)).points == CardPoints(joker=40)
    assert derive("classic", bonuses=Bonuses(clean=300)).bonuses.clean == 300
    for knob in ("points", "bonuses"):
        with pytest.raises(RulesError) as info:
            derive("classic", **{knob: 5})
        assert info.value.field == knob
