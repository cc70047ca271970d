"""The material (RULES.md §1), card text, rules presets and house rules."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from buraco_log.cards import ALL_CODES, JOKER, STYLES, deck, format_card, parse_card, parse_cards
from buraco_log.errors import CardParseError, RulesError
from buraco_log.rules import PRESETS, check, derive, load_toml, preset


@given(st.sampled_from(ALL_CODES), st.sampled_from(STYLES))
def test_every_card_round_trips_through_every_text_style(card: int, style: str) -> None:
    assert parse_card(format_card(card, style)) == card  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "same"),
    [("Th", "10h"), ("7♥", "7h"), ("10♥", "Th"), ("JK", "🃏"), ("13k", "Ks"), ("1r", "Ah")],
)
def test_ascii_unicode_and_tile_spellings_name_the_same_card(text: str, same: str) -> None:
    assert parse_card(text) == parse_card(same)


# other scripts' digits and a superscript: only ASCII digits are ranks
@pytest.mark.parametrize("text", ["", "1", "Xh", "14s", "7x", "0c", "JKK",
                                  "\u0667h", "\uff17h", "\u00b2h", "1\u0660h"])
def test_text_that_is_not_a_card_is_refused(text: str) -> None:
    with pytest.raises(CardParseError):
        parse_card(text)


@pytest.mark.parametrize("jokers", [0, 2, 4])
def test_the_material_is_two_decks_plus_jokers(jokers: int) -> None:
    d = deck(jokers)
    assert len(d) == 104 + jokers
    counts = Counter(d)
    assert counts[JOKER] == jokers
    assert all(n == 2 for c, n in counts.items() if c != JOKER)


def test_card_points_come_from_the_rules() -> None:
    pts = {name: preset(name).card_points for name in ("classic", "burraco", "mega")}
    assert pts["classic"](JOKER) == 10 and pts["burraco"](JOKER) == 30
    assert pts["mega"](JOKER) == 50
    assert pts["burraco"](parse_card("2h")) == 20 and pts["classic"](parse_card("2h")) == 10
    assert [pts["classic"](c) for c in parse_cards("Ah 3h 7h 8h Kh")] == [15, 5, 5, 10, 10]


def test_every_named_preset_exists_and_is_consistent() -> None:
    assert set(PRESETS) == {
        "classic",
        "biriba",
        "bossa-nova",
        "thirteen",
        "thirteen-quick",
        "burraco",
        "mega",
        "burako",
    }
    for r in PRESETS.values():
        check(r)


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"player_counts": (2, 4, 6)}, "player_counts"),
        ({"hand_size": 30}, "hand_size"),
        ({"jokers": 3}, "jokers"),
        ({"canastra_size": 2}, "canastra_size"),
        ({"colour": "red"}, "colour"),
        ({"target_score": "lots"}, "target_score"),
    ],
)
def test_impossible_house_rules_are_refused_naming_the_field(
    overrides: dict[str, object], field: str
) -> None:
    with pytest.raises(RulesError) as info:
        derive("biriba", **overrides)
    assert info.value.field == field


def test_hands_too_big_for_the_material_are_refused() -> None:
    # Six players of 16 cards leave a stock of 8: not two draws each.
    with pytest.raises(RulesError) as info:
        derive("classic", hand_size=16)
    assert info.value.field == "hand_size"
    # Thirteen-card hands for six players with mortos: refused before counting cards.
    with pytest.raises(RulesError) as info:
        derive("thirteen", player_counts=(2, 4, 6))
    assert info.value.field == "player_counts"


def test_house_rules_load_from_toml(tmp_path: Path) -> None:
    f = tmp_path / "club.toml"
    f.write_text('preset = "bossa-nova"\ntarget_score = 2000\n[bonuses]\ngoing_out = 100\n')
    r = load_toml(f)
    assert r.name == "bossa-nova+club" and r.target_score == 2000
    assert r.bonuses.going_out == 100 and r.morto_needs_canastra
    f.write_text("target_score = 2000\n")
    with pytest.raises(RulesError, match=f"^{f}: rules field 'preset': house rules must name"):
        load_toml(f)
    # A bad value names the file as well as the field.
    for body, field in (('preset = "biriba"\ntarget_score = "x"\n', "target_score"),
                        ('preset = "biriba"\nhand_size = 0\n', "hand_size"),
                        ('preset = "biriba"\nfoo = 3\n', "foo"),
                        ('preset = "nope"\n', "preset")):
        f.write_text(body)
        with pytest.raises(RulesError, match=f"^{f}: rules field") as info:
            load_toml(f)
        assert info.value.field == field and info.value.path == str(f)
