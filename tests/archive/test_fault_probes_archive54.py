"""Fault probes of the archive: `query -f json` and `-f jsonl` on a terminal; a stronger copy
stored in place of the archive's copy, probed as a site engineer would (a run killed at each
step, two stronger copies in one run, a batch of many matches, `drop` of the old batch id, the
report before and after)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pytest

from buraco_log import log
from buraco_log.archive import TABLES, ingest, query, report, store
from buraco_log.archive.fixity import verify_archive
from buraco_log.errors import ArchiveError
from buraco_log.rules import preset
from buraco_log.simulate import simulate_match
from tests.archive.killed_at import KILLER, killed
from tests.archive.unsealed_v2 import V2, _fewer, _unsealed
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


# -- 2. a stronger copy stored in place, probed as a site engineer would ----------------------

JSONL_MATCH = "sim-classic-2p-1c3486710156-000000"
OTHER = ROOT / "examples" / "sim" / "burako-2p-000000.blog"
OTHER_MATCH = "sim-burako-2p-c2fe5768311e-000000"
MID = ROOT / "examples" / "sim" / "classic-4p-000000.blog"
MID_MATCH = "sim-classic-4p-c2fe5768311e-000000"
UNSEALED_BLOG = ROOT / "examples" / "format" / "v2-unsealed.blog"
UNSEALED_MATCH = "sim-thirteen-quick-2p-d25bff467125-000000"
COPY_COLUMNS = {"integrity", "signed", "key_id", "file_sha256", "file_bytes", "source_path",
                "log_format", "ingested_at"}


def _copies(arch: Path) -> list[tuple[str, str, int]]:
    """Each stored match id with its integrity, its number of stored copies and its events."""
    rows = query(arch, "SELECT match_id, integrity, count(*) OVER (PARTITION BY match_id) AS n, "
                       "(SELECT count(*) FROM events e WHERE e.game_id = m.game_id) AS ev "
                       "FROM matches m ORDER BY match_id").to_pylist()
    return [(r["match_id"], r["integrity"], r["n"], r["ev"]) for r in rows]


def _sums(arch: Path, of: set[str], replaced: str = JSONL_MATCH) -> dict[str, list[str]]:
    """Sorted checksums of every row of every table of the matches ``of``, less its batch and,
    of the replaced match's row, less the copy's own columns."""
    ids = {r["game_id"]: r["match_id"] for r in query(arch, "SELECT game_id, match_id "
                                                            "FROM matches").to_pylist()}
    out: dict[str, list[str]] = {}
    for table in TABLES:
        sums = []
        for r in query(arch, f"SELECT * FROM {table}").to_pylist():
            r.pop("batch", None)
            if ids.get(r.get("game_id"), r.get("match_id")) not in of:
                continue
            if table == "matches" and r["match_id"] == replaced:
                r = {k: v for k, v in r.items() if k not in COPY_COLUMNS}
            sums.append(hashlib.sha256(repr(sorted(r.items())).encode()).hexdigest())
        out[table] = sorted(sums)
    return out


def _before_and_after(tmp_path: Path, extra: list[Path]) -> tuple[Path, Path, str]:
    """An archive of one batch: the live copy of the match and ``extra``; the live log then
    sealed. Returns the logs, the archive and the first batch."""
    live, arch = tmp_path / "live", tmp_path / "arch"
    live.mkdir()
    _unsealed(live / "j.jsonl")
    for p in extra:
        shutil.copy(p, live / p.name)
    first = ingest([live], arch)
    assert first.added == 1 + len(extra) and len(first.batches) == 1
    shutil.copy(V2, live / "j.jsonl")
    return live, arch, first.batches[0]


def _one_sealed_copy_each(arch: Path, ids: set[str]) -> None:
    got = _copies(arch)
    assert {m for m, *_ in got} == ids, got  # never none
    assert all(n == 1 for _m, _i, n, _e in got), got  # never two
    assert [i for m, i, *_ in got if m == JSONL_MATCH] == ["sealed"]
    assert query(arch, "SELECT count(*) AS n FROM events").to_pylist() == [
        {"n": sum(e for *_x, e in got)}]  # no event of a copy left behind
    assert verify_archive(str(arch)).problems == []


@pytest.mark.slow  # about 30 killed runs, each checked and ingested again: minutes
@pytest.mark.parametrize("name", ["replace", "unlink"])
def test_a_replacement_killed_at_every_step_leaves_one_copy_of_the_match(
        tmp_path: Path, name: str) -> None:
    """A run storing the sealed copy in place, with a new match beside it, killed at each
    os.<name> call (each file renamed into place, the commit record, the ratings; the old
    batch's record and files): `verify` finds nothing, `query` sees the match once, unsealed
    or sealed, and the next ingest stores what is missing, the match once, sealed, the other
    match's rows unchanged."""
    live, arch, _batch = _before_and_after(tmp_path, [OTHER])
    shutil.copy(MID, live / MID.name)  # a new match in the same run
    kept = {JSONL_MATCH, OTHER_MATCH}
    rows_before = _sums(arch, kept)
    count = tmp_path / "count"
    shutil.copytree(arch, count)
    calls = subprocess.run([sys.executable, "-c", KILLER, name, "0", "ingest", live, "-a",
                            count, "--jobs", "1"], cwd=ROOT, capture_output=True, text=True,
                           timeout=120, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert calls.returncode == 0, calls.stderr
    n = int(calls.stderr.rsplit("calls ", 1)[1])
    seen = set()
    for k in range(1, n + 1):
        work = tmp_path / f"k{k}"
        shutil.copytree(arch, work)
        killed(name, k, "ingest", live, "--archive", work, "--jobs", "1")
        got = _copies(work)
        assert all(c == 1 for _m, _i, c, _e in got), (k, got)  # never two
        assert {m for m, *_ in got} >= kept, (k, got)  # never none
        assert verify_archive(str(work)).problems == [], k
        seen.add(next(i for m, i, *_ in got if m == JSONL_MATCH))
        ingest([live], work)
        _one_sealed_copy_each(work, kept | {MID_MATCH})
        assert _sums(work, kept) == rows_before, k
        shutil.rmtree(work)
    assert seen == {"unsealed", "sealed"}  # killed before and after the commit point


def _report_rows(arch: Path) -> list[tuple[str, list[str], list[list[Any]]]]:
    rep = report(arch)
    return [(rep.matches, rep.events)] + [  # type: ignore[list-item]
        (s.name, s.columns, s.rows) for s in rep.sections]


def _stronger_copies_in_a_batch_of_many(tmp_path: Path, sims: int, live_copy: Path,
                                        sealed: Any, match: str, whole: bool = True) -> None:
    """``sims`` matches stored in the batch of the live copy; then two stronger copies of it
    in one run. One copy of the match is stored, sealed; every other row as it was, and the
    report equal; the old batch id leads to the new batch, and the new batch dropped and the
    logs ingested again gives the same archive."""
    live, arch = tmp_path / "live", tmp_path / "arch"
    live.mkdir()
    shutil.copy(live_copy, live / "a.blog" if live_copy.suffix == ".blog" else live / "a.jsonl")
    for i in range(sims):
        log.write_log(live / f"s{i:02d}.blog", simulate_match(preset("thirteen-quick"), 2,
                                                             seed=f"many54-{i}"))
    first = ingest([live], arch)
    assert (first.added, len(first.batches)) == (1 + sims, 1)
    ids = {r["match_id"] for r in query(arch, "SELECT match_id FROM matches").to_pylist()}
    rows = _sums(arch, ids, match) if whole else {}
    shown = _report_rows(arch) if whole else []
    copy = next(live.glob("a.*"))
    sealed(copy)
    shutil.copy(copy, live / f"z{copy.suffix}")  # the same sealed copy, found twice
    rep = ingest([live], arch)
    assert [c.replaced is not None for c in rep.stronger_copies] == [True], rep.stronger_copies
    assert rep.added == 0 and rep.batches == [rep.stronger_copies[0].replaced]
    got = _copies(arch)
    assert [(m, i, n) for m, i, n, _e in got if m == match] == [(match, "sealed", 1)]
    assert len(got) == 1 + sims and all(n == 1 for *_x, n, _e in got), got
    if not whole:
        return
    assert _sums(arch, ids, match) == rows
    assert _report_rows(arch) == shown
    assert verify_archive(str(arch)).problems == []
    # the id the first night's report gave: refused, naming the batch that holds it now
    with pytest.raises(ArchiveError, match=f"no committed batch {first.batches[0]} .*"
                                           f"{rep.batches[0]}"):
        store.drop_batches(str(arch), first.batches)
    assert _sums(arch, ids, match) == rows  # nothing removed
    store.drop_batches(str(arch), rep.batches)
    assert _copies(arch) == []
    again = ingest([live], arch)  # new game ids and times: the same matches and events
    assert (again.added, _copies(arch)) == (1 + sims, got)


def test_two_sealed_copies_of_a_stored_match_in_one_run_store_it_once(tmp_path: Path) -> None:
    """The default twin of the slow probe below: a binary log written unsealed, stored, then
    sealed and found twice in one run."""
    _stronger_copies_in_a_batch_of_many(tmp_path, 0, UNSEALED_BLOG, log.seal, UNSEALED_MATCH,
                                        whole=False)


@pytest.mark.slow  # 25 matches ingested three times
def test_two_stronger_copies_in_a_batch_of_many_matches_leave_their_rows_unchanged(
        tmp_path: Path) -> None:
    """A live JSON Lines log stored with 24 finished matches; then the sealed log found twice,
    and a sealed copy short of one signature record found first (by path): the whole one is
    stored."""
    def sealed(p: Path) -> None:
        shutil.copy(V2, p)
        _fewer(p.with_name("b.jsonl"))

    live_copy = _unsealed(tmp_path / "live.jsonl")
    _stronger_copies_in_a_batch_of_many(tmp_path, 24, live_copy, sealed, JSONL_MATCH)
    held = query(tmp_path / "arch", "SELECT file_sha256 FROM matches WHERE match_id = "
                                    f"'{JSONL_MATCH}'").to_pylist()
    assert held == [{"file_sha256": hashlib.sha256(V2.read_bytes()).hexdigest()}]
