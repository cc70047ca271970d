"""`buraco-log rules list|show` against RULES.md, value by value, typed in from its tables.

Section 11 (the preset table), section 10 (targets) and section 9 (card points and bonuses)
are copied here by hand; nothing is read from the engine's presets. A house-rules file the
user names is the user's input: a missing or wrong one is a usage error (exit 2), said the
same way by `rules show`, `simulate --rules` and `demo --rules`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

# RULES.md section 11 (players, jokers, hand, morto, upcard, pile, redraw, vulnerable) and the
# targets of section 10.
SECTION_11 = {
    "classic": ("2/3/4/6", "0", "11", "no", "no", "free", "yes", "yes", "1500"),
    "biriba": ("2/3/4", "0", "11", "yes", "no", "free", "yes", "yes", "1500"),
    "bossa-nova": ("2/3/4", "0", "11", "yes, needs canastra", "no", "free", "yes", "yes",
                   "1500"),
    "thirteen": ("2/4", "4", "13", "yes", "yes", "must_use_top", "no", "no", "2005"),
    "burraco": ("2/4", "4", "11", "yes", "yes", "free", "no", "no", "2005"),
    "mega": ("2/4", "4", "11", "yes", "yes", "free", "no", "no", "3000"),
    "burako": ("2/4", "2", "11", "yes, indirect only", "no", "free", "no", "no", "3000"),
    "thirteen-quick": ("2/4", "4", "13", "yes", "yes", "must_use_top", "no", "no", "1005"),
}
COLUMNS = ("players", "jokers", "hand", "morto", "upcard", "pile", "redraw", "vulnerable",
           "target")

# RULES.md section 9: card points (joker, 2, ace, 8-K, 3-7) ...
POINTS = {
    "classic": (10, 10, 15, 10, 5), "biriba": (10, 10, 15, 10, 5),
    "bossa-nova": (10, 10, 15, 10, 5), "thirteen": (50, 10, 15, 10, 5),
    "thirteen-quick": (50, 10, 15, 10, 5), "burraco": (30, 20, 15, 10, 5),
    "mega": (50, 10, 15, 10, 5), "burako": (50, 10, 15, 10, 5),
}
# ... and the bonuses that apply (clean, dirty, going out), with the switches that say which
# of the others apply: semi-clean 150 (burraco), royal 500 / ace-to-ace 1000 (burako),
# relancinho 100 (classic family), morto not taken 100 (every morto preset).
BONUSES = {
    "classic": (200, 100, 50), "biriba": (200, 100, 50), "bossa-nova": (200, 100, 50),
    "thirteen": (200, 100, 100), "thirteen-quick": (200, 100, 100),
    "burraco": (200, 100, 100), "mega": (200, 100, 100), "burako": (200, 100, 100),
}
CLASSIC_FAMILY = {"classic", "biriba", "bossa-nova"}


def run(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(["buraco-log", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, check=False, timeout=300)


def test_rules_list_is_section_11_of_the_rules() -> None:
    r = run("rules", "list")
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    header = re.split(r"\s{2,}", lines[0])
    assert header[:len(COLUMNS) + 1] == ["name", *COLUMNS]
    rows = {}
    for line in lines[1:]:
        cells = re.split(r"\s{2,}", line)
        rows[cells[0]] = tuple(cells[1:len(COLUMNS) + 1])
    assert rows == SECTION_11
    assert "True" not in r.stdout and "False" not in r.stdout  # it said upcard False


def test_rules_list_json_carries_the_same_values() -> None:
    r = run("rules", "list", "-f", "json")
    data = {row["name"]: row for row in json.loads(r.stdout)}
    assert set(data) == set(SECTION_11)
    yes = {"yes": True, "no": False}
    for name, (players, jokers, hand, morto, upcard, pile, redraw, vulnerable,
               target) in SECTION_11.items():
        row = data[name]
        assert (row["players"], row["jokers"], row["hand"], row["pile"], row["target"]) == (
            players, int(jokers), int(hand), pile, int(target)), name
        assert (row["upcard"], row["redraw"], row["vulnerable"]) == (
            yes[upcard], yes[redraw], yes[vulnerable]), name
        assert row["morto"] == {"no": "no", "yes": "yes", "yes, needs canastra": "yes",
                                "yes, indirect only": "indirect"}[morto], name
        assert row["morto_needs_canastra"] is (morto == "yes, needs canastra"), name


def knobs(name: str) -> dict[str, str]:
    r = run("rules", "show", name)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return {cells[0]: cells[1] for cells in (re.split(r"\s{2,}", line)
                                             for line in r.stdout.splitlines())}


@pytest.mark.parametrize("name", sorted(SECTION_11))
def test_rules_show_agrees_with_sections_9_to_11(name: str) -> None:
    k = knobs(name)
    players, jokers, hand, morto, upcard, pile, redraw, vulnerable, target = SECTION_11[name]
    assert k["player_counts"] == players.replace("/", ", ")
    assert (k["jokers"], k["hand_size"], k["target_score"]) == (jokers, hand, target)
    assert k["morto"] == ("no" if morto == "no" else "yes")
    assert k["morto_needs_canastra"] == ("yes" if morto == "yes, needs canastra" else "no")
    if morto != "no":
        assert k["morto_direct"] == ("no" if morto == "yes, indirect only" else "yes")
        assert k["morto_size"] == "11"
        assert k["bonuses.morto_not_taken"] == "100"
        # section 7: every morto preset but biriba needs a canastra to go out
        assert k["go_out_needs_canastra"] == ("no" if name == "biriba" else "yes")
    assert (k["initial_upcard"], k["pile_pickup"], k["first_turn_redraw"],
            k["vulnerability"]) == (upcard, pile, redraw, vulnerable)
    assert (k["points.joker"], k["points.two"], k["points.ace"], k["points.high"],
            k["points.low"]) == tuple(map(str, POINTS[name]))
    clean, dirty, going_out = BONUSES[name]
    assert (k["bonuses.clean"], k["bonuses.dirty"], k["bonuses.going_out"]) == (
        str(clean), str(dirty), str(going_out))
    assert k["semi_clean"] == ("yes" if name == "burraco" else "no")
    if name == "burraco":
        assert k["bonuses.semi_clean"] == "150"
    assert k["royal_canastras"] == k["ace_both_ends"] == ("yes" if name == "burako" else "no")
    if name == "burako":
        assert (k["bonuses.royal"], k["bonuses.ace_to_ace"]) == ("500", "1000")
        assert k["rendering"] == "tiles"
    assert k["relancinho"] == ("yes" if name in CLASSIC_FAMILY else "no")
    if name in CLASSIC_FAMILY:
        assert k["bonuses.relancinho"] == "100"
        assert (k["vulnerable_at"], k["opening_min"], k["opening_min_after_retract"]) == (
            "750", "75", "90")  # section 10: half of 1500; 75, then 90
    # section 5, 6, 8: mega's own rules
    assert k["stock_floor"] == ("2" if name == "mega" else "0")
    assert k["max_sets_per_rank"] == ("1" if name == "mega" else "0")
    assert k["canastra_from_sets"] == ("no" if name == "mega" else "yes")
    assert k["canastra_size"] == "7"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("house")
    (d / "misspelt.toml").write_text('preset = "biriba"\ntarget_scor = 2000\n')
    (d / "broken.toml").write_text('preset = [\n')
    (d / "negative.toml").write_text('preset = "biriba"\njokers = -4\n')
    (d / "folder.toml").mkdir()
    (d / "club.toml").write_text('preset = "biriba"\ntarget_score = 500\n')
    return d


BAD_RULES = [
    ("missing.toml", "missing.toml: No such file or directory"),
    ("folder.toml", "folder.toml: is a directory, not a house-rules file"),
    ("misspelt.toml", "misspelt.toml: rules field 'target_scor': unknown knob (did you mean "
                      "'target_score'?)"),
    ("broken.toml", "broken.toml: not a house-rules TOML file: "),
    ("negative.toml", "negative.toml: rules field 'jokers': -4 is out of bounds"),
    ("birba", "unknown preset 'birba' (did you mean 'biriba'?)"),
]
RULES_COMMANDS = [
    ["rules", "show", "{}"],
    ["simulate", "--rules", "{}", "-o", "sim", "--no-progress"],
    ["demo", "--rules", "{}", "-o", "demo.blog"],
]
# The -f json form of the same 18: by default each bad name once, the commands in turn (each
# command twice); the other 12 with -m slow.
JSON_CASES = [pytest.param(name, says, command, marks=() if i % 3 == j else pytest.mark.slow)
              for i, (name, says) in enumerate(BAD_RULES)
              for j, command in enumerate(RULES_COMMANDS)]


@pytest.mark.parametrize(("name", "says"), BAD_RULES)
@pytest.mark.parametrize("command", RULES_COMMANDS)
def test_a_bad_rules_name_is_a_usage_error_the_same_everywhere(
        files: Path, name: str, says: str, command: list[str]) -> None:
    r = run(*[a.replace("{}", name) for a in command], cwd=files)
    assert r.returncode == 2 and r.stdout == "", r
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("buraco-log: error: ") and says in r.stderr, r.stderr
    assert not (files / "sim").exists() and not (files / "demo.blog").exists()


@pytest.mark.parametrize(("name", "says", "command"), JSON_CASES)
def test_a_bad_rules_name_is_one_json_error_the_same_everywhere(
        files: Path, name: str, says: str, command: list[str]) -> None:
    as_json = run(*[a.replace("{}", name) for a in command], "-f", "json", cwd=files)
    error = json.loads(as_json.stdout)["error"]
    assert as_json.returncode == 2 and error["exit_status"] == 2 and says in error["message"]


def test_house_rules_work_for_demo_as_for_simulate(files: Path) -> None:
    r = run("demo", "--rules", "club.toml", "--players", "2", "-f", "json", cwd=files)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["rules"] == "biriba+club" and data["log"] == "demo-biriba+club-2p.blog"
    shown = run("show", data["log"], "-f", "json", cwd=files)
    summary = json.loads(shown.stdout)
    assert summary["preset"] == "biriba+club" and summary["overrides"] == {"target_score": 500,
                                                                       "vulnerable_at": 250}
