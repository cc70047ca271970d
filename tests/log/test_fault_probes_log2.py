"""More fault probes of the log layer: events msgspec cannot encode, JSON Lines that are not
UTF-8 text, a repeated first line, and convert told to write into a directory or over the log
it reads. The command-line probes run in real subprocesses with a timeout
(``tests/log/test_fault_probes_log.run``), so a hang fails instead of blocking."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from buraco_log.errors import LogFormatError
from tests.log.cli_run import (
    GOOD_JSONL,
    UNSEALED,
    UNSEALED_JSONL,
    _files,
    _with_line,
    assert_error,
    digest,
    run,
)


def _draws(n: int, start: int = 0) -> list[ev.AnyEvent]:
    return [ev.CardDrawn(seat=0, card=3, seq=start + i) for i in range(n)]


UNENCODABLE = [pytest.param("\ud800", id="lone-surrogate"), pytest.param(object(), id="object")]


# -- the writer: an event msgspec cannot encode --------------------------------------------------


@pytest.mark.parametrize("note", UNENCODABLE)
def test_a_batched_writer_keeps_the_events_before_an_unencodable_one_and_stops(
        tmp_path: Path, note: object) -> None:
    # batched and unvalidated, append only buffers: the flush lost the three good events
    # (taken out of the buffer before the encode raised UnicodeEncodeError or TypeError), the
    # writer went on, and the next append wrote a record of seq 4 where seq 0 belonged: the
    # whole log was damage from byte 20
    path = tmp_path / "b.blog"
    good = _draws(3)
    writer = log.Writer(path, validate=False, batched=True)
    for event in good:
        writer.append(event)
    writer.append(ev.CardDrawn(seat=0, card=3, seq=3, note=note))  # type: ignore[arg-type]
    with pytest.raises(LogFormatError) as caught:
        writer.flush()
    assert caught.value.kind == "validate" and caught.value.seq == 3, caught.value
    assert "'note'" in caught.value.message and str(path) in str(caught.value)
    with pytest.raises(LogFormatError) as later:  # the writer accepts nothing more
        writer.append(ev.CardDrawn(seat=0, card=3, seq=4))
    assert later.value.kind == "closed"
    writer.close()
    info = log.verify(path)
    assert (info.events, info.torn) == (3, None)
    assert log.read_events(path) == good


@pytest.mark.parametrize("note", UNENCODABLE)
def test_append_many_keeps_the_events_before_an_unencodable_one(tmp_path: Path,
                                                               note: object) -> None:
    path = tmp_path / "m.blog"
    events = [*_draws(5), ev.CardDrawn(seat=0, card=3, seq=5, note=note),  # type: ignore[arg-type]
              *_draws(2, start=6)]
    with (log.Writer(path, validate=False, batched=True) as writer,
          pytest.raises(LogFormatError, match="cannot be recorded") as caught):
        writer.append_many(events)
        writer.flush()
    assert caught.value.seq == 5
    assert log.read_events(path) == events[:5]


@pytest.mark.parametrize("note", UNENCODABLE)
def test_an_unbatched_writer_refuses_an_unencodable_event_as_its_own_error(
        tmp_path: Path, note: object) -> None:
    # it raised UnicodeEncodeError: no path, no seq, no kind; nothing was written, so the
    # writer takes the same seq again
    path = tmp_path / "u.blog"
    with log.Writer(path, validate=False) as writer:
        with pytest.raises(LogFormatError) as caught:
            writer.append(ev.CardDrawn(seat=0, card=3, seq=0, note=note))  # type: ignore[arg-type]
        assert caught.value.kind == "validate" and caught.value.seq == 0
        assert caught.value.path == str(path) and "'note'" in caught.value.message
        assert writer.append(ev.CardDrawn(seat=0, card=3, seq=0)) == 0
    assert log.read_events(path) == _draws(1)


def test_a_lone_surrogate_in_a_players_name_names_the_field(tmp_path: Path) -> None:
    start = log.read_events(UNSEALED)[0]
    assert isinstance(start, ev.MatchStarted)
    bad = msgspec.structs.replace(start, players=(ev.Player("p\udcff0"), *start.players[1:]))
    with pytest.raises(LogFormatError, match="field 'players' holds text with a lone surrogate"):
        log.encode_checked(bad)
    with (log.Writer(tmp_path / "p.blog", validate=False) as writer,
          pytest.raises(LogFormatError, match="'players'")):
        writer.append(bad)
    assert log.verify(tmp_path / "p.blog").events == 0


# -- JSON Lines that are not UTF-8 text ----------------------------------------------------------


def test_a_lone_surrogate_escape_is_named_not_called_truncated(tmp_path: Path) -> None:
    # msgspec says "Input data was truncated" of a whole, well-closed line
    line = b'{"t":"dr","seat":0,"card":"4c","seq":2,"note":"a\\ud800b"}'
    path = _with_line(tmp_path, 4, line)
    where = line.index(b"\\ud800")
    out = assert_error(run("verify", path), 1, f"{path}, line 4", "\\ud800", f"byte {where}",
                       "surrogate")
    assert "truncated" not in out


def test_an_escaped_backslash_before_u_is_no_surrogate(tmp_path: Path) -> None:
    # "\\ud800" is a backslash and the letters ud800: text, read as such
    line = b'{"t":"dr","seat":0,"card":"4c","seq":2,"note":"\\\\ud800"}'
    path = _with_line(tmp_path, 4, line)
    r = run("verify", path)
    # the note is new, so the end line's head no longer matches: that is the only complaint
    assert_error(r, 1, f"{path}, line 20", "do not hash to the head digest")


def test_a_surrogate_pair_escape_reads_as_the_character_it_encodes(tmp_path: Path) -> None:
    events = log.read_events(UNSEALED)
    events[2] = msgspec.structs.replace(events[2], note="\U0001f600")
    text = tmp_path / "emoji.blog"
    log.write_log(text, events, validate=False)
    raw = tmp_path / "emoji.jsonl"
    assert run("convert", text, "-o", raw).code == 0
    body = raw.read_bytes()
    assert "\U0001f600".encode() in body  # written as UTF-8; now spelled as the escape pair
    escaped = tmp_path / "escaped.jsonl"
    escaped.write_bytes(body.replace("\U0001f600".encode(), b"\\ud83d\\ude00"))
    a, b = run("verify", "-f", "json", escaped), run("verify", "-f", "json", text)
    assert a.code == b.code == 0, (a, b)
    assert json.loads(a.out)["head"] == json.loads(b.out)["head"] == log.verify(text).head


def test_a_byte_that_is_not_utf8_is_named_by_its_place_in_the_line(tmp_path: Path) -> None:
    line = b'{"t":"dr","seat":0,"card":"4c","seq":2,"note":"caf\xe9"}'  # Latin-1 e-acute
    path = _with_line(tmp_path, 4, line)
    where = line.index(b"\xe9")
    assert_error(run("verify", path), 1, f"{path}, line 4", f"byte {where}", "0xe9", "not UTF-8")
    out = tmp_path / "out.blog"
    assert_error(run("convert", path, "-o", out), 1, f"{path}, line 4", "not UTF-8")
    assert not out.exists()


# -- JSON Lines: a repeated first line -----------------------------------------------------------


def test_a_second_first_line_is_refused_where_it_stands(tmp_path: Path) -> None:
    # a version 1 first line, then a version 2 one: the second silently won, and the log was
    # reported as "changed after the fact" at its end line
    lines = (Path(UNSEALED_JSONL).read_bytes()).split(b"\n")
    v1 = b'{"log": "buraco-log", "version": 1, "sealed": false}'
    path = tmp_path / "two.jsonl"
    path.write_bytes(b"\n".join([v1, *lines]))
    line = assert_error(run("verify", path), 1, f"{path}, line 2", "second first line",
                        "line 1")
    assert "changed after the fact" not in line
    same = tmp_path / "same.jsonl"  # even when both agree: a log has one first line
    same.write_bytes(b"\n".join([lines[0], *lines]))
    assert_error(run("verify", same), 1, f"{same}, line 2", "second first line")
    assert run("verify", UNSEALED_JSONL).code == 0


# -- convert: into a directory, over the log it reads -------------------------------------------


@pytest.mark.parametrize("overwrite", [False, True], ids=["plain", "overwrite"])
def test_convert_into_a_directory_says_so_and_leaves_nothing(tmp_path: Path,
                                                            overwrite: bool) -> None:
    # with --overwrite it named its own temporary (".out.blog.1a2b.converting.blog: Is a
    # directory"); without, it advised --overwrite, which cannot replace a directory
    out = tmp_path / "out.blog"
    out.mkdir()
    (out / "keep").write_text("x")
    src = tmp_path / "src.jsonl"
    src.write_bytes(GOOD_JSONL.read_bytes())
    before = _files(tmp_path)
    args = ["convert", src, "-o", out, *(["--overwrite"] if overwrite else [])]
    line = assert_error(run(*args), 2, f"{out}: is a directory")
    assert "converting" not in line and "--overwrite" not in line
    assert _files(tmp_path) == before and (out / "keep").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.blog", "src.jsonl"]


def test_convert_overwrite_through_a_link_to_its_own_source_is_refused(tmp_path: Path) -> None:
    # out.jsonl -> match.blog: the JSON Lines form was renamed over match.blog, so the binary
    # log held JSON text under its .blog name, and every binary reader refused it
    src = tmp_path / "match.blog"
    src.write_bytes(UNSEALED.read_bytes())
    link = tmp_path / "out.jsonl"
    link.symlink_to(src.name)
    before = digest(src)
    assert_error(run("convert", src, "-o", link, "--overwrite"), 2, f"{link}: ",
                 "the log being read")
    assert digest(src) == before and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["match.blog", "out.jsonl"]
    link.unlink()  # another name converts as before
    assert run("convert", src, "-o", link).code == 0
    assert link.read_bytes() == UNSEALED_JSONL.read_bytes()


def test_convert_overwrite_of_a_second_hard_link_to_its_source_replaces_that_name_only(
        tmp_path: Path) -> None:
    # another name of the same file: renamed over, the source keeps its own name and bytes
    src = tmp_path / "match.jsonl"
    src.write_bytes(UNSEALED_JSONL.read_bytes())
    other = tmp_path / "other.blog"
    os.link(src, other)
    r = run("convert", src, "-o", other, "--overwrite")
    assert r.code == 0, r
    assert src.read_bytes() == UNSEALED_JSONL.read_bytes()
    assert other.read_bytes() == UNSEALED.read_bytes()


def test_convert_overwrite_of_the_file_its_source_links_to_is_refused(tmp_path: Path) -> None:
    # match.blog -> store.jsonl, a binary log under a .jsonl name: renamed over, the link
    # match.blog led to JSON text
    store = tmp_path / "store.jsonl"
    store.write_bytes(UNSEALED.read_bytes())
    src = tmp_path / "match.blog"
    src.symlink_to(store.name)
    assert_error(run("convert", src, "-o", store, "--overwrite"), 2, f"{store}: ",
                 "the log being read")
    assert store.read_bytes() == UNSEALED.read_bytes()


# -- follow: the log replaced under a reader ----------------------------------------------------


def _follow(reader: log.Reader, wait: float = 0.2) -> list[ev.AnyEvent]:
    return list(reader.follow(poll=0.002, idle_timeout=wait))


def test_follow_goes_on_in_the_file_a_seal_renamed_over_the_one_it_read(tmp_path: Path) -> None:
    # follow kept the old, unlinked file: every event the writer appended after the seal (to
    # the new file at the path) was never seen, and the tail went quiet for good
    from tests.log.samples import sample_events

    events = [*sample_events(30), ev.MatchEnded(seq=30)]
    path = tmp_path / "live.blog"
    with log.Writer(path, sealed=False, validate=False) as w:
        w.append_many(events[:10])
    with log.Reader(path) as reader:
        assert _follow(reader) == events[:10]
        with log.Writer(path, validate=False) as w:  # five more in the old file, unseen yet
            for event in events[10:15]:
                w.append(event)
        old = os.stat(path).st_ino
        log.seal(path)  # one record of 15 events: the follower read 10 of them
        assert os.stat(path).st_ino != old
        with log.Writer(path, validate=False) as w:
            for event in events[15:20]:
                w.append(event)
        assert _follow(reader) == events[10:20]
        with log.Writer(path, validate=False) as w:
            w.append_many(events[20:])
        assert _follow(reader) == events[20:]  # up to MatchEnded
    assert log.verify(path).sealed


def test_follow_refuses_a_replacement_that_does_not_hold_the_events_it_read(
        tmp_path: Path) -> None:
    from tests.log.samples import sample_events

    path = tmp_path / "live.blog"
    log.write_log(path, sample_events(10), validate=False)
    other = tmp_path / "other.blog"
    log.write_log(other, sample_events(12, seed=1), validate=False)
    short = tmp_path / "short.blog"
    log.write_log(short, sample_events(6), validate=False)
    for replacement in (other, short):
        with log.Reader(path) as reader:
            assert _follow(reader, 0.05) == sample_events(10)
            saved = path.read_bytes()
            os.replace(replacement, path)
            with pytest.raises(LogFormatError) as caught:
                _follow(reader)
            assert caught.value.kind == "chain" and caught.value.seq == 10
            assert "replaced while it was followed" in caught.value.message
            replacement.write_bytes(path.read_bytes())
            path.write_bytes(saved)


def test_follow_of_a_log_sealed_while_a_writer_appends_sees_every_event_once(
        tmp_path: Path) -> None:
    # a writer in another process appends one event at a time (waiting for the lock that a
    # seal holds); seals run meanwhile; the follower must see each event exactly once, in order
    import subprocess
    import sys
    import threading

    from tests.log.samples import sample_events

    events = [*sample_events(60), ev.MatchEnded(seq=60)]
    path = tmp_path / "live.blog"
    with log.Writer(path, sealed=False, validate=False) as w:
        w.append(events[0])
    child = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from buraco_log import log, events as ev
from tests.log.samples import sample_events
events = [*sample_events(60), ev.MatchEnded(seq=60)]
for event in events[1:]:
    with log.Writer({str(path)!r}, validate=False, lock_timeout=30) as w:
        w.append(event)
    time.sleep(0.003)
"""])
    got: list[ev.AnyEvent] = []

    def follow() -> None:
        with log.Reader(path) as reader:
            got.extend(reader.follow(poll=0.001, idle_timeout=30))

    follower = threading.Thread(target=follow)
    follower.start()
    seals = 0
    while child.poll() is None and seals < 8:
        try:
            log.seal(path, lock_timeout=5)
            seals += 1
        except LogFormatError as exc:  # the whole match may be in already
            assert exc.kind in ("locked",), exc
    assert child.wait(timeout=60) == 0
    follower.join(timeout=60)
    assert not follower.is_alive()
    assert seals >= 1
    assert got == events


