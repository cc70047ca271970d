"""Fault probes of the recorder's public API, as a hostile caller uses it: odd match names,
events whose fields have the wrong types, objects that are no event, use after close, and a
directory that is a file.

The promises (docs/recorder.md): a refused append raises and changes nothing; an acknowledged
event is on disk and every log the recorder writes reads back; match names are plain file
names; one recorder per directory."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from msgspec.structs import replace

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import LogFormatError
from buraco_log.recorder import Recorder
from tests.recorder.sources import matches


def _logs(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith("."))


# -- match names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "t\n",  # `$` matched before a final newline: the log was "t\n.blog"
    "a/b", "..", ".", "", "a\x00b", "-x", ".hidden", "x" * 201, "é", "a b", "t\r", "t\n\n",
], ids=repr)
def test_a_name_that_is_no_plain_file_name_is_refused_and_writes_nothing(
        tmp_path: Path, name: str) -> None:
    events = matches()[0]
    with Recorder(tmp_path) as rec:
        with pytest.raises(LogFormatError, match="not a safe file name"):
            rec.append(name, events[0])
        with pytest.raises(LogFormatError, match="not a safe file name"):
            rec.next_seq(name)
    assert _logs(tmp_path) == []


@pytest.mark.parametrize("name", [5, None, b"t"], ids=repr)
def test_a_name_that_is_no_string_is_refused_as_a_name(tmp_path: Path, name: object) -> None:
    with Recorder(tmp_path) as rec, pytest.raises(LogFormatError, match="not a safe file name"):
        rec.next_seq(name)  # type: ignore[arg-type]


def test_the_longest_name_allowed_is_recorded(tmp_path: Path) -> None:
    events = matches()[0]
    with Recorder(tmp_path) as rec:
        assert rec.append("x" * 200, events[0]) == 0
    assert _logs(tmp_path) == ["x" * 200 + ".blog"]


# -- events whose fields a reader could not decode ---------------------------------------------


def _bad_events() -> list[tuple[str, int, ev.AnyEvent, str]]:
    """(id, how many events of the match go first, the bad event, the field named)."""
    events = matches()[0]
    start, drawn = events[0], events[2]
    assert isinstance(start, ev.MatchStarted) and isinstance(drawn, ev.CardDrawn)
    return [
        ("players-as-strings", 0, replace(start, players=("<script>", "x")), "players"),
        ("seat-as-string", 2, replace(drawn, seat="1"), "seat"),  # type: ignore[arg-type]
        ("seat-as-bool", 2, replace(drawn, seat=True), "seat"),
        ("seat-as-none", 2, replace(drawn, seat=None), "seat"),  # type: ignore[arg-type]
        ("card-as-float", 2, replace(drawn, card=1.5), "card"),  # type: ignore[arg-type]
        ("seq-as-bool", 1, replace(events[1], seq=True), "seq"),
    ]


@pytest.mark.parametrize(("before", "bad", "field"),
                         [case[1:] for case in _bad_events()],
                         ids=[case[0] for case in _bad_events()])
@pytest.mark.parametrize("validate", [True, False], ids=["validate", "no-validate"])
def test_an_event_a_reader_could_not_decode_is_refused_and_the_log_stays_readable(
        tmp_path: Path, before: int, bad: ev.AnyEvent, field: str, validate: bool) -> None:
    """It was acknowledged (or the rules engine raised a TypeError), and the log on disk then
    failed to decode at that record: every later reader refused the whole match."""
    events = matches()[0]
    with Recorder(tmp_path, validate=validate) as rec:
        for e in events[:before]:
            rec.append("t", e)
        with pytest.raises(LogFormatError, match=rf"cannot be recorded: .*field {field!r}"):
            rec.append("t", bad)
        assert rec.next_seq("t") == before  # nothing changed: the table expects the same seq
        for e in events[before:before + 3]:  # and the match goes on
            rec.append("t", e)
    path = tmp_path / "t.blog"
    assert log.read_events(path) == list(events[:before + 3])


def test_an_event_holding_an_object_that_cannot_be_encoded_is_refused(tmp_path: Path) -> None:
    events = matches()[0]
    with Recorder(tmp_path) as rec:
        rec.append("t", events[0])
        with pytest.raises(LogFormatError, match="cannot be recorded"):
            rec.append("t", replace(events[1], note=object()))  # type: ignore[arg-type]
        assert rec.append("t", events[1]) == 1


@pytest.mark.parametrize("thing", [None, "CardDrawn", {"seq": 0}, 0], ids=repr)
def test_an_object_that_is_no_event_is_a_type_error_naming_it(tmp_path: Path,
                                                              thing: object) -> None:
    with Recorder(tmp_path) as rec:
        with pytest.raises(TypeError, match=f"must be a buraco_log event.*{type(thing).__name__}"):
            rec.append("t", thing)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="must be a buraco_log event"):
            rec.submit("t", thing)  # type: ignore[arg-type]
    assert _logs(tmp_path) == []


# -- after close ----------------------------------------------------------------------------------


def test_a_closed_recorder_refuses_next_seq_and_reads_no_log(tmp_path: Path) -> None:
    """next_seq after close read the log (and cut a torn tail) after the directory lock was
    released, while another recorder may own the directory."""
    events = matches()[0]
    with Recorder(tmp_path) as rec:
        for e in events[:5]:
            rec.append("t", e)
    path = tmp_path / "t.blog"
    with open(path, "ab") as f:
        f.write(b"\x00\x01torn")  # a torn tail: a recorder's first read of the match cuts it
    size = path.stat().st_size
    for match in ("t", "other"):
        with pytest.raises(LogFormatError, match="the recorder is closed"):
            rec.next_seq(match)
    with pytest.raises(LogFormatError, match="the recorder is closed"):
        rec.append("t", events[5])
    assert path.stat().st_size == size


def test_next_seq_of_a_loaded_match_after_close_is_refused_too(tmp_path: Path) -> None:
    events = matches()[0]
    rec = Recorder(tmp_path)
    rec.append("t", events[0])
    rec.close()
    with pytest.raises(LogFormatError, match="the recorder is closed"):
        rec.next_seq("t")
    rec.close()  # twice: nothing happens


# -- the directory --------------------------------------------------------------------------------


def test_a_directory_that_is_a_file_is_not_a_directory(tmp_path: Path) -> None:
    plain = tmp_path / "logs"
    plain.write_text("mine\n")
    with pytest.raises(NotADirectoryError, match="not a directory") as info:
        Recorder(plain)
    assert info.value.filename == str(plain)  # it said "File exists"
    assert plain.read_text() == "mine\n"
    with pytest.raises(NotADirectoryError):
        Recorder(plain / "sub")


def test_a_symlink_to_a_directory_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with Recorder(tmp_path / "link") as rec:
        assert rec.append("t", matches()[0][0]) == 0
    assert _logs(tmp_path / "real") == ["t.blog"]


_HOLD = """
import sys, time
from buraco_log.recorder import Recorder
rec = Recorder(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
rec.close()
"""


def test_a_second_process_on_the_same_directory_is_refused_until_the_first_closes(
        tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(tmp_path)], env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        with pytest.raises(LogFormatError, match=rf"another recorder \(process {holder.pid}\) "
                           "is using this directory"):
            Recorder(tmp_path)
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
        if holder.stdout is not None:
            holder.stdout.close()
    with Recorder(tmp_path) as rec:
        assert rec.append("t", matches()[0][0]) == 0


# -- events too big for one record ----------------------------------------------------------------


def test_an_event_larger_than_a_record_is_refused_and_the_log_stays_readable(
        tmp_path: Path) -> None:
    """It was acknowledged, and every reader then refused the log ("segment of 17,826,644
    bytes exceeds the limit")."""
    events = matches()[0]
    with Recorder(tmp_path) as rec:
        rec.append("t", events[0])
        with pytest.raises(LogFormatError, match="one record of a log holds at most") as info:
            rec.append("t", replace(events[1], note="x" * log.MAX_PAYLOAD))
        assert info.value.kind == "range" and info.value.seq == 1
        assert rec.append("t", events[1]) == 1
    assert log.read_events(tmp_path / "t.blog") == list(events[:2])


@pytest.mark.parametrize("sync", ["fsync", "journal"])
def test_events_that_together_pass_a_record_s_limit_go_in_several(tmp_path: Path,
                                                                  sync: str) -> None:
    events = matches()[0]
    big = [replace(e, note=str(e.seq) * (6 << 20)) for e in events[1:5]]  # 24 MiB together
    with Recorder(tmp_path, sync=sync, window=0.05) as rec:
        rec.append("t", events[0])
        futures = [rec.submit("t", e) for e in big]  # one round's worth
        assert [f.result(timeout=60) for f in futures] == [1, 2, 3, 4]
    info = log.verify(tmp_path / "t.blog")
    assert info.torn is None and info.events == 5 and info.segments >= 3
    assert log.read_events(tmp_path / "t.blog") == [events[0], *big]


# -- timing knobs that are not finite -------------------------------------------------------------


@pytest.mark.parametrize("window", [float("inf"), float("nan"), 1e9, 61.0])
def test_a_window_that_is_infinite_or_huge_is_refused_at_once(tmp_path: Path,
                                                              window: float) -> None:
    """inf stopped the committer on an OverflowError (a traceback on stderr, every append
    refused); 1e9 held the first append for 30 years."""
    with pytest.raises(ValueError, match="window must be a number of seconds up to 60"):
        Recorder(tmp_path, window=window)
    with Recorder(tmp_path, window=-1) as rec:  # below 0 is 0, as before
        assert rec.append("t", matches()[0][0]) == 0


def test_an_infinite_idle_timeout_never_closes_and_never_stops_the_committer(
        tmp_path: Path) -> None:
    events = matches()[0]
    with Recorder(tmp_path, idle_timeout=float("inf")) as rec:
        for e in events[:4]:
            rec.append("t", e)
        time.sleep(0.05)  # the committer waits idle with a log open
        assert rec.append("t", events[4]) == 4
        assert rec.flush(timeout=float("inf"))
    assert log.read_events(tmp_path / "t.blog") == list(events[:5])
