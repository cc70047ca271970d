"""Fault probes of the CLI, round 38b: a rules name that becomes a path (derive, msgspec,
simulate, demo), player counts named twice, JSON Lines named in capitals, a salvaged log with
no intact event, and --overwrite over a FIFO."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import rules as rules_mod
from buraco_log.errors import RulesError
from buraco_log.simulate import simulate_many
from tests.cli.probes import one_error_line as _one_error_line

ROOT = Path(__file__).resolve().parents[2]
JSONL = ROOT / "examples" / "golden" / "classic.jsonl"  # 18 events, one hand
_CJK_NAME = "\u4e2d" * 100  # 300 bytes in UTF-8: within the 100 characters, no file name


def _children_cpu() -> float:
    """User and system CPU seconds of this process's ended children."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL, env=env)


# -- 1. a rules name that becomes a path --------------------------------------------------------

@pytest.mark.parametrize("name", ["../x", "a/b", "a\\b", "..", "x\x1b[31m", "x\u202ey"])
def test_derive_refuses_a_name_that_is_no_plain_name(name: str) -> None:
    with pytest.raises(RulesError) as err:
        rules_mod.derive("classic", name=name)
    assert err.value.field == "name"


def test_derive_keeps_a_plain_name_and_an_old_odd_one_it_is_not_given() -> None:
    assert rules_mod.derive("classic", name="house rules").name == "house rules"
    odd = msgspec.convert({"name": "../old"}, rules_mod.Rules)  # as a log made before holds it
    assert rules_mod.derive(odd, target_score=1000).name == "../old"


def test_simulate_refuses_a_converted_name_that_would_leave_the_directory(
        tmp_path: Path) -> None:
    odd = msgspec.convert({"name": "../escaped"}, rules_mod.Rules)
    out = tmp_path / "a" / "out"
    with pytest.raises(RulesError) as err:
        simulate_many(odd, 2, 1, seed="0", out_dir=out, jobs=1)
    assert err.value.field == "name"
    assert list(tmp_path.rglob("*")) == []  # nothing written, not even the directory


def test_a_log_holding_an_odd_name_stays_readable_and_is_shown_escaped(tmp_path: Path) -> None:
    lines = JSONL.read_text().splitlines(keepends=True)
    assert lines[-1].startswith('{"log": "end"')  # its head digest covers the old name
    text = "".join(lines[:-1]).replace('"name":"classic"', '"name":"../x\\u001b[31m"', 1)
    assert "../x" in text
    log = tmp_path / "odd.jsonl"
    log.write_text(text)
    done = _cli("show", str(log))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "../x" in done.stdout


def _long_name_rules(tmp_path: Path) -> Path:
    path = tmp_path / "long.toml"
    path.write_text(f'preset = "classic"\nname = "{_CJK_NAME}"\n', encoding="utf-8")
    return path


def test_simulate_refuses_a_name_too_long_for_a_file_before_any_work(tmp_path: Path) -> None:
    toml = _long_name_rules(tmp_path)
    done = _cli("simulate", "--rules", str(toml), "-o", str(tmp_path / "out"), "--no-progress")
    line = _one_error_line(done, 2)
    assert line.startswith(f"buraco-log: error: --rules {toml}: rules field 'name': too long")
    assert not (tmp_path / "out").exists()


def test_demo_refuses_a_name_too_long_for_its_default_file(tmp_path: Path) -> None:
    toml = _long_name_rules(tmp_path)
    done = _cli("demo", "--rules", str(toml), "--players", "2", cwd=tmp_path)
    line = _one_error_line(done, 2)
    assert f"--rules {toml}:" in line and "too long" in line and "-o FILE" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.toml"]


# -- 2. player counts ---------------------------------------------------------------------------

@pytest.mark.parametrize("counts", [[2, 2, 2], [2, 4, 2]])
def test_a_player_count_named_twice_is_refused_naming_the_field(
        tmp_path: Path, counts: list[int]) -> None:
    with pytest.raises(RulesError) as err:
        rules_mod.derive("classic", player_counts=counts)
    assert err.value.field == "player_counts"
    toml = tmp_path / "dup.toml"
    toml.write_text(f'preset = "classic"\nplayer_counts = {counts}\n')
    line = _one_error_line(_cli("rules", "show", str(toml)), 2)
    assert "'player_counts'" in line and "twice" in line and str(toml) in line


