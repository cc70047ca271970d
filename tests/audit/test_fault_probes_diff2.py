"""Fault probes, `diff` of two copies of a signed match.

A copy whose signature records were stripped (no key needed) holds the same events and head
digest as the site's: `diff` said "identical", exit 0, so a referee comparing the player's copy
with the site's was told they are the same file's content. The signatures are the site's word;
copies that do not hold the same ones differ (exit 1), and the table says how.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("cryptography")

from buraco_log import jsonl, log
from buraco_log.signing.keys import Signer
from cli.main import app
from tests.signing.helpers import match, write_signed

SITE = Signer.generate()


def _diff(a: Path, b: Path, *more: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["diff", str(a), str(b), *more])
    return result.exit_code, result.stdout


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("diff")
    events = match(key_id=SITE.key_id)
    write_signed(d / "site.blog", events, SITE)  # a signature after every event
    write_signed(d / "end.blog", events, SITE, sign_at="end")  # one, after MatchEnded
    log.write_log(d / "stripped.blog", events)  # the same events, every signature gone
    jsonl.convert(d / "site.blog", d / "site.jsonl", "jsonl")
    log.write_log(d / "plain.blog", match())
    return {p.stem + p.suffix: p for p in d.iterdir()}


def test_a_copy_with_its_signatures_stripped_differs(copies: dict[str, Path]) -> None:
    n = len(match())
    code, out = _diff(copies["site.blog"], copies["stripped.blog"])
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"A  {copies['site.blog']}: sealed, {n} events, {n} signatures,")
    assert lines[1].startswith(f"B  {copies['stripped.blog']}: sealed, {n} events, "
                               "0 signatures,")
    assert lines[2].startswith(f"same events, same head digest; the signatures differ: A holds "
                               f"{n}, B 0")
    code, out = _diff(copies["site.blog"], copies["stripped.blog"], "-f", "json")
    d = json.loads(out)
    assert code == 1 and not d["identical"] and d["heads_equal"] and d["diverge_seq"] is None
    assert (d["signatures_a"], d["signatures_b"], d["signatures_equal"]) == (n, 0, False)


def test_copies_signed_at_other_heads_differ(copies: dict[str, Path]) -> None:
    code, out = _diff(copies["site.blog"], copies["end.blog"])
    assert code == 1
    assert f"the signatures differ: A holds {len(match())}, B 1" in out


def test_a_copy_converted_to_json_lines_is_identical_signatures_and_all(
        copies: dict[str, Path]) -> None:
    code, out = _diff(copies["site.blog"], copies["site.jsonl"])
    assert code == 0
    assert out.splitlines()[-1] == "identical: same events, same head digest, same signatures"


def test_unsigned_copies_say_nothing_of_signatures(copies: dict[str, Path]) -> None:
    code, out = _diff(copies["plain.blog"], copies["plain.blog"])
    assert code == 0 and "signature" not in out
    assert out.splitlines()[-1] == "identical: same events, same head digest"
