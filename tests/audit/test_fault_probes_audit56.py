"""A log with several faults at once, as a referee meets a really tampered one: an illegal move
and a wrong hand score; a forged deal and the illegal move it makes; a duplicated event and a
wrong winner; a published head of an earlier event and an edit after it; a bad signature and a
wrong score; a torn tail after a score mismatch. For each: the verdict names each fault once,
says which follows from which, does not call "agree" what it did not check, lists its findings
in one order in the text and the JSON, and is the same for the binary and the JSON Lines form.

The default run works on stored simulated matches in process (well under a second); every
preset through the real command, and the time of a 20,000-event log, are slow-marked."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit, jsonl, log
from buraco_log.events import (
    AnyEvent,
    CardDiscarded,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchStarted,
)
from buraco_log.reducer import Replayer
from buraco_log.signing.keys import Keyring, Signer
from cli.dispute_cmd import _with_published_head, render_explanation, render_verdict
from tests.cli.probes import ROOT, cli_batch

R = msgspec.structs.replace
SIM = ROOT / "examples" / "sim"
PRESETS = ("classic", "biriba", "bossa-nova", "burako", "burraco", "mega", "thirteen",
           "thirteen-quick")


def _stored(preset: str = "thirteen-quick", players: int = 2) -> list[AnyEvent]:
    events, integrity = audit.read_log(SIM / f"{preset}-{players}p-000000.blog")
    assert integrity.status == "sealed"
    return list(events)


def _illegal_discard(events: list[AnyEvent], after: int = 8) -> tuple[list[AnyEvent], int]:
    """The first discard after seq ``after`` names a card another seat holds."""
    rep = Replayer()
    out = list(events)
    for i, ev in enumerate(events):
        if isinstance(ev, CardDiscarded) and ev.seq > after:
            hands = rep.state().hands
            card = next(c for h in hands for c in h if c not in hands[ev.seat])
            out[i] = R(ev, card=card)
            return out, ev.seq
        rep.step(ev)
    raise AssertionError("no discard to break")


def _hand_ends(events: Sequence[AnyEvent]) -> list[int]:
    return [i for i, e in enumerate(events) if isinstance(e, HandEnded)]


def _wrong_score(events: list[AnyEvent], k: int = 0, delta: int = 100) -> int:
    """Hand ``k``'s recorded scores each off by ``delta`` (in place); its seq."""
    i = _hand_ends(events)[k]
    ev = events[i]
    assert isinstance(ev, HandEnded) and ev.scores is not None
    events[i] = R(ev, scores=tuple(s + delta for s in ev.scores))
    return ev.seq


def _forged_deal(events: list[AnyEvent]) -> tuple[list[AnyEvent], int]:
    """Hand 0's deal with a card seat 0 discards swapped for one of seat 1's: the moves were
    played with the cards the seeds dealt, the record of the deal changed after."""
    out = list(events)
    i = next(i for i, e in enumerate(out) if isinstance(e, HandStarted))
    deal = out[i]
    assert isinstance(deal, HandStarted)
    mine, theirs = list(deal.hands[0]), list(deal.hands[1])
    played = next(e.card for e in out[i:] if isinstance(e, CardDiscarded) and e.seat == 0
                  and mine.count(e.card) == 1)
    other = next(c for c in theirs if c not in mine)
    mine[mine.index(played)], theirs[theirs.index(other)] = other, played
    out[i] = R(deal, hands=(tuple(mine), tuple(theirs), *deal.hands[2:]))
    return out, deal.seq


def _both(tmp: Path, name: str, events: list[AnyEvent], *, sealed: bool = True
          ) -> tuple[Path, Path]:
    """The log as binary (records of 16 events) and as JSON Lines."""
    blog = tmp / f"{name}.blog"
    blog.write_bytes(log.encode_log(events, sealed=sealed, batch_events=16))
    lines = tmp / f"{name}.jsonl"
    with open(lines, "w", encoding="utf-8") as f:
        jsonl.dump(iter(events), f, sealed=sealed)
    return blog, lines


def _found(v: audit.Verdict) -> list[tuple[str, str, int | None]]:
    return [(f.section, f.rule, f.seq) for f in v.findings]


