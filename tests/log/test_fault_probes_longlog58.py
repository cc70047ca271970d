"""One enormous log on a small machine: `show` and `replay` read the log once and hold the
table, not the events (a list of 20 million events, and a snapshot every 64, was 3 GB)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit, jsonl, log
from buraco_log.timeline import Streamed, Timeline
from tests import brokenlogs as bl
from tests.log import longmatch
from tests.log.cli_run import EXAMPLES, REPO


@functools.cache
def _logs() -> dict[str, list]:  # type: ignore[type-arg]
    clean = bl.match("thirteen-quick", players=2, seed=3)
    illegal, _ = bl.with_illegal_discard(list(clean))
    wrong, _ = bl.with_wrong_score(list(clean))
    golden = list(jsonl.JsonlReader(EXAMPLES / "golden" / "burako.jsonl"))
    return {"clean": clean, "illegal": illegal, "wrong": wrong, "burako": golden}


def _same_table(whole: Timeline, streamed: Timeline, seq: int, recent: int) -> None:
    a = whole.view(seq, recent=recent)
    b = streamed.view(seq, recent=recent)
    assert msgspec.to_builtins(a) == msgspec.to_builtins(b), seq
    for s in range(max(0, seq - recent + 1), seq + 1):
        assert whole.event(s) == streamed.event(s), s


@pytest.mark.parametrize("name", ["clean", "illegal", "wrong", "burako"])
def test_a_streamed_timeline_gives_the_tables_of_the_list_one(name: str) -> None:
    events = _logs()[name]
    whole = Timeline(events)
    for seq in (0, whole.last_seq // 2, whole.last_seq):  # a seq kept, and the end
        streamed = Timeline(iter(events), stream=Streamed(at=seq, recent=4))
        assert (streamed.count, streamed.last_seq, streamed.last_recorded, streamed.checked) == (
            len(whole.recorded), whole.last_seq, whole.last_recorded, len(whole.events))
        assert streamed.recorded == []  # not one event held
        assert repr(streamed.illegal) == repr(whole.illegal)
        assert [repr(m) for m in streamed.score_mismatches] == [
            repr(m) for m in whole.score_mismatches]
        _same_table(whole, streamed, seq, 4)
        _same_table(whole, streamed, whole.last_seq, 4)
        with pytest.raises(ValueError, match="keeps only"):
            streamed.state_at(1 if seq != 1 and whole.last_seq != 1 else 2)
    # a hand's deal and a turn of it, found as the log goes by: the table seq_of names
    for hand in sorted(whole.deals)[:3]:
        for turn in (None, 0, 2):
            if turn is not None and turn >= len(whole.turn_starts[hand]):
                continue
            seq = whole.seq_of(hand, turn)
            if seq > whole.last_seq:
                continue
            streamed = Timeline(iter(events), stream=Streamed(hand=hand, turn=turn, recent=6))
            assert streamed.seq_of(hand, turn) == seq
            _same_table(whole, streamed, seq, 6)


def test_show_summarises_a_stream_as_it_did_the_list(tmp_path: Path) -> None:
    for name, events in _logs().items():
        path = tmp_path / f"{name}.blog"
        bl.write(path, events)
        stream = audit.LogStream(path)
        got = audit.summarize_stream(stream)
        events_read, integrity, signed = audit.read_log_signed(path)
        assert got == audit.summarize(events_read, path=str(path), integrity=integrity)
        assert (stream.integrity, stream.signed) == (integrity, signed)
        assert stream.count == len(events_read) == len(events)


def test_diff_reads_both_copies_side_by_side_as_it_compared_the_lists(tmp_path: Path) -> None:
    logs = _logs()
    clean = logs["clean"]
    pairs = {"same": (clean, clean), "changed": (clean, logs["illegal"]),
             "prefix a": (clean[:40], clean), "prefix b": (clean, clean[:1]),
             "empty a": ([], clean)}
    for name, (a, b) in pairs.items():
        pa, pb = tmp_path / f"{name}.a.blog", tmp_path / f"{name}.b.blog"
        bl.write(pa, a)
        bl.write(pb, b)
        got = audit.diff_logs(pa, pb)
        seq, differences, prefix = audit.diff_events(a, b)
        assert (got.diverge_seq, got.differences, got.prefix) == (seq, differences, prefix), name
        assert (got.events_a, got.events_b, got.identical) == (len(a), len(b), seq is None)
        i = None if seq is None else seq - log.FIRST_SEQ
        for event, shown in ((a, got.event_a), (b, got.event_b)):
            held = event[i] if i is not None and i < len(event) else None
            assert shown == (None if held is None else audit.to_dict(held)), name
        assert (got.words_a is None) == (got.event_a is None), name


def _peak_mb(*args: object, status: int = 0) -> int:
    """The peak resident memory of ``buraco-log ARGS`` (this checkout), in MB; it exits
    ``status``."""
    measure = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[1:], "
               "stdout=subprocess.DEVNULL).returncode; "
               "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)")
    done = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "cli.main",
                           *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), check=True)
    code, peak = map(int, done.stdout.split())
    assert code == status, (args, done)
    return peak


@pytest.mark.slow  # logs of 400,000 events, read seven times (15 s on 2 loaded cores)
def test_show_and_replay_of_a_long_log_hold_the_table_not_the_events(tmp_path: Path) -> None:
    path = tmp_path / "marathon.blog"
    with log.Writer(path, validate=False, batched=True) as writer:
        writer.append_many(longmatch.events(400_000))
    # the events held were 160-190 bytes each (74-80 MB here, 3 GB at 20 million): now the
    # process's own 30 MB and the table, whatever the count
    for args in (("show",), ("show", "-f", "json"), ("replay",), ("replay", "--at", "399990"),
                 ("replay", "--hand", "100", "--turn", "2")):
        assert _peak_mb(*args[:1], path, *args[1:]) < 55, args
    # two copies, side by side (both lists: 150 MB here, 4.3 GB at 20 million events)
    other = tmp_path / "other.blog"
    with log.Writer(other, validate=False, batched=True) as writer:
        writer.append_many(longmatch.events(400_001))
    assert _peak_mb("diff", path, other, status=1) < 55  # a prefix: they differ
