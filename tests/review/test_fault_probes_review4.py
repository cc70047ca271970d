"""Fault probes of `review` (fourth round): the text review states its seed so that it can be
given again (it escaped the seed twice: 'a\\\\x0ab' for "a", newline, "b"), the same bytes in
processes with other hash seeds and other bytes for another seed, the mortos and the order of
the stock the seat has not reached never enter the review, and a refused review leaves the
output file as it was, in one line on stderr."""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log.expert import Budget
from buraco_log.reducer import Replayer
from buraco_log.review import review_events
from buraco_log.rules import PRESETS
from buraco_log.simulate import simulate_match
from tests.brokenlogs import tear, with_illegal_discard, write

ROOT = Path(__file__).resolve().parents[2]
TINY = "2x2r1"
SEED = "a\nb\u202ec\x1b[31m\t"


def _events(preset: str = "classic", players: int = 2, n: int = 80) -> list[ev.AnyEvent]:
    return list(simulate_match(PRESETS[preset], players, seed=f"r4-{preset}"))[:n]


def run(*args: object, hashseed: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": hashseed, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cli.main", "review", *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)


def test_the_text_review_states_its_seed_as_a_literal_that_gives_it_back(tmp_path: Path) -> None:
    log = write(tmp_path / "m.blog", _events(n=40))
    p = run(log, "--seat", "0", "--budget", TINY, "--seed", SEED)
    assert p.returncode == 0, p.stderr
    line = p.stdout.splitlines()[1]
    assert line.startswith("seed ") and ", budget " in line
    stated = line[len("seed "):line.index(", budget ")]
    assert ast.literal_eval(stated) == SEED, stated  # was 'a\\x0ab\\u202ec\\x1b[31m\\t'
    assert not any(c in p.stdout for c in "\x1b\u202e\t\r")
    j = run(log, "--seat", "0", "--budget", TINY, "--seed", SEED, "-f", "json")
    assert json.loads(j.stdout)["seed"] == SEED


def test_a_review_is_the_same_bytes_under_other_hash_seeds_and_differs_by_seed(
        tmp_path: Path) -> None:
    log = write(tmp_path / "m.blog", _events("biriba", 3, n=45))
    out: dict[tuple[str, str, str], bytes] = {}
    for fmt, runs in (("json", (("1", "s"), ("2", "s"), ("2", "t"))),
                      ("html", (("1", "s"), ("2", "s")))):
        for hashseed, seed in runs:
            target = tmp_path / f"{fmt}-{hashseed}-{seed}"
            p = run(log, "--seat", "2", "--budget", TINY, "--seed", seed, "-f", fmt, "-o",
                    target, hashseed=hashseed)
            assert p.returncode == 0, p.stderr
            out[fmt, hashseed, seed] = target.read_bytes()
        assert out[fmt, "1", "s"] == out[fmt, "2", "s"]
    assert out["json", "2", "s"] != out["json", "2", "t"]
    review = json.loads(out["json", "1", "s"])
    assert review["decisions"] > 5


def _morto_twin(events: list[ev.AnyEvent]) -> tuple[list[ev.AnyEvent], int]:
    """The first hand up to its first morto taken (or its end), with the mortos and the stock
    below the cards drawn by then dealt anew."""
    hs = events[1]
    assert isinstance(hs, ev.HandStarted) and hs.mortos
    cut = next(e.seq for e in events[2:]
               if isinstance(e, (ev.MortoTaken, ev.HandEnded, ev.HandStarted)))
    r = Replayer()
    for e in events[:cut]:
        r.step(e)
    used = len(hs.stock) - len(r.state().stock)
    pool = list(hs.stock[used:]) + [c for m in hs.mortos for c in m]
    random.Random(7).shuffle(pool)
    mortos = []
    for m in hs.mortos:
        mortos.append(tuple(pool[:len(m)]))
        del pool[:len(m)]
    twin_hs = msgspec.structs.replace(hs, mortos=tuple(mortos),
                                      stock=hs.stock[:used] + tuple(pool))
    assert twin_hs != hs
    twin = [events[0], twin_hs, *events[2:cut]]
    r = Replayer()
    for e in twin:
        r.step(e)  # still legal
    return twin, cut


