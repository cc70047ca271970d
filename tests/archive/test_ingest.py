"""Ingest: what DuckDB sees equals what a Python replay of the logs says."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import msgspec
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.dataset as ds
import pytest

from buraco_log import audit
from buraco_log.archive import connect, ingest, query
from buraco_log.archive.flatten import game_id_of
from buraco_log.archive.schema import SCHEMAS, markdown
from buraco_log.events import HandEnded, MatchEnded, MeldLaid
from buraco_log.log import read_events
from buraco_log.melds import canastra_bonus
from buraco_log.reducer import Replayer, replay
from tests import brokenlogs
from tests.archive.conftest import Archived, Corpus

REPO = Path(__file__).resolve().parents[2]


def rows(archive: Path, sql: str) -> list[tuple[object, ...]]:
    return [tuple(r.values()) for r in query(archive, sql).to_pylist()]


def test_every_good_log_is_archived_and_every_bad_one_is_refused(archived: Archived) -> None:
    rep = archived.report
    assert rep.added == len(archived.corpus.good)
    assert sorted(e.path for e in rep.errors) == sorted(archived.corpus.bad)
    assert rows(archived.path, "SELECT count(*) FROM matches") == [(len(archived.corpus.good),)]


def test_counts_and_scores_in_duckdb_equal_a_python_replay(archived: Archived) -> None:
    con = connect(archived.path)
    for path in archived.corpus.good:
        events = read_events(path)
        state = replay(events)
        digest = audit.read_log(path)[1].head
        gid = game_id_of(digest)
        m = con.execute("SELECT events, hands, totals, winner_side, match_id FROM matches "
                        "WHERE game_id = ?", [gid]).fetchall()
        assert m == [(len(events), len(state.results), list(state.totals), state.winner,
                      state.match_id)]
        assert con.execute("SELECT count(*), max(seq) FROM events WHERE game_id = ?",
                           [gid]).fetchall() == [(len(events), len(events) - 1)]
        hands = con.execute(
            "SELECT hand, side, total, table_points, canastra_bonus, hand_penalty, "
            "morto_penalty, canastras_clean, canastras_dirty, reason, turns "
            "FROM hands WHERE game_id = ? ORDER BY hand, side", [gid]).fetchall()
        expected = [(r.hand, s.side, s.total, s.table_points, s.canastra_bonus,
                     s.hand_penalty, s.morto_penalty, s.canastras.get("clean", 0),
                     s.canastras.get("dirty", 0), r.reason, r.turns)
                    for r in state.results for s in r.scores]
        assert hands == expected
        per_hand_canastras = con.execute(
            "SELECT hand, side, count(*) FILTER (WHERE canastra IS NOT NULL) FROM melds "
            "WHERE game_id = ? GROUP BY ALL ORDER BY ALL", [gid]).fetchall()
        for hand, side, n in per_hand_canastras:
            assert n == sum(state.results[hand].scores[side].canastras.values())
    con.close()


def test_meld_rows_are_the_final_melds_of_every_hand(archived: Archived) -> None:
    """Every column of the melds table against the table a step-by-step replay leaves just
    before each HandEnded: ids, sides, kinds, classes, who laid them, cards, points, bonus."""
    con = connect(archived.path)
    checked = 0
    for path in archived.corpus.good:
        events = read_events(path)
        rules = events[0].rules  # type: ignore[attr-defined]
        r = Replayer()
        expected = []
        for ev in events:
            if isinstance(ev, HandEnded):
                state = r.state()
                hand = state.hand
                for side in state.melds:
                    for m in side:
                        expected.append((
                            hand, m.side, m.id, m.kind, len(m.cards), m.canastra, m.laid_by,
                            sum(rules.card_points(c) for c in m.cards),
                            canastra_bonus(m.canastra, rules), list(m.cards)))
            r.step(ev)
        gid = game_id_of(audit.read_log(path)[1].head)
        got = con.execute(
            "SELECT hand, side, meld, kind, length, canastra, laid_by, points, bonus, cards "
            "FROM melds WHERE game_id = ? ORDER BY hand, side, meld", [gid]).fetchall()
        assert got == sorted(expected, key=lambda row: row[:3])
        checked += len(got)
    con.close()
    assert checked > 100  # the corpus has melds to compare


def test_a_wrong_recorded_meld_id_is_refused(archived: Archived, tmp_path: Path) -> None:
    """The flattening takes a recorded meld id as the row's meld; the engine must check it."""
    events = read_events(archived.corpus.good[0])
    k = next(i for i, e in enumerate(events) if isinstance(e, MeldLaid) and e.meld is not None)
    bad = list(events)
    bad[k] = msgspec.structs.replace(events[k], meld=events[k].meld + 1)  # type: ignore[union-attr]
    path = brokenlogs.write(tmp_path / "wrong-id.blog", bad)
    rep = ingest([str(path)], tmp_path / "a", jobs=1)
    assert rep.added == 0
    assert [(e.code, e.rule, e.seq) for e in rep.errors] == [
        ("legality", "meld.wrong_id", events[k].seq)]