# -- a command stopped by SIGTERM cleans up as Ctrl-C does ---------------------------------------

_STOPPED_CHILD = """
import os, sys, time
sys.path.insert(0, {repo!r})
from pathlib import Path
from buraco_log import jsonl, log

def pause():
    Path({ready!r}).touch()
    time.sleep(60)

where = {where!r}
if where == "seal":
    log._hook = lambda name: pause() if name == "seal.before-rename" else None
elif where == "to-jsonl":
    real = jsonl.event_to_json
    def slow(event):
        if event.seq == 100:
            pause()
        return real(event)
    jsonl.event_to_json = slow
elif where == "repair":
    real_backup = log._backup_tail
    def slow_backup(*args):
        name = real_backup(*args)
        pause()
        return name
    log._backup_tail = slow_backup
else:
    real_append = log.Writer.append
    def slow_append(self, event):
        if event.seq == 100:
            pause()
        return real_append(self, event)
    log.Writer.append = slow_append
sys.argv = ["buraco-log", *{args!r}]
from cli.main import run
run()
"""


@pytest.mark.parametrize("where", ["seal", "to-jsonl", "to-binary", "repair"])
def test_sigterm_in_the_middle_leaves_no_temporary_and_the_log_as_it_was(
        tmp_path: Path, where: str) -> None:
    # SIGTERM ended the process at once: seal left .match.blog.1a2b3c.new beside the log,
    # convert its .out.jsonl.1a2b3c.tmp beside the output
    import signal
    import subprocess
    import sys
    import time

    src = tmp_path / ("match.jsonl" if where == "to-binary" else "match.blog")
    src.write_bytes((UNSEALED_JSONL if where == "to-binary" else UNSEALED).read_bytes())
    if where == "repair":  # a torn tail of 9 bytes: its backup is written, then the signal
        src.write_bytes(UNSEALED.read_bytes() + bytes(range(1, 10)))
    args = {"seal": ["seal", str(src)], "repair": ["repair", str(src)],
            "to-jsonl": ["convert", str(src), "-o", str(tmp_path / "out.jsonl")],
            "to-binary": ["convert", str(src), "-o", str(tmp_path / "out.blog")]}[where]
    ready = tmp_path.parent / f"{tmp_path.name}.ready"
    before = _files(tmp_path)
    repo = str(Path(__file__).resolve().parents[2])
    child = subprocess.Popen(
        [sys.executable, "-c", _STOPPED_CHILD.format(repo=repo, ready=str(ready), where=where,
                                                     args=args)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the command never reached its pause"
            time.sleep(0.01)
        assert sorted(p.name for p in tmp_path.iterdir()) != sorted(before), "no temporary yet"
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 143 and b"Traceback" not in err, err
    # said as a SIGTERM since probe 44 (it was "interrupted", exit 130, as Ctrl-C)
    assert err.decode().splitlines() == ["buraco-log: error: terminated (SIGTERM)"], err
    assert out == b""
    assert _files(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before)


# -- events not stored as buraco_log encodes them: no rewrite may change the head ---------------


def _log_of_raw_records(path: Path, records: list[list[bytes]], sealed: bool) -> list[int]:
    """A log whose records hold these event bytes exactly; returns each record's offset."""
    data = bytearray(log._file_header(ev.FORMAT_VERSION, sealed))
    chain = log.chain_start()
    offsets, seq = [], 0
    for items in records:
        offsets.append(len(data))
        for item in items:
            chain.update(item)
        payload = log._array_header(len(items)) + b"".join(items)
        data += log._segment(payload, len(items), seq, chain.digest() if sealed else None)
        seq += len(items)
    path.write_bytes(bytes(data))
    return offsets


def _odd_logs(folder: Path, sealed: bool) -> dict[str, tuple[Path, int, int]]:
    """name: (log, byte offset of the odd record, seq of the odd event)."""
    draws = [ev.encode(e) for e in _draws(6)]
    assert draws[4].startswith(b"\x96\xa2dr\x00")  # [tag, seat 0, ...]: seat as a fixint
    wide = draws[4].replace(b"\xa2dr\x00", b"\xa2dr\xcc\x00", 1)  # the same 0 as a uint8
    start = log.read_events(UNSEALED)[0]
    assert isinstance(start, ev.MatchStarted)
    twice = ev.encode(msgspec.structs.replace(start, metadata={"a": "x", "b": "y"}))
    assert twice.count(b"\x82\xa1a\xa1x\xa1b\xa1y") == 1
    twice = twice.replace(b"\xa1b\xa1y", b"\xa1a\xa1y")  # the key "a" twice: {"a": "y"}
    out = {}
    path = folder / f"wide-{sealed}.blog"
    offsets = _log_of_raw_records(path, [draws[:3], [draws[3], wide, draws[5]]], sealed)
    out["wide"] = (path, offsets[1], 4)
    path = folder / f"twice-{sealed}.blog"
    offsets = _log_of_raw_records(path, [[twice], draws[1:3]], sealed)
    out["twice"] = (path, offsets[0], 0)
    return out


@pytest.mark.parametrize("sealed", [True, False], ids=["sealed", "unsealed"])
def test_convert_and_seal_refuse_events_not_stored_as_buraco_log_encodes_them(
        tmp_path: Path, sealed: bool) -> None:
    # convert said "head H" of the log (its bytes) and wrote a JSON Lines file whose end line
    # held another head (the events encoded again), as did the binary converted back; seal
    # promised to keep the head and changed it
    for name, (path, offset, seq) in _odd_logs(tmp_path, sealed).items():
        verified = run("verify", "-f", "json", path)  # the log is consistent as it stands
        assert verified.code == 0, (name, verified)
        head = json.loads(verified.out)["head"]
        before = _files(tmp_path)
        out = tmp_path / "out.jsonl"
        line = assert_error(run("convert", path, "-o", out), 1,
                            f"{path}, byte {offset}, seq {seq}", "not stored as buraco_log")
        assert head not in line
        assert_error(run("seal", path), 1, f"{path}, byte {offset}, seq {seq}",
                     "not stored as buraco_log")
        assert _files(tmp_path) == before  # nothing written, nothing rewritten


def test_every_golden_log_converts_and_seals_with_its_own_head(tmp_path: Path) -> None:
    # the check refuses nothing buraco_log wrote, of either format version
    for source in sorted((UNSEALED.parent).glob("*.blog")):
        head = log.verify(source).head
        out = tmp_path / (source.stem + ".jsonl")
        r = run("convert", source, "-o", out)
        assert r.code == 0 and head in r.out, (source, r)
        assert f'"head": "{head}"' in out.read_text()
        if log.verify(source).version == ev.FORMAT_VERSION:
            copy = tmp_path / source.name
            copy.write_bytes(source.read_bytes())
            assert run("seal", copy).code == 0
            assert log.verify(copy).head == head


# -- a log path that is a directory or a dangling link, for writing -----------------------------


def test_a_writer_or_recorder_at_a_directory_says_it_is_a_directory(tmp_path: Path) -> None:
    # opened for writing, a directory failed in open() with EISDIR: "Is a directory", kind
    # io, where every reader says kind filetype ("not a regular file (a directory)")
    from buraco_log.recorder import Recorder

    (tmp_path / "t.blog").mkdir()
    with pytest.raises(LogFormatError) as caught:
        log.Writer(tmp_path / "t.blog", validate=False)
    assert caught.value.kind == "filetype" and "a directory" in caught.value.message
    with Recorder(tmp_path, validate=False) as rec:
        with pytest.raises(LogFormatError) as again:
            rec.append("t", _draws(1)[0])
        assert again.value.kind == "filetype" and again.value.path == str(tmp_path / "t.blog")
    assert (tmp_path / "t.blog").is_dir() and not any((tmp_path / "t.blog").iterdir())


def test_a_dangling_link_as_a_log_names_where_it_leads(tmp_path: Path) -> None:
    # "No such file or directory" of a name that is there (ls shows it)
    link = tmp_path / "match.blog"
    link.symlink_to("gone.blog")
    for command in (["verify", link], ["seal", link], ["repair", link]):
        assert_error(run(*command), 2, f"{link}: ", "symbolic link to 'gone.blog'",
                     "does not exist")
    with pytest.raises(LogFormatError, match=r"symbolic link to 'gone\.blog'"):
        log.Writer(link, validate=False)
    assert link.is_symlink() and not (tmp_path / "gone.blog").exists()


# -- convert into a FIFO, /dev/null, /dev/stdout -------------------------------------------------


def _convert_with_fifo_wait(wait: float, *args: object, timeout: float = 60) -> tuple[
        int | None, bytes, bytes]:
    import subprocess
    import sys

    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
            f"import cli.log_cmd as m; m.FIFO_WAIT = {wait}\n"
            f"sys.argv = ['buraco-log', 'convert', *{[str(a) for a in args]!r}]\n"
            "from cli.main import run; run()\n")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", b""
    return p.returncode, p.stdout, p.stderr


def test_convert_into_a_fifo_no_program_reads_gives_up_and_says_so(tmp_path: Path) -> None:
    # it waited in open() forever
    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    code, out, err = _convert_with_fifo_wait(0.5, UNSEALED, "-o", fifo, timeout=30)
    assert code == 1, (code, err)
    lines = err.decode().splitlines()
    assert len(lines) == 1 and str(fifo) in lines[0] and "FIFO" in lines[0], lines
    assert "nothing was written" in lines[0] and out == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_convert_into_a_fifo_a_program_reads_gives_it_the_whole_log(tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read_later() -> None:
        import time
        time.sleep(0.3)  # the reader comes after convert started waiting
        with open(fifo, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read_later)
    reader.start()
    code, _, err = _convert_with_fifo_wait(20, UNSEALED, "-o", fifo)
    reader.join(timeout=60)
    assert code == 0, err
    assert got == [UNSEALED_JSONL.read_bytes()]


@pytest.mark.parametrize("to", ["jsonl", "binary"])
def test_convert_into_dev_null_or_dev_stdout_in_either_form(tmp_path: Path, to: str) -> None:
    # JSON Lines were refused: "a jsonl log must not be named without .blog"
    source, want = (UNSEALED, UNSEALED_JSONL) if to == "jsonl" else (UNSEALED_JSONL, UNSEALED)
    r = run("convert", source, "-o", "/dev/null", "--to", to)
    assert r.code == 0 and "245 events" in r.out, r
    assert Path("/dev/null").is_char_device()
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "cli.main", "convert", str(source), "-o",
                        "/dev/stdout", "--to", to], capture_output=True, timeout=60,
                       cwd=Path(__file__).resolve().parents[2])
    assert p.returncode == 0, p.stderr
    assert p.stdout == want.read_bytes()  # the log alone


