"""Every shell and Python block of the README and docs/ is run, so the docs cannot drift.

The conventions (written down in CONTRIBUTING.md):

- ```` ```console ````: lines starting with ``$ `` are commands, run with bash in order; the
  lines after a command are output that must appear, in that order, in what it printed
  (spaces folded; a line ``...`` stands for any lines, and ``...`` inside a line for any
  text). A command must exit 0 unless it ends in the comment ``# exit N``: then it must
  exit N (a command whose status changed is a stale page, whatever it prints).
- ```` ```sh ````: every line that is not a comment is a command that must exit 0.
  ```` ```sh ci ```` marks the install and test commands, which CI itself runs: the test checks
  that ``.ci/run`` runs them word for word instead of running them again.
- ```` ```python ````: run as a script; it must exit 0 (and test_fault_probes_api45.py holds
  it to ``mypy --strict``). A block meant as a fragment, not a script, says so in its first
  line, ``# fragment: WHY`` (the reason is required): it is shown, neither run nor checked.
- Anything else (text, toml, json) is not run.

Each page runs in a fresh directory holding a copy of ``examples/`` and the few files the pages
name (``match.blog``, ``tampered.blog``, ``house.toml``), so its blocks may build on each
other, as a reader following the page would.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.docs.blocks import PAGES, ROOT, appears_in_order, blocks, run_block


def make_workdir(tmp: Path) -> Path:
    work = tmp / "work"
    shutil.copytree(ROOT / "examples", work / "examples",
                    ignore=shutil.ignore_patterns("__pycache__", "*.png"))
    sim = ROOT / "examples" / "sim"
    shutil.copy(sim / "classic-2p-000000.blog", work / "match.blog")
    shutil.copy(ROOT / "examples" / "disputes" / "tampered.log", work / "tampered.blog")
    (work / "house.toml").write_text('preset = "bossa-nova"\ntarget_score = 2000\n'
                                     "[bonuses]\ngoing_out = 100\n")
    return work


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_block_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    work = make_workdir(tmp_path)
    for block in blocks(page):
        run_block(block, work)


def test_the_readme_server_example_is_the_file_under_examples() -> None:
    code = (ROOT / "examples" / "record_a_match.py").read_text()
    shown = [b.text for b in blocks(ROOT / "README.md") if b.lang == "python"]
    assert code in shown, "README's server example differs from examples/record_a_match.py"


def test_the_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 200


def test_the_dispute_examples_are_the_golden_logs() -> None:
    for log in (ROOT / "examples" / "disputes").glob("*.log"):
        golden = ROOT / "tests" / "golden" / log.name
        assert log.read_bytes() == golden.read_bytes(), \
            f"{log.name}: copy tests/golden/{log.name} to examples/disputes/ again"


def test_the_harness_catches_a_missing_line_and_a_failing_command(tmp_path: Path) -> None:
    assert appears_in_order(["a", "...", "c"], "a\nb\nc\n") is None
    assert appears_in_order(["c", "a"], "a\nb\nc\n") == "a"
    assert appears_in_order(["x ... z"], "x y z\n") is None
    assert appears_in_order(["x ... z"], "z y x\n") == "x ... z"
    page = tmp_path / "page.md"
    page.write_text("```console\n$ echo hi\nbye\n```\n")
    with pytest.raises(AssertionError, match="did not print 'bye'"):
        run_block(blocks(page)[0], tmp_path)
    page.write_text("```sh\nfalse\n```\n")
    with pytest.raises(AssertionError, match="exited 1"):
        run_block(blocks(page)[0], tmp_path)
    page.write_text("```python\nraise SystemExit(3)\n```\n")
    with pytest.raises(AssertionError, match="the Python block failed"):
        run_block(blocks(page)[0], tmp_path)
    page.write_text("```python\n# fragment: a sketch\nraise SystemExit(3)\n```\n")
    run_block(blocks(page)[0], tmp_path)  # shown, not run
    page.write_text("```python\n# fragment\nraise SystemExit(3)\n```\n")
    with pytest.raises(AssertionError, match="says why"):
        run_block(blocks(page)[0], tmp_path)
