"""Fault probes of the log, round 51.

- A JSON Lines log converted from an unsealed binary log (its first line says
  `"sealed": false`; its end line carries the head digest, as the converter writes for every
  log) was "sealed" to `verify`, `verify -f json`, `show` and `audit`, and `seal` said "already
  sealed", while the binary form of the same events was unsealed. Both forms now say the same.
- A value that is no card in a card-bearing field of a JSON Lines event was `[log.unknown]`,
  in msgspec's words where it was not text ("Expected `int | null`, got `float`"; "Kh" where a
  list goes: "Expected `array`, got `int`"). It is `[log.jsonl]`, naming the field, the
  position in it and what a card is.
- `Writer.append` of a hand-built event with a list where the event holds a tuple raised
  TypeError inside the rules engine (and, unvalidated, was written); a str seq was "appended
  event has seq 2, expected 2"; a forked child's copy of a batched writer took appends that its
  close() then dropped without a word; two threads appending to one writer wrote at once.
- `seal m.blog` (a relative name) whose directory fsync failed ended in an internal error
  (TypeError); `repair` whose cut or its fsync failed said "No space left on device", naming no
  file; a conversion whose temporary's fsync failed told the user to "reopen the log".
"""

from __future__ import annotations

import copy
import errno
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from buraco_log import events as ev
from buraco_log import jsonl, log
from buraco_log.errors import LogFormatError
from buraco_log.jsonl import CARD_SHAPES, JsonlReader
from tests.log.cli_run import EXAMPLES, REPO, UNSEALED, UNSEALED_JSONL, run
from tests.log.samples import match_events, sample_events

SEALED = EXAMPLES / "format" / "v2.blog"
SEALED_JSONL = EXAMPLES / "format" / "v2.jsonl"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- 1. sealed: one answer for both forms of a log


def test_both_forms_of_one_log_say_the_same_of_its_seal() -> None:
    # -f json, show, audit and seal of such a log: test_fault_probes_log.py's SEALED_JSONL
    r = run("verify", UNSEALED, UNSEALED_JSONL, SEALED, SEALED_JSONL)
    assert r.code == 0, r
    lines = r.out.splitlines()
    assert [", unsealed (" in x for x in lines[:4]] == [True, True, False, False], r
    assert [", sealed, " in x for x in lines[:4]] == [False, False, True, True], r
    assert lines[1] == (f"{UNSEALED_JSONL}: 245 events in 245 records, unsealed (its first line "
                        'says "sealed": false: the binary form has no integrity chain; convert '
                        "it to binary and `buraco-log seal` it), format version 2, head "
                        f"{log.verify(UNSEALED).head}"), r


def test_conversion_keeps_the_seal_both_ways(tmp_path: Path) -> None:
    for source, sealed in ((UNSEALED_JSONL, False), (SEALED_JSONL, True)):
        binary = tmp_path / f"{source.stem}.blog"
        jsonl.convert(source, binary, "binary")
        assert log.verify(binary).sealed is sealed
        back = tmp_path / f"{source.stem}.jsonl"
        jsonl.convert(binary, back, "jsonl")
        reader = JsonlReader(back)
        for _ in reader:
            pass
        assert reader.sealed_by_end is sealed and back.read_bytes() == source.read_bytes()
        assert (reader.unsealed_because is None) is sealed


def test_a_first_line_saying_sealed_with_no_end_line_is_unsealed(tmp_path: Path) -> None:
    lines = SEALED_JSONL.read_text().splitlines(keepends=True)
    assert lines[-1].startswith('{"log": "end"')
    path = tmp_path / "live.jsonl"
    path.write_text("".join(lines[:-1]))
    reader = JsonlReader(path)
    for _ in reader:
        pass
    assert not reader.sealed_by_end
    assert reader.unsealed_because == "no end line with the head digest"


# -- 2. a card-bearing field holding what is no card


_CARD = "7h"
MINIMAL: dict[str, dict[str, Any]] = {
    "hs": {"hand": 0, "dealer": 0, "hands": [[_CARD]], "mortos": [[_CARD]], "stock": [_CARD],
           "upcard": _CARD},
    "dr": {"seat": 0, "card": _CARD}, "rj": {"seat": 0, "card": _CARD},
    "pt": {"seat": 0, "count": 1, "top": _CARD}, "ml": {"seat": 0, "cards": [_CARD]},
    "lo": {"seat": 0, "meld": 0, "cards": [_CARD]}, "rt": {"seat": 0, "cards": [_CARD]},
    "dc": {"seat": 0, "card": _CARD},
}
"""One event of each kind that holds cards, every card field holding one card."""


