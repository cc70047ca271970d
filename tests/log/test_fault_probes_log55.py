"""The format promise, checked by an outsider: ``tests/log/docreader.py`` reads logs from the
documentation alone (schema/LOG_FORMAT.md, docs/log-format.md, the JSON Schema), importing
nothing of buraco_log. Every example, golden and simulated log, and damaged copies of them
(a byte flipped in each region, a torn tail, a chain break), must read the same with it and
with buraco_log's reader: the same events, and damage at the same byte and seq."""

from __future__ import annotations

import ast
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import jsonl, log
from buraco_log.errors import LogFormatError
from buraco_log.events import Player
from buraco_log.rules import Bonuses, CardPoints, Rules, preset
from buraco_log.simulate import simulate_match
from tests.log import docreader as doc
from tests.log.make_format_golden import golden_signer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [pytest.param(p, marks=[pytest.mark.slow] if "sim" in p.parts else [])
            for p in [*sorted((ROOT / "examples").rglob("*.blog")),
                      *sorted((ROOT / "examples").rglob("*.jsonl"))]]
FORMAT = ROOT / "examples" / "format"


def _plain(events: list[Any]) -> list[Any]:
    return [msgspec.msgpack.decode(msgspec.msgpack.encode(e)) for e in events]


def theirs(path: Path) -> tuple[list[Any] | None, tuple[str, int | None, int | None] | None]:
    """buraco_log's reading: its events, and where it stops (kind, byte, seq)."""
    try:
        with log.Reader(path, allow_torn=True) as reader:
            events = list(reader)
            torn = reader.info.torn
            if torn is not None:
                return _plain(events), ("torn", torn.offset, reader.torn_seq)
            return _plain(events), None
    except LogFormatError as exc:
        return None, (exc.kind, exc.offset, exc.seq)


def ours(data: bytes) -> tuple[list[Any], tuple[str, int | None, int | None] | None]:
    got = doc.read_binary(data)
    problem = got.problem
    return got.events, (problem.kind, problem.offset, problem.seq) if problem else None


def agree(tmp: Path, data: bytes) -> tuple[str, int | None, int | None] | None:
    tmp.write_bytes(data)
    events, where = theirs(tmp)
    mine, mine_where = ours(data)
    assert mine_where == where, f"doc reader: {mine_where}, buraco_log: {where}"
    if events is not None:
        assert mine == events
    return where


def test_the_doc_reader_imports_nothing_of_buraco_log() -> None:
    tree = ast.parse(Path(doc.__file__).read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imported and not [m for m in imported if m.startswith(("buraco_log", "tests"))]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_every_example_log_reads_the_same_from_the_doc(path: Path) -> None:
    if path.suffix == ".blog":
        got = doc.read_binary(path.read_bytes())
        assert got.problem is None
        assert got.events == theirs(path)[0]
        info = log.verify(path)
        assert (got.head, got.sealed, got.version, len(got.signatures)) == (
            info.head, info.sealed, info.version, info.signatures)
    else:
        got = doc.read_jsonl(path.read_text())
        assert got.problem is None  # its end line's head, if any, is the one computed
        assert got.events == _plain(jsonl.read_jsonl(path))
        twin = path.with_suffix(".blog")
        if twin.exists():  # the same log in both forms: one head digest
            assert got.head == log.verify(twin).head


def _region_flips(data: bytes) -> dict[str, int]:
    """A byte in each region of the file: its header, a record header's fields, a chain
    field, a payload, a signature record."""
    recs = doc.records(data)
    mid = recs[len(recs) // 2]
    events = [r for r in recs if r[3]]
    flips = {"magic": 3, "layout": 8, "version": 10, "flags": 12, "header crc": 17,
             "length": mid[0] + 1, "count": mid[0] + 4, "first_seq": mid[0] + 9,
             "payload crc": mid[0] + mid[1] - 7, "record crc": mid[0] + mid[1] - 2,
             "payload": mid[0] + mid[1] + mid[2] // 2,
             "last payload": events[-1][0] + events[-1][1] + events[-1][2] - 1}
    if mid[1] == 56:
        flips["chain"] = mid[0] + 30
    sigs = [r for r in recs if not r[3]]
    if sigs:
        flips["signature header"] = sigs[1][0] + 2
        flips["signature payload"] = sigs[1][0] + sigs[1][1] + 20
    return flips


LOGS = ["v2.blog", "v2-unsealed.blog", "v1.blog", "v1-unsealed.blog"]
SOME = [pytest.param(n, marks=[] if n.startswith("v2") else [pytest.mark.slow]) for n in LOGS]


@pytest.mark.parametrize("name", SOME)
def test_a_byte_flipped_in_each_region_is_placed_alike(tmp_path: Path, name: str) -> None:
    data = (FORMAT / name).read_bytes()
    for region, at in _region_flips(data).items():
        damaged = bytearray(data)
        damaged[at] ^= 0x10
        assert agree(tmp_path / "d.blog", bytes(damaged)) is not None, region


@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n == "v2-unsealed.blog" else
                                                [pytest.mark.slow]) for n in LOGS])
