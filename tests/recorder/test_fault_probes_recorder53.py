"""Fault probes of the recorder, round 53: a directory put at the recorder's path between its
look (``stat``) and the file it then made by that path.

The recorder looks whether its directory is still at its path before it starts a journal, saves
the tables' states or creates a log, and then made the file by the path: a directory put in
place between the two (``mv logs logs.old; mkdir logs``, by another program at any moment)
took a new journal (found by the CI's run of round 52's probe under load: a journal in the new
directory, away from its logs) or the states file of logs it does not hold. Each is now made in
the directory the recorder holds open, whatever is at the path. The probes put the directory
in place exactly between the look and the making, by wrapping the look.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import SAVED_NAME, Recorder
from tests.recorder.sources import matches, source_of
from tests.recorder.swaps import replace_after_next_look


def test_a_journal_started_as_the_directory_is_replaced_stays_with_its_logs(
        tmp_path: Path) -> None:
    a = source_of("a", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    rec = Recorder(live, sync="journal", save_every=0, checkpoint_every=0.0)
    try:
        for event in a[:5]:
            assert rec.append("a", event) == event.seq
        arm = replace_after_next_look(rec, live, moved, "_maybe_checkpoint")
        # The next checkpoint looks, then starts a journal; the moves after it are refused.
        # (Which round's: a round looks after its acknowledgements, and not while the last
        # checkpoint still runs: its syncfs took ten rounds and more on a loaded host, and a
        # fixed ten moves saw no refusal. The moves go on until the directory was replaced.)
        arm()
        acked = 5
        with pytest.raises(LogFormatError, match="renamed or removed under it"):
            for event in a[5:]:
                replaced = moved.exists()
                assert rec.append("a", event) == event.seq
                acked += 1
                assert not replaced, "a move after the directory was replaced was acknowledged"
    finally:
        rec.close()
    assert sorted(p.name for p in live.iterdir()) == []
    with Recorder(moved, sync="journal") as where:  # every acknowledged move is there
        assert where.next_seq("a") in (acked, acked + 1)
    assert journal.generations(str(moved), unfolded=True) == []
    assert log.read_events(moved / "a.blog")[:acked] == list(a[:acked])


@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_states_saved_as_the_directory_is_replaced_stay_with_their_logs(
        tmp_path: Path, sync: str) -> None:
    a = source_of("a", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    rec = Recorder(live, sync=sync, save_every=0, checkpoint_every=600)
    try:
        for event in a[:5]:
            assert rec.append("a", event) == event.seq
        arm = replace_after_next_look(rec, live, moved, "_save_states")
        arm()
        rec._save_states()  # as its background save does
    finally:
        rec.close()
    assert SAVED_NAME not in [p.name for p in live.iterdir()]
    with Recorder(moved, sync=sync) as where:
        assert where.next_seq("a") == 5
    assert log.read_events(moved / "a.blog") == list(a[:5])


def test_a_log_created_as_the_directory_is_replaced_is_not_made_there(tmp_path: Path) -> None:
    a, b = source_of("a", matches()), source_of("b", matches())
    live, moved = tmp_path / "live", tmp_path / "moved"
    rec = Recorder(live, sync="fsync", save_every=0, checkpoint_every=600)
    try:
        assert rec.append("a", a[0]) == a[0].seq
        arm = replace_after_next_look(rec, live, moved, "_create")
        arm()  # the creation of b's log looks, then makes its file
        with pytest.raises(LogFormatError):
            rec.append("b", b[0])
    finally:
        rec.close()
    assert [p.name for p in live.iterdir()] == []
    assert log.read_events(moved / "a.blog") == [a[0]]
