"""Fault probes of what a player is given: a seat's page (`view --seat`), a seat's review
(`review --seat`, text, JSON and HTML) and `replay --seat`, run as real subprocesses.

A seat's copy may name only cards that seat could see at that point: its own hand, the pile,
the melds. The probes look everywhere in what is written (the page's data, its move list and
banners, the review's note, the lines on stderr) across presets, player counts, logs that end
early, damaged logs and logs with an illegal event; and at hostile text from the log (names,
match ids), and at the one line a bad input must give."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log.cards import ALL_CODES, format_card
from buraco_log.events import AnyEvent, CardDiscarded, CardDrawn, HandStarted, MatchStarted, Player
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from buraco_log.state import State
from buraco_log.timeline import Timeline, card_style
from buraco_log.view import build_page
from tests.brokenlogs import write
from tests.view.leaks import leaks
from tests.view.pages import data_of

_BESIDE = Path(sys.executable).parent / "buraco-log"  # the venv's, when PATH lacks it
EXE = shutil.which("buraco-log") or (str(_BESIDE) if _BESIDE.exists() else None)
needs_exe = pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert EXE is not None
    return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env=dict(os.environ, COLUMNS="200", NO_COLOR="1"))


def one_error_line(p: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("buraco-log: error: "), p.stderr
    return lines[0]


def _seen(s: State, seat: int) -> set[int]:
    out = set(s.hands[seat]) if s.hands else set()
    out.update(s.pile)
    for side in s.melds:
        for m in side:
            out.update(m.cards)
    return out


def _named(text: str, style: Any) -> list[int]:
    """Card codes a text names, as the page and the terminal write them."""
    names = {format_card(c, style): c for c in ALL_CODES}
    return [names[t] for t in (w.strip("(),;.:") for w in text.split()) if t in names]


def seat_leaks(events: list[AnyEvent], seat: int) -> list[str]:
    """What a seat's page shows that the seat could not see: the secrecy test's checks of the
    frames and bytes, plus every card a move line or banner names (a move may name only cards
    seen just before or just after it)."""
    tl = Timeline(events)
    page = build_page(events, seat=seat).html
    found = leaks(page.encode("utf-8"), tl, seat)
    data = data_of(page)
    style = card_style(tl.rules)
    for s, text in enumerate(data["moves"]):
        seen = _seen(tl.state_at(s), seat) | (_seen(tl.state_at(s - 1), seat) if s else set())
        bad = [c for c in _named(text, style) if c not in seen]
        if bad:
            found.append(f"move {s} {text!r} names {bad}")
    for b in data["banners"]:
        if _named(b["text"], style):
            found.append(f"banner {b['text']!r} names cards")
    return found


# -- a seat's page across presets, player counts and logs that end early --------------------

CASES = [("classic", 2), ("classic", 4), ("thirteen", 2), ("burraco", 4), ("mega", 2),
         ("burako", 2), ("burako", 4), ("biriba", 3)]


@pytest.fixture(scope="module")
def matches() -> dict[tuple[str, int], list[AnyEvent]]:
    return {(r, n): list(simulate_match(PRESETS[r], n, seed="privacy", index=0))[:220]
            for r, n in CASES}


@pytest.mark.parametrize(("rules", "players"), CASES, ids=[f"{r}-{n}p" for r, n in CASES])
def test_a_seats_page_names_no_card_it_could_not_see(
        matches: dict[tuple[str, int], list[AnyEvent]], rules: str, players: int) -> None:
    events = matches[rules, players]
    for seat in range(players):
        assert seat_leaks(events, seat) == []


@pytest.mark.parametrize("cut", [1, 2, 3, 9])
def test_a_seats_page_of_a_log_that_ends_early_names_no_hidden_card(
        matches: dict[tuple[str, int], list[AnyEvent]], cut: int) -> None:
    events = matches["classic", 4][:cut]  # the start, the deal, a draw or two
    for seat in range(4):
        assert seat_leaks(events, seat) == []


def test_a_seats_page_of_random_play_names_no_card_it_could_not_see() -> None:
    """Random players reject first draws and take back short openings: cards go back to a
    hand and onto the pile in ways the heuristic bot never plays."""
    events = list(simulate_match(PRESETS["classic"], 2, seed="d", bots=("random",)))[:420]
    tags = {type(e).__name__ for e in events}
    assert {"FirstDrawRejected", "OpeningRetracted"} <= tags
    for seat in range(2):
        assert seat_leaks(events, seat) == []


def test_the_probe_finds_the_referees_cards() -> None:
    """The check can fail: the referee's page, read as seat 0's, names seat 1's draws."""
    events = list(simulate_match(PRESETS["classic"], 2, seed="privacy", index=0))[:60]
    tl = Timeline(events)
    page = build_page(events).html
    assert leaks(page.encode("utf-8"), tl, 0) != []


