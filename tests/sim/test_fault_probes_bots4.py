"""Fault probes of the bots and the simulator (fourth round): hidden information (a bot decides
alike on tables its seat cannot tell apart, for every preset, the fast path too), an expert bot
that plays every preset legally, a time-capped expert refused by simulate (it made the same seed
give other bytes), ``expert:`` with no budget refused (it was read as the default), and the
simulate command's files: the same bytes for a seed, other bytes for another seed, clean under
`verify` and `audit`, and nothing written when an argument is refused."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log.bots import HeuristicBot, RandomBot, make_bot
from buraco_log.dealer import check_deals
from buraco_log.events import AnyEvent, HandStarted
from buraco_log.expert import Budget, ExpertBot, Tracker, move_key
from buraco_log.moves import quick_moves
from buraco_log.reducer import Replayer, replay
from buraco_log.rules import PRESETS
from buraco_log.simulate import check_bots, simulate_many, simulate_match
from buraco_log.state import State

ROOT = Path(__file__).resolve().parents[2]
CASES = [(name, n) for name, r in PRESETS.items() for n in sorted({2, max(r.player_counts)})]
_MATCHES: dict[tuple[str, int], list[AnyEvent]] = {}


def _match(preset: str, players: int) -> list[AnyEvent]:
    if (preset, players) not in _MATCHES:
        _MATCHES[preset, players] = simulate_match(PRESETS[preset], players, seed="bots4")
    return _MATCHES[preset, players]


def _decisions(events: list[AnyEvent], every: int = 7) -> Iterator[tuple[State, Tracker]]:
    """Every ``every``-th decision with a choice, before it: the state and the public tracker."""
    r = Replayer()
    tr = Tracker()
    for i, ev in enumerate(events):
        st = r.state()
        if i % every == 0 and st.phase in ("draw", "play") and len(quick_moves(st)) > 1:
            yield st, tr
        r.step(ev)
        tr.observe(ev)


def _twin(st: State, known: tuple[tuple[int, ...], ...], rnd: random.Random) -> State:
    """``st`` with every card the seat to move cannot see dealt anew: the other hands (but the
    cards they are known to hold), the stock and the mortos, each keeping its size."""
    seat = st.turn
    hidden_of = [[c for c in h] if s != seat else [] for s, h in enumerate(st.hands)]
    for s, cards in enumerate(known):
        if s != seat:
            for c in cards:
                hidden_of[s].remove(c)
    pool = [c for h in hidden_of for c in h] + list(st.stock) + [c for m in st.mortos for c in m]
    rnd.shuffle(pool)
    it = iter(pool)
    hands = []
    for s, h in enumerate(st.hands):
        if s == seat:
            hands.append(h)
        else:
            keep = list(known[s]) if s < len(known) else []
            hands.append(tuple(keep + [next(it) for _ in range(len(h) - len(keep))]))
    stock = tuple(next(it) for _ in st.stock)
    mortos = tuple(tuple(next(it) for _ in m) for m in st.mortos)
    assert next(it, None) is None
    return msgspec.structs.replace(st, hands=tuple(hands), stock=stock, mortos=mortos)


def _choices(st: State, bot_name: str) -> tuple[object, object]:
    """The move of a fresh bot by the full list, and (heuristic) by the fast path."""
    moves = quick_moves(st)
    bot = HeuristicBot() if bot_name == "heuristic" else RandomBot()
    full = move_key(bot.choose(st, moves, random.Random(11)))
    if bot_name != "heuristic":
        return full, None
    fast = HeuristicBot().fast_move(st, st.stock[0] if st.stock else None, lambda: ())
    return full, None if fast is None else move_key(fast)


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_the_bots_decide_alike_on_tables_the_seat_cannot_tell_apart(preset: str,
                                                                    players: int) -> None:
    rnd = random.Random(f"{preset}{players}")
    seen = 0
    for st, tr in _decisions(_match(preset, players)):
        twin = _twin(st, tr.known, rnd)
        assert twin != st or not st.stock
        for name in ("heuristic", "random"):
            assert _choices(st, name) == _choices(twin, name), (preset, players, st.seq, name)
        seen += 1
    assert seen >= 5


def test_the_probe_sees_a_change_of_the_seats_own_hand() -> None:
    # The control: a twin that also changes the seat's own hand is told apart somewhere.
    differ = 0
    for st, _ in _decisions(_match("burraco", 2), every=3):
        other = (st.turn + 1) % len(st.hands)
        hands = list(st.hands)
        hands[st.turn], hands[other] = hands[other], hands[st.turn]
        swapped = msgspec.structs.replace(st, hands=tuple(hands))
        if not quick_moves(swapped):  # the other hand has no card to play here
            continue
        differ += _choices(st, "heuristic") != _choices(swapped, "heuristic")
    assert differ > 0


def test_the_expert_decides_alike_with_the_mortos_stock_and_hands_dealt_anew() -> None:
    # burraco, 4 players: mortos, partners, and cards known from pile pickups
    rnd = random.Random(4)
    tried = 0
    for st, tr in _decisions(_match("burraco", 4), every=23):
        twin = _twin(st, tr.known, rnd)
        keys = []
        for table in (st, twin):
            bot = ExpertBot(Budget(samples=2, candidates=2, rounds=1))
            bot.tracker = _copy(tr)
            keys.append(move_key(bot.choose(table, quick_moves(table), random.Random(3))))
        assert keys[0] == keys[1], st.seq
        tried += 1
        if tried == 6:
            break
    assert tried == 6


def _copy(tr: Tracker) -> Tracker:
    out = Tracker()
    out.pile = list(tr.pile)
    out.shown = [list(s) for s in tr.shown]
    return out


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_an_expert_at_the_table_plays_every_preset_legally(preset: str, players: int) -> None:
    bots = ("expert:2x2r1", "heuristic", "random")[:players]
    events = simulate_match(PRESETS[preset], players, seed="x4", bots=bots)
    final = replay(events)  # every event again, through the reducer
    assert final.phase == "over" and final.winner is not None
    assert check_deals(events) == []
    chosen = {getattr(e, "seat", None) for e in events[2:]}
    assert 0 in chosen  # the expert's seat made moves


# -- the bot names ------------------------------------------------------------------------------


def test_expert_with_an_empty_budget_is_refused_not_read_as_the_default() -> None:
    with pytest.raises(ValueError, match="budget ''"):
        make_bot("expert:")
    assert isinstance(make_bot("expert"), ExpertBot)
    with pytest.raises(ValueError, match="unknown bot"):
        make_bot("random:")


def test_a_time_capped_expert_is_refused_by_the_simulator(tmp_path: Path) -> None:
    # it searched as many samples as the machine managed in time: the same seed, other bytes
    for call in (lambda: check_bots(["expert:64/3ms"]),
                 lambda: simulate_match(PRESETS["classic"], 2, seed="t",
                                        bots=["heuristic", "expert:8/5ms"]),
                 lambda: simulate_many(PRESETS["classic"], 2, 1, seed="t",
                                       out_dir=tmp_path / "o", bots=["expert:8x2/5ms"])):
        with pytest.raises(ValueError, match="time cap"):
            call()
    assert not (tmp_path / "o").exists()
    check_bots(["expert:8x2", "random", "heuristic"])  # no cap: accepted


# -- the command --------------------------------------------------------------------------------


def run(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("bot", ["expert:", "expert:64/3ms", "random:"])
def test_simulate_refuses_a_bad_bot_in_one_line_and_writes_nothing(tmp_path: Path,
                                                                  bot: str) -> None:
    p = run("simulate", "--bot", bot, "-o", tmp_path / "out", "--no-progress", cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"buraco-log: error: --bot {bot}:"), p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()


def test_simulate_files_are_a_function_of_the_seed_and_pass_verify_and_audit(
        tmp_path: Path) -> None:
    dirs = {}
    for name, seed in (("a", "s1"), ("b", "s1"), ("c", "s2")):
        p = run("simulate", "--rules", "thirteen-quick", "--players", "4", "--matches", "2",
                "--seed", seed, "--bot", "heuristic", "--bot", "random", "-o", name, "-j", "1",
                "--no-progress", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        dirs[name] = {f.name: f.read_bytes() for f in sorted((tmp_path / name).iterdir())}
    assert len(dirs["a"]) == 2 and dirs["a"] == dirs["b"]
    assert dirs["a"].keys() == dirs["c"].keys()
    assert all(dirs["a"][k] != dirs["c"][k] for k in dirs["a"])
    for f in sorted((tmp_path / "a").iterdir()):
        v = run("verify", f, cwd=tmp_path)
        assert v.returncode == 0, v.stdout + v.stderr
    a = run("audit", tmp_path / "a", cwd=tmp_path)
    assert a.returncode == 0, a.stdout + a.stderr


def test_simulate_refuses_a_seed_that_is_not_text_and_writes_nothing(tmp_path: Path) -> None:
    # bytes that are not UTF-8 in the argument: an internal error once the seed was hashed
    p = run("simulate", "--seed", os.fsdecode(b"a\xff"), "-o", "out", "--no-progress",
            cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr == "buraco-log: error: --seed a\\xff: not UTF-8 text; give the seed as text\n"
    assert not (tmp_path / "out").exists()


def test_simulate_overwrite_names_a_directory_in_a_logs_place(tmp_path: Path) -> None:
    # os.replace failed on it, and the message named the temporary file: "LOG.tmp: Is a
    # directory"
    (tmp_path / "out" / "classic-2p-000000.blog").mkdir(parents=True)
    p = run("simulate", "-o", "out", "--overwrite", "--no-progress", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    lines = p.stderr.splitlines()
    assert lines == [f"buraco-log: error: {Path('out', 'classic-2p-000000.blog')}: is a "
                     "directory; --overwrite replaces logs, not directories"], p.stderr
    assert sorted(f.name for f in (tmp_path / "out").iterdir()) == ["classic-2p-000000.blog"]


def test_no_more_workers_than_cpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --jobs 40 started 40 worker processes on a 2-CPU machine (each its own interpreter)
    from buraco_log.audit import pool

    asked: list[int] = []
    real = pool.worker_pool

    def spy(n: int, *args: Any, **kwargs: Any) -> Any:
        asked.append(n)
        return real(n, *args, **kwargs)

    monkeypatch.setattr(pool, "worker_pool", spy)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    one = simulate_many(PRESETS["thirteen-quick"], 2, 6, seed="w", out_dir=tmp_path / "a",
                        jobs=40)
    assert asked == [2]
    assert one == simulate_many(PRESETS["thirteen-quick"], 2, 6, seed="w",
                                out_dir=tmp_path / "b", jobs=1)


def test_simulate_refuses_an_empty_output_name(tmp_path: Path) -> None:
    # an unset variable: Path("") is ".", and the logs went into the working directory
    p = run("simulate", "-o", "", "--no-progress", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", p.stderr
    assert p.stderr == ("buraco-log: error: --output '': an empty name; name the directory the "
                        "logs go to\n")
    assert list(tmp_path.iterdir()) == []


def test_a_high_target_the_rules_allow_is_played_to_the_end() -> None:
    # a house rule of 1,000,000 points was refused "still undecided after 400 hands"
    from buraco_log.simulate import MAX_HANDS, max_hands_for

    assert all(max_hands_for(r) == MAX_HANDS for r in PRESETS.values())  # presets: unchanged
    high = msgspec.structs.replace(PRESETS["classic"], name="classic+high", target_score=60_000)
    events = simulate_match(high, 2, seed="high")
    final = replay(events)
    assert final.phase == "over" and max(final.totals) >= 60_000
    assert sum(isinstance(e, HandStarted) for e in events) > MAX_HANDS
    assert max_hands_for(msgspec.structs.replace(high, target_score=1_000_000)) == 20_000


def test_a_run_that_fails_before_its_first_match_leaves_no_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the output directory was made first and stayed, empty, after the error
    from buraco_log import simulate

    monkeypatch.setattr(simulate, "max_hands_for", lambda rules: 1)
    for out in (tmp_path / "new" / "out", tmp_path):
        with pytest.raises(simulate.SimulationError, match="undecided after 1 hands"):
            simulate_many(PRESETS["classic"], 2, 2, seed="x", out_dir=out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]  # the one there before stays
    assert list((tmp_path / "new").iterdir()) == []


def test_one_draw_turn_counts_once_in_the_stall_guard() -> None:
    # The simulator asks the full list when the fast path's move is refused (or it has none):
    # the same draw turn was counted twice, and the stall guard gave up the pile a turn early.
    st = next(s for s, _ in _decisions(_match("thirteen", 2), every=1) if s.phase == "draw")
    bot = HeuristicBot()
    bot.fast_move(st, st.stock[0], lambda: ())
    bot.choose(st, quick_moves(st), random.Random(0))
    bot.choose(st, quick_moves(st), random.Random(0))
    assert bot.stalled == 0
    # a later draw turn with the stock unchanged (the pile passed back and forth) still counts
    later = msgspec.structs.replace(st, seq=st.seq + 2)
    bot.choose(later, quick_moves(later), random.Random(0))
    assert bot.stalled == 1
