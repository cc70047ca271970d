"""Fault probes of the CLI, round 37: a process started with its standard output closed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "examples" / "golden" / "classic.jsonl"


def _run_stdout_closed(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], stderr=subprocess.PIPE,
                          text=True, timeout=60, cwd=REPO,
                          preexec_fn=lambda: os.close(1))


@pytest.mark.parametrize("args", [("show", str(GOLDEN)), ("rules", "list"),
                                  ("convert", str(GOLDEN), "-o", "-", "--to", "binary")])
def test_a_closed_standard_output_is_one_line_and_exit_1(args: tuple[str, ...]) -> None:
    """Before: `buraco-log show LOG >&-` said 'internal error: AttributeError: 'NoneType'
    object has no attribute 'write'', exit 120, then an 'Exception ignored' traceback."""
    r = _run_stdout_closed(*args)
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["buraco-log: error: <stdout>: standard output is closed"]


@pytest.mark.parametrize("args", [("verify", "-"), ("convert", "-", "-o", "{out}")])
def test_a_closed_standard_input_given_as_the_log_is_a_usage_error(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    """Before: `buraco-log verify - <&-` said 'internal error: AttributeError: 'NoneType'
    object has no attribute 'buffer'', exit 120."""
    out = tmp_path / "out.jsonl"
    r = subprocess.run([sys.executable, "-m", "cli.main",
                        *(a.format(out=out) for a in args)],
                       capture_output=True, text=True, timeout=60, cwd=REPO,
                       preexec_fn=lambda: os.close(0))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        "buraco-log: error: <stdin>: standard input is closed; give the log's path, or pipe "
        "the log in"]
    assert not out.exists()


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True,
                          text=True, timeout=60, cwd=REPO)


def test_a_directory_given_as_a_receipt_is_named_as_one(tmp_path: Path) -> None:
    """Before: `audit LOG --keys DIR --receipt DIR` said only 'DIR: Is a directory'."""
    keys = tmp_path / "keys"
    keys.mkdir()
    assert _run("keys", "new", "site", "-d", str(keys)).returncode == 0
    r = _run("audit", str(GOLDEN), "--keys", str(keys), "--receipt", str(tmp_path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"buraco-log: error: {tmp_path}: not a regular file (a directory): not a buraco-log "
        "receipt"]


def test_a_directory_given_as_the_passphrase_file_is_named_as_one(tmp_path: Path) -> None:
    """Before: `keys new NAME --passphrase-file DIR` said only 'DIR: Is a directory'."""
    r = _run("keys", "new", "site", "-d", str(tmp_path), "--passphrase-file", str(tmp_path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"buraco-log: error: {tmp_path}: not a regular file (a directory): not a passphrase "
        "file"]  # as every key file is read (signing.keys.read_small)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", ["", '{"log": "buraco-log", "version": 2, "sealed": false}\n'])
def test_view_of_a_json_lines_log_not_started_names_the_rule(tmp_path: Path, text: str) -> None:
    """Before: `view EMPTY.jsonl` gave the line without its rule id ([log.empty]), which
    `view EMPTY.blog`, `replay` and `moves` give."""
    log = tmp_path / "empty.jsonl"
    log.write_text(text)
    r = _run("view", str(log))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"buraco-log: error: {log}: the log holds no events yet (a match not started): no "
        "table to show [log.empty]"]
    assert not (tmp_path / "empty.html").exists()


def test_a_config_file_nested_too_deeply_is_one_line(tmp_path: Path) -> None:
    """Before: a config file of 100,000 nested arrays was 'internal error: RecursionError',
    exit 120."""
    config = tmp_path / "config.toml"
    config.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    r = subprocess.run([sys.executable, "-m", "cli.main", "audit", str(GOLDEN)],
                       capture_output=True, text=True, timeout=60, cwd=REPO,
                       env={**os.environ, "BURACO_LOG_CONFIG": str(config)})
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"buraco-log: error: {config}: not a valid TOML config file: nested too deeply"]