def test_the_walk_covers_every_card_field_of_every_event_kind() -> None:
    every = {(tag, name) for tag, names in ev.CARD_FIELDS.items() for name in names}
    assert set(CARD_SHAPES) == every
    assert {(tag, name) for tag, obj in MINIMAL.items() for name in obj
            if name not in ("seat", "count", "meld", "hand", "dealer")} == every
    assert CARD_SHAPES["hs", "hands"] == (2, False) and CARD_SHAPES["hs", "upcard"] == (0, True)
    assert CARD_SHAPES["ml", "cards"] == (1, False) and CARD_SHAPES["pt", "top"] == (0, True)


def _read_one(folder: Path, tag: str, obj: dict[str, Any]) -> ev.AnyEvent | LogFormatError:
    path = folder / "hand.jsonl"
    path.write_text('{"log": "buraco-log", "version": 2, "sealed": false}\n'
                    + json.dumps({"t": tag, **obj, "seq": 0}, ensure_ascii=False) + "\n")
    try:
        return next(iter(JsonlReader(path)))
    except LogFormatError as exc:
        return exc


def _put(value: Any, at: list[int], new: Any) -> Any:
    """``value`` with the element at index path ``at`` replaced by ``new``."""
    if not at:
        return new
    out = list(value)
    out[at[0]] = _put(out[at[0]], at[1:], new)
    return out


NOT_CARDS = [("Zz", "'Zz' is not a card: "), (5.5, "5.5 is not a card (a card is text"),
             (True, "true is not a card"), ({"r": 7}, '{"r": 7} is not a card'),
             ([_CARD], '["7h"] is not a card')]


@pytest.mark.parametrize("tag, name", sorted(CARD_SHAPES))
def test_a_value_that_is_no_card_is_named_by_field_and_position(
        tmp_path: Path, tag: str, name: str) -> None:
    depth, nullable = CARD_SHAPES[tag, name]
    card_at = [0] * depth
    where = f"field {name!r}" + (f" at {''.join(f'[{i}]' for i in card_at)}" if depth else "")
    for bad, says in NOT_CARDS + ([] if nullable else [(None, "null is not a card")]):
        obj = copy.deepcopy(MINIMAL[tag])
        obj[name] = _put(obj[name], card_at, bad)
        got = _read_one(tmp_path, tag, obj)
        assert isinstance(got, LogFormatError), (bad, got)
        assert (got.kind, got.line, got.seq) == ("jsonl", 2, 0), (bad, got)
        assert got.message.startswith(f"{where}: {says}"), (bad, got.message)
    for level in range(depth):  # a card where a list of cards goes
        obj = copy.deepcopy(MINIMAL[tag])
        obj[name] = _put(obj[name], [0] * level, _CARD)
        got = _read_one(tmp_path, tag, obj)
        inner = "a list of lists of cards" if depth - level > 1 else "a list of cards"
        at = f" at {''.join('[0]' for _ in range(level))}" if level else ""
        assert isinstance(got, LogFormatError) and got.kind == "jsonl", got
        assert got.message == f"field {name!r}{at} must be {inner}, not \"7h\"", got.message
    # what a card may be written as: text in any spelling, or its integer code (kept as it
    # is, lossless: the rules engine refuses a code that is no card)
    for spelled, code in (("10h", 42), ("7♥", 39), (99, 99)):
        obj = copy.deepcopy(MINIMAL[tag])
        obj[name] = _put(obj[name], card_at, spelled)
        event = _read_one(tmp_path, tag, obj)
        assert not isinstance(event, LogFormatError), event
        value = getattr(event, name)
        for i in card_at:
            value = value[i]
        assert value == code


# -- 3. the Python API: refusals before anything is written


def _started(path: Path, validate: bool) -> tuple[log.Writer, tuple[ev.AnyEvent, ...]]:
    match = match_events()
    w = log.Writer(path, validate=validate)
    w.append(match[0])
    w.append(match[1])
    return w, match


