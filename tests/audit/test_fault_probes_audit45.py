"""A referee's disputed logs: what a cheating site (or player) can do to a signed log, each
caught by ``buraco-log audit`` (a real subprocess) in one line that names the seq and the rule,
under the verdict line that names the file; the honest log, and one honestly repaired after a
crash, pass.

Before: a receipt the log no longer matched said "the log was changed after seq 120" of an
edit at seq 100 (a referee looked past seq 120 for it), and never named the receipt's file or
how far an earlier receipt still vouched for the log; a cut said "changed after seq 200" of a
log that ends at seq 150; a second key's signature repeated the match id, equal, twice.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import log
from buraco_log.events import AnyEvent
from buraco_log.signing.keys import Signer
from buraco_log.signing.record import Receipt, SignedHead, receipt_json
from tests.signing.helpers import match, write_signed, write_signed_by

ROOT = Path(__file__).resolve().parents[2]
SITE, NEXT, FORGER = Signer.generate(), Signer.generate(), Signer.generate()
RECEIPTS = {40: 0, 120: 1, 200: 0}  # seq -> seat the site handed its receipt to
BATCH = 10  # a record of 10 events and its signature (cut short at each receipt): few fsyncs
# so its records end at seqs 9, 19, 29, 39, 40, 50, 60, ... 200, 210, ...


def _events() -> list[AnyEvent]:
    return match(key_id=SITE.key_id)


def _noted(events: list[AnyEvent], seqs: Callable[[int], bool], note: str) -> list[AnyEvent]:
    """An edit that keeps every move legal: a note the players never wrote."""
    return [msgspec.structs.replace(e, note=note) if seqs(e.seq) else e for e in events]


def _records(data: bytes) -> list[tuple[int, int, int]]:
    """(start, end, event count) of each record of a sealed log's bytes."""
    out, off = [], log.HEADER_SIZE
    while off < len(data):
        length, count = struct.unpack_from("<II", data, off)
        out.append((off, off + 56 + length, count))
        off += 56 + length
    return out


def _end_of_record_with(data: bytes, seq: int) -> int:
    """Where the signature record following the event record holding ``seq`` ends."""
    seen, ends = 0, _records(data)
    for i, (_, end, count) in enumerate(ends):
        seen += count
        if count and seen > seq:
            return ends[i + 1][1] if i + 1 < len(ends) and ends[i + 1][2] == 0 else end
    raise AssertionError(f"no record holds seq {seq}")


def _write(path: Path, events: list[AnyEvent], signer: Signer = SITE,
           receipts_at: tuple[int, ...] = ()) -> dict[int, SignedHead]:
    return write_signed(path, events, signer, batch=BATCH, receipts_at=receipts_at)


# -- the cheats ------------------------------------------------------------------------------------
# Each builds the log the referee is handed, from the site's honest bytes where it needs them.


def _honest(d: Path, honest: bytes) -> None:
    (d / "honest.blog").write_bytes(honest)


def _forger_key(d: Path, honest: bytes) -> None:
    """An event edited, and the whole log re-signed with a key of the forger's own."""
    events = _noted(_events(), lambda s: s == 100, "agreed by both")
    events[0] = msgspec.structs.replace(events[0], key_id=FORGER.key_id)
    _write(d / "forger_key.blog", events, FORGER)


def _forger_key_old_start(d: Path, honest: bytes) -> None:
    """The same, leaving the site's key id in the match start."""
    events = _noted(_events(), lambda s: s == 100, "agreed by both")
    write_signed_by(d / "forger_key_old_start.blog", events,
                    {e.seq: FORGER for e in events if e.seq % BATCH == 0})


def _site_edit(d: Path, honest: bytes) -> None:
    """An event edited by the site, re-signed with its own key: only a receipt shows it."""
    _write(d / "site_edit.blog", _noted(_events(), lambda s: s == 100, "agreed by both"))


def _cut_and_extended(d: Path, honest: bytes) -> None:
    """Cut back to seq 150, and the rest of the match written again, signed by the site."""
    _write(d / "cut_and_extended.blog", _noted(_events(), lambda s: s > 150, "rewritten"))


