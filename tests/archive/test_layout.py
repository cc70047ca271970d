"""Layout version 2: the events files store a smaller form, the view presents every column.

The reference here is a replay that reads every column off the live table after each event
(version 1 stored exactly that), so the view's derivations are checked against the rules
engine, on logs of every preset (upcard or none, first-draw rejections, a retracted opening).
"""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import pyarrow.parquet as pq
import pytest

from buraco_log import audit
from buraco_log.archive import connect, ingest, query
from buraco_log.archive.flatten import game_id_of
from buraco_log.archive.schema import ARCHIVE_VERSION, EVENTS, EVENTS_VIEW
from buraco_log.errors import ArchiveError
from buraco_log.events import (
    CardDiscarded,
    CardDrawn,
    CardsLaidOff,
    FirstDrawRejected,
    HandStarted,
    MeldLaid,
    MortoTaken,
    OpeningRetracted,
    PileTaken,
    WentOut,
)
from buraco_log.reducer import Replayer

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(glob.glob(str(REPO / "examples" / "sim" / "*.blog"))
                  + glob.glob(str(REPO / "examples" / "golden" / "*.jsonl")))
COLUMNS = [f.name for f in EVENTS_VIEW]


def reference_rows(path: str) -> list[tuple[Any, ...]]:
    """Every column of every event, read off the replay (what layout 1 stored)."""
    events, integrity = audit.read_log(path)
    gid = game_id_of(integrity.head)
    r = Replayer()
    t = r.table
    out = []
    for ev in events:
        seat = card = cards = meld = count = direct = None
        tp = type(ev)
        r.step(ev)
        if tp in (CardDrawn, CardDiscarded, FirstDrawRejected):
            seat, card = ev.seat, ev.card  # type: ignore[union-attr]
        elif isinstance(ev, PileTaken):
            seat, card, count = ev.seat, ev.top, ev.count
        elif isinstance(ev, MeldLaid):
            seat, cards = ev.seat, list(ev.cards)
            meld = t.melds[t.sides[ev.seat]][-1].id
        elif isinstance(ev, CardsLaidOff):
            seat, cards, meld = ev.seat, list(ev.cards), ev.meld
        elif isinstance(ev, OpeningRetracted):
            seat, cards = ev.seat, list(ev.cards)
        elif isinstance(ev, MortoTaken):
            seat, direct, count = ev.seat, ev.direct, len(t.hands[ev.seat])
        elif isinstance(ev, WentOut):
            seat = ev.seat
        elif isinstance(ev, HandStarted):
            card = ev.upcard
        out.append((gid, ev.seq, t.hand, ev.__struct_config__.tag, seat, card, cards, meld,
                    count, direct, len(t.stock), len(t.pile)))
    return out


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    arch = tmp_path_factory.mktemp("layout") / "a"
    report = ingest(EXAMPLES, arch, jobs=1)
    refused = {e.path for e in report.errors}
    return arch, [p for p in EXAMPLES if p not in refused]


def test_the_examples_cover_every_derivation(examples: tuple[Path, list[str]]) -> None:
    arch, stored = examples
    assert len(stored) >= 20
    kinds = {r["kind"] for r in query(arch, "SELECT DISTINCT kind FROM events").to_pylist()}
    assert {"rj", "rt", "pt", "mt", "hs"} <= kinds
    upcards = query(arch, "SELECT count(card) AS n, count(*) AS hs FROM events "
                          "WHERE kind = 'hs'").to_pylist()[0]
    assert 0 < upcards["n"] < upcards["hs"]  # presets with an upcard and without


def test_every_column_of_the_events_view_equals_the_replay(
        examples: tuple[Path, list[str]]) -> None:
    arch, stored = examples
    con = connect(arch)
    for path in stored:
        want = reference_rows(path)
        got = con.execute(f"SELECT {', '.join(COLUMNS)} FROM events WHERE game_id = ? "
                          "ORDER BY seq", [want[0][0]]).fetchall()
        assert got == want, path
    con.close()


