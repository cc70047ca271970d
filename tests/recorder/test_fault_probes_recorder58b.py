"""Fault probes of the recorder, the operator's day: folding a journal kept aside by hand.

A journal the recorder could not fold into its logs is kept as ``.recorder.journal-N.unfolded``
and ``audit DIR`` notes it; there was no tool to fold it: an operator had to read its records
and rewrite the log by hand. ``buraco_log.fold.fold`` (``buraco-log fold DIR``) does it: the
moves a log lacks are appended where they continue it, a log whose name is gone is made again,
a log already holding them is left alone (idempotent), and a log that disagrees with the
journal is refused, naming the seq, and not written. Real files throughout: a recorder with
``sync="journal"`` keeps the journal aside because an older copy of a log was put back while
it ran (``cp`` of a backup renamed into place).
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from buraco_log import journal, log
from buraco_log.errors import LogFormatError
from buraco_log.fold import fold
from buraco_log.recorder import Recorder, journal_notes
from tests.command_line import run, run_all
from tests.recorder.sources import matches, source_of


def _kept_aside(directory: Path) -> tuple[list[object], Path]:
    """Table ``t`` plays six moves with the journal; after the third its log is copied, and
    after the sixth the copy is put back in its place: at close the recorder keeps its
    journal as ``*.unfolded`` (and the replaced file as ``t.blog.acknowledged``)."""
    moves = list(source_of("t", matches()))
    rec = Recorder(directory, sync="journal", checkpoint_every=3600)
    try:
        for k in range(6):
            assert rec.append("t", moves[k]) == k
            if k == 2:
                shutil.copyfile(directory / "t.blog", directory / "backup")
        os.replace(directory / "backup", directory / "t.blog")
    finally:
        rec.close()
    assert [os.path.basename(p) for _, p in journal.generations(str(directory),
                                                                 unfolded=True)], os.listdir(
        directory)
    assert len(log.read_events(directory / "t.blog")) == 3
    return moves, directory / "t.blog"


def test_fold_appends_the_acknowledged_moves_a_log_lacks_and_removes_the_journal(
        tmp_path: Path) -> None:
    moves, path = _kept_aside(tmp_path)
    report = fold(tmp_path)
    assert [(e.action, e.events, e.first_seq) for e in report.logs] == [("appended", 3, 3)]
    assert report.kept == [] and len(report.removed) == 1, report
    assert log.read_events(path) == moves[:6]
    assert not any("moves a recorder could not write back" in n for n in journal_notes(tmp_path))
    before = path.read_bytes()
    again = fold(tmp_path)  # idempotent: nothing left to fold, nothing written
    assert again.journals == [] and again.logs == [] and path.read_bytes() == before
    with Recorder(tmp_path, sync="journal") as rec:  # and the table goes on from there
        assert rec.next_seq("t") == 6


@pytest.mark.slow
def test_fold_twice_over_a_kept_journal_writes_each_move_once(tmp_path: Path) -> None:
    """A journal kept (another log of it refused) and folded again: the log folded the first
    time already holds its moves, and is left alone."""
    moves, path = _kept_aside(tmp_path)
    (tmp_path / "u.blog").write_bytes(b"")  # a log of nobody's in the journal: refused
    name = journal.generations(str(tmp_path), unfolded=True)[0][1]
    records = journal.read(name)
    with open(name, "ab") as f:
        f.write(journal.frame([journal.Record("u", 1, 2, 0, records[0].data)]))
    first = fold(tmp_path)
    assert {os.path.basename(e.path): e.action for e in first.logs} == {
        "t.blog": "appended", "u.blog": "refused"}
    assert first.kept == [name] and first.removed == []
    second = fold(tmp_path)
    assert {os.path.basename(e.path): e.action for e in second.logs} == {
        "t.blog": "held", "u.blog": "refused"}
    assert log.read_events(path) == moves[:6]


def test_fold_refuses_a_log_that_disagrees_with_the_journal_and_writes_nothing(
        tmp_path: Path) -> None:
    _, path = _kept_aside(tmp_path)
    other = next(m for m in matches() if m[0] != source_of("t", matches())[0])
    path.unlink()
    log.write_log(path, other[:4], validate=False)
    before = path.read_bytes()
    report = fold(tmp_path)
    [entry] = report.logs
    assert (entry.action, entry.seq) == ("refused", 0), entry
    assert "the log and the journal disagree" in (entry.reason or "")
    assert path.read_bytes() == before and len(report.kept) == 1 and report.removed == []
    assert any(f"`buraco-log fold {tmp_path}` folds in" in n for n in journal_notes(tmp_path))


def test_fold_makes_a_log_whose_name_is_gone_again_from_its_first_move(tmp_path: Path) -> None:
    moves, path = _kept_aside(tmp_path)
    path.unlink()
    assert [(e.action, e.events) for e in fold(tmp_path, dry_run=True).logs] == [("created", 6)]
    assert not path.exists()  # a dry run writes nothing, and keeps the journal
    assert [(e.action, e.events) for e in fold(tmp_path).logs] == [("created", 6)]
    assert log.read_events(path) == moves[:6] and log.verify(path).sealed


@pytest.mark.slow
def test_fold_is_refused_while_a_recorder_runs_in_the_directory(tmp_path: Path) -> None:
    _kept_aside(tmp_path)
    with Recorder(tmp_path, sync="journal"), pytest.raises(LogFormatError) as refused:
        fold(tmp_path)
    assert refused.value.kind == "locked" and "stop it first" in refused.value.message


@pytest.mark.slow
def test_the_fold_command_folds_refuses_in_one_line_and_is_idempotent(tmp_path: Path) -> None:
    _, path = _kept_aside(tmp_path)
    shutil.copytree(tmp_path, tmp_path / "other", ignore=shutil.ignore_patterns("other"))
    other = tmp_path / "other"
    (other / "t.blog").unlink()
    log.write_log(other / "t.blog", next(m for m in matches() if m[0] != source_of(
        "t", matches())[0])[:2], validate=False)
    folded, again, refused, missing = run_all(
        ["fold", tmp_path], ["fold", tmp_path / "nowhere"], ["fold", other],
        ["fold", other / "t.blog"], checkout=True)
    assert folded.code == 0 and folded.err == "", folded
    assert f"{path}: 3 moves (seq 3 to 5) appended" in folded.out
    assert "folded and removed" in folded.out
    assert again.code == 2 and "not a directory" in again.err and again.out == "", again
    assert missing.code == 2 and missing.out == "", missing
    assert refused.code == 1, refused
    assert refused.lines[0].startswith(f"{other / 't.blog'}, seq 0: not folded: the log and "
                                       "the journal disagree"), refused.err
    assert refused.lines[1].startswith(f"{other}: kept {other}/.recorder.journal-"), refused.err
    assert "Traceback" not in refused.err + folded.err + again.err
    second = run("fold", tmp_path, "-f", "json", checkout=True)
    assert second.code == 0 and '"journals": []' in second.out, second


def test_fold_of_a_journal_of_another_version_is_one_error_naming_it(tmp_path: Path) -> None:
    head = struct.pack("<8sHH", b"BURACOLJ", journal.VERSION + 1, 0)
    kept = tmp_path / ".recorder.journal-000000000001.unfolded"
    kept.write_bytes(head + struct.pack("<I", zlib.crc32(head)))
    with pytest.raises(LogFormatError) as refused:  # it was a bare ValueError
        fold(tmp_path)
    assert refused.value.kind == "version" and str(kept) in str(refused.value), refused.value
    assert kept.exists()


@pytest.mark.slow
def test_a_backup_copied_while_the_recorder_ran_is_made_whole_by_fold(tmp_path: Path) -> None:
    """``cp -r`` of a live directory copies the logs, then the journal, which by then holds
    moves acknowledged after the logs were copied. A recorder opened on the copy keeps the
    journal aside (its records name the live logs' files, not the copies) and the copied logs
    lack those moves; ``fold`` appends them."""
    live, copy = tmp_path / "live", tmp_path / "copy"
    names = ["a", "b", "c"]
    with Recorder(live, sync="journal", checkpoint_every=3600) as rec:
        for k in range(8):
            if k == 5:  # the logs are copied here, the journal after the last move
                copy.mkdir()
                for name in names:
                    shutil.copyfile(live / f"{name}.blog", copy / f"{name}.blog")
            for name in names:
                rec.append(name, source_of(name, matches())[k])
        [(_, kept)] = journal.generations(str(live))
        shutil.copyfile(kept, copy / os.path.basename(kept))
    [note] = journal_notes(copy)  # the copy's journal: a recorder alone cannot fold it
    assert f"`buraco-log fold {copy}` folds them (a copy of a live directory" in note, note
    with Recorder(copy, sync="journal") as rec:
        assert rec.stats().journal_conflicts > 0
    assert {n: len(log.read_events(copy / f"{n}.blog")) for n in names} == dict.fromkeys(
        names, 5)
    report = fold(copy)
    assert [(e.action, e.events, e.first_seq) for e in report.logs] == [("appended", 3, 5)] * 3
    for name in names:
        assert log.read_events(copy / f"{name}.blog") == list(source_of(name, matches())[:8])
    assert journal_notes(copy) == []
