"""An outsider's verifier against ``buraco-log audit``: the format promise, checked.

A club's referee, or another site, checks a signed log and a player's receipt with the
documents alone. ``tests/signing/outsider.py`` is such a verifier (no buraco_log in it); these
tests run it and ``buraco-log audit`` over the same signed logs, binary and JSON Lines, sealed
and live, tampered in each region, with a key rotated and a second signature, and ask both to
agree. Where they disagreed, the documents or the code were wrong.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

from buraco_log import jsonl, log
from buraco_log.events import AnyEvent
from buraco_log.signing.keys import Keyring, Signer
from buraco_log.signing.record import Receipt, SignedHead

from . import outsider
from .helpers import audit, held, match

REPO = Path(__file__).resolve().parents[2]
EXE = str(Path(sys.executable).with_name("buraco-log"))
JAN_2026 = 1767225600000  # 2026-01-01T00:00:00Z in ms
ROTATE = "2026-07-01"
ROTATE_MS = 1782864000000


def _pub(path: Path, signer: Signer, valid_from: str | None = None,
         valid_until: str | None = None) -> Path:
    path.write_bytes(msgspec.json.encode(signer.public(valid_from, valid_until)))
    path.chmod(0o644)
    return path


def _receipt(path: Path, signed: SignedHead, seat: int = 1) -> Path:
    path.write_bytes(msgspec.json.encode(Receipt.of(signed, seat)))
    return path


def _started(events: list[AnyEvent], at: int, key_id: str) -> list[AnyEvent]:
    events = list(events)
    events[0] = msgspec.structs.replace(events[0], key_id=key_id, at=at)
    return events


def _write(path: Path, events: list[AnyEvent], signer: Signer, *, sealed: bool = True,
           receipts_at: tuple[int, ...] = (), second: Signer | None = None,
           second_at: int = -1, batch: int = 0) -> dict[int, SignedHead]:
    out = {}
    with log.Writer(path, signer=signer, sealed=sealed, validate=False, batched=batch > 0,
                    batch_events=max(batch, 1)) as w:
        for e in events:
            w.append(e)
            if e.seq in receipts_at:
                out[e.seq] = w.receipt()
            if e.seq == second_at and second is not None:
                w.put_signature(second.sign_head(events[0].match_id, e.seq,  # type: ignore[attr-defined]
                                                 bytes.fromhex(w.head)))
    return out


def _records(data: bytes) -> Iterator[tuple[int, int, int, int]]:
    """(offset, header size, payload length, count) of each record, from LOG_FORMAT.md."""
    size = 56 if int.from_bytes(data[12:16], "little") & 1 else 24
    off = outsider.HEADER
    while off < len(data):
        length = int.from_bytes(data[off:off + 4], "little")
        yield off, size, length, int.from_bytes(data[off + 4:off + 8], "little")
        off += size + length


def _card_byte(data: bytes) -> int:
    """The byte of the card of the first discard, ["dc", seat, card, ...] (a fixint, so
    flipping its low bit keeps the record MessagePack)."""
    for off, size, length, count in _records(data):
        if not count:
            continue
        at = off + size + len(outsider.pack([0] * count)) - count  # past the array's header
        for raw in outsider.array_items(data[off + size:off + size + length]):
            if raw[1:4] == b"\xa2dc" and raw[5] < 0x80:
                return at + 5
            at += len(raw)
    raise AssertionError("no discard")


def _capital_key_ids(data: bytes) -> bytes:
    """Every signature record's key id in capitals, its CRCs recomputed: not signed, and a
    key id's capitals are the same id (docs/signing.md)."""
    out = bytearray(data)
    for off, size, length, count in _records(data):
        if count == 0:
            p = off + size
            rec, _ = outsider.unpack(data[p:p + length])
            kid = rec[4].encode()
            out[p:p + length] = data[p:p + length].replace(kid, kid.upper())
    return _forge(out)


def _header_crc(data: bytearray) -> bytearray:
    data[16:20] = zlib.crc32(bytes(data[:16])).to_bytes(4, "little")
    return data


