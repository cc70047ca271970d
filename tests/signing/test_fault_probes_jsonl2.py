"""A JSON Lines signature line whose fields have the wrong JSON types.

The line is read untyped; a seq written as text or a head written as a number reached Python's
own error ("'<=' not supported between instances of 'int' and 'str'", "fromhex() argument must
be str, not int") in the audit's one line. It must say what a signature line needs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log import jsonl
from buraco_log.signing.keys import Signer
from tests.signing.helpers import audit, match, ring, write_signed

SITE = Signer.generate()
NEEDS = "match_id, head, key_id and signature must be text and seq an integer"


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("jsonl")
    write_signed(d / "m.blog", match(key_id=SITE.key_id), SITE, sign_at="end")
    jsonl.convert(d / "m.blog", d / "m.jsonl", "jsonl")
    return (d / "m.jsonl").read_text().splitlines()


@pytest.mark.parametrize(("field", "value"), [
    ("seq", "262"), ("seq", True), ("seq", 262.0), ("head", 5), ("match_id", None),
    ("key_id", 7), ("signature", ["00"])])
def test_a_field_of_the_wrong_type_is_named_in_one_line(
        lines: list[str], tmp_path: Path, field: str, value: object) -> None:
    number = next(i for i, line in enumerate(lines, 1) if '"signature"' in line
                  and line.startswith('{"log": "signature"'))
    obj = json.loads(lines[number - 1])
    obj[field] = value
    bad = [*lines[:number - 1], json.dumps(obj), *lines[number:]]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(bad) + "\n")
    v = audit(path, ring(SITE))
    assert v.integrity.status == "broken" and v.integrity.record == number
    assert v.integrity.message == f"not a signature line: {NEEDS}", v.integrity.message


def test_the_untouched_line_reads(lines: list[str], tmp_path: Path) -> None:
    path = tmp_path / "good.jsonl"
    path.write_text("\n".join(lines) + "\n")
    v = audit(path, ring(SITE), required=True)
    assert v.ok and v.signing.signatures == 1 and v.signing.verified is True