_RULE = re.compile(r"\[([a-z_]+\.[a-z_.]+)\]")


def _text_rules(lines: Sequence[str]) -> list[str]:
    """The rules of the findings, in the order the text report prints them (a note, a
    ``follows`` line and the table are words about them, not findings)."""
    out = []
    for line in lines:
        if line.startswith(("  note", "    follows", "      ")):
            continue
        out += _RULE.findall(line)
    return out


def _same_in_both_forms(blog: Path, lines: Path, **kw: object) -> audit.Verdict:
    a = audit.audit_log(blog, **kw)  # type: ignore[arg-type]
    b = audit.audit_log(lines, **kw)  # type: ignore[arg-type]
    assert _found(a) == _found(b)
    assert a.scoring == b.scoring and a.legality.first_illegal == b.legality.first_illegal
    assert [n for n in a.notes if not n.startswith("integrity")] == [
        n for n in b.notes if not n.startswith("integrity")]
    return a


def test_scores_recorded_after_an_illegal_move_are_said_not_checked_not_said_to_agree(
        tmp_path: Path) -> None:
    events, seq = _illegal_discard(_stored())
    wrong = _wrong_score(events, 0)  # a hand end past the illegal move, and every other one
    assert wrong > seq
    v = _same_in_both_forms(*_both(tmp_path, "m", events))
    after = [e.seq for e in events if isinstance(e, HandEnded | MatchEnded) and e.seq > seq]
    # it said "0 hands; recorded scores agree with the recomputed ones", and scoring ok
    assert v.scoring.after_illegal == tuple(after) and not v.scoring.ok
    assert any(f"after the first illegal event, at seq {seq}, were not recomputed" in n
               for n in v.notes)
    text = list(render_verdict(v))
    scoring = next(line for line in text if line.startswith("  scoring"))
    assert "agree" not in scoring and f"{len(after)} hand or match ends" in scoring
    # the hand's score is wrong and the totals were left: the sheet does not add up, which
    # needs no table, so it is still found (at the match end, where the totals are)
    end = events[-1]
    assert isinstance(end, MatchEnded)
    assert ("scoring", "score.mismatch", end.seq) in _found(v)
    assert _found(v)[0] == ("legality", "discard.card_not_in_hand", seq)


def test_a_wrong_score_before_the_illegal_move_is_not_found_again_in_the_totals(
        tmp_path: Path) -> None:
    """A hand's score is recomputed up to the illegal move: wrong, it is its own finding, and
    the totals (left as they were) are added from the recomputed score, not found wrong for
    it; a wrong score recorded after the move shows in the totals."""
    events, seq = _illegal_discard(_stored(), after=100)
    first = _wrong_score(events, 0)  # seq 86, before the move
    assert first < seq
    v = audit.audit_log(_both(tmp_path, "before", events)[0])
    end = events[-1].seq
    assert [f[1:] for f in _found(v)] == [
        ("discard.card_not_in_hand", seq), ("score.mismatch", first), ("score.mismatch", first)]
    last = _wrong_score(events, 1, delta=30)  # after the move
    assert last > seq
    v = audit.audit_log(_both(tmp_path, "both", events)[0])
    sheet = [f for f in v.findings if f.seq == end]
    assert [f.rule for f in sheet] == ["score.mismatch"]
    recorded = events[-1].totals  # type: ignore[union-attr]
    assert f"add up to {[t + 30 for t in recorded]}" in sheet[0].message


def test_an_illegal_move_that_follows_from_a_forged_deal_names_the_deal_as_its_cause(
        tmp_path: Path) -> None:
    events, deal = _forged_deal(_stored())
    v = _same_in_both_forms(*_both(tmp_path, "forged", events))
    il = v.legality.first_illegal
    assert il is not None and il.seq > deal
    # it was two causes side by side; the illegal move is the deal's consequence
    assert il.follows_from == deal
    assert _found(v)[:2] == [("provenance", "deal.mismatch", deal),
                             ("legality", il.rule, il.seq)]
    assert f"follows from the changed deal at seq {deal}" in v.findings[1].message
    assert any(line.startswith("    follows   from the changed deal at seq "
                               f"{deal} [deal.mismatch]") for line in render_verdict(v))
    # explain at the illegal seq says the same
    why = audit.explain(tmp_path / "forged.blog", il.seq)
    assert not why.legal and [(f.rule, f.seq) for f in why.findings] == [
        ("deal.mismatch", deal)]
    assert any("follows from the changed deal" in line for line in render_explanation(why))


