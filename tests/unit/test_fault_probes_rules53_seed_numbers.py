"""The seeds' sentences that state a number, each played through the engine both ways.

The original Portuguese texts (``seeds/``) give counts, sizes and points. Most are held by
earlier scenarios (listed in COVERED, each with the test that plays it); the rest are played
here: the material's card count in every seed, and `002`'s canastra of "more than 6 cards"
at the limit, going out refused with six and accepted with seven, scored by hand.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from buraco_log.cards import parse_cards
from buraco_log.errors import IllegalMoveError
from buraco_log.events import HandStarted
from buraco_log.reducer import Replayer
from tests.scenario import Scenario, refused
from tests.spec_points import spec_points

# Sentence (seed: words) -> the test that plays it, for the number sentences played before.
COVERED = {
    '000: "quem primeiramente atingir 1.500 pontos"':
        "test_scenarios_probe35_targets.py::test_reaching_the_target_exactly_ends_the_match",
    '000: "no total de onze para cada participante"':
        "test_scenarios_turns_draw.py::"
        "test_the_deal_the_sides_and_the_seat_after_the_dealer_moving_first",
    '000: "no total, são oito as cartas de um mesmo valor"':
        "test_scenarios_probe41c_seed_quotes.py::"
        "test_a_set_holds_the_eight_copies_of_its_rank_and_one_wild",
    '000: "relancinho = 100 pontos; batida = 50 pontos; curinga = 10 pontos; dois = 10 ..."':
        "test_scenarios_probe35_card_points.py::test_every_kind_of_card_left_in_hand",
    '000: "sete ou mais cartas ... real ... 200 pontos; ... falsa, e vale 100 pontos"':
        "test_review_scoring.py::test_every_bonus_is_as_rules_md_bonus_table",
    '000: "alcançar 750 pontos (metade da partida) ... 75 pontos ... 90 pontos"':
        "test_rule_scenarios48.py::test_000_a_vulnerable_relancinho_under_75_is_refused",
    '000: "quatro pessoas, no máximo" / "No jogo em três, os mortos também serão três"':
        "test_scenarios_probe41c_seed_quotes.py::test_each_preset_seats_the_counts_its_seed_names",
    '000: "perderá 100 pontos atribuídos a este"':
        "test_scenarios_scoring_rulebook.py::"
        "test_a_stock_out_scores_the_table_less_the_hands_and_each_untaken_morto",
    '001: "Cada jogador recebe 13 cartas e um morto de 11"':
        "test_scenarios_turns_draw.py::"
        "test_the_deal_the_sides_and_the_seat_after_the_dealer_moving_first",
    '001: "com pelo menos 3 cartas e no máximo um curinga"':
        "test_review_melds.py::test_a_meld_holds_at_most_one_wild_in_every_preset",
    '001: "Uma sequência pode chegar a 14 cartas"':
        "test_rule_scenarios48.py::test_001_a_fourteen_card_run_is_refused_in_thirteen",
    '001: "baixada em um jogo novo com duas cartas da sua mão"':
        "test_rulings_round2.py::"
        "test_the_pile_is_refused_when_no_card_of_the_hand_bridges_the_gap",
    '001: "Vence quem chegar primeiro à meta (2005, ou 1005 na partida rápida)"':
        "test_scenarios_probe35_targets.py::test_five_points_short_of_the_target_the_match_goes_on",
    '002: "duas vezes 11 cartas, que formam as chamadas Fontes"':
        "test_scenarios_turns_draw.py::test_a_deal_that_is_not_the_presets_is_refused",
    '002: "2-7-8-9 ... 7-8-9-2-V"':
        "test_scenarios_referee.py::test_the_seed_002_wild_moves_to_the_other_end_when_the_jack_comes",
    '002: "possui, no entanto, sete cartas subsequentes, é um Buraco meio limpo"':
        "test_rule_scenarios45.py::test_semi_clean_as_rules_md_gives_it",
    '003: "A maior sequencia possível é de ás a rei"':
        "test_review_melds.py::test_no_wild_past_a_full_ace_to_king_run_outside_burako",
    '003: "o jogo termina quando restarem duas cartas no monte"':
        "test_fault_probes_referee44.py::"
        "test_mega_ends_the_hand_with_two_cards_left_and_replay_and_moves_say_so_alike",
    '003: "Batida = 100 pontos ... Coringão (joker) = 50 pontos"':
        "test_scenarios_probe35_card_points.py::test_every_kind_of_card_left_in_hand",
    '004: "Escada de 13 ... 500 pontos" / "Escada de 14 ... 1000 pontos"':
        "test_scenarios_probe38_ace_wilds.py::"
        "test_burako_ace_to_ace_scores_1000_in_place_of_the_clean_200",
    '004: "O 1 pode se colocar antes do 2 ou depois do 13"':
        "test_scenarios_probe42_statements.py::test_burako_tiles_1_after_13_and_two_tatus",
}


@pytest.mark.parametrize("sentence", sorted(COVERED))
def test_each_number_sentence_played_before_names_a_test_that_exists(sentence: str) -> None:
    path, name = COVERED[sentence].split("::")
    text = (Path(__file__).parent / path).read_text(encoding="utf-8")
    assert f"\ndef {name}(" in text, (sentence, COVERED[sentence])


# Seed: what it says, the preset, the cards the whole material holds.
MATERIAL = [
    # 000: "dois baralhos de 52 cartas, aos quais podem ser acrescentados dois curingas caso a
    # partida esteja sendo disputada em casa de família" (the presets play without them).
    ("classic", 104),
    # 001: "O Buraco se joga com 108 cartas (dois baralhos e quatro coringas)".
    ("thirteen", 108),
    # 002: "dois baralhos franceses completos, que são completados com 4 Jokers".
    ("burraco", 108),
    # 003: "Baralhos - dois de 52 cartas com dois Coringões cada".
    ("mega", 108),
    # 004 with RULES.md §1: 104 tiles + 2 tatus = 106.
    ("burako", 106),
]


@pytest.mark.parametrize(("name", "cards"), MATERIAL)
def test_the_deal_holds_the_seeds_number_of_cards_and_one_joker_more_is_refused(
        name: str, cards: int) -> None:
    s = Scenario(name)
    st = s.state
    held = (sum(len(h) for h in st.hands) + sum(len(m) for m in st.mortos) + len(st.stock)
            + len(st.pile))
    assert held == cards
    joker = parse_cards("JK")[0]
    assert sum(h.count(joker) for h in (*st.hands, *st.mortos, st.stock, st.pile)) == cards - 104
    deal = s.events[1]
    assert isinstance(deal, HandStarted)
    # A joker in place of the stock's last natural card: one joker more than the seed gives.
    i = max(k for k, c in enumerate(deal.stock) if c != joker)
    extra = msgspec.structs.replace(deal, stock=(*deal.stock[:i], joker, *deal.stock[i + 1:]))
    rep = Replayer()
    rep.step(s.events[0])
    with pytest.raises(IllegalMoveError) as info:
        rep.step(extra)
    assert info.value.rule in ("deal.material", "event.invalid"), info.value
    assert rep.phase == "between"


# 002: "Assim que houver uma combinação com mais de 6 cartas, forma-se o chamado Buraco" (a
# canastra), and burraco goes out only with one (RULES.md §7). Seat 0 lays 3..8 of hearts (six),
# three kings and three queens, takes its morto directly and lays it.
HAND0 = "3h 4h 5h 6h 7h 8h Kc Kd Ks Qc Qd"


def _morto_laid(morto: str) -> Scenario:
    s = Scenario("burraco", hands={0: HAND0}, stock="Qs", mortos={0: morto})
    s.draw("Qs").meld("3h 4h 5h 6h 7h 8h").meld("Kc Kd Ks").meld("Qc Qd Qs")
    assert s.state.melds[0][0].canastra is None  # six cards: no canastra
    s.morto(direct=True)
    s.meld("Ac Ad As").meld("Jc Jd Js")
    return s


def test_002_six_cards_are_no_canastra_a_meld_that_leaves_one_card_to_go_out_is_refused() -> None:
    s = _morto_laid("Ac Ad As Jc Jd Js Tc Td Ts Th 4c")
    # Four tens would leave the 4c alone, to be thrown with no canastra on the table.
    refused(s, "go_out.needs_canastra", ("canastra",), "meld", "Tc Td Ts Th")
    s.meld("Tc Td Ts")  # the Th and the 4c stay: the turn ends with a discard
    s.discard("4c")
    assert s.state.phase == "draw" and s.turn == 1


def test_002_the_seventh_card_makes_the_canastra_and_the_side_goes_out() -> None:
    s = _morto_laid("Ac Ad As Jc Jd Js Tc Td Ts 9h 4c")
    s.meld("Tc Td Ts").layoff(0, "9h")
    assert s.state.melds[0][0].canastra == "clean"
    s.discard("4c").go_out()
    # Burraco (RULES.md §9): 3..7 25 + 8 9 20 = 45; kings 30, queens 30, aces 45, jacks 30,
    # tens 30: table 210; clean canastra 200; going out 100. Side 1 holds its hand and never
    # took its morto (-100).
    side0, side1 = 210 + 200 + 100, -spec_points("burraco", s.hand(1)) - 100
    refused(s, "score.mismatch", ("side 0", f"recomputed {side0}"), "end_hand", "went_out",
            (side0 - 200, side1))  # the seven-card run counted as no canastra
    s.end_hand("went_out", (side0, side1))
