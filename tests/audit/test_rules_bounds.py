"""Issue 13 item 5: every knob of the rules has bounds, in one place (``rules.BOUNDS`` and
``rules.LENGTHS``), checked before anything is sized from a rules value, by every reader: a
log's match start (binary and JSON Lines), TOML house rules, the dealer, the audit."""

from __future__ import annotations

import functools
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from buraco_log import audit, rules
from buraco_log.dealer import deal, hand_key
from buraco_log.errors import RulesError
from buraco_log.events import AnyEvent, MatchStarted
from buraco_log.jsonl import binary_to_jsonl
from buraco_log.rules import BOUNDS, LENGTHS, PRESETS, Bonuses, CardPoints, Rules, check_bounds
from tests import brokenlogs as bl

ROOT = Path(__file__).resolve().parents[2]
BASE = PRESETS["burraco"]


@functools.cache
def fair() -> tuple[AnyEvent, ...]:
    return tuple(bl.fair_match("thirteen-quick", 2, 1))


def with_knob(r: Rules, knob: str, value: Any) -> Rules:
    """``r`` with one knob (``points.joker`` for a nested one) set, unvalidated."""
    if "." in knob:
        outer, inner = knob.split(".")
        return msgspec.structs.replace(
            r, **{outer: msgspec.structs.replace(getattr(r, outer), **{inner: value})})
    if knob == "player_counts":
        value = (value,)
    return msgspec.structs.replace(r, **{knob: value})


def knobs_of(struct: type[msgspec.Struct], prefix: str = "") -> dict[str, Any]:
    """Every knob with its default value, nested knobs as ``outer.inner``."""
    out: dict[str, Any] = {}
    for f in msgspec.structs.fields(struct):
        default = f.default
        if isinstance(default, CardPoints | Bonuses):
            out.update(knobs_of(type(default), f"{f.name}."))
        else:
            out[prefix + f.name] = default
    return out


def test_every_integer_and_list_knob_has_bounds_and_every_text_knob_a_length() -> None:
    knobs = knobs_of(Rules)
    knobs["name"] = "x"  # the one knob without a default
    for knob, default in knobs.items():
        if isinstance(default, bool):
            continue
        if isinstance(default, int | tuple):
            assert knob in BOUNDS, f"give the knob {knob!r} bounds in rules.BOUNDS"
        elif isinstance(default, str) and knob == "name":
            assert knob in LENGTHS
    assert set(BOUNDS) <= set(knobs), "BOUNDS names a knob that does not exist"


def test_every_preset_is_within_bounds() -> None:
    for r in PRESETS.values():
        check_bounds(r)


@pytest.mark.parametrize("knob", sorted(BOUNDS))
def test_a_knob_at_its_edges_is_accepted_and_one_beyond_is_refused(knob: str) -> None:
    lo, hi = BOUNDS[knob]
    check_bounds(with_knob(BASE, knob, lo))  # player_counts: each entry (check() then
    check_bounds(with_knob(BASE, knob, hi))  # asks for one of 2, 3, 4, 6)
    for bad in (lo - 1, hi + 1, 10**9, -(2**70), 2**70):
        with pytest.raises(RulesError, match="out of bounds") as exc:
            check_bounds(with_knob(BASE, knob, bad))
        assert exc.value.field == knob


def test_the_lengths_of_the_name_and_the_player_counts_are_bounded() -> None:
    check_bounds(msgspec.structs.replace(BASE, name="x" * LENGTHS["name"][1]))
    check_bounds(msgspec.structs.replace(BASE, player_counts=(2, 3, 4, 6)))
    for bad in ("", "x" * (LENGTHS["name"][1] + 1)):
        with pytest.raises(RulesError, match="length") as exc:
            check_bounds(msgspec.structs.replace(BASE, name=bad))
        assert exc.value.field == "name"
    for counts in ((), (2, 2, 2, 2, 2)):
        with pytest.raises(RulesError, match="length"):
            check_bounds(msgspec.structs.replace(BASE, player_counts=counts))



