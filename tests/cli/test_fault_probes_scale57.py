"""One enormous log at the command line: a tail of zeros past 4 GiB (what a crash leaves on a
file system that grew the file before its data landed), cut by `repair`; the bar of a long
read on a terminal."""

from __future__ import annotations

import gc
import io
import os
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from buraco_log import jsonl, log, watch
from buraco_log.timeline import Timeline
from cli.common import guarded
from cli.progress import ReadingBar
from tests.cli.terminal import _stderr_on_a_terminal
from tests.log import longmatch
from tests.log.cli_run import run

PAST_4_GIB = (1 << 32) + 4096


def test_repair_of_a_zero_tail_past_4_gib_names_the_backup_as_the_bytes_cut(tmp_path: Path
                                                                            ) -> None:
    path = tmp_path / "marathon.blog"
    with log.Writer(path, validate=False, batched=True) as writer:
        writer.append_many(longmatch.events(300))
    size = path.stat().st_size
    os.truncate(path, PAST_4_GIB)  # sparse: no disk space
    r = run("repair", path)
    assert r.code == 0 and r.err == "", r
    cut = PAST_4_GIB - size
    # it said "original kept in LOG.bak" of a file holding the cut zeros alone: a user who
    # kept that "original" and deleted the log lost every event
    assert r.out == (f"{path}: cut {cut} bytes at byte {size} (zero-filled tail (a crash "
                     f"before the data reached the disk)); 300 events kept; the bytes cut kept "
                     f"in {path}.bak (`cat LOG {path}.bak` gives the original back)\n"), r.out
    backup = Path(f"{path}.bak")
    assert path.stat().st_size == size and backup.stat().st_size == cut
    assert backup.stat().st_blocks * 512 < 1 << 20  # the zeros cost no disk space


@pytest.mark.slow  # three command lines, 4 s on 2 loaded cores
def test_a_long_read_shows_a_bar_on_a_terminal_and_wipes_it_never_on_stdout(tmp_path: Path
                                                                              ) -> None:
    # A log of millions of events: `verify` sat silent for tens of seconds (no bar, no line),
    # as did every command reading one log. The bar waits 2 s; the knob makes it draw at once.
    binary = tmp_path / "marathon.blog"
    with log.Writer(binary, validate=False, batched=True, batch_events=1_000) as writer:
        writer.append_many(longmatch.events(30_000))  # 350 KB: several notes of 64 KiB
    lines = tmp_path / "marathon.jsonl"
    with lines.open("w") as f:
        jsonl.dump(longmatch.events(6_000), f, sealed=True)  # 270 KB
    os.environ["BURACO_LOG_PROGRESS_AFTER"] = "0"
    try:
        runs = _stderr_on_a_terminal([["verify", binary], ["verify", lines]], tmp_path, "xterm")
    finally:
        del os.environ["BURACO_LOG_PROGRESS_AFTER"]
    for (code, out, shown), name in zip(runs, (binary.name, lines.name), strict=True):
        assert code == 0, shown
        assert out.decode().startswith(f"{tmp_path / name}: ") and b"\x1b" not in out, out
        drawn = shown.decode()
        assert f"\r\x1b[Kreading {name} " in drawn and "% " in drawn, drawn
        assert drawn.endswith("\r\x1b[K"), drawn  # wiped: the prompt starts on a clean line
    piped = run("verify", binary, env={"BURACO_LOG_PROGRESS_AFTER": "0"})
    assert piped.code == 0 and piped.err == "", piped  # no terminal, no bar


def test_the_reading_bar_follows_a_read_and_a_replay_and_is_wiped_after_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "marathon.blog"
    with log.Writer(path, validate=False, batched=True, batch_events=1_000) as writer:
        writer.append_many(longmatch.events(20_000))  # 240 KB: three notes of 64 KiB
    clock = iter(float(t) for t in range(10_000))  # each reading of it a second later
    monkeypatch.setenv("BURACO_LOG_PROGRESS_AFTER", "2")
    terminal = io.StringIO()
    monkeypatch.setattr("sys.stderr", terminal)
    bar = ReadingBar(now=lambda: next(clock))
    with watch.watching(bar):
        events = log.read_events(path)
        read = terminal.getvalue()
        Timeline(events)
    drawn = terminal.getvalue()
    size = path.stat().st_size
    # not before 2 s, then at each note; wiped at the end of the read, and of the replay
    assert read.count("\r\x1b[Kreading marathon.blog ") >= 2 and read.endswith("\r\x1b[K"), read
    assert f"/{size / 1e6:.1f} MB " in read and " 99% " not in read[:200], read[:200]
    assert "\r\x1b[Kreplaying " in drawn and "16,384/20,000 events" in drawn, drawn[-300:]
    assert drawn.endswith("\r\x1b[K"), drawn[-200:]


def test_a_reading_command_runs_without_the_cyclic_collector_and_gives_it_back() -> None:
    # Each full pass of the collector walked every list of events held: a third of the CPU
    # of `replay` at 5 million events, and seconds in which Ctrl-C waited at 20 million.
    seen: list[bool] = []

    def replay() -> None:
        seen.append(gc.isenabled())

    def query() -> None:
        seen.append(gc.isenabled())

    assert gc.isenabled()
    guarded(replay)()
    guarded(query)()  # no log read: left as it is
    assert seen == [False, True] and gc.isenabled()


class _Card:
    """An object a weak reference can follow (events have no room for one)."""


def test_an_interrupted_read_leaves_what_it_read_to_the_traceback() -> None:
    # `list(reader)` cut short by Ctrl-C freed every event read so far one by one as the
    # interrupt unwound, before any handler could say a word (4 s at 20 million events)
    refs: list[weakref.ref[_Card]] = []

    def read() -> Iterator[_Card]:
        card = _Card()
        refs.append(weakref.ref(card))
        yield card
        del card  # the list alone holds it now
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as caught:
        log.gathered(read())
    ref = refs[0]
    assert ref() is not None  # held until the process ends, not freed in the unwinding
    del caught


def test_explain_replays_the_log_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    # `explain --at` built a second timeline to find a later illegal event: on a long log it
    # cost twice `replay --at` (13.2 s of CPU against 7.2 at 5 million events)
    import buraco_log.audit.explanation as explanation
    import cli.dispute_cmd as dispute_cmd

    path = tmp_path / "marathon.blog"
    with log.Writer(path, validate=False, batched=True) as writer:
        writer.append_many(longmatch.events(400))
    built: list[int] = []

    class Counted(Timeline):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(dispute_cmd, "Timeline", Counted)
    monkeypatch.setattr(explanation, "Timeline", Counted)
    dispute_cmd.explain(path=path, at=395)
    assert capsys.readouterr().out.startswith("seq 395: "), "no explanation"
    assert len(built) == 1
