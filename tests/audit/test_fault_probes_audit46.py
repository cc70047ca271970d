"""A referee's disputes, round 46: what a damaged log read anyway is, told by a field and not
by its wording; what a batch audit says of receipts, renamed matches, deals and early copies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import log
from buraco_log.events import HandStarted
from buraco_log.forensic import read_anyway
from cli.dispute_cmd import damage_rule
from tests.signing.helpers import match

ROOT = Path(__file__).resolve().parents[2]


def _written(path: Path, batch: int = 10) -> Path:
    with log.Writer(path, batched=True, batch_events=batch) as w:
        for event in match():
            w.append(event)
    return path


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


# -- the kind of damage is a field ------------------------------------------------------------


def test_a_torn_tail_and_a_damaged_record_are_told_apart_by_kind_not_by_the_failure_wording(
        tmp_path: Path) -> None:
    torn = _written(tmp_path / "torn.blog")
    os.truncate(torn, torn.stat().st_size - 7)
    damaged = _written(tmp_path / "damaged.blog")
    _flip(damaged, log.HEADER_SIZE + 60)  # inside the first record's payload
    cut, hurt = read_anyway(torn), read_anyway(damaged)
    assert (cut.kind, hurt.kind) == ("torn", "damage")
    assert read_anyway(_written(tmp_path / "whole.blog")).kind is None
    # The failure reworded (as a translation or a clearer message would): the rule stays.
    for salvage, rule in ((cut, "log.torn"), (hurt, "log.damage")):
        assert salvage.failure is not None
        reworded = msgspec.structs.replace(salvage, failure="cut: " + salvage.failure[::-1])
        assert damage_rule(reworded) == rule
        said_torn = msgspec.structs.replace(salvage, failure="torn tail, or so it says")
        assert damage_rule(said_torn) == rule


# -- receipts in a batch ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def club(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A year's directory of logs: match "a" renamed by its keeper (re-written unsigned under
    another match id), match "b" honest; the players' receipts for "a" at seqs 30 and 200, and
    one for a match whose log is gone."""
    pytest.importorskip("cryptography")
    from buraco_log.signing.keys import load_signer, write_key_pair
    from buraco_log.signing.record import Receipt, receipt_json
    from tests.signing.helpers import write_signed

    d = tmp_path_factory.mktemp("club")
    signer = load_signer(write_key_pair(d / "keys", "site").private)
    (d / "logs").mkdir()
    a = match("a", key_id=signer.key_id)
    signed = write_signed(d / "a-as-signed.blog", a, signer, receipts_at=[30, 200])
    for seq, seat in ((30, 1), (200, 0)):
        (d / f"a{seq}.json").write_bytes(receipt_json(Receipt.of(signed[seq], seat)))
    with log.Writer(d / "logs" / "a.blog") as w:
        for event in [msgspec.structs.replace(a[0], match_id="friendly-7"), *a[1:]]:
            w.append(event)
    write_signed(d / "logs" / "b.blog", match("b", key_id=signer.key_id), signer)
    gone = write_signed(d / "gone.blog", match("gone", key_id=signer.key_id), signer,
                        receipts_at=[30])
    (d / "gone.json").write_bytes(receipt_json(Receipt.of(gone[30], 1)))
    (d / "none.toml").write_text("")
    return d