def test_a_deal_that_is_not_the_committed_one_is_refused(archived: Archived,
                                                          tmp_path: Path) -> None:
    """Deal provenance is checked on the way in: a revealed seed that does not match the
    commitment lands in the errors table with the audit's rule; the good log's status is kept."""
    good = archived.corpus.good[0]
    gid = game_id_of(audit.read_log(good)[1].head)
    assert rows(archived.path, f"SELECT provenance FROM matches WHERE game_id = {gid}") == [
        ("committed",)]
    events = read_events(good)
    end = events[-1]
    assert isinstance(end, MatchEnded) and end.server_seed is not None
    bad = [*events[:-1], msgspec.structs.replace(end, server_seed=end.server_seed + "0")]
    path = brokenlogs.write(tmp_path / "other-seed.blog", bad)
    rep = ingest([str(path)], tmp_path / "a", jobs=1)
    assert rep.added == 0
    assert [(e.code, e.rule, e.seq) for e in rep.errors] == [
        ("provenance", "deal.seed_mismatch", end.seq)]


def test_event_rows_follow_the_log(archived: Archived) -> None:
    path = archived.corpus.good[3]
    events = read_events(path)
    gid = game_id_of(audit.read_log(path)[1].head)
    got = rows(archived.path, f"SELECT seq, kind, seat FROM events WHERE game_id = {gid} "
                              "ORDER BY seq")
    assert [(e.seq, type(e).__struct_config__.tag, getattr(e, "seat", None))  # type: ignore[attr-defined]
            for e in events] == got
    # Sizes after each event: a draw takes one card from the stock, a discard adds one to the pile.
    sizes = rows(archived.path, f"SELECT kind, stock - lag(stock) OVER w, pile - lag(pile) "
                                f"OVER w FROM events WHERE game_id = {gid} "
                                "WINDOW w AS (ORDER BY seq)")
    assert {(d_s, d_p) for k, d_s, d_p in sizes if k == "dr"} == {(-1, 0)}
    assert {(d_s, d_p) for k, d_s, d_p in sizes if k == "dc"} == {(0, 1)}


def test_the_archive_verdict_agrees_with_the_audit(archived: Archived) -> None:
    for path in archived.corpus.good:
        assert audit.audit_log(path).ok
    for path, code in archived.corpus.bad.items():
        v = audit.audit_log(path)
        # An unfinished match is legal as far as it goes; the archive keeps finished ones only.
        assert (v.ok, v.legality.complete) == (True, False) if code == "incomplete" else not v.ok
    stored = dict(rows(archived.path, "SELECT verdict, count(*) FROM matches GROUP BY 1"))
    assert stored == {"ok": len(archived.corpus.good)}


def test_corrupted_illegal_and_unfinished_logs_land_in_the_errors_table(
        archived: Archived) -> None:
    got = {os.path.basename(p): (code, rule) for p, code, rule in
           rows(archived.path, "SELECT source_path, code, rule FROM errors")}
    assert {k: v[0] for k, v in got.items()} == {
        os.path.basename(p): code for p, code in archived.corpus.bad.items()}
    assert got["illegal.blog"][1] == "discard.card_not_in_hand"
    assert got["wrong-score.blog"][1] == "score.mismatch"
    assert got["unfinished.blog"][1] == "archive.incomplete"
    assert got["tampered.blog"][1].startswith("log.")
    verdicts = rows(archived.path, "SELECT verdict_json IS NOT NULL FROM errors WHERE code IN "
                                   "('legality', 'scoring', 'integrity')")
    assert all(v for (v,) in verdicts)