def _spliced(d: Path, honest: bytes) -> None:
    """The honest log up to seq 150 and, after it, another version the site kept, written in
    records of 5 events: they agree up to seq 179, so the chains and the signatures join at
    seq 150, where both have a signature, without a seam."""
    other = d / "version_b.blog"
    write_signed(other, _noted(_events(), lambda s: s == 180, "the other version"), SITE,
                 batch=5, receipts_at=(40,))
    b = other.read_bytes()
    at, at_b = _end_of_record_with(honest, 150), _end_of_record_with(b, 150)
    assert honest[:at] != b[:at_b]  # two files, cut and joined
    (d / "spliced.blog").write_bytes(honest[:at] + b[at_b:])
    other.unlink()


def _reordered_bytes(d: Path, honest: bytes) -> None:
    """Two records swapped in place, signatures left where they were."""
    recs = _records(honest)
    (a0, a1, _), (b0, b1, _) = [r for r in recs if r[2]][7:9]  # events 61-70, 71-80
    (d / "reordered_bytes.blog").write_bytes(
        honest[:a0] + honest[b0:b1] + honest[a1:b0] + honest[a0:a1] + honest[b1:])


def _reordered_resigned(d: Path, honest: bytes) -> None:
    """Two lay-offs swapped (legal in either order), renumbered and re-signed by the site."""
    events = _events()
    e70, e71 = events[70], events[71]
    assert type(e70).__name__ == type(e71).__name__ == "CardsLaidOff" and e70 != e71
    events[70] = msgspec.structs.replace(e71, seq=70)
    events[71] = msgspec.structs.replace(e70, seq=71)
    _write(d / "reordered_resigned.blog", events)


def _truncated(d: Path, honest: bytes) -> None:
    """Cut at a signed head after seq 150: a shorter log the site's signatures still cover."""
    (d / "truncated.blog").write_bytes(honest[:_end_of_record_with(honest, 150)])


def _repaired_honestly(d: Path, honest: bytes) -> None:
    """A crash tore the record after seq 210; repair cut it; the match went on to its end."""
    path = d / "repaired_honestly.blog"
    events = _events()
    at = _end_of_record_with(honest, 210)
    path.write_bytes(honest[:at] + honest[at:at + 30])  # a torn record after it
    assert log.repair(path, backup=False) is not None
    with log.Writer(path, signer=SITE, batched=True, batch_events=BATCH) as w:
        for event in events[211:]:
            w.append(event)


def _repaired_cheat(d: Path, honest: bytes) -> None:
    """A "repair" that cut back past receipted seq 200, and the match written again after it."""
    path = d / "repaired_cheat.blog"
    path.write_bytes(honest[:_end_of_record_with(honest, 150)])
    with log.Writer(path, signer=SITE, batched=True, batch_events=BATCH) as w:
        for event in _noted(_events(), lambda s: s > 150, "after the repair")[151:]:
            w.append(event)


def _rotated(d: Path, honest: bytes) -> None:
    """The site's next key (trusted too) signs from seq 130 on."""
    events = _events()
    write_signed_by(d / "rotated.blog", events,
                    {e.seq: SITE if e.seq < 130 else NEXT for e in events if e.seq % BATCH == 0})


def _signature_copied(d: Path, honest: bytes) -> None:
    """The signature record after seq 100 put in twice."""
    at = _end_of_record_with(honest, 100)
    record = next(honest[a:b] for a, b, n in _records(honest) if b == at and n == 0)
    (d / "signature_copied.blog").write_bytes(honest[:at] + record + honest[at:])


def _signature_moved(d: Path, honest: bytes) -> None:
    """The signature record after seq 100 moved to after seq 110."""
    at, later = _end_of_record_with(honest, 100), _end_of_record_with(honest, 110)
    record = next(honest[a:b] for a, b, n in _records(honest) if b == at and n == 0)
    (d / "signature_moved.blog").write_bytes(
        honest[:at - len(record)] + honest[at:later] + record + honest[later:])


@dataclass(frozen=True)
class Cheat:
    name: str
    build: Callable[[Path, bytes], None]
    # (seq, rule, words the line must hold): each a line of the log's report
    caught: tuple[tuple[int, str, str], ...]


