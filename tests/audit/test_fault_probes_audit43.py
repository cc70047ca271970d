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
