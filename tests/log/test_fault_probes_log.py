"""Fault probes of the log layer: hostile inputs from an outside tester, through the command
line in real subprocesses with a timeout, so a hang fails instead of blocking the run.

The promises (docs/cli.md, Conventions; schema/LOG_FORMAT.md): bad input gets one line on
stderr naming the file and where (byte, line, seq) and why, a non-zero exit, no traceback,
nothing half-written, and an input a command only reads is never modified."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import zlib
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from buraco_log import events as ev
from buraco_log import log
from tests.log.cli_run import (
    EXAMPLES,
    GOOD_JSONL,
    UNSEALED,
    UNSEALED_JSONL,
    _files,
    _lines,
    _with_line,
    assert_error,
    digest,
    run,
)

# -- JSON Lines: hostile lines -------------------------------------------------------------------


DRAW = b'{"t":"dr","seat":0,"card":"4c","seq":2}'  # line 4 of the golden log


def test_the_golden_draw_line_is_what_these_probes_edit() -> None:
    assert _lines()[3] == DRAW


@pytest.mark.parametrize("line, field", [
    (b'{"t":"dr","seat":0,"card":"4c","seq":1' + b"0" * 5000 + b"}", "seq"),
    (b'{"t":"dr","seat":0,"card":[-' + b"9" * 5000 + b'],"seq":2}', "card"),
])
def test_an_integer_of_thousands_of_digits_is_a_range_error_naming_the_field(
        tmp_path: Path, line: bytes, field: str) -> None:
    # msgspec refuses it before any field can be looked at; it is still kind range: a
    # damaged record, exit 1 (as `show` and `audit` say)
    path = _with_line(tmp_path, 4, line)
    before = digest(path)
    for command in (["verify", path], ["convert", path, "-o", tmp_path / "out.blog"]):
        assert_error(run(*command), 1, f"{path}, line 4", f"field '{field}'",
                     "outside the signed 64-bit range")
    assert digest(path) == before and not (tmp_path / "out.blog").exists()


def test_a_byte_order_mark_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD_JSONL.read_bytes())
    assert_error(run("verify", path), 1, f"{path}, line 1", "byte order mark")


def test_crlf_line_ends_read_as_the_same_log(tmp_path: Path) -> None:
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(GOOD_JSONL.read_bytes().replace(b"\n", b"\r\n"))
    a, b = run("verify", "-f", "json", path), run("verify", "-f", "json", GOOD_JSONL)
    assert a.code == b.code == 0, (a, b)
    assert json.loads(a.out)["head"] == json.loads(b.out)["head"]


@pytest.mark.parametrize("line, field", [
    (b'{"t":"dr","seat":0,"card":"4c","seq":2.0}', "`seq`"),
    (b'{"t":"dr","seat":0.5,"card":"4c","seq":2}', "`seat`"),
    (b'{"t":"dr","seat":"0","card":"4c","seq":2}', "`seat`"),
])
def test_a_field_of_the_wrong_type_is_named_not_numbered(tmp_path: Path, line: bytes,
                                                         field: str) -> None:
    path = _with_line(tmp_path, 4, line)
    line_out = assert_error(run("verify", path), 1, f"{path}, line 4", field)
    assert "$[" not in line_out


def test_a_field_of_the_wrong_type_in_a_binary_record_is_named(tmp_path: Path) -> None:
    path = tmp_path / "float.blog"
    payload = log._array_header(1) + msgspec.msgpack.encode(["dr", 0.5, 3, 0, None, None])
    path.write_bytes(log._file_header(ev.FORMAT_VERSION, False)
                     + log._segment(payload, 1, 0, None))
    line = assert_error(run("verify", path), 1, f"{path}, byte 20, seq 0", "`seat`")
    assert "$[" not in line


def test_a_signature_record_before_any_event_is_named_so(tmp_path: Path) -> None:
    path = tmp_path / "sig0.blog"
    payload = b"\x91" + b"\xc0" * 10
    head = struct.pack("<IIQ", len(payload), 0, 0)
    head += struct.pack("<I", zlib.crc32(payload))
    head += struct.pack("<I", zlib.crc32(head))
    path.write_bytes(log._file_header(ev.FORMAT_VERSION, False) + head + payload)
    line = assert_error(run("verify", path), 1, f"{path}, byte 20", "before the first event")
    assert "seq -1" not in line


# -- seal and convert: a full disk, a symlink --------------------------------------------------


def test_seal_on_a_full_disk_names_the_log_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "match.blog"
    target.write_bytes(UNSEALED.read_bytes())
    before = _files(tmp_path)
    r = run("seal", target, fsize=2000)
    line = assert_error(r, 1, f"{target}: ", "File too large", "unchanged")
    assert ".new" not in line and "seq" not in line, line
    assert _files(tmp_path) == before


@pytest.mark.parametrize("source, out", [(UNSEALED, "new.jsonl"), (UNSEALED_JSONL, "new.blog"),
                                         (UNSEALED, "-"), (UNSEALED_JSONL, "-")])
def test_convert_on_a_full_disk_names_its_output_and_leaves_nothing(
        tmp_path: Path, source: Path, out: str) -> None:
    src = tmp_path / source.name
    src.write_bytes(source.read_bytes())
    before = _files(tmp_path)
    (tmp_path / "tmp").mkdir()
    r = run("convert", src, "-o", out, fsize=2000, cwd=tmp_path,
            env={"TMPDIR": str(tmp_path / "tmp")})
    line = assert_error(r, 1, f"error: {out}: ", "File too large")
    assert ".tmp" not in line and "stdout." not in line and "seq" not in line, line
    assert _files(tmp_path) == before
    assert not any((tmp_path / "tmp").iterdir())


def test_seal_through_a_symlink_seals_the_log_and_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.blog"
    real.write_bytes(UNSEALED.read_bytes())
    link = tmp_path / "link.blog"
    link.symlink_to(real.name)
    r = run("seal", link)
    assert r.code == 0, r
    assert link.is_symlink() and link.resolve() == real
    verified = run("verify", "-f", "json", real)
    assert verified.code == 0 and json.loads(verified.out)["sealed"] is True, verified
    assert str(link) in r.out  # reported as the user named it


def test_seal_refuses_a_log_with_two_hard_links_and_changes_neither_name(tmp_path: Path) -> None:
    # the rename would seal one name and leave the other on the old file, where a recorder
    # writing through it would append events the sealed log never holds
    first = tmp_path / "match.blog"
    first.write_bytes(UNSEALED.read_bytes())
    second = tmp_path / "backup.blog"
    os.link(first, second)
    before = _files(tmp_path)
    assert_error(run("seal", first), 2, f"{first}: ", "2 hard links", "under one name")
    assert _files(tmp_path) == before and os.stat(first).st_ino == os.stat(second).st_ino
    verified = run("verify", "-f", "json", second)
    assert verified.code == 0 and json.loads(verified.out)["sealed"] is False, verified
    second.unlink()  # one name again: it seals
    assert run("seal", first).code == 0
    assert json.loads(run("verify", "-f", "json", first).out)["sealed"] is True


def _torn(folder: Path) -> Path:
    path = folder / "torn.blog"
    path.write_bytes(UNSEALED.read_bytes() + bytes(range(1, 10)))  # 9 bytes of a header
    return path


def test_repair_whose_backup_cannot_be_written_names_the_backup_and_cuts_nothing(
        tmp_path: Path) -> None:
    path = _torn(tmp_path)
    before = _files(tmp_path)
    line = assert_error(run("repair", path, fsize=4), 1, f"{path}: ", f"{path}.bak",
                        "File too large", "nothing was cut")
    assert "--no-backup" in line
    assert _files(tmp_path) == before


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(a writable folder, the same folder mounted read-only): a read-only file system, which
    even root cannot write. Skipped where a bind mount is not allowed."""
    src, ro = tmp_path / "src", tmp_path / "ro"
    src.mkdir()
    ro.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "--bind", src, ro], capture_output=True).returncode != 0:
        pytest.skip("needs root and mount")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", ro],
                          capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only")
        yield src, ro
    finally:
        subprocess.run(["umount", ro], capture_output=True)


