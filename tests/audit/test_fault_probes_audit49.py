"""A cheater's toolbox against a signed log and the receipts players hold, each judged by
``buraco-log audit`` in a real subprocess.

Before: a log edited at its start (players swapped) with its chain recomputed, its old
signature records left in place, broke at the first of them, and every receipt was said to lie
past "only seq 0 to 9 of the log could be read (it is damaged)": the receipts, which show the
edit, were never compared with the events after the break, which all read whole. A signature
record moved elsewhere had the same three "cut" findings of a log whose every event is what
the site signed. A revoked key's finding did not say that a revocation has no date; a receipt
with a field added was refused without saying which fields a receipt holds; one with an empty
key id was judged "key  is not among the trusted keys".
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")

from buraco_log import events as ev
from buraco_log import log
from buraco_log.audit import SigningOptions, audit_log, audit_many, diff_events
from buraco_log.events import AnyEvent
from buraco_log.signing.check import HeldReceipt, heads_at, load_receipts
from buraco_log.signing.keys import Keyring, Signer, SigningError, load_keyring
from buraco_log.signing.record import Receipt, SignedHead, receipt_json
from tests.signing.helpers import match, write_signed

ROOT = Path(__file__).resolve().parents[2]
SITE = Signer.generate()
RECEIPTS = (40, 120, 200)
BATCH = 10  # records of 10 events, each followed by its signature record


def _records(data: bytes) -> list[tuple[int, int, int, int]]:
    """(start, end, event count, first seq) of each record of a sealed log's bytes."""
    out, off = [], log.HEADER_SIZE
    while off < len(data):
        length, count, first = struct.unpack_from("<IIQ", data, off)
        out.append((off, off + 56 + length, count, first))
        off += 56 + length
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The site's honest signed log, its key, the players' receipts, and an environment with
    no site settings."""
    d = tmp_path_factory.mktemp("site")
    (d / "keys").mkdir(mode=0o700)
    (d / "keys" / "site.pub").write_bytes(msgspec.json.encode(SITE.public()))
    signed = write_signed(d / "honest.blog", match(key_id=SITE.key_id), SITE, batch=BATCH,
                          receipts_at=RECEIPTS)
    for seq in RECEIPTS:
        (d / f"r{seq}.json").write_bytes(receipt_json(Receipt.of(signed[seq], 1)))
    (d / "none.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURACO_LOG_")}
    env["BURACO_LOG_CONFIG"] = str(d / "none.toml")
    return d, env


def _audit(d: Path, env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "audit", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL, env=env)


def _receipts(d: Path) -> list[str]:
    return [a for seq in RECEIPTS for a in ("--receipt", str(d / f"r{seq}.json"))]


def _under_old_signatures(honest: bytes, events: list[AnyEvent], path: Path) -> Path:
    """``events`` (edited) written with the chain recomputed, and the site's signature
    records of the ``honest`` log put back after the records they followed."""
    with log.Writer(path, batched=True, batch_events=BATCH) as w:
        for i, event in enumerate(events):
            w.append(event)
            if i % BATCH == BATCH - 1 or event.seq in RECEIPTS:
                w.flush()  # records cut where the site's were
    sigs = {first: honest[a:b] for a, b, n, first in _records(honest) if n == 0}
    data = path.read_bytes()
    out = bytearray(data[:log.HEADER_SIZE])
    for a, b, n, first in _records(data):
        out += data[a:b]
        out += sigs.get(first + n, b"")
    path.write_bytes(bytes(out))
    return path


def _ring() -> Keyring:
    return Keyring([SITE.public()])


def _held(d: Path) -> tuple[HeldReceipt, ...]:
    return tuple(load_receipts([str(d / f"r{seq}.json") for seq in RECEIPTS]))


def _finding_lines(out: str) -> list[str]:
    return [x.strip() for x in out.splitlines() if x.strip().startswith("seq ")]


def test_a_start_edited_and_rechained_under_the_sites_old_signatures_is_shown_by_each_receipt(
        site: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    d, env = site
    honest = (d / "honest.blog").read_bytes()
    events = match(key_id=SITE.key_id)
    start = events[0]
    events[0] = msgspec.structs.replace(start, players=start.players[::-1])
    edited = _under_old_signatures(honest, events, tmp_path / "edited.blog")
    r = _audit(d, env, edited, "--keys", d / "keys", *_receipts(d))
    assert r.returncode == 1 and r.stderr == "", r.stderr
    assert "[log.chain]" in r.stdout  # where the chain broke: the integrity line
    lines = _finding_lines(r.stdout)
    for seq in RECEIPTS:
        mine = [x for x in lines if x.startswith(f"seq {seq} ")]
        assert len(mine) == 1, r.stdout
        assert mine[0].startswith(f"seq {seq} [sign.receipt_changed] the receipt for seq {seq} "
                                  "that seat 1 holds"), r.stdout
        assert f"an event in seq 0 to {seq} was changed after the site signed it" in mine[0]
        assert "read on past the break in its chain at byte" in mine[0]
        assert "an edit, not damage on disk" in mine[0]
    assert "receipt_cut" not in r.stdout, r.stdout


def test_signature_records_swapped_leave_the_receipts_matching_the_events(
        site: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """Two signature records swapped: the integrity finding names it; the receipts, compared
    with the events read on past it (each what the site signed), raise nothing more."""
    d, _ = site
    honest = (d / "honest.blog").read_bytes()
    recs = _records(honest)
    (a0, a1, _, _), (b0, b1, _, _) = [r for r in recs if r[2] == 0][1:3]  # after seq 19, 29
    moved = tmp_path / "moved.blog"
    moved.write_bytes(honest[:a0] + honest[b0:b1] + honest[a1:b0] + honest[a0:a1]
                      + honest[b1:])
    v = audit_log(moved, signing=SigningOptions(_ring(), _held(d)))
    assert [(f.rule, f.offset) for f in v.findings] == [("log.seq", a0)], v.findings
    assert "it was moved here from after seq 29" in v.findings[0].message
    assert v.signing.receipts == 3


def test_a_revoked_keys_finding_says_a_revocation_has_no_date(
        site: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    d, _ = site
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    (keys / "site.pub").write_bytes((d / "keys" / "site.pub").read_bytes())
    (keys / "revoked").write_text(f"{SITE.key_id}\n")
    v = audit_log(d / "honest.blog", signing=SigningOptions(load_keyring([keys])))
    [f] = [f for f in v.findings if f.rule == "sign.revoked"]
    assert f.seq == 9 and f.message.startswith(
        f"the signature after seq 9 (the log's first): key {SITE.key_id} is revoked")
    assert "a revocation has no date" in f.message and "signed by its current key" in f.message


def test_a_receipt_with_a_field_added_or_an_empty_key_id_is_refused_saying_what_a_receipt_is(
        site: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    d, env = site
    receipt = json.loads((d / "r40.json").read_text())
    noted = tmp_path / "noted.json"
    noted.write_text(json.dumps({**receipt, "note": "kept after my move"}))
    r = _audit(d, env, d / "honest.blog", "--keys", d / "keys", "--receipt", noted)
    assert (r.returncode, r.stdout) == (2, ""), r.stdout
    assert r.stderr.count("\n") == 1
    assert r.stderr.startswith(f"buraco-log: error: {noted}: not a buraco-log receipt: Object "
                               "contains unknown field `note`")
    assert "a receipt holds match_id, seq, head, key_id, signature" in r.stderr
    keyless = tmp_path / "keyless.json"
    keyless.write_text(json.dumps({**receipt, "key_id": ""}))
    with pytest.raises(SigningError) as caught:  # was a finding naming "key  "
        load_receipts([str(keyless)])
    assert str(caught.value) == (f"{keyless}: not a buraco-log receipt: key_id is empty: a "
                                 "receipt names the key that signed it")


def test_a_club_archive_is_reported_in_the_documented_order_whatever_the_jobs(
        site: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """docs/disputes.md: the paths in the order given, each directory's logs by name in
    code-point order, a directory's own logs before its subdirectories'; the same with one
    process as with two, in the text report and in the JSON list."""
    d, env = site
    short = match(key_id=None)[:12]
    names = ["club/z.blog", "club/B.blog", "club/a.blog", "club/m10.blog", "club/m9.blog",
             "club/2025/b.blog", "club/2025/a.blog", "club/2025/01/x.blog",
             "club/2025-old/y.blog", "club/A/q.blog"]
    for i, name in enumerate(names):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        events = [msgspec.structs.replace(short[0], match_id=f"m-{i}"), *short[1:]]
        with log.Writer(path, batched=True, batch_events=len(events)) as w:
            for event in events:
                w.append(event)
    (tmp_path / "alone.blog").write_bytes((tmp_path / "club/a.blog").read_bytes())
    want = [str(tmp_path / "alone.blog")] + [str(tmp_path / n) for n in (
        "club/B.blog", "club/a.blog", "club/m10.blog", "club/m9.blog", "club/z.blog",
        "club/2025/a.blog", "club/2025/b.blog", "club/2025/01/x.blog",
        "club/2025-old/y.blog", "club/A/q.blog")]
    text = _audit(d, env, tmp_path / "alone.blog", tmp_path / "club", "--jobs", "1")
    assert text.returncode == 0, text.stderr
    said = [x.split(": OK ", 1)[0] for x in text.stdout.splitlines() if ": OK " in x]
    assert said == want, said
    listed = _audit(d, env, tmp_path / "alone.blog", tmp_path / "club", "--jobs", "2", "-f",
                    "json")
    assert listed.returncode == 0, listed.stderr
    assert [v["path"] for v in json.loads(listed.stdout)] == want


SIGN_RULES = {"sign.unsigned", "sign.key_mismatch", "sign.untrusted", "sign.revoked",
              "sign.key_window", "sign.invalid", "sign.tail_unsigned", "sign.end_missing",
              "sign.duplicate", "sign.receipt_changed", "sign.receipt_cut",
              "sign.receipt_invalid", "sign.receipt_other_match"}
KEYED = {"sign.unsigned", "sign.key_mismatch", "sign.untrusted", "sign.revoked",
         "sign.key_window", "sign.invalid", "sign.receipt_invalid"}  # a key is the matter
LINE = re.compile(r"^    seq (\d+) \[(sign\.[a-z_]+)\] (.+)$")


def test_every_signing_verdict_kind_names_its_seq_rule_key_and_receipt_alike_in_text_and_json(
        site: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """One log per kind of signing finding, audited as a referee would (text), each line
    against the verdict ``-f json`` gives: a seq (never "seq -"), the rule, the key when a
    key is the matter, the receipt's file when a receipt is."""
    d, env = site
    win, rev, forger, other = (Signer.generate() for _ in range(4))
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    for name, pub in (("site", SITE.public()), ("win", win.public(valid_from="2030-01-01")),
                      ("rev", rev.public())):
        (keys / f"{name}.pub").write_bytes(msgspec.json.encode(pub))
    (keys / "revoked").write_text(f"{rev.key_id}\n")
    events = match(key_id=SITE.key_id)
    logs = tmp_path / "logs"
    logs.mkdir()

    def as_match(mid: str, key: Signer | None, upto: int = 40) -> list[AnyEvent]:
        evs = events[:upto]  # short: the kinds of finding need no more
        evs[0] = msgspec.structs.replace(evs[0], match_id=mid,
                                         key_id=None if key is None else key.key_id)
        return evs

    def put(name: str, evs: list[AnyEvent], signs: dict[int, list[SignedHead]] | None = None,
            signer: Signer | None = None) -> None:
        with log.Writer(logs / name, signer=signer, batched=True, batch_events=BATCH) as w:
            for e in evs:
                w.append(e)
                if signs and e.seq in signs:
                    w.flush()
                    for s in signs[e.seq]:
                        w.put_signature(s)

    def heads(evs: list[AnyEvent], by: dict[int, Signer]) -> dict[int, list[SignedHead]]:
        at = heads_at(evs, set(by), ev.FORMAT_VERSION)
        return {s: [k.sign_head(evs[0].match_id, s, at[s])] for s, k in by.items()}

    # the site's match, edited at seq 50 and re-signed, and another copy cut at seq 100:
    # the players' receipts of the site's log show both
    write_signed(logs / "changed.blog", [e if e.seq != 50 else msgspec.structs.replace(
        e, note="agreed") for e in events], SITE, batch=BATCH)
    write_signed(logs / "cut.blog", events[:100], SITE, batch=BATCH)
    put("untrusted.blog", (u := as_match("m-untrusted", forger)), signer=forger)
    put("revoked.blog", as_match("m-revoked", rev), signer=rev)
    put("window.blog", as_match("m-window", win), signer=win)
    bogus = as_match("m-invalid", SITE)
    forged = heads(bogus, {19: forger})[19][0]
    put("invalid.blog", bogus, {19: [SignedHead(forged.match_id, 19, forged.head, SITE.key_id,
                                                forged.signature)]})
    mixed = as_match("m-mixed", SITE)
    put("mixed.blog", mixed, heads(mixed, {19: SITE, 29: other}))
    twice = as_match("m-twice", SITE)
    put("twice.blog", twice, {19: heads(twice, {19: SITE})[19] + heads(twice, {19: other})[19]})
    put("unsigned.blog", as_match("m-unsigned", SITE))
    tail = as_match("m-tail", SITE)
    put("tail.blog", tail, heads(tail, {9: SITE}))
    put("short.blog", as_match("m-short", SITE, 30), signer=SITE)
    # a receipt the site never signed: by the forger's key, of the site's match
    fake = Receipt.of(forger.sign_head(events[0].match_id, 60, heads_at(
        events, {60}, ev.FORMAT_VERSION)[60]), 0)
    (tmp_path / "fake.json").write_bytes(receipt_json(fake))
    theirs = write_signed(tmp_path / "theirs.blog", u[:40], forger, receipts_at=(30,))
    (tmp_path / "theirs.json").write_bytes(receipt_json(Receipt.of(theirs[30], 1)))

    held = [str(d / f"r{s}.json") for s in RECEIPTS] + [str(tmp_path / "fake.json")]
    r = _audit(d, env, logs, "--keys", keys, *(a for h in held for a in ("--receipt", h)),
               "--require-signatures", "--jobs", "1")
    alone = _audit(d, env, logs / "short.blog", "--keys", keys, "--receipt",
                   tmp_path / "theirs.json", "--require-signatures")
    assert r.returncode == alone.returncode == 1, r.stderr + alone.stderr
    options = SigningOptions(load_keyring([keys]), tuple(load_receipts(held)), True)
    alone_options = SigningOptions(options.keyring, tuple(load_receipts(
        [str(tmp_path / "theirs.json")])), True)
    seen: set[str] = set()
    for report, paths, opts in ((r.stdout, sorted(logs.iterdir()), options),
                                (alone.stdout, [logs / "short.blog"], alone_options)):
        verdicts = audit_many(paths, require_commitment=True, signing=opts)
        by_path = {v.path: v for v in verdicts}
        current = ""
        for text in report.splitlines():
            if not text.startswith(" "):
                current = text.split(": ", 1)[0]
                continue
            if "[sign." not in text:
                continue
            m = LINE.match(text)
            assert m is not None, f"{current}: {text}"
            seq, rule, message = int(m[1]), m[2], m[3]
            wanted = [f for f in by_path[current].findings if f.rule == rule and f.seq == seq]
            as_json = json.loads(msgspec.json.encode(wanted))
            assert [f["message"] for f in as_json] == [message], f"{current}: {text}"
            if rule in KEYED:
                assert re.search(r"\bkey [0-9a-f]{16}\b", message), f"{current}: {text}"
            if rule.startswith("sign.receipt"):
                assert re.search(r"\(/\S+\.json\)", message), f"{current}: {text}"
            if rule == "sign.key_window":  # the key refused, not named "trusted" after it
                assert message.count(win.key_id) == 1, message
            seen.add(rule)
    assert seen == SIGN_RULES, SIGN_RULES - seen