def test_the_view_presents_the_layout_1_columns_and_the_files_store_the_small_form(
        examples: tuple[Path, list[str]]) -> None:
    arch, _ = examples
    con = connect(arch)
    described = con.execute("DESCRIBE events").fetchall()
    assert [r[0] for r in described] == [*COLUMNS, "preset", "month"]
    assert [r[1] for r in described][:12] == [
        "BIGINT", "INTEGER", "SMALLINT", "VARCHAR", "TINYINT", "UTINYINT", "UTINYINT[]",
        "TINYINT", "SMALLINT", "BOOLEAN", "SMALLINT", "SMALLINT"]
    con.close()
    files = glob.glob(str(arch / "events" / "**" / "*.parquet"), recursive=True)
    assert files
    for f in files:
        pf = pq.ParquetFile(f)
        assert pf.schema_arrow.names == EVENTS.names
        encodings = {pf.metadata.row_group(0).column(i).path_in_schema:
                     pf.metadata.row_group(0).column(i).encodings
                     for i in range(pf.metadata.num_columns)}
        assert "DELTA_LENGTH_BYTE_ARRAY" in encodings["cards"]
        assert "DELTA_BINARY_PACKED" in encodings["seq"]


def test_queries_that_read_no_derived_counter_run_no_window(
        examples: tuple[Path, list[str]]) -> None:
    con = connect(examples[0], sandbox=False)

    def operators(sql: str) -> list[str]:
        text = "\n".join(str(r[-1]) for r in con.execute(f"EXPLAIN {sql}").fetchall())
        return re.findall(r"─ ([A-Za-z_ ]+?) ─", text)

    assert "Read Parquet" in operators("SELECT count(*) FROM events WHERE kind = 'pt'")
    assert "Window" not in operators("SELECT count(*) FROM events WHERE kind = 'pt'")
    assert "Window" not in operators("SELECT game_id, seq, kind, seat, card, cards, meld, "
                                     "direct FROM events")
    assert "Window" in operators("SELECT avg(pile) FROM events")
    con.close()


def test_an_archive_of_the_old_layout_is_refused_with_one_clear_line(
        examples: tuple[Path, list[str]], tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    (old / "archive.json").write_text(json.dumps({"format": "buraco_log archive",
                                                  "version": ARCHIVE_VERSION - 1}))
    for attempt in (lambda: connect(old), lambda: query(old, "SELECT 1"),
                    lambda: ingest(EXAMPLES[:1], old)):
        with pytest.raises(ArchiveError) as err:
            attempt()
        message = str(err.value)
        assert "\n" not in message
        assert f"layout version {ARCHIVE_VERSION - 1}" in message
        assert "upgrade it by ingesting its logs into a new archive" in message


def test_a_plain_reader_derives_the_view_from_the_documented_stored_form(
        examples: tuple[Path, list[str]]) -> None:
    """What schema/archive.md tells readers without the library, done in plain DuckDB."""
    arch, _ = examples
    con = duckdb.connect()
    plain = con.execute(f"""
        SELECT game_id, seq,
               CASE WHEN kind IN ('dr', 'rj', 'dc', 'pt', 'hs') THEN get_byte END AS card,
               coalesce(sum(stock) OVER w, 0)
                 - count(*) FILTER (WHERE kind = 'dr') OVER w AS stock
        FROM (SELECT *, ascii(decode(cards)) AS get_byte
              FROM read_parquet('{arch}/events/**/*.parquet', hive_partitioning = true))
        WINDOW w AS (PARTITION BY game_id, hand ORDER BY seq ROWS UNBOUNDED PRECEDING)
        ORDER BY game_id, seq""").fetchall()
    view = connect(arch).execute(
        "SELECT game_id, seq, card, stock FROM events ORDER BY game_id, seq").fetchall()
    assert plain == view


def test_an_illegal_event_inside_a_replayed_stretch_is_refused_at_its_seq(
        tmp_path: Path) -> None:
    """Draws, discards and lay-offs are replayed a stretch at a time (Replayer.run)."""
    from tests import brokenlogs

    events = brokenlogs.match("biriba", 4, seed=3)
    illegal, seq = brokenlogs.with_illegal_discard(events)
    path = brokenlogs.write(tmp_path / "illegal.blog", illegal)
    pickup = next(i for i, e in enumerate(events) if isinstance(e, PileTaken))
    bad_seat = list(events)
    bad_seat[pickup] = msgspec.structs.replace(events[pickup], seat=9)  # no such seat
    path2 = brokenlogs.write(tmp_path / "bad-seat.blog", bad_seat)
    report = ingest([str(path), str(path2)], tmp_path / "a")
    assert report.added == 0
    got = {Path(e.path).name: (e.code, e.rule, e.seq) for e in report.errors}
    assert got["illegal.blog"] == ("legality", "discard.card_not_in_hand", seq)
    verdict = audit.audit_log(path2)
    assert not verdict.ok
    first = verdict.findings[0]
    assert got["bad-seat.blog"] == (first.section, first.rule, first.seq)
    assert got["bad-seat.blog"][2] == events[pickup].seq
