"""Score facts: each hand's recorded score against the recomputed one, line by line."""

from __future__ import annotations

import msgspec

from buraco_log.audit.findings import Finding
from buraco_log.events import (
    MatchEnded,
)
from buraco_log.rules import Rules
from buraco_log.scoring import explain_difference
from buraco_log.state import HandResult, SideScore
from buraco_log.timeline import (
    Timeline,
)


class ScoreLine(msgspec.Struct, frozen=True):
    """One item of a recomputed hand score (cards on the table, a canastra bonus, ...)."""

    item: str
    points: int


class SideCheck(msgspec.Struct, frozen=True):
    """One side's recorded hand score beside the recomputed one, line by line."""

    side: int
    recorded: int | None
    recomputed: int
    difference: int | None  # recorded - recomputed
    lines: tuple[ScoreLine, ...]  # the recomputed score line by line
    explanation: tuple[str, ...]  # filled when recorded and recomputed differ
    hint: str | None  # a line item the difference equals, when one does


class HandCheck(msgspec.Struct, frozen=True):
    """One hand's scores checked: each side's recorded score against the recomputed one."""

    hand: int
    end_seq: int
    reason: str
    went_out: int | None
    ok: bool
    sides: tuple[SideCheck, ...]


class Scoring(msgspec.Struct, frozen=True, omit_defaults=True):
    """The scoring section of a verdict: every hand checked, and the match totals."""

    hands: tuple[HandCheck, ...]
    totals_recorded: tuple[int, ...] | None
    totals_recomputed: tuple[int, ...]
    ok: bool
    # The seqs of the hand ends and the match end recorded after the first illegal event:
    # not recomputed, the table after it being unknown (omitted when none).
    after_illegal: tuple[int, ...] = ()


def score_lines(s: SideScore, tiles: bool = False) -> tuple[ScoreLine, ...]:
    """A side's hand score line by line, signed (RULES.md §9). ``tiles``: a table drawn in
    tiles (Burako) says tiles where the others say cards."""
    unit = "tiles" if tiles else "cards"
    lines = [ScoreLine(f"{unit} on the table", s.table_points)]
    for cls, n in sorted(s.canastras.items()):
        lines.append(ScoreLine(f"canastras {cls} x{n}", 0))
    lines.append(ScoreLine("canastra bonuses", s.canastra_bonus))
    lines.append(ScoreLine("going out", s.going_out))
    if s.relancinho:
        lines.append(ScoreLine("relancinho", s.relancinho))
    lines.append(ScoreLine(f"{unit} left in hand", -s.hand_penalty))
    lines.append(ScoreLine("morto not taken", -s.morto_penalty))
    return tuple(x for x in lines if not x.item.startswith("canastras "))


def _hint(diff: int, s: SideScore, rules: Rules | None,
          morto_in_hand: int | None = None) -> str | None:
    """Name the usual scorekeeping slips whose size the difference equals (at most three).
    ``morto_in_hand``: the card points its taker still held of a morto taken by a discard and
    not played (None: no such morto), for the slip of voiding it, or not, wrongly."""
    guesses: list[str] = []
    unit = "tiles" if rules is not None and rules.rendering == "tiles" else "cards"

    def bonus(item: str, actual: int, nominal: int) -> None:
        if actual and diff == actual:
            guesses.append(f"the {item} ({actual}) counted twice")
        elif actual and diff == -actual:
            guesses.append(f"the {item} ({actual}) left out")
        elif not actual and nominal and diff == nominal:
            guesses.append(f"a {item} ({nominal}) counted though not earned")

    def penalty(item: str, actual: int, nominal: int) -> None:
        if actual and diff == actual:
            guesses.append(f"the {item} ({actual}) not subtracted")
        elif actual and diff == 2 * actual:
            guesses.append(f"the {item} ({actual}) added instead of subtracted")
        elif actual and diff == -actual:
            guesses.append(f"the {item} ({actual}) subtracted twice")
        elif not actual and nominal and diff == -nominal:
            guesses.append(f"a {item} ({nominal}) charged though not due")

    b = rules.bonuses if rules is not None else None
    if b is not None and morto_in_hand is not None:
        guesses += _voided_morto_hint(diff, s, morto_in_hand, b.morto_not_taken, unit)
    bonus("going-out bonus", s.going_out, b.going_out if b else 0)
    if b is not None and rules is not None and rules.relancinho:
        guesses += _relancinho_hint(diff, s.relancinho, b.relancinho)
    penalty(f"{unit} left in hand", s.hand_penalty, 0)
    penalty("morto penalty", s.morto_penalty, b.morto_not_taken if b and rules and rules.morto
            else 0)
    bonus(f"{unit} on the table", s.table_points, 0)
    if b is not None:
        for cls in ("clean", "dirty", "semi_clean", "royal", "ace_to_ace"):
            size = int(getattr(b, cls))
            name = cls.replace("_", "-")
            if size and diff == size:
                guesses.append(f"one {name} canastra bonus ({size}) too many")
            elif size and diff == -size and s.canastras.get(cls):
                guesses.append(f"one {name} canastra bonus ({size}) missing")
    if not guesses:
        return None
    return "the difference matches " + "; or ".join(guesses[:3])