def test_a_log_torn_before_a_receipted_seq_is_not_left_to_read_as_a_crash(
        site: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """Cut mid-record just before the disputed move, the log reads as a crash's torn tail;
    the site made seq 40 durable before it handed out its receipt, so a crash does not
    explain the log's end there (it said only "it is damaged; see integrity")."""
    d, _ = site
    honest = (d / "honest.blog").read_bytes()
    a, b, _, _ = next(r for r in _records(honest) if r[2] and r[3] == 40)
    torn = tmp_path / "torn.blog"
    torn.write_bytes(honest[:(a + b) // 2])
    v = audit_log(torn, signing=SigningOptions(_ring(), _held(d)))
    assert v.integrity.status == "torn"
    cuts = {f.seq: f.message for f in v.findings if f.rule == "sign.receipt_cut"}
    assert set(cuts) == set(RECEIPTS), v.findings
    for seq, message in cuts.items():
        assert "but only seq 0 to 39 of the log could be read (it ends in a torn tail" in message
        assert "makes each event durable before it hands out its receipt" in message
        assert f"the site's log must reach seq {seq})" in message


def test_diff_names_the_rule_or_player_a_changed_match_start_differs_in() -> None:
    """The start's rules and players are structures: their whole text, cut at 120
    characters, hid the changed knob ("rules: {'name': 'thirteen-quick', ... vs ...")."""
    events = match(key_id=SITE.key_id)
    start = events[0]
    preset = msgspec.structs.replace(start, rules=msgspec.structs.replace(
        start.rules, target_score=1400, bonuses=msgspec.structs.replace(
            start.rules.bonuses, clean=300)))
    seq, what, prefix = diff_events(events, [preset, *events[1:]])
    assert (seq, what, prefix) == (0, ("rules.target_score: 1005 vs 1400",
                                       "rules.bonuses.clean: 200 vs 300"), None)
    swapped = msgspec.structs.replace(start, players=start.players[::-1])
    a, b = (p.name for p in start.players)
    assert diff_events(events, [swapped, *events[1:]])[1] == (
        f"players[0].name: {a} vs {b}", f"players[1].name: {b} vs {a}")
    # a list of cards is still said whole
    hand = next(e for e in events if type(e).__name__ == "CardsLaidOff")
    fewer = msgspec.structs.replace(hand, cards=hand.cards[:-1])
    i = events.index(hand)
    [line] = diff_events(events, [*events[:i], fewer, *events[i + 1:]])[1]
    assert line.startswith("cards: ") and " vs " in line


def test_a_batch_gives_the_receipts_to_a_renamed_copy_under_the_sites_old_signatures(
        site: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """A copy of the match under another match id, its chain recomputed and the site's old
    signature records left in: audited with other logs, the receipts were "for a match no
    log holds" (the copy reads only to its first signature record); it is the match renamed."""
    d, _ = site
    events = match(key_id=SITE.key_id)
    events[0] = msgspec.structs.replace(events[0], match_id="a-copy")
    copy = _under_old_signatures((d / "honest.blog").read_bytes(), events,
                                 tmp_path / "copy.blog")
    other = tmp_path / "other.blog"
    write_signed(other, match("other", key_id=SITE.key_id)[:20], SITE, batch=BATCH)
    verdicts = audit_many([other, copy], signing=SigningOptions(_ring(), _held(d)))
    assert verdicts.unmatched == (), verdicts.unmatched
    found = [(f.rule, f.seq) for f in verdicts[1].findings if f.section == "signing"]
    assert found == [("sign.receipt_changed", s) for s in RECEIPTS], verdicts[1].findings
    assert "and the log is that match renamed 'a-copy'" in verdicts[1].findings[-1].message