@pytest.mark.parametrize("name, words", [
    ("out.txt", "must end in .jsonl, not .txt"), ("out", "must end in .jsonl, not without"),
])
def test_a_json_lines_output_named_otherwise_is_refused_in_plain_words(
        tmp_path: Path, name: str, words: str) -> None:
    line = assert_error(run("convert", UNSEALED, "-o", tmp_path / name, "--to", "jsonl"), 2,
                        words)
    assert "must not be named without .blog" not in line
    assert not (tmp_path / name).exists()


# -- convert --validate names the file and line of an illegal move ------------------------------


def test_convert_validate_names_the_file_and_line_of_a_move_after_the_match_ended(
        tmp_path: Path) -> None:
    # it said only "seq 245: [match.over] the match has ended": no file, no line
    lines = UNSEALED_JSONL.read_bytes().split(b"\n")
    assert lines[-3].startswith(b'{"t":"me"') and lines[-2].startswith(b'{"log": "end"')
    # line 1 is the first line, events 0..244 are lines 2..246: the draw after it is line 247
    body = [*lines[:-2], b'{"t":"dr","seat":0,"card":"4c","seq":245}', b""]
    path = tmp_path / "after.jsonl"
    path.write_bytes(b"\n".join(body))
    out = tmp_path / "after.blog"
    assert run("verify", path).code == 0  # the framing is sound: only the rules refuse it
    assert_error(run("convert", path, "-o", out, "--validate"), 1,
                 f"{path}, line 247, seq 245: ", "match.over")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["after.jsonl"]
    r = run("convert", path, "-o", out, "--validate", "-f", "json")
    error = json.loads(r.out)["error"]
    assert (error["path"], error["line"], error["seq"]) == (str(path), 247, 245), error
    assert error["rule"] == "match.over" and r.code == 1
    assert run("convert", path, "-o", out).code == 0  # without --validate it is recorded
    assert log.verify(out).events == 246


