"""Fault probes of the CLI, round 42 (second pass): what the first pass left.

- `demo -o X` on a full disk said "X, byte 20, seq 0: write failed: ...; the part of the record
  written was cut off (the log ends whole at byte 20)", though nothing was left: the byte and
  seq were those of its temporary file. It says what convert says of a failed new file.
- A write's EIO that named no file (the fsync of the new file's directory) was put on the log
  being read: `convert LOG -o NEW` said "LOG: Input/output error", exit 2.
- `demo --overwrite` and `simulate --overwrite` replaced a symbolic link itself, where `view`,
  `review -o`, `audit --html` and `convert --overwrite` write through it; and through a link,
  a FIFO became the demo's log. A dangling link named as a simulated log was replaced
  without --overwrite.
- `review`'s text padded the moves by characters: a wide (CJK, emoji) one shifted its columns.
- `audit --continues NAME` with a name too long for a file lost the option in its error.
"""

from __future__ import annotations

import errno
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from buraco_log import log
from buraco_log.errors import LogWriteError
from buraco_log.expert import Budget
from buraco_log.review import HandReview, Review, ReviewedMove, to_text
from cli import demo_cmd
from tests.cli.probes import one_error_line

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples" / "sim" / "classic-2p-000000.blog"

# `buraco-log ARGS` whose every fsync of a directory fails, as a dying disk fails it (EIO)
_DIR_FSYNC_EIO = """
import errno, os, runpy, stat, sys
real = os.fsync
def fsync(fd):
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        raise OSError(errno.EIO, os.strerror(errno.EIO))
    return real(fd)
os.fsync = fsync
sys.argv = ["buraco-log", *sys.argv[1:]]
runpy.run_module("cli", run_name="__main__")
"""


def cli(*args: object, cwd: Path, code: str | None = None,
        **popen: object) -> subprocess.CompletedProcess[str]:
    head = ["-c", code] if code is not None else ["-m", "cli"]
    done: subprocess.CompletedProcess[str] = subprocess.run(  # type: ignore[call-overload]
        [sys.executable, *head, *map(str, args)], capture_output=True, text=True, cwd=cwd,
        timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, **popen)
    return done


# -- 1. demo -o X on a full disk -----------------------------------------------------------------

