"""A log recorded then cut by a power loss (its tail zeroed), and the command line run where hard
links are refused."""

from __future__ import annotations

from pathlib import Path

from buraco_log import journal, log
from buraco_log.recorder import Recorder


def _recorded_then_power_lost(directory: Path) -> tuple[Path, int, list[object]]:
    """A recorder's log of 6 events whose last 2 records are zero on disk, as a power loss
    leaves them when only the journal was synced; the journal that acknowledged them is
    there. Returns the log, where its zeros start, and the events acknowledged."""
    from tests.recorder.sources import matches

    src = matches()[0]
    rec = Recorder(directory, sync="journal", sealed=False, checkpoint_every=600, save_every=0)
    for event in src[:6]:
        rec.append("a", event)
    generation, name = journal.generations(str(directory))[-1]
    kept = Path(name).read_bytes()
    rec.close()  # checkpoints: the log synced, the journal removed
    path = directory / "a.blog"
    with log.Reader(path) as reader:
        offsets = [off for off, _ in reader.segments()]
    with open(path, "r+b") as f:  # the pages of the last two rounds never reached the disk
        f.seek(offsets[4])
        f.write(bytes(path.stat().st_size - offsets[4]))
    (directory / journal.name_of(generation)).write_bytes(kept)
    return path, offsets[4], list(src[:6])


_NO_LINKS_CLI = """
import errno, os, sys
def link(src, dst, *args, **kwargs):
    raise OSError(errno.EPERM, os.strerror(errno.EPERM), src, None, dst)
os.link = link
if sys.argv[1] == "none":
    from buraco_log import log
    def rename(src, dst):
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS), src, None, dst)
    log._rename_noreplace = rename
sys.argv = ["buraco-log", *sys.argv[2:]]
from cli.entry import run
run()
"""