def test_an_illegal_move_not_explained_by_the_deal_is_not_tied_to_it(tmp_path: Path) -> None:
    events, deal = _forged_deal(_stored())
    first = audit.audit_log(_both(tmp_path, "one", events)[0])
    il = first.legality.first_illegal
    assert il is not None and il.follows_from == deal
    # the same event by a seat whose turn it is not: illegal whatever the deal
    i = next(i for i, e in enumerate(events) if e.seq == il.seq)
    players = len(events[0].players)  # type: ignore[union-attr]
    events[i] = R(events[i], seat=(events[i].seat + 1) % players)  # type: ignore[union-attr]
    v = audit.audit_log(_both(tmp_path, "two", events)[0])
    il = v.legality.first_illegal
    assert il is not None and il.seq == events[i].seq and il.follows_from is None
    assert ("provenance", "deal.mismatch", deal) in _found(v)
    assert "follows from" not in v.findings[1].message


def test_a_duplicated_event_does_not_hide_a_wrong_winner(tmp_path: Path) -> None:
    events = _stored()
    k = next(i for i, e in enumerate(events) if e.seq > 10 and type(e).__name__ == "CardDrawn")
    events = [R(e, seq=i) for i, e in enumerate([*events[:k + 1], events[k], *events[k + 1:]])]
    end = events[-1]
    assert isinstance(end, MatchEnded) and end.winner is not None
    events[-1] = R(end, winner=1 - end.winner)
    v = _same_in_both_forms(*_both(tmp_path, "dup", events))
    assert _found(v)[0] == ("legality", "turn.already_drew", k + 1)
    # the winner was not checked past the illegal event; the recorded totals decide it
    assert ("legality", "match.wrong_winner", end.seq) in _found(v)
    assert any(f"seq {end.seq} [match.wrong_winner]" in line for line in render_verdict(v))


def test_the_text_and_the_json_list_the_findings_in_one_order(tmp_path: Path) -> None:
    """A published head changed, a bad signature, an illegal move and a wrong score: the
    JSON listed scoring before signing and the head's finding last, where the text prints it
    first: a program and a referee named different first findings."""
    signer, other = Signer.generate(), Signer.generate()
    events = _stored()
    events[0] = R(events[0], key_id=signer.key_id)
    published = log.head_digest(events)
    events, _ = _illegal_discard(events, after=100)
    _wrong_score(events, 0)
    path = tmp_path / "signed.blog"
    start = events[0]
    assert isinstance(start, MatchStarted)
    with log.Writer(path, validate=False, batched=True, batch_events=50) as w:
        for e in events:
            w.append(e)
            if e.seq % 50 == 49:
                w.flush()
                by = other if e.seq == 99 else signer
                w.put_signature(by.sign_head(start.match_id, e.seq, bytes.fromhex(w.head)))
    options = audit.SigningOptions(Keyring([signer.public()]))
    v = _with_published_head(audit.audit_log(path, signing=options), published)
    rules = [f.rule for f in v.findings]
    assert rules[0] == "log.head_changed"
    assert rules.index("sign.key_mismatch") < rules.index("score.mismatch")
    assert _text_rules(list(render_verdict(v))) == rules


def test_a_head_published_before_an_edit_says_it_vouches_for_nothing_after_it(
        tmp_path: Path) -> None:
    events = _stored()
    published = log.head_digest(events[:101])
    wrong = _wrong_score(events, len(_hand_ends(events)) - 1)
    assert wrong > 100
    v = _with_published_head(audit.audit_log(_both(tmp_path, "h", events)[0]), published)
    assert ("scoring", "score.mismatch", wrong) in _found(v)
    note = next(n for n in v.notes if n.startswith(f"head {published[:16]}"))
    assert "after seq 100" in note and "vouches for none of them" in note


