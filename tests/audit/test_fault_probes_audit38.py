"""Fault probes 38, the referee's commands: `diff` of a copy damaged in the middle, `audit` of
one log under two names, and the deal provenance findings each naming its seq and rule.

Before: `diff` said of a copy whose integrity chain breaks in the middle "B is a prefix of A"
(its events stop at the damage, which is no prefix: the rest of B exists, changed); `audit` of a
log and a hard or symbolic link to it gave two verdicts, two clean logs, and never said they are
one file (one match counted twice).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log.dealer import deal_seeded
from buraco_log.events import AnyEvent, HandStarted, MatchEnded, MatchStarted
from tests import brokenlogs as bl

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> tuple[int, str, str]:
    out = subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False,
                         stdin=subprocess.DEVNULL)
    return out.returncode, out.stdout, out.stderr


@pytest.fixture(scope="module")
def clean() -> list[AnyEvent]:
    return bl.fair_match("thirteen-quick", 2, 1)


def test_a_copy_damaged_in_the_middle_is_not_called_a_prefix(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    whole = bl.write(tmp_path / "whole.blog", clean, segment=20)
    hurt = bl.write(tmp_path / "hurt.blog", clean, segment=20)
    offset = bl.tamper(hurt, 5)  # the chain breaks at record 5, events go on after it
    code, out, err = _run("diff", str(whole), str(hurt))
    assert code == 1, err
    assert "is a prefix of" not in out, out
    last = out.splitlines()[-1]
    # the records before 5 hold 20 events each: those are the events read intact
    assert last.startswith(f"B is broken at byte {offset}: its events read intact agree with "
                           f"A up to seq {5 * 20 - 1}, and A goes on from seq {5 * 20}"), last
    assert "Traceback" not in err


def test_a_json_lines_copy_damaged_in_the_middle_names_its_line(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    whole = bl.write(tmp_path / "whole.blog", clean)
    copy = tmp_path / "copy.jsonl"
    code, _, err = _run("convert", str(whole), "-o", str(copy))
    assert code == 0, err
    lines = copy.read_text().splitlines(keepends=True)
    lines[150] = lines[150][:-6] + "\n"  # line 151 (lines count from 1) cut short
    copy.write_text("".join(lines))
    code, out, err = _run("diff", str(whole), str(copy))
    assert code == 1, err
    last = out.splitlines()[-1]
    assert last.startswith("B is broken at line 151: its events read intact agree with A up "
                           "to seq "), last
    code, out, _ = _run("diff", str(copy), str(whole), "-f", "json")
    d = json.loads(out)
    assert (d["damage_a"], d["damage_b"]) == ("line 151", None)


def test_a_whole_prefix_is_still_called_one(tmp_path: Path, clean: list[AnyEvent]) -> None:
    a = bl.write(tmp_path / "a.blog", clean)
    b = bl.write(tmp_path / "b.blog", clean[:100])
    code, out, _ = _run("diff", str(a), str(b))
    assert code == 1
    assert out.splitlines()[-1] == ("B is a prefix of A: they agree up to seq 99; A goes on "
                                    "from seq 100")


def test_one_log_under_two_names_is_said_to_be_one_file(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    d = tmp_path / "logs"
    d.mkdir()
    log = bl.write(d / "a.blog", clean)
    os.link(log, d / "b-hard.blog")
    (d / "c-sym.blog").symlink_to("a.blog")
    bl.write(d / "d-other.blog", clean[:50])  # another file, equal in part: no note
    code, out, err = _run("audit", "-j", "2", str(d))
    assert code == 0, out + err
    lines = out.splitlines()
    for name in ("b-hard.blog", "c-sym.blog"):
        i = next(i for i, x in enumerate(lines) if x.startswith(f"{d / name}: OK"))
        assert lines[i + 1] == (f"  note        the same file as {log} (a link): one match, "
                                "audited under both names"), lines[i:i + 3]
    assert sum(x.startswith("  note        the same file as") for x in lines) == 2
    # d-other holds the same match in another file: said as that (probe 43), not as a link
    assert lines[-1].endswith("; 2 logs the same file as another (see their notes); 1 log of "
                              "a match an earlier log holds too (see their notes)"), lines[-1]


def _end(events: list[AnyEvent]) -> MatchEnded:
    end = events[-1]
    assert isinstance(end, MatchEnded) and end.server_seed is not None
    return end


def _deals(events: list[AnyEvent]) -> list[HandStarted]:
    return [e for e in events if isinstance(e, HandStarted)]


def _forge(case: str, clean: list[AnyEvent]) -> tuple[list[AnyEvent], int, str]:
    """A broken copy of ``clean``, the seq its finding must name, and the rule."""
    end = _end(clean)
    body = clean[:-1]
    if case == "not revealed":
        return [*body, msgspec.structs.replace(end, server_seed=None)], end.seq, \
            "deal.not_revealed"
    if case == "wrong seed":
        return [*body, msgspec.structs.replace(end, server_seed="ab" * 32)], end.seq, \
            "deal.seed_mismatch"
    if case == "seed re-cased":
        return [*body, msgspec.structs.replace(end, server_seed=end.server_seed.upper())], \
            end.seq, "deal.seed_mismatch"
    first, second = _deals(clean)[:2]
    if case == "plain seed":
        start = clean[0]
        assert isinstance(start, MatchStarted)
        plain = deal_seeded(start.rules, 2, 0, first.dealer, "plain", seq=first.seq)
        return [plain if e is first else e for e in clean], first.seq, "deal.not_committed"
    # the first deal is the committed one, the second is forged
    forged = msgspec.structs.replace(second, stock=tuple(reversed(second.stock)))
    return [forged if e is second else e for e in clean], second.seq, "deal.mismatch"


@pytest.mark.parametrize("case", ["not revealed", "wrong seed", "seed re-cased", "plain seed",
                                  "second deal forged"])
def test_each_provenance_finding_names_its_seq_and_rule(
        tmp_path: Path, clean: list[AnyEvent], case: str) -> None:
    events, seq, rule = _forge(case, clean)
    path = bl.write(tmp_path / "forged.blog", events)
    code, out, err = _run("audit", str(path))
    assert code == 1, out + err
    assert any(x.startswith(f"    seq {seq} [{rule}] ") for x in out.splitlines()), out
    assert "Traceback" not in err


def test_a_re_cased_seed_reveal_says_so(tmp_path: Path, clean: list[AnyEvent]) -> None:
    """Before: only "does not hash to the published commitment", as for any other seed."""
    events, seq, rule = _forge("seed re-cased", clean)
    code, out, _ = _run("audit", str(bl.write(tmp_path / "upper.blog", events)))
    assert code == 1
    line = next(x for x in out.splitlines() if x.startswith(f"    seq {seq} [{rule}] "))
    assert line.endswith("(its lower-case form does: the seed was re-cased after it was "
                         "committed, and the deals derive from its exact text)"), line
    events, seq, rule = _forge("wrong seed", clean)  # no case of it matches: no hint
    _, out, _ = _run("audit", str(bl.write(tmp_path / "wrong.blog", events)))
    line = next(x for x in out.splitlines() if x.startswith(f"    seq {seq} [{rule}] "))
    assert line.endswith("does not hash to the published commitment"), line


def test_two_thousand_small_logs_each_reported_once(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    d = tmp_path / "many"
    d.mkdir()
    data = bl.write(tmp_path / "small.blog", clean[:6]).read_bytes()
    bad = {7, 1234, 1999}  # a byte of their record changed: each must be named, once
    hurt = bytearray(data)
    hurt[-12] ^= 0xFF
    for i in range(2000):
        (d / f"m{i:04d}.blog").write_bytes(bytes(hurt) if i in bad else data)
    code, out, err = _run("audit", "-j", "2", "-f", "json", str(d))
    assert code == 1, err
    verdicts = json.loads(out)
    paths = [v["path"] for v in verdicts]
    assert len(paths) == 2000 and len(set(paths)) == 2000
    assert {p for p, v in zip(paths, verdicts, strict=True) if not v["ok"]} == {
        str(d / f"m{i:04d}.blog") for i in bad}


@pytest.mark.parametrize("cut", [40, 0])
def test_a_malformed_commitment_is_named_at_the_match_start(
        tmp_path: Path, clean: list[AnyEvent], cut: int) -> None:
    """Before: the finding was at the match end's seq ("revealed server seed does not hash to
    the published commitment"), as if the reveal were wrong; the commitment is."""
    start = clean[0]
    assert isinstance(start, MatchStarted) and start.commitment is not None
    bad = [msgspec.structs.replace(start, commitment=start.commitment[:cut]), *clean[1:]]
    code, out, err = _run("audit", str(bl.write(tmp_path / "c.blog", bad)))
    assert code == 1, err
    found = [x for x in out.splitlines() if x.startswith("    seq ") and "[deal." in x]
    assert len(found) == 1, found
    assert found[0].startswith(f"    seq {start.seq} [deal.seed_mismatch] the published "
                               f"commitment ({cut} characters, "), found
    assert found[0].endswith("is not a SHA-256 digest (64 hex digits): no revealed seed can "
                             "match it"), found