CHANGED_41_120 = "an event in seq 41 to 120 was changed after the site signed it"
CHEATS = [
    Cheat("honest", _honest, ()),
    Cheat("repaired_honestly", _repaired_honestly, ()),
    Cheat("forger_key", _forger_key, (  # its start was changed too: from seq 0
        (9, "sign.untrusted", f"the signature after seq 9 (the log's first): key "
         f"{FORGER.key_id} is not among the trusted keys: it shows nothing of what the site "
         "signed"),
        (40, "sign.receipt_changed", "an event in seq 0 to 40 was changed after the site signed "
         "it; the log's head at seq 40 is "),
        (40, "sign.receipt_changed", f"; the receipt is by trusted key {SITE.key_id}, the log's "
         f"match start records key {FORGER.key_id}"),
    )),
    Cheat("forger_key_old_start", _forger_key_old_start, (
        (0, "sign.key_mismatch", f"the signature after seq 0 is by key {FORGER.key_id}; the "
         f"match start records key {SITE.key_id}: one key signs a log"),
        (120, "sign.receipt_changed", CHANGED_41_120),
    )),
    Cheat("site_edit", _site_edit, (
        (120, "sign.receipt_changed", "the receipt for seq 120 that seat 1 holds ({d}/r120.json) "
         f"does not match the log: {CHANGED_41_120}; the log still matches the receipt for seq "
         "40 that seat 0 holds ({d}/r40.json)"),
    )),
    Cheat("cut_and_extended", _cut_and_extended, (
        (200, "sign.receipt_changed", "an event in seq 121 to 200 was changed"),
    )),
    Cheat("spliced", _spliced, (
        (200, "sign.receipt_changed", "an event in seq 121 to 200 was changed"),
    )),
    Cheat("reordered_bytes", _reordered_bytes, (
        (61, "log.seq", "found a record starting at seq 71"),
        # read on past the break (each record's checksum holds): the receipt shows the edit,
        # after the site's own signatures that still verify (seq 60)
        (120, "sign.receipt_changed", "an event in seq 61 to 120 was changed after the site "
         "signed it; the site's own signature after seq 60 in the log verifies"),
    )),
    Cheat("reordered_resigned", _reordered_resigned, (
        (120, "sign.receipt_changed", CHANGED_41_120),
    )),
    Cheat("truncated", _truncated, (
        (200, "sign.receipt_cut", "the receipt for seq 200 that seat 0 holds ({d}/r200.json) "
         "shows the site signed match {match!r} up to seq 200, but the log ends at seq 150 (it "
         "was cut, or is a copy taken before seq 200 was written: the site's log must reach "
         "seq 200)"),
    )),
    Cheat("repaired_cheat", _repaired_cheat, (
        (200, "sign.receipt_changed", "an event in seq 121 to 200 was changed"),
    )),
    Cheat("rotated", _rotated, (
        (130, "sign.key_mismatch", f"is by key {NEXT.key_id}; the match start records key "
         f"{SITE.key_id}"),
    )),
    Cheat("signature_copied", _signature_copied, (
        (100, "sign.duplicate", "2 signature records sign the head after seq 100"),
    )),
    Cheat("signature_moved", _signature_moved, (
        (110, "log.seq", "the signature record after seq 110 signs this log's head at seq 100"),
    )),
]


def _cli(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "audit", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          stdin=subprocess.DEVNULL, env=env)


