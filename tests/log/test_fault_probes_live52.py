"""A log read while it is being written: a referee or a site reading a live match.

- `verify` of a binary log whose last record a writer was writing (its lock held) said
  "`buraco-log repair` cuts it off", which `repair` refuses while the writer holds the lock;
  the reader's own error had stopped saying so, `verify`'s line had not.
- A JSON Lines log appended line by line, read while a line was half written, was called
  damaged: "not a JSON line: Input data was truncated" (`verify`, `replay`, `convert`), "BROKEN"
  (`audit`, `show`), "damaged" (`view`). A last line cut short, with no line end, is now a torn
  tail (kind ``torn``, rule ``log.torn``), named by its line and byte, saying a program may be
  appending it; a last line that is no start of JSON is damage as before.
- `diff` of a live (torn) copy against a whole one sent the referee to `verify` for "what is
  damaged"; it now says where the tail is torn.
- The replay page (`view -o`) of a torn log marked the last table "The log is damaged after
  seq N [log.torn]"; it now says the log stops there.
- `verify` of several logs counted a torn one (a live log caught mid-write) as damaged in its
  summary line; torn logs are counted apart.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit, forensic, jsonl, log
from buraco_log import events as ev
from buraco_log.errors import LogFormatError
from tests.log.cli_run import REPO, run
from tests.log.live_writers import jsonl_lines
from tests.log.samples import match_events

EVENTS = match_events()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole match the writing processes copy from."""
    path = tmp_path_factory.mktemp("source") / "match.blog"
    with log.Writer(path, validate=False, batched=True) as w:
        w.append_many(EVENTS)
    return path


_STARTED: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _stop_writers() -> Iterator[None]:
    """A failed test leaves no writing process behind."""
    yield
    while _STARTED:
        process = _STARTED.pop()
        if process.poll() is None:
            process.kill()
        process.communicate()


def _start(what: str, source: Path, *args: object) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.log.live_writers", what, str(source), *map(str, args)],
        cwd=REPO, stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    _STARTED.append(process)
    return process


# -- verify of a torn tail a writer is writing ---------------------------------------------