@pytest.mark.parametrize("source, out", [(UNSEALED, "new.jsonl"), (UNSEALED_JSONL, "new.blog")])
def test_convert_into_a_read_only_file_system_names_the_output(
        read_only_dir: tuple[Path, Path], source: Path, out: str) -> None:
    # the temporary file could not be made, and removing it again failed too: that second
    # error used to hide the first, naming the temporary
    _, ro = read_only_dir
    line = assert_error(run("convert", source, "-o", ro / out), 2, f"{ro / out}: ",
                        "Read-only file system")
    assert ".tmp" not in line


def test_seal_and_repair_on_a_read_only_file_system_name_the_log_and_change_nothing(
        read_only_dir: tuple[Path, Path]) -> None:
    src, ro = read_only_dir
    (src / "s.blog").write_bytes(UNSEALED.read_bytes())
    _torn(src)
    before = _files(src)
    assert_error(run("seal", ro / "s.blog"), 2, f"{ro / 's.blog'}: ", "Read-only file system")
    assert_error(run("repair", ro / "torn.blog"), 2, f"{ro / 'torn.blog'}: ",
                 "Read-only file system")
    assert _files(src) == before


def test_json_lines_on_standard_input_may_begin_with_a_comment_or_a_bom(tmp_path: Path) -> None:
    text = b"# exported by another tool\n" + UNSEALED_JSONL.read_bytes()
    r = run("verify", "-f", "json", "-", stdin=text)
    assert r.code == 0, r
    assert json.loads(r.out)["events"] == 245
    converted = run("convert", "-", "-o", "-", stdin=text)
    assert converted.code == 0 and converted.out.startswith("BURACOLG"), converted.err
    assert_error(run("verify", "-", stdin=b"\xef\xbb\xbf" + UNSEALED_JSONL.read_bytes()), 1,
                 "<stdin>, line 1", "byte order mark")


