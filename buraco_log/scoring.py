"""Hand and match scoring (RULES.md §9–10), from the table at the end of a hand."""

from __future__ import annotations

from collections.abc import Sequence

from buraco_log.melds import CANASTRA_CLASSES
from buraco_log.rules import Rules
from buraco_log.state import Meld, SideScore


def score_hand(
    rules: Rules,
    sides: Sequence[int],
    n_sides: int,
    hands: Sequence[Sequence[int]],
    melds: Sequence[Sequence[Meld]],
    morto_taken: Sequence[bool],
    morto_pending: Sequence[int | None],
    went_out: int | None,
    relancinho: Sequence[int],
) -> tuple[SideScore, ...]:
    """Score every side. A morto taken indirectly whose taker has not played it yet is voided
    when an opponent went out (``morto_voided_by = "opponent_out"``, RULES.md §7), or when the
    hand ended in any way (``"any_end"``, the reading of logs made before that knob): the side
    pays the penalty and the untouched morto cards are not counted as hand cards. A morto that
    stands is the taker's hand: its cards count as cards left in hand.
    """
    points = rules.point_table()
    bonuses = rules.bonuses
    any_end = rules.morto_voiding() == "any_end"
    out = []
    c: int
    for side in range(n_sides):
        table = 0
        bonus = 0
        counts: dict[str, int] = {}
        for m in melds[side]:
            for c in m.cards:  # plain loops: tight once compiled, as fast as map() plain
                table += points[c]
            cls = m.canastra
            if cls is not None:
                counts[cls] = counts.get(cls, 0) + 1
                bonus += getattr(bonuses, cls)
        went = went_out is not None and sides[went_out] == side
        going_out = bonuses.going_out if went else 0
        relancinho_bonus = relancinho[side] * bonuses.relancinho if rules.relancinho else 0
        pending = morto_pending[side]
        if pending is not None and not (
            any_end or (went_out is not None and sides[went_out] != side)
        ):
            pending = None  # a partner went out, or the stock ran out: the morto stands
        in_hand = 0
        for seat, h in enumerate(hands):
            if sides[seat] == side and seat != pending:
                for c in h:
                    in_hand += points[c]
        morto_penalty = 0
        if rules.morto and (not morto_taken[side] or pending is not None):
            morto_penalty = bonuses.morto_not_taken
        total = table + bonus + going_out + relancinho_bonus - in_hand - morto_penalty
        out.append(
            SideScore(
                side=side,
                table_points=table,
                # in the fixed order of the classes, as readers of the scores expect
                canastras={k: counts[k] for k in CANASTRA_CLASSES if k in counts},
                canastra_bonus=bonus,
                going_out=going_out,
                relancinho=relancinho_bonus,
                hand_penalty=in_hand,
                morto_penalty=morto_penalty,
                total=total,
            )
        )
    return tuple(out)


def match_decided(rules: Rules, totals: Sequence[int]) -> int | None:
    """The winning side once some side reached the target with a unique highest total."""
    best = max(totals)
    if best < rules.target_score or list(totals).count(best) > 1:
        return None
    return list(totals).index(best)


def explain_difference(recorded: int, computed: SideScore, tiles: bool = False) -> list[str]:
    """The recomputed score line by line, for a referee comparing it with the recorded one.
    ``tiles``: a table drawn in tiles (Burako) says tiles where the others say cards."""
    unit = "tiles" if tiles else "cards"
    kinds = ", ".join(f"{k.replace('_', '-')} {n}" for k, n in computed.canastras.items())

    def line(label: str, value: int) -> str:
        return f"{label:<28}{value:+d}" if value else f"{label:<28}0"

    lines = [
        line(f"{unit} on the table", computed.table_points),
        line(f"canastras ({kinds or 'none'})", computed.canastra_bonus),
        line("going out", computed.going_out),
    ]
    if computed.relancinho:
        lines.append(line("relancinho", computed.relancinho))
    lines += [
        line(f"{unit} left in hand", -computed.hand_penalty),
        line("morto not taken", -computed.morto_penalty),
        f"{'recomputed':<28}{computed.total}",
        f"{'recorded':<28}{recorded}  (difference {recorded - computed.total:+d})",
    ]
    return lines