@pytest.mark.parametrize(("preset", "players", "seat"), [("burraco", 2, 0), ("mega", 4, 3)])
def test_the_mortos_and_the_unreached_stock_never_enter_the_review(preset: str, players: int,
                                                                   seat: int) -> None:
    events = list(simulate_match(PRESETS[preset], players, seed="r4-morto"))
    twin, cut = _morto_twin(events)
    budget = Budget(samples=3, candidates=3, rounds=1)
    a = review_events(events[:cut], seat, budget=budget, seed="m")
    b = review_events(twin, seat, budget=budget, seed="m")
    assert a.decisions >= 3
    assert a == b


def _refusals(tmp_path: Path) -> list[tuple[list[object], str]]:
    events = _events(n=60)
    good = write(tmp_path / "good.blog", events)
    bad, _ = with_illegal_discard(events)
    illegal = write(tmp_path / "illegal.blog", bad)
    torn = write(tmp_path / "torn.blog", events)
    tear(torn)
    junk = tmp_path / "junk.blog"
    junk.write_bytes(b"\x00junk" * 50)
    return [
        ([illegal, "--seat", "0"], "illegal.blog"),
        ([torn, "--seat", "0"], "torn.blog"),
        ([junk, "--seat", "0"], "junk.blog"),
        ([good, "--seat", "2"], "--seat 2"),
        ([good, "--seat", "0", "--budget", "0"], "--budget"),
        ([good, "--seat", "0", "--budget", "100000x1000r1000"], "--budget"),
        ([good, "--seat", "0", "--budget", "4/0ms"], "--budget"),
    ]


def test_a_refused_review_says_so_in_one_line_and_leaves_the_output_as_it_was(
        tmp_path: Path) -> None:
    cases = _refusals(tmp_path)

    def refuse(i: int) -> None:
        args, named = cases[i]
        target = tmp_path / f"review-{i}.html"
        target.write_text("the review before\n")
        p = run(*args, "--budget" if "--budget" not in args else "--seed",
                TINY if "--budget" not in args else "0", "-f", "html", "-o", target)
        assert p.returncode in (1, 2), (args, p.stderr)
        assert "Traceback" not in p.stderr, p.stderr
        lines = p.stderr.splitlines()
        assert len(lines) == 1 and named in lines[0], (args, p.stderr)
        assert lines[0].startswith("buraco-log: "), p.stderr
        assert p.stdout == ""
        assert target.read_text() == "the review before\n", args

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(refuse, range(len(cases))))
    # no temporary file left beside the outputs
    assert sorted(f.name for f in tmp_path.iterdir() if f.name.startswith("review")) == sorted(
        f"review-{i}.html" for i in range(len(cases)))


def test_a_seed_that_is_not_text_is_refused_in_one_line(tmp_path: Path) -> None:
    # bytes that are not UTF-8 in the argument: an internal error once the seed was hashed
    log = write(tmp_path / "m.blog", _events(n=30))
    p = run(log, "--seat", "0", "--budget", TINY, "--seed", os.fsdecode(b"\xff"), "-o",
            tmp_path / "r.txt")
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr == "buraco-log: error: --seed \\xff: not UTF-8 text; give the seed as text\n"
    assert not (tmp_path / "r.txt").exists()


def test_an_empty_output_name_is_refused_before_the_search(tmp_path: Path) -> None:
    # it said ": is a directory; name the file"
    log = write(tmp_path / "m.blog", _events(n=30))
    p = run(log, "--seat", "0", "--budget", TINY, "-o", "")
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr == ("buraco-log: error: --output '': an empty name; name the file (or '-' "
                        "for stdout)\n")


