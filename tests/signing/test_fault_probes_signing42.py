"""Fault probes 42, signing: what `show` calls a log with a repeated signature record.

- `show`'s integrity line called a log holding a copied signature record "sealed" (its stderr
  line and exit 1 said the failure): it now says broken at the copy's byte (line, in JSON
  Lines) in `verify`'s words, and the JSON summary's integrity says so too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log import jsonl
from buraco_log.signing.keys import Signer
from tests.cli.probes import cli
from tests.signing.helpers import match, write_signed
from tests.signing.test_fault_probes_signing41 import _copied

SITE = Signer.generate()


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 30 events of a match, signed after each (sealed)."""
    path = tmp_path_factory.mktemp("signed42") / "m.blog"
    write_signed(path, match(key_id=SITE.key_id)[:30], SITE)
    return path


def _integrity_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("log "))


def test_show_calls_a_log_with_a_copied_signature_record_broken_at_its_byte(
        signed: Path, tmp_path: Path) -> None:
    bad, at = _copied(signed, tmp_path / "dup.blog", 10, 1)
    done = cli("show", bad)
    assert done.returncode == 1 and "sign.duplicate" in done.stderr, done.stderr
    line = _integrity_line(done.stdout)
    assert "sealed" not in line, line
    assert line.startswith(f"log       {bad}: broken, 30 events in 30 records; BROKEN at byte "
                           f"{at} [log.seq]: the signature record after seq 10 repeats the "
                           "one before it"), line
    shown = json.loads(cli("show", "-f", "json", bad).stdout)["integrity"]
    assert (shown["status"], shown["offset"], shown["kind"]) == ("broken", at, "seq"), shown


def test_show_names_the_line_of_a_copied_signature_line_in_json_lines(
        signed: Path, tmp_path: Path) -> None:
    good = tmp_path / "m.jsonl"
    jsonl.convert(signed, good, "jsonl")
    lines = good.read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(b'{"log": "signature"')][5]
    bad = tmp_path / "dup.jsonl"
    bad.write_bytes(b"".join([*lines[:at + 1], lines[at], *lines[at + 1:]]))
    done = cli("show", bad)
    assert done.returncode == 1, done.stderr
    line = _integrity_line(done.stdout)
    assert f"BROKEN at line {at + 2} [log.seq]: the signature line after seq 5 repeats" in (
        line), line