# -- a JSON Lines log under a name that is not .jsonl --------------------------------------------


@pytest.mark.parametrize("name", [
    "match.JSONL", "match.txt",
    # the suffix's case in another mix: the same refusal as .JSONL's (5 starts)
    pytest.param("match.Jsonl", marks=pytest.mark.slow)])
def test_json_lines_under_another_name_are_refused_alike_by_verify_audit_and_seal(
        tmp_path: Path, name: str) -> None:
    # verify took "match.JSONL" as JSON Lines (245 events) but its head, records and sealed
    # flag from audit's reading, which takes every name but .jsonl as binary: it printed
    # "245 events in 0 records, unsealed, head ce93..." (an empty log's head), exit 0
    path = tmp_path / name
    path.write_bytes(UNSEALED_JSONL.read_bytes())
    for command in (["verify", path], ["seal", path], ["repair", path]):
        assert_error(run(*command), 2, f"{path}, byte 0", "bad magic", "looks like JSON Lines",
                     ".jsonl")
    audited = run("audit", "-f", "json", path)
    assert audited.code != 0 and "245" not in audited.out
    assert path.read_bytes() == UNSEALED_JSONL.read_bytes()
    out = tmp_path / "out.blog"  # convert tells the forms apart by their bytes: the way out
    r = run("convert", path, "-o", out)
    assert r.code == 0 and log.verify(out).head == log.verify(UNSEALED).head, r