def test_the_review_never_looks_ahead() -> None:
    # a decision is judged from what was seen before it: the review of a prefix of the log
    # judges its moves exactly as the review of the whole log does
    budget = Budget(samples=2, candidates=3, rounds=1)
    for preset, players, seat in (("biriba", 3, 1), ("burraco", 4, 2)):
        events = list(simulate_match(PRESETS[preset], players, seed="r4-ahead"))[:240]
        whole = review_events(events, seat, budget=budget, seed="q")
        for k in (70, 170):
            part = review_events(events[:k], seat, budget=budget, seed="q")
            assert part.moves == tuple(m for m in whole.moves if m.seq < k)
            assert part.moves


def test_the_card_a_draw_brings_never_enters_the_judgment_of_the_draw() -> None:
    events = list(simulate_match(PRESETS["classic"], 2, seed="r4-draw"))
    r = Replayer()
    for e in events:
        st = r.state()
        if isinstance(e, ev.CardDrawn) and e.seat == 0 and st.hand == 0 and e.seq > 12:
            break
        r.step(e)
    s = e.seq
    hs = events[1]
    assert isinstance(hs, ev.HandStarted)
    at = len(hs.stock) - len(st.stock)  # the position of the card this draw takes
    other = next(i for i in range(len(hs.stock) - 1, at, -1) if hs.stock[i] != hs.stock[at])
    stock = list(hs.stock)
    stock[at], stock[other] = stock[other], stock[at]
    twin = [events[0], msgspec.structs.replace(hs, stock=tuple(stock)), *events[2:s],
            msgspec.structs.replace(e, card=stock[at])]
    budget = Budget(samples=4, candidates=3, rounds=1)
    a = review_events(events[:s + 1], 0, budget=budget, seed="d")
    b = review_events(twin, 0, budget=budget, seed="d")
    assert a.moves[-1].seq == s and a.moves[-1].kind == "draw"
    assert a == b


def test_with_threshold_zero_the_best_move_is_no_mistake() -> None:
    # --threshold 0 flagged every move the expert agreed with: "best ... cost 0.0 ± 0.0 MISTAKE"
    from buraco_log.review import is_mistake, to_text

    assert not is_mistake(0.0, 0.0, 0.0)
    assert is_mistake(0.5, 0.0, 0.0) and not is_mistake(0.5, 0.3, 0.0)
    events = _events(n=120)
    r = review_events(events, 0, budget=Budget(samples=8, candidates=3, rounds=1), seed="z",
                      threshold=0.0)
    assert any(m.cost == 0 for m in r.moves) and any(m.flagged for m in r.moves)
    assert all(m.flagged == (m.cost > 0 and m.low > 0) for m in r.moves)
    assert r.mistakes == sum(m.flagged for m in r.moves)
    assert not any(line.startswith("  !") and " best " in line + " "
                   and "best:" not in line for line in to_text(r).splitlines())


def test_with_one_sample_a_decision_no_move_is_flagged_on_noise() -> None:
    """One play-out gives no standard error (it read 0 ± 0), so every move a single play-out
    happened to score worse was a MISTAKE. Half the samples measure the costs: with four
    (two measuring) the flag is decided as always."""
    from buraco_log.review import is_mistake, to_text

    assert not is_mistake(40.0, 0.0, 25.0, measured=1)
    assert is_mistake(40.0, 0.0, 25.0, measured=2)
    events = _events(n=120)
    one = review_events(events, 0, budget=Budget(samples=1, candidates=3, rounds=1), seed="z",
                        threshold=0.0)
    assert any(m.cost > 0 for m in one.moves), "no costly move: the test shows nothing"
    assert one.mistakes == 0 and not any(m.flagged for m in one.moves)
    assert "with 1 sample the half that measures has 1 or none" in to_text(one)
    two = review_events(events, 0, budget=Budget(samples=4, candidates=3, rounds=1), seed="z",
                        threshold=0.0)
    assert "the half that measures has 1" not in to_text(two)
    assert all(m.flagged == (m.cost > 0 and m.low > 0) for m in two.moves)