# -- an illegal draw by another seat: its explanation names the stock's top card -------------


@pytest.fixture(scope="module")
def wrong_draw(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A 2-player log where seat 1 records a draw of a card that is not the stock's top; the
    engine's explanation names the real top card, which seat 0 could not see."""
    events = list(simulate_match(PRESETS["classic"], 2, seed="wd", index=0))
    rep = Replayer()
    for i, e in enumerate(events):
        if isinstance(e, CardDrawn) and e.seat == 1 and e.seq > 30:
            top = e.card
            other = next(c for c in ALL_CODES if c != top and c != 64)
            events[i] = msgspec.structs.replace(e, card=other)
            break
        rep.step(e)
    path = write(tmp_path_factory.mktemp("wd") / "wrongdraw.blog", events)
    return path, format_card(top, "ascii")


@needs_exe
def test_a_seats_review_of_an_illegal_draw_gives_the_rule_not_the_stocks_top(
        wrong_draw: tuple[Path, str], tmp_path: Path) -> None:
    path, top = wrong_draw
    said = f"the top of the stock is {top}"
    p = run("review", path, "--seat", "0", "--budget", "1x2r1")
    line = one_error_line(p)
    assert p.returncode == 1 and "[draw.wrong_card]" in line and said not in line
    p = run("review", path, "--seat", "0", "--budget", "1x2r1", "-f", "json")
    assert p.returncode == 1 and said not in p.stdout + p.stderr
    for fmt in ("text", "json", "html"):
        out = tmp_path / f"review.{fmt}"
        p = run("review", path, "--seat", "0", "--budget", "1x2r1", "--partial", "-f", fmt,
                "-o", out)
        assert p.returncode == 1, p.stderr  # written, and a finding
        assert "[draw.wrong_card]" in p.stderr and said not in p.stderr
        body = out.read_text("utf-8")
        assert said not in body
        if fmt == "json":
            note = json.loads(body)["note"]
            assert note.startswith("seq ") and "[draw.wrong_card]" in note
            assert "the stock" not in note.split("[draw.wrong_card]")[0]


@needs_exe
def test_a_seats_page_of_an_illegal_draw_gives_the_rule_not_the_stocks_top(
        wrong_draw: tuple[Path, str], tmp_path: Path) -> None:
    path, top = wrong_draw
    out = tmp_path / "seat0.html"
    p = run("view", path, "--seat", "0", "-o", out)
    assert p.returncode == 1, p.stderr
    said = f"the top of the stock is {top}"
    assert said not in p.stderr and said not in out.read_text("utf-8")
    p = run("replay", path, "--seat", "0")
    assert said not in p.stdout + p.stderr


# -- a damaged JSON Lines log: the line, not "byte None" --------------------------------------


@pytest.fixture(scope="module")
def damaged_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("dj")
    events = list(simulate_match(PRESETS["classic"], 2, seed="dj", index=0))[:80]
    good = write(folder / "good.blog", events)
    assert EXE is not None
    assert run("convert", good, "-o", folder / "good.jsonl").returncode == 0
    lines = (folder / "good.jsonl").read_text().split("\n")
    lines[5] = lines[5][:-7]  # a line cut short: not JSON
    bad = folder / "bad.jsonl"
    bad.write_text("\n".join(lines))
    return bad


@needs_exe
def test_a_seats_review_of_a_damaged_jsonl_log_names_the_line(damaged_jsonl: Path) -> None:
    p = run("review", damaged_jsonl, "--seat", "0", "--budget", "1x2r1")
    line = one_error_line(p)
    assert p.returncode == 1 and p.stdout == ""
    assert "None" not in line and "line 6" in line and str(damaged_jsonl) in line
    assert re.search(r"byte [1-9]\d*, line 6", line)
    p = run("review", damaged_jsonl, "--seat", "0", "--budget", "1x2r1", "--partial")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    note = [x for x in p.stderr.splitlines() if "damaged" in x]
    assert len(note) == 1 and "None" not in note[0] and "line 6" in note[0]


@needs_exe
def test_a_seats_page_of_a_damaged_jsonl_log_names_the_line(damaged_jsonl: Path,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    p = run("view", damaged_jsonl, "--seat", "1", "-o", out)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "line 6" in p.stderr and "None" not in p.stderr
    data = data_of(out.read_text("utf-8"))
    assert [b["kind"] for b in data["banners"]] == ["damaged"]



# -- hostile text: control and bidi characters in names and the match id ---------------------

UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                    "\u2066-\u2069\u2028\u2029]")
BIDI_NAMES = ("\u202eevil\u202c\x9b2J\x7f", "\x1b[2J\x1b]0;pwned\x07", "a\u2066b\u2069\u2028c")


@pytest.fixture(scope="module")
def bidi_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An illegal draw by seat 1 (so a banner names a player), every name and the match id
    holding a right-to-left override, terminal escapes or a line separator."""
    events = list(simulate_match(PRESETS["classic"], 3, seed="bidi", index=0))[:120]
    start = events[0]
    assert isinstance(start, MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id="m\u202e1.0\x1b[31m", players=tuple(Player(n) for n in BIDI_NAMES),
        rules=msgspec.structs.replace(start.rules, name="house\u202e\x9b"))  # a house name
    for i, e in enumerate(events):
        if isinstance(e, CardDrawn) and e.seat == 1 and e.seq > 40:
            events[i] = msgspec.structs.replace(e, card=next(c for c in ALL_CODES
                                                             if c not in (e.card, 64)))
            break
    return write(tmp_path_factory.mktemp("bidi") / "bidi.blog", events)


@pytest.mark.parametrize("seat", [None, 0, 1])
def test_the_page_shows_control_and_bidi_characters_escaped(bidi_log: Path,
                                                            seat: int | None) -> None:
    from buraco_log.view import page_for_log

    page = page_for_log(bidi_log, seat=seat).html
    data = data_of(page)
    assert [p["name"] for p in data["players"]] == list(BIDI_NAMES)  # the data keeps them
    shown = [data["match"], data["rules"], *data["moves"], *(b["text"] for b in data["banners"])]
    assert [t for t in shown if UNSAFE.search(t)] == []
    assert "\\u202e" in data["match"] and any("\\u202eevil" in m for m in data["moves"])
    assert UNSAFE.search(page) is None  # the title, the markup, the script, and the data:
    # the names are there as JSON escapes, which read back whole (above)
    assert data["banners"] and data["banners"][0]["kind"] == "illegal"


@needs_exe
def test_the_terminal_and_the_review_show_hostile_names_escaped(bidi_log: Path,
                                                                tmp_path: Path) -> None:
    p = run("view", bidi_log, "--seat", "0", "-o", tmp_path / "p.html")
    assert p.returncode == 1 and UNSAFE.search(p.stderr) is None and "note:" in p.stderr
    p = run("view", bidi_log, "-o", tmp_path / "r.html")  # the referee's banner names seat 1
    assert p.returncode == 1 and UNSAFE.search(p.stderr) is None and "\\x1b[2J" in p.stderr
    p = run("review", bidi_log, "--seat", "1", "--budget", "1x2r1", "--partial")
    assert p.returncode == 1, p.stderr  # written, and a finding
    assert UNSAFE.search(p.stdout + p.stderr) is None and "\\u202eevil" not in p.stderr
    p = run("replay", bidi_log, "--seat", "2", "--at", "20")
    assert p.returncode == 0 and UNSAFE.search(p.stdout + p.stderr) is None
    for args in (["view", bidi_log, "--seat", "2"],  # a page on stdout: to the terminal
                 ["review", bidi_log, "--seat", "1", "--budget", "1x2r1", "--partial",
                  "-f", "html"]):
        p = run(*args, "-o", "-")
        assert p.returncode == 1, p.stderr  # written, and a finding
        assert p.stdout.startswith("<!DOCTYPE html>"), p.stderr
        assert UNSAFE.search(p.stdout + p.stderr) is None
        assert data_of(p.stdout)["players"][0]["name"] == BIDI_NAMES[0]


def test_the_page_shows_the_names_escaped_in_the_browser(browser: Any, bidi_log: Path,
                                                         tmp_path: Path) -> None:
    from buraco_log.view import page_for_log, write_page

    out = tmp_path / "bidi.html"
    write_page(out, page_for_log(bidi_log, seat=0).html)
    browser.get(out.resolve().as_uri())
    browser.execute_script("window.buracoView.go(30)")
    text = browser.execute_script("return document.body.innerText + document.title")
    # the title's own isolates around the id and the rules' name (FSI ... PDI) are the page's,
    # not the log's: each escaped text between them
    text = re.sub("\u2068([^\u2066-\u2069]*)\u2069", r"\1", text)
    assert UNSAFE.search(text) is None
    assert "\\u202eevil" in text and "\\x1b[2J" in text


# -- a log whose first event is illegal: no table to show, as replay says ---------------------


@pytest.fixture(scope="module")
def first_illegal(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("first")
    events = list(simulate_match(PRESETS["classic"], 2, seed="first", index=0))[:12]
    start, deal = events[0], events[1]
    assert isinstance(start, MatchStarted)
    logs = {
        "one-player": [msgspec.structs.replace(start, players=start.players[:1], sides=(0,)),
                       *events[1:]],
        "bad-sides": [msgspec.structs.replace(start, sides=(0, 5)), *events[1:]],
        "no-start": [msgspec.structs.replace(deal, seq=0)],
    }
    return {k: write(folder / f"{k}.blog", v) for k, v in logs.items()}


@needs_exe
@pytest.mark.parametrize("name", ["one-player", "bad-sides", "no-start"])
@pytest.mark.parametrize("seat", [[], ["--seat", "0"]], ids=["referee", "seat"])
def test_view_of_a_log_whose_first_event_is_illegal_is_a_finding_not_an_empty_page(
        first_illegal: dict[str, Path], name: str, seat: list[str], tmp_path: Path) -> None:
    """The referee's page was written with no table ("up to seq -1"), exit 0; a seat's page
    said "no seat 0 in a 0-player match", exit 2, for a match that has seat 0."""
    out = tmp_path / "page.html"
    p = run("view", first_illegal[name], *seat, "-o", out)
    line = one_error_line(p)
    assert p.returncode == 1, p.stderr
    assert f"{first_illegal[name]}: seq 0 is illegal: " in line and " [match." in line
    assert "no table to show" in line and "seq -1" not in line and "0-player" not in line
    assert not out.exists() and list(tmp_path.iterdir()) == []


@needs_exe
def test_a_review_page_of_a_log_whose_first_event_is_illegal_is_one_line(
        first_illegal: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "review.html"
    p = run("review", first_illegal["one-player"], "--seat", "0", "--partial", "-f", "html",
            "-o", out)
    line = one_error_line(p)
    assert p.returncode == 1 and str(first_illegal["one-player"]) in line
    assert "seq 0 is illegal: " in line and line.endswith(" [match.rules]")
    assert not out.exists()


# -- two logs that differ only in cards seat 0 cannot see give seat 0 the same files ----------


def _hidden_twin(events: list[AnyEvent], cut: int) -> list[AnyEvent]:
    """``events[:cut]`` with a card of seat 1's hand and one of each morto swapped with stock
    cards, all of them never shown before ``cut``: the twin still replays, legally."""
    prefix = events[:cut]
    deal = prefix[1]
    assert isinstance(deal, HandStarted)
    shown = {c for e in prefix[2:] for c in
             (*getattr(e, "cards", ()), getattr(e, "card", -1), getattr(e, "top", -1))}
    stock = list(deal.stock)
    hands = [list(h) for h in deal.hands]
    mortos = [list(m) for m in deal.mortos]
    free = [i for i, c in enumerate(stock) if c not in shown]
    swaps = [(hands[1], next(i for i, c in enumerate(hands[1]) if c not in shown))]
    swaps += [(m, 0) for m in mortos]
    for (zone, i), j in zip(swaps, free[len(free) // 2:], strict=False):
        zone[i], stock[j] = stock[j], zone[i]
    twin = [prefix[0], msgspec.structs.replace(
        deal, hands=tuple(map(tuple, hands)), mortos=tuple(map(tuple, mortos)),
        stock=tuple(stock)), *prefix[2:]]
    rep = Replayer()
    for e in twin:
        rep.step(e)  # still legal
    return twin


@needs_exe
def test_a_seats_page_and_review_are_the_same_for_tables_it_cannot_tell_apart(
        tmp_path: Path) -> None:
    events = list(simulate_match(PRESETS["biriba"], 4, seed="twin", index=0))
    cut = next(e.seq for e in events[30:] if isinstance(e, CardDiscarded) and e.seat == 0)
    twin = _hidden_twin(events, cut)
    base = events[:cut]
    a, b = base[1], twin[1]
    assert isinstance(a, HandStarted) and isinstance(b, HandStarted)
    assert a.hands[1] != b.hands[1] and all(x != y for x, y in zip(a.mortos, b.mortos,
                                                                    strict=True))
    outs: dict[str, list[str]] = {"view": [], "review": [], "review-html": [], "referee": []}
    for name, evs in (("a", base), ("b", twin)):
        log = write(tmp_path / f"{name}.blog", evs)
        for kind, args in (("view", ["view", log, "--seat", "0"]),
                           ("referee", ["view", log]),
                           ("review", ["review", log, "--seat", "0", "--budget", "2x2r1",
                                       "-f", "json"]),
                           ("review-html", ["review", log, "--seat", "0", "--budget",
                                            "2x2r1", "-f", "html"])):
            p = run(*args, "-o", "-")
            assert p.returncode == 0, p.stderr
            outs[kind].append(p.stdout)
    assert outs["referee"][0] != outs["referee"][1]  # the control: the referee sees it
    assert outs["view"][0] == outs["view"][1]
    assert outs["review"][0] == outs["review"][1]
    assert outs["review-html"][0] == outs["review-html"][1]
