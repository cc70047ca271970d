"""The pages' words against what the tool does, for what the block harness does not see.

test_docs.py runs each block and matches its printed lines; these hold the prose around the
blocks to the same: the files a page says its command wrote, the error the library page says a
value raises, and a summary line a page quotes with the command that prints it.
"""

from __future__ import annotations

import ast
import itertools
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from buraco_log import audit
from buraco_log.cards import format_card
from buraco_log.events import HandStarted
from buraco_log.jsonl import read_jsonl
from buraco_log.log import read_events
from buraco_log.reducer import state_at
from buraco_log.timeline import Timeline
from tests.docs.blocks import ROOT, blocks, fold

DOCS = ROOT / "docs"
SIMULATE = re.compile(r"^\$? ?(buraco-log simulate .*)$", re.MULTILINE)


def _simulate_claims(page: Path) -> list[tuple[str, int, str, list[str]]]:
    """(command, --matches, --out, the files the prose right after its block names there)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found = []
    for block in blocks(page):
        for command in SIMULATE.findall(block.text):
            words = shlex.split(command)
            opts = dict(itertools.pairwise(words))
            out = (opts.get("--out") or opts.get("-o") or "").rstrip("/")
            matches = int(opts.get("--matches", "1"))
            end = block.line + block.text.count("\n")  # the closing fence's index
            after = "\n".join(lines[end + 1:]).strip("\n").split("\n\n", 1)[0]
            named = re.findall(rf"`{re.escape(out)}/([^`]+\.blog)`", after)
            if out and named:
                found.append((command, matches, out, named))
    return found


def test_the_files_a_simulate_command_is_said_to_write_are_its_matches() -> None:
    claims = _simulate_claims(DOCS / "deals.md")
    assert claims, "deals.md names the files its simulate command writes"
    for command, matches, out, named in claims:
        numbers = [int(m.group(1)) for n in named if (m := re.search(r"-(\d{6})\.blog$", n))]
        assert numbers and numbers[0] == 0, (command, named)
        # --matches N writes match 0 to N - 1 (it said 000999 of --matches 10)
        assert numbers[-1] == matches - 1, f"`{command}` writes {out}/..." \
            f"{matches - 1:06d}.blog last, not {named[-1]}"


@pytest.mark.slow
def test_the_simulate_command_of_the_page_writes_the_files_it_names(tmp_path: Path) -> None:
    [(command, matches, out, named)] = _simulate_claims(DOCS / "deals.md")
    run = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    written = sorted(p.name for p in (tmp_path / out).iterdir())
    assert len(written) == matches
    for name in named:
        assert name in written, f"{out}/{name} is not among what `{command}` wrote: {written}"
    assert written[-1] == named[-1]


def _the_error_for_no_whole_number() -> tuple[str, list[object]]:
    """The class library.md says a no-whole-number seq raises, and the values it lists."""
    text = " ".join((DOCS / "library.md").read_text(encoding="utf-8").split())
    at = text.index("that is no whole number")
    named = re.findall(r"raises `(\w+Error)`", text[:at])
    values = re.match(r" \(([^)]*)\)", text[at + len("that is no whole number"):])
    assert named and values, "library.md says what a seq that is no whole number raises"
    return named[-1], [ast.literal_eval(v) for v in re.findall(r"`([^`]+)`", values.group(1))]


def test_a_seq_that_is_no_whole_number_raises_the_error_the_library_page_names() -> None:
    name, values = _the_error_for_no_whole_number()
    assert values == [True, 3.0, "3", None]
    events = read_jsonl(ROOT / "examples" / "golden" / "biriba.jsonl")
    timeline = Timeline(events)
    log = str(ROOT / "examples" / "disputes" / "illegal.log")
    for value in values:
        for ask in (lambda v: state_at(events, v), lambda v: timeline.view(v),
                    lambda v: audit.explain(log, v)):
            with pytest.raises(Exception) as raised:
                ask(value)  # the page said PastIllegalError; it is PositionError (exit 2)
            assert type(raised.value).__name__ == name, (value, raised.value)


QUOTED_RUN = re.compile(r"\(`(buraco-log [^`]+)` ends with `([^`]+)`\)")


def _quoted_runs(page: Path) -> list[tuple[str, str]]:
    text = " ".join(page.read_text(encoding="utf-8").split())
    return QUOTED_RUN.findall(text)


def test_the_audit_summary_line_the_page_quotes_names_its_command() -> None:
    runs = _quoted_runs(DOCS / "disputes.md")
    assert [c for c, line in runs if line.startswith("audited ")], \
        "disputes.md quotes the audit's summary line with the command that prints it"


@pytest.mark.slow
def test_a_quoted_summary_line_is_what_its_command_prints(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples" / "disputes", tmp_path / "examples" / "disputes")
    shutil.copy(ROOT / "examples" / "sim" / "classic-2p-000000.blog", tmp_path / "match.blog")
    for command, line in _quoted_runs(DOCS / "disputes.md"):
        run = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300, check=False)
        assert run.stdout.strip(), run.stderr
        assert fold(run.stdout.strip().splitlines()[-1]) == fold(line), \
            f"`{command}` ends with:\n{run.stdout.strip().splitlines()[-1]}"
        # "those six logs say it of the four disputed versions of fair-thirteen.log"
        assert run.stdout.count("the match is also in examples/disputes/fair-thirteen.log") == 4


def test_the_unbacked_deals_note_is_given_as_audit_settings_says_with_the_setting_on_and_off(
) -> None:
    text = " ".join((DOCS / "audit-settings.md").read_text(encoding="utf-8").split())
    [(note, on, hint)] = re.findall(r"- `(provenance: no commitment [^`]+)`, with the setting on "
                                    r"beside its `([\w.]+)` finding, and with it off going on "
                                    r"`([^`]+)`", text)
    prefix = note.split(" N deals")[0]  # "provenance: no commitment or plain seed backs"
    log = ROOT / "examples" / "golden" / "biriba.jsonl"  # no commitment, no plain seed
    off = audit.audit_log(log, require_commitment=False)
    [said] = [n for n in off.notes if n.startswith(prefix)]
    assert said.endswith(hint) and off.findings == ()
    strict = audit.audit_log(log, require_commitment=True)  # the page said: only when off
    assert [n for n in strict.notes if n.startswith(prefix)]
    assert [f.rule for f in strict.findings] == [on]


def test_diff_says_where_two_long_lists_of_cards_part_as_disputes_says_a_list_is_said_whole(
) -> None:
    assert "a list of cards whole" in " ".join(
        (DOCS / "disputes.md").read_text(encoding="utf-8").split())
    fair, forged = (str(ROOT / "examples" / "disputes" / f"{n}.log")
                    for n in ("fair-thirteen", "forged-deal"))
    [a, b] = [read_events(p)[1] for p in (fair, forged)]  # the forged hand start
    assert isinstance(a, HandStarted) and isinstance(b, HandStarted)
    at = next(i for i, (u, v) in enumerate(zip(a.stock, b.stock, strict=True)) if u != v)
    said = audit.diff_logs(fair, forged).differences
    # cut at 120 characters, both stocks read the same 30 cards: the 58th was not said
    want = f"stock[{at}]: {format_card(a.stock[at])} vs {format_card(b.stock[at])}"
    assert [d for d in said if d.startswith(want)], said
    assert [d for d in said if ", ".join(repr(format_card(c)) for c in b.stock) in d], said


def test_the_readme_server_example_given_help_shows_its_usage_and_writes_no_log(
        tmp_path: Path) -> None:
    """`python examples/record_a_match.py --help` wrote a match to a log named `--help`."""
    import sys

    script = ROOT / "examples" / "record_a_match.py"
    done = subprocess.run([sys.executable, str(script), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "Run: python examples/record_a_match.py [LOG]" in done.stderr
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []
