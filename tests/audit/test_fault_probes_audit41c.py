"""Fault probes of the commands that show a match (round 41c): a log with a signature record
repeated right after itself is refused by `verify`, `seal` and `convert`, and `explain
--ignore-integrity` warns of it, but plain `explain`, `replay` and `moves` (which read through
``audit.load``) and `show` said nothing and exited 0, where each treats a tampered log as an
integrity failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from buraco_log import audit
from buraco_log.errors import LogFormatError
from tests.log.cli_run import run

pytest.importorskip("cryptography")

from tests.signing.signed_copies import ENV, _record_span, _signed, _with_copy

SHOWING = [["explain", "--at", "5"], ["replay"], ["moves"]]


@pytest.fixture(autouse=True)
def _no_site_config(tmp_path: Path) -> None:
    (tmp_path / "none.toml").write_text("")
    ENV["BURACO_LOG_CONFIG"] = str(tmp_path / "none.toml")


@pytest.fixture
def copied(tmp_path: Path) -> tuple[Path, Path, int, int]:
    """The log as written, a copy with its second signature record repeated, the seq that
    record signs, and the byte where the copy starts."""
    path, _ = _signed(tmp_path)
    bad = tmp_path / "dup.blog"
    seq = _with_copy(path, bad, 1)
    return path, bad, seq, _record_span(path, 1)[1]


@pytest.mark.parametrize("command", SHOWING, ids=lambda c: c[0])
def test_a_repeated_signature_record_is_refused_as_damage_is(
        copied: tuple[Path, Path, int, int], command: list[str]) -> None:
    path, bad, seq, at = copied
    assert run(command[0], path, *command[1:], env=ENV).code == 0  # the log as written
    r = run(command[0], bad, *command[1:], env=ENV)
    assert r.code == 1 and "Traceback" not in r.err and r.out == "", r
    lines = r.err.splitlines()
    assert len(lines) == 1, lines
    assert f"{bad}, byte {at}: " in lines[0] and f"after seq {seq} repeats" in lines[0]
    assert "sign.duplicate" in lines[0] and "--ignore-integrity" in lines[0]


def test_show_sums_it_up_and_says_it_exit_1(copied: tuple[Path, Path, int, int]) -> None:
    path, bad, seq, at = copied
    good = run("show", path, env=ENV)
    assert good.code == 0 and good.err == "", good
    r = run("show", bad, env=ENV)
    assert r.code == 1 and "Traceback" not in r.err, r
    # the copy holds no event: the same summary, but for its integrity line, which says the
    # log is broken at the copy (round 42: it said "sealed")
    shown, expected = r.out.splitlines(), good.out.replace(str(path), str(bad)).splitlines()
    differ = [(a, b) for a, b in zip(shown, expected, strict=True) if a != b]
    assert len(differ) == 1 and differ[0][1].startswith(f"log       {bad}: sealed, "), differ
    assert differ[0][0].startswith(f"log       {bad}: broken, ") and f"BROKEN at byte {at} " in (
        differ[0][0]), differ
    lines = r.err.splitlines()
    assert len(lines) == 1 and f"{bad}, byte {at}: " in lines[0], lines
    assert f"after seq {seq} repeats" in lines[0] and "sign.duplicate" in lines[0]


def test_the_library_load_refuses_it_for_binary_and_json_lines(
        copied: tuple[Path, Path, int, int], tmp_path: Path) -> None:
    path, bad, _seq, at = copied
    assert audit.load(path)
    with pytest.raises(LogFormatError) as caught:
        audit.load(bad)
    assert caught.value.offset == at
    jsonl = tmp_path / "m.jsonl"
    assert run("convert", path, "-o", jsonl, env=ENV).code == 0
    lines = jsonl.read_bytes().splitlines(keepends=True)
    i = [n for n, line in enumerate(lines) if line.startswith(b'{"log": "signature"')][1]
    dup = tmp_path / "dup.jsonl"
    dup.write_bytes(b"".join([*lines[:i + 1], lines[i], *lines[i + 1:]]))
    assert audit.load(jsonl)
    with pytest.raises(LogFormatError) as caught:
        audit.load(dup)
    assert caught.value.line == i + 2