@pytest.mark.parametrize("knob", ["hand_size", "points.joker", "bonuses.going_out"])
def test_a_rule_set_that_passed_once_never_lets_a_look_alike_through(knob: str) -> None:
    """``rules.check`` remembers the rule sets that passed; ``True`` equals ``1`` and hashes
    alike, but is no count, and an int past 64 bits has no encoding: both are refused every
    time, however often the valid rule set was checked before."""
    good = with_knob(BASE, knob, 1)
    rules.check(good, 2)
    rules.check(good, 2)  # remembered
    for bad in (True, 2**70, 1.0):
        for _ in range(2):
            with pytest.raises(RulesError) as exc:
                rules.check(with_knob(good, knob, bad), 2)
            assert exc.value.field == knob
    with pytest.raises(RulesError, match="not 3"):
        rules.check(good, 3)  # the players are part of what was checked

@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(BOUNDS)), st.integers(-(2**70), 2**70))
def test_any_integer_for_any_knob_is_accepted_exactly_within_its_bounds(
        knob: str, value: int) -> None:
    lo, hi = BOUNDS[knob]
    r = with_knob(BASE, knob, value)
    if lo <= value <= hi:
        check_bounds(r)
    else:
        with pytest.raises(RulesError) as exc:
            check_bounds(r)
        assert exc.value.field == knob
        assert len(str(exc.value)) < 120  # a 22-digit value is shortened, not printed whole


def test_house_rules_from_toml_are_bounded(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('preset = "burraco"\ntarget_score = 1000000\n[points]\njoker = 100000\n')
    assert rules.load_toml(good).target_score == 1_000_000
    for body, field in (("jokers = 1000000000", "jokers"),
                        ("target_score = 1000001", "target_score"),
                        ("[bonuses]\ngoing_out = -1", "bonuses.going_out")):
        bad = tmp_path / "bad.toml"
        bad.write_text(f'preset = "burraco"\n{body}\n')
        with pytest.raises(RulesError) as exc:
            rules.load_toml(bad)
        assert exc.value.field == field and str(bad) in str(exc.value)


def test_the_dealer_refuses_rules_out_of_bounds_before_building_a_deck() -> None:
    bomb = with_knob(BASE, "jokers", 10**9)
    start = time.perf_counter()
    with pytest.raises(RulesError, match="jokers"):
        deal(bomb, 2, 0, 0, hand_key("s", (), 0), seq=1)
    assert time.perf_counter() - start < 1.0


def bomb_events(knob: str = "jokers", value: int = 10**9) -> list[AnyEvent]:
    events = list(fair()[:40])
    start = events[0]
    assert isinstance(start, MatchStarted)
    events[0] = msgspec.structs.replace(start, rules=with_knob(start.rules, knob, value))
    return events


def _limit_memory() -> None:
    limit = 2 << 30  # 2 GiB of address space: the bomb took 9.3 GB
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.parametrize("fmt", ["blog", "jsonl"])
def test_a_ten_kb_log_whose_rules_say_a_billion_jokers_audits_at_once(
        tmp_path: Path, fmt: str) -> None:
    path = bl.write(tmp_path / "bomb.blog", bomb_events())
    if fmt == "jsonl":
        binary_to_jsonl(path, tmp_path / "bomb.jsonl")
        path = tmp_path / "bomb.jsonl"
    assert path.stat().st_size < 20_000
    out = subprocess.run([sys.executable, "-m", "cli.main", "audit", "--format", "json",
                          str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60,
                         preexec_fn=_limit_memory, check=False)
    assert out.returncode == 1, out.stderr
    v = msgspec.json.decode(out.stdout, type=audit.Verdict)
    rules_found = {(f.section, f.rule) for f in v.findings}
    assert ("legality", "match.rules") in rules_found
    assert any("jokers" in f.message and "out of bounds" in f.message for f in v.findings)


def test_a_log_within_bounds_audits_clean() -> None:
    events = list(fair())
    v = audit.audit_events(events, audit.Integrity("sealed", "binary", len(events), 1, ""))
    assert v.ok, v.findings
