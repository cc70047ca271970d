"""The audit library: integrity, provenance, legality and scoring verdicts; show, diff, explain."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit, log
from buraco_log.errors import BuracoLogError
from buraco_log.events import AnyEvent, HandStarted, MatchEnded
from buraco_log.reducer import replay
from buraco_log.ruleids import RULES
from buraco_log.timeline import Timeline
from tests import brokenlogs as bl


@pytest.fixture(scope="module")
def clean() -> list[AnyEvent]:
    return bl.fair_match("thirteen-quick", 2, 1)


@pytest.fixture(scope="module")
def unseeded() -> list[AnyEvent]:
    return bl.match("biriba", 4, 1, max_hands=2)


def test_a_legal_sealed_complete_match_has_a_clean_verdict(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    v = audit.audit_log(bl.write(tmp_path / "m.log", clean))
    assert v.ok and v.findings == ()
    assert v.integrity.status == "sealed" and v.integrity.events == len(clean)
    assert v.provenance.status == "committed" and v.provenance.revealed
    assert v.legality.complete and v.legality.first_illegal is None
    assert all(h.ok for h in v.scoring.hands)
    assert v.scoring.totals_recomputed == replay(clean).totals


def test_an_unsealed_log_is_reported_as_unsealed_without_a_finding(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    v = audit.audit_log(bl.write(tmp_path / "m.log", clean, sealed=False))
    assert v.integrity.status == "unsealed" and v.ok


def test_an_illegal_move_is_reported_at_its_exact_seq_and_rule(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    events, seq = bl.with_illegal_discard(clean)
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    il = v.legality.first_illegal
    assert il is not None
    assert (il.seq, il.rule, il.tag) == (seq, "discard.card_not_in_hand", "dc")
    assert il.seat == events[seq].seat  # type: ignore[union-attr]
    assert il.cards == (audit.to_dict(events[seq])["card"],)
    assert il.description == RULES["discard.card_not_in_hand"]
    assert il.before.seq == seq - 1
    assert [f.rule for f in v.findings] == ["discard.card_not_in_hand"]
    assert v.findings[0].seq == seq and v.legality.events_checked == seq


def test_a_wrong_recorded_score_is_reported_with_the_exact_difference(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    events, seq = bl.with_wrong_score(clean, 35)
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    assert [(f.section, f.rule, f.seq) for f in v.findings] == [("scoring", "score.mismatch", seq)]
    hand = next(h for h in v.scoring.hands if h.end_seq == seq)
    side = hand.sides[0]
    assert side.difference == 35 and side.recorded == side.recomputed + 35
    assert sum(x.points for x in side.lines) == side.recomputed
    assert side.explanation[-1].endswith("(difference +35)")
    assert v.legality.first_illegal is None  # a wrong score is not an illegal move
    assert "difference +35" in v.findings[0].message


def test_a_difference_the_size_of_a_line_item_is_named(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    events, seq = bl.with_wrong_score(clean, 100)
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    side = next(h for h in v.scoring.hands if h.end_seq == seq).sides[0]
    assert side.hint is not None and "(100)" in side.hint


def test_a_tampered_record_is_reported_at_that_record_and_offset(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    path = bl.write(tmp_path / "m.log", clean, segment=16)
    offset = bl.tamper(path, 4)
    v = audit.audit_log(path)
    i = v.integrity
    assert (i.status, i.kind, i.record, i.offset, i.seq) == ("broken", "chain", 4, offset, 64)
    assert [(f.rule, f.offset) for f in v.findings] == [("log.chain", offset)]
    assert v.legality.events_checked == 64  # the intact events are still checked


def test_a_torn_tail_is_reported_at_its_offset(tmp_path: Path, clean: list[AnyEvent]) -> None:
    path = bl.write(tmp_path / "m.log", clean, segment=16)
    offset = bl.tear(path)
    v = audit.audit_log(path)
    assert (v.integrity.status, v.integrity.offset) == ("torn", offset)
    assert [f.rule for f in v.findings] == ["log.torn"]


def test_a_forged_deal_is_a_provenance_finding(tmp_path: Path, clean: list[AnyEvent]) -> None:
    events = list(clean)
    deal = events[1]
    assert isinstance(deal, HandStarted)
    stock = (*deal.stock[:-2], deal.stock[-1], deal.stock[-2])
    events[1] = msgspec.structs.replace(deal, stock=stock)
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    assert [(f.section, f.rule, f.seq) for f in v.provenance.findings] == [
        ("provenance", "deal.mismatch", 1)
    ]


def test_a_wrong_revealed_seed_is_a_provenance_finding(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    end = clean[-1]
    assert isinstance(end, MatchEnded)
    events = [*clean[:-1], msgspec.structs.replace(end, server_seed="not it")]
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    assert [f.rule for f in v.findings] == ["deal.seed_mismatch"]


def test_an_uncommitted_match_has_no_provenance_to_check(
    tmp_path: Path, unseeded: list[AnyEvent]
) -> None:
    v = audit.audit_log(bl.write(tmp_path / "m.log", unseeded))
    assert v.provenance.status == "none" and v.ok
    assert not v.legality.complete


def test_a_missing_or_garbage_file_is_a_finding_not_an_exception(tmp_path: Path) -> None:
    v = audit.audit_log(tmp_path / "nope.log")
    assert v.integrity.status == "unreadable" and [f.rule for f in v.findings] == ["log.unreadable"]
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"this is not a log at all")
    v = audit.audit_log(junk)
    assert v.integrity.status == "broken" and v.findings[0].rule == "log.header"


def test_an_empty_log_is_not_started_and_no_finding(tmp_path: Path) -> None:
    v = audit.audit_log(bl.write(tmp_path / "m.log", []))
    assert v.ok and v.not_started and v.findings == ()


def test_a_json_lines_log_is_audited_like_the_binary_one(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    from buraco_log.jsonl import binary_to_jsonl

    src = bl.write(tmp_path / "m.log", clean)
    binary_to_jsonl(src, tmp_path / "m.jsonl")
    a, b = audit.audit_log(src), audit.audit_log(tmp_path / "m.jsonl")
    assert b.ok and b.integrity.format == "jsonl"
    assert a.integrity.head == b.integrity.head
    assert a.scoring == b.scoring and a.legality == b.legality


def test_the_verdict_round_trips_through_json(tmp_path: Path, clean: list[AnyEvent]) -> None:
    events, _ = bl.with_illegal_discard(clean)
    v = audit.audit_log(bl.write(tmp_path / "m.log", events))
    again = msgspec.json.decode(msgspec.json.encode(v), type=audit.Verdict)
    assert again == v


def test_auditing_in_two_processes_gives_the_same_verdicts(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    paths = []
    for i in range(6):
        events = bl.with_wrong_score(clean, i + 1)[0] if i % 2 else clean
        paths.append(str(bl.write(tmp_path / f"m{i}.log", events)))
    seen: list[str] = []
    serial = audit.audit_many(paths)
    parallel = audit.audit_many(paths, workers=2, on_done=lambda v: seen.append(v.path))
    assert serial == parallel and sorted(seen) == sorted(paths)
    assert [v.ok for v in serial] == [True, False] * 3


def test_find_logs_walks_directories_and_keeps_only_logs(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    (tmp_path / "sub").mkdir()
    bl.write(tmp_path / "sub" / "b.bin", clean)
    bl.write(tmp_path / "a.log", clean)
    (tmp_path / "notes.txt").write_text("not a log")
    assert audit.find_logs([tmp_path]) == [str(tmp_path / "a.log"), str(tmp_path / "sub" / "b.bin")]


# -- show, diff, explain, timeline


def test_summarize_gives_each_hand_and_the_cumulative_totals(clean: list[AnyEvent]) -> None:
    s = audit.summarize(clean)
    final = replay(clean)
    assert s.complete and s.winner == final.winner
    assert s.totals == final.totals == s.hands[-1].cumulative
    assert s.overrides == {} and s.preset == "thirteen-quick"
    assert sum(s.went_out.values()) == sum(1 for h in s.hands if h.reason == "went_out")


def test_house_rule_overrides_are_listed(unseeded: list[AnyEvent]) -> None:
    from buraco_log.events import MatchStarted
    from buraco_log.rules import derive

    start = unseeded[0]
    assert isinstance(start, MatchStarted)
    house = msgspec.structs.replace(start, rules=derive("biriba", target_score=2000))
    # Half the new target is the new vulnerability threshold (RULES.md §10), listed too.
    assert audit.summarize([house]).overrides == {"target_score": 2000, "vulnerable_at": 1000}


def test_diff_finds_the_first_divergence_and_prefixes(
    tmp_path: Path, clean: list[AnyEvent]
) -> None:
    a = bl.write(tmp_path / "a.log", clean)
    events, seq = bl.with_illegal_discard(clean)
    b = bl.write(tmp_path / "b.log", events)
    c = bl.write(tmp_path / "c.log", clean[:100])
    same = audit.diff_logs(a, a)
    assert same.identical and same.heads_equal and same.diverge_seq is None
    d = audit.diff_logs(a, b)
    assert d.diverge_seq == seq and not d.heads_equal and d.prefix is None
    assert d.differences and d.differences[0].startswith("card: ")
    p = audit.diff_logs(a, c)
    assert (p.prefix, p.diverge_seq, p.events_b) == ("b", 100, 100)
    assert p.head_b == log.head_digest(clean[:100])


def test_explain_names_the_rule_and_the_facts(tmp_path: Path, clean: list[AnyEvent]) -> None:
    events, seq = bl.with_illegal_discard(clean)
    e = audit.explain(bl.write(tmp_path / "m.log", events), seq)
    assert not e.legal and e.rule == "discard.card_not_in_hand"
    assert e.description == RULES["discard.card_not_in_hand"]
    assert any("holds" in f for f in e.facts)
    ok = audit.explain_event(clean, 5)
    assert ok.legal and ok.rule is None


def test_explaining_past_an_illegal_event_explains_that_event(clean: list[AnyEvent]) -> None:
    events, seq = bl.with_illegal_discard(clean)
    e = audit.explain_event(events, seq + 5)
    assert e.seq == seq and e.note is not None


def test_a_jump_from_a_snapshot_equals_a_full_replay(clean: list[AnyEvent]) -> None:
    tl = Timeline(clean, snapshot_every=16)
    for seq in (0, 1, 15, 16, 17, 100, len(clean) - 2, len(clean) - 1):
        assert tl.state_at(seq) == replay(clean[: seq + 1])


def test_hand_and_turn_positions(clean: list[AnyEvent]) -> None:
    tl = Timeline(clean)
    deal_seq = tl.seq_of(1)
    assert isinstance(clean[deal_seq], HandStarted)
    before_turn_2 = tl.state_at(tl.seq_of(1, 2))
    assert before_turn_2.phase == "draw" and before_turn_2.turns == 2
    with pytest.raises(BuracoLogError):
        tl.seq_of(99)


def test_a_seat_view_masks_the_other_hands(clean: list[AnyEvent]) -> None:
    v = Timeline(clean).view(10, seat=1)
    assert v.seats[0].cards is None and v.seats[1].cards is not None
    assert v.seats[0].count > 0


def test_burako_tiles_are_rendered_as_tiles() -> None:
    events = bl.fair_match("burako", 2, 1)
    hand = Timeline(events).view(5).seats[0].cards
    assert hand and all(c == "JK" or c[-1] in "ybrk" for c in hand)


def test_the_audit_library_imports_no_edge_library() -> None:
    code = (
        "import sys, buraco_log.audit, buraco_log.timeline, buraco_log.ruleids; "
        "print(sorted(m for m in ('duckdb', 'pyarrow', 'typer', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_damaged_json_lines_log_is_broken_at_that_line(tmp_path: Path,
                                                         clean: list[AnyEvent]) -> None:
    from buraco_log.jsonl import binary_to_jsonl

    binary_to_jsonl(bl.write(tmp_path / "m.log", clean), tmp_path / "m.jsonl")
    lines = (tmp_path / "m.jsonl").read_text().splitlines(keepends=True)
    lines[9] = "{not json\n"
    (tmp_path / "m.jsonl").write_text("".join(lines))
    v = audit.audit_log(tmp_path / "m.jsonl")
    assert (v.integrity.status, v.integrity.format, v.integrity.record) == ("broken", "jsonl", 10)
    assert "line 10" in v.findings[0].message


def test_find_logs_keeps_a_blog_file_whose_header_is_damaged(tmp_path: Path,
                                                            clean: list[AnyEvent]) -> None:
    bl.write(tmp_path / "a.blog", clean)
    (tmp_path / "b.blog").write_bytes(b"garbage, no header")
    (tmp_path / "c.bin").write_bytes(b"garbage, no header")  # neither name nor magic: not a log
    assert audit.find_logs([tmp_path]) == [str(tmp_path / "a.blog"), str(tmp_path / "b.blog")]
    assert not audit.audit_log(tmp_path / "b.blog").ok


def test_find_logs_skips_the_backups_repair_leaves(tmp_path: Path,
                                                   clean: list[AnyEvent]) -> None:
    bl.write(tmp_path / "a.log", clean)
    bl.write(tmp_path / "a.log.bak", clean)
    bl.write(tmp_path / "a.log.bak.1", clean)
    assert audit.find_logs([tmp_path]) == [str(tmp_path / "a.log")]


def test_a_defect_of_the_audit_on_one_log_does_not_stop_the_batch(
        tmp_path: Path, clean: list[AnyEvent], monkeypatch: pytest.MonkeyPatch) -> None:
    good = str(bl.write(tmp_path / "a.log", clean))
    real = audit.audit_events

    def flaky(events: list[AnyEvent], integrity: audit.Integrity, path: str = "",
              **flags: bool) -> audit.Verdict:
        if path.endswith("b.log"):
            raise RuntimeError("boom")
        return real(events, integrity, path, **flags)

    monkeypatch.setattr(audit, "audit_events", flaky)
    bad = str(bl.write(tmp_path / "b.log", clean))
    verdicts = audit.audit_many([good, bad])
    assert verdicts[0].ok
    assert [f.rule for f in verdicts[1].findings] == ["audit.error"]
    assert "RuntimeError: boom" in verdicts[1].findings[0].message


def test_explaining_a_bad_meld_shows_why_the_cards_are_no_meld(clean: list[AnyEvent]) -> None:
    from buraco_log.cards import RANK, SUIT
    from buraco_log.events import MeldLaid

    i, ev = next((i, e) for i, e in enumerate(clean) if isinstance(e, MeldLaid))
    hand = Timeline(clean).state_at(ev.seq - 1).hands[ev.seat]
    naturals = [c for c in hand if RANK[c] > 2]
    picked: list[int] = []
    for c in naturals:  # three naturals, no two of one rank or one suit: neither set nor run
        if all(RANK[c] != RANK[p] and SUIT[c] != SUIT[p] for p in picked):
            picked.append(c)
    if len(picked) < 3:
        pytest.skip("the hand holds no three cards of distinct ranks and suits")
    events = [*clean[:i], msgspec.structs.replace(ev, cards=tuple(picked[:3]))]
    e = audit.explain_event(events, ev.seq)
    assert e.rule == "meld.not_a_meld"
    assert any("do not form a meld [meld.not_a_meld]" in f for f in e.facts)


def test_requiring_a_commitment_makes_unbacked_deals_findings(tmp_path: Path,
                                                              unseeded: list[AnyEvent]) -> None:
    path = str(bl.write(tmp_path / "m.log", unseeded))
    assert audit.audit_log(path).ok
    strict = audit.audit_log(path, require_commitment=True)
    assert [f.rule for f in strict.findings] == ["deal.commitment_missing"]
    assert audit.audit_many([path, path], workers=2, require_commitment=True) == [strict] * 2
