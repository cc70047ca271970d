"""Probe 46 of `buraco-log review`.

- A damaged log's refusal had no rule: its line ended without `[log.chain]`, and its JSON error
  (`--format json`) was `{"code": "error", "message", "exit_status"}` alone, where `replay`
  and `moves` give the code `log.format`, the rule, the kind, the byte offset (or line) and
  the seq. It now carries them, for damage mid-log and before the first event, binary or
  JSON Lines.
- docs/review.md named 7 of the JSON review's 16 top-level fields (not `version`, `match_id`,
  `rules`, `seat`, `player`, `side`, `decisions`, `mistakes` nor `lost`), none of a budget's,
  an alternative's `move` and `event`, nor a hand's: every field a review writes is now in
  its tables.
- A hand end with a wrong recorded score (examples/disputes/wrong-score.log, seq 126 of 312)
  stopped the review as an illegal move: refused, or with --partial the 40 decisions of hand
  0 alone, where `replay`, `moves` and `view` go on with the recomputed score. The review now
  covers every decision, its note names the seq and rule, and the status is 1 (a finding).
- Held: every preset's sim log gives the same review bytes in text, JSON and HTML with `-j 1`
  and `-j 2`; a time cap of 50 ms per decision with two cores shared by a dozen processes took
  a median of 52 ms and at most 75 ms (the docs say it is looked at between samples).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli.probes import ROOT, cli_batch

DISPUTES = ROOT / "examples" / "disputes"
SIM = ROOT / "examples" / "sim"
QUICK = ["--seat", "0", "--budget", "2x2r1"]


def _torn_jsonl(tmp_path: Path) -> Path:
    from buraco_log.audit import load
    from buraco_log.jsonl import event_to_json

    lines = [json.dumps(event_to_json(e)) for e in load(SIM / "classic-2p-000000.blog")[:120]]
    lines[80] = "{garbage"
    log = tmp_path / "torn.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


def _damaged_first(tmp_path: Path) -> Path:
    data = bytearray((SIM / "classic-2p-000000.blog").read_bytes())
    for i in range(20, len(data)):  # every byte past the 20-byte file header
        data[i] ^= 0x5A
    log = tmp_path / "first.blog"
    log.write_bytes(bytes(data))
    return log


def test_a_damaged_logs_refusal_names_its_rule_offset_and_seq_as_replay_does(
        tmp_path: Path) -> None:
    logs = [DISPUTES / "tampered.log", _torn_jsonl(tmp_path), _damaged_first(tmp_path)]
    runs: list[list[object]] = []
    for log in logs:
        runs += [["review", log, *QUICK, "--format", "json"], ["replay", log, "--format", "json"]]
    done = cli_batch(runs)
    for log, review, replay in zip(logs, done[::2], done[1::2], strict=True):
        assert (review.returncode, replay.returncode) == (1, 1), (log, review.stderr)
        got: dict[str, Any] = json.loads(review.stdout)["error"]
        want: dict[str, Any] = json.loads(replay.stdout)["error"]
        assert got["code"] == want["code"] == "log.format", (log, got)
        for key in ("rule", "kind", "seq", "line", "offset", "path"):
            if key in want:
                assert got.get(key) == want[key], (log, key, got)
        [line] = review.stderr.splitlines()
        assert line.endswith(f"[{want['rule']}]"), line
        assert f"seq {want['seq']}" in line and "Traceback" not in review.stderr
    assert json.loads(done[0].stdout)["error"]["rule"] == "log.chain"


def _keys(value: Any, path: str, out: dict[str, set[str]]) -> None:
    """Each object's keys, by where the object sits (``moves[].alternatives[]``)."""
    if isinstance(value, dict):
        out.setdefault(path, set()).update(value)
        for k, v in value.items():
            if k not in ("played_event", "best_event", "event"):  # the log's own events
                _keys(v, f"{path}.{k}" if path else k, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, f"{path}[]", out)