def _file_size_cap() -> None:
    """Files may not grow past 4 KiB (a demo's log is about 9): a write fails as on a full
    disk (EFBIG), after whole records were written."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_demo_on_a_full_disk_names_its_log_as_convert_does_and_leaves_nothing(
        tmp_path: Path) -> None:
    line = one_error_line(cli("demo", "-o", "d.blog", cwd=tmp_path, preexec_fn=_file_size_cap), 1)
    assert line == "buraco-log: error: d.blog: writing the new file failed: File too large", line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["d.blog", "d.jsonl"])
def test_demo_whose_writes_fail_says_no_byte_of_a_temporary(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    events = log.read_events(LOG)
    real = os.pwrite
    written: list[int] = []

    def full(fd: int, data: bytes, offset: int) -> int:
        if offset > 0:  # the header went: the first event's record finds the disk full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(offset)
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", full)
    with pytest.raises(LogWriteError) as caught:
        demo_cmd._write(tmp_path / name, events)
    assert written, "the probe never reached the log's writes"
    assert str(caught.value) == (f"{tmp_path / name}: writing the new file failed: "
                                 "No space left on device")
    assert list(tmp_path.iterdir()) == []


# -- 2. a write's EIO that names no file -----------------------------------------------------------

@pytest.mark.parametrize("extra", [[], ["--overwrite"]])
def test_convert_whose_directory_fsync_fails_names_its_output_not_the_log(
        tmp_path: Path, extra: list[str]) -> None:
    (tmp_path / "src.blog").write_bytes(LOG.read_bytes())
    if extra:
        (tmp_path / "out.jsonl").write_text("old\n")
    done = cli("convert", "src.blog", "-o", "out.jsonl", *extra, cwd=tmp_path,
               code=_DIR_FSYNC_EIO)
    line = one_error_line(done, 1)  # it was "src.blog: Input/output error", exit 2
    if extra:  # the temporary's fsync failed first: removed, the old file kept
        assert line == ("buraco-log: error: out.jsonl: writing the new file failed: "
                        "Input/output error"), line
        assert (tmp_path / "out.jsonl").read_text() == "old\n"
    else:  # the new file is in place, whole, and says so (probe 42b, log42b)
        assert line.startswith("buraco-log: error: out.jsonl: written, but its directory could "
                               "not be made durable (Input/output error)"), line


def test_a_directory_fsync_that_fails_names_the_file(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def eio(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", eio)
    with pytest.raises(OSError) as caught:
        log.fsync_dir(str(tmp_path / "new.blog"))
    assert caught.value.errno == errno.EIO and caught.value.filename == str(tmp_path / "new.blog")


# -- 3. symbolic links named as an output -------------------------------------------------------

def test_demo_overwrite_writes_through_a_link_as_every_output(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "old.blog").write_text("old\n")
    (tmp_path / "l.blog").symlink_to("shared/old.blog")
    (tmp_path / "new.blog").symlink_to("shared/new.blog")  # dangling: the file is made there
    for name in ("l.blog", "new.blog"):
        done = cli("demo", "-o", name, "--overwrite", "--players", "2", "--rules", "classic",
                   cwd=tmp_path)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert (tmp_path / name).is_symlink()  # the link stays
    for name in ("old.blog", "new.blog"):
        assert log.read_events(shared / name)  # the files it names are the logs
    assert sorted(p.name for p in shared.iterdir()) == ["new.blog", "old.blog"]


def test_demo_overwrite_of_a_link_to_a_fifo_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "f")
    (tmp_path / "l.blog").symlink_to("f")
    line = one_error_line(cli("demo", "-o", "l.blog", "--overwrite", cwd=tmp_path), 2)
    assert line == ("buraco-log: error: l.blog: is a FIFO; --overwrite replaces a file, not "
                    "FIFOs"), line
    assert (tmp_path / "l.blog").is_symlink()


def test_simulate_writes_through_a_link_and_a_dangling_one_is_taken(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    link = out / "classic-2p-000000.blog"
    link.symlink_to("../kept.blog")  # dangling: refused without --overwrite, as a file is
    args = ("simulate", "--matches", "1", "-o", out, "--no-progress")
    line = one_error_line(cli(*args, cwd=tmp_path), 2)
    assert line.startswith(f"buraco-log: error: {link}: exists; refusing to replace it"), line
    done = cli(*args, "--overwrite", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and log.read_events(tmp_path / "kept.blog")
    assert sorted(p.name for p in out.iterdir()) == [link.name]


# -- 4. review's text, by terminal columns ------------------------------------------------------

def _move(seq: int, played: str) -> ReviewedMove:
    return ReviewedMove(seq=seq, hand=0, turn=1, kind="discard", played=played,
                        best="discard 2♠", cost=1.0, se=0.5, flagged=False, played_event={},
                        best_event={}, samples=2, alternatives=())


def test_review_text_keeps_its_columns_with_wide_moves() -> None:
    moves = (_move(1, "discard 🟡7"), _move(2, "discard 7y"), _move(3, "meld 王芳"))
    review = Review(version=1, expert_version=1, match_id="m", rules="burako", seat=0,
                    player="p", side=0, seed="s", budget=Budget(samples=2), threshold=10.0,
                    moves=moves, hands=(HandReview(0, 3, 0, 0.0, 0.0, 3.0),), decisions=3,
                    mistakes=0, lost=0.0)
    from cli.safetext import columns

    rows = [line for line in to_text(review).splitlines() if " seq " in line]
    assert len(rows) == 3
    # the verdict ("best", "best: X" or "about even with X") in the same column on every row
    starts = {columns(row[:row.index("about even with")]) for row in rows}
    assert len(starts) == 1, rows
    # two samples: one chose, one measured: no interval, and the rows do not say "± 0.0"
    assert all(row.endswith("±   n/a") for row in rows), rows


# -- 5. --continues with a name too long for a file --------------------------------------------

def test_continues_with_a_name_too_long_keeps_the_option_in_its_error(tmp_path: Path) -> None:
    name = "x" * 300 + ".blog"
    line = one_error_line(cli("audit", LOG, "--continues", name, cwd=tmp_path), 2)
    assert line == f"buraco-log: error: --continues {name}: File name too long", line
