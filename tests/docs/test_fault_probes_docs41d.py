"""Probe round 41d of the docs harness: a page's exit statuses are checked.

Round 41 changed exit statuses (`show` and `replay` exit 1 on a wrong recorded score,
`review --partial` exits 1, an output named `out/` is refused with 2), and the harness of
test_docs.py checked a command's status only when the page showed no output for it: a page
could show a command that now exits 1 and stay green. A command now exits 0 unless it ends in
``# exit N``, and then exits N.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.blocks import (
    PAGES,
    UNMARKED,
    Block,
    blocks,
    console_steps,
    expected_status,
    run_block,
)


def _page(tmp_path: Path, text: str) -> Block:
    page = tmp_path / "page.md"
    page.write_text(f"```console\n{text}```\n")
    return blocks(page)[0]


def test_the_exit_mark_is_read_from_the_command() -> None:
    assert expected_status("buraco-log show x.log  # exit 1") == 1
    assert expected_status("buraco-log show x.log #exit 2") == 2
    assert expected_status("buraco-log show x.log") is None
    assert expected_status("echo '# exit 1 is a word here' done") is None


@pytest.mark.parametrize("text", [
    "$ echo shown; exit 1\nshown\n",            # output shown, status not 0, no mark
    "$ echo shown; exit 1  # exit 2\nshown\n",  # marked with another status
    "$ echo shown  # exit 1\nshown\n",          # marked, but it exits 0
])
def test_a_wrong_status_fails_the_page(tmp_path: Path, text: str) -> None:
    with pytest.raises(AssertionError, match="exited"):
        run_block(_page(tmp_path, text), tmp_path)


def test_a_marked_status_passes_and_its_output_is_still_checked(tmp_path: Path) -> None:
    run_block(_page(tmp_path, "$ echo shown; exit 3  # exit 3\nshown\n"), tmp_path)
    with pytest.raises(AssertionError, match="did not print"):
        run_block(_page(tmp_path, "$ echo shown; exit 3  # exit 3\nnot shown\n"), tmp_path)


def test_the_readme_exemptions_are_still_readme_commands() -> None:
    """An exemption left after the README was marked (or the command changed) goes too."""
    readme = [b for b in blocks(PAGES[0]) if b.lang == "console"]
    commands = {c for b in readme for c, _ in console_steps(b.text)}
    assert commands >= UNMARKED, UNMARKED - commands


def test_the_pages_mark_the_failures_round_41_made() -> None:
    """The exit statuses this round changed are shown, and so checked, on their pages."""
    marked = {(b.page.name, c) for page in PAGES for b in blocks(page) if b.lang == "console"
              for c, _ in console_steps(b.text) if expected_status(c) is not None}
    names = {(p, c.split("  #")[0]) for p, c in marked}
    assert ("disputes.md", "buraco-log show examples/disputes/wrong-score.log") in names
    assert any(p == "archive.md" and c.endswith("-o out/") for p, c in names), names