@pytest.mark.parametrize("validate", [True, False], ids=["validated", "unvalidated"])
def test_a_hand_built_event_of_wrong_types_is_refused_naming_its_kind_and_field(
        tmp_path: Path, validate: bool) -> None:
    path = tmp_path / "m.blog"
    w, match = _started(path, validate)
    nxt = match[2]
    assert isinstance(nxt, ev.CardDrawn)
    card = nxt.card
    hands = (list(range(1, 12)), list(range(17, 28)))
    cases: list[tuple[Any, list[str]]] = [
        (ev.CardDrawn("0", card, seq=2), ["CardDrawn", "field 'seat'"]),  # type: ignore[arg-type]
        (ev.CardDrawn(0, None, seq=2), ["CardDrawn", "field 'card'"]),  # type: ignore[arg-type]
        (ev.MeldLaid(0, [card], seq=2), ["MeldLaid", "field 'cards' holds a list"]),  # type: ignore[arg-type]
        (ev.MeldLaid(0, ("7h",), seq=2), ["MeldLaid", "field 'cards'"]),  # type: ignore[arg-type]
        (ev.HandStarted(1, 0, tuple(hands), seq=2),  # type: ignore[arg-type]
         ["HandStarted", "field 'hands', at [0] holds a list"]),
        (ev.CardDrawn(0, card, seq="2"), ["CardDrawn", "whose 'seq' is '2'"]),  # type: ignore[arg-type]
        ({"t": "dr", "seat": 0, "card": card, "seq": 2}, ["not a dict"]),
    ]
    before = path.read_bytes()
    for event, says in cases:
        with pytest.raises(LogFormatError) as caught:
            w.append(event)
        assert all(s in caught.value.message for s in says), (says, caught.value.message)
        assert caught.value.kind == "validate" and caught.value.path == str(path)
        assert path.read_bytes() == before
        assert log.verify(path).events == 2
    assert w.append(nxt) == 2  # the writer goes on
    w.close()
    with pytest.raises(LogFormatError) as closed:
        w.append(match[3])
    assert closed.value.kind == "closed" and "closed" in closed.value.message
    assert log.read_events(path) == list(match[:3])


