"""docs/rules.md documents every knob of the rules value and every rule id of issue 14."""

from __future__ import annotations

import re
from pathlib import Path

from buraco_log.rules import PRESETS, Rules

DOC = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")


def test_every_knob_of_the_rules_value_is_in_the_knob_table() -> None:
    names = [f for f in Rules.__struct_fields__ if f not in ("name", "points", "bonuses")]
    for group in ("points", "bonuses"):
        names += [f"{group}.{g}" for g in getattr(PRESETS["classic"], group).__struct_fields__]
    missing = [n for n in names if f"| `{n}` |" not in DOC]
    assert missing == [], f"add these knobs to docs/rules.md: {missing}"


def test_every_preset_and_the_new_rule_ids_are_documented() -> None:
    for name in PRESETS:
        assert f"`{name}`" in DOC
    for rule in ("stock.pile_can_be_taken", "match.carried_totals", "pile.must_use_top"):
        assert rule in DOC


def test_every_test_file_the_rulings_name_exists() -> None:
    tests = Path(__file__).resolve().parents[1]
    named = set(re.findall(r"`(test_[a-z0-9_]+\.py)`", DOC))
    assert "test_scenarios_probe38_floor.py" in named  # the pattern finds the citations
    missing = sorted(n for n in named if not any(tests.rglob(n)))
    assert missing == [], f"docs/rules.md cites test files that do not exist: {missing}"
