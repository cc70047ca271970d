"""Fault probes, standard input and in-place commands: ``-`` fed endless or hostile bytes, and
``seal``/``repair`` asked for ``-`` with ``--format json``. Real subprocesses with timeouts."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.outputs import EXE, GOOD, GOOD_JSONL, assert_error, run

pytestmark = pytest.mark.skipif(EXE is None, reason="buraco-log is not installed")


# An endless random stream, its first byte fixed: /dev/urandom itself opens with "{" or "#"
# (JSON Lines) about one time in a hundred, which the next test covers.
_RANDOM = ("import os, sys\nsys.stdout.buffer.write(sys.argv[1].encode('latin-1'))\n"
           "while True: sys.stdout.buffer.write(os.urandom(1 << 16))")


def _endless(first: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _RANDOM, first], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


def _stop(source: subprocess.Popen[bytes]) -> None:
    source.kill()
    source.wait()
    assert source.stdout is not None
    source.stdout.close()


@pytest.mark.parametrize("device", ["/dev/zero", "random"])
@pytest.mark.parametrize("command", ["verify", "replay"])
def test_an_endless_device_on_stdin_is_refused_at_byte_0(device: str, command: str) -> None:
    assert EXE is not None
    source = _endless("R") if device == "random" else None
    try:
        with open(device, "rb") if source is None else contextlib.nullcontext(
                source.stdout) as stream:  # endless: the command must not read it all
            p = subprocess.run([EXE, command, "-"], stdin=stream, capture_output=True,
                               timeout=30)
    finally:
        if source is not None:
            _stop(source)
    r_err = p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in r_err and "MemoryError" not in r_err, r_err[-600:]
    assert p.returncode == 2, (p.returncode, r_err[-300:])
    assert r_err.splitlines() == [r_err.splitlines()[0]] and "<stdin>, byte 0" in r_err, r_err


@pytest.mark.parametrize("first", ["{", "#"])
def test_an_endless_random_stream_that_opens_like_json_lines_stops_at_line_1(
        first: str) -> None:
    # it was copied on to the 1 GiB bound ("more than 1,024 MiB on standard input")
    assert EXE is not None
    # after "#", the comment line ends at once and line 2 opens with "{" and a byte that is
    # not UTF-8: random bytes there gave a blank line or a comment 1 run in 128 (line 3)
    source = _endless(first + ("\xff" if first == "{" else "\xff\n{\xff"))
    try:
        p = subprocess.run([EXE, "verify", "-"], stdin=source.stdout, capture_output=True,
                           timeout=30)
    finally:
        _stop(source)
    r_err = p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in r_err, r_err[-600:]
    assert p.returncode != 0 and len(r_err.splitlines()) == 1, r_err
    # "{" opens a line that is not UTF-8; "#" a comment, skipped, then the next line is named
    assert f"<stdin>, line {1 if first == '{' else 2}" in r_err, r_err
    assert "is not UTF-8" in r_err, r_err


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