def test_a_torn_tail_after_a_wrong_score_keeps_both_in_both_forms(tmp_path: Path) -> None:
    events = _stored()
    wrong = _wrong_score(events, 0)
    blog, lines = _both(tmp_path, "torn", events)
    blog.write_bytes(blog.read_bytes()[:-7])
    text = lines.read_bytes().splitlines(keepends=True)
    lines.write_bytes(b"".join(text[:-2]) + text[-2][:10])  # the end line gone, one cut
    for v in (audit.audit_log(blog), audit.audit_log(lines)):
        assert v.findings[0].rule == "log.torn"
        assert [f.seq for f in v.findings if f.rule == "score.mismatch"] == [wrong, wrong]
        assert not v.scoring.after_illegal


# -- slow: every preset through the real command, and the time of a long log --------------


def _scenarios(preset: str, players: int) -> dict[str, list[AnyEvent]]:
    base = _stored(preset, players)
    illegal, _ = _illegal_discard(base)
    _wrong_score(illegal, 0)
    forged, _ = _forged_deal(base)
    live = list(base[:_hand_ends(base)[0] + 20])
    live, _ = _illegal_discard(live)
    return {"illegal-score": illegal, "forged": forged, "live": live}


@pytest.mark.slow  # 8 presets x 3 logs x 2 forms x 2 formats, each a process: 20-40 s
@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_names_the_same_first_finding_in_text_json_binary_and_jsonl(
        preset: str, tmp_path: Path) -> None:
    runs: list[list[object]] = []
    for name, events in _scenarios(preset, 2).items():
        for path in _both(tmp_path, name, events, sealed=name != "live"):
            runs += [["audit", path], ["audit", path, "-f", "json"]]
    done = cli_batch(runs)
    firsts = {}
    for i in range(0, len(done), 2):
        text, data = done[i], done[i + 1]
        assert text.returncode == data.returncode == 1, text.stderr
        verdict = json.loads(data.stdout)
        rules = [f["rule"] for f in verdict["findings"]]
        assert _text_rules(text.stdout.splitlines()) == rules
        if verdict["legality"]["first_illegal"] is not None:
            assert "agree" not in next(line for line in text.stdout.splitlines()
                                       if line.startswith("  scoring"))
        name = Path(str(runs[i][1])).stem
        firsts.setdefault(name, []).append(
            [(f["section"], f["rule"], f["seq"]) for f in verdict["findings"]])
    for name, (blog, lines) in firsts.items():
        assert blog == lines, name
    forged = json.loads(done[5].stdout)
    deal = forged["findings"][0]
    assert deal["rule"] == "deal.mismatch"
    assert forged["legality"]["first_illegal"]["follows_from"] == deal["seq"]


def _long(tmp: Path) -> tuple[Path, Path]:
    from buraco_log.rules import derive
    from buraco_log.simulate import simulate_match

    events = list(simulate_match(derive("classic", target_score=60000), 2, seed="long56"))
    events = events[:20000]
    assert len(events) == 20000
    clean = tmp / "clean.blog"
    clean.write_bytes(log.encode_log(events))
    faulty, seq = _illegal_discard(events, after=0)
    assert seq <= 6
    bad = tmp / "fault.blog"
    bad.write_bytes(log.encode_log(faulty))
    return clean, bad


@pytest.mark.slow  # a 20,000-event match simulated and audited: 10-20 s
def test_a_fault_at_seq_5_of_a_20000_event_log_costs_no_more_than_a_clean_audit(
        tmp_path: Path) -> None:
    clean, bad = _long(tmp_path)
    took = {}
    for path in (clean, bad, clean, bad):
        for form in ("table", "json"):
            t = time.perf_counter()
            done = cli_batch([["audit", path, "-f", form]], timeout=300)[0]
            took[(path.name, form)] = min(took.get((path.name, form), 1e9),
                                          time.perf_counter() - t)
            assert done.returncode == (0 if path == clean else 1), done.stderr
    for form in ("table", "json"):
        assert took[("fault.blog", form)] < 2 * took[("clean.blog", form)] + 0.5, took
