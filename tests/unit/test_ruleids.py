"""Every rule id raised anywhere in the code is documented once in buraco_log.ruleids."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from buraco_log.ruleids import RULES, describe

SRC = Path(__file__).resolve().parents[2] / "buraco_log"
# Rule ids look like "family.name"; these modules raise or report them.
RULE_SOURCES = (
    "reducer.py",
    "melds.py",
    "dealer.py",
    "moves.py",
    "scoring.py",
    *(f"audit/{p.name}" for p in sorted((SRC / "audit").glob("*.py"))),  # a package
    "signing/check.py",
    "timeline.py",
)
RULE_ID = re.compile(r"""["']([a-z_]+\.[a-z_]+)["']""")
# module names in imports and messages, and file names
NOT_RULES = {"buraco_log.reducer", "buraco_log.jsonl", "config.toml"}


def raised_rule_ids() -> set[str]:
    found: set[str] = set()
    for name in RULE_SOURCES:
        text = (SRC / name).read_text()
        found |= {m for m in RULE_ID.findall(text) if m not in NOT_RULES}
    return found


def log_kinds() -> set[str]:
    """Kinds of LogFormatError the log and JSON Lines readers and writers raise."""
    kinds: set[str] = {"format", "jsonl"}  # the defaults of LogFormatError and JsonlReader
    for name, position in (("log.py", 1), ("jsonl.py", 2)):
        tree = ast.parse((SRC / name).read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for kw in node.keywords:
                if kw.arg == "kind" and isinstance(kw.value, ast.Constant):
                    kinds.add(str(kw.value.value))
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "_error"
                and len(node.args) > position
                and isinstance(node.args[position], ast.Constant)
            ):
                kinds.add(str(node.args[position].value))
    return kinds


def test_every_rule_id_raised_in_the_code_is_documented() -> None:
    missing = sorted(raised_rule_ids() - set(RULES))
    assert not missing, f"document these in buraco_log/ruleids.py: {missing}"


def test_every_log_integrity_kind_is_documented_as_a_log_rule() -> None:
    missing = sorted(f"log.{k}" for k in log_kinds() if f"log.{k}" not in RULES)
    assert not missing, f"document these in buraco_log/ruleids.py: {missing}"


def test_the_scan_finds_the_rules_it_should() -> None:
    ids = raised_rule_ids()
    assert {"turn.not_your_turn", "meld.run_wraps", "deal.mismatch", "score.mismatch"} <= ids
    assert {"chain", "torn", "damage", "seq"} <= log_kinds()


def test_descriptions_are_plain_one_line_sentences() -> None:
    for rule, text in RULES.items():
        assert "\n" not in text and text.endswith((".", "?", ")")), rule
        assert len(text) < 300, rule


def test_an_unknown_rule_id_is_described_as_unknown() -> None:
    assert "no description" in describe("no.such_rule")