def test_verify_of_live_logs_says_torn_never_damaged_nor_repair(tmp_path: Path) -> None:
    """A referee verifying the logs of a live tournament: a binary log whose next record a
    writer is writing, a JSON Lines log whose last line a program is writing, a whole log and a
    damaged one."""
    whole = tmp_path / "whole.blog"
    with log.Writer(whole, validate=False) as w:
        w.append_many(EVENTS[:10])
        at = whole.stat().st_size
        w.append(EVENTS[10])
    record = whole.read_bytes()[at:]
    flipped = tmp_path / "flipped.blog"
    flipped.write_bytes(whole.read_bytes()[:-3] + bytes([whole.read_bytes()[-3] ^ 1])
                        + whole.read_bytes()[-2:])
    text, _, _ = _with_cut_line(tmp_path, 25)
    live = tmp_path / "live.blog"
    with log.Writer(live, validate=False) as w:  # this process holds the lock: a live writer
        w.append_many(EVENTS[:10])
        with open(live, "ab") as f:  # half the next record, as a reader may catch it
            f.write(record[: len(record) // 2])
        done = run("verify", live, text, whole, flipped)
    assert done.code == 1 and len(done.lines) == 3
    said = done.lines[0]
    assert f"{live}, byte {at}, seq 10: torn tail" in said and said.endswith("[log.torn]")
    assert "a writer holds this log's lock and may be writing it now" in said
    assert "the 10 events before it are intact" in said
    assert "repair" not in said  # was: "`buraco-log repair` cuts it off", which it refuses
    assert done.lines[1].startswith(f"buraco-log: error: {text}, line 13, byte ")
    assert "torn tail: the last line is cut short" in done.lines[1]  # was: not a JSON line
    assert done.lines[2].startswith(f"buraco-log: error: {flipped}, byte {at}, seq 10: ")
    assert done.lines[2].endswith("[log.damage]")  # damage is still said as such
    assert done.out.splitlines()[-1] == (  # was: 1 whole, 3 damaged
        "verified 4 logs: 1 whole, 2 torn, 1 damaged, 0 not read as a log")


# -- a JSON Lines log with its last line half written --------------------------------------


def _with_cut_line(tmp_path: Path, cut: int) -> tuple[Path, bytes, int]:
    """The JSON Lines log of 11 events, then the 12th's line (a negative score, a note in
    UTF-8) cut after ``cut`` bytes; the cut line and the byte where it starts."""
    lines = jsonl_lines(list(EVENTS[:11]))
    noted = ev.HandEnded("went_out", (120, -35), seq=11, note="conferido ✓ à mesa")
    line = msgspec.json.encode(jsonl.event_to_json(noted)).replace(b"\\u2713", "✓".encode())
    body = b"".join(lines)
    path = tmp_path / f"cut{cut}.jsonl"
    path.write_bytes(body + line[:cut])
    return path, line, len(body)


def test_a_last_line_cut_anywhere_is_a_torn_tail_not_damage(tmp_path: Path) -> None:
    _, line, start = _with_cut_line(tmp_path, 1)
    for cut in range(1, len(line)):  # every byte: inside -35 and the ✓'s three bytes too
        path, _, _ = _with_cut_line(tmp_path, cut)
        with pytest.raises(LogFormatError) as caught:
            jsonl.read_jsonl(path)
        err = caught.value
        assert (err.kind, err.line, err.offset, err.seq) == ("torn", 13, start, 11), (cut, err)
        assert "a program may be appending this log now" in err.message
        assert "the 11 events before it are intact" in err.message
        path.unlink()
    whole, _, _ = _with_cut_line(tmp_path, len(line))  # the whole line, no line end yet: read
    assert jsonl.read_jsonl(whole)[-1].note == "conferido ✓ à mesa"


def test_a_last_line_that_starts_no_json_is_still_damage(tmp_path: Path) -> None:
    body = b"".join(jsonl_lines(list(EVENTS[:3])))
    for bad in (b'{"t":"dr","seat":NaN', b'{"t":"dr"}}', b'{"note":"\\ud800"',
                b'{"t":"dr","seat":1\xff', b'{"t":"dr","seat":-x', b'{"t":"dr","seat":1.x'):
        path = tmp_path / "bad.jsonl"
        path.write_bytes(body + bad)
        with pytest.raises(LogFormatError) as caught:
            jsonl.read_jsonl(path)
        assert caught.value.kind != "torn", bad


def test_audit_and_forensics_say_a_cut_last_line_is_torn(tmp_path: Path) -> None:
    path, _, start = _with_cut_line(tmp_path, 30)
    events, integrity = audit.read_log(path)
    assert len(events) == 11
    assert (integrity.status, integrity.format, integrity.offset, integrity.record,
            integrity.seq) == ("torn", "jsonl", start, 13, 11)  # was: "broken", no offset
    assert not audit.not_started(events, integrity)
    salvage = forensic.read_anyway(path)
    assert salvage.torn and len(salvage.events) == 11
    done = run("audit", path)
    assert done.code == 1
    assert f"torn tail at byte {start} (line 13), seq 11 [log.torn]: the last line" in done.out
    assert "BROKEN" not in done.out and "not a JSON line" not in done.out


# -- the live loop --------------------------------------------------------------------------

_DAMAGE_WORDS = ("damage", "BROKEN", "broken", "not a JSON line", "truncated")


def _prefix_read(path: Path) -> tuple[int, LogFormatError | None]:
    """How many events a reader of the live log gets (checked to be the match's first ones),
    and the torn tail it stopped at, if any. Damage fails the test."""
    events: list[object] = []
    try:
        if path.suffix == ".jsonl":
            for e in jsonl.JsonlReader(path):
                events.append(e)
        else:
            with log.Reader(path) as reader:
                events.extend(reader)
    except LogFormatError as exc:
        assert exc.kind == "torn", exc  # never damage: the log is only being appended to
        if path.suffix == ".blog":
            assert exc.message.endswith("the events before it are intact"), exc
        assert events == list(EVENTS[: len(events)])
        return len(events), exc
    assert events == list(EVENTS[: len(events)])
    return len(events), None


def _acks(process: subprocess.Popen[str]) -> list[str]:
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    return out.split("\n")[:-1]


def test_logs_read_while_written_show_whole_events_only(tmp_path: Path, source: Path) -> None:
    """The small twin of the slow loop: in-process reads of a binary and a JSON Lines log
    while two processes append them."""
    blog, text = tmp_path / "live.blog", tmp_path / "live.jsonl"
    writers = [_start("writer", source, blog, 12, 0.004),
               _start("jsonl", source, text, 12, 0.0, 52)]
    seen: dict[Path, list[int]] = {blog: [], text: []}
    torn = 0
    while any(w.poll() is None for w in writers):
        for path in (blog, text):
            if path.exists():
                count, cut = _prefix_read(path)
                seen[path].append(count)
                torn += cut is not None
        time.sleep(0.001)  # the writers' share of two cores
    for w, path in zip(writers, (blog, text), strict=True):
        acked = _acks(w)
        assert acked == [f"ack {seq}" for seq in range(12)]
        assert _prefix_read(path) == (12, None)  # every acknowledgement on disk
        assert seen[path] == sorted(seen[path])  # no read went back
    assert torn  # half-written lines were caught, and said torn


def _run_reader(rng: random.Random, command: str, path: Path, work: Path) -> None:
    copy = "copy.blog" if path.suffix == ".jsonl" else "copy.jsonl"  # the other form
    args: list[object] = {
        "verify": ["verify", path],
        "show": ["show", path],
        "replay": ["replay", path],
        "moves": ["moves", path],
        "audit": ["audit", "-f", "json", path],
        "view": ["view", path, "-o", work / "page.html"],
        "convert": ["convert", path, "-o", work / copy, "--overwrite"],
        "ingest": ["ingest", path, "-a", work / "archive", "-j", "1"],
    }[command]
    done = run(*args, timeout=120)
    said = done.out + done.err
    assert done.code in (0, 1), (args, done)
    if command != "audit":  # a referee's audit JSON quotes the events' notes
        assert not any(word in said for word in _DAMAGE_WORDS), (args, said)
    if done.code == 1:
        assert ("torn tail" in said or "[log.torn]" in said or "archive.incomplete" in said
                or "archive.file_changed" in said or "once nothing writes to it" in said
                or "match not finished" in said or "not revealed" in said), (args, said)
    if "torn" in said:  # said as what it is: the record or line being written now
        assert ("a writer holds this log's lock" in said if path.suffix == ".blog"
                else "a program may be appending this log now" in said), (args, said)
    if command == "convert" and done.code == 0:
        copied = (log.read_events(work / copy) if copy.endswith(".blog")
                  else jsonl.read_jsonl(work / copy))
        assert copied == list(EVENTS[: len(copied)])
    if command == "audit":
        found = msgspec.json.decode(done.out)
        report = found[0] if isinstance(found, list) else found
        whole = "unsealed" if path.suffix == ".jsonl" else "sealed"  # no end line yet
        assert report["integrity"]["status"] in (whole, "torn"), report["integrity"]
    del rng


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "sync"), [(52, "fsync"), (53, "journal")])
def test_every_reading_command_on_live_logs(tmp_path: Path, source: Path, seed: int,
                                            sync: str) -> None:
    """A Writer, a recorder of three tables and a line-by-line JSON Lines program append a
    whole match each, while `verify`, `show`, `replay`, `moves`, `audit`, `view -o`,
    `convert -o` and `ingest` read them at random moments: never damage, only whole events,
    exit 0 or 1, and every acknowledged event on disk after."""
    rng = random.Random(seed)
    n = len(EVENTS)
    blog, text, tables = tmp_path / "w.blog", tmp_path / "w.jsonl", tmp_path / "tables"
    writers = [_start("writer", source, blog, n, 0.01),
               _start("jsonl", source, text, n, 0.01, seed),
               _start("recorder", source, tables, 3, n, 0.01, sync)]
    commands = ["verify", "show", "replay", "moves", "audit", "view", "convert", "ingest"]
    work = tmp_path / "work"
    work.mkdir()
    runs = 0
    while any(w.poll() is None for w in writers):
        path = rng.choice([blog, text, tables / f"t{rng.randrange(3)}.blog"])
        if path.exists():
            _run_reader(rng, rng.choice(commands), path, work)
            runs += 1
    assert runs >= 8
    assert _acks(writers[0]) == [f"ack {seq}" for seq in range(n)]
    assert _acks(writers[1]) == [f"ack {seq}" for seq in range(n)]
    assert len(_acks(writers[2])) == 3 * n
    for path in (blog, text, *(tables / f"t{t}.blog" for t in range(3))):
        assert _prefix_read(path) == (n, None)
    # refused while live (not finished), the log is taken once it is whole (in an archive of
    # its own: the loop's may hold the match already, from a copy that finished first)
    done = run("ingest", blog, "-a", work / "final", "-j", "1", timeout=120)
    assert done.code == 0 and "1 match added" in done.out, done


