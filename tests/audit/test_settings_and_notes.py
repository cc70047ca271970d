"""Issue 13 items 9 and 10, issue 20 item 3: what an OK verdict says it does not prove (an
unsealed log, a missing reveal, deals nothing backs), the site setting that makes a missing
commitment or reveal a finding, and logs of matches that never started."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit, log
from buraco_log.audit.settings import (
    CONFIG_ENV,
    REQUIRE_COMMITMENT_ENV,
    SITE_CONFIG,
    SettingsError,
    require_commitment,
)
from buraco_log.events import AnyEvent, MatchEnded, MatchStarted
from buraco_log.jsonl import binary_to_jsonl
from tests import brokenlogs as bl

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def fair() -> tuple[AnyEvent, ...]:
    return tuple(bl.fair_match("thirteen-quick", 2, 1))


def stripped() -> list[AnyEvent]:
    """The committed match with its commitment and its reveal removed."""
    ev = list(fair())
    start, end = ev[0], ev[-1]
    assert isinstance(start, MatchStarted) and isinstance(end, MatchEnded)
    return [msgspec.structs.replace(start, commitment=None, player_seeds=()), *ev[1:-1],
            msgspec.structs.replace(end, server_seed=None)]


def cut() -> list[AnyEvent]:
    """The committed match with its final MatchEnded (the reveal) cut off."""
    return list(fair()[:-1])


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    base = {k: v for k, v in os.environ.items()
            if k not in (REQUIRE_COMMITMENT_ENV, CONFIG_ENV, "XDG_CONFIG_HOME")}
    out = subprocess.run([sys.executable, "-m", "cli.main", "audit", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False,
                         env={**base, "XDG_CONFIG_HOME": "/nonexistent", **(env or {})})
    return out.returncode, out.stdout, out.stderr


# -- the setting ---------------------------------------------------------------------------------


def test_the_setting_is_off_by_default_and_says_where_it_came_from(tmp_path: Path) -> None:
    if Path(SITE_CONFIG).exists():
        pytest.skip(f"{SITE_CONFIG} exists on this machine")
    s = require_commitment(None, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert (s.value, s.source) == (False, "default")


@pytest.mark.parametrize(("raw", "value"), [("1", True), ("true", True), ("YES", True),
                                            ("on", True), ("0", False), ("false", False),
                                            ("no", False), ("off", False)])
def test_the_environment_variable_accepts_the_usual_flags(raw: str, value: bool) -> None:
    s = require_commitment(None, {REQUIRE_COMMITMENT_ENV: raw})
    assert s.value is value and s.source == f"{REQUIRE_COMMITMENT_ENV}={raw}"


@pytest.mark.parametrize("raw", ["maybe", "2", "tru"])
def test_the_environment_variable_refuses_anything_else(raw: str) -> None:
    with pytest.raises(SettingsError, match=REQUIRE_COMMITMENT_ENV):
        require_commitment(None, {REQUIRE_COMMITMENT_ENV: raw})


def test_the_command_line_beats_the_environment_which_beats_the_config(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[audit]\nrequire_commitment = true\n")
    assert require_commitment(None, {CONFIG_ENV: str(cfg)}).value is True
    assert require_commitment(None, {CONFIG_ENV: str(cfg), REQUIRE_COMMITMENT_ENV: "0"}
                              ).value is False
    assert require_commitment(False, {REQUIRE_COMMITMENT_ENV: "1"}).value is False
    assert require_commitment(True, {}).source == "--require-commitment"


def test_the_users_config_comes_before_the_sites(tmp_path: Path) -> None:
    (tmp_path / "buraco-log").mkdir()
    (tmp_path / "buraco-log" / "config.toml").write_text("[audit]\nrequire_commitment = true\n")
    s = require_commitment(None, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert s.value is True and s.source.startswith(str(tmp_path))
    (tmp_path / "buraco-log" / "config.toml").write_text("[archive]\nother = 1\n")
    assert require_commitment(None, {"XDG_CONFIG_HOME": str(tmp_path)}).source != s.source


@pytest.mark.parametrize(("body", "words"), [
    ("[audit]\nrequire_commitment = 1\n", "true or false"),
    ("[audit]\nrequire_commitmnet = true\n", "no setting 'require_commitmnet'"),
    ("audit = 3\n", "must be a table"),
    ("[audit\n", "not a valid TOML"),
])
def test_a_bad_config_file_is_refused_naming_it(tmp_path: Path, body: str, words: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(body)
    with pytest.raises(SettingsError, match=words) as exc:
        require_commitment(None, {CONFIG_ENV: str(cfg)})
    assert str(cfg) in str(exc.value)


def test_a_config_named_but_missing_or_a_fifo_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="no such file"):
        require_commitment(None, {CONFIG_ENV: str(tmp_path / "none.toml")})
    os.mkfifo(tmp_path / "fifo.toml")
    with pytest.raises(SettingsError, match="not a regular file"):
        require_commitment(None, {CONFIG_ENV: str(tmp_path / "fifo.toml")})


# -- stripped provenance -------------------------------------------------------------------------


def test_a_stripped_log_audits_ok_by_default_but_says_its_deals_were_not_checked(
        tmp_path: Path) -> None:
    path = bl.write(tmp_path / "stripped.blog", stripped())
    code, out, _ = run(str(path))
    assert code == 0
    assert "OK" in out.splitlines()[0]
    assert "no commitment or plain seed backs 2 deals: they were not checked" in out


@pytest.mark.parametrize("how", ["env", "config", "flag"])
def test_a_site_that_requires_commitments_finds_the_stripped_log(tmp_path: Path,
                                                                 how: str) -> None:
    path = bl.write(tmp_path / "stripped.blog", stripped())
    cfg = tmp_path / "config.toml"
    cfg.write_text("[audit]\nrequire_commitment = true\n")
    env = {"env": {REQUIRE_COMMITMENT_ENV: "1"}, "config": {CONFIG_ENV: str(cfg)},
           "flag": {}}[how]
    args = ["--require-commitment"] if how == "flag" else []
    code, out, _ = run(*args, "--format", "json", str(path), env=env)
    assert code == 1
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["deal.commitment_missing"]


def test_the_flag_turns_a_site_setting_off_for_one_run(tmp_path: Path) -> None:
    path = bl.write(tmp_path / "stripped.blog", stripped())
    code, _, _ = run("--no-require-commitment", str(path), env={REQUIRE_COMMITMENT_ENV: "1"})
    assert code == 0


def test_a_bad_setting_is_a_usage_error_on_one_line(tmp_path: Path) -> None:
    path = bl.write(tmp_path / "a.blog", list(fair()))
    code, out, err = run(str(path), env={REQUIRE_COMMITMENT_ENV: "maybe"})
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and REQUIRE_COMMITMENT_ENV in err


def test_a_log_cut_before_match_ended_says_the_reveal_is_missing(tmp_path: Path) -> None:
    path = bl.write(tmp_path / "cut.blog", cut())
    code, out, _ = run("--format", "json", str(path))
    assert code == 0
    v = json.loads(out)
    assert v["provenance"]["unchecked"] == 2
    assert ("provenance: the log ends without MatchEnded: the reveal is missing and 2 deals "
            "were not checked") in v["notes"]
    code, out, _ = run("--format", "json", str(path), env={REQUIRE_COMMITMENT_ENV: "1"})
    assert code == 1
    assert [f["rule"] for f in json.loads(out)["findings"]] == ["deal.not_revealed"]


def test_the_provenance_line_of_a_cut_log_does_not_claim_its_deals_were_re_derived(
        tmp_path: Path) -> None:
    path = bl.write(tmp_path / "cut.blog", cut())
    code, out, _ = run(str(path))
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("  provenance"))
    assert line.endswith("committed; seed not revealed; 2 deals; none re-derived (not checked)")
    whole = bl.write(tmp_path / "whole.blog", list(fair()))
    code, out, _ = run(str(whole))
    assert code == 0 and "; 2 deals; all re-derived and equal" in out


def test_a_whole_committed_match_has_no_provenance_note_and_passes_when_required(
        tmp_path: Path) -> None:
    path = bl.write(tmp_path / "whole.blog", list(fair()))
    code, out, _ = run("--format", "json", str(path), env={REQUIRE_COMMITMENT_ENV: "1"})
    assert code == 0
    v = json.loads(out)
    assert v["notes"] == [] and v["provenance"]["unchecked"] == 0


# -- unsealed ------------------------------------------------------------------------------------


def test_an_unsealed_log_says_what_it_cannot_detect_and_a_sealed_one_does_not(
        tmp_path: Path) -> None:
    sealed = audit.audit_log(bl.write(tmp_path / "s.blog", list(fair())))
    unsealed = audit.audit_log(bl.write(tmp_path / "u.blog", list(fair()), sealed=False))
    assert sealed.ok and audit.UNSEALED_NOTE not in sealed.notes
    assert unsealed.ok and audit.UNSEALED_NOTE in unsealed.notes
    assert audit.UNSEALED_NOTE == ("integrity: unsealed, edits that keep each record's CRC are "
                                   "not detectable")
    code, out, _ = run(str(tmp_path / "u.blog"))
    assert code == 0 and f"note        {audit.UNSEALED_NOTE}" in out


# -- not started ---------------------------------------------------------------------------------


def not_started_dir(d: Path) -> dict[str, bool]:
    """Files of matches that never received an event (True) and a file that is no log."""
    with log.Writer(d / "header-only.blog"):
        pass
    with log.Writer(d / "header-only-unsealed.blog", sealed=False):
        pass
    binary_to_jsonl(d / "header-only.blog", d / "header-only.jsonl")
    (d / "empty.jsonl").write_bytes(b"")
    (d / "empty.blog").write_bytes(b"")
    (d / "half-header.blog").write_bytes((d / "header-only.blog").read_bytes()[:10])
    (d / "garbage.blog").write_bytes(b"garbage!!!")
    return {"header-only.blog": True, "header-only-unsealed.blog": True,
            "header-only.jsonl": True, "empty.jsonl": True, "empty.blog": True,
            "half-header.blog": True, "garbage.blog": False}


def test_a_log_of_a_match_that_never_received_an_event_is_not_started(tmp_path: Path) -> None:
    for name, started_not in not_started_dir(tmp_path).items():
        v = audit.audit_log(tmp_path / name)
        assert v.not_started is started_not, name
        assert v.ok is started_not, (name, v.findings)
        if started_not:
            assert v.notes and v.notes[0].startswith("not started: ")


def test_a_directory_of_not_started_logs_beside_a_good_one_exits_0(tmp_path: Path) -> None:
    expected = not_started_dir(tmp_path)
    (tmp_path / "garbage.blog").unlink()
    bl.write(tmp_path / "good.blog", list(fair()))
    code, out, _ = run(str(tmp_path))
    assert code == 0, out
    waiting = sum(expected.values())
    assert out.count(": NOT STARTED") == waiting
    assert f"1 clean, {waiting} not started, 0 with findings" in out
    code, out, _ = run(str(tmp_path / "empty.blog"), "--format", "json")
    assert code == 0 and json.loads(out)["not_started"] is True


def test_an_unsealed_json_lines_log_is_not_said_to_keep_a_crc() -> None:
    """JSON Lines has no record CRC: its note said "edits that keep each record's CRC are not
    detectable", as of a binary log."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    lines = audit.audit_log(examples / "format" / "v2-unsealed.jsonl")
    binary = audit.audit_log(examples / "format" / "v2-unsealed.blog")
    assert lines.ok and audit.UNSEALED_JSONL_NOTE in lines.notes
    assert audit.UNSEALED_NOTE not in lines.notes
    assert binary.ok and audit.UNSEALED_NOTE in binary.notes
    assert "CRC" not in audit.UNSEALED_JSONL_NOTE