# -- JSON Lines: the first, end and signature lines ---------------------------------------------


def _unsealed_lines() -> list[bytes]:
    lines = UNSEALED_JSONL.read_bytes().split(b"\n")
    assert lines[0].startswith(b'{"log": "buraco-log"') and lines[-2].startswith(b'{"log": "end"')
    return lines


def _edited(tmp_path: Path, first: bytes | None = None, end: bytes | None = None,
            insert: bytes | None = None) -> Path:
    lines = _unsealed_lines()
    if first is not None:
        lines[0] = first
    if end is not None:
        lines[-2] = end
    if insert is not None:
        lines.insert(1, insert)
    path = tmp_path / "edited.jsonl"
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.mark.parametrize("first, words", [
    (b'{"log": "buraco-log", "version": true, "sealed": false}', "'version'"),
    (b'{"log": "buraco-log", "version": 2, "sealed": "no"}', "'sealed'"),
])
def test_a_first_line_of_the_wrong_types_is_refused_on_line_1(tmp_path: Path, first: bytes,
                                                              words: str) -> None:
    # "sealed": "no" was read as sealed; "version": true as version 1 (a wrong head digest)
    path = _edited(tmp_path, first=first)
    assert_error(run("verify", path), 1, f"{path}, line 1", words)


@pytest.mark.parametrize("end, words", [
    (b'{"log": "end", "events": 245.0}', "'events'"),
    (b'{"log": "end", "events": 245, "head": 5}', "'head'"),
    (b'{"log": "end", "events": 245, "head": "nothex"}', "'head'"),
])
def test_an_end_line_of_the_wrong_types_is_refused_on_its_line(tmp_path: Path, end: bytes,
                                                               words: str) -> None:
    path = _edited(tmp_path, end=end)
    line = assert_error(run("verify", path), 1, f"{path}, line 247", words)
    assert "changed after the fact" not in line


def test_an_end_lines_head_in_capitals_is_the_same_digest(tmp_path: Path) -> None:
    # hex is hex in any case: it was reported as events changed after the fact
    end = _unsealed_lines()[-2]
    head = json.loads(end)["head"]
    path = _edited(tmp_path, end=end.replace(head.encode(), head.upper().encode()))
    r = run("verify", "-f", "json", path)
    assert r.code == 0, r
    assert json.loads(r.out)["head"] == head


def test_a_signature_line_before_any_event_says_so(tmp_path: Path) -> None:
    sig = (b'{"log": "signature", "match_id": "m", "seq": 0, "head": "' + b"00" * 32
           + b'", "key_id": "k", "signature": "' + b"00" * 64 + b'"}')
    path = _edited(tmp_path, insert=sig)
    line = assert_error(run("verify", path), 1, f"{path}, line 2", "before the first event")
    assert "seq -1" not in line


