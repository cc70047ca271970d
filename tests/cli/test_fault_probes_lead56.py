"""An archive named by a path that is no directory says what the path is."""

from __future__ import annotations

import os
from pathlib import Path

from tests.command_line import assert_error, run_all


def test_a_fifo_or_a_loop_of_links_named_as_the_archive_is_said_as_what_it_is(
        tmp_path: Path) -> None:
    fifo, loop = tmp_path / "fifo", tmp_path / "loop"
    os.mkfifo(fifo)
    loop.symlink_to(loop.name)
    # a FIFO was "is a file", a loop of links "no such archive directory"
    said_fifo, said_loop = run_all(["report", fifo], ["query", loop, "SELECT 1"], timeout=60)
    assert_error(said_fifo, 2, f"{fifo}: is a FIFO, not an archive directory")
    assert_error(said_loop, 2, f"{loop}: Too many levels of symbolic links")