@pytest.mark.parametrize("name", ["out.JSONL", "out.Jsonl"])
def test_convert_never_writes_json_lines_under_a_name_readers_take_as_binary(
        tmp_path: Path, name: str) -> None:
    assert_error(run("convert", UNSEALED, "-o", tmp_path / name), 2, "--to")
    assert_error(run("convert", UNSEALED, "-o", tmp_path / name, "--to", "jsonl"), 2,
                 "must end in .jsonl")
    assert not (tmp_path / name).exists()


# -- a file at the log's path that ends before its header ----------------------------------------


@pytest.mark.parametrize("content", [b"", log.MAGIC[:7]], ids=["empty", "part-of-a-header"])
def test_a_headerless_file_is_not_sent_to_repair_which_refuses_it(tmp_path: Path,
                                                                 content: bytes) -> None:
    # the writer and the recorder said "run `buraco-log repair` first"; repair then said
    # "there are no events to keep; delete the file"
    from buraco_log.recorder import Recorder

    path = tmp_path / "t.blog"
    path.write_bytes(content)
    with pytest.raises(LogFormatError) as by_writer:
        log.Writer(path, validate=False)
    with Recorder(tmp_path, validate=False) as rec, pytest.raises(LogFormatError) as by_rec:
        rec.append("t", _draws(1)[0])
    for caught in (by_writer.value, by_rec.value):
        assert caught.kind == "torn" and "repair` first" not in caught.message, caught
        assert "remove it" in caught.message
    assert path.read_bytes() == content  # nothing was changed
    # a match not started, nothing to repair: exit 2 as for other input repair cannot act on
    # (it said "the file header itself is incomplete", exit 1)
    assert_error(run("repair", path), 2, "a match not started", "delete the file")
    assert path.read_bytes() == content
    path.unlink()  # as advised: the log starts afresh
    with log.Writer(path, validate=False) as writer:
        writer.append(_draws(1)[0])
    assert log.read_events(path) == _draws(1)
