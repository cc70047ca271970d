"""The golden logs of examples/format/ are frozen: every later buraco_log must read and replay
them as they are, through the upcasters when the format version has moved on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from buraco_log import jsonl, log
from buraco_log.reducer import Replayer

FORMAT = Path(__file__).resolve().parents[2] / "examples" / "format"
EXPECTED = json.loads((FORMAT / "v1.expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_golden_log_of_an_earlier_format_still_reads_and_replays(name: str) -> None:
    want = EXPECTED[name]
    path = FORMAT / name
    info = log.verify(path)
    assert (info.events, info.segments, info.sealed, info.version, info.head) == (
        want["events"],
        want["segments"],
        want["sealed"],
        want["version"],
        want["head"],
    )
    events = log.read_events(path)
    r = Replayer()
    for event in events:
        r.step(event)
    state = r.state()
    assert state.phase == want["phase"] and list(state.totals) == want["totals"]
    assert jsonl.read_jsonl(path.with_suffix(".jsonl")) == events


def test_golden_logs_are_never_rewritten(tmp_path: Path) -> None:
    from tests.log import make_format_golden

    with pytest.raises(SystemExit, match="never rewritten"):
        make_format_golden.main()
