"""Probe 44: `show` says how a hand ended as `replay` says it.

`show`'s "ended" column said "stock out" (the reason code's name) of mega's hands that end
with 2 cards still in the stock (RULES.md §8), where `replay` says "hand ended (the stock is
down to its last 2 cards)". The column now says "stock end" where the stock is not then empty,
with replay's words below the table; the JSON keeps ``reason`` and adds each hand's ``ended``
(replay's words) and the rules' ``stock_floor``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from buraco_log.audit import load, show_log
from buraco_log.events import HandEnded
from buraco_log.timeline import Timeline
from tests.cli.probes import ROOT, cli

SIM = ROOT / "examples" / "sim"
MEGA = SIM / "mega-4p-000000.blog"  # hands 3 and 5 end by the stock, 2 cards left
THIRTEEN = ROOT / "examples" / "disputes" / "fair-thirteen.log"  # hand 1 ends by the stock


def _replay_words(log: Path) -> dict[int, str]:
    """hand -> why it ended, from replay's own line for its hand end."""
    tl = Timeline(load(log))
    out = {}
    hand = -1
    for ev in tl.events:
        hand = getattr(ev, "hand", hand)
        if isinstance(ev, HandEnded):
            line = tl.recent(ev.seq, 1)[0]
            found = re.search(r"hand ended \((.*?)\)", line)
            assert found is not None, line
            out[hand] = found[1]
    return out


@pytest.mark.parametrize("log", sorted(SIM.glob("*.blog")), ids=lambda p: p.name)
def test_every_hands_ended_words_are_replays(log: Path) -> None:
    s = show_log(log)
    assert {h.hand: h.ended for h in s.hands} == _replay_words(log)


def test_show_of_megas_stock_end_does_not_call_it_out_and_says_replays_words() -> None:
    text = cli("show", MEGA)
    assert text.returncode == 0, text.stderr
    rows = [line.split() for line in text.stdout.splitlines() if re.match(r"  \d+ ", line)]
    ended = {int(r[0]): " ".join(r[2:4]) for r in rows}
    assert ended == {0: "went out", 1: "went out", 2: "went out", 3: "stock end",
                     4: "went out", 5: "stock end"}
    words = _replay_words(MEGA)[3]
    assert words == "the stock is down to its last 2 cards"
    assert f"  stock end: hand ended ({words})\n" in text.stdout
    assert "stock out" not in text.stdout
    data = json.loads(cli("show", MEGA, "-f", "json").stdout)
    assert data["stock_floor"] == 2
    assert [(h["reason"], h["ended"]) for h in data["hands"] if h["hand"] in (3, 5)] == [
        ("stock_out", words)] * 2  # the reason code kept, the words added


def test_show_of_an_empty_stock_keeps_stock_out_and_adds_no_line() -> None:
    text = cli("show", THIRTEEN)
    assert text.returncode == 0, text.stderr
    assert re.search(r"\n  1 +\S+ +stock out ", text.stdout), text.stdout
    assert "stock end" not in text.stdout
    assert _replay_words(THIRTEEN)[1] == "the stock ran out"
