"""Fault probes of the log, round 45.

- A ``Writer`` (or a ``LogLock``) dropped without ``close()`` kept its lock until its process
  ended: a second writer of the same log in the same process was refused ("another writer
  holds this log"), and a batched writer's buffered events were never written. As a file does,
  it now closes itself when collected, writing what it buffered, with a ``ResourceWarning``.
- A log (binary or JSON Lines) of a newer format version or layout was refused without saying
  what to do; one with a header flag of a newer release was called "unknown header flags"
  (exit 1, as damage). Each now says it was written by a newer release and to upgrade (exit 2).
- A ``Writer`` could not append to a log it may write in a directory it may not create files
  in ("Permission denied": a new log is made beside its name first): it now opens the log.
- A JSON line holding a number too large for any float (``1e400``) was refused as "Number out
  of range - at `$[...]`": it now names the number and its byte.
- A log read while its writer was writing a record was said to have a torn tail left by a
  crash, which `repair` cuts: when a writer holds the lock, the reader now says so.
- A forked child's copy of a writer wrote into the parent's log (its append, flush or close),
  and the parent's next append then failed as if the log was changed behind its lock; a
  relative path read as a removed log after the process changed directory.
- `repair` made its backup's name durable (the directory's fsync) only after it had cut the
  log: a power loss between the two kept the cut and could lose the backup.
- A crash between a new log's link into place and the removal of its temporary name left the
  log with two names, and `seal` refused it for ever ("2 hard links", the other hidden).
"""

from __future__ import annotations

import errno
import gc
import os
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec
import pytest

from buraco_log import __version__, jsonl, log
from buraco_log.errors import LogWriteError
from tests.cli.probes import ROOT, cli, one_error_line
from tests.log.samples import sample_events

EVENTS = sample_events(12)


def _append_and_drop(path: Path, *, batched: bool = False) -> None:
    w = log.Writer(path, validate=False, batched=batched)
    w.append_many(EVENTS[:5])  # and returns without close(): the writer is dropped here


