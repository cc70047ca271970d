"""Fault probes of the log, round 42 (second pass, helper log42b).

- A directory's fsync that failed after `convert` linked its new file into place said the write
  failed (exit 1) while the file stayed, whole: `convert`, `seal`, `repair` and `demo -o` now
  say "written (sealed, repaired), but its directory could not be made durable", exit 1, and
  the file stays (docs/log-format.md).
- `simulate` writing through a symbolic link puts its `.tmp` beside the file the link names;
  an interrupted run's clean-up looked in the output folder only.
- A binary log named `.jsonl` read as "byte 18 of the line is not UTF-8"; a byte order mark at
  the start of a line past the first read as "invalid character (byte 0)".
- `cards.deck(10**10)` built ten billion jokers: it is bounded as the rules' `jokers` knob.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from buraco_log import cards, jsonl, log, rules, simulate
from buraco_log.errors import RulesError
from tests.log.cli_run import REPO, UNSEALED, assert_error, run

LOG = REPO / "examples" / "format" / "v2.blog"
LOG_JSONL = REPO / "examples" / "format" / "v2.jsonl"

# `buraco-log ARGS` whose fsync of the current directory fails (EIO); other folders' (a
# temporary folder's) work
_CWD_FSYNC_EIO = """
import errno, os, runpy, sys
from buraco_log import log
real = log.fsync_dir
def fsync_dir(path):
    if os.path.dirname(os.path.abspath(path)) == os.getcwd():
        raise OSError(errno.EIO, os.strerror(errno.EIO), path)
    real(path)
log.fsync_dir = fsync_dir
sys.argv = ["buraco-log", *sys.argv[1:]]
runpy.run_module("cli", run_name="__main__")
"""


def _head(path: Path) -> str:
    if path.suffix == ".jsonl":
        return log.head_digest(jsonl.read_jsonl(path))
    return log.verify(path).head


def _eio(path: str) -> None:
    raise OSError(errno.EIO, os.strerror(errno.EIO), path)


# -- 1. a directory that cannot be made durable after the file is in place ---------------------

@pytest.mark.parametrize(("src", "name", "to"), [(LOG, "out.jsonl", "jsonl"),
                                                 (LOG_JSONL, "out.blog", "binary")])
def test_convert_whose_directory_fsync_fails_says_the_file_is_whole_and_keeps_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, src: Path, name: str, to: Any) -> None:
    out = tmp_path / name
    monkeypatch.setattr(log, "fsync_dir", _eio)
    with pytest.raises(log.NotDurableError) as caught:
        jsonl.convert(src, out, to)
    assert caught.value.path == str(out) and caught.value.exit_status == 1
    assert "written, but its directory could not be made durable (Input/output error)" in \
        str(caught.value)
    monkeypatch.undo()
    assert _head(out) == _head(src)  # whole, as it says
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary left


def test_seal_and_repair_say_what_was_done_when_the_directory_fsync_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unsealed, torn = tmp_path / "u.blog", tmp_path / "t.blog"
    unsealed.write_bytes(UNSEALED.read_bytes())
    torn.write_bytes(LOG.read_bytes()[:-5])  # the last record cut short
    monkeypatch.setattr(log, "fsync_dir", _eio)
    with pytest.raises(log.NotDurableError, match="sealed, but its directory could not be"):
        log.seal(unsealed)
    with pytest.raises(log.NotDurableError, match="repaired, but its directory could not be"):
        log.repair(torn, backup=False)  # with a backup, nothing is cut (test_fault_probes_log45)
    monkeypatch.undo()
    assert log.verify(unsealed).sealed  # done, whole, in place
    assert log.verify(torn).torn is None


@pytest.mark.parametrize("command", [["convert", "src.blog", "-o", "new.jsonl"],
                                     ["demo", "-o", "new.jsonl"]])
def test_cli_says_written_but_not_durable_and_leaves_the_whole_file(
        tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "src.blog").write_bytes(LOG.read_bytes())
    done = subprocess.run([sys.executable, "-c", _CWD_FSYNC_EIO, *command], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert lines == [lines[0]] and "Traceback" not in done.stderr, done.stderr[-800:]
    assert lines[0].startswith("buraco-log: error: new.jsonl: written, but its directory could "
                               "not be made durable (Input/output error)"), lines
    assert jsonl.read_jsonl(tmp_path / "new.jsonl")  # whole: every line reads
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.jsonl", "src.blog"]


# -- 2. simulate's temporary beside a link's target ---------------------------------------------

def test_an_interrupted_simulate_removes_the_temporary_beside_a_links_target(
        tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    preset = rules.PRESETS["classic"]
    name = simulate.match_file(preset, 2, 0)
    (out / name).symlink_to(elsewhere / "kept.blog")  # dangling: the run makes the file there
    (elsewhere / "other.blog.tmp").write_text("not this run's")
    # what a worker stopped mid-write leaves: write_match's temporary, where it puts it
    tmp = Path(f"{simulate.rename_target(out / name)}{simulate._TMP}")
    assert tmp.parent == elsewhere
    tmp.write_bytes(b"BURACOLG half")
    simulate._remove_unfinished(str(out), preset, 2)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["other.blog.tmp"]
    assert (out / name).is_symlink()  # the link itself stays


# -- 3. a binary log named .jsonl, a byte order mark past line 1 ----------------------------------

def test_a_binary_log_named_jsonl_is_named_a_binary_log(tmp_path: Path) -> None:
    for size in (None, 30):  # whole, and cut inside the header's first segment
        path = tmp_path / "m.jsonl"
        path.write_bytes(LOG.read_bytes()[:size])
        # no JSON Lines log at all: exit 2 at byte 0, as a JSON Lines log named .blog
        assert_error(run("verify", path), 2, f"{path}, byte 0", "not a JSON Lines log",
                     "a binary buraco-log log (it starts with BURACOLG)", "rename it",
                     "[log.header]")


def test_a_byte_order_mark_is_refused_and_named_on_any_line(tmp_path: Path) -> None:
    text = LOG_JSONL.read_bytes()
    first, joined = tmp_path / "first.jsonl", tmp_path / "joined.jsonl"
    first.write_bytes(b"\xef\xbb\xbf" + text)
    joined.write_bytes(b"\n\xef\xbb\xbf" + text)  # as `cat a.jsonl b.jsonl` gives
    assert_error(run("verify", first), 1, f"{first}, line 1", "the file starts with a byte "
                 "order mark (EF BB BF), which is refused")
    line = assert_error(run("verify", joined), 1, f"{joined}, line 2", "the line starts with a "
                        "byte order mark (EF BB BF), which is refused")
    assert "invalid character" not in line


# -- 5. the deck is bounded -----------------------------------------------------------------------

def test_deck_is_bounded_as_the_jokers_knob() -> None:
    assert rules.BOUNDS["jokers"][1] == cards.JOKERS_MAX
    assert len(cards.deck(cards.JOKERS_MAX)) == 104 + cards.JOKERS_MAX
    np = pytest.importorskip("numpy")
    assert cards.deck(np.int64(2)) == cards.deck(2)  # a NumPy integer is a count
    for bad, words in [(10**10, "10000000000 is out of bounds (0 to 4)"),
                       (-1, "-1 is out of bounds"), (10**40, "(41 digits) is out of bounds"),
                       (True, "True is not an integer"), (2.0, "2.0 is not an integer")]:
        with pytest.raises(RulesError, match="jokers") as caught:
            cards.deck(bad)
        assert words in str(caught.value)
