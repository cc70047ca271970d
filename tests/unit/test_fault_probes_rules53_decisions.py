"""RULES.md's decisions, each held to a test that accepts it and a test that refuses it.

RULES.md records where the seed texts are silent or disagree and a decision was taken (§1-§10),
and gives the presets' tables (§9 card points and bonuses, §10 targets, §11 presets). TRACE
names, for every one, the test that shows the engine accepting what the decision allows and the
test that shows it refusing what the decision rules out (a refused move, or a recorded score of
the other reading refused as `score.mismatch`). The decisions that had no refusing test get one
here, scored by hand from RULES.md §9 (the points in the comments; nothing read from the engine).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from tests.scenario import Scenario, refused
from tests.spec_points import spec_points
from tests.unit.closing_hands import closing_hand

TESTS = Path(__file__).parents[1]
HERE = "unit/test_fault_probes_rules53_decisions.py"

# decision (RULES.md section: what it decides) -> (accepting test, refusing test), as
# "directory/file.py::function" under tests/.
TRACE: dict[str, tuple[str, str]] = {
    "§1 the material: two decks plus the preset's jokers (Burako 104 tiles + 2 tatus)": (
        "unit/test_deal.py::test_every_preset_deals_its_exact_material",
        "unit/test_scenarios_probe42_statements.py::test_burako_tiles_1_after_13_and_two_tatus"),
    "§1 a 2 of a run's suit in its own place is natural": (
        "unit/test_review_melds.py::test_a_2_of_the_runs_suit_in_its_own_place_is_natural",
        "unit/test_scenarios_probe32_melds.py::"
        "test_a_runs_own_2_out_of_its_place_is_its_wild_so_another_2_is_one_wild_too_many"),
    "§2 six players in classic only, two triangles": (
        "unit/test_scenarios_probe35_classic_family.py::"
        "test_classic_six_players_each_side_pays_its_three_hands",
        "unit/test_turns.py::test_a_morto_preset_refuses_six_players_naming_the_field"),
    "§2 partners on alternate seats": (
        "unit/test_scenarios_turns_draw.py::"
        "test_the_deal_the_sides_and_the_seat_after_the_dealer_moving_first",
        "unit/test_turns.py::test_the_sides_must_match_the_seating"),
    "§4 the whole pile, never part of it": (
        "unit/test_scenarios_probe35_pile.py::test_the_whole_pile_in_every_free_preset",
        "unit/test_turns.py::test_the_whole_pile_is_taken_never_part_of_it"),
    "§4 must-use-top: a wild top card must end up in a valid meld": (
        "unit/test_review_turns.py::"
        "test_must_use_top_a_joker_on_top_may_be_laid_off_on_a_clean_meld",
        "unit/test_review_turns.py::"
        "test_must_use_top_a_joker_on_top_cannot_join_a_meld_that_already_has_a_wild"),
    "§4 the redraw: the rejected card cannot be taken back that turn": (
        "unit/test_scenarios_probe36_melds.py::"
        "test_biriba_the_rejected_first_card_may_be_taken_by_the_next_player",
        "unit/test_draw_and_pile.py::test_the_rejected_card_cannot_be_taken_back_that_turn"),
    "§5 at most one wild per meld, all variants": (
        "unit/test_melds.py::test_a_joker_plus_a_same_suit_2_in_its_own_place_is_one_wild",
        "unit/test_review_melds.py::test_a_meld_holds_at_most_one_wild_in_every_preset"),
    "§5 no set of 2s, applied to all presets": (
        "unit/test_review_melds.py::test_a_set_takes_all_eight_naturals_and_one_wild",
        "unit/test_review_melds.py::test_no_set_of_2s_in_any_preset"),
    "§5 mega: one set per rank a side": (
        "unit/test_scenarios_probe41c_seed_quotes.py::test_other_presets_allow_a_second_set_of_a_rank",
        "unit/test_review_melds.py::"
        "test_mega_a_second_set_of_a_rank_is_refused_but_laying_off_on_the_first_is_not"),
    "§5 a run never wraps; K-A-2 is Q-K-A with the 2 wild": (
        "unit/test_review_melds.py::test_k_a_2_is_q_k_a_with_the_2_as_wild_in_every_preset",
        "unit/test_scenarios_melds.py::test_q_k_a_and_a_2_3_are_runs_k_a_3_is_refused_as_a_wrap"),
    "§5 both aces in one run: burako only": (
        "unit/test_review_melds.py::test_burako_a_clean_run_becomes_royal_then_ace_to_ace",
        "unit/test_scenarios_scoring_rulebook.py::"
        "test_both_aces_in_one_run_are_burakos_ace_to_ace_canastra_and_refused_elsewhere"),
    "§5 001's FAQ wins: a run has at most 13 cards in thirteen": (
        "unit/test_review_melds.py::test_a_clean_ace_to_king_run_is_13_cards_everywhere",
        "unit/test_rule_scenarios48.py::test_001_a_fourteen_card_run_is_refused_in_thirteen"),
    "§5 the wild moves to an end when a natural fills its gap": (
        "unit/test_scenarios_probe39_twos.py::"
        "test_a_natural_2_moves_into_the_gap_and_its_twin_takes_its_place",
        "unit/test_review_melds.py::"
        "test_a_gap_filled_below_a_full_run_leaves_no_room_for_the_wild"),
    "§5 canonical reading: a 2 is natural whenever the meld is valid so": (
        "unit/test_table.py::test_a_dirty_canastra_turns_clean_when_its_2_finds_its_place",
        "unit/test_scenarios_probe32_melds.py::"
        "test_a_runs_own_2_out_of_its_place_is_its_wild_so_another_2_is_one_wild_too_many"),
    "§5 a set holds at most the 8 naturals that exist (and one wild)": (
        "unit/test_review_melds.py::test_a_set_takes_all_eight_naturals_and_one_wild",
        "unit/test_scenarios_melds.py::"
        "test_a_set_grows_to_eight_naturals_and_one_wild_and_no_more"),
    "§6 semi-clean: burraco, runs only, the wild outside 7 unbroken naturals": (
        "unit/test_melds.py::test_a_wild_beside_seven_consecutive_naturals_is_semi_clean_in_burraco",
        "unit/test_scenarios_probe38_ace_wilds.py::"
        "test_burraco_pinellas_and_jollies_on_the_table_and_in_hand"),
    "§6 canastra_from_sets: a 7+ set is a canastra except in mega": (
        "unit/test_melds.py::test_seven_card_sets_are_canastras_except_in_mega",
        "unit/test_scenarios_probe36_turns.py::"
        "test_mega_seven_nines_are_no_canastra_and_do_not_let_the_side_go_out"),
    "§6 royal and ace-to-ace canastras: burako": (
        "unit/test_review_scoring.py::test_burako_royal_and_ace_to_ace_canastras_score_500_and_1000",
        "unit/test_scenarios_probe38_ace_wilds.py::"
        "test_burako_ace_to_ace_scores_1000_in_place_of_the_clean_200"),
    "§6 a canastra changes class as cards are added": (
        "unit/test_scenarios_probe39_canastras.py::test_burako_one_run_grows_clean_royal_then_ace_to_ace",
        "unit/test_scenarios_presets_jokers.py::"
        "test_burako_royal_ace_to_ace_and_a_wild_that_spoils_them"),
    "§7 an indirect morto is voided only by an opponent going out": (
        "unit/test_scenarios_scoring_rulebook.py::"
        "test_four_players_the_partner_goes_out_and_the_takers_morto_stands_as_a_hand",
        "unit/test_scenarios_scoring_rulebook.py::"
        "test_an_opponent_out_before_the_takers_next_turn_voids_the_indirect_morto"),
    "§7 logs without morto_voided_by keep the any-end reading": (
        "unit/test_scenarios_turns_morto.py::"
        "test_a_stock_out_before_the_takers_next_turn_keeps_the_indirect_morto",
        "unit/test_morto_and_going_out.py::"
        "test_a_stock_out_before_the_taker_plays_again_voids_the_morto_only_under_the_old_reading"),
    "§7 'that player's next turn' is the taker's own": (
        "unit/test_morto_and_going_out.py::"
        "test_an_indirect_morto_is_taken_for_good_once_its_taker_plays_again",
        "unit/test_scenarios_referee.py::"
        "test_an_opponent_going_out_after_the_takers_partner_played_still_voids_the_morto"),
    "§7 burako: the morto indirectly only; out by a meld or a discard after": (
        "unit/test_rulings_round2.py::"
        "test_burako_goes_out_after_the_morto_by_melding_or_by_a_discard",
        "unit/test_morto_and_going_out.py::test_burako_takes_the_morto_only_indirectly"),
    "§7 bossa-nova: the morto needs the side's canastra": (
        "unit/test_review_turns.py::"
        "test_bossa_nova_a_partners_canastra_lets_the_other_partner_take_the_morto",
        "unit/test_scenarios_probe34_sides.py::"
        "test_bossa_nova_the_partners_canastra_takes_the_morto_the_opponents_does_not"),
    "§7 going out needs a canastra in every morto preset but biriba": (
        "unit/test_morto_and_going_out.py::test_biriba_goes_out_after_the_morto_without_a_canastra",
        "unit/test_scenarios_turns_morto.py::"
        "test_after_the_morto_only_biriba_goes_out_without_a_canastra"),
    "§7 emptying the hand when neither the morto nor going out is allowed": (
        "unit/test_scenarios_probe43_refusal_ids.py::test_a_hand_emptied_holds_nothing_to_throw",
        "unit/test_morto_and_going_out.py::test_an_empty_hand_cannot_discard_and_the_morto_comes_once"),
    "§7 relancinho: ends the hand in classic; only the +100 in biriba and bossa-nova": (
        "unit/test_scenarios_probe36_scoring.py::"
        "test_classic_relancinho_ends_the_hand_with_the_going_out_bonus_on_top",
        f"{HERE}::test_a_relancinho_ends_the_hand_in_classic_only"),
    "§7 relancinho: a final discard is allowed": (
        "unit/test_review_turns.py::test_classic_relancinho_may_end_with_a_discard_and_ends_the_hand",
        "unit/test_scenarios_scoring_rulebook.py::test_no_relancinho_for_a_hand_laid_down_over_two_turns"),
    "§7 relancinho: the +100 stands when the indirect morto is voided": (
        "unit/test_rulings_round2.py::"
        "test_an_opponent_going_out_before_the_taker_plays_voids_the_morto_and_keeps_relancinho",
        f"{HERE}::test_a_relancinho_stands_when_its_indirect_morto_is_voided"),
    "§7 relancinho: per player, two partners each earn it": (
        "unit/test_rulings_round2.py::"
        "test_two_partners_each_earn_a_relancinho_in_one_hand_and_the_partner_out_keeps_the_morto",
        f"{HERE}::test_two_partners_each_earn_a_relancinho_scored_by_hand"),
    "§8 the stock floor: 0, and 2 in mega": (
        "unit/test_review_turns.py::"
        "test_mega_the_hand_goes_on_at_three_stock_cards_and_the_pile_is_free_at_two",
        "unit/test_draw_and_pile.py::test_drawing_at_the_stock_floor_is_illegal_and_the_hand_ends"),
    "§8 must-use-top: no stock-out while the pile can be taken": (
        "unit/test_rulings_round2.py::test_a_stock_out_ends_the_hand_when_the_pile_cannot_be_taken",
        "unit/test_rulings_round2.py::"
        "test_a_stock_out_is_refused_while_the_pile_can_be_taken_under_must_use_top"),
    "§9 thirteen's values taken from mega (joker 50, going out 100)": (
        "unit/test_scenarios_probe36_scoring.py::"
        "test_thirteen_direct_morto_and_out_in_one_turn_jokers_at_fifty",
        "unit/test_scenarios_probe36_scoring.py::"
        "test_thirteen_direct_morto_and_out_in_one_turn_jokers_at_fifty"),
    "§9 burraco's values (jolly 30, pinella 20, semi-clean 150)": (
        "unit/test_scenarios_probe38_ace_wilds.py::"
        "test_burraco_pinellas_and_jollies_on_the_table_and_in_hand",
        "unit/test_scenarios_probe38_ace_wilds.py::"
        "test_burraco_pinellas_and_jollies_on_the_table_and_in_hand"),
    "§9 the card table, every preset's column": (
        "unit/test_scenarios_probe38_going_out.py::test_the_loser_pays_its_wilds_at_the_presets_values",
        "unit/test_scenarios_probe38_going_out.py::test_the_loser_pays_its_wilds_at_the_presets_values"),
    "§9 the bonus table: morto not taken": (
        "unit/test_scenarios_scoring_rulebook.py::"
        "test_a_stock_out_scores_the_table_less_the_hands_and_each_untaken_morto",
        "unit/test_scenarios_scoring_rulebook.py::"
        "test_a_stock_out_scores_the_table_less_the_hands_and_each_untaken_morto"),
    "§9 the bonus table: going out, relancinho, clean, morto in every preset's column": (
        "unit/test_scenarios_probe35_targets.py::test_reaching_the_target_exactly_ends_the_match",
        f"{HERE}::test_each_bonus_row_of_the_preset_column_is_refused_at_another_columns_value"),
    "§10 every preset's target (mega and burako 3000)": (
        "unit/test_scenarios_probe35_targets.py::test_reaching_the_target_exactly_ends_the_match",
        "unit/test_scenarios_probe35_targets.py::test_five_points_short_of_the_target_the_match_goes_on"),
    "§10 what a match end carries": (
        "unit/test_fault_probes_rules53.py::"
        "test_a_bare_match_end_is_accepted_when_a_side_reached_the_target",
        "unit/test_fault_probes_rules53.py::"
        "test_a_match_end_whose_totals_differ_from_the_hands_scores_is_refused"),
    "§10 a tie plays another hand": (
        "unit/test_rule_scenarios46.py::test_a_tie_above_the_target_plays_another_hand_which_then_decides",
        "unit/test_rule_scenarios46.py::test_a_tie_above_the_target_plays_another_hand_which_then_decides"),
    "§10 vulnerability: 75, then 90 after a taking back": (
        "unit/test_scenarios_turns.py::"
        "test_a_vulnerable_side_empties_the_hand_with_exactly_75_but_not_with_70",
        "unit/test_rule_scenarios47.py::test_a_short_opening_asks_90_for_that_hand_only"),
    "§11 players": (
        "unit/test_scenarios_turns_draw.py::"
        "test_a_player_count_the_preset_does_not_allow_is_refused_at_the_start",
        "unit/test_scenarios_turns_draw.py::"
        "test_a_player_count_the_preset_does_not_allow_is_refused_at_the_start"),
    "§11 jokers, hand, morto, upcard": (
        "unit/test_scenarios_turns_draw.py::"
        "test_the_deal_the_sides_and_the_seat_after_the_dealer_moving_first",
        "unit/test_scenarios_turns_draw.py::test_a_deal_that_is_not_the_presets_is_refused"),
    "§11 pile": (
        "unit/test_scenarios_probe35_pile.py::test_the_whole_pile_in_every_free_preset",
        "unit/test_scenarios_turns_draw.py::"
        "test_must_use_top_the_pile_only_for_a_top_that_two_hand_cards_or_a_meld_take"),
    "§11 redraw": (
        "unit/test_review_turns.py::test_the_first_turn_redraw_is_part_of_the_whole_classic_family",
        "unit/test_review_turns.py::test_the_presets_outside_the_classic_family_have_no_redraw"),
    "§11 vulnerable": (
        "unit/test_scenarios_presets_brazilian.py::test_a_side_not_vulnerable_opens_with_any_meld",
        "unit/test_review_scoring.py::"
        "test_a_side_at_exactly_half_the_target_is_vulnerable_and_one_point_less_is_not"),
}

REFUSALS = ("illegal(", "refused(", "_refuses(", "names(", "pytest.raises", "score.mismatch")


@cache
def functions(path: str) -> dict[str, str]:
    """Every top-level test function of a test file, by name, with its source."""
    text = (TESTS / path).read_text(encoding="utf-8")
    lines = text.splitlines()
    return {
        node.name: "\n".join(lines[node.lineno - 1:node.end_lineno])
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


@pytest.mark.parametrize("decision", sorted(TRACE))
def test_every_decision_has_a_test_that_accepts_and_one_that_refuses(decision: str) -> None:
    accept, refuse = TRACE[decision]
    for ref in (accept, refuse):
        path, name = ref.split("::")
        assert name in functions(path), f"{decision}: {ref} is no test"
    path, name = refuse.split("::")
    body = functions(path)[name]
    assert any(r in body for r in REFUSALS), f"{decision}: {refuse} refuses nothing"


# -- the decisions that had no refusing test ------------------------------------------------

SETS_10_PLUS_1 = "7h 7s 7d 8c 8d 8s 9h 9s 9d 9c Kd"  # + 7c: eleven melded, Kd thrown
SETS_12 = "3h 3s 3d 4h 4s 4d 5h 5s 5d 6c 6d"  # + 6s: four sets, the whole hand
MORTO_SETS = "Jh Js Jd Jc Qh Qs Qd Qc Th Ts Td"  # three sets, all eleven cards
MORTO_0 = "Ah As Kh Ks Qh Qs Jh Js Th Ts 5c"  # 15 + 15 + 8 * 10 + 5 = 115


def test_a_relancinho_stands_when_its_indirect_morto_is_voided() -> None:
    """RULES.md §7: "the +100 stands even if an indirect morto is later voided". Seat 0 lays
    the whole hand in its first turn and throws the last card (relancinho, morto taken
    indirectly); seat 1 lays its whole hand too, takes its morto directly, lays it and goes
    out before seat 0 plays again: seat 0's morto is voided, its +100 is not."""
    s = Scenario("biriba", hands={0: SETS_10_PLUS_1, 1: SETS_12},
                 mortos={0: MORTO_0, 1: MORTO_SETS}, stock="7c 6s")
    s.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s.morto(direct=False)
    s.draw("6s").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d").meld("6c 6d 6s")
    s.morto(direct=True)
    s.meld("Jh Js Jd Jc").meld("Qh Qs Qd Qc").meld("Th Ts Td").go_out()
    # Side 0: sevens 20, eights 30, nines 40 = 90; relancinho 100; the voided morto: -100, its
    # cards not counted. Side 1: 3s 4s 5s 6s 60, jacks 40, queens 40, tens 30 = 170;
    # relancinho 100 (its whole hand in one turn); going out 50 (biriba).
    side0, side1 = 90 + 100 - 100, 170 + 100 + 50
    refused(s, "score.mismatch", ("side 0", f"recomputed {side0}"), "end_hand", "went_out",
            (side0 - 100, side1))  # the +100 lost with the morto
    refused(s, "score.mismatch", ("side 0", f"recomputed {side0}"), "end_hand", "went_out",
            (side0 + 100 - 115, side1))  # the morto standing as seat 0's hand
    refused(s, "score.mismatch", ("side 1", f"recomputed {side1}"), "end_hand", "went_out",
            (side0, side1 - 100))  # no relancinho when the emptying takes the morto
    s.end_hand("went_out", (side0, side1))