def test_a_writer_dropped_in_a_function_lets_a_second_writer_open_after(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    with pytest.warns(ResourceWarning, match="unclosed log writer .*a.blog"):
        _append_and_drop(path)
        gc.collect()
    with log.Writer(path, validate=False) as w:  # was: "another writer holds this log"
        assert w.next_seq == 5
        w.append_many(EVENTS[5:])
    assert log.read_events(path) == EVENTS


def test_a_dropped_batched_writer_writes_what_it_buffered(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    with pytest.warns(ResourceWarning, match="its 5 buffered events written"):
        _append_and_drop(path, batched=True)
        gc.collect()
    assert log.read_events(path) == EVENTS[:5]  # was: a header only, and the log locked


def test_a_closed_writer_dropped_gives_no_warning(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False)
    w.append(EVENTS[0])
    w.close()
    del w
    gc.collect()  # the suite turns warnings into errors: any ResourceWarning fails this test


def test_a_dropped_log_lock_lets_the_log_be_locked_again(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    log.write_log(path, EVENTS[:3], validate=False)
    lock = log.LogLock(path)
    with pytest.warns(ResourceWarning, match="unreleased log lock"):
        del lock
        gc.collect()
    with log.LogLock(path):  # was: "another writer holds this log"
        pass


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_childs_copy_of_a_writer_writes_nothing_when_dropped(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False, batched=True)
    w.append_many(EVENTS[:4])
    size = path.stat().st_size
    pid = os.fork()
    if pid == 0:  # the child drops its copy: it must neither write nor let go of the lock
        code = 1
        try:
            del w
            gc.collect()
            code = 0 if path.stat().st_size == size else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with pytest.raises(log.LogFormatError, match="another writer holds"):
        log.Writer(path, validate=False)  # the parent still holds the lock
    w.append_many(EVENTS[4:])
    w.close()  # would fail "appended to by a program that ignores the writer lock"
    assert log.read_events(path) == EVENTS


# -- a log written by a newer release -------------------------------------------------------

def _with_header(tmp_path: Path, name: str, *, layout: int = log.LAYOUT,
                 version: int = 2, flags: int = log.FLAG_SEALED) -> Path:
    path = tmp_path / name
    log.write_log(path, EVENTS[:3], validate=False)
    head = log._HEADER.pack(log.MAGIC, layout, version, flags, 0)[:-4]
    data = path.read_bytes()
    path.write_bytes(head + zlib.crc32(head).to_bytes(4, "little") + data[log.HEADER_SIZE:])
    return path


@pytest.mark.parametrize(("header", "offset"), [
    ({"version": 3}, 10), ({"layout": 2}, 8), ({"flags": log.FLAG_SEALED | 2}, 12)])
def test_a_log_of_a_newer_release_says_so_and_to_upgrade(
        tmp_path: Path, header: dict[str, int], offset: int) -> None:
    path = _with_header(tmp_path, "newer.blog", **header)
    with pytest.raises(log.LogFormatError) as caught:
        log.verify(path)
    exc = caught.value
    # before: "... is not known to this buraco_log (it reads 1 to 2)", and for a new flag
    # "unknown header flags 0x3" (kind header, exit 1, as if the log were damaged)
    assert (exc.kind, exc.offset, exc.exit_status) == ("version", offset, 2)
    assert str(exc).endswith(log.NEWER_ADVICE) and "upgrade buraco-log" in str(exc)
    assert __version__ in str(exc)


def test_a_version_no_release_wrote_is_not_called_newer(tmp_path: Path) -> None:
    path = _with_header(tmp_path, "zero.blog", version=0)
    with pytest.raises(log.LogFormatError) as caught:
        log.verify(path)
    assert caught.value.kind == "version" and "upgrade" not in str(caught.value)


def test_json_lines_of_a_newer_release_say_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "newer.jsonl"
    path.write_text('{"log": "buraco-log", "version": 3}\n')
    with pytest.raises(log.LogFormatError) as caught:
        jsonl.read_jsonl(path)
    assert caught.value.kind == "version" and str(caught.value).endswith(log.NEWER_ADVICE)


def test_the_cli_says_a_newer_flag_in_one_line_exit_2(tmp_path: Path) -> None:
    path = _with_header(tmp_path, "flag.blog", flags=log.FLAG_SEALED | 4)
    line = one_error_line(cli("verify", path), 2)  # was exit 1, "unknown header flags 0x5"
    assert line == (f"buraco-log: error: {path}, byte 12: header flags 0x5 are not known to "
                    f"this buraco_log (it knows 0x1, sealed){log.NEWER_ADVICE} [log.version]")


# -- a log in a directory this process may not create files in ------------------------------

def _as_another_user(cwd: Path, work: Callable[[], str]) -> str:
    """``work()``'s answer, run in a child process in ``cwd`` as user 65534 when this is root
    (root may create files anywhere), else as this user."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        answer = "child failed"
        try:
            os.chdir(cwd)  # relative names from here on: the ancestors may be closed to 65534
            cwd.chmod(0o711)
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            answer = work()
        except BaseException as exc:  # said to the parent, not raised here
            answer = f"{type(exc).__name__}: {exc}"
        finally:
            os.write(write, answer.encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        answer = f.read().decode()
    os.waitpid(pid, 0)
    return answer


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_writer_appends_to_a_writable_log_in_a_directory_it_may_not_create_in(
        tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    log.write_log(box / "a.blog", EVENTS[:3], validate=False)
    if os.geteuid() == 0:
        os.chown(box / "a.blog", 65534, 65534)
    box.chmod(0o555)  # the log may be written, but no file made beside it

    def append() -> str:
        with log.Writer("box/a.blog", validate=False) as w:
            w.append_many(EVENTS[3:])
        return "appended"

    def create() -> str:
        log.Writer("box/new.blog", validate=False).close()
        return "created"

    try:
        appended = _as_another_user(tmp_path, append)
        created = _as_another_user(tmp_path, create)
    finally:
        box.chmod(0o755)
    assert appended == "appended"  # was: "LogFormatError: box/a.blog: Permission denied"
    assert log.read_events(box / "a.blog") == EVENTS
    assert created == "LogFormatError: box/new.blog: Permission denied"  # a new one cannot be
    assert sorted(os.listdir(box)) == ["a.blog"]


def test_a_new_log_whose_directory_cannot_be_made_durable_is_still_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a directory no file may be made in lets a writer open the log that is there: a
    failed fsync of the directory after the new log was linked into place is still an error
    (its name may not survive a power loss, nor then any event acknowledged in it)."""
    def failing(path: str) -> None:
        raise OSError(errno.EIO, "Input/output error", path)

    monkeypatch.setattr(log, "_fsync_dir", failing)
    with pytest.raises(LogWriteError, match="Input/output error"):
        log.Writer(tmp_path / "a.blog", validate=False)


# -- JSON Lines -----------------------------------------------------------------------------

@pytest.mark.parametrize("number", ["1e400", "-2.5E+999", "1" + "0" * 400 + ".5"])
def test_a_number_too_large_for_any_float_is_named_with_its_byte(
        tmp_path: Path, number: str) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(f'{{"t":"dr","seat":{number},"card":"3c","seq":0}}\n')
    with pytest.raises(log.LogFormatError) as caught:
        jsonl.read_jsonl(path)
    said = str(caught.value)
    # before: "Number out of range - at `$[...]`", naming no number and no place
    assert "$[" not in said and said.startswith(f"{path}, line 1")
    assert f"Number out of range: {log.clip(number, 40)} at byte 17 is larger" in said


# -- a log read while a writer appends --------------------------------------------------------

HOLDS = "a writer holds this log's lock and may be writing it now"


def _half_written(tmp_path: Path) -> Path:
    """A log whose last record is half there, as a reader sees it while the writer's write is
    under way."""
    path = tmp_path / "live.blog"
    log.write_log(path, EVENTS[:5], validate=False)
    whole = path.stat().st_size
    with log.Writer(path, validate=False) as w:
        w.append(EVENTS[5])
    os.truncate(path, (whole + path.stat().st_size) // 2)
    return path


_HOLDER = """
import sys
from buraco_log import log
with log.LogLock(sys.argv[1]):
    print("locked", flush=True)
    sys.stdin.read()  # until the test closes it
"""


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="needs Linux's /proc/locks")
def test_a_torn_tail_read_while_a_writer_holds_the_lock_says_so(tmp_path: Path) -> None:
    path = _half_written(tmp_path)
    assert HOLDS not in str(log.verify(path).torn)  # no writer: a crash, `repair` it
    with log.LogLock(path):  # this process's own lock (a recorder reading its logs): no word
        assert HOLDS not in str(log.verify(path).torn)
    with subprocess.Popen([sys.executable, "-c", _HOLDER, str(path)], cwd=ROOT,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT))) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        try:
            assert holder.stdout.readline() == "locked\n"
            torn = log.verify(path).torn
            assert torn is not None and HOLDS in torn.reason  # was: only "cut short"
            with pytest.raises(log.LogFormatError) as caught:
                log.read_events(path)
            assert caught.value.kind == "torn" and HOLDS in str(caught.value)
            line = one_error_line(cli("verify", path), 1)
            assert HOLDS in line and line.startswith(f"buraco-log: error: {path}, byte ")
        finally:
            holder.stdin.close()
            holder.wait(30)


def test_a_writer_resuming_a_torn_log_does_not_call_itself_another_writer(
        tmp_path: Path) -> None:
    path = _half_written(tmp_path)
    with pytest.raises(log.LogFormatError) as caught:
        log.Writer(path, validate=False)  # it holds the lock while it reads the log
    assert caught.value.kind == "torn" and HOLDS not in str(caught.value)


# -- a process that changes its directory while a log is open under a relative name -----------

def test_a_writer_of_a_relative_path_goes_on_after_a_chdir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    w = log.Writer("a.blog", validate=False)
    w.append_many(EVENTS[:3])
    monkeypatch.chdir(tmp_path / "elsewhere")
    # was: LogWriteError "the file at this path was replaced or removed by a program that does
    # not take the log's lock; ... not acknowledged" (the event was in the log all the same)
    assert w.append(EVENTS[3]) == 3
    w.close()
    assert log.read_events(tmp_path / "a.blog") == EVENTS[:4]


def test_a_log_lock_of_a_relative_path_is_current_after_a_chdir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log.write_log(tmp_path / "a.blog", EVENTS[:3], validate=False)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    with log.LogLock("a.blog") as lock:
        monkeypatch.chdir(tmp_path / "elsewhere")
        assert lock.current()  # was: False, as if the log had been removed


def test_write_log_of_a_relative_path_refusing_an_event_after_a_chdir_removes_its_own_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)

    def events() -> object:
        yield from EVENTS[:3]
        os.chdir(tmp_path / "elsewhere")
        yield EVENTS[5]  # a wrong seq: write_log leaves no log

    with pytest.raises(log.LogFormatError):
        log.write_log("a.blog", events(), validate=False)  # type: ignore[arg-type]
    assert not (tmp_path / "a.blog").exists()  # was: left, the log of a match cut short