def test_audit_html_of_a_file_that_is_no_log_says_no_page_was_written(tmp_path: Path) -> None:
    """Before: exit 2 and the verdict, but not a word that the page asked for was not written."""
    junk = tmp_path / "junk.blog"
    junk.write_bytes(b"garbage, not a log")
    page = tmp_path / "page.html"
    code, out, err = _run("audit", str(junk), "--html", str(page))
    assert code == 2
    assert out.startswith(f"{junk}: FINDINGS (1)"), out
    assert err.splitlines() == [f"buraco-log: error: {page}: no page written: {junk} is not "
                                "a log"], err
    assert not page.exists()


@pytest.mark.parametrize("spelling", ["same", "symlink", "hardlink"])
def test_diff_of_one_file_with_itself_says_so(
        tmp_path: Path, clean: list[AnyEvent], spelling: str) -> None:
    """Before: "identical", as of two copies that agree; a referee comparing the site's copy
    with a "player's copy" that is a link to it was told they agree."""
    a = bl.write(tmp_path / "a.blog", clean[:40])
    b = {"same": a, "symlink": tmp_path / "s.blog", "hardlink": tmp_path / "h.blog"}[spelling]
    if spelling == "symlink":
        b.symlink_to(a.name)
    elif spelling == "hardlink":
        os.link(a, b)
    code, out, _ = _run("diff", str(a), str(b))
    assert code == 0
    assert out.splitlines()[2:] == [
        "note: A and B are the same file: it was compared with itself, not with another copy",
        "identical: same events, same head digest"], out
    code, out, _ = _run("diff", str(a), str(b), "-f", "json")
    assert json.loads(out)["same_file"] is True


def test_diff_of_two_copies_says_nothing_of_one_file(
        tmp_path: Path, clean: list[AnyEvent]) -> None:
    a = bl.write(tmp_path / "a.blog", clean[:40])
    b = tmp_path / "b.jsonl"
    assert _run("convert", str(a), "-o", str(b))[0] == 0  # other bytes, the same events
    code, out, _ = _run("diff", str(a), str(b))
    assert code == 0
    assert out.splitlines()[2:] == ["identical: same events, same head digest"], out