def test_repair_of_a_json_lines_log_says_what_to_do_and_changes_nothing(tmp_path: Path) -> None:
    # it said 'not a buraco-log file (bad magic)' of a good JSON Lines log
    path = tmp_path / "match.jsonl"
    path.write_bytes(UNSEALED_JSONL.read_bytes())
    line = assert_error(run("repair", path), 2, f"{path}: ", "JSON Lines")
    assert "bad magic" not in line
    assert path.read_bytes() == UNSEALED_JSONL.read_bytes()


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_a_line_of_exactly_the_limit_reads_and_one_byte_more_is_refused(
        tmp_path: Path, ending: bytes) -> None:
    from buraco_log.jsonl import MAX_LINE

    def draw(size: int) -> bytes:
        head = b'{"t":"dr","seat":0,"card":"4c","seq":2,"note":"'
        return head + b"a" * (size - len(head) - 2) + b'"}'

    lines = [line for line in _lines() if not line.startswith(b'{"log": "end"')]
    lines[3] = draw(MAX_LINE)
    exact = tmp_path / "exact.jsonl"
    exact.write_bytes(ending.join(lines))
    r = run("verify", exact)
    assert r.code == 0, r  # the line end was counted against the limit
    lines[3] = draw(MAX_LINE + 1)
    over = tmp_path / "over.jsonl"
    over.write_bytes(ending.join(lines))
    assert_error(run("verify", over), 1, f"{over}, line 4", "longer than")


def test_verify_json_names_the_kind_and_offset_of_a_torn_tail(tmp_path: Path) -> None:
    # the error object held only a message (code "error"): a program had to parse it
    path = _torn(tmp_path)
    r = run("verify", "-f", "json", path)
    assert r.code == 1 and len(r.lines) == 1, r
    error = json.loads(r.out)["error"]
    assert error["kind"] == "torn" and error["code"] == "log.format", error
    assert error["offset"] == len(UNSEALED.read_bytes()) and error["seq"] == 245, error
    assert error["path"] == str(path)


def test_convert_overwrite_is_not_blocked_by_a_leftover_and_names_its_output(
        tmp_path: Path) -> None:
    # the temporary had a fixed name: one left by a killed run refused every later --overwrite
    src = tmp_path / "a.blog"
    src.write_bytes(UNSEALED.read_bytes())
    out = tmp_path / "a.jsonl"
    out.write_text("old\n")
    (tmp_path / ".a.jsonl.converting.jsonl").write_text("")
    r = run("convert", src, "-o", out, "--overwrite")
    assert r.code == 0, r
    assert out.read_bytes() == UNSEALED_JSONL.read_bytes()
    out.write_text("old\n")
    before = _files(tmp_path)
    line = assert_error(run("convert", src, "-o", out, "--overwrite", fsize=2000), 1,
                        f"error: {out}: ", "File too large")
    assert "converting" not in line
    assert _files(tmp_path) == before


def test_a_version_1_json_lines_start_with_a_key_id_is_one_line_not_a_traceback(
        tmp_path: Path) -> None:
    lines = (EXAMPLES / "format" / "v1.jsonl").read_bytes().split(b"\n")
    assert b'"version": 1' in lines[0] and lines[1].startswith(b'{"t":"ms"')
    lines[1] = lines[1][:-1] + b',"key_id":"abcd"}'
    path = tmp_path / "v1key.jsonl"
    path.write_bytes(b"\n".join(lines))
    for command in (["verify", path], ["convert", path, "-o", tmp_path / "out.blog"]):
        assert_error(run(*command), 1, f"{path}, line 2", "format version 1", "key_id")
    assert not (tmp_path / "out.blog").exists()
    r = run("audit", path)
    assert r.code == 1 and "Traceback" not in r.err + r.out and "ValueError" not in r.out, r


