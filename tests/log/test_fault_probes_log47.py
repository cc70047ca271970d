"""Fault probes of the log, round 47.

- `Reader.follow` waited for ever on a crash's torn tail: a partial last record was "not yet
  written" even with no writer left to write it. It waits while a writer holds the log's lock;
  with none, a tail that stays torn ends the stream with the torn-tail error (its offset and
  seq) after ``torn_timeout`` seconds. A log removed or renamed away while followed was
  waited on for ever too: it ends with an error of kind ``io``; one cut shorter than what
  was read from it (by a program that ignores the lock), with one of kind ``damage``.
- A torn tail read while a writer holds the lock said "`buraco-log repair` cuts it off", which
  is refused while the writer holds it: it no longer says so then.
- A JSON Lines pile take (`pt`) written by hand for an empty pile, with no `top` (there is
  none), was refused by the decoder (`log.unknown`, "missing required field 'top'"): it reads
  as top 0, no card, so the rules refuse it as `pile.empty`; on a pile that is not empty the
  rules still refuse it.
- An output that is a socket (`convert -o S`, a page, a query's output) was waited for 10 s
  as a FIFO with no reader, then called "a FIFO": it is refused at once, as a socket. Read
  as a log, a socket was "a socket or FIFO" (while `show` said "a socket"): it is a socket.
- A log holding a signature record copied a million times (210 MiB) took 470 MB to read
  (`read_events`, `show`, `audit`): each copy was a new object. A copy now shares its
  original's.
- Reading a JSON Lines log anyway (`replay --ignore-integrity`, `explain --anyway`) passed
  over any number of blank lines after the one the strict reader stopped at: 40 s for 50 MB
  of them. It stops where the strict reader's bound (100,000 in a row) is passed.
- Reading a binary log anyway after damage passed over a zero-filled tail 56 bytes at a time
  (a minute a gigabyte), and called it read to the end: it stops at the first zero header.
- A match start whose rules hold a knob this release does not know (a newer release's house
  rule) read as "Object contains unknown field" alone, as if damaged: it says what it is.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from buraco_log import events as ev
from buraco_log import jsonl, log, outpaths
from buraco_log.errors import IllegalMoveError, LogFormatError
from buraco_log.reducer import Replayer
from tests.cli.probes import ROOT, cli_batch, one_error_line
from tests.log.samples import match_events, sample_events

EVENTS = sample_events(12)


# -- follow on a torn tail -----------------------------------------------------------------------

_HALF_WRITER = """
import os, sys, time
sys.path.insert(0, {root!r})
from buraco_log import log
from tests.log.samples import sample_events
events = sample_events(12)
real = log._write_all
def half(fd, data, offset):  # the record of seq 10: half of it on disk, then killed
    real(fd, bytes(data)[: len(data) // 2], offset)
    os.fsync(fd)
    print("mid", offset, flush=True)
    time.sleep(60)
w = log.Writer({path!r}, validate=False)
w.append_many(events[:10])
print("acked", flush=True)
log._write_all = half
w.append(events[10])
"""


def _follow_in_thread(path: Path, **kwargs: float) -> tuple[threading.Thread, list[object]]:
    got: list[object] = []

    def run() -> None:
        try:
            with log.Reader(path) as reader:
                got.extend(reader.follow(poll=0.01, **kwargs))
        except LogFormatError as exc:
            got.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, got


def _read(got: list[object], n: int) -> None:
    """Wait until the follower has handed out ``n`` items (at most 60 s)."""
    deadline = time.monotonic() + 60
    while len(got) < n and time.monotonic() < deadline:
        time.sleep(0.005)


def test_follow_waits_on_a_writer_mid_record_and_stops_once_it_was_killed(
        tmp_path: Path) -> None:
    path = tmp_path / "live.blog"
    child = subprocess.Popen(
        [sys.executable, "-c", _HALF_WRITER.format(root=str(ROOT), path=str(path))],
        stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "acked\n"
        # idle_timeout far past the join's wait: an end there is no end for the writer's death
        follower, got = _follow_in_thread(path, idle_timeout=120, torn_timeout=0.2)
        word, offset = child.stdout.readline().split()
        assert word == "mid"
        _read(got, 10)  # the acknowledged events, however slow a loaded host made the thread
        time.sleep(0.6)  # three times torn_timeout: the writer holds the lock, it may go on
        assert follower.is_alive() and got == EVENTS[:10]
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    follower.join(timeout=60)
    assert not follower.is_alive()  # was: waited for ever (here, until idle_timeout)
    *events, error = got
    assert events == EVENTS[:10]
    assert isinstance(error, LogFormatError)
    assert (error.kind, error.offset, error.seq) == ("torn", int(offset), 10)
    assert "torn tail" in str(error) and "repair" in str(error)


@pytest.mark.parametrize("how", ["removed", "renamed"])
def test_follow_of_a_log_removed_or_renamed_away_ends_with_an_error(
        tmp_path: Path, how: str) -> None:
    path = tmp_path / "live.blog"
    with log.Writer(path, validate=False) as w:
        w.append_many(EVENTS[:5])
    follower, got = _follow_in_thread(path, torn_timeout=0.2)
    deadline = time.monotonic() + 5
    while len(got) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    if how == "removed":
        path.unlink()
    else:
        path.rename(tmp_path / "archived.blog")
    follower.join(timeout=5)
    assert not follower.is_alive()  # was: waited for ever
    *events, error = got
    assert events == EVENTS[:5]
    assert isinstance(error, LogFormatError)
    assert (error.kind, error.seq) == ("io", 5)
    assert "removed or renamed away while it was followed (5 events read)" in str(error)


def test_follow_of_a_log_cut_below_what_it_read_ends_with_an_error(tmp_path: Path) -> None:
    path = tmp_path / "live.blog"
    with log.Writer(path, validate=False) as w:
        for event in EVENTS[:5]:
            w.append(event)
    with log.Reader(path) as reader:
        offsets = [off for off, _ in reader.segments()]
    follower, got = _follow_in_thread(path, idle_timeout=20)
    deadline = time.monotonic() + 5
    while len(got) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.truncate(path, offsets[2])  # by a program that ignores the lock
    follower.join(timeout=5)
    assert not follower.is_alive()  # was: waited, as if the events read were still there
    *events, error = got
    assert events == EVENTS[:5]
    assert isinstance(error, LogFormatError)
    assert (error.kind, error.offset) == ("damage", offsets[2])
    assert "events already read are gone from it" in str(error)


def _torn_copy(tmp_path: Path) -> tuple[Path, int, bytes]:
    """A log of six records, one event each, its last four bytes cut: the path, the offset of
    the last record, and the bytes cut."""
    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False) as w:
        for event in EVENTS[:6]:
            w.append(event)
    with log.Reader(path) as reader:
        last = [off for off, _ in reader.segments()][-1]
    data = path.read_bytes()
    path.write_bytes(data[:-4])
    return path, last, data[-4:]


def test_follow_on_an_unlocked_torn_tail_raises_after_torn_timeout(tmp_path: Path) -> None:
    path, last, _ = _torn_copy(tmp_path)
    got: list[ev.AnyEvent] = []
    start = time.monotonic()
    with log.Reader(path) as reader, pytest.raises(LogFormatError) as caught:
        got.extend(reader.follow(poll=0.01, torn_timeout=0.1))  # was: never returned
    assert 0.1 <= time.monotonic() - start < 3
    assert got == EVENTS[:5]
    assert (caught.value.kind, caught.value.offset, caught.value.seq) == ("torn", last, 5)


def test_follow_with_allow_torn_ends_and_records_the_torn_tail(tmp_path: Path) -> None:
    path, last, _ = _torn_copy(tmp_path)
    with log.Reader(path, allow_torn=True) as reader:
        assert list(reader.follow(poll=0.01, torn_timeout=0.05)) == EVENTS[:5]
        torn = reader.info.torn
    assert torn is not None and torn.offset == last


def test_follow_idle_timeout_on_an_unlocked_torn_tail_says_torn(tmp_path: Path) -> None:
    # returning quietly after idle_timeout told a referee the log ended whole
    path, last, _ = _torn_copy(tmp_path)
    with log.Reader(path) as reader, pytest.raises(LogFormatError) as caught:
        list(reader.follow(poll=0.01, idle_timeout=0.05))
    assert (caught.value.kind, caught.value.offset) == ("torn", last)


def test_follow_reads_on_once_a_locked_partial_record_is_completed(tmp_path: Path) -> None:
    path, _, rest = _torn_copy(tmp_path)
    lock = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a writer (here, of this process) holds it
        follower, got = _follow_in_thread(path, idle_timeout=5, torn_timeout=0.05)
        _read(got, 5)
        time.sleep(0.4)
        assert follower.is_alive() and got == EVENTS[:5]
        with open(path, "ab") as f:
            f.write(rest)
    finally:
        os.close(lock)
    with log.Writer(path, validate=False) as w:
        w.append(ev.MatchEnded(seq=6))
    follower.join(timeout=5)
    assert got == [*EVENTS[:6], ev.MatchEnded(seq=6)]


_HOLDER = """
import sys
sys.path.insert(0, {root!r})
from buraco_log import log
with log.LogLock({path!r}):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_a_torn_tail_a_writer_holds_is_not_sent_to_repair(tmp_path: Path) -> None:
    path, last, _ = _torn_copy(tmp_path)
    with pytest.raises(LogFormatError) as caught:
        log.read_events(path)
    assert "`buraco-log repair` cuts it off" in str(caught.value)  # a crash's: repair it
    with subprocess.Popen([sys.executable, "-c", _HOLDER.format(root=str(ROOT), path=str(path))],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        try:
            assert holder.stdout.readline() == "locked\n"
            with pytest.raises(LogFormatError) as caught:
                log.read_events(path)
        finally:
            holder.stdin.close()
            holder.wait(30)
    said = str(caught.value)
    assert caught.value.offset == last and "a writer holds this log's lock" in said
    assert "repair" not in said, said  # was: "`buraco-log repair` cuts it off"


# -- a hand-written pile take with no top --------------------------------------------------------


def _take_without_top(path: Path, after: int, count: int, null: bool = False) -> Path:
    """JSON Lines of a real match's first ``after`` events, then seat-to-draw's pile take of
    ``count`` cards naming no top (or a null one)."""
    match = match_events()
    lines = [json.dumps({"log": "buraco-log", "version": ev.FORMAT_VERSION, "sealed": True})]
    lines += [json.dumps(jsonl.event_to_json(e)) for e in match[:after]]
    take = {"t": "pt", "seat": match[after].seat, "count": count} | ({"top": None} if null else {})
    lines.append(json.dumps(take))
    path.write_text("\n".join(lines) + "\n")
    return path


def _first_discard() -> int:
    return next(i for i, e in enumerate(match_events()) if isinstance(e, ev.CardDiscarded))


def _rule_of(path: Path) -> str:
    replayer = Replayer()
    with pytest.raises(IllegalMoveError) as caught:
        for event in jsonl.JsonlReader(path):
            replayer.step(event)
    return caught.value.rule


def test_a_take_of_an_empty_pile_without_top_reaches_the_rules(tmp_path: Path) -> None:
    # classic has no upcard: the pile is empty at the hand's first draw (seq 2)
    empty = _take_without_top(tmp_path / "empty.jsonl", 2, 0)
    assert _rule_of(empty) == "pile.empty"  # was: LogFormatError, "missing required field"
    out = tmp_path / "empty.blog"
    done, shown = cli_batch([["convert", empty, "-o", out, "--validate"], ["show", empty]])
    line = one_error_line(done, 1)
    assert f"{empty}, line 4, seq 2: " in line and line.endswith("[pile.empty]"), line
    assert "missing required field" not in line and not out.exists()
    assert "[pile.empty]" in shown.stderr, shown.stderr
    assert _rule_of(_take_without_top(tmp_path / "null.jsonl", 2, 0, null=True)) == "pile.empty"


def test_a_take_of_a_pile_that_is_not_empty_without_top_is_still_refused(
        tmp_path: Path) -> None:
    after = _first_discard() + 1  # the next seat's draw: one card on the pile
    paths = [_take_without_top(tmp_path / f"full{count}.jsonl", after, count)
             for count in (1, 2)]  # the whole pile, and more than it
    assert [_rule_of(path) for path in paths] == ["event.invalid"] * 2  # top 0 is no card
    runs = cli_batch([["convert", path, "-o", path.with_suffix(".blog"), "--validate"]
                      for path in paths])
    for done in runs:
        line = one_error_line(done, 1)
        assert f"line {after + 2}, seq {after}: " in line, line
        assert line.endswith("[event.invalid]"), line  # every error line ends with its rule
        assert "names no top card" in line, line


def test_a_take_without_top_converts_to_top_0_and_back_with_the_same_head(
        tmp_path: Path) -> None:
    src = _take_without_top(tmp_path / "empty.jsonl", 2, 0)
    blog, back, again = tmp_path / "a.blog", tmp_path / "b.jsonl", tmp_path / "c.blog"
    first = jsonl.convert(src, blog, "binary")
    jsonl.convert(blog, back, "jsonl")
    assert json.loads(back.read_text().splitlines()[3]) == {"t": "pt", "seat": 0, "count": 0,
                                                            "top": 0, "seq": 2}
    assert jsonl.convert(back, again, "binary").head == first.head
    assert log.read_events(blog)[2] == ev.PileTaken(0, 0, 0, seq=2)


# -- an output that is a socket ------------------------------------------------------------------


def test_a_socket_as_output_is_refused_at_once_and_named_a_socket(tmp_path: Path) -> None:
    src = tmp_path / "a.blog"
    log.write_log(src, EVENTS[:4], validate=False)
    out = tmp_path / "s.jsonl"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(out))
        start = time.monotonic()
        with pytest.raises(OSError) as caught:
            outpaths.open_in_place(out, wait=30)
        assert time.monotonic() - start < 5  # was: 30 s, the wait for a FIFO's reader
        assert "a socket" in str(caught.value.strerror)
        start = time.monotonic()
        done = cli_batch([["convert", src, "-o", out, "--overwrite"]])[0]
        took = time.monotonic() - start
    line = one_error_line(done, 1)
    assert took < 8, took  # was: 10 s and more
    assert line == f"buraco-log: error: {out}: a socket, which cannot be opened as a file; " \
        "nothing was written", line  # was: "a FIFO that no program opened for reading ..."
    assert done.stdout == ""


def test_a_socket_read_as_a_log_is_named_a_socket(tmp_path: Path) -> None:
    path = tmp_path / "s.blog"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        for read in (log.read_events, log.verify, lambda p: log.Writer(p, validate=False)):
            with pytest.raises(LogFormatError) as caught:
                read(path)
            assert caught.value.kind == "filetype"
            assert caught.value.message == "not a regular file (a socket): not read as a log"


# -- a signature record copied many times --------------------------------------------------------

# The peak is VmHWM, this process's own: getrusage's ru_maxrss is kept across exec, so a child
# of a large parent reports the parent's peak.
_COPIES = """
import sys
sys.path.insert(0, {root!r})
from buraco_log import jsonl, log
def peak():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
before = peak()
if {path!r}.endswith(".jsonl"):
    reader = jsonl.JsonlReader({path!r})
    count = sum(1 for _ in reader)
else:
    with log.Reader({path!r}) as reader:
        count = sum(1 for _ in reader)
grown = peak() - before
print(count, len(reader.signatures), grown)
"""


def _copied_signatures(tmp_path: Path, copies: int) -> tuple[Path, Path]:
    """A signed log of 20 events whose signature record is followed by ``copies`` copies of
    itself, in binary and in JSON Lines."""
    from buraco_log.signing.keys import Signer
    from tests.signing.helpers import match

    signer = Signer.generate()
    path = tmp_path / "copies.blog"
    with log.Writer(path, signer=signer, batched=True, batch_events=1000) as w:
        w.append_many(match(key_id=signer.key_id)[:20])
    with log.Reader(path) as reader:
        events = list(reader)
        signed = reader.signatures[-1]
    data = path.read_bytes()
    record = data[_record_end(data, _last_events_record(path)):]  # the signature record
    assert record
    with open(path, "ab") as f:
        f.write(record * copies)
    text = tmp_path / "copies.jsonl"
    with open(text, "w") as out:
        jsonl.dump(iter([*events, *([signed] * (copies + 1))]), out, sealed=True)
    return path, text


def _last_events_record(path: Path) -> int:
    with log.Reader(path) as reader:
        return [off for off, _ in reader.segments()][-1]


def _record_end(data: bytes, off: int) -> int:
    """Where the sealed log's record at ``off`` ends (its header, then its payload)."""
    return off + 16 + 32 + 8 + int.from_bytes(data[off:off + 4], "little")


def test_copies_of_a_signature_record_take_no_memory_of_their_own(tmp_path: Path) -> None:
    copies = 15_000
    for path in _copied_signatures(tmp_path, copies):
        done = subprocess.run(
            [sys.executable, "-c", _COPIES.format(root=str(ROOT), path=str(path))],
            capture_output=True, text=True, timeout=120, check=True)
        count, signatures, grown = map(int, done.stdout.split())
        assert (count, signatures) == (20, copies + 1)
        assert grown < 3_000, (path.name, grown)  # KiB; was 7 MB: 450 bytes a copy


# -- a house rule this release does not know -----------------------------------------------------


def _with_knob(tmp_path: Path) -> tuple[Path, Path]:
    """The start of a real match whose rules hold ``burn_cards``, in binary and JSON Lines."""
    import msgspec

    match = match_events()[:5]
    start = msgspec.msgpack.decode(ev.encode(match[0]))
    start[2]["burn_cards"] = 3  # the rules, by position after the tag and match id
    payloads = [msgspec.msgpack.encode(start), *(ev.encode(e) for e in match[1:])]
    binary = tmp_path / "knob.blog"
    binary.write_bytes(log._file_header(ev.FORMAT_VERSION, False) + b"".join(
        log._segment(log._array_header(1) + p, 1, seq, None) for seq, p in enumerate(payloads)))
    objs = [jsonl.event_to_json(e) for e in match]
    objs[0]["rules"]["burn_cards"] = 3
    text = tmp_path / "knob.jsonl"
    text.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return binary, text


def test_a_knob_this_release_does_not_know_is_named_a_newer_house_rule(tmp_path: Path) -> None:
    binary, text = _with_knob(tmp_path)
    for read in (lambda: log.read_events(binary), lambda: jsonl.read_jsonl(text)):
        with pytest.raises(LogFormatError) as caught:
            read()
        error = caught.value
        assert (error.kind, error.seq) == ("unknown", 0)
        assert "`burn_cards` - at `rules` (a house rule this buraco_log" in str(error), error
        assert "written by a newer buraco_log" in str(error)  # was: the decoder's words alone


# -- Unicode normalisation of names -------------------------------------------------------------


def test_names_in_nfd_and_nfc_survive_binary_to_json_lines_to_binary_byte_for_byte(
        tmp_path: Path) -> None:
    import unicodedata

    import msgspec

    nfd = unicodedata.normalize("NFD", "José Conceição")
    nfc = unicodedata.normalize("NFC", nfd)
    match = list(match_events())[:30]
    start = match[0]
    assert isinstance(start, ev.MatchStarted)
    players = (msgspec.structs.replace(start.players[0], name=nfd),
               msgspec.structs.replace(start.players[1], name=nfc))
    match[0] = msgspec.structs.replace(start, players=players, metadata={"club": nfd})
    first, text, back = tmp_path / "a.blog", tmp_path / "a.jsonl", tmp_path / "b.blog"
    log.write_log(first, match)
    jsonl.convert(first, text, "jsonl")
    assert jsonl.convert(text, back, "binary").head == log.verify(first).head
    assert back.read_bytes() == first.read_bytes()
    again = log.read_events(back)[0]
    assert isinstance(again, ev.MatchStarted)
    assert [p.name for p in again.players] == [nfd, nfc] and again.metadata == {"club": nfd}
    # normalised by an editor afterwards, the JSON Lines no longer hash to their end line
    normalised = tmp_path / "n.jsonl"
    normalised.write_text(unicodedata.normalize("NFC", text.read_text("utf-8")), "utf-8")
    with pytest.raises(LogFormatError) as caught:
        jsonl.read_jsonl(normalised)
    assert caught.value.kind == "chain"


# -- reading a JSON Lines log anyway, past a flood of blank lines ------------------------------


def test_reading_anyway_stops_at_the_bound_on_blank_lines_in_a_row(tmp_path: Path) -> None:
    from buraco_log import forensic
    from buraco_log.jsonl import MAX_SKIPPED

    match = match_events()
    path = tmp_path / "flood.jsonl"
    with open(path, "wb") as f:
        f.write(b"".join(json.dumps(jsonl.event_to_json(e)).encode() + b"\n" for e in match[:5]))
        f.write(b"\n" * (3 * MAX_SKIPPED))  # a gigabyte of them took a quarter of an hour
        f.write(b"".join(json.dumps(jsonl.event_to_json(e)).encode() + b"\n"
                         for e in match[5:8]))
    salvage = forensic.read_anyway(path)
    assert salvage.rule == "log.limit" and salvage.line == 5 + MAX_SKIPPED + 1
    assert salvage.events == list(match[:5]) and not salvage.read_to_end  # was: read on


def test_reading_anyway_stops_at_a_zero_filled_tail_after_damage(tmp_path: Path) -> None:
    from buraco_log import forensic

    path = tmp_path / "a.blog"
    with log.Writer(path, validate=False) as w:
        for event in EVENTS[:8]:
            w.append(event)
    with log.Reader(path) as reader:
        offsets = [off for off, _ in reader.segments()]
    data = bytearray(path.read_bytes())
    data[offsets[3] + 16 + 32 + 4] ^= 0xFF  # record 3's header checksum: its events still read
    path.write_bytes(data)
    with open(path, "r+b") as f:
        f.truncate(len(data) + 56 * (1 << 24))  # a sparse gigabyte of zeros, whole headers
    start = time.monotonic()
    salvage = forensic.read_anyway(path)
    assert time.monotonic() - start < 5  # was: a minute
    assert (salvage.seq, salvage.rule) == (3, "log.damage")
    assert salvage.events == EVENTS[:8] and not salvage.read_to_end  # was: read to the end