def test_reingest_stores_nothing_twice(archived: Archived, tmp_path: Path) -> None:
    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    corpus = archived.corpus
    again = ingest([str(corpus.root)], arch, jobs=1)
    assert (again.added, again.already_stored, again.known_errors, again.errors) == (
        0, len(corpus.good), len(corpus.bad), [])
    # The same match with other bytes (another segmenting) is a duplicate by content digest.
    copy = brokenlogs.write(tmp_path / "resealed.blog", read_events(corpus.good[0]), segment=7)
    assert copy.read_bytes() != Path(corpus.good[0]).read_bytes()
    dup = ingest([str(copy), corpus.good[0]], arch)
    assert (dup.added, dup.duplicates, dup.already_stored) == (0, 1, 1)
    assert rows(arch, "SELECT count(*), count(DISTINCT digest) FROM matches") == [
        (len(corpus.good), len(corpus.good))]
    assert rows(arch, "SELECT count(*) FROM errors") == [(len(corpus.bad),)]


def test_ingest_is_incremental_and_leaves_old_files_alone(corpus: Corpus, tmp_path: Path) -> None:
    arch = tmp_path / "inc"
    first = ingest(corpus.good[:10], arch)
    before = {p: os.stat(p).st_ino for p in _parquet_files(arch)}
    second = ingest(corpus.good, arch, jobs=2, chunk_size=3)
    assert (first.added, second.added, second.already_stored) == (10, len(corpus.good) - 10, 10)
    after = {p: os.stat(p).st_ino for p in _parquet_files(arch)}
    assert all(after.get(p) == ino for p, ino in before.items())
    assert rows(arch, "SELECT count(*) FROM matches") == [(len(corpus.good),)]


def test_one_and_two_jobs_give_the_same_rows(archived: Archived, tmp_path: Path) -> None:
    one = tmp_path / "one"
    ingest(archived.corpus.good, one, jobs=1)
    sql = ("SELECT game_id, count(*), sum(stock), sum(pile), sum(coalesce(card, 0)) FROM events "
           "GROUP BY 1 ORDER BY 1")
    assert rows(one, sql) == rows(archived.path, sql)


def test_plain_duckdb_and_pyarrow_read_the_dataset_without_buraco_log(
        archived: Archived) -> None:
    root = archived.path
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{root}/events/**/*.parquet', "
                    "hive_partitioning = true)").fetchone()
    assert n == rows(root, "SELECT count(*) FROM events")[0]
    t = ds.dataset(str(root / "matches"), format="parquet", partitioning="hive").to_table()
    assert t.num_rows == len(archived.corpus.good)
    assert set(SCHEMAS["matches"].names) | {"preset", "month"} == set(t.column_names)


def test_the_committed_schema_document_is_current() -> None:
    committed = (REPO / "schema" / "archive.md").read_text(encoding="utf-8")
    assert committed == markdown(), (
        "schema/archive.md is stale: run `python -m buraco_log.archive.schema > "
        "schema/archive.md`")