def test_repair_beside_a_dangling_link_named_like_its_backup_does_not_hang(
        tmp_path: Path) -> None:
    # LOG.bak a dangling link: exists() said free, O_EXCL said taken, forever (under the lock)
    path = _torn(tmp_path)
    bak = tmp_path / "torn.blog.bak"
    bak.symlink_to(tmp_path / "missing" / "x")
    r = run("repair", path, timeout=20)
    assert r.code == 0, r
    assert bak.is_symlink() and not (tmp_path / "missing").exists()
    assert (tmp_path / "torn.blog.bak.1").read_bytes() == bytes(range(1, 10))
    assert path.read_bytes() == UNSEALED.read_bytes()


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_seal_keeps_the_logs_owner_and_mode(tmp_path: Path) -> None:
    # sealed by root, the log became root's: its recorder could no longer append to it
    path = tmp_path / "match.blog"
    path.write_bytes(UNSEALED.read_bytes())
    os.chown(path, 65534, 65534)
    path.chmod(0o640)
    r = run("seal", path)
    assert r.code == 0, r
    st = path.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (65534, 65534, 0o640)


def test_a_line_without_an_event_type_says_so(tmp_path: Path) -> None:
    path = _with_line(tmp_path, 4, b'{"seat":0,"card":"4c","seq":2}')
    line = assert_error(run("verify", path), 1, f"{path}, line 4", "no 't'")
    assert "None" not in line  # it said "unknown event type None"


@pytest.mark.parametrize("last_byte", [None, b"\x01"], ids=["zeros", "a-byte-at-the-end"])
def test_a_sparse_100_gib_tail_is_classified_at_once(tmp_path: Path,
                                                     last_byte: bytes | None) -> None:
    # every zero of the hole was read: verify ran for minutes (the timeout kills it)
    path = tmp_path / "sparse.blog"
    path.write_bytes(UNSEALED.read_bytes())
    size = 100 << 30
    with open(path, "r+b") as f:
        f.truncate(size)
        if last_byte is not None:
            f.seek(size - 1)
            f.write(last_byte)
    if path.stat().st_blocks * 512 > 1 << 20:
        pytest.skip("this file system does not keep holes")
    r = run("verify", path, timeout=30)
    if last_byte is None:
        assert_error(r, 1, f"{path}, byte {len(UNSEALED.read_bytes())}", "zero-filled tail")
    else:
        # round 41: named as zeros with data after them (it was "checksum mismatch")
        assert_error(r, 1, f"{path}, byte {len(UNSEALED.read_bytes())}",
                     f"zero bytes (NUL) where the next record should start, and data again at "
                     f"byte {size - 1}:")


# -- a JSON Lines log is sealed when its end line carries the head and its first line does not
# -- say unsealed: verify, show, audit, seal agree


def _jsonl_forms(folder: Path) -> dict[str, Path]:
    lines = GOOD_JSONL.read_text().splitlines(keepends=True)
    assert lines[0].startswith('{"log": "buraco-log"') and lines[-1].startswith('{"log": "end"')
    forms = {"empty": "", "header only": lines[0], "no end line": "".join(lines[:-1]),
             "end line, header says unsealed": "".join(lines),
             "end line, no header": "".join(lines[1:])}
    out = {}
    for i, (name, text) in enumerate(forms.items()):
        out[name] = folder / f"form{i}.jsonl"
        out[name].write_text(text)
    return out


# the first line's "sealed": false is the binary form's flag: converted back, an unsealed log
SEALED_JSONL = {"empty": False, "header only": False, "no end line": False,
                "end line, header says unsealed": False, "end line, no header": True}


def test_verify_show_audit_and_seal_agree_on_whether_a_jsonl_log_is_sealed(
        tmp_path: Path) -> None:
    forms = _jsonl_forms(tmp_path)
    # one audit of the five: each log's verdict is its own (a start less for each)
    audited = run("audit", "-f", "json", *forms.values())
    statuses = {Path(r["path"]): r["integrity"]["status"] for r in json.loads(audited.out)}
    assert set(statuses) == set(forms.values()), audited
    for name, path in forms.items():
        want = SEALED_JSONL[name]
        verified = run("verify", "-f", "json", path)
        assert verified.code == 0 and json.loads(verified.out)["sealed"] is want, (name, verified)
        shown = run("show", path)
        log_line = next(x for x in shown.out.splitlines() if x.startswith("log "))
        assert (": sealed," in log_line) is want, (name, log_line)
        assert (statuses[path] == "sealed") is want, (name, statuses[path])
        before = digest(path)
        sealed = run("seal", path)
        if want:
            assert sealed.code == 0 and "already sealed" in sealed.out, (name, sealed)
        else:
            assert_error(sealed, 2, f"{path}: seal rewrites binary logs")
        assert digest(path) == before