def test_following_a_relative_path_after_a_chdir_reads_on_in_the_same_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    log.write_log(elsewhere / "a.blog", sample_events(4, seed=9), validate=False)  # same name
    monkeypatch.chdir(tmp_path)
    w = log.Writer(tmp_path / "a.blog", validate=False)
    w.append_many(EVENTS[:3])
    with log.Reader("a.blog") as reader:  # relative
        followed = reader.follow(poll=0.01, idle_timeout=0.3)
        got = [next(followed) for _ in range(3)]
        monkeypatch.chdir(elsewhere)
        w.append_many(EVENTS[3:6])
        got += list(followed)  # was: "the log was replaced while it was followed by a file ..."
    w.close()
    assert got == EVENTS[:6]


@pytest.mark.parametrize(("value", "said"), [("null", "null"), ("1", "1"), ('"sig"', '"sig"'),
                                             ("[1]", "[1]")])
def test_an_unexpected_log_line_names_its_value_as_json_spells_it(
        tmp_path: Path, value: str, said: str) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text(f'{{"log": {value}}}\n')
    with pytest.raises(log.LogFormatError) as caught:
        jsonl.read_jsonl(path)
    assert str(caught.value) == f"{path}, line 1: unexpected log line {said}"  # was None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("batched", [True, False])
