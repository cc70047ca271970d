"""Fault probes of the log, round 53: another program on the same machine changing a name
between a check and the action that trusts it (TOCTOU). Each swap is put exactly in the window
by wrapping the function that looks (in-process, or inside a real `buraco-log` subprocess).

- `seal` made its sealed copy under a fresh name, closed it, and opened it again by that name
  to write the events: a symbolic link put at the name meanwhile had the events written into
  the file it named, that file's mode and owner set to the log's (as root: any file's), and
  the log replaced by the link. Another file renamed over the name was written the same way.
  A link put there right before the rename had the log replaced by the link.
- Writing in place (`-o FIFO`, `/dev/null`) opened whatever was at the name with O_TRUNC: a
  regular file, or a link to one, put there after the command's look was truncated and
  overwritten; a FIFO removed meanwhile left a regular file of the output in its place.
- `convert -o OUT --overwrite` refused OUT as the log being read when it looked; a link to the
  log put at OUT after that look had the log replaced by its other form, under its own name
  (a .blog holding JSON Lines, unreadable to every reader). Another file renamed to OUT while
  it converted (a recorder's log) was replaced unseen; a link or another file's second name put
  at its temporary's name was renamed over OUT.
- A new log, and `convert`'s new file, was linked into place by its temporary's name: a link
  put there became the log's (or OUT's) name, leading to another program's file, and the
  conversion said it held the source's events.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from buraco_log import jsonl, log, outpaths
from buraco_log.errors import LogFormatError
from tests.log.cli_run import REPO, UNSEALED, Result
from tests.log.samples import sample_events


def _swap_in(name: str, what: str, other: Path) -> None:
    """Put ``what`` at ``name`` in one step (a rename over it), as another program would: a
    symbolic link to ``other``, ``other`` itself (another file), or a FIFO."""
    staged = f"{name}.staged"
    if what == "link":
        os.symlink(other, staged)
    elif what == "file":
        os.link(other, staged)
    else:
        os.mkfifo(staged)
    os.rename(staged, name)


def _unsealed(tmp_path: Path) -> Path:
    path = tmp_path / "m.blog"
    log.write_log(path, sample_events(30), sealed=False, validate=False)
    return path


def _other_log(tmp_path: Path) -> Path:
    """Another program's log (a header, no event: what seal's writer would append to), which
    only its owner may read."""
    other = tmp_path / "other" / "theirs.blog"
    other.parent.mkdir()
    with log.Writer(other, validate=False):
        pass
    os.chmod(other, 0o600)
    return other


def _state(path: Path) -> tuple[bytes, int, bool]:
    st = os.lstat(path)
    return path.read_bytes(), stat.S_IMODE(st.st_mode), stat.S_ISLNK(st.st_mode)


# -- 1. seal: its sealed copy is written, checked and renamed through its own descriptor


@pytest.mark.parametrize("what", ["link", "file", "fifo"])
def test_seal_writes_nothing_put_at_its_copys_name(tmp_path: Path, what: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path, other = _unsealed(tmp_path), _other_log(tmp_path)
    before, theirs = _state(path), _state(other)
    real = log._create_temp
    swapped: list[str] = []

    def create_then_swap(directory: str, name: str, dir_fd: int | None = None
                         ) -> tuple[int, str]:
        fd, tmp = real(directory, name, dir_fd)
        if not swapped:  # seal's own copy: the first made
            swapped.append(tmp)
            _swap_in(tmp, what, other)
        return fd, tmp

    monkeypatch.setattr(log, "_create_temp", create_then_swap)
    with pytest.raises(LogFormatError) as caught:
        log.seal(path)
    assert swapped
    assert caught.value.path == str(path), caught.value
    assert ("nothing was changed" in caught.value.message
            or "the log is unchanged" in caught.value.message), caught.value
    # before: the events went into the other file, its mode became the log's (0o644), and
    # the log was replaced by the link
    assert _state(other) == theirs
    assert _state(path) == before
    assert log.verify(path).sealed is False


def test_seal_renames_only_its_own_copy_over_the_log(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path, other = _unsealed(tmp_path), _other_log(tmp_path)
    before, theirs = _state(path), _state(other)

    def hook(point: str) -> None:
        if point == "seal.before-rename":
            (copy,) = tmp_path.glob(".m.blog.*.new")
            _swap_in(str(copy), "link", other)

    monkeypatch.setattr(log, "_hook", hook)
    with pytest.raises(LogFormatError, match="replaced at its name by another program"):
        log.seal(path)
    assert _state(path) == before  # before: m.blog was the link to the other log
    assert _state(other) == theirs


def test_seal_in_a_directory_another_took_the_place_of(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # (refused before too, by the look at the log's name before the rename; now before any
    # copy is made, and none is left in either directory)
    home = tmp_path / "d"
    home.mkdir()
    path = _unsealed(home)
    before = _state(path)
    moved = tmp_path / "moved"

    def hook(point: str) -> None:
        if point == "seal.locked":
            home.rename(moved)
            home.mkdir()
            log.write_log(home / "m.blog", sample_events(5, seed=3), sealed=False,
                          validate=False)

    monkeypatch.setattr(log, "_hook", hook)
    theirs_events = 5
    with pytest.raises(LogFormatError, match="nothing was changed"):
        log.seal(path)
    assert _state(moved / "m.blog") == before
    assert log.verify(home / "m.blog").events == theirs_events
    assert sorted(p.name for p in home.iterdir()) == ["m.blog"]
    assert sorted(p.name for p in moved.iterdir()) == ["m.blog"]


# -- 2. written in place: the file opened is the kind looked at


@pytest.mark.parametrize("what", ["link", "file", "gone"])
def test_a_fifo_output_swapped_after_the_look_is_not_written(
        tmp_path: Path, what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    precious = tmp_path / "precious.txt"
    precious.write_bytes(b"kept\n")
    real = outpaths.own_descriptor

    def look_then_swap(path: str | os.PathLike[str]) -> int | None:
        found = real(path)
        if what == "gone":
            os.unlink(fifo)
        else:
            _swap_in(str(fifo), what, precious)
        return found

    monkeypatch.setattr(outpaths, "own_descriptor", look_then_swap)
    with pytest.raises(OSError) as caught:
        os.close(outpaths.open_in_place(fifo, 0.2))
    assert caught.value.filename == str(fifo)
    assert precious.read_bytes() == b"kept\n"  # before: truncated, "link" and "file"
    if what == "gone":  # before: a regular file made at the FIFO's name
        assert caught.value.errno == errno.ENOENT and not os.path.lexists(fifo)
    else:
        assert caught.value.errno == errno.EEXIST, caught.value


def test_a_regular_file_through_dev_is_still_written_in_place(tmp_path: Path) -> None:
    # a name in /proc of a file (not one of this process's own outputs, which are written
    # where they stand): truncated and written, as open(path, "wb") would
    out = tmp_path / "out.bin"
    out.write_bytes(b"old bytes, longer than the new")
    with open(out, "rb") as held:
        fd = outpaths.open_in_place(f"/proc/thread-self/fd/{held.fileno()}")
        try:
            os.write(fd, b"new")
        finally:
            os.close(fd)
    assert out.read_bytes() == b"new"


# -- 3. the command line, in a real subprocess with the swap inside it


def _cli_with(wrapper: str, out: str, swap_to: Path, *args: object, then: str = "") -> Result:
    """``buraco-log ARGS`` in a subprocess in which the function ``wrapper`` names
    (``module:function``) is wrapped: after its first call, a symbolic link to ``swap_to`` is
    renamed over ``out`` (in ``swap_to``'s directory, where the command runs), or ``then``
    (Python, ``r`` being the call's result) is run instead."""
    module, function = wrapper.split(":")
    then = then or f"os.symlink({str(swap_to)!r}, 'staged'); os.rename('staged', {out!r})"
    code = (f"import os, sys; sys.path.insert(0, {str(REPO)!r})\n"
            f"import {module} as m\n"
            f"real = m.{function}; done = []\n"
            "def wrapped(*a, **k):\n"
            "    r = real(*a, **k)\n"
            "    if not done:\n"
            "        done.append(1)\n"
            f"        {then}\n"
            "    return r\n"
            f"m.{function} = wrapped\n"
            f"sys.argv = ['buraco-log', *{[str(a) for a in args]!r}]\n"
            "from cli.main import run; run()\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                       cwd=swap_to.parent, text=True)
    return Result(p.returncode, p.stdout, p.stderr)


def _one_line(r: Result, code: int, *needles: str) -> None:
    assert "Traceback" not in r.err, r.err[-800:]
    assert r.code == code and len(r.err.splitlines()) == 1, r
    assert all(n in r.err for n in needles), r


def test_convert_overwrite_never_replaces_the_log_a_link_put_at_its_output_leads_to(
        tmp_path: Path) -> None:
    game = tmp_path / "game.blog"  # the log being read, which the link put at OUT names
    game.write_bytes(UNSEALED.read_bytes())
    (tmp_path / "out.jsonl").write_text("an old conversion\n")
    r = _cli_with("cli.log_cmd:_replaces", "out.jsonl", game, "convert", "game.blog",
                  "-o", "out.jsonl", "--overwrite")
    _one_line(r, 2, "out.jsonl: is the log being read (game.blog)")
    # before: exit 0, and the log held its JSON Lines form under its binary name
    assert game.read_bytes() == UNSEALED.read_bytes()


def test_convert_into_a_fifo_writes_no_file_put_at_its_name(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "out.jsonl")
    precious = tmp_path / "precious.txt"
    precious.write_bytes(b"another program's file\n")
    # jsonl.convert writes the form asked for into a temporary: the command's longest window
    r = _cli_with("buraco_log.jsonl:convert", "out.jsonl", precious, "convert", UNSEALED,
                  "-o", "out.jsonl")
    _one_line(r, 2, "out.jsonl: a regular file", "nothing was written")
    assert precious.read_bytes() == b"another program's file\n"  # before: the log's JSON Lines



# -- 4. a new file is put in place by its descriptor's identity, never by what is at its name


def _converted(tmp_path: Path, to: str) -> tuple[Path, Path]:
    source = UNSEALED if to == "jsonl" else UNSEALED.with_suffix(".jsonl")
    return source, tmp_path / ("out.jsonl" if to == "jsonl" else "out.blog")


@pytest.mark.parametrize("to", ["jsonl", "binary"])
def test_a_conversion_puts_in_place_only_the_file_it_wrote(
        tmp_path: Path, to: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source, out = _converted(tmp_path, to)
    other = _other_log(tmp_path)
    theirs = _state(other)
    real = log.place_new

    def swap_then_place(tmp: str, path: str, *rest: int | None) -> bool:
        if path == str(out):  # the new file's own, not its writer's creation of the temporary
            _swap_in(tmp, "link", other)
        return real(tmp, path, *rest)

    monkeypatch.setattr(log, "place_new", swap_then_place)
    with pytest.raises(LogFormatError) as caught:
        jsonl.convert(source, out, cast("jsonl.Target", to))
    # before: OUT was the link to the other log, and the conversion said it held the source's
    # 245 events
    assert caught.value.path == str(out) and "nothing was written" in caught.value.message
    assert not os.path.lexists(out)
    assert _state(other) == theirs


def test_a_link_put_at_the_temporary_after_the_last_look_is_taken_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source, out = _converted(tmp_path, "jsonl")
    other = _other_log(tmp_path)
    real = log._refuse_swapped

    def look_then_swap(tmp: str, fd: int, path: str) -> None:
        real(tmp, fd, path)
        if path == str(out):
            _swap_in(tmp, "link", other)

    monkeypatch.setattr(log, "_refuse_swapped", look_then_swap)
    with pytest.raises(LogFormatError, match="nothing was written"):
        jsonl.convert(source, out, "jsonl")
    assert not os.path.lexists(out)  # the name the link made at OUT taken back


def test_a_new_log_is_not_made_of_what_was_put_at_its_temporary_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = _other_log(tmp_path)
    theirs = _state(other)
    path = tmp_path / "new.blog"
    real = log._create_temp

    def create_then_swap(directory: str, name: str, dir_fd: int | None = None
                         ) -> tuple[int, str]:
        fd, tmp = real(directory, name, dir_fd)
        _swap_in(tmp, "link", other)
        return fd, tmp

    monkeypatch.setattr(log, "_create_temp", create_then_swap)
    with pytest.raises(LogFormatError, match="nothing was written"):
        log.Writer(path, validate=False)
    # before: the writer opened, new.blog being the link to the other log (its first append
    # then failed: "the file at this path was replaced")
    assert not os.path.lexists(path)
    assert _state(other) == theirs


# -- 5. convert --overwrite renames its new file over the file it looked at, and only its own


@pytest.mark.slow  # a subprocess each: the default run's budget holds two (section 3)
def test_convert_overwrite_replaces_no_file_put_at_its_output_meanwhile(tmp_path: Path) -> None:
    # a recorder's log renamed to OUT while the conversion ran: replaced, every event it held
    # was gone from that name
    theirs = tmp_path / "theirs.blog"
    log.write_log(theirs, sample_events(12, seed=5), validate=False)
    held = theirs.read_bytes()
    (tmp_path / "out.blog").write_bytes(b"an old conversion")
    r = _cli_with("buraco_log.jsonl:convert", "out.blog", theirs, "convert",
                  UNSEALED.with_suffix(".jsonl"), "-o", "out.blog", "--overwrite",
                  then="os.rename('theirs.blog', 'out.blog')")
    _one_line(r, 2, "out.blog: another file was put at this name while converting",
              "nothing was written")
    assert (tmp_path / "out.blog").read_bytes() == held  # before: the conversion, exit 0


@pytest.mark.slow
@pytest.mark.parametrize("what", ["link", "file"])
def test_convert_overwrite_renames_only_its_own_new_file(tmp_path: Path, what: str) -> None:
    other = _other_log(tmp_path)
    theirs = _state(other)
    (tmp_path / "out.blog").write_bytes(b"an old conversion")
    swap = (f"os.{'symlink' if what == 'link' else 'link'}({str(other)!r}, 'staged'); "
            "os.rename('staged', a[1])")  # a[1]: the temporary converted into
    r = _cli_with("buraco_log.jsonl:convert", "out.blog", other, "convert",
                  UNSEALED.with_suffix(".jsonl"), "-o", str(tmp_path / "out.blog"),
                  "--overwrite", then=swap)
    _one_line(r, 2, "out.blog: the new file was replaced at its temporary name",
              "nothing was written")
    # before: out.blog became the link to the other log (or a second name of it)
    assert (tmp_path / "out.blog").read_bytes() == b"an old conversion"
    assert _state(other) == theirs


def test_a_new_log_in_a_directory_another_took_the_place_of_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, moved = tmp_path / "d", tmp_path / "moved"
    home.mkdir()
    real = log._create_temp

    def create_then_swap(directory: str, name: str, dir_fd: int | None = None
                         ) -> tuple[int, str]:
        made = real(directory, name, dir_fd)
        home.rename(moved)
        home.mkdir()
        return made

    monkeypatch.setattr(log, "_create_temp", create_then_swap)
    with pytest.raises(LogFormatError, match="nothing was written"):
        log.Writer(home / "new.blog", validate=False)
    # before: the temporary, with the header, stayed in the directory moved away (for ever:
    # only a seal or convert of that very name sweeps it)
    assert list(moved.iterdir()) == [] and list(home.iterdir()) == []


# -- 6. repair: its backup and its cut (refused before too: kept so they stay refused)


def _torn(tmp_path: Path, seed: int = 0) -> tuple[Path, bytes]:
    path = tmp_path / "t.blog"
    log.write_log(path, sample_events(10, seed), validate=False)
    with open(path, "ab") as f:
        f.write(b"\x01\x02 a record cut short")
    return path, path.read_bytes()


def test_repair_backs_up_into_no_file_a_link_put_at_the_backups_name_leads_to(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, whole = _torn(tmp_path)
    other = _other_log(tmp_path)
    theirs = _state(other)
    real = log._free_name
    taken: list[str] = []

    def look_then_swap(base: str) -> str:
        name = real(base)
        if not taken:  # the first name looked at only
            taken.append(name)
            _swap_in(name, "link", other)
        return name

    monkeypatch.setattr(log, "_free_name", look_then_swap)
    report = log.repair(path)
    assert report is not None and report.backup == f"{path}.bak.1", report
    assert _state(other) == theirs and os.path.islink(taken[0])
    assert path.read_bytes() + Path(report.backup).read_bytes() == whole


def test_repair_cuts_no_file_renamed_over_the_log_while_it_ran(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _torn(tmp_path)
    (tmp_path / "o").mkdir()
    other, theirs = _torn(tmp_path / "o", seed=4)  # another torn log

    def hook(point: str) -> None:
        if point == "repair.before-truncate":
            os.rename(other, path)

    monkeypatch.setattr(log, "_hook", hook)
    with pytest.raises(LogFormatError, match="nothing was changed"):
        log.repair(path)
    assert path.read_bytes() == theirs  # the torn log put there: not cut
    assert sorted(p.name for p in tmp_path.glob("t.blog.bak*")) == []


@pytest.mark.slow  # a subprocess: the library test above holds it in the default run
def test_the_seal_command_refuses_in_one_line_and_writes_no_other_file(tmp_path: Path) -> None:
    path = _unsealed(tmp_path)
    before = _state(path)
    other = _other_log(tmp_path)  # another program's log, only its owner's to read
    theirs = _state(other)
    r = _cli_with("buraco_log.log:_create_temp", "unused", path, "seal", "m.blog",
                  then=f"os.symlink({str(other)!r}, 'staged'); os.rename('staged', r[1])")
    _one_line(r, 2, "m.blog: the new file written beside the log while it was being sealed "
              "was replaced", "nothing was changed")
    # before: the events were written into the other log (its mode made 0o644) and m.blog
    # replaced by the link to it, said only afterwards ("now leads to .../theirs.blog")
    assert _state(other) == theirs
    assert _state(path) == before


def _no_event_torn(tmp_path: Path) -> tuple[Path, bytes]:
    empty = tmp_path / "empty.blog"  # a header, no event, a tail: all of it cut, unforced
    with log.Writer(empty, validate=False):
        pass
    with open(empty, "ab") as f:
        f.write(b"\x01\x02 a record cut short")
    return empty, empty.read_bytes()


def test_repair_asked_to_keep_an_event_looks_under_its_lock(tmp_path: Path) -> None:
    empty, held = _no_event_torn(tmp_path)
    with pytest.raises(LogFormatError, match="repair would cut every event") as caught:
        log.repair(empty, keep_none=False)
    assert caught.value.kind == "torn" and caught.value.offset == log.HEADER_SIZE
    assert empty.read_bytes() == held and list(tmp_path.glob("empty.blog.bak*")) == []
    assert log.repair(empty) is not None  # as ever, by default (the command's --force)


@pytest.mark.slow  # a subprocess: the library's side is in the default run, above
def test_repair_without_force_cuts_no_event_of_a_log_put_at_its_name_after_its_look(
        tmp_path: Path) -> None:
    path, whole = _torn(tmp_path)  # events to keep: the command's look lets it cut
    _, held = _no_event_torn(tmp_path)
    r = _cli_with("buraco_log.log:verify", "unused", path, "repair", "t.blog",
                  then="os.rename('empty.blog', 't.blog')")
    _one_line(r, 1, "t.blog, byte 20: repair would cut every event of the log",
              "nothing was changed (--force cuts them)", "[log.torn]")
    # before: exit 0, "cut 21 bytes at byte 20 ...; 0 events kept", without --force
    assert path.read_bytes() == held and whole != held
    assert list(tmp_path.glob("t.blog.bak*")) == []
