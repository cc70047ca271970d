"""Fault probes of the example server (examples/server), round 47: tables whose logs were
sealed (``buraco-log seal``).

A seal while the server holds the table is refused by the seal, and the table plays on; a log
sealed while the server was stopped is played on after it (a sealed log takes more moves);
an ended match sealed refuses a move past its end with the rule, in one line, and the server
serves the other tables meanwhile. No defect found: these hold what was checked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from buraco_log import events as ev
from buraco_log import log
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from tests.recorder.serverclient import ROOT, ask, start, stop


def _seal(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", "seal", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def _play(port: int, table: str, event: ev.AnyEvent) -> list[object]:
    return ask(port, ["play", table, msgspec.Raw(ev.encode(event))])


def test_sealed_tables_play_on_or_refuse_past_their_end_in_one_line(tmp_path: Path) -> None:
    live = simulate_match(preset("classic"), 2, seed="seal47", index=0)
    ended = simulate_match(preset("classic"), 2, seed="seal47", index=1)
    log.write_log(tmp_path / "e.blog", ended)  # a match played to its end, then sealed
    assert _seal(tmp_path / "e.blog").returncode == 0
    server, port = start(tmp_path)
    try:
        for event in live[:10]:
            assert _play(port, "s", event) == ["ok", "s", event.seq]
        held = _seal(tmp_path / "s.blog")  # the server holds it: the seal is refused
        assert held.returncode != 0 and "another writer holds this log" in held.stderr
        assert _play(port, "s", live[10]) == ["ok", "s", 10]
        assert ask(port, ["next", "e", None]) == ["next", "e", len(ended)]
        past = _play(port, "e", msgspec.structs.replace(ended[-1], seq=len(ended)))
        assert past[:3] == ["refused", "e", "match.over"], past
        assert all("\n" not in str(part) for part in past)
    finally:
        stop(server)
    assert _seal(tmp_path / "s.blog").returncode == 0  # sealed while the server is stopped
    server, port = start(tmp_path)
    try:
        assert ask(port, ["next", "s", None]) == ["next", "s", 11]
        assert _play(port, "s", live[11]) == ["ok", "s", 11]
    finally:
        stop(server)
    assert log.verify(tmp_path / "s.blog").sealed
    assert log.read_events(tmp_path / "s.blog") == live[:12]
    assert log.read_events(tmp_path / "e.blog") == ended  # nothing written into it