def _voided_morto_hint(diff: int, s: SideScore, held: int, penalty: int, unit: str
                      ) -> list[str]:
    """A morto taken by a discard and not yet played is voided only when an opponent goes out
    (RULES.md §7): the recorder may have let it stand, or voided it when it stands. Either way
    the difference is the penalty against the card points its taker still holds."""
    if s.morto_penalty and diff == s.morto_penalty - held:
        return [f"the voided morto scored as standing (its {held} points as {unit} left in "
                f"hand, no morto penalty)"]
    if not s.morto_penalty and penalty and diff == held - penalty:
        return [f"the morto scored as voided though it stands (a {penalty} penalty instead of "
                f"its {held} points as {unit} left in hand)"]
    return []


def _relancinho_hint(diff: int, actual: int, size: int) -> list[str]:
    """The relancinho's slips (RULES.md §7): it is per player, so a side may hold two (200),
    and one of them may be counted twice or left out, as well as the whole."""
    if actual and diff == actual:
        return [f"the relancinho bonus ({actual}) counted twice"]
    if actual and diff == -actual:
        return [f"the relancinho bonus ({actual}) left out"]
    if size and diff == size:
        return [f"one relancinho bonus ({size}) too many" if actual
                else f"a relancinho bonus ({size}) counted though not earned"]
    if size and diff == -size and actual > size:
        return [f"one relancinho bonus ({size}) left out"]
    return []


def _morto_in_hand(tl: Timeline, r: HandResult, side: int) -> int | None:
    """The card points still held by the taker of ``side``'s morto, taken by a discard and
    not played when the hand ended (the morto an opponent's going out voids); None when the
    side's morto is not such a one."""
    rules = tl.rules
    if rules is None or not rules.morto or r.morto_taken_at[side] is None:
        return None
    end = tl.state_at(r.end_seq)  # the table as the hand ended: the taker's hand is there
    seat = end.morto_pending[side] if side < len(end.morto_pending) else None
    if seat is None:
        return None
    points = rules.point_table()
    return sum(points[c] for c in end.hands[seat])


def _scoring(tl: Timeline) -> tuple[Scoring, list[Finding]]:
    state = tl.final
    findings: list[Finding] = []
    hands = []
    tiles = tl.style == "tiles"  # Burako's score lines say tiles
    for r in state.results:
        sides = []
        for s in r.scores:
            rec = r.recorded[s.side] if r.recorded is not None and s.side < len(r.recorded) \
                else None
            diff = None if rec is None else rec - s.total
            bad = diff is not None and diff != 0
            sides.append(SideCheck(
                side=s.side, recorded=rec, recomputed=s.total, difference=diff,
                lines=score_lines(s, tiles),
                explanation=tuple(explain_difference(rec, s, tiles)) if bad and rec is not None
                else (),
                hint=_hint(diff, s, state.rules, _morto_in_hand(tl, r, s.side))
                if bad and diff is not None else None,
            ))
            if bad:
                findings.append(Finding(
                    "scoring", "score.mismatch",
                    f"hand {r.hand}, side {s.side}: recorded {rec}, recomputed {s.total} "
                    f"(difference {diff:+d})", seq=r.end_seq))
        if r.recorded is not None and len(r.recorded) != len(r.scores):
            findings.append(Finding(
                "scoring", "score.mismatch",
                f"hand {r.hand}: {len(r.recorded)} scores recorded for {len(r.scores)} sides",
                seq=r.end_seq))
        hands.append(HandCheck(
            hand=r.hand, end_seq=r.end_seq, reason=r.reason, went_out=r.went_out,
            ok=all(x.difference in (None, 0) for x in sides)
            and (r.recorded is None or len(r.recorded) == len(r.scores)),
            sides=tuple(sides),
        ))
    end = next((e for e in tl.events if isinstance(e, MatchEnded)), None)
    recorded = end.totals if end is not None else None
    if recorded is not None and recorded != state.totals:
        said = end.winner if end is not None else None
        also = (f"; the recorded winner, side {said}, is wrong too: side {state.winner} won"
                if said is not None and state.winner is not None and said != state.winner
                else "")
        findings.append(Finding(
            "scoring", "score.mismatch",
            f"match totals: recorded {list(recorded)}, recomputed {list(state.totals)}{also}",
            seq=end.seq if end is not None else None))
    return Scoring(hands=tuple(hands), totals_recorded=recorded,
                   totals_recomputed=state.totals, ok=not findings), findings