def _forge(data: bytearray) -> bytes:
    """Every record's CRCs and chain field recomputed, as a keeper rewriting the file would."""
    version = int.from_bytes(data[10:12], "little")
    chain = hashlib.sha256(outsider.CHAIN_DOMAIN + version.to_bytes(2, "little"))
    for off, size, length, count in list(_records(bytes(data))):
        payload = bytes(data[off + size:off + size + length])
        if count:
            for raw in outsider.array_items(payload):
                chain.update(raw)
        if size == 56:
            data[off + 16:off + 48] = chain.digest()
        data[off + size - 8:off + size - 4] = zlib.crc32(payload).to_bytes(4, "little")
        data[off + size - 4:off + size] = zlib.crc32(
            bytes(data[off:off + size - 4])).to_bytes(4, "little")
    return bytes(data)


@dataclass
class Case:
    name: str
    log: Path
    keys: tuple[Path, ...]
    receipts: tuple[Path, ...] = ()


def _outsider(case: Case) -> outsider.Verdict:
    receipts = tuple(json.loads(p.read_text()) for p in case.receipts)
    return outsider.judge(case.log, outsider.Keys.read(*case.keys), receipts)


def _cli(case: Case) -> tuple[int, str]:
    argv = [EXE, "audit", str(case.log), "--format", "json"]
    for k in case.keys:
        argv += ["--keys", str(k)]
    for r in case.receipts:
        argv += ["--receipt", str(r)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})
    return proc.returncode, proc.stdout + proc.stderr[-2000:]


def _disagreement(case: Case) -> str | None:
    """Why the outsider and ``buraco-log audit`` disagree on ``case``, or None: the verdict,
    and of a log both accept, its head and its count of signatures."""
    mine = _outsider(case)
    rc, said = _cli(case)
    if rc not in (0, 1) and not (rc == 2 and not mine.ok):
        return f"{case.name}: exit {rc}: {said[-600:]}"
    if mine.ok != (rc == 0):
        return f"{case.name}: outsider {mine.problems[:2]}, exit {rc}: {said[-600:]}"
    if rc == 0:
        integrity = json.loads(said[:said.rindex("}") + 1])["integrity"]
        ours = (mine.heads[max(mine.heads)].hex() if mine.heads else None, len(mine.signatures))
        if ours != (integrity["head"], integrity["signatures"]):
            return f"{case.name}: outsider {ours}, audit {integrity}"
    return None


def _agree(case: Case) -> None:
    assert _disagreement(case) is None


# --- the outsider itself ----------------------------------------------------------------------

