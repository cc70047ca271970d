"""More fault probes of the recorder's promises (docs/recorder.md): an event msgspec cannot
encode is refused as the recorder's own error naming the table's log, the field and the seq,
and changes nothing; the table goes on from the same seq."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches


def _start_with_a_surrogate_name(start: ev.AnyEvent) -> ev.AnyEvent:
    assert isinstance(start, ev.MatchStarted)
    return msgspec.structs.replace(start, players=(ev.Player("p\ud8000"), *start.players[1:]))


@pytest.mark.parametrize("validate", [True, False], ids=["validated", "unvalidated"])
def test_a_lone_surrogate_is_refused_naming_log_field_and_seq_and_changes_nothing(
        tmp_path: Path, validate: bool) -> None:
    # it raised UnicodeEncodeError (no path, no seq, no kind): a server decoding a player's
    # name with errors="surrogateescape" hands such text over
    events = matches()[0]
    path = tmp_path / "t.blog"
    with Recorder(tmp_path, validate=validate) as rec:
        with pytest.raises(LogFormatError) as first:
            rec.append("t", _start_with_a_surrogate_name(events[0]))
        assert (first.value.kind, first.value.seq, first.value.path) == ("validate", 0, str(path))
        assert "field 'players'" in first.value.message and "surrogate" in first.value.message
        assert not path.exists()  # a refused first event leaves no log
        assert rec.append("t", events[0]) == 0
        with pytest.raises(LogFormatError) as later:
            rec.append("t", msgspec.structs.replace(events[1], note="\udc80"))
        assert (later.value.kind, later.value.seq, later.value.path) == ("validate", 1, str(path))
        assert "field 'note'" in later.value.message
        assert rec.next_seq("t") == 1
        assert rec.append("t", events[1]) == 1
    assert log.read_events(path) == list(events[:2])


def test_an_integer_out_of_range_names_the_tables_log(tmp_path: Path) -> None:
    # kind "range" came without the path: the error did not say which table's log refused it
    events = matches()[0]
    with Recorder(tmp_path, validate=False) as rec:
        rec.append("t", events[0])
        with pytest.raises(LogFormatError) as caught:
            rec.append("t", msgspec.structs.replace(events[1], at=2**63))
        assert caught.value.kind == "range" and caught.value.seq == 1
        assert caught.value.path == str(tmp_path / "t.blog")
        assert "'at'" in caught.value.message
        assert rec.append("t", events[1]) == 1
    assert log.read_events(tmp_path / "t.blog") == list(events[:2])