def test_two_partners_each_earn_a_relancinho_scored_by_hand() -> None:
    """RULES.md §7: the relancinho "is per player, so two partners can each earn it in one
    hand". Seat 0 lays its whole hand (morto taken indirectly), seat 1 only draws and throws,
    seat 2 lays its whole hand and goes out: seat 0's morto stands (a partner went out) and
    counts as its hand."""
    s = Scenario("biriba", 4, hands={0: SETS_10_PLUS_1, 1: "Ac Ac Kc Kc Jc Jc Tc Tc 2c 2c 3c",
                                     2: SETS_12, 3: "Ad Ad Qd Qd Jd Jd Td Td 9d 8d 4c"},
                 mortos={0: MORTO_0}, stock="7c Qc 6s")
    s.draw("7c").meld("7h 7s 7d 7c").meld("8c 8d 8s").meld("9h 9s 9d 9c").discard("Kd")
    s.morto(direct=False)
    s.pass_turn()  # seat 1 draws the Qc and throws it
    s.draw("6s").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d").meld("6c 6d 6s").go_out()
    # Side 0: 90 + 60 on the table, two relancinhos 200, going out 50, the morto in hand -115.
    # Side 1: seat 1 holds 30 + 20 + 20 + 20 + 20 + 5 = 115, seat 3 30 + 20 + 20 + 20 + 10 +
    # 10 + 5 = 115; its morto not taken -100.
    side0, side1 = 150 + 200 + 50 - 115, -115 - 115 - 100
    refused(s, "score.mismatch", ("side 0", f"recomputed {side0}"), "end_hand", "went_out",
            (side0 - 100, side1))  # one relancinho for the side
    refused(s, "score.mismatch", ("side 0", f"recomputed {side0}"), "end_hand", "went_out",
            (150 + 200 + 50 - 100, side1))  # the morto voided by the partner's going out
    s.end_hand("went_out", (side0, side1))