@pytest.mark.parametrize("batched", [False, True], ids=["durable", "batched"])
def test_a_forked_childs_copy_of_a_writer_refuses_appends(tmp_path: Path, batched: bool) -> None:
    path = tmp_path / "m.blog"
    events = sample_events(4)
    w = log.Writer(path, validate=False, batched=batched)
    w.append(events[0])
    w.flush()
    before = path.read_bytes()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        try:
            w.append(events[1])
            said = "accepted"
            w.close()
            said += ", closed"
        except LogFormatError as exc:
            said = f"refused {exc.kind}: {exc.message}"
        except BaseException as exc:  # said to the parent
            said = f"raised {type(exc).__name__}"
        os.write(write, said.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        said = f.read().decode()
    os.waitpid(pid, 0)
    assert said.startswith("refused closed: ") and "forked child" in said, said
    assert path.read_bytes() == before
    w.append(events[1])  # the parent's writer goes on
    w.close()
    assert log.read_events(path) == events[:2]


def test_a_second_thread_appending_while_one_is_writing_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.blog"
    events = sample_events(4)
    w = log.Writer(path, validate=False)
    w.append(events[0])
    inside, go_on = threading.Event(), threading.Event()
    real_fsync = os.fsync
    first = threading.current_thread()

    def fsync(fd: int) -> None:
        if threading.current_thread() is not first:  # the other thread waits inside its write
            inside.set()
            assert go_on.wait(10)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    got: list[object] = []
    other = threading.Thread(target=lambda: got.append(w.append(events[1])))
    other.start()
    assert inside.wait(10)
    before = path.read_bytes()  # its record written, not yet synced
    for call in (lambda: w.append(events[2]), w.flush, w.close):
        with pytest.raises(LogFormatError) as caught:
            call()
        assert caught.value.kind == "locked" and "another thread" in caught.value.message
        assert path.read_bytes() == before
    go_on.set()
    other.join(10)
    assert got == [1]
    w.append(events[2])
    w.close()
    assert log.read_events(path) == events[:3]


# -- 4. a full disk or a failing disk at each write and fsync


def _iofail(call: str, k: int, code: str, *args: object, cwd: Path) -> tuple[int, list[str], int]:
    """Exit status, error lines and the calls of ``call`` made, of ``args`` run with the k-th
    such call failing with ``code`` (tests/log/iofail.py)."""
    p = subprocess.run([sys.executable, "-m", "tests.log.iofail", call, str(k), code, "cli",
                        *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd,
                       env=dict(os.environ, COLUMNS="200", PYTHONPATH=str(REPO)))
    lines = p.stderr.splitlines()
    calls = int(lines.pop()[len("calls "):])
    return p.returncode, lines, calls


def _names(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def _check_cli(command: str, call: str, k: int, code: str, folder: Path) -> int:
    """Run ``command`` with the k-th ``call`` failing; check what is left. Returns the calls
    made (k at or past it: the run did not fail)."""
    for p in folder.iterdir():
        p.unlink()
    if command == "repair":
        src = folder / "m.blog"
        src.write_bytes(SEALED.read_bytes()[:3600])  # a torn tail of 61 bytes
        args: list[object] = ["repair", "m.blog"]
    elif command == "seal":
        src = folder / "m.blog"
        src.write_bytes(UNSEALED.read_bytes())
        args = ["seal", "m.blog"]
    else:
        src = folder / ("m.blog" if command == "to-jsonl" else "m.jsonl")
        src.write_bytes((UNSEALED if command == "to-jsonl" else UNSEALED_JSONL).read_bytes())
        out = "out.jsonl" if command == "to-jsonl" else "out.blog"
        args = ["convert", src.name, "-o", out]
        if command == "over-binary":  # --overwrite: the old file stays unless replaced whole
            (folder / out).write_text("old\n")
            args.append("--overwrite")
    original = src.read_bytes()
    status, lines, calls = _iofail(call, k, code, *args, cwd=folder)
    if k >= calls:
        assert status == 0, (command, call, k, lines)
        return calls
    where = (command, call, k, code, lines)
    assert status == 1 and len(lines) == 1, where
    line = lines[0]
    assert line.startswith("buraco-log: error: ") and os.strerror(getattr(errno, code)) in line
    assert ".tmp" not in line and "reopen" not in line, where
    left = _names(folder)
    if command in ("to-jsonl", "to-binary", "over-binary"):
        assert line.startswith(f"buraco-log: error: {out}: "), where
        assert "creating the log" not in line and "Writer" not in line, where  # the temporary's
        assert src.read_bytes() == original
        if "written, but its directory" in line:  # in place, whole
            assert left == {src.name, out}, where
            written = folder / out
            assert written.read_bytes() == (UNSEALED_JSONL if out.endswith(".jsonl")
                                            else UNSEALED).read_bytes(), where
        elif command == "over-binary":
            assert left == {src.name, out} and (folder / out).read_text() == "old\n", where
        else:
            assert left == {src.name}, where
    elif command == "seal":
        assert line.startswith("buraco-log: error: m.blog: ") and left == {"m.blog"}, where
        info = log.verify(src)
        assert info.torn is None and info.head == log.verify(UNSEALED).head
        if "sealed, but its directory" not in line:
            assert src.read_bytes() == original, where
    else:
        assert line.startswith("buraco-log: error: m.blog: "), where
        if "nothing was cut" in line:
            assert src.read_bytes() == original and left == {"m.blog"}, where
        else:  # cut: the bytes cut kept beside it, the log whole
            assert left == {"m.blog", "m.blog.bak"}, where
            assert src.read_bytes() + (folder / "m.blog.bak").read_bytes() == original
            assert log.verify(src).torn is None
    return calls


def _check_writer(call: str, k: int, code: str, folder: Path, n: int = 6) -> int:
    for p in folder.iterdir():
        p.unlink()
    path = folder / "m.blog"
    p = subprocess.run([sys.executable, "-m", "tests.log.iofail", call, str(k), code, "writer",
                        path, str(n)], capture_output=True, text=True, timeout=120, cwd=folder,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    lines = p.stderr.splitlines()
    calls = int(lines.pop()[len("calls "):])
    acked = [int(x.split()[1]) for x in p.stdout.splitlines()]
    events = sample_events(n)
    assert acked == list(range(len(acked)))
    where = (call, k, code, lines, acked)
    if k >= calls:
        assert p.returncode == 0 and len(acked) == n, where
        return calls
    assert p.returncode == 1 and len(lines) == 1 and lines[0].startswith(f"{path}"), where
    assert os.strerror(getattr(errno, code)) in lines[0], where
    assert _names(folder) <= {"m.blog"}, where  # no temporary left
    if path.exists():  # every acknowledged event is there, and nothing torn after them
        info = log.verify(path)
        assert info.torn is None and info.events >= len(acked), where
        assert log.read_events(path) == events[:info.events]
    else:  # it said only "m.blog: No space left on device"
        assert acked == [] and "creating the log failed: " in lines[0], where
    return calls


@pytest.mark.parametrize("command, call, k, code", [
    ("seal", "fsync", 2, "EDQUOT"),      # its directory's fsync: an internal TypeError
    ("repair", "write", 2, "ENOSPC"),    # the cut itself: no file named
])  # the cut's fsync ("No space left on device", its .bak unexplained): the slow loop
def test_a_failed_write_or_fsync_is_one_line_naming_the_file_and_nothing_half_written(
        tmp_path: Path, command: str, call: str, k: int, code: str) -> None:
    assert _check_cli(command, call, k, code, tmp_path) > k


@pytest.mark.slow
@pytest.mark.parametrize("code", ["ENOSPC", "EDQUOT", "EIO"])
@pytest.mark.parametrize("call", ["write", "fsync"])
@pytest.mark.parametrize("command", ["to-jsonl", "to-binary", "over-binary", "seal", "repair",
                                     "writer"])
def test_every_write_and_fsync_of_the_log_commands_and_the_writer_failing(
        tmp_path: Path, command: str, call: str, code: str) -> None:
    k = 0
    while True:
        calls = (_check_writer(call, k, code, tmp_path) if command == "writer"
                 else _check_cli(command, call, k, code, tmp_path))
        if k >= calls:
            break
        k += 1
    assert k >= 2  # the loop reached past the first calls