@pytest.fixture(scope="module")
def dispute(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A directory of the honest log and every cheat, the trusted keys, the receipts, and the
    environment of a referee who has no site settings of their own."""
    d = tmp_path_factory.mktemp("dispute")
    keys = d / "keys"
    keys.mkdir()
    for name, signer in (("site", SITE), ("site-next", NEXT)):
        (keys / f"{name}.pub").write_bytes(msgspec.json.encode(signer.public()))
    logs = d / "logs"
    logs.mkdir()
    signed = _write(logs / "honest.blog", _events(), receipts_at=tuple(RECEIPTS))
    for seq, seat in RECEIPTS.items():
        (d / f"r{seq}.json").write_bytes(receipt_json(Receipt.of(signed[seq], seat)))
    honest = (logs / "honest.blog").read_bytes()
    for cheat in CHEATS:
        cheat.build(logs, honest)
    (d / "none.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURACO_LOG_")}
    env["BURACO_LOG_CONFIG"] = str(d / "none.toml")
    return d, env


def _blocks(report: str) -> dict[str, list[str]]:
    """Each log's part of a report: the verdict line (at the margin) and the lines under it."""
    out: dict[str, list[str]] = {}
    for line in report.splitlines():
        if not line.startswith(" "):
            current = out.setdefault(line.split(":", 1)[0], [line])
        else:
            current.append(line)
    return out


def test_every_cheat_is_caught_in_one_line_naming_the_seq_and_rule_and_honest_logs_pass(
        dispute: tuple[Path, dict[str, str]]) -> None:
    d, env = dispute
    logs = sorted((d / "logs").iterdir())
    assert [p.stem for p in logs] == sorted(c.name for c in CHEATS)
    receipts = [a for seq in RECEIPTS for a in ("--receipt", d / f"r{seq}.json")]
    r = _cli(*logs, "--keys", d / "keys", *receipts, "--jobs", "1", env=env)
    assert r.returncode == 1, r.stderr  # some logs hold findings; nothing is an error
    assert r.stderr == ""
    blocks = _blocks(r.stdout)
    missed = []
    for cheat in CHEATS:
        path = str(d / "logs" / f"{cheat.name}.blog")
        verdict, *lines = blocks[path]  # the verdict line names the file
        if not cheat.caught:
            assert verdict.startswith(f"{path}: OK "), "\n".join(blocks[path])
            continue
        assert verdict.startswith(f"{path}: FINDINGS "), "\n".join(blocks[path])
        for seq, rule, words in cheat.caught:
            words = words.format(d=d, match=_events()[0].match_id)
            at = (f"seq {seq} [{rule}] " if not rule.startswith("log.")
                  else f"[{rule}]: ")  # integrity: in the verdict's integrity line
            found = [x for x in lines if at in x and words in x
                     and (not rule.startswith("log.") or f"seq {seq}" in x)]
            if len(found) != 1:
                missed.append(f"{cheat.name}: no one line with {at!r} and {words!r}:\n"
                              + "\n".join(blocks[path]))
    assert not missed, "\n\n".join(missed)


def test_a_receipt_of_another_match_or_another_version_is_named(
        dispute: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """A receipt of another match, shown against this log; and two receipts for one seq that
    the site signed of two versions of the match."""
    d, env = dispute
    other = write_signed(tmp_path / "other.blog", match("other", key_id=SITE.key_id)[:60],
                         SITE, receipts_at=(50,))
    (tmp_path / "theirs.json").write_bytes(receipt_json(Receipt.of(other[50], 1)))
    version_b = _write(tmp_path / "b.blog", _noted(_events(), lambda s: s == 180, "b"),
                       receipts_at=(200,))
    (tmp_path / "b200.json").write_bytes(receipt_json(Receipt.of(version_b[200], 1)))
    r = _cli(d / "logs" / "honest.blog", "--keys", d / "keys", "--receipt",
             tmp_path / "theirs.json", "--receipt", d / "r200.json", "--receipt",
             tmp_path / "b200.json", env=env)
    assert r.returncode == 1, r.stderr
    found = [x.strip() for x in r.stdout.splitlines() if x.startswith("    seq ")]
    assert len(found) == 2, r.stdout
    assert found[0].startswith("seq 50 [sign.receipt_other_match] the receipt for seq 50 "
                               f"that seat 1 holds ({tmp_path / 'theirs.json'}) is for match "
                               ), found
    assert found[0].endswith(": audit it with its match's log (given together, each receipt "
                             "goes to its match's log)"), found
    assert found[1].startswith(
        f"seq 200 [sign.receipt_changed] the receipt for seq 200 that seat 1 holds "
        f"({tmp_path / 'b200.json'}) does not match the log, and the receipt for seq 200 that "
        f"seat 0 holds ({d / 'r200.json'}) signs the log's head there: the site's writer "
        "signed two different histories of match "), found
    assert "(two different heads at seq 200)" in found[1], found


# -- audit_many: a receipt for a match none of the logs holds -----------------------------------


@pytest.mark.parametrize("workers", [1, 2])
def test_audit_many_reports_a_receipt_whose_match_no_log_holds(
        tmp_path: Path, workers: int) -> None:
    """Before: the receipt was given to no log and the batch read as all OK; the command
    found it only by comparing the receipts' matches with the verdicts itself."""
    from buraco_log.audit import Verdicts, audit_many, signing_options, unmatched_receipts

    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "site.pub").write_bytes(msgspec.json.encode(SITE.public()))
    logs, receipts = [], []
    for name in ("a", "b", "missing"):
        path = tmp_path / f"{name}.blog"
        got = write_signed(path, match(name, key_id=SITE.key_id)[:30], SITE, batch=BATCH,
                           receipts_at=(20,))
        (tmp_path / f"{name}20.json").write_bytes(receipt_json(Receipt.of(got[20], 0)))
        receipts.append(str(tmp_path / f"{name}20.json"))
        logs.append(path)
    logs[2].unlink()  # the log of the third match is not given to the referee
    options = signing_options([str(keys)], receipts)
    verdicts = audit_many(logs[:2], workers=workers, signing=options)
    assert isinstance(verdicts, Verdicts) and [v.ok for v in verdicts] == [True, True]
    assert [h.source for h in verdicts.unmatched] == [receipts[2]]
    assert not verdicts.ok
    assert unmatched_receipts(list(verdicts), options) == verdicts.unmatched
    # every receipt to its log: nothing unmatched, and the batch is OK
    whole = audit_many(logs[:2], workers=workers, signing=signing_options([str(keys)],
                                                                          receipts[:2]))
    assert whole.unmatched == () and whole.ok and whole == list(whole)


# -- damaged input in a batch ---------------------------------------------------------------------


def _damaged_batch(d: Path, copies: int) -> tuple[list[str], dict[str, str]]:
    """``copies`` signed logs and, among them, a few bad files: (every path, bad name -> the
    rule or words its verdict names)."""
    src = d / "src.blog"
    _write(src, _events())
    data = src.read_bytes()
    logs = d / "logs"
    logs.mkdir()
    for i in range(copies):
        (logs / f"m{i:04d}.blog").write_bytes(data)
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 1
    bad = {
        "m0001.blog": (data[:len(data) // 2], "[log.torn]"),  # cut mid-record
        "m0002.blog": (os.urandom(4000), "[log.header]"),  # garbage: no log at all
        "m0003.blog": (data[:20] + os.urandom(3000), "[log.damage]"),  # a header, then garbage
        "m0004.blog": (bytes(flipped), "[log.damage]"),  # one bit
    }
    for name, (content, _) in bad.items():
        (logs / name).write_bytes(content)
    (logs / "m0005.blog").write_bytes(b"")  # an empty file: a match not started
    with open(logs / "m0006.blog", "r+b") as f:  # huge: a whole log, then 16 MiB of zeros
        f.truncate(len(data) + (16 << 20))
    bad["m0006.blog"] = (b"", "zero-filled tail")
    return sorted(str(p) for p in logs.iterdir()), {k: v for k, (_, v) in bad.items()}


def test_a_batch_with_damaged_files_names_each_and_counts_the_not_started_apart(
        dispute: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """Before: '7 clean, 5 with findings (integrity 5), of which 1 is not a log, 1 not
    started': the log not started read as one of those with findings."""
    _, env = dispute
    _, bad = _damaged_batch(tmp_path, 12)
    r = _cli(tmp_path / "logs", "--quiet", "--jobs", "1", env=env)
    assert r.returncode == 2, r.stderr  # an entry is no log: the batch's worst status
    assert r.stdout.splitlines()[-1] == (
        "audited 12 logs: 6 clean, 1 not started, 5 with findings (integrity 5), of which 1 is "
        "not a log; 8 logs of a match an earlier log holds too (see their notes)"), r.stdout
    blocks = _blocks(r.stdout)
    for name, words in bad.items():
        block = "\n".join(blocks[str(tmp_path / "logs" / name)])
        assert words in block, block


@pytest.mark.slow
def test_a_thousand_logs_with_a_few_damaged_are_each_reported(
        dispute: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    import json

    _, env = dispute
    paths, bad = _damaged_batch(tmp_path, 1000)
    r = _cli(tmp_path / "logs", "-j", "2", "-f", "json", env=env)
    assert r.returncode == 2, r.stderr  # the worst entry: m0002 is no log at all
    verdicts = json.loads(r.stdout)
    assert [v["path"] for v in verdicts] == paths
    failed = {Path(v["path"]).name for v in verdicts if not v["ok"]}
    assert failed == set(bad)
    assert sum(v["ok"] and not v["not_started"] for v in verdicts) == 1000 - len(bad) - 1


# -- a seq past the events of a changed log read anyway ------------------------------------------


def test_a_seq_past_a_changed_log_read_to_its_end_is_one_it_does_not_hold(
        tmp_path: Path) -> None:
    """A log whose every record (line) was read past a changed event lost nothing: seq 9999
    is one it does not hold (2), not one "the damage may hold" (1), in both formats; a log
    whose read stopped at a record cut short may hold it (1)."""
    from buraco_log.jsonl import binary_to_jsonl
    from tests.cli.probes import cli_batch, one_error_line

    events = _events()[:120]
    plain, edited, binary = (tmp_path / f"{n}.blog" for n in ("plain", "edited", "changed"))
    _write(plain, events)
    _write(edited, _noted(events, lambda s: s == 65, "edited"))
    # the edited record (and its signature) in place of the honest one: each record decodes
    # and keeps its checksums, the chain breaks at the record after it
    a, b = plain.read_bytes(), edited.read_bytes()
    start_a, start_b = _end_of_record_with(a, 60), _end_of_record_with(b, 60)
    binary.write_bytes(a[:start_a] + b[start_b:_end_of_record_with(b, 70)]
                       + a[_end_of_record_with(a, 70):])
    lines = tmp_path / "changed.jsonl"
    binary_to_jsonl(plain, lines)
    text = lines.read_text().splitlines(keepends=True)
    i = next(n for n, line in enumerate(text) if line.rstrip().endswith('"seq":50}'))
    text[i] = text[i].replace("{", '{"note":"edited",', 1)  # the chain breaks after it
    lines.write_text("".join(text))
    cut = tmp_path / "cut.blog"
    cut.write_bytes(plain.read_bytes()[:_end_of_record_with(plain.read_bytes(), 60) + 200])
    runs: list[list[object]] = [
        ["explain", path, "--at", 9999, "--ignore-integrity"] for path in (binary, lines, cut)]
    done = cli_batch([runs[0], ["replay", *runs[0][1:]], *runs[1:]], cwd=tmp_path)
    for d in done[:3]:
        line = one_error_line(d, 2)
        assert line.endswith("the log has no seq 9999 (seqs 0 to 119)") or \
            "the log has no seq 9999 (seqs 0 to 119); WARNING:" in line, (d.args, line)
    for d in done[3:]:
        line = one_error_line(d, 1)
        assert "seq 9999 is past the events read from the damaged log" in line, (d.args, line)


# -- the range a changed receipt names holds the change ------------------------------------------


def _changed_ranges(tmp_path: Path, cases: int, seed: int) -> None:
    import random
    import re

    from buraco_log.signing.check import HeldReceipt
    from tests.signing.helpers import audit, ring

    rnd = random.Random(seed)
    events = _events()
    every = tuple(range(5, len(events), 5))
    signed = _write(tmp_path / "honest.blog", events, receipts_at=every)
    for case in range(cases):
        edit = rnd.randrange(1, len(events))
        path = tmp_path / f"edit{case}.blog"
        _write(path, _noted(events, lambda s, edit=edit: s == edit, f"edit {case}"))
        held = sorted(rnd.sample(every, rnd.randint(1, 6)))
        v = audit(path, ring(SITE), [HeldReceipt(Receipt.of(signed[s], s % 2), f"r{s}.json")
                                     for s in held])
        found = {f.seq: f.message for f in v.findings if f.rule == "sign.receipt_changed"}
        assert sorted(found) == [s for s in held if s >= edit], (edit, held, v.findings)
        for s, message in found.items():
            got = re.search(r"an event in seq (\d+) to (\d+) was changed", message)
            assert got is not None, message
            first, last = int(got[1]), int(got[2])
            agreed = [r for r in held if r < edit]
            assert (first, last) == (agreed[-1] + 1 if agreed else 0, s), (edit, held, message)
            assert first <= edit <= last


def test_the_range_a_changed_receipt_names_holds_the_change(tmp_path: Path) -> None:
    _changed_ranges(tmp_path, 4, seed=45)


@pytest.mark.slow
def test_the_range_a_changed_receipt_names_holds_the_change_many_times(tmp_path: Path) -> None:
    _changed_ranges(tmp_path, 200, seed=4500)


def test_diff_says_a_field_one_copy_lacks_is_none_not_the_word_none(tmp_path: Path) -> None:
    """Before: 'note: None vs agreed', as if the site's copy held a note saying "None"."""
    from buraco_log.audit import diff_logs

    events = _events()[:30]
    a, b, c = tmp_path / "a.blog", tmp_path / "b.blog", tmp_path / "c.blog"
    _write(a, events)
    _write(b, _noted(events, lambda s: s == 12, "agreed"))
    _write(c, _noted(events, lambda s: s == 12, "None"))
    assert diff_logs(a, b).differences == ("note: (none) vs agreed",)
    assert diff_logs(a, c).differences == ("note: (none) vs None",)


def test_a_match_renamed_to_shake_off_a_receipt_is_a_change_not_another_match(
        tmp_path: Path) -> None:
    """Before: the site re-signed the match under a new id, and the player's receipt was
    'for match X, not this log's Y' (sign.receipt_other_match): the player's own match read
    as someone else's."""
    from buraco_log.signing.check import HeldReceipt
    from tests.signing.helpers import audit, ring

    events = _events()
    signed = _write(tmp_path / "honest.blog", events, receipts_at=(120,))
    renamed = [msgspec.structs.replace(events[0], match_id="another-name"), *events[1:]]
    _write(tmp_path / "renamed.blog", renamed)
    receipt = HeldReceipt(Receipt.of(signed[120], 1), "r120.json")
    v = audit(tmp_path / "renamed.blog", ring(SITE), [receipt])
    assert [(f.rule, f.seq) for f in v.findings] == [("sign.receipt_changed", 120)], v.findings
    assert v.findings[0].message == (
        f"the receipt for seq 120 that seat 1 holds (r120.json) is for match "
        f"{events[0].match_id!r}, and the log is that match renamed 'another-name': with its "  # type: ignore[union-attr]
        "start's match id set back, the log matches the receipt at seq 120; the match id was "
        "changed after the site signed it")
    # a receipt of a match that is truly another stays one
    other = _write(tmp_path / "other.blog", match("other", key_id=SITE.key_id)[:40],
                   receipts_at=(30,))
    v = audit(tmp_path / "renamed.blog", ring(SITE), [HeldReceipt(Receipt.of(other[30], 0))])
    assert [f.rule for f in v.findings] == ["sign.receipt_other_match"]


def test_many_receipts_of_another_match_cost_one_pass_over_the_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A referee given the wrong player's file: 2,000 genuine receipts of another match, each
    tried against the log renamed. The chain is computed once per match id, not once per
    receipt (2,000 passes over a long log)."""
    import hashlib

    from buraco_log.signing import check
    from buraco_log.signing.check import HeldReceipt
    from tests.signing.helpers import audit, ring

    events = _events()
    _write(tmp_path / "m.blog", events)
    held = [HeldReceipt(Receipt.of(SITE.sign_head("other", seq, hashlib.sha256(b"%d" % seq)
                                                  .digest()), 0), "theirs.json")
            for seq in range(2000)]
    passes = []
    real = check.heads_at
    monkeypatch.setattr(check, "heads_at", lambda *a, **k: passes.append(1) or real(*a, **k))
    v = audit(tmp_path / "m.blog", ring(SITE), held)
    assert {f.rule for f in v.findings} == {"sign.receipt_other_match"}
    assert len(v.findings) == 2000
    assert len(passes) <= 2, len(passes)  # the log's own heads, and the renamed ones