@pytest.mark.parametrize("name", ["classic", "biriba", "bossa-nova"])
def test_a_relancinho_ends_the_hand_in_classic_only(name: str) -> None:
    """RULES.md §7: in classic the relancinho ends the hand, the going-out bonus on top; in
    biriba and bossa-nova the emptying takes the morto, the +100 is noted and the hand goes
    on."""
    s = Scenario(name, hands={0: "3h 4h 5h 6h 7h 8h 9h Kc Kd Ks Qc"}, stock="Th")
    s.draw("Th").meld("3h 4h 5h 6h 7h 8h 9h Th").meld("Kc Kd Ks").discard("Qc")
    if name == "classic":
        refused(s, "turn.hand_emptied", ("going out comes next",), "draw")
        s.go_out()
        # 3..7 25, 8 9 T 30, three kings 30; clean canastra 200, relancinho 100, out 50.
        side0, side1 = 85 + 200 + 100 + 50, -spec_points(name, s.hand(1))
        refused(s, "score.mismatch", ("side 0", f"recomputed {side0}"), "end_hand",
                "went_out", (side0 - 50, side1))
        refused(s, "score.mismatch", ("side 0", f"recomputed {side0}"), "end_hand",
                "went_out", (side0 - 100, side1))
        s.end_hand("went_out", (side0, side1))
        return
    s.morto(direct=False)
    assert s.state.relancinho == (1, 0)
    refused(s, "hand.not_over", ("nobody went out",), "end_hand", "went_out")
    refused(s, "turn.not_your_turn", ("seat 0",), "go_out", seat=0)
    s.pass_turn()
    assert s.state.phase == "draw" and s.turn == 0


