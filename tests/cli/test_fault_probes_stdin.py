"""Fault probes, standard input and in-place commands: ``-`` fed endless or hostile bytes, and
``seal``/``repair`` asked for ``-`` with ``--format json``. Real subprocesses with timeouts."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_fault_probes_outputs import EXE, GOOD, GOOD_JSONL, assert_error, run

pytestmark = pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("command", ["verify", "replay"])
def test_an_endless_device_on_stdin_is_refused_at_byte_0(device: str, command: str) -> None:
    assert EXE is not None
    with open(device, "rb") as source:  # an endless stream: the command must not read it all
        p = subprocess.run([EXE, command, "-"], stdin=source, capture_output=True, timeout=30)
    r_err = p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in r_err and "MemoryError" not in r_err, r_err[-600:]
    assert p.returncode == 2, (p.returncode, r_err[-300:])
    assert r_err.splitlines() == [r_err.splitlines()[0]] and "<stdin>, byte 0" in r_err, r_err


@pytest.mark.parametrize("log", [GOOD, GOOD_JSONL])
def test_a_whole_log_on_stdin_still_reads(log: Path) -> None:
    r = run("verify", "-", stdin=log.read_bytes())
    assert r.code == 0 and r.out.startswith("<stdin>: ") and r.err == "", r


@pytest.mark.parametrize("command", ["seal", "repair"])
def test_seal_and_repair_of_stdin_with_json_give_the_json_error(command: str) -> None:
    r = run(command, "-", "-f", "json", stdin=GOOD.read_bytes())
    assert_error(r, 2, "in place", "'-'", json_out=True)
    assert json.loads(r.out)["error"]["exit_status"] == 2


@pytest.mark.parametrize("command", ["seal", "repair"])
def test_seal_and_repair_help_do_not_offer_stdin(command: str) -> None:
    r = run(command, "--help")
    assert r.code == 0 and "standard input" not in r.out and "not '-'" in r.out, r.out