def test_a_forked_child_cannot_write_through_its_parents_writer(
        tmp_path: Path, batched: bool) -> None:
    path = tmp_path / "a.blog"
    w = log.Writer(path, validate=False, batched=batched)
    w.append_many(EVENTS[:4])
    size = path.stat().st_size
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            try:
                w.append(EVENTS[4])
                w.flush()
                code = 2  # it wrote into the parent's log
            except log.LogFormatError as exc:
                code = 0 if exc.kind == "closed" and "forked child" in str(exc) else 3
            w.close()  # writes nothing either
            if path.stat().st_size != size:
                code = 4
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0  # was 4: the child wrote into the log
    w.append_many(EVENTS[4:])  # the parent goes on (it failed: "the log was appended to")
    w.close()
    assert log.read_events(path) == EVENTS


# -- repair's backup is durable before anything is cut -----------------------------------------

def _torn_log(tmp_path: Path) -> Path:
    path = tmp_path / "t.blog"
    log.write_log(path, EVENTS[:5], validate=False)
    with log.Writer(path, validate=False) as w:
        w.append(EVENTS[5])
    os.truncate(path, path.stat().st_size - 5)  # the last record cut short
    return path


def test_repair_makes_its_backups_name_durable_before_it_cuts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _torn_log(tmp_path)
    done: list[str] = []
    real_dir, real_cut = log.fsync_dir, os.ftruncate

    def fsync_dir(name: str) -> None:
        done.append(f"fsync_dir {os.path.basename(name)}")
        real_dir(name)

    def ftruncate(fd: int, size: int) -> None:
        done.append(f"ftruncate {size}")
        real_cut(fd, size)

    monkeypatch.setattr(log, "fsync_dir", fsync_dir)
    monkeypatch.setattr(os, "ftruncate", ftruncate)
    report = log.repair(path)
    assert report is not None and report.backup == f"{path}.bak"
    cut = done.index(f"ftruncate {report.cut_offset}")
    # was: the directory (and so the backup's name) made durable only after the cut
    assert "fsync_dir t.blog.bak" in done[:cut], done