# RULES.md §9's bonus table, copied by hand: going out, relancinho (None: the preset has none),
# morto not taken (None: no morto). The clean canastra is 200 in every column.
BONUS_ROWS = {
    "classic": (50, 100, None), "biriba": (50, 100, 100), "bossa-nova": (50, 100, 100),
    "thirteen": (100, None, 100), "thirteen-quick": (100, None, 100), "burraco": (100, None, 100),
    "mega": (100, None, 100), "burako": (100, None, 100),
}


@pytest.mark.parametrize("name", sorted(BONUS_ROWS))
def test_each_bonus_row_of_the_preset_column_is_refused_at_another_columns_value(
        name: str) -> None:
    """One hand per preset in which side 0 closes with a clean canastra (and a relancinho where
    the preset has one) and side 1 holds its hand without its morto: the score worked out from
    the preset's column is accepted; each bonus at the value another column gives is refused."""
    going_out, relancinho, morto = BONUS_ROWS[name]
    s, (side0, side1) = closing_hand(name)
    # tests/unit/closing_hands.py adds the bonuses up by hand; the rows must be those here.
    assert side0 - SIDE0_TABLE[name] == 200 + going_out + (relancinho or 0)
    assert side1 == -spec_points(name, s.hand(1)) - (morto or 0)
    other = {"going out": (side0 - going_out + (150 - going_out), side1),
             "relancinho": (side0 - 100 if relancinho else side0 + 100, side1),
             "clean as dirty": (side0 - 100, side1),
             "morto": (side0, side1 + 100 if morto else side1 - 100)}
    for why, scores in other.items():
        assert scores != (side0, side1), why
        refused(s, "score.mismatch", ("recomputed",), "end_hand", "went_out", scores)
    s.end_hand("went_out", (side0, side1))


# Side 0's cards on the table in tests/unit/closing_hands.py's hand, by RULES.md §9's card table.
SIDE0_TABLE = {
    "classic": 55 + 40, "biriba": 55 + 40 + 115, "bossa-nova": 55 + 40 + 115,
    "thirteen": 45 + 40 + 15 + 115, "thirteen-quick": 45 + 40 + 15 + 115,
    "burraco": 55 + 40 + 115, "mega": 55 + 40 + 115, "burako": 45 + 40 + 30 + 40 + 60,
}