@pytest.mark.parametrize("counts", [[], [1, 2], [2, 7]])
def test_empty_or_out_of_range_player_counts_are_refused(counts: list[int]) -> None:
    with pytest.raises(RulesError) as err:
        rules_mod.derive("classic", player_counts=counts)
    assert err.value.field == "player_counts"


def test_player_counts_in_any_order_are_taken() -> None:
    assert rules_mod.derive("classic", player_counts=[4, 2]).player_counts == (4, 2)


# -- 3. JSON Lines named in capitals ------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".JSONL", ".Jsonl"])
@pytest.mark.parametrize("command", ["verify", "show", "audit"])
def test_a_capital_jsonl_name_says_the_case_is_why_it_was_read_as_binary(
        tmp_path: Path, command: str, suffix: str) -> None:
    log = tmp_path / f"match{suffix}"
    log.write_bytes(JSONL.read_bytes())
    done = _cli(command, str(log))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"ends in .jsonl in lower case (this name ends in {suffix}: rename it)" in (
        done.stderr + done.stdout)


def test_convert_reads_a_capital_jsonl_name_by_its_content(tmp_path: Path) -> None:
    log = tmp_path / "match.JSONL"
    log.write_bytes(JSONL.read_bytes())
    done = _cli("convert", str(log), "-o", str(tmp_path / "m.blog"))
    assert done.returncode == 0, done.stderr
    assert "18 events" in done.stdout


# -- 4. a salvaged log with no intact event -----------------------------------------------------

def _binary(tmp_path: Path) -> Path:
    out = tmp_path / "m.blog"
    assert _cli("convert", str(JSONL), "-o", str(out)).returncode == 0
    return out


def test_replay_ignore_integrity_of_a_log_damaged_before_its_first_event(
        tmp_path: Path) -> None:
    log = _binary(tmp_path)
    data = bytearray(log.read_bytes())
    for i in range(20, len(data)):  # every byte past the 20-byte file header
        data[i] ^= 0x5A
    log.write_bytes(bytes(data))
    done = _cli("replay", str(log), "--ignore-integrity")
    assert done.returncode == 1 and done.stdout == "", done.stderr
    lines = done.stderr.splitlines()  # one line: the refusal, then the warning (probe 40)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"buraco-log: error: {log}: the log has no intact event: it is "
                               "damaged at byte 20 before its first event: no table to show; "
                               f"WARNING: {log} failed its integrity check")
    assert lines[0].endswith(" [log.damage]"), lines[0]  # the rule, last


def test_replay_ignore_integrity_of_an_empty_file_is_still_a_match_not_started(
        tmp_path: Path) -> None:
    log = tmp_path / "empty.blog"
    log.write_bytes(b"")
    done = _cli("replay", str(log), "--ignore-integrity")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith("(a match not started): no table to show "
                                                 "[log.empty]")


# -- 5. --overwrite over a FIFO -----------------------------------------------------------------

def test_demo_overwrite_leaves_a_fifo_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    line = _one_error_line(_cli("demo", "--overwrite", "-o", str(fifo)), 2)
    assert line == f"buraco-log: error: {fifo}: is a FIFO; --overwrite replaces a file, not FIFOs"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_simulate_overwrite_leaves_a_fifo_under_a_log_name_a_fifo(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    fifo = out / "classic-2p-000000.blog"
    os.mkfifo(fifo)
    line = _one_error_line(_cli("simulate", "--overwrite", "-o", str(out), "--no-progress"), 2)
    assert line == (f"buraco-log: error: {fifo}: is a FIFO; --overwrite replaces logs, not "
                    "FIFOs")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# -- 6. the names a run would write, looked up in one listing ----------------------------------

def test_simulate_finds_a_taken_name_far_down_a_million_matches(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in ("classic-2p-999999.blog", "classic-2p-12.blog", "classic-3p-000000.blog"):
        (out / name).touch()
    start = _children_cpu()
    line = _one_error_line(_cli("simulate", "--matches", "1000000", "-o", str(out),
                                "--no-progress"), 2)
    # one listing of the directory: a million lookups took about 8 s here, this under 1 s.
    # The command's CPU time (its start too), not the wall time a loaded host stretches
    assert _children_cpu() - start < 5
    assert line == (f"buraco-log: error: {out / 'classic-2p-999999.blog'}: exists; refusing "
                    "to replace it (--overwrite, or another --output)")