def _audit_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    # a referee with no site settings of their own
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURACO_LOG_")}
    env["BURACO_LOG_CONFIG"] = str(Path(args[0]).parent / "none.toml")
    return subprocess.run([sys.executable, "-m", "cli.main", "audit", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL, env=env)


def test_a_match_renamed_in_a_batch_is_the_receipts_changed_log_not_an_unmatched_receipt(
        club: Path) -> None:
    from buraco_log.audit import audit_many, signing_options

    options = signing_options([str(club / "keys")],
                              [str(club / "a30.json"), str(club / "a200.json")])
    verdicts = audit_many(sorted(map(str, (club / "logs").iterdir())), signing=options)
    assert verdicts.unmatched == ()  # it said no log holds match "a"
    renamed, honest = verdicts
    assert [(f.rule, f.seq) for f in renamed.findings if f.section == "signing"] == [
        ("sign.receipt_changed", 30), ("sign.receipt_changed", 200)]
    assert "the log is that match renamed 'friendly-7'" in renamed.findings[-1].message
    assert renamed.signing.receipts == 2 and honest.ok
    r = _audit_cli(club / "logs", "--keys", club / "keys", "--receipt", club / "a30.json")
    assert r.returncode == 1 and r.stderr == "", r.stderr
    assert "seq 30 [sign.receipt_changed]" in r.stdout


def test_a_renamed_log_cut_before_a_later_receipt_is_judged_as_the_match_it_was(
        club: Path, tmp_path: Path) -> None:
    from buraco_log.audit import audit_many, signing_options
    from buraco_log.signing.keys import load_signer

    a = match("a", key_id=load_signer(club / "keys" / "site.key").key_id)
    with log.Writer(tmp_path / "a.blog") as w:
        for event in [msgspec.structs.replace(a[0], match_id="friendly-7"), *a[1:151]]:
            w.append(event)
    v = audit_many([str(tmp_path / "a.blog"), str(club / "logs" / "b.blog")],
                   signing=signing_options([str(club / "keys")],
                                           [str(club / "a30.json"), str(club / "a200.json")]))
    assert v.unmatched == ()
    assert [(f.rule, f.seq) for f in v[0].findings if f.section == "signing"] == [
        ("sign.receipt_changed", 30), ("sign.receipt_cut", 200)]
    assert "the log ends at seq 150" in v[0].findings[-1].message


def test_json_with_a_receipt_no_log_holds_keeps_every_logs_verdict_beside_the_error(
        club: Path) -> None:
    r = _audit_cli(club / "logs", "--keys", club / "keys", "--receipt", club / "gone.json",
                   "-f", "json")
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert "none of the logs audited holds" in out["error"]["message"]
    assert out["error"]["exit_status"] == 1
    gone = match("gone")[0]
    assert [(x["path"], x["match_id"], x["seq"], x["seat"]) for x in out["error"]["receipts"]] \
        == [(str(club / "gone.json"), gone.match_id, 30, 1)]  # type: ignore[union-attr]
    assert [v["path"] for v in out["verdicts"]] == [str(club / "logs" / n)
                                                   for n in ("a.blog", "b.blog")]
    assert r.stderr.count("\n") == 1 and "none of the logs audited holds" in r.stderr


def test_a_receipt_past_the_end_of_the_log_may_be_of_an_early_copy(club: Path,
                                                                   tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    from buraco_log.audit import audit_log, signing_options
    from buraco_log.signing.keys import load_signer
    from tests.signing.helpers import write_signed

    signer = load_signer(club / "keys" / "site.key")
    # the copy a referee was handed, taken at seq 99 of a match the site signed on to seq 200
    write_signed(tmp_path / "copy.blog", match("a", key_id=signer.key_id)[:100], signer)
    v = audit_log(tmp_path / "copy.blog",
                  signing=signing_options([str(club / "keys")], [str(club / "a200.json")]))
    [cut] = [f for f in v.findings if f.rule == "sign.receipt_cut"]
    assert cut.message.endswith("the log ends at seq 99 (it was cut, or is a copy taken before "
                                "seq 200 was written: the site's log must reach seq 200)")


# -- a forged deal in a referee's words -------------------------------------------------------


def _forged(tmp_path: Path, change: str) -> tuple[Path, HandStarted, HandStarted]:
    """A committed match whose first deal was changed after it was dealt, written sealed anew
    (only provenance can tell); the log, the deal as dealt and as recorded."""
    events = match("forged")
    i, dealt = next((i, e) for i, e in enumerate(events) if isinstance(e, HandStarted))
    if change == "stock":  # two cards deep in the stock swapped
        stock = list(dealt.stock)
        stock[-1], stock[-2] = stock[-2], stock[-1]
        forged = msgspec.structs.replace(dealt, stock=tuple(stock))
    else:  # seat 0's first card swapped with the bottom card of the stock
        hand0, stock = list(dealt.hands[0]), list(dealt.stock)
        hand0[0], stock[-1] = stock[-1], hand0[0]
        forged = msgspec.structs.replace(dealt, hands=(tuple(hand0), *dealt.hands[1:]),
                                         stock=tuple(stock))
    events[i] = forged
    path = tmp_path / f"{change}.blog"
    log.write_log(path, events, validate=False)
    return path, dealt, forged


def test_a_deal_changed_in_its_stock_names_the_card_and_what_it_means(tmp_path: Path) -> None:
    from buraco_log.audit import audit_log
    from buraco_log.cards import format_card

    path, dealt, forged = _forged(tmp_path, "stock")
    [f] = audit_log(path).provenance.findings
    n = len(dealt.stock) - 1  # the second card from the bottom, counted from the top
    assert (f.rule, f.seq) == ("deal.mismatch", dealt.seq)
    assert f.message == (
        f"hand 0: the deal in the log is not the one its seeds give: card {n} of the stock, "
        f"counting from the top, is {format_card(forged.stock[n - 1])} in the log, "
        f"{format_card(dealt.stock[n - 1])} by the seeds; the seeds fix every deal before "
        "play, so the cards were changed after the deal, or not dealt from these seeds")


def test_a_deal_changed_in_a_hand_names_the_cards_the_seat_was_given(tmp_path: Path) -> None:
    from buraco_log.audit import audit_log
    from buraco_log.cards import format_card

    path, dealt, _ = _forged(tmp_path, "hand")
    [f] = audit_log(path).provenance.findings
    given, lost = format_card(dealt.stock[-1]), format_card(dealt.hands[0][0])
    assert f"seat 0's hand holds {given} in the log, where the seeds deal {lost}" in f.message
    assert "derived" not in f.message and "position" not in f.message


# -- a JSON Lines copy rewritten by a tool that sorts keys ------------------------------------


def _sorted_keys(src: Path, dst: Path) -> Path:
    """``src`` as `jq -S -c` would give it back: every line's keys sorted, nothing else."""
    lines = [json.dumps(json.loads(line), sort_keys=True) if line.strip() else line
             for line in src.read_text().splitlines()]
    dst.write_text("\n".join(lines) + "\n")
    return dst


@pytest.mark.parametrize("signed", [True, False], ids=["signature-line", "end-line"])
def test_a_copy_whose_keys_a_json_tool_sorted_is_told_from_an_edited_one(
        tmp_path: Path, signed: bool) -> None:
    pytest.importorskip("cryptography")
    from buraco_log import jsonl
    from buraco_log.audit import audit_log
    from buraco_log.signing.keys import Signer
    from tests.signing.helpers import write_signed

    events = match("sorted")
    start = events[0]
    assert list(start.metadata) != sorted(start.metadata)  # type: ignore[union-attr]
    if signed:
        site = Signer.generate()
        events[0] = msgspec.structs.replace(start, key_id=site.key_id)
        write_signed(tmp_path / "m.blog", events, site, batch=10)
    else:
        log.write_log(tmp_path / "m.blog", events)
    jsonl.convert(tmp_path / "m.blog", tmp_path / "m.jsonl", "jsonl")
    copy = audit_log(_sorted_keys(tmp_path / "m.jsonl", tmp_path / "copy.jsonl"))
    assert copy.integrity.kind == "chain"  # the chain covers the metadata's key order
    order = ", ".join(start.metadata)  # type: ignore[union-attr]
    [note] = [n for n in copy.notes if "reorders keys" in n]
    assert f"once the match start's metadata keys are put back in the order {order}" in note
    # an event really changed: no such note, whatever the key order
    lines = (tmp_path / "copy.jsonl").read_text().splitlines()
    lines[5] = lines[5].replace('"seq": 4', '"note": "edited", "seq": 4')
    (tmp_path / "edited.jsonl").write_text("\n".join(lines) + "\n")
    edited = audit_log(tmp_path / "edited.jsonl")
    assert edited.integrity.kind == "chain"
    assert not any("reorders keys" in n for n in edited.notes)


def test_a_receipt_past_a_repaired_log_notes_the_repair_backup(club: Path,
                                                               tmp_path: Path) -> None:
    from buraco_log.audit import audit_log, signing_options
    from buraco_log.signing.keys import load_signer
    from tests.signing.helpers import write_signed

    signer = load_signer(club / "keys" / "site.key")
    path = tmp_path / "a.blog"
    write_signed(path, match("a", key_id=signer.key_id), signer, batch=10)
    os.truncate(path, path.stat().st_size * 2 // 3)  # the crash: its last record torn
    assert log.repair(path) is not None
    options = signing_options([str(club / "keys")], [str(club / "a200.json")])
    v = audit_log(path, signing=options)
    assert [f.rule for f in v.findings] == ["sign.receipt_cut"]
    assert v.notes[-1].startswith(f"signing: {path}.bak is beside the log: `buraco-log "
                                  "repair` keeps there the bytes it cuts off a torn tail")
    os.unlink(f"{path}.bak")  # no backup: nothing says it was repaired
    assert not any("repair" in n for n in audit_log(path, signing=options).notes)


# -- a club's year: 1,000 logs, the bad ones at the end ---------------------------------------


@pytest.mark.slow  # 1,000 logs audited: 10 to 20 s
def test_a_thousand_logs_with_bad_ones_at_the_end_report_every_good_one(
        tmp_path: Path) -> None:
    import pty

    logs = tmp_path / "logs"
    logs.mkdir()
    good = _written(tmp_path / "good.blog", batch=400).read_bytes()
    for i in range(997):
        (logs / f"m{i:04d}.blog").write_bytes(good)
    (logs / "m0997.blog").write_bytes(good[:-7])  # torn
    hurt = bytearray(good)
    hurt[log.HEADER_SIZE + 60] ^= 0xFF
    (logs / "m0998.blog").write_bytes(bytes(hurt))
    (logs / "m0999.blog").write_bytes(b"not a log\n")
    out = tmp_path / "report.txt"
    main, side = pty.openpty()  # stderr a terminal: the progress bar is drawn there
    with open(out, "w") as report:
        p = subprocess.Popen([sys.executable, "-m", "cli.main", "audit", str(logs)], cwd=ROOT,
                             stdout=report, stderr=side, stdin=subprocess.DEVNULL,
                             env=dict(os.environ, TERM="xterm", COLUMNS="100"))
    os.close(side)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    assert p.wait(timeout=600) == 2  # the worst entry: m0999 is no log (the others: findings)
    os.close(main)
    assert b"1000/1000" in seen  # the bar reached the end, on stderr
    lines = out.read_text().splitlines()
    verdicts = [line for line in lines if line.startswith(str(logs))]
    assert len(verdicts) == 1000
    assert sum(": OK " in line for line in verdicts) == 997
    assert [line.split(":")[0] for line in verdicts if "FINDINGS" in line] == [
        str(logs / f"m{i:04d}.blog") for i in (997, 998, 999)]
    assert lines[-1].startswith("audited 1000 logs: 997 clean, 3 with findings (integrity 3)")