def test_the_core_never_imports_the_archive() -> None:
    import subprocess
    import sys

    code = ("import sys, buraco_log.reducer, buraco_log.log, buraco_log.audit, "
            "buraco_log.scoring, buraco_log.moves\n"
            "print(sorted(m for m in sys.modules if m.startswith('buraco_log.archive') "
            "or m in ('duckdb', 'pyarrow')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def _parquet_files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("part-*.parquet"))


def test_a_json_lines_copy_of_an_archived_match_is_a_duplicate(archived: Archived,
                                                              tmp_path: Path) -> None:
    from buraco_log.jsonl import binary_to_jsonl

    arch = tmp_path / "a"
    shutil.copytree(archived.path, arch)
    copy = tmp_path / "copy.jsonl"
    binary_to_jsonl(archived.corpus.good[5], copy)
    rep = ingest([str(copy)], arch)
    assert (rep.added, rep.duplicates, rep.errors) == (0, 1, [])
    fresh = ingest([str(copy)], tmp_path / "b")
    assert fresh.added == 1
    assert rows(tmp_path / "b", "SELECT log_format FROM matches") == [("jsonl",)]


def test_progress_is_reported_until_every_file_is_done(corpus: Corpus, tmp_path: Path) -> None:
    seen: list[tuple[int, int, int]] = []
    ingest(corpus.good[:6], tmp_path / "a", chunk_size=2,
           on_progress=lambda p: seen.append((p.done, p.files, p.matches)))
    assert seen[-1] == (6, 6, 6)
    assert [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)


def test_a_missing_file_is_recorded_not_fatal(corpus: Corpus, tmp_path: Path) -> None:
    rep = ingest([str(tmp_path / "nowhere.blog"), corpus.good[0]], tmp_path / "a")
    assert rep.added == 1
    assert [(e.code, e.rule) for e in rep.errors] == [("integrity", "log.unreadable")]
    assert rows(tmp_path / "a", "SELECT rule FROM errors") == [("log.unreadable",)]


def test_a_log_with_a_damaged_header_in_a_directory_lands_in_the_errors_table(
        corpus: Corpus, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "good.blog").write_bytes(Path(corpus.good[0]).read_bytes())
    (logs / "damaged.blog").write_bytes(b"BURACOLX" + Path(corpus.good[1]).read_bytes()[8:])
    rep = ingest([str(logs)], tmp_path / "a")
    assert rep.added == 1
    assert [Path(e.path).name for e in rep.errors] == ["damaged.blog"]
    assert rows(tmp_path / "a", "SELECT count(*) FROM errors") == [(1,)]


def test_two_copies_of_one_match_in_one_run_are_stored_once(corpus: Corpus,
                                                           tmp_path: Path) -> None:
    src = corpus.good[7]
    events = read_events(src)
    copies = [brokenlogs.write(tmp_path / f"copy-{i}.blog", events, segment=5 + i)
              for i in range(3)]
    for jobs, chunk in ((1, 32), (2, 1)):  # the copies in one chunk, then in separate chunks
        arch = tmp_path / f"a-{jobs}"
        rep = ingest([src, *map(str, copies)], arch, jobs=jobs, chunk_size=chunk)
        assert (rep.added, rep.duplicates, rep.errors) == (1, 3, [])
        assert rows(arch, "SELECT count(*) FROM matches") == [(1,)]
        assert rows(arch, "SELECT count(*) FROM events") == [(len(events),)]


def test_every_preset_in_the_examples_matches_a_python_replay(tmp_path: Path) -> None:
    """The committed example logs cover every preset, 2 to 6 players and three-sided play."""
    logs = []
    for p in sorted((REPO / "examples").rglob("*")):
        if p.suffix in (".blog", ".jsonl"):
            v = audit.audit_log(p)
            if v.ok and v.legality.complete:
                logs.append(str(p))
    assert len(logs) >= 20
    arch = tmp_path / "a"
    rep = ingest(logs, arch, jobs=2)
    assert rep.errors == []
    con = connect(arch)
    seen: set[str] = set()
    for path in logs:
        events, integrity = audit.read_log(path)
        if integrity.head in seen:
            continue
        seen.add(integrity.head)
        state = replay(events)
        gid = game_id_of(integrity.head)
        got = con.execute("SELECT m.totals, m.winner_side, m.hands, m.n_sides, "
                          "(SELECT list(total ORDER BY hand, side) FROM hands h "
                          " WHERE h.game_id = m.game_id), "
                          "(SELECT list(seq ORDER BY seq) FROM events e "
                          " WHERE e.game_id = m.game_id) "
                          "FROM matches m WHERE game_id = ?", [gid]).fetchall()
        assert got == [(list(state.totals), state.winner, len(state.results), state.n_sides,
                        [s.total for r in state.results for s in r.scores],
                        [e.seq for e in events])], path
    assert len(seen) == rows(arch, "SELECT count(*) FROM matches")[0][0]
    con.close()


def test_the_seq_column_counts_from_zero_for_any_length() -> None:
    """The seq column is cut from one kept counting array, grown for a longer match."""
    from buraco_log.archive.flatten import _counting

    for n in (0, 1, 300, 10_000, 5, 20_001, 2):
        assert _counting(n).tolist() == list(range(n))
        assert _counting(n).typecode == "i"


def test_checking_leaves_the_collector_as_it_found_it(archived: Archived) -> None:
    """Ingest runs the collector rarely while it checks, and puts the caller's settings back,
    also when the check raises."""
    import gc

    from buraco_log.archive.ingest import check_chunk, few_collections

    before = gc.get_threshold()
    with few_collections():
        assert gc.get_threshold() != before
    assert gc.get_threshold() == before
    try:
        with few_collections():
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert gc.get_threshold() == before
    out = check_chunk([(archived.corpus.good[0], "0" * 64, 1)])
    assert len(out.ok) == 1 and gc.get_threshold() == before


def test_a_packed_chunk_comes_back_with_the_same_tables(archived: Archived) -> None:
    """Workers send their tables as Arrow IPC streams; unpacked, every table, its schema and
    its metadata are what the worker built."""
    import pickle

    from buraco_log.archive.ingest import check_chunk, check_chunk_packed
    from buraco_log.archive.schema import EVENTS

    items = [(p, "0" * 64, 1) for p in archived.corpus.good[:5]]
    want = check_chunk(items)
    got = pickle.loads(pickle.dumps(check_chunk_packed(items)))
    assert got.packed and not want.packed
    assert not any(isinstance(t, pa.Table) for ts in got.parts.values() for t in ts.values())
    got.unpack()
    assert not got.packed and (got.ok, got.errors, got.events) == (want.ok, want.errors,
                                                                    want.events)
    assert got.parts.keys() == want.parts.keys() and want.parts
    for key, tables in want.parts.items():
        assert tables.keys() == got.parts[key].keys()
        for name, table in tables.items():
            assert got.parts[key][name].equals(table, check_metadata=True), name
        assert got.parts[key]["events"].schema == EVENTS


def test_files_are_hashed_as_the_checks_need_them(corpus: Corpus, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The first chunk is checked before the last file is hashed (workers start at once on a
    large input), and hashing reports progress even when every file is already stored."""
    import importlib

    ing = importlib.import_module("buraco_log.archive.ingest")
    calls: list[str] = []
    real_hash, real_check = ing._hash, ing.check_chunk
    monkeypatch.setattr(ing, "_hash", lambda p: calls.append("hash") or real_hash(p))
    monkeypatch.setattr(ing, "check_chunk", lambda items, strict: calls.append("check")
                        or real_check(items, strict))
    logs = corpus.good[:6]
    rep = ingest(logs, tmp_path / "a", chunk_size=2)
    assert rep.added == 6
    assert calls == ["hash", "check"] * 6  # 6 files spread over 1 job: chunks of one

    monkeypatch.setattr(ing, "HASH_PROGRESS_EVERY", 2)
    seen: list[tuple[int, int, int]] = []
    again = ingest(logs, tmp_path / "a", chunk_size=2,
                   on_progress=lambda p: seen.append((p.hashed, p.found, p.files)))
    assert again.already_stored == 6 and again.added == 0
    assert seen == [(2, 6, 0), (4, 6, 0), (6, 6, 0), (6, 6, 0)]  # the last: the run's end


def test_a_match_resumed_from_carried_totals_is_archived(tmp_path: Path) -> None:
    """A ``TotalsCarried`` log (a match resumed in a new log) is stored like any other: its
    event has kind ``tc``, and the match's totals include what was carried."""

    from msgspec.structs import replace

    from buraco_log.events import MatchStarted, TotalsCarried
    from buraco_log.log import write_log
    from buraco_log.rules import PRESETS
    from buraco_log.simulate import simulate_match

    events = simulate_match(PRESETS["classic"], 2, seed="carried", index=0)
    end = events[-1]
    assert isinstance(events[0], MatchStarted) and isinstance(end, MatchEnded)
    assert end.totals is not None and end.winner is not None
    carried = [0] * len(end.totals)
    carried[end.winner] = 5  # the winner's lead grows; the match still ends at the same hand
    resumed = [events[0], TotalsCarried(tuple(carried), seq=1)]
    resumed += [replace(e, seq=e.seq + 1) for e in events[1:-1]]
    resumed.append(replace(end, seq=end.seq + 1,
                           totals=tuple(t + c for t, c in zip(end.totals, carried, strict=True))))
    assert replay(resumed).phase == "over"  # the engine accepts it as a whole match
    (tmp_path / "logs").mkdir()
    write_log(tmp_path / "logs" / "resumed.blog", resumed)
    rep = ingest([tmp_path / "logs"], tmp_path / "arch")
    assert rep.errors == [] and rep.added == 1
    assert rows(tmp_path / "arch", "SELECT seq FROM events WHERE kind = 'tc'") == [(1,)]
    (totals,) = rows(tmp_path / "arch", "SELECT totals FROM matches")[0]
    assert list(totals) == [t + c for t, c in zip(end.totals, carried, strict=True)]
