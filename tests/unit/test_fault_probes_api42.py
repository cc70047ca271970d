"""Fault probes of the library's public API as docs/library.md and docs/deals.md present it,
called the way a site engineer's or a referee's script calls it: paths as bytes, pathlib
paths and names holding a NUL; positions that are bools, floats, strings and huge ints; card
text one slip away from a card; the dealer's arguments out of range.

The promises: ``audit.audit_log`` never raises for a bad log; a position the match does not
have is a ``PositionError`` naming what was asked; a refusal is the documented error with one
line; never a hang or an error from deep inside."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from buraco_log import audit
from buraco_log.cards import ALL_CODES, STYLES, format_card, is_card, parse_card
from buraco_log.dealer import FairDealer, check_deals, deal, deal_seeded, hand_key, shuffle
from buraco_log.errors import CardParseError, DealError, PositionError, ReplayError, RulesError
from buraco_log.log import read_events
from buraco_log.reducer import state_at
from buraco_log.rules import preset
from buraco_log.timeline import Timeline, table_view

ROOT = Path(__file__).resolve().parents[2]
MATCH = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"


@pytest.fixture(scope="module")
def events() -> list:  # type: ignore[type-arg]
    return read_events(str(MATCH))


@pytest.fixture(scope="module")
def timeline(events: list) -> Timeline:  # type: ignore[type-arg]
    return Timeline(events)


# -- paths: bytes, pathlib, NUL -------------------------------------------------------------------


def test_a_bytes_path_to_a_good_log_is_audited_under_its_name(tmp_path: Path) -> None:
    log = tmp_path / "m.blog"
    shutil.copyfile(MATCH, log)
    verdict = audit.audit_log(os.fsencode(log))  # it said "No such file" of "b'.../m.blog'"
    assert verdict.ok, verdict.findings
    assert verdict.path == str(log)
    assert verdict.events == len(read_events(str(MATCH)))


def test_a_pathlib_path_and_its_bytes_give_the_same_verdict(tmp_path: Path) -> None:
    log = tmp_path / "m.blog"
    shutil.copyfile(ILLEGAL, log)
    by_path, by_bytes = audit.audit_log(log), audit.audit_log(os.fsencode(log))
    assert by_path == by_bytes
    assert not by_path.ok and by_path.legality.first_illegal is not None


@pytest.mark.parametrize("call", [
    lambda p: audit.show_log(p), lambda p: audit.explain(p, 3),
    lambda p: audit.diff_logs(p, str(MATCH)), lambda p: audit.read_log(p)[1],
], ids=["show_log", "explain", "diff_logs", "read_log"])
def test_every_reader_of_a_path_takes_bytes(call: Callable[[object], object]) -> None:
    result = call(os.fsencode(MATCH))
    assert str(MATCH) in repr(result) or getattr(result, "status", None) == "sealed"


def test_a_name_holding_a_nul_is_a_finding_not_a_value_error() -> None:
    verdict = audit.audit_log("m\x00.blog")
    assert not verdict.ok
    (finding,) = verdict.findings
    assert finding.rule == "log.unreadable"
    assert "NUL" in finding.message


@pytest.mark.parametrize("call", [
    lambda: audit.show_log("m\x00.blog"), lambda: audit.explain("m\x00.blog", 0),
    lambda: audit.diff_logs(str(MATCH), "m\x00.blog"),
], ids=["show_log", "explain", "diff_logs"])
def test_the_readers_refuse_a_nul_name_as_a_log_format_error(call: Callable[[], object]) -> None:
    from buraco_log.errors import LogFormatError

    with pytest.raises(LogFormatError, match="NUL") as got:
        call()
    assert got.value.exit_status == 2  # the caller named no file


def test_same_files_passes_over_a_name_holding_a_nul(tmp_path: Path) -> None:
    link = tmp_path / "link.blog"
    link.symlink_to(MATCH)
    assert audit.same_files([str(MATCH), "m\x00.blog", str(link)]) == {str(link): str(MATCH)}


def test_find_logs_keeps_a_bytes_directory_s_logs_as_text(tmp_path: Path) -> None:
    shutil.copyfile(MATCH, tmp_path / "a.blog")
    assert audit.find_logs([os.fsencode(tmp_path)]) == [str(tmp_path / "a.blog")]


# -- audit_many ---------------------------------------------------------------------------------


def test_audit_many_refuses_one_path_given_as_the_list() -> None:
    with pytest.raises(TypeError, match="not one path"):  # it audited "m", "a", "t", ...
        audit.audit_many(str(MATCH))


def test_audit_many_starts_no_more_workers_than_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    # workers=10**6 for two logs forked workers by the hundred thousand, until the OOM
    # killer came: the pool is asked for two (asked, not run with a million, to see it)
    asked: list[int] = []
    real = audit.worker_pool

    def pool(n: int, *args: str) -> object:
        asked.append(n)
        return real(min(n, 2), *args)

    monkeypatch.setattr(audit, "worker_pool", pool)
    got = audit.audit_many([str(MATCH), os.fsencode(ILLEGAL)], workers=10**6)
    assert asked == [2]
    assert [v.ok for v in got] == [True, False]
    assert got[1].path == str(ILLEGAL)


@pytest.mark.parametrize("workers", [2.5, None, True])
def test_audit_many_refuses_a_worker_count_that_is_no_whole_number(workers: object) -> None:
    with pytest.raises(TypeError, match="whole number"):
        audit.audit_many([str(MATCH)], workers=workers)  # type: ignore[arg-type]


@pytest.mark.parametrize("error", [RuntimeError("the progress bar broke"), KeyboardInterrupt()],
                         ids=["RuntimeError", "KeyboardInterrupt"])
@pytest.mark.parametrize("workers", [1, 2])
def test_on_done_raising_stops_the_batch_and_leaves_no_worker(
        error: BaseException, workers: int) -> None:
    import multiprocessing

    calls: list[str] = []

    def done(verdict: audit.Verdict) -> None:
        calls.append(verdict.path)
        raise error

    with pytest.raises(type(error)):
        audit.audit_many([str(MATCH), str(ILLEGAL)] * 3, workers=workers, on_done=done)
    assert len(calls) == 1  # the first verdict's call raised: no later one was made
    # No grace: the pool waits for its manager thread and kills a worker that outlives SIGTERM,
    # so every worker is gone when audit_many returns (one was left in 1 run of 15).
    assert multiprocessing.active_children() == []


def test_audit_log_of_what_is_no_log_file_answers_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "nobody-writes.blog"
    os.mkfifo(fifo)  # opened for reading, it would wait for a writer for ever
    for path, rule in ((fifo, "log.filetype"), ("/dev/zero", "log.filetype"),
                       (tmp_path, "log.filetype"), (tmp_path / "none.blog", "log.unreadable")):
        verdict = audit.audit_log(path)
        assert [f.rule for f in verdict.findings] == [rule], path
        assert verdict.path == str(path)


def test_audit_many_of_two_workers_takes_an_iterator_of_paths() -> None:
    got = audit.audit_many(iter([str(MATCH), str(ILLEGAL)]), workers=2)  # len() of it failed
    assert [v.ok for v in got] == [True, False]


# -- positions ----------------------------------------------------------------------------------


NOT_A_NUMBER = [True, False, 1.5, 3.0, None, "3", float("nan")]


@pytest.mark.parametrize("value", NOT_A_NUMBER, ids=repr)
def test_a_timeline_position_that_is_no_int_is_a_position_error_naming_it(
        timeline: Timeline, value: object) -> None:
    for call, what in ((timeline.state_at, "seq"), (timeline.view, "seq"),
                       (timeline.seq_of, "hand"), (lambda v: timeline.seq_of(0, v), "turn"),
                       (lambda v: timeline.view(5, seat=v), "seat"),
                       (timeline.recent, "seq")):
        if value is None and what in ("turn", "seat"):
            continue  # None: no turn (the deal itself), the referee's view
        said = re.escape(f"a {what} is a whole number, not {value!r}")
        with pytest.raises(PositionError, match=said):
            call(value)  # type: ignore[operator]


def test_a_numpy_integer_is_a_position_and_a_numpy_bool_or_float_is_not(
        timeline: Timeline) -> None:
    np = pytest.importorskip("numpy")  # a referee's seqs out of a DataFrame
    assert timeline.state_at(np.int64(20)) == timeline.state_at(20)
    assert timeline.view(np.int64(5), seat=np.int32(1)).viewer == 1
    for value in (np.float64(3.0), np.bool_(True)):
        with pytest.raises(PositionError, match="a seq is a whole number"):
            timeline.state_at(value)


@pytest.mark.parametrize("value", NOT_A_NUMBER, ids=repr)
def test_explain_refuses_a_seq_that_is_no_int(value: object) -> None:
    # True explained seq 1 as "seq True"; '3' was "the log has no seq 3"; 3.0 a TypeError
    with pytest.raises(PositionError, match=re.escape(f"a seq is a whole number, not {value!r}")):
        audit.explain(str(MATCH), value)  # type: ignore[arg-type]


@pytest.mark.parametrize("seq", [-2, -10**30, 10**30])
def test_recent_of_a_seq_the_log_does_not_have_is_refused(timeline: Timeline, seq: int) -> None:
    # -2 sliced from the end: 537 events "before" a seq that is not there
    with pytest.raises(PositionError, match=f"no seq {seq}"):
        timeline.recent(seq)


@pytest.mark.parametrize("seat,said", [(1.5, "a seat is a whole number, not 1.5"),
                                       (2, "no seat 2 in a 2-player match")])
def test_recent_for_a_seat_the_match_lacks_is_refused(timeline: Timeline, seat: object,
                                                      said: str) -> None:
    # seat 1.5 was nobody: every draw hidden, as if told to a seat at the table
    with pytest.raises(PositionError, match=re.escape(said)):
        timeline.recent(10, 6, seat)  # type: ignore[arg-type]


def test_a_negative_count_of_recent_events_is_refused(timeline: Timeline) -> None:
    with pytest.raises(PositionError, match="0 or more, not -1"):
        timeline.recent(10, -1)


def test_a_seat_given_as_a_float_is_refused_not_a_view_of_nobody(timeline: Timeline) -> None:
    with pytest.raises(PositionError, match=re.escape("a seat is a whole number, not 1.5")):
        table_view(timeline.final, seat=1.5)  # type: ignore[arg-type]


def test_a_timeline_of_an_iterator_replays_its_events(events: list) -> None:  # type: ignore[type-arg]
    tl = Timeline(iter(events))  # the iterator was read twice: the second time, empty
    assert tl.last_seq == events[-1].seq
    assert tl.final.phase == "over"


def test_an_empty_timeline_says_it_holds_no_events() -> None:
    with pytest.raises(PositionError) as got:
        Timeline([]).state_at(0)
    assert "seqs 0 to -1" not in str(got.value)
    assert "no events" in str(got.value)


def test_explaining_a_log_that_starts_past_seq_0_explains_its_first_event(
        events: list) -> None:  # type: ignore[type-arg]
    tail = events[100:]
    why = audit.explain_event(tail, 100)  # a ReplayError about seq 99, never asked for
    assert (why.seq, why.legal, why.rule) == (100, False, "seq.out_of_order")
    later = audit.explain_event(tail, 150)
    assert later.seq == 100 and later.note is not None and "seq 150" in later.note


def test_summarize_takes_an_iterator_of_events(events: list) -> None:  # type: ignore[type-arg]
    assert audit.summarize(iter(events)) == audit.summarize(events)


def test_audit_events_takes_an_iterator(events: list) -> None:  # type: ignore[type-arg]
    _, integrity = audit.read_log(MATCH)
    whole = audit.audit_events(events, integrity)
    assert audit.audit_events(iter(events), integrity) == whole  # len() of an iterator
    assert whole.ok and whole.events == len(events)


def test_explain_event_and_diff_events_take_iterators(events: list) -> None:  # type: ignore[type-arg]
    assert audit.explain_event(iter(events), 5) == audit.explain_event(events, 5)
    assert audit.diff_events(iter(events), iter(events[:10])) == audit.diff_events(
        events, events[:10])


def test_a_seq_past_the_illegal_event_stays_a_finding_about_the_log() -> None:
    tl = Timeline(read_events(str(ILLEGAL)))
    assert tl.illegal is not None and tl.illegal.seq is not None
    with pytest.raises(ReplayError) as got:
        tl.recent(tl.illegal.seq + 5)
    assert not isinstance(got.value, PositionError)
    assert "past the first illegal event" in str(got.value)


@pytest.mark.parametrize("value", [True, 3.0, None, "3"], ids=repr)
def test_reducer_state_at_refuses_a_seq_that_is_no_int(events: list, value: object) -> None:  # type: ignore[type-arg]
    # True was seq 1; 3.0 and None a TypeError from the compiled loop
    with pytest.raises(PositionError, match="whole number"):
        state_at(events, value)  # type: ignore[arg-type]


def test_reducer_state_at_of_a_negative_seq_says_seqs_start_at_0(events: list) -> None:  # type: ignore[type-arg]
    with pytest.raises(PositionError, match="no seq -2: seqs start at 0") as got:
        state_at(events, -2)
    assert "last seq 0" not in str(got.value)  # it had read one event and named it the last


def test_reducer_state_at_takes_a_numpy_like_index(events: list) -> None:  # type: ignore[type-arg]
    class Index:  # what a NumPy integer offers
        def __index__(self) -> int:
            return 20

    assert state_at(events, Index()).seq == 20  # type: ignore[arg-type]


@pytest.mark.parametrize("seat", [2, -1, 1.5, None, True], ids=repr)
def test_state_view_of_a_seat_the_match_lacks_is_one_value_error(
        events: list, seat: object) -> None:  # type: ignore[type-arg]
    """A ValueError, as state.view always gave for a seat out of range (a Timeline's check is
    the PositionError); 1.5 and None failed inside, True was seat 1."""
    from buraco_log.state import view

    with pytest.raises(ValueError, match=f"no seat {seat!r} in a 2-player match"):
        view(state_at(events, 20), seat=seat)  # type: ignore[arg-type]


def test_state_view_takes_a_numpy_like_seat(events: list) -> None:  # type: ignore[type-arg]
    from buraco_log.state import view

    class Seat:
        def __index__(self) -> int:
            return 1

    assert view(state_at(events, 20), seat=Seat()).seat == 1  # type: ignore[arg-type]


# -- cards --------------------------------------------------------------------------------------


def test_every_card_in_every_style_round_trips() -> None:
    for code in ALL_CODES:
        for style in STYLES:
            text = format_card(code, style)
            assert parse_card(text) == code, (code, style, text)
            assert parse_card(f" {text}\t") == code


@pytest.mark.parametrize("text,code", [
    ("Th", 42), ("10h", 42), ("th", 42), ("7♥", 39), ("10♥", 42), ("T♥", 42), ("JK", 64),
    ("jk", 64), ("🃏", 64), ("12r", 44), ("7🔴", 39), ("1r", 33), ("13k", 61), ("10y", 10),
    ("Ah", 33), ("Kc", 13), ("7H", 39),
])
def test_the_documented_spellings_read(text: str, code: int) -> None:
    assert parse_card(text) == code


@pytest.mark.parametrize("text", [
    "Kx", "14r", "0r", "14h", "0s", "JK2", "", " ", "\t", "٧h", "７h", "²h", "7 h", "10",
    "7♥\ufe0f",
], ids=repr)
def test_a_near_miss_is_refused_with_one_line_naming_it(text: str) -> None:
    with pytest.raises(CardParseError) as got:
        parse_card(text)
    assert repr(text) in str(got.value) and "\n" not in str(got.value)


@pytest.mark.parametrize("text,same", [
    ("1h", "Ah"), ("11s", "Js"), ("13c", "Kc"), ("07h", "7h"), ("Tr", "10r"), ("Ar", "1r"),
    ("Kk", "13k"),
], ids=repr)
def test_the_spellings_a_reader_always_took_stay_readable(text: str, same: str) -> None:
    """Logs written by hand or by other tools hold them; narrowing the reader would leave a
    log once read unreadable (a format promise), so they read as the written spelling."""
    assert parse_card(text) == parse_card(same)


@pytest.mark.parametrize("value", [None, 7, b"7h"], ids=repr)
def test_card_text_that_is_no_str_is_a_card_parse_error(value: object) -> None:
    with pytest.raises(CardParseError, match="a card is text"):  # AttributeError: strip
        parse_card(value)  # type: ignore[arg-type]


def test_true_is_no_card_code() -> None:
    assert not is_card(True)
    with pytest.raises(CardParseError):
        format_card(True)  # it printed "Ac"


@pytest.mark.parametrize("style", ["bogus", "ASCII", ""])
def test_an_unknown_style_is_refused_not_drawn_as_tiles(style: str) -> None:
    with pytest.raises(CardParseError, match="unknown card style"):
        format_card(7, style)  # type: ignore[arg-type]  # it gave "7🟡"


# -- the dealer ---------------------------------------------------------------------------------


def test_the_deals_md_example_runs_and_its_commitment_checks() -> None:
    dealer = FairDealer(player_seeds=("alice's seed", "bob's seed"))
    hs = dealer.deal(preset("burraco"), players=2, hand=0, dealer=1, seq=1)
    assert (hs.hand, hs.dealer, len(hs.hands)) == (0, 1, 2)
    plain = deal_seeded(preset("classic"), 2, 0, 0, "demo", seq=1)
    assert plain == deal_seeded(preset("classic"), 2, 0, 0, "demo", seq=1)
    assert plain.seed == "demo"


def test_a_revealed_seed_that_does_not_match_the_commitment_is_a_finding() -> None:
    from msgspec.structs import replace

    from buraco_log.simulate import simulate_match

    events = simulate_match(preset("classic"), 2, seed="api42")
    end = events[-1]
    bad = [*events[:-1], replace(end, server_seed="not the seed")]  # type: ignore[type-var]
    rules = [f.rule for f in check_deals(bad)]
    assert "deal.seed_mismatch" in rules and not check_deals(events)


@pytest.mark.parametrize("players", [3, 5, 0, -2])
def test_a_seat_count_the_preset_does_not_allow_is_a_rules_error(players: int) -> None:
    with pytest.raises(RulesError, match=f"burraco is played by 2, 4, not {players}"):
        FairDealer("s").deal(preset("burraco"), players=players, hand=0, dealer=0, seq=1)


@pytest.mark.parametrize("kwargs,match", [
    ({"dealer": 5}, "no seat 5 to deal from at a 2-player table"),
    ({"dealer": -1}, "no seat -1"), ({"dealer": 1.5}, "no seat 1.5"),
    ({"players": 2.0}, "number of players is a whole number"),
    ({"hand": -1}, "no hand -1"), ({"hand": 2**32}, "no hand 4294967296"),
    ({"hand": True}, "no hand True"), ({"seq": None}, "seq is a whole number"),
])
def test_a_deal_the_table_cannot_have_is_a_deal_error(kwargs: dict, match: str) -> None:  # type: ignore[type-arg]
    args = {"players": 2, "hand": 0, "dealer": 0, "seq": 1, **kwargs}
    with pytest.raises(DealError, match=match):
        FairDealer("s").deal(preset("classic"), **args)


def test_numpy_integers_deal_the_same_hand_as_ints() -> None:
    np = pytest.importorskip("numpy")
    dealer = FairDealer("s", ("a", "b"))
    want = dealer.deal(preset("classic"), players=2, hand=1, dealer=1, seq=30)
    got = dealer.deal(preset("classic"), players=np.int64(2), hand=np.int64(1),
                      dealer=np.int32(1), seq=np.int64(30))
    assert got == want and type(got.seq) is int and type(got.hand) is int


@pytest.mark.parametrize("make,match", [
    (lambda: FairDealer("s", "abc"), "player seeds are a list of text, not str 'abc'"),
    (lambda: FairDealer(b"s"), "server seed is text, not bytes"),  # type: ignore[arg-type]
    (lambda: FairDealer("s", (1,)), "player seed 0 is text, not int"),  # type: ignore[arg-type]
    (lambda: FairDealer("\udc80"), "server seed is not valid text"),
    (lambda: FairDealer(""), "an empty server seed is no secret"),
    (lambda: deal_seeded(preset("classic"), 2, 0, 0, None, seq=1), "the seed is text"),  # type: ignore[arg-type]
    (lambda: deal(preset("classic"), 2, 0, 0, "key", seq=1), "a shuffle key is bytes"),  # type: ignore[arg-type]
    (lambda: shuffle([1, 2, 3], "key"), "shuffle key is bytes .*, not str 'key'"),  # type: ignore[arg-type]
    (lambda: hand_key("s", (), -1), "no hand -1"),
], ids=["seeds-str", "bytes-seed", "int-player-seed", "surrogate", "empty", "none-plain",
        "str-key", "str-shuffle-key", "hand-key"])
def test_a_seed_or_key_the_dealer_cannot_use_is_a_deal_error(
        make: Callable[[], object], match: str) -> None:
    with pytest.raises(DealError, match=match) as got:
        make()
    assert isinstance(got.value, ValueError) and got.value.code == "deal.invalid"


def test_every_rule_check_deals_gives_is_in_the_deals_md_table() -> None:
    doc = check_deals.__doc__ or ""
    rules = re.findall(r"``(deal\.[a-z_]+)``", doc.split("Rule ids:", 1)[1])
    table = (ROOT / "docs" / "deals.md").read_text(encoding="utf-8")
    assert len(rules) >= 7
    missing = [r for r in rules if f"| `{r}` |" not in table]
    assert not missing, f"docs/deals.md has no row for {missing}"  # deal.not_committed


# -- the docs' examples give what they say ------------------------------------------------------


def test_the_library_md_rules_engine_example_gives_its_comments() -> None:
    from buraco_log.jsonl import read_jsonl
    from buraco_log.reducer import replay

    events = read_jsonl(str(ROOT / "examples" / "golden" / "biriba.jsonl"))
    final = replay(events)
    assert (final.totals, final.winner) == ((305, -80), 0)
    assert state_at(events, 20).seq == 20


def test_the_library_md_audit_example_gives_its_comments(tmp_path: Path) -> None:
    verdict = audit.audit_log(ILLEGAL)
    assert not verdict.ok
    first = verdict.legality.first_illegal
    assert first is not None and first.rendering == "cards"
    assert {"seq", "rule", "description", "seat", "cards", "before"} <= set(
        type(first).__struct_fields__)
    why = audit.explain(pathlib.Path(ILLEGAL), 23)
    assert (why.seq, why.legal) == (23, False)
    seen: list[str] = []
    got = audit.audit_many([str(MATCH), str(ILLEGAL)], workers=2,
                           on_done=lambda v: seen.append(v.path))
    assert [v.ok for v in got] == [True, False] and sorted(seen) == sorted(
        [str(MATCH), str(ILLEGAL)])
