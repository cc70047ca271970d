"""Fault probes of the archive: `query -f json` and `-f jsonl` on a terminal; a stronger copy
stored in place of the archive's copy, probed as a site engineer would (a run killed at each
step, two stronger copies in one run, a batch of many matches, `drop` of the old batch id, the
report before and after)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pytest

from buraco_log import log
from buraco_log.archive import ingest
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from tests.cli.probes import ROOT, stdout_on_a_terminal

# a CSI as one C1 byte (red), a right-to-left override, an isolate: each would recolour or
# reorder what the terminal shows
HOSTILE = "m\x9b31m\u202eid\u2066x"
SHOWN = "m\\u009b31m\\u202eid\\u2066x"


# -- 1. query -f json / jsonl on a terminal --------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class _Stream:
    """What `_write_rows` reads of a query's stream: its schema and its batches."""

    def __init__(self, table: pa.Table) -> None:
        self.schema = table.schema
        self._batches = table.to_batches()

    def __iter__(self) -> Any:
        return iter(self._batches)


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_json_on_a_terminal_escapes_c1_and_bidi_and_stays_the_same_json(fmt: str) -> None:
    """Before: the C1 CSI and the bidi marks reached the terminal raw (ensure_ascii=False)."""
    from cli.archive_cmd import QueryFormat, _write_rows

    table = pa.table({f"k{HOSTILE}": [HOSTILE, "plain é"], "n": [1, 2]})
    shown, exact = _Terminal(), io.StringIO()
    _write_rows(shown, _Stream(table), QueryFormat(fmt), None)  # type: ignore[arg-type]
    _write_rows(exact, _Stream(table), QueryFormat(fmt), None)  # type: ignore[arg-type]
    text = shown.getvalue()
    assert not any(c in text for c in "\x9b\u202e\u2066"), repr(text)
    assert SHOWN in text and "plain é" in text  # only what is unsafe is escaped
    assert HOSTILE in exact.getvalue()  # to a file or a pipe: exact
    if fmt == "json":
        assert json.loads(text) == json.loads(exact.getvalue())
    else:
        assert [json.loads(x) for x in text.splitlines()] == \
            [json.loads(x) for x in exact.getvalue().splitlines()]


@pytest.mark.slow  # an ingest and three CLI runs
def test_query_json_and_jsonl_on_a_pty_show_a_hostile_match_id_escaped(tmp_path: Path) -> None:
    """Before: `query -f json` and `-f jsonl` to a terminal wrote the match id's C1 CSI and
    right-to-left override raw; a pipe still gets the exact text."""
    logs = tmp_path / "logs"
    logs.mkdir()
    events = simulate_match(preset("thirteen-quick"), 2, seed="json54")
    events[0] = msgspec.structs.replace(events[0], match_id=HOSTILE)
    log.write_log(logs / "m.blog", events)
    ingest([str(logs)], tmp_path / "a")
    for fmt in ("json", "jsonl"):
        args: list[object] = ["query", "-f", fmt, tmp_path / "a",
                              "SELECT match_id, 'é' AS e FROM matches"]
        status, shown, err = stdout_on_a_terminal(args, env={"NO_COLOR": "1"})
        assert status == 0, err
        assert not any(c in shown for c in "\x9b\u202e\u2066"), (fmt, repr(shown))
        assert SHOWN in shown, (fmt, repr(shown))
        piped = subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT,
                               capture_output=True, text=True, timeout=120, check=False,
                               env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert piped.returncode == 0 and HOSTILE in piped.stdout, piped
        if fmt == "json":
            assert json.loads(shown) == json.loads(piped.stdout)
        else:
            assert json.loads(shown) == json.loads(piped.stdout) == {"match_id": HOSTILE,
                                                                     "e": "é"}