def test_every_field_of_the_json_review_is_in_the_docs(tmp_path: Path) -> None:
    [done] = cli_batch([["review", DISPUTES / "illegal.log", *QUICK, "--partial", "--format",
                         "json"]])
    assert done.returncode == 1, done.stderr  # written, and a finding
    review = json.loads(done.stdout)
    assert review["moves"] and review["hands"] and review["note"]
    found: dict[str, set[str]] = {}
    _keys(review, "", found)
    assert set(found) == {"", "budget", "moves[]", "moves[].alternatives[]", "hands[]"}
    text = (ROOT / "docs" / "review.md").read_text("utf-8")
    section = text[text.index("`--format json` returns"):text.index("`--format html` writes")]
    named = set(re.findall(r"`([a-z_]+)`", section))
    missing = {where: sorted(keys - named) for where, keys in found.items() if keys - named}
    assert missing == {}, missing


# -- the review page's heading with right-to-left names -----------------------------------------

MATCH, RULES = "\u05de\u05e9\u05d7\u05e7", "\u05e7\u05dc\u05d0\u05e1\u05d9"  # Hebrew words
NAME = "\u05d0\u05d1\u05d9"


@pytest.mark.xdist_group("browser")  # one Chromium, with tests/view/test_browser.py
def test_the_review_panels_heading_draws_a_right_to_left_id_before_its_rules(
        browser: Any, tmp_path: Path) -> None:
    """"review of seat 0 (NAME, side 0) in match ID (RULES)": a right-to-left id and rules'
    name made one right-to-left run, the rules drawn first."""
    import msgspec

    from buraco_log.audit import load
    from buraco_log.events import MatchStarted
    from buraco_log.expert import Budget
    from buraco_log.review import review_events, review_page
    from tests.view.pages import WORD_LEFT

    events = load(SIM / "classic-2p-000000.blog")[:40]
    start = events[0]
    assert isinstance(start, MatchStarted)
    events[0] = msgspec.structs.replace(
        start, match_id=MATCH, rules=msgspec.structs.replace(start.rules, name=RULES),
        players=(msgspec.structs.replace(start.players[0], name=NAME), start.players[1]))
    review = review_events(events, 0, budget=Budget(samples=2, candidates=2))
    page = tmp_path / "review.html"
    page.write_text(review_page(events, review), encoding="utf-8")
    browser.get("about:blank")
    browser.get_log("browser")
    browser.get(page.as_uri() + "#seq=10")
    head = browser.find_element("css selector", "#review .rv-head")
    assert head.text.startswith(f"review of seat 0 ({NAME}, side 0) in match {MATCH} ({RULES})")
    left = browser.execute_script(WORD_LEFT, "#review .rv-head",
                                  ["review", NAME, "side 0", "match", MATCH, RULES, "seed"])
    assert None not in left and left == sorted(left), left
    assert browser.get_log("browser") == []


def test_a_wrong_recorded_score_is_noted_and_the_review_goes_on(tmp_path: Path) -> None:
    import msgspec

    from buraco_log.audit import load
    from buraco_log.events import HandEnded
    from tests.brokenlogs import write

    log = DISPUTES / "wrong-score.log"
    events = load(log)
    wrong = next(e for e in events if e.seq == 126)
    assert isinstance(wrong, HandEnded) and wrong.scores is not None
    unscored = write(tmp_path / "unscored.blog", [
        msgspec.structs.replace(e, scores=None) if e is wrong else e for e in events])
    done = cli_batch([["review", log, *QUICK, "--format", "json"],
                      ["review", unscored, *QUICK, "--format", "json"]])
    assert done[1].returncode == 0, done[1].stderr  # the same match, no score recorded there
    assert done[0].returncode == 1, done[0].stderr  # written, and a finding
    got, want = json.loads(done[0].stdout), json.loads(done[1].stdout)
    assert got["moves"] == want["moves"] and max(m["seq"] for m in got["moves"]) > 126
    assert got["note"].startswith("seq 126 [score.mismatch]: ") and want["note"] is None
    assert "goes on with the recomputed score" in got["note"]
    # on stderr the rule ends the line, as on every error and note line
    said = got["note"].replace("seq 126 [score.mismatch]: ", "seq 126: ", 1)
    assert done[0].stderr == f"buraco-log: note: {log}: {said} [score.mismatch]\n"
