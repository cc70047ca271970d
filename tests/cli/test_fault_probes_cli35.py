"""Fault probes of the log commands, round 35: where `show` places a header it cannot read,
JSON Lines whose lines end in a carriage return alone, `show -f json` on a match that never
received an event, and house-rules files that never end."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "examples" / "format" / "v2.blog"
JSONL = ROOT / "examples" / "golden" / "classic.jsonl"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


def _one_error_line(done: subprocess.CompletedProcess[str], path: Path) -> str:
    assert done.returncode not in (0, None), done.stdout
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert str(path) in lines[0]
    return lines[0]


def _newer_version(tmp_path: Path) -> Path:
    """The golden log with a header naming event format 99, its header checksum made whole."""
    data = bytearray(BINARY.read_bytes())
    data[10:12] = (99).to_bytes(2, "little")
    data[16:20] = zlib.crc32(bytes(data[:16])).to_bytes(4, "little")
    path = tmp_path / "newer.blog"
    path.write_bytes(bytes(data))
    return path


def test_show_names_the_version_field_where_verify_does(tmp_path: Path) -> None:
    path = _newer_version(tmp_path)
    shown = _one_error_line(_cli("show", str(path)), path)
    verified = _one_error_line(_cli("verify", str(path)), path)
    assert "byte 10:" in shown and "event format version 99" in shown, shown
    assert shown == verified


def test_show_json_error_carries_the_offset_and_kind(tmp_path: Path) -> None:
    path = _newer_version(tmp_path)
    done = _cli("show", "-f", "json", str(path))
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert (error["offset"], error["kind"]) == (10, "version")


def test_show_still_names_byte_zero_for_a_file_that_is_no_log(tmp_path: Path) -> None:
    path = tmp_path / "notes.blog"
    path.write_bytes(b"these are my notes, not a log\n")
    line = _one_error_line(_cli("show", str(path)), path)
    assert "byte 0:" in line and "bad magic" in line


def test_jsonl_with_carriage_return_line_ends_is_named(tmp_path: Path) -> None:
    path = tmp_path / "old-mac.jsonl"
    path.write_bytes(JSONL.read_bytes().replace(b"\n", b"\r"))
    line = _one_error_line(_cli("verify", str(path)), path)
    assert "carriage return (CR) alone" in line and "line 1" in line, line


def test_a_bare_carriage_return_inside_one_line_is_named_by_its_byte(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    lines = JSONL.read_bytes().split(b"\n")
    # the third line's end is a CR alone: lines 1 and 2 are read, line 3 holds two objects
    path.write_bytes(b"\n".join([*lines[:2], lines[2] + b"\r" + lines[3], *lines[4:]]))
    line = _one_error_line(_cli("verify", str(path)), path)
    assert "line 3" in line and f"byte {len(lines[2])} of the line" in line, line


def test_carriage_return_line_ends_in_a_file_longer_than_a_line_may_be(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    body = JSONL.read_bytes().replace(b"\n", b"\r")
    path.write_bytes(body * (1 + (1024 * 1024) // len(body)))
    line = _one_error_line(_cli("verify", str(path)), path)
    assert "line longer than" in line and "carriage returns (CR) alone" in line, line


def test_crlf_line_ends_are_still_read() -> None:
    crlf = JSONL.read_bytes().replace(b"\n", b"\r\n")
    read = subprocess.run([sys.executable, "-m", "cli", "verify", "-"], cwd=ROOT, input=crlf,
                          capture_output=True, timeout=60)
    assert read.returncode == 0, read.stderr
    assert b"18 events" in read.stdout, read.stdout


def test_show_json_says_a_match_not_started(tmp_path: Path) -> None:
    empty = tmp_path / "empty.blog"
    empty.write_bytes(b"")
    done = _cli("show", "-f", "json", str(empty))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["not_started"] is True
    whole = _cli("show", "-f", "json", str(JSONL))
    assert whole.returncode == 0, whole.stderr
    assert json.loads(whole.stdout)["not_started"] is False


@pytest.mark.parametrize("kind", ["device", "fifo", "huge"])
@pytest.mark.parametrize("command", [["rules", "show"], ["simulate", "--rules"]])
def test_a_house_rules_file_that_never_ends_is_refused_at_once(
        tmp_path: Path, kind: str, command: list[str]) -> None:
    # /dev/zero never ends and a FIFO waits for a writer: either hung the command
    if kind == "device":
        path = tmp_path / "zero.toml"
        os.symlink("/dev/zero", path)
    elif kind == "fifo":
        path = tmp_path / "pipe.toml"
        os.mkfifo(path)
    else:
        path = tmp_path / "huge.toml"
        path.write_bytes(b"# a comment\n" * 100_000)
    extra = ["-o", str(tmp_path / "out")] if command[0] == "simulate" else []
    line = _one_error_line(_cli(*command, str(path), *extra), path)
    expected = {"device": "not a regular file (a device or socket)",
                "fifo": "not a regular file (a FIFO)", "huge": "larger than 1,048,576 bytes"}
    assert line.endswith(expected[kind]), line
    assert not (tmp_path / "out").exists()


def _waits_without_data(path: str) -> bool:
    """Is ``path`` a "regular" file whose non-blocking read has nothing yet (None)?"""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        while True:  # drain what the kernel holds now
            try:
                if f.read(1 << 16) is None:
                    return True
            except OSError:
                return False


@pytest.mark.parametrize("command", [
    ["rules", "show", "{}"],
    ["audit", str(BINARY), "--keys", "{}"],
    ["audit", str(BINARY), "--receipt", "{}"],
    ["keys", "new", "site", "--passphrase-file", "{}", "-d", "{out}"],
    ["verify", "{}"],  # a log: read blocking, it hung
    ["show", "{}"],
    ["audit", "{}"],
])
def test_a_kernel_file_that_would_wait_is_one_line(tmp_path: Path, command: list[str]) -> None:
    # /proc/kmsg is a "regular" file that, opened without blocking, reads nothing (None) until
    # the kernel logs: taken as empty bytes it was an internal error
    kmsg = "/proc/kmsg"
    if not _waits_without_data(kmsg):
        pytest.skip(f"{kmsg} cannot be opened here, or has data (needs root)")
    out = tmp_path / "keys"
    out.mkdir()
    args = [a.replace("{}", kmsg).replace("{out}", str(out)) for a in command]
    done = _cli(*args)
    if command[0] == "audit" and len(command) == 2:  # a finding about the file, on stdout
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        line = done.stdout
    else:
        line = _one_error_line(done, Path(kmsg))
    assert "not readable without waiting (a special file)" in line, line
    assert "internal error" not in line
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("config", ["/proc/kmsg", "/proc/self/mem"])
def test_a_config_file_that_cannot_be_read_is_named_not_the_log(config: str) -> None:
    # the read's error was reported against the log being audited
    if config == "/proc/kmsg" and not _waits_without_data(config):
        pytest.skip(f"{config} cannot be opened here, or has data (needs root)")
    done = subprocess.run([sys.executable, "-m", "cli", "audit", str(BINARY)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          env={**os.environ, "BURACO_LOG_CONFIG": config})
    line = _one_error_line(done, Path(config))
    assert str(BINARY) not in line and "config file" in line, line


def test_a_seat_the_match_lacks_names_no_seq() -> None:
    # "seq 17: no seat 7" sent the reader to the last event, as if seat 7 had been there before
    line = _one_error_line(_cli("replay", str(JSONL), "--seat", "7"), JSONL)
    assert line.endswith(f"{JSONL}: no seat 7 in a 2-player match"), line


@pytest.mark.parametrize(("name", "pack", "what"), [
    ("v2.blog.gz", "gzip", "gzip-compressed"),
    ("v2.blog.xz", "lzma", "xz-compressed"),
    ("v2.blog.bz2", "bz2", "bzip2-compressed"),
])
def test_a_compressed_binary_log_is_named_as_such(tmp_path: Path, name: str, pack: str,
                                                  what: str) -> None:
    import importlib
    path = tmp_path / name
    path.write_bytes(importlib.import_module(pack).compress(BINARY.read_bytes()))
    line = _one_error_line(_cli("verify", str(path)), path)
    assert line.endswith(f"byte 0: not a buraco-log file (bad magic); it is {what}: "
                         "decompress it first [log.header]"), line


def test_compressed_and_utf16_json_lines_are_named(tmp_path: Path) -> None:
    import gzip
    text = JSONL.read_text("utf-8")
    packed = tmp_path / "packed.jsonl"
    packed.write_bytes(gzip.compress(text.encode()))
    line = _one_error_line(_cli("verify", str(packed)), packed)
    assert line.endswith("byte 0: not a JSON Lines log: the file is gzip-compressed: "
                         "decompress it first [log.header]"), line
    for codec in ("utf-16", "utf-16-le", "utf-16-be"):
        wide = tmp_path / f"{codec}.jsonl"
        wide.write_bytes(text.encode(codec))
        line = _one_error_line(_cli("verify", str(wide)), wide)
        assert "the file is UTF-16 text: JSON Lines are UTF-8" in line, (codec, line)


def test_a_directory_of_compressed_logs_reports_them_instead_of_none_found(
        tmp_path: Path) -> None:
    import gzip
    folder = tmp_path / "year"
    folder.mkdir()
    (folder / "a.blog.gz").write_bytes(gzip.compress(BINARY.read_bytes()))
    (folder / "b.jsonl.gz").write_bytes(gzip.compress(JSONL.read_bytes()))
    (folder / "notes.txt.gz").write_bytes(gzip.compress(b"not a log"))
    done = _cli("audit", str(folder), "--quiet")
    # the worst entry's status (each is no log), not "no logs found"
    assert done.returncode == 2 and "no logs found" not in done.stderr, done.stderr
    assert done.stdout.count("gzip-compressed: decompress it first") == 2, done.stdout
    assert "notes.txt.gz" not in done.stdout


def test_a_log_named_twice_is_audited_once(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    copy = folder / "classic.jsonl"
    copy.write_bytes(JSONL.read_bytes())
    # the same file by name, by its directory and by a relative spelling: one log
    done = subprocess.run(
        [sys.executable, "-m", "cli", "audit", str(copy), str(folder), "logs/./classic.jsonl",
         "--quiet"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("audited 1 log: 1 clean"), done.stdout


def test_standard_input_named_twice_is_one_log() -> None:
    done = subprocess.run([sys.executable, "-m", "cli", "audit", "-", "-", "--quiet"], cwd=ROOT,
                          input=JSONL.read_bytes(), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip().splitlines()[-1].startswith("audited 1 log:"), done.stdout


def test_a_log_of_one_event_says_one_event(tmp_path: Path) -> None:
    start = next(line for line in JSONL.read_text("utf-8").splitlines() if '"t":"ms"' in line)
    one = tmp_path / "one.jsonl"
    one.write_text(start + "\n", "utf-8")
    verified = _cli("verify", str(one))
    assert verified.stdout.startswith(f"{one}: 1 event in 1 record,"), verified.stdout
    audited = _cli("audit", str(one))
    assert audited.stdout.splitlines()[0].endswith("  1 event"), audited.stdout
    assert "legality    1 event legal" in audited.stdout
    binary = tmp_path / "one.blog"
    converted = _cli("convert", str(one), "-o", str(binary))
    assert converted.stdout.startswith(f"{binary}: 1 event, head "), converted.stdout
    sealed = _cli("seal", str(binary))
    assert ", 1 event, head " in sealed.stdout, sealed.stdout
    compared = _cli("diff", str(one), str(binary))
    assert compared.stdout.splitlines()[0].split(", head")[0].endswith("1 event"), compared.stdout


def test_step_keys_from_a_stream_without_line_ends_stop_at_once() -> None:
    # readline() of /dev/zero never returns: memory grew until the machine ran out
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run([sys.executable, "-m", "cli", "replay", str(JSONL), "--step"],
                              cwd=ROOT, stdin=zero, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].endswith(
        "--step: an input line longer than 4096 characters is no key (is standard input a "
        "file of keys?)"), done.stderr


def test_step_echoes_an_unknown_key_clipped_and_without_terminal_controls() -> None:
    keys = "zz\x1b[31m" + "x" * 1000 + "\nq\n"
    done = subprocess.run([sys.executable, "-m", "cli", "replay", str(JSONL), "--step"],
                          cwd=ROOT, input=keys, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr
    echoed = next(line for line in done.stderr.split("> ") if line.startswith("unknown key"))
    assert echoed.startswith("unknown key 'zz\\x1b[31m" + "x" * 33 + "'"), echoed


def test_a_passphrase_prompt_fed_a_stream_without_line_ends_stops(tmp_path: Path) -> None:
    # with no terminal the prompt read standard input a line at a time, unbounded: /dev/zero
    # grew memory without end
    with open("/dev/zero", "rb") as zero:
        done = subprocess.run(
            [sys.executable, "-m", "cli", "keys", "new", "site", "-d", str(tmp_path / "k"),
             "--passphrase"], cwd=ROOT, stdin=zero, capture_output=True, text=True, timeout=60,
            start_new_session=True)  # no controlling terminal: the prompt reads stdin
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "buraco-log: error: --passphrase: a line of standard input longer than 64 KiB is no "
        "passphrase"), done.stderr
    assert not (tmp_path / "k").exists()
