"""The real command line over logs written by hand from docs/log-format.md, as an outside
checker writes them: every preset's hand gone out (its scores worked out from RULES.md §9),
a stock-out, and one refused move of each main kind, each with the rule and seq it must name.

The logs and their expected outcomes are tests/outside/scenarios/ (made by
``python -m tests.outside.make_scenarios``, which uses no buraco_log code).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent / "scenarios"
EXPECTED: dict[str, dict[str, Any]] = json.loads((HERE / "expected.json").read_text())
PRESETS = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
           "burako")
KINDS = ("went-out", "wrong-score", "out-of-turn", "discard-not-held", "bad-meld",
         "layoff-no-meld", "layoff-not-fitting", "pile", "morto-too-early", "draw-exhausted",
         "stock-out", "out-without-canastra")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def audited() -> dict[str, dict[str, Any]]:
    """One `audit -f json` over the whole directory: every log reported on its own."""
    out = cli("audit", "-f", "json", "-j", "1", str(HERE))
    assert out.returncode == 1, out.stderr  # the directory holds illegal logs
    return {Path(log["path"]).stem: log for log in json.loads(out.stdout)}


def test_every_preset_has_every_kind_of_scenario() -> None:
    for preset in PRESETS:
        for kind in KINDS:
            assert f"{preset}-{kind}" in EXPECTED, (preset, kind)
    assert {p.stem for p in HERE.glob("*.jsonl")} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_audit_names_the_rule_and_seq_each_scenario_expects(
        audited: dict[str, dict[str, Any]], name: str) -> None:
    want = EXPECTED[name]
    log = audited[name]
    findings = log["findings"]
    if want["exit"] == 0:
        assert log["ok"] and findings == [], findings
        return
    assert not log["ok"]
    assert [(f["rule"], f["seq"]) for f in findings][:1] == [(want["rule"], want["seq"])], \
        findings


def test_hands_gone_out_score_as_worked_out_by_hand(
        audited: dict[str, dict[str, Any]]) -> None:
    """The went-out logs record the scores worked out from RULES.md §9; a recorded score off by
    5 is the finding `score.mismatch`, naming the hand-end seq and the recomputed score."""
    for preset in PRESETS:
        assert audited[f"{preset}-went-out"]["ok"], preset
        bad = audited[f"{preset}-wrong-score"]["findings"]
        assert bad and bad[0]["rule"] == "score.mismatch", (preset, bad)
        m = re.search(r"side 0: recorded (-?\d+), recomputed (-?\d+)", bad[0]["message"])
        assert m, bad[0]["message"]
        end = json.loads((HERE / f"{preset}-went-out.jsonl").read_text().splitlines()[-1])
        assert (int(m[1]), int(m[2])) == (end["scores"][0] + 5, end["scores"][0]), preset


# One per kind of refusal, across the presets: the one-line error of `replay` and `explain`.
REPLAYED = ("classic-out-of-turn", "bossa-nova-out-without-canastra", "thirteen-pile",
            "mega-draw-exhausted")


@pytest.fixture(scope="module")
def replayed() -> dict[str, subprocess.CompletedProcess[str]]:
    return {name: cli("replay", str(HERE / f"{name}.jsonl")) for name in REPLAYED}


@pytest.mark.parametrize("name", REPLAYED)
def test_replay_says_file_seq_and_rule_in_one_line(
        replayed: dict[str, subprocess.CompletedProcess[str]], name: str) -> None:
    want = EXPECTED[name]
    path = HERE / f"{name}.jsonl"
    out = replayed[name]
    assert out.returncode == 1
    assert out.stdout.startswith("seq "), out.stdout[:200]  # the table before it, shown
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    # The file, the seq, the rule once and where the table is known: the order of the parts
    # (the rule's tag before or after the clause on the table) is the command line's to choose.
    line = lines[0]
    assert line.startswith(f"buraco-log: error: {path}: seq {want['seq']} is illegal"), line
    assert line.count(f"[{want['rule']}]") == 1 and line.count("[") == 1, line
    assert f"the table is known up to seq {want['seq'] - 1}" in line, line


def test_explain_json_carries_the_rule_and_seq() -> None:
    name = "thirteen-out-without-canastra"
    want = EXPECTED[name]
    out = cli("explain", "-f", "json", "--at", str(want["seq"]), str(HERE / f"{name}.jsonl"))
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert (got["rule"], got["seq"]) == (want["rule"], want["seq"])
    assert got["legal"] is False


def test_docs_name_every_field_of_every_event() -> None:
    """docs/log-format.md's table of events must give each event's fields by name, in order:
    the JSON Schema gives them by position only, and a log is written by name."""
    from buraco_log import events

    doc = (Path(__file__).parents[2] / "docs" / "log-format.md").read_text()
    rows = dict(re.findall(r"^\| `(\w\w)` \| \w+ \| ([^|]*) \|", doc, re.M))
    for cls in events.AnyEvent.__args__:  # type: ignore[attr-defined]
        tag = cls.__struct_config__.tag
        fields = [f for f in cls.__struct_fields__ if f not in ("seq", "at", "note")]
        assert tag in rows, tag
        assert re.findall(r"`(\w+)`", rows[tag]) == fields, (tag, rows[tag])


def test_docs_name_every_rule_the_hand_written_logs_meet() -> None:
    """Each rule id a scenario expects is in docs/log-format.md's table of refusals, so a
    checker who writes a log by hand knows what the refusal is called."""
    doc = (Path(__file__).parents[2] / "docs" / "log-format.md").read_text()
    table = doc.split("**What a refusal is named.**")[1].split("**Versions.**")[0]
    named = set(re.findall(r"`(\w+\.\w+)`", table))
    met = {want["rule"] for want in EXPECTED.values() if want["rule"]}
    assert met == named, (sorted(met - named), sorted(named - met))


def test_the_first_line_the_docs_show_is_of_todays_format() -> None:
    """Copied as shown, the first line must make a log of the current event format version: one
    that said 1 made every hand-written log a version 1 log, with another head digest."""
    from buraco_log.events import FORMAT_VERSION

    root = Path(__file__).parents[2]
    for page in ("docs/log-format.md", "schema/LOG_FORMAT.md"):
        shown = re.findall(r'\{"log": "buraco-log"[^}]*\}', (root / page).read_text())
        assert shown, page
        for line in shown:
            assert json.loads(line)["version"] == FORMAT_VERSION, (page, line)


@pytest.mark.parametrize("name", ["thirteen-pile", "burako-wrong-score"])
def test_replay_json_carries_the_rule_and_seq_of_what_it_stopped_at(name: str) -> None:
    """`replay -f json` of a log with an illegal event or a wrong recorded score exits 1 with
    the table; its JSON gave the table only, so a program reading stdout never learnt the rule
    or the seq that stderr named."""
    want = EXPECTED[name]
    out = cli("replay", "-f", "json", str(HERE / f"{name}.jsonl"))
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert [(f["rule"], f["seq"]) for f in data["findings"]] == [(want["rule"], want["seq"])]
    assert f"[{want['rule']}]" in out.stderr and f"seq {want['seq']}" in out.stderr
    if want["rule"] != "score.mismatch":  # the table before the illegal event
        assert data["seq"] == want["seq"] - 1


def test_an_unfinished_log_without_a_commitment_misses_no_reveal(
        audited: dict[str, dict[str, Any]]) -> None:
    """A hand-written log commits to nothing: ending before MatchEnded it has no reveal to
    miss. Its note said "the reveal is missing" as if a commitment had been published."""
    notes = audited["classic-went-out"]["notes"]
    assert not any("reveal" in n for n in notes), notes
    assert any(n.startswith("provenance: no commitment or plain seed backs 1 deal") for n in notes)


def test_explain_names_a_code_that_is_no_card_as_the_refusal_does() -> None:
    """Its headline said "seat 0 (ana) drew (0,)", a Python tuple, beside "drew #0"."""
    out = cli("explain", "--at", "2", str(HERE / "classic-draw-not-a-card.jsonl"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "seq 2: seat 0 (ana) drew #0"
    assert "(0,)" not in out.stdout and "[event.invalid]" in out.stdout