def test_repair_whose_backups_directory_cannot_be_made_durable_cuts_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _torn_log(tmp_path)
    before = path.read_bytes()

    def failing(name: str) -> None:
        raise OSError(errno.EIO, "Input/output error", name)

    monkeypatch.setattr(log, "fsync_dir", failing)
    with pytest.raises(LogWriteError) as caught:
        log.repair(path)
    assert "nothing was cut" in str(caught.value) and "t.blog.bak" in str(caught.value)
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["t.blog"]


# -- every single-byte edit of a small log, signed or not (slow) -------------------------------

def _small_log(tmp_path: Path, form: str) -> tuple[Path, list[object]]:
    path = tmp_path / f"{form}.blog"
    if form == "signed":
        from buraco_log.signing.keys import Signer
        from tests.recorder.sources import matches

        signer = Signer.generate()
        events = [msgspec.structs.replace(matches()[0][0], key_id=signer.key_id),
                  *matches()[0][1:5]]
        with log.Writer(path, signer=signer, validate=False) as w:
            for event in events:
                w.append(event)
    else:
        events = list(EVENTS[:5])
        with log.Writer(path, validate=False, sealed=form == "sealed") as w:
            for event in events:
                w.append(event)
    return path, events


@pytest.mark.slow
@pytest.mark.parametrize("form", ["sealed", "unsealed", "signed"])
def test_every_byte_flipped_deleted_or_inserted_is_one_error_or_a_prefix(
        tmp_path: Path, form: str) -> None:
    """Each edit is refused in one line naming the file and the byte or seq, or reads as a
    prefix of the events (a cut log); `repair` never leaves anything but a prefix."""
    src, events = _small_log(tmp_path, form)
    data = src.read_bytes()
    path = tmp_path / "edited.blog"

    def edits() -> Iterator[tuple[str, bytes]]:
        for i in range(len(data)):
            for x in (0x01, 0x80, 0xFF):
                yield f"flip {i}^{x:#x}", data[:i] + bytes([data[i] ^ x]) + data[i + 1:]
            yield f"delete {i}", data[:i] + data[i + 1:]
            for b in {0, 0xFF, data[i]}:
                yield f"insert {b:#x} at {i}", data[:i] + bytes([b]) + data[i:]
        yield "append 0", data + b"\0"

    checked = 0
    for what, edited in edits():
        path.write_bytes(edited)
        try:
            got = log.read_events(path)
            assert got == events[:len(got)] and len(edited) <= len(data), what
        except log.LogFormatError as exc:
            said = str(exc)
            assert "\n" not in said and said.startswith(f"{path}"), (what, said)
            assert exc.offset is not None or exc.seq is not None, (what, said)
        try:
            log.repair(path, backup=False)
        except log.LogFormatError:
            pass
        else:
            got = log.read_events(path)
            assert got == events[:len(got)], what
        checked += 1
    assert checked > 6 * len(data)


# -- a log created by a writer killed between linking it into place and removing its temporary -

def test_seal_takes_a_log_left_with_its_creation_name_by_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    log.write_log(path, EVENTS[:5], sealed=False, validate=False)
    stray = tmp_path / f".a.blog.{'5e' * 6}.new"
    os.link(path, stray)  # what a crash between _create_locked's link and unlink leaves
    info = log.seal(path)  # was: "cannot seal a log with 2 hard links ... under one name"
    assert info.sealed and log.read_events(path) == EVENTS[:5]
    assert sorted(os.listdir(tmp_path)) == ["a.blog"]


def test_seal_still_refuses_a_log_with_a_second_name_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "a.blog"
    log.write_log(path, EVENTS[:5], sealed=False, validate=False)
    os.link(path, tmp_path / "copy.blog")
    os.link(path, tmp_path / ".b.blog.5e5e5e5e5e5e.new")  # another log's creation name
    with pytest.raises(log.LogFormatError, match="cannot seal a log with 3 hard links"):
        log.seal(path)
    assert sorted(os.listdir(tmp_path)) == [".b.blog.5e5e5e5e5e5e.new", "a.blog", "copy.blog"]
