"""`buraco-log rules`: every knob described, misspelt names answered with a suggestion."""

from __future__ import annotations

import subprocess
from pathlib import Path

import msgspec
import pytest

from buraco_log.errors import RulesError
from buraco_log.knobs import KNOBS, describe
from buraco_log.rules import PRESETS, Rules, derive, load_toml
from cli.rules_cmd import knob_rows


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["buraco-log", *args], capture_output=True, text=True, check=False)


def test_every_knob_of_the_rules_value_has_a_line_in_knobs_py() -> None:
    missing = [knob for knob, _ in knob_rows(PRESETS["classic"]) if not describe(knob)]
    assert missing == [], f"describe these knobs in buraco_log/knobs.py: {missing}"
    names = {k for k, _ in knob_rows(PRESETS["classic"])}
    names |= {f.name for f in msgspec.structs.fields(Rules)}
    stale = [k for k in KNOBS if k not in names]
    assert stale == [], f"knobs.py describes knobs the rules no longer have: {stale}"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_rules_show_prints_each_knob_with_its_value_and_meaning(name: str) -> None:
    out = run("rules", "show", name)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(knob_rows(PRESETS[name]))
    target = next(line for line in lines if line.startswith("target_score "))
    assert str(PRESETS[name].target_score) in target and describe("target_score") in target
    assert "True" not in out.stdout and "False" not in out.stdout
    counts = ", ".join(map(str, PRESETS[name].player_counts))
    assert lines[1].split("  ")[0] == "player_counts" and f"  {counts}  " in lines[1]


def test_a_misspelt_preset_is_a_usage_error_with_a_suggestion() -> None:
    out = run("rules", "show", "birba")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "did you mean 'biriba'?" in out.stderr


def test_a_misspelt_house_rules_key_names_the_file_and_suggests_the_knob(tmp_path: Path) -> None:
    club = tmp_path / "club.toml"
    club.write_text('preset = "biriba"\ntarget_scor = 2000\n')
    with pytest.raises(RulesError, match=r"did you mean 'target_score'\?") as err:
        load_toml(club)
    assert str(club) in str(err.value)
    out = run("rules", "show", str(club))
    # the user's own file at fault: a usage error (2), as simulate --rules says (1 is a
    # finding in a log or an archive)
    assert out.returncode == 2 and out.stdout == "" and "target_score" in out.stderr
    with pytest.raises(RulesError, match=r"bonuses\.cleen.*did you mean 'bonuses\.clean'\?"):
        derive("biriba", bonuses={"cleen": 300})


def test_a_house_rules_key_far_from_every_knob_gets_no_suggestion() -> None:
    with pytest.raises(RulesError, match="unknown knob") as err:
        derive("biriba", zzzzqqq=1)
    assert "did you mean" not in str(err.value)


def test_a_correct_house_rules_file_is_shown(tmp_path: Path) -> None:
    club = tmp_path / "club.toml"
    club.write_text('preset = "biriba"\ntarget_score = 2000\n')
    out = run("rules", "show", str(club))
    assert out.returncode == 0
    assert any(line.split()[:2] == ["target_score", "2000"] for line in out.stdout.splitlines())
    assert any(line.split()[:2] == ["vulnerable_at", "1000"] for line in out.stdout.splitlines())
