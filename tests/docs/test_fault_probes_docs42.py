"""Probe round 42 of the docs: what signing.md says about which findings need keys.

docs/signing.md listed `sign.key_mismatch` among the findings given "once keys are given",
while the checker gives it with or without a keyring. These tests read the page's two
paragraphs and hold each rule the checker gives without keys to the "with or without keys" one.
"""

from __future__ import annotations

import re
from pathlib import Path

from buraco_log import events as ev
from buraco_log import ruleids
from buraco_log.log import read_events
from buraco_log.signing import check, record

ROOT = Path(__file__).resolve().parents[2]
SIGNING = ROOT / "docs" / "signing.md"
LOG = ROOT / "examples" / "disputes" / "illegal.log"


def _paragraph(starting: str) -> str:
    """The paragraph of signing.md that starts with ``starting``."""
    for paragraph in SIGNING.read_text().split("\n\n"):
        if paragraph.startswith(starting):
            return paragraph
    raise AssertionError(f"signing.md has no paragraph starting {starting!r}")


def _rules(text: str) -> set[str]:
    return set(re.findall(r"`(sign\.[a-z_]+)`", text))


def test_every_sign_rule_id_is_on_the_signing_page() -> None:
    documented = _rules(SIGNING.read_text())
    wanted = {rule for rule in ruleids.RULES if rule.startswith("sign.")}
    assert wanted, "ruleids holds no sign.* rule"
    assert wanted - documented == set()


def test_a_rule_given_without_keys_is_not_said_to_need_them() -> None:
    events = list(read_events(str(LOG)))
    start = events[0]
    assert isinstance(start, ev.MatchStarted)
    # A signature by another key than the start records (none, here): no keyring given.
    other = record.SignedHead(start.match_id, events[-1].seq, b"\0" * 32, "f" * 16, b"\0" * 64)
    _, problems = check.check(events, [other, other], keyring=None)
    given = {problem.rule for problem in problems}
    assert {"sign.key_mismatch", "sign.duplicate"} <= given, given
    with_keys = _rules(_paragraph("Always, whatever the setting, once keys are given"))
    without = _rules(_paragraph("Always, with or without keys"))
    assert given & with_keys == set()
    assert given - without == set()
