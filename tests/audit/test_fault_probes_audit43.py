"""Fault probes 43, the referee's JSON: what the text says, the JSON says, from the library.

Before: `audit -f json` of a damaged log lacked the text's closing note (what the later
sections cover: "... read before the chain broke, not proven intact", or "no event was read");
`show -f json` had no melds, which the table prints; `audit` of a loop of links printed a
FINDINGS report and exited 2. The notes and melds now come from `audit.audit_log` and
`audit.summarize`, so `-f json` equals the library's result; a link that leads nowhere is one
line and exit 2, as every command says it.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit, log
from tests.cli.probes import ROOT, cli, one_error_line
from tests.recorder.sources import matches

DISPUTES = ROOT / "examples" / "disputes"


def _as_json(obj: object) -> object:
    return json.loads(json.dumps(msgspec.to_builtins(obj)))


def _damaged(tmp_path: Path) -> dict[str, Path]:
    """A log cut in its tail, one cut inside its first record, and one with a changed record
    whose chain breaks (the dispute example)."""
    whole = tmp_path / "whole.blog"
    with log.Writer(whole) as writer:
        for event in matches()[0][:12]:
            writer.append(event)
    data = whole.read_bytes()
    torn, first = tmp_path / "torn.blog", tmp_path / "first.blog"
    torn.write_bytes(data[:-9])
    first.write_bytes(data[:30])  # the header and part of the first record
    return {"torn": torn, "first": first, "chain": DISPUTES / "tampered.log"}


@pytest.mark.parametrize("kind", ["torn", "first", "chain"])
def test_the_json_of_a_damaged_log_ends_with_the_note_the_text_ends_with(
        tmp_path: Path, kind: str) -> None:
    path = _damaged(tmp_path)[kind]
    text = cli("audit", path)
    done = cli("audit", path, "-f", "json")
    assert text.returncode == done.returncode == 1, (text.stderr, done.stderr)
    got = json.loads(done.stdout)
    assert got == _as_json(audit.audit_log(str(path)))  # JSON is the library's verdict
    last = [line for line in text.stdout.splitlines() if line.startswith("  note ")][-1]
    assert last == f"  note        {got['notes'][-1]}"
    if kind == "first":
        assert got["notes"][-1] == audit.NOTHING_READ_NOTE
    elif kind == "chain":
        assert got["notes"][-1].endswith("not proven intact: the change may be in any of them")
    else:
        n = got["integrity"]["events"]
        assert n > 0 and got["notes"][-1] == f"later sections cover the {n} events read intact"
    # said once in the text, below the sections, not also beside the heading
    assert text.stdout.count(got["notes"][-1]) == 1


def test_a_whole_log_has_no_damage_note() -> None:
    verdict = audit.audit_log(str(DISPUTES / "fair-thirteen.log"))
    assert verdict.integrity.status in ("sealed", "unsealed")
    assert not any(n.startswith(("later sections", "no event was read")) for n in verdict.notes)


def test_show_json_holds_the_melds_the_table_prints() -> None:
    path = DISPUTES / "fair-thirteen.log"
    text = cli("show", path)
    done = cli("show", path, "-f", "json")
    assert text.returncode == done.returncode == 0, (text.stderr, done.stderr)
    got = json.loads(done.stdout)
    assert got == _as_json(audit.show_log(path))
    melds = got["melds"]
    assert melds is not None and any(side["melds"] for side in melds["sides"])
    lines = text.stdout.splitlines()
    head = lines.index(f"melds     hand {melds['hand']}, at seq {melds['seq']}")
    shown = [line.split()[:3] for line in lines[head + 1:] if line.startswith("  side ")]
    listed = [["side", str(side["side"]), f"#{m['id']}"]
              for side in melds["sides"] for m in side["melds"]]
    assert shown == listed


def test_a_log_with_no_meld_on_the_table_says_null(tmp_path: Path) -> None:
    path = tmp_path / "start.blog"
    with log.Writer(path) as writer:
        for event in matches()[0][:2]:
            writer.append(event)
    summary = audit.show_log(path)
    assert summary.events == 2 and summary.melds is None
    done = cli("show", path, "-f", "json")
    assert json.loads(done.stdout)["melds"] is None and "melds " not in cli("show", path).stdout


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_audit_of_a_loop_of_links_is_one_line_and_exit_2_not_a_findings_report(
        tmp_path: Path, fmt: str) -> None:
    a, b = tmp_path / "a.blog", tmp_path / "b.blog"
    os.symlink(b, a)
    os.symlink(a, b)
    dangling = tmp_path / "d.blog"
    os.symlink(tmp_path / "gone.blog", dangling)
    for path, why in [(a, "Too many levels of symbolic links"),
                      (dangling, f"a symbolic link to '{tmp_path / 'gone.blog'}', which does "
                                 "not exist")]:
        done = cli("audit", path, "-f", fmt)
        assert one_error_line(done, 2) == f"buraco-log: error: {path}: {why}"
        if fmt == "json":
            assert json.loads(done.stdout)["error"]["exit_status"] == 2
        else:
            assert done.stdout == "" and "FINDINGS" not in done.stdout


def _mixed_directory(tmp_path: Path) -> Path:
    """Binary and JSON Lines logs, one match twice (a copy), a link to a log, a log cut
    inside its first record, a file that is not a log and a link that leads nowhere."""
    d = tmp_path / "mixed"
    d.mkdir()
    sim = ROOT / "examples" / "sim"
    (d / "a.blog").write_bytes((sim / "classic-2p-000000.blog").read_bytes())
    (d / "b-copy.blog").write_bytes((sim / "classic-2p-000000.blog").read_bytes())
    (d / "c.blog").write_bytes((DISPUTES / "wrong-score.log").read_bytes())
    (d / "d.blog").write_bytes((DISPUTES / "illegal.log").read_bytes())
    done = cli("convert", sim / "burako-2p-000000.blog", "-o", d / "m.jsonl")
    assert done.returncode == 0, done.stderr
    (d / "cut.blog").write_bytes((sim / "mega-2p-000000.blog").read_bytes()[:100])
    (d / "text.blog").write_text("not a log\n")
    os.symlink(d / "gone.blog", d / "z-dangling.blog")
    os.symlink(d / "a.blog", d / "z-link.blog")
    return d


def test_a_mixed_directory_counts_each_kind_and_says_a_match_held_twice(tmp_path: Path) -> None:
    d = _mixed_directory(tmp_path)
    done = cli("audit", d, "-j", "1")
    assert done.returncode == 2, done.stderr  # an entry is no log: the batch's worst status
    summary = done.stdout.splitlines()[-1]
    assert summary == ("audited 9 logs: 4 clean, 5 with findings (integrity 3, legality 1, "
                       "scoring 1), of which 1 is not a log and 1 is unreadable "
                       "[log.unreadable]; 1 log the same file as another "
                       "(see their notes); "
                       "2 logs of a match an earlier log holds too (see their notes)"), summary
    text = done.stdout
    assert (f"  note        the match is also in {d / 'a.blog'} (an identical copy: the same "
            "events and head digest)") in text
    assert (f"  note        the match is also in {d / 'c.blog'} (another log of the same "
            "match: `buraco-log diff` compares them)") in text
    assert text.count("the match is also in") == 2  # not of the link: the same file, said so


def test_audit_with_two_workers_prints_what_one_worker_prints_byte_for_byte(
        tmp_path: Path) -> None:
    d = _mixed_directory(tmp_path)
    for fmt in ("table", "json"):
        one = cli("audit", d, "-j", "1", "-f", fmt)
        two = cli("audit", d, "-j", "2", "-f", fmt)
        assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout,
                                                            two.stderr)
        assert one.returncode == 2 and one.stdout  # an entry is no log: the batch's worst status


def test_a_verdict_from_a_worker_process_has_the_json_of_one_made_here() -> None:
    """msgspec omits a default by identity: an unpickled "cards" was printed, "rendering"."""
    verdict = audit.audit_log(str(DISPUTES / "illegal.log"))
    assert verdict.legality.first_illegal is not None
    moved = pickle.loads(pickle.dumps(verdict))
    assert msgspec.json.encode(moved) == msgspec.json.encode(verdict)
    assert "rendering" not in msgspec.to_builtins(moved)["legality"]["first_illegal"]