def test_the_outsider_imports_nothing_of_buraco_log() -> None:
    tree = ast.parse((Path(__file__).parent / "outsider.py").read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {n for n in names if n.startswith(("buraco_log", "msgspec", "tests"))}, names


def test_the_outsider_reads_the_frozen_logs_as_buraco_log_does() -> None:
    """Binary and JSON Lines, sealed and not: the same head, count and signatures."""
    fmt = REPO / "examples" / "format"
    keys = outsider.Keys.read(fmt / "v2.pub")
    for name in ("v2", "v2-unsealed"):
        expected = json.loads((fmt / "v2.expected.json").read_text())[f"{name}.blog"]
        for suffix in (".blog", ".jsonl"):
            v = outsider.judge(fmt / f"{name}{suffix}", keys)
            info = log.verify(fmt / f"{name}{suffix}") if suffix == ".blog" else None
            assert v.ok, (name, suffix, v.problems)
            assert v.heads[max(v.heads)].hex() == expected["head"], (name, suffix)
            assert len(v.heads) == expected["events"]
            assert len(v.signatures) == expected["signatures"]
            if info is not None:
                assert info.head == expected["head"]


def test_a_signed_log_and_its_receipts_agree_in_process(tmp_path: Path) -> None:
    """The default run's twin of the slow sweep: one small signed match, changed three ways
    that break it and one that does not (a key id written in capitals)."""
    site = Signer.generate()
    events = _started(match("o55"), JAN_2026, site.key_id)[:60]  # a match under way
    # the length prefix counts the match id's UTF-8 bytes, not its characters
    events[0] = msgspec.structs.replace(events[0], match_id="partida-ñ-🂡-" + "é" * 40)
    path = tmp_path / "m.blog"
    got = _write(path, events, site, sealed=False, receipts_at=(5,), batch=16)
    keys_file = _pub(tmp_path / "site.pub", site)
    ring = Keyring([site.public()])
    receipt = {**msgspec.to_builtins(Receipt.of(got[5], 1))}
    data = path.read_bytes()
    recs = list(_records(data))
    sig_off, sig_size, sig_len, _ = next(r for r in recs if r[3] == 0)
    tampered = {
        "whole": data,
        "event": _forge(_flip(data, _card_byte(data))),
        "signature": _forge(_flip(data, sig_off + sig_size + sig_len - 5)),
        "capitals": _capital_key_ids(data),
    }
    for name, blob in tampered.items():
        p = tmp_path / f"{name}.blog"
        p.write_bytes(blob)
        mine = outsider.judge(p, outsider.Keys.read(keys_file), (receipt,))
        theirs = audit(p, ring, [held(got[5])])
        assert mine.ok == theirs.ok, (name, mine.problems, [f.rule for f in theirs.findings])
        assert mine.ok == (name in ("whole", "capitals")), (name, mine.problems)
    # its JSON Lines form, and a copy whose tool sorted the keys of every object but the
    # metadata: the rules and players are structs, written in their own order whatever the line's
    jl = tmp_path / "m.jsonl"
    jsonl.convert(path, jl, "jsonl")
    sorted_jl = tmp_path / "sorted.jsonl"
    sorted_jl.write_text("".join(json.dumps(_sorted(json.loads(line))) + "\n"
                                 for line in jl.read_text().splitlines()))
    for p in (jl, sorted_jl):
        mine = outsider.judge(p, outsider.Keys.read(keys_file), (receipt,))
        theirs = audit(p, ring, [held(got[5])])
        assert mine.ok and theirs.ok, (p.name, mine.problems, [f.rule for f in theirs.findings])
        assert mine.heads[max(mine.heads)].hex() == theirs.integrity.head  # type: ignore[attr-defined]


def _sorted(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: obj[k] if k == "metadata" else _sorted(obj[k]) for k in sorted(obj)}
    return [_sorted(x) for x in obj] if isinstance(obj, list) else obj


def test_the_documented_key_orders_are_the_encoded_ones() -> None:
    """docs/signing.md lists the keys of the rules, points, bonuses and a player in the order
    the chain hashes them; the outsider takes them from there."""
    from buraco_log.events import Player
    from buraco_log.rules import Bonuses, CardPoints, Rules

    doc = (REPO / "docs" / "signing.md").read_text()
    listed = {}
    for kind in ("rules", "points", "bonuses", "a player"):
        start = doc.index(f"   - {kind}: ")
        end = doc.index("\n   -", start + 5) if kind != "a player" else doc.index("\n\n", start)
        listed[kind.split()[-1]] = tuple(doc[start:end].split("`")[1::2])
    assert listed == outsider.MAP_ORDER
    assert listed == {"rules": Rules.__struct_fields__, "points": CardPoints.__struct_fields__,
                      "bonuses": Bonuses.__struct_fields__, "player": Player.__struct_fields__}


def _flip(data: bytes, at: int) -> bytearray:
    out = bytearray(data)
    out[at] ^= 0x01
    return out


# --- the sweep: every example log, signed, each form, tampered -------------------------------

def _examples() -> list[tuple[str, list[AnyEvent]]]:
    out = []
    for p in sorted((REPO / "examples" / "golden").glob("*.jsonl")):
        out.append((f"golden-{p.stem}", jsonl.read_jsonl(p)))
    for p in sorted((REPO / "examples" / "sim").glob("*.blog")):
        out.append((f"sim-{p.stem}", log.read_events(p)))
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("o55")
    old, new, witness, stranger = (Signer.generate() for _ in range(4))
    keys = d / "keys"
    keys.mkdir(mode=0o700)
    _pub(keys / "site-2026.pub", old, "2026-01-01", ROTATE)
    _pub(keys / "site-2027.pub", new, ROTATE)
    _pub(keys / "witness.pub", witness)
    return {"dir": d, "old": old, "new": new, "witness": witness, "stranger": stranger,
            "keys": keys}


def _cases(world: dict[str, Any], name: str, events: list[AnyEvent],
           full: bool = True) -> list[Case]:
    d: Path = world["dir"] / name
    d.mkdir()
    keys = (world["keys"],)
    old: Signer = world["old"]
    cases = []
    ev = _started(events, JAN_2026, old.key_id)
    last = ev[-1].seq
    mid = min(5, last)
    for sealed in (True, False):
        tag = "sealed" if sealed else "unsealed"
        blog = d / f"{tag}.blog"
        # the golden logs signed after every event; the long simulated ones per batch
        got = _write(blog, ev, old, sealed=sealed, receipts_at=(mid, last),
                     batch=0 if full else 64)
        r_mid = _receipt(d / f"{tag}-r{mid}.json", got[mid])
        r_last = _receipt(d / f"{tag}-r{last}.json", got[last])
        jl = d / f"{tag}.jsonl"
        jsonl.convert(blog, jl, "jsonl")
        cases += [Case(f"{name} {tag}", blog, keys, (r_mid, r_last)),
                  Case(f"{name} {tag} jsonl", jl, keys, (r_mid, r_last))]
        data = blog.read_bytes()
        caps = d / f"{tag}-capitals.blog"
        caps.write_bytes(_capital_key_ids(data))
        cases.append(Case(f"{name} {tag} key id in capitals", caps, keys, (r_mid,)))
        if not full:
            continue
        recs = list(_records(data))
        sig_rec = next(r for r in recs if r[3] == 0)
        for region, at in (("header", 12), ("event", _card_byte(data)),
                           ("signature", sig_rec[0] + sig_rec[1] + sig_rec[2] - 3)):
            for forged in (False, True):
                blob = bytes(_flip(data, at))
                if forged:  # the header's CRC too: the sealed flag turned, framing all else
                    blob = _forge(_header_crc(bytearray(blob))) if region != "header" else \
                        bytes(_header_crc(bytearray(blob)))
                p = d / f"{tag}-{region}{'-forged' if forged else ''}.blog"
                p.write_bytes(blob)
                cases.append(Case(f"{name} {tag} {region} {forged}", p, keys, (r_mid,)))
        # a receipt changed: its head, its signature, its seq
        doc = json.loads(r_mid.read_text())
        for fld in ("head", "signature"):
            bad = dict(doc, **{fld: ("0" if doc[fld][0] != "0" else "1") + doc[fld][1:]})
            p = d / f"{tag}-r-{fld}.json"
            p.write_text(json.dumps(bad))
            cases.append(Case(f"{name} {tag} receipt {fld}", blog, keys, (p,)))
        # a JSON Lines event changed (one card), its signatures left as they were
        lines = jl.read_text().splitlines()
        i = next(i for i, ln in enumerate(lines) if '"t":"dc"' in ln)
        obj = json.loads(lines[i])
        obj["card"] = "JK" if obj["card"] != "JK" else "Ah"
        lines[i] = json.dumps(obj)
        p = d / f"{tag}-changed.jsonl"
        p.write_text("\n".join(lines) + "\n")
        cases.append(Case(f"{name} {tag} jsonl changed", p, keys, (r_mid,)))
        # a JSON Lines signature line's signature changed (one hex digit)
        lines = jl.read_text().splitlines()
        i = next(i for i, ln in enumerate(lines) if '"log": "signature"' in ln)
        obj = json.loads(lines[i])
        obj["signature"] = ("1" if obj["signature"][0] == "0" else "0") + obj["signature"][1:]
        lines[i] = json.dumps(obj)
        p = d / f"{tag}-signature.jsonl"
        p.write_text("\n".join(lines) + "\n")
        cases.append(Case(f"{name} {tag} jsonl signature changed", p, keys))
    if not full:
        return cases
    # the old key revoked: its every signature, and the receipts it made
    revoked = d / "revoked-keys"
    shutil.copytree(world["keys"], revoked)
    (revoked / "revoked").write_text(f"# leaked\n{old.key_id.upper()}\n")
    cases.append(Case(f"{name} revoked", d / "sealed.blog", (revoked,),
                      (d / f"sealed-r{mid}.json",)))
    # rotation: the old key signs a match started after it retired; the new key one after
    late = _started(events, ROTATE_MS + 60_000, old.key_id)
    _write(d / "late-old.blog", late, old)
    cases.append(Case(f"{name} retired key", d / "late-old.blog", keys))
    new_ev = _started(events, ROTATE_MS + 60_000, world["new"].key_id)
    _write(d / "late-new.blog", new_ev, world["new"])
    cases.append(Case(f"{name} next key", d / "late-new.blog", keys))
    # the window holds its start, not its end; a receipt's key is judged without a window
    edge = _started(events, ROTATE_MS, old.key_id)
    _write(d / "at-end.blog", edge, old)
    cases.append(Case(f"{name} started as the old key retired", d / "at-end.blog", keys))
    late_heads = outsider.read_log(d / "late-new.blog").heads
    by_old = _receipt(d / "by-old.json", old.sign_head(events[0].match_id,  # type: ignore[attr-defined]
                                                       mid, late_heads[mid]))
    cases.append(Case(f"{name} receipt by the retired key", d / "late-new.blog", keys,
                      (by_old,)))
    # a second signature of one head, by the witness (trusted) and by a stranger
    for who in ("witness", "stranger"):
        p = d / f"second-{who}.blog"
        _write(p, ev, old, second=world[who], second_at=mid)
        cases.append(Case(f"{name} second signature by {who}", p, keys))
    # the witness's receipt (a co-signature kept by the witness)
    w: Signer = world["witness"]
    heads = outsider.read_log(d / "sealed.blog").heads
    wr = _receipt(d / "witness.json", w.sign_head(ev[0].match_id, mid,  # type: ignore[attr-defined]
                                                  heads[mid]))
    cases.append(Case(f"{name} witness receipt", d / "sealed.blog", keys, (wr,)))
    return cases


@pytest.mark.slow
def test_every_example_log_signed_both_verifiers_agree(world: dict[str, Any]) -> None:
    disagreements = []
    seen = 0
    for name, events in _examples():
        for case in _cases(world, name, events, full=name.startswith("golden")):
            seen += 1
            if (why := _disagreement(case)) is not None:
                disagreements.append(why)
    assert seen > 300
    assert not disagreements, disagreements[:5]


@pytest.mark.slow
@pytest.mark.parametrize("sign_at", ["segment", "end"])
def test_a_live_log_and_its_receipt_agree_as_it_grows(world: dict[str, Any],
                                                      sign_at: str) -> None:
    """A receipt of an event of a log still being written; the log, and copies of it, as it
    grows (signed per event, or only at its end: a live log then holds no signature yet)."""
    d: Path = world["dir"] / f"live-{sign_at}"
    d.mkdir()
    old: Signer = world["old"]
    ev = _started(match("o55-live"), JAN_2026, old.key_id)
    path = d / "live.blog"
    checked = 0
    with log.Writer(path, signer=old, sign_at=sign_at) as w:  # type: ignore[arg-type]
        receipt: Path | None = None
        for e in ev[:-1]:
            w.append(e)
            if e.seq == 7:
                receipt = _receipt(d / "r7.json", w.receipt())
            if receipt is not None and e.seq in (7, 30, len(ev) - 2):
                snap = d / f"at-{e.seq}.blog"
                shutil.copyfile(path, snap)
                for p in (path, snap):
                    _agree(Case(f"live {sign_at} {p.name} at {e.seq}", p, (world["keys"],),
                                (receipt,)))
                    checked += 1
    assert checked == 6


# --- published keys an outsider must refuse --------------------------------------------------

SMALL_ORDER = bytes([1]) + bytes(31)  # the identity point: [8]A is the identity


def _forged_by(path: Path, raw: bytes) -> Path:
    """A small match "signed" by the key ``raw`` with R the identity and S zero."""
    kid = outsider.key_id_of(raw)
    events = _started(match("o55-weak"), JAN_2026, kid)[:12]
    with log.Writer(path, validate=False, batched=True) as w:
        for e in events:
            w.append(e)
        w.flush()
        w.put_signature(SignedHead(events[0].match_id, events[-1].seq,  # type: ignore[attr-defined]
                                   bytes.fromhex(w.head), kid, SMALL_ORDER + bytes(32)))
    return path


def test_a_published_key_of_small_order_is_refused_by_both(tmp_path: Path) -> None:
    """``cryptography`` alone accepts the forgery; the documents say to refuse the key, and
    the outsider that follows them refuses it as buraco-log does."""
    forged = _forged_by(tmp_path / "forged.blog", SMALL_ORDER)
    v = outsider.read_log(forged)
    s = v.signatures[0]
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    Ed25519PublicKey.from_public_bytes(SMALL_ORDER).verify(  # no InvalidSignature: accepted
        s.signature, outsider.message(s.match_id, s.seq, s.head))
    pub = {"key_id": s.key_id, "algorithm": "ed25519", "public_key": SMALL_ORDER.hex(),
           "valid_from": None, "valid_until": None}
    with pytest.raises(ValueError, match="no safe Ed25519 key"):
        outsider.Keys().add(pub)
    from buraco_log.signing.keys import PublicKey, SigningError

    with pytest.raises(SigningError, match="small order"):
        Keyring([msgspec.convert(pub, PublicKey)])


def test_a_published_key_whose_id_is_not_derived_is_refused_by_both() -> None:
    site = Signer.generate()
    pub = {**msgspec.to_builtins(site.public()), "key_id": "0123456789abcdef"}
    with pytest.raises(ValueError, match="does not match"):
        outsider.Keys().add(pub)
    from buraco_log.signing.keys import PublicKey, SigningError

    with pytest.raises(SigningError, match="does not match"):
        Keyring([msgspec.convert(pub, PublicKey)])


@pytest.mark.slow
def test_the_command_refuses_the_keys_the_outsider_refuses(tmp_path: Path) -> None:
    forged = _forged_by(tmp_path / "forged.blog", SMALL_ORDER)
    site = Signer.generate()
    for name, pub in (
        ("weak", {"key_id": outsider.key_id_of(SMALL_ORDER), "algorithm": "ed25519",
                  "public_key": SMALL_ORDER.hex(), "valid_from": None, "valid_until": None}),
        ("chosen-id", {**msgspec.to_builtins(site.public()), "key_id": "0123456789abcdef"}),
    ):
        p = tmp_path / f"{name}.pub"
        p.write_text(json.dumps(pub))
        with pytest.raises(ValueError):
            outsider.Keys.read(p)
        rc, said = _cli(Case(name, forged, (p,)))
        assert rc == 2, said


def test_the_documented_message_is_the_one_signed() -> None:
    """The domain tags and sizes docs/signing.md gives are the bytes buraco_log signs and
    hashes (the outsider copies them from there)."""
    import re

    from buraco_log.signing import record

    doc = (REPO / "docs" / "signing.md").read_text()
    block = doc[doc.index("3. **The message a key signs**"):]
    domain_line = next(ln for ln in block.splitlines() if 'b"buraco-log signed head' in ln)
    literal = re.search(r'(b"[^"]*")', domain_line)
    assert literal is not None
    domain = ast.literal_eval(literal.group(1))
    assert domain == outsider.SIGNED_DOMAIN == record.DOMAIN
    assert f"{len(domain)} bytes" in domain_line
    key_domain = re.search(r'sha256\((b"buraco-log key[^"]*")', doc)
    assert key_domain is not None
    assert ast.literal_eval(key_domain.group(1)) == outsider.KEY_DOMAIN
    site = Signer.generate()
    assert outsider.key_id_of(site.public_key) == site.key_id
    assert outsider.message("ñ", 7, bytes(32)) == record.message("ñ", 7, bytes(32))


def _spaced(hex_text: str) -> str:
    return " ".join(hex_text[i:i + 2] for i in range(0, len(hex_text), 2))


def test_hex_with_spaces_is_no_hex_to_either(tmp_path: Path) -> None:
    """A receipt's head, a signature line's signature, a published key: "hex digits", as the
    documents say; Python's bytes.fromhex also takes "9a 1e ...", and buraco-log took it."""
    from buraco_log.signing.keys import PublicKey, SigningError

    fmt = REPO / "examples" / "format"
    lines = (fmt / "v2.jsonl").read_text().splitlines()[:5]
    line = json.loads(lines[2])
    assert line["log"] == "signature"
    # a receipt
    receipt = {k: line[k] for k in ("match_id", "seq", "head", "key_id", "signature")}
    receipt["head"] = _spaced(receipt["head"])
    v = outsider.read_log(fmt / "v2.jsonl")
    assert outsider.receipt_problems(receipt, v, outsider.Keys.read(fmt / "v2.pub")) == [
        "not a receipt"]
    with pytest.raises(ValueError, match="hexadecimal"):
        msgspec.convert(receipt, Receipt).signed_head()
    # a JSON Lines signature line
    lines[2] = json.dumps({**line, "signature": _spaced(line["signature"])})
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("\n".join(lines) + "\n")
    assert not outsider.read_log(spaced).ok
    with pytest.raises(log.LogFormatError, match="hexadecimal"):
        jsonl.read_jsonl(spaced)
    # a published key
    pub = json.loads((fmt / "v2.pub").read_text())
    pub["public_key"] = _spaced(pub["public_key"])
    with pytest.raises(ValueError, match="not hexadecimal"):
        outsider.Keys().add(pub)
    with pytest.raises(SigningError, match="not hexadecimal"):
        Keyring([msgspec.convert(pub, PublicKey)])