def test_torn_tails_and_zeroed_tails_are_placed_alike(tmp_path: Path, name: str) -> None:
    data = (FORMAT / name).read_bytes()
    recs = doc.records(data)
    cuts = {r[0] + k for r in recs[-3:] for k in (0, 5, r[1], r[1] + r[2] // 2)} | {7, 20}
    for cut in sorted(cuts):
        # a cut at a record's start leaves a whole, shorter log
        whole = cut in {r[0] for r in recs} | {20}
        assert (agree(tmp_path / "c.blog", data[:cut]) is None) == whole, cut
        assert agree(tmp_path / "z.blog", data[:cut] + bytes(len(data) - cut)) is not None


def test_a_signature_records_lost_sectors_name_no_event_seq(tmp_path: Path) -> None:
    """A signed log's signature record, its sectors lost in a crash, is a torn tail that holds
    no seq, as when it is cut short: not the next event's."""
    data = (FORMAT / "v2.blog").read_bytes()
    sig = next(r for r in doc.records(data) if not r[3])
    start = sig[0] + sig[1]
    for damaged in (data[:start], data[:start] + bytes(len(data) - start)):
        where = agree(tmp_path / "s.blog", damaged)
        assert where == ("torn", sig[0], None)


@pytest.mark.parametrize("name", ["v2.blog", "v1.blog"])
def test_a_chain_break_and_moved_records_are_placed_alike(tmp_path: Path, name: str) -> None:
    data = (FORMAT / name).read_bytes()
    recs = [r for r in doc.records(data) if r[3]]
    off, hlen, _, _ = next(r for r in recs[len(recs) // 2:]
                                if b"\xa2dr" in data[r[0] + r[1]:r[0] + r[1] + r[2]])
    edited = bytearray(data)
    seat = edited.index(b"\xa2dr", off + hlen) + 3  # a draw's seat: 0 <-> 1
    edited[seat] ^= 1
    doc.reframe(edited, off)  # CRCs recomputed: only the chain can tell
    assert agree(tmp_path / "e.blog", bytes(edited))[0] == "chain"  # type: ignore[index]
    a, b = recs[2], recs[3]
    first, second = data[a[0]:a[0] + a[1] + a[2]], data[b[0]:b[0] + b[1] + b[2]]
    swapped = data[:a[0]] + second + first + data[b[0] + b[1] + b[2]:]
    assert agree(tmp_path / "w.blog", swapped)[0] == "seq"  # type: ignore[index]
    dropped = data[:a[0]] + data[a[0] + a[1] + a[2]:]
    assert agree(tmp_path / "x.blog", dropped) is not None


def test_the_jsonl_head_is_computed_from_the_doc(tmp_path: Path) -> None:
    """A JSON Lines log's head digest is over each event's MessagePack bytes: the doc's field
    order and defaults give it, a version 1 log's included."""
    for name in ("v1.jsonl", "v2-unsealed.jsonl"):
        got = doc.read_jsonl((FORMAT / name).read_text())
        assert got.head == log.verify(FORMAT / name.replace(".jsonl", ".blog")).head


def _signed(path: Path, sealed: bool) -> Path:
    """A signed log of another framing than the golden one: unsealed (signature records
    without the chain field) or sealed, each append signed, then a batch of several records."""
    match = simulate_match(preset("thirteen-quick"), 2, seed="doc55")
    signer = golden_signer(2)
    match[0] = msgspec.structs.replace(match[0], key_id=signer.key_id)
    with log.Writer(path, signer=signer, sealed=sealed) as w:
        for event in match[:6]:
            w.append(event)
    with log.Writer(path, batched=True, batch_events=20, signer=signer, sign_at="end") as w:
        w.append_many(match[6:])
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", [*LOGS, "signed-unsealed", "signed-sealed"])
def test_every_byte_flipped_cut_or_zeroed_is_placed_alike(tmp_path: Path, name: str) -> None:
    if name.startswith("signed"):
        data = _signed(tmp_path / "s.blog", name.endswith("-sealed")).read_bytes()
    else:
        data = (FORMAT / name).read_bytes()
    step = max(1, len(data) // 500)
    for at in range(0, len(data), step):
        flipped = bytearray(data)
        flipped[at] ^= 0x01
        agree(tmp_path / "f.blog", bytes(flipped))
        agree(tmp_path / "c.blog", data[:at])
        agree(tmp_path / "z.blog", data[:at] + bytes(len(data) - at))


PRESETS = ["classic", "biriba", "bossa-nova", "thirteen", "burraco", "mega", "burako",
           "thirteen-quick"]


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_simulated_reads_the_same_from_the_doc(tmp_path: Path, preset: str) -> None:
    subprocess.run([sys.executable, "-m", "cli", "simulate", "--rules", preset, "--matches", "2",
                    "--seed", "doc55", "-o", str(tmp_path / "sim"), "-j", "1", "-f", "json"],
                   check=True, capture_output=True, cwd=ROOT)
    logs = sorted((tmp_path / "sim").glob("*.blog"))
    assert logs
    for path in logs:
        data = path.read_bytes()
        got = doc.read_binary(data)
        assert got.problem is None and got.events == theirs(path)[0]
        assert got.head == log.verify(path).head
        out = tmp_path / (path.stem + ".jsonl")
        jsonl.binary_to_jsonl(path, out)
        converted = doc.read_jsonl(out.read_text())  # its end line's head is checked too
        assert (converted.events, converted.head, converted.problem) == (got.events, got.head,
                                                                          None)
        recs = doc.records(data)
        off = recs[len(recs) // 2][0]
        for cut in (off + 3, off + 60, len(data) - 1):
            agree(tmp_path / "t.blog", data[:cut])
        flipped = bytearray(data)
        flipped[off + 70] ^= 0x04
        agree(tmp_path / "f.blog", bytes(flipped))
        struct.pack_into("<I", flipped, off + 70, 0)
        agree(tmp_path / "g.blog", bytes(flipped))


def _jsonl_head(path: Path) -> str:
    reader = jsonl.JsonlReader(path)
    for _ in reader:
        pass
    return reader.head


def test_a_hand_written_jsonl_logs_head_needs_no_key_order_of_its_own(tmp_path: Path) -> None:
    """The doc tells a hand-written log's author to paste `rules show --format json`, which
    prints the knobs sorted by name; the head digest is over the binary form's bytes, where
    the rules map has its own key order. A reader written elsewhere gets that order from the
    doc and computes the head buraco_log computes, whatever order the line holds."""
    shown = json.dumps(msgspec.to_builtins(preset("burako")), sort_keys=True)  # as printed
    lines = (FORMAT / "v2-unsealed.jsonl").read_text().splitlines()
    start = json.loads(lines[1])
    start["rules"] = json.loads(shown)
    start["rules"]["target_score"] = 1500
    start["players"] = [{"id": None, "name": p["name"]} for p in start["players"]]
    lines[1] = json.dumps(start)
    path = tmp_path / "hand.jsonl"
    path.write_text("\n".join(lines[:12]) + "\n")
    assert doc.read_jsonl(path.read_text()).head == _jsonl_head(path)


def test_the_docs_key_order_is_the_binary_forms() -> None:
    """The doc's list of map key orders is what the writer encodes (a knob added to the rules
    must be added to the doc, or readers elsewhere compute another head)."""
    written = {"rules": Rules, "points": CardPoints, "bonuses": Bonuses, "players": Player}
    assert {k: list(v.__struct_fields__) for k, v in written.items()} == doc.KEY_ORDER


def _framed(data: bytes, off: int, length: int, count: int, first_seq: int) -> bytes:
    """The record at `off` given another header (its CRC recomputed): what an edit leaves."""
    recs = {r[0]: r for r in doc.records(data)}
    hlen = recs[off][1]
    head = bytearray(data[off:off + hlen])
    struct.pack_into("<IIQ", head, 0, length, count, first_seq)
    struct.pack_into("<I", head, hlen - 4, zlib.crc32(bytes(head[:hlen - 4])))
    return data[:off] + bytes(head) + data[off + hlen:]


def test_a_record_header_that_makes_no_sense_names_the_seq_it_should_hold(
        tmp_path: Path) -> None:
    """Its header's CRC holds but its sizes make no sense: the error names the seq the record
    should have begun with, as every other one does, not the `first_seq` it claims."""
    data = (FORMAT / "v2-unsealed.blog").read_bytes()
    off, _, length, count = doc.records(data)[0]
    for size, n in ((doc.MAX_PAYLOAD + 1, count), (length, length + 1)):
        where = agree(tmp_path / "h.blog", _framed(data, off, size, n, 7))
        assert where is not None and where[1:] == (off, 0)


def _edited_events(data: bytes, edit: Any) -> bytes:
    """The unsealed log's one record with `edit` applied to its list of raw events, its
    length and CRCs made to match: an edit the CRCs cannot see."""
    off, hlen, length, _ = doc.records(data)[0]
    raws = [bytes(r) for r in msgspec.msgpack.decode(data[off + hlen:off + hlen + length],
                                                     type=list[msgspec.Raw])]
    items = edit(raws)
    payload = doc._array_header(len(items)) + b"".join(items)
    out = bytearray(data[:off + hlen] + payload + data[off + hlen + length:])
    struct.pack_into("<I", out, off, len(payload))
    doc.reframe(out, off)
    return bytes(out)


def _event(raws: list[bytes], k: int, item: int, value: Any) -> list[bytes]:
    record = msgspec.msgpack.decode(raws[k])
    record[item] = value
    return [*raws[:k], msgspec.msgpack.encode(record), *raws[k + 1:]]


def test_an_event_that_fails_inside_a_whole_record_is_named_by_its_own_seq(
        tmp_path: Path) -> None:
    """A record whose CRCs hold but one of whose events is no event (an unknown tag, a wrong
    type, an integer past 64 bits, too few items, a wrong seq) is named by that event's seq;
    a payload that is not one array of events, by the record's first."""
    data = (FORMAT / "v2-unsealed.blog").read_bytes()
    k = 150
    edits = {
        "unknown tag": (lambda r: _event(r, k, 0, "zz"), "unknown", k),
        "wrong type": (lambda r: _event(r, k, 1, "x"), "unknown", k),
        "past 64 bits": (lambda r: _event(r, k, 1, 2**64 - 1), "range", k),
        "too few items": (lambda r: [*r[:k], msgspec.msgpack.encode(["dr", 0]), *r[k + 1:]],
                          "unknown", k),
        "wrong seq": (lambda r: _event(r, k, -3, 9999), "seq", k),
        "trailing byte": (lambda r: [*r[:-1], r[-1] + b"\xc0"], "decode", 0),
    }
    for name, (edit, kind, seq) in edits.items():
        where = agree(tmp_path / "e.blog", _edited_events(data, edit))
        assert where == (kind, 20, seq), name


def _jsonl_theirs(path: Path) -> tuple[list[Any] | None, tuple[str, int | None, int | None] | None]:
    try:
        return _plain(list(jsonl.JsonlReader(path))), None
    except LogFormatError as exc:
        return None, (exc.kind, exc.line, exc.seq)


def test_damaged_jsonl_is_placed_alike(tmp_path: Path) -> None:
    """A JSON Lines log's last line cut short, a line that is no JSON, a deleted line and a
    changed event under the end line's head: the same kind, line and seq from both."""
    lines = (FORMAT / "v2-unsealed.jsonl").read_text().splitlines(keepends=True)
    changed = lines[60].replace('"seat":0', '"seat":1', 1)
    assert changed != lines[60]
    damaged = {
        "cut": ("".join(lines[:50]) + lines[50][:30], ("torn", 51, 49)),
        "not json": ("".join([*lines[:60], lines[60][:10] + "\x00" + lines[60][11:],
                              *lines[61:]]), ("jsonl", 61, 59)),
        "deleted": ("".join([*lines[:60], *lines[61:]]), ("seq", 61, 59)),
        "changed": ("".join([*lines[:60], changed, *lines[61:]]), ("chain", len(lines), None)),
    }
    for name, (text, expected) in damaged.items():
        path = tmp_path / "d.jsonl"
        path.write_text(text)
        got = doc.read_jsonl(text)
        mine = (got.problem.kind, got.problem.offset, got.problem.seq) if got.problem else None
        assert (mine, _jsonl_theirs(path)[1]) == (expected, expected), name