# -- diff of a live copy against a whole one ------------------------------------------------


def test_diff_of_a_copy_cut_in_its_last_record_says_torn_not_damaged(tmp_path: Path) -> None:
    """A referee comparing the live log with the site's finished copy: it sent them to
    `verify` for "what is damaged", of a copy that is only torn (a record being written)."""
    from cli.dispute_cmd import render_diff

    whole = tmp_path / "whole.blog"
    with log.Writer(whole, validate=False) as w:
        for event in EVENTS[:12]:
            w.append(event)
    live = tmp_path / "live.blog"
    live.write_bytes(whole.read_bytes()[:-9])
    path, _, _ = _with_cut_line(tmp_path, 40)
    for a, b in ((live, whole), (path, whole)):
        said = "\n".join(render_diff(audit.diff_logs(a, b)))
        assert "A is torn at " in said and "`buraco-log verify` says where its tail is torn" in said
        assert "damage" not in said  # was: "`buraco-log verify` says what is damaged"


def test_the_replay_page_of_a_live_log_says_it_stops_not_that_it_is_damaged(
        tmp_path: Path) -> None:
    """`view -o` of a log a program is appending: the table where the events read end was
    marked "The log is damaged after seq N [log.torn]"."""
    from buraco_log.view import page_for_log

    path, _, start = _with_cut_line(tmp_path, 25)
    built = page_for_log(path)
    [banner] = built.banners
    assert banner.rule == "log.torn" and banner.offset == start
    assert "The log stops after seq 10 [log.torn]: it has a torn tail at byte" in built.html
    assert "is damaged" not in built.html



def test_a_first_line_cut_short_is_torn_with_no_event_before_it(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    path.write_bytes(jsonl_lines([])[0][:20])  # the program has begun the first line
    with pytest.raises(LogFormatError) as caught:
        jsonl.read_jsonl(path)
    assert (caught.value.kind, caught.value.line, caught.value.offset) == ("torn", 1, 0)
    assert caught.value.message.endswith("(remove that line: no event is before it)")
