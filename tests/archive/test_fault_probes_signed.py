"""Ingest of signed logs whose signature records the audit refuses without any key: a record
copied after itself (``sign.duplicate``), a record by another key than the match start records
(``sign.key_mismatch``). Both were archived as OK and ``signed`` while `audit` said FINDINGS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from buraco_log import log
from buraco_log.archive import ingest, query
from buraco_log.audit import audit_log, read_log_signed
from buraco_log.events import FORMAT_VERSION
from buraco_log.signing import check
from buraco_log.signing import record as sigrec
from tests.signing.helpers import match, write_signed

pytest.importorskip("cryptography")

from buraco_log.signing import keys

SITE = keys.Signer.generate()
OTHER = keys.Signer.generate()
REPO = Path(__file__).resolve().parents[2]


def _copied_record(src: Path, dst: Path) -> None:
    """``src`` with its second signature record repeated right after itself."""
    data = src.read_bytes()
    reader = log.Reader(src)
    reader.read_header()
    reader.close()
    payload = sigrec.encode(read_log_signed(src)[2].signatures[1])
    end = data.index(payload) + len(payload)
    start = end - len(payload) - reader._seg_head_size
    dst.write_bytes(data[:end] + data[start:end] + data[end:])


def _signed_by_another_key(dst: Path) -> None:
    """A match whose start records the site's key, signed (validly) by another key."""
    events = match(seed="other-key", key_id=SITE.key_id)
    last = events[-1].seq
    head = check.heads_at(events, {last}, FORMAT_VERSION)[last]
    with log.Writer(dst, validate=False) as w:
        for e in events:
            w.append(e)
        w.put_signature(OTHER.sign_head(events[0].match_id, last, head))  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("signed-logs")
    good = root / "good.blog"
    write_signed(good, match(seed="good", key_id=SITE.key_id), SITE, batch=32)
    bad = root / "bad"
    bad.mkdir()
    _copied_record(good, bad / "copied.blog")
    _signed_by_another_key(bad / "other-key.blog")
    return root


@pytest.mark.parametrize(("name", "rule"), [("copied.blog", "sign.duplicate"),
                                            ("other-key.blog", "sign.key_mismatch")])
def test_a_log_the_audit_refuses_for_its_signatures_is_refused_by_ingest(
        logs: Path, tmp_path: Path, name: str, rule: str) -> None:
    path = logs / "bad" / name
    verdict = audit_log(path)
    assert [f.rule for f in verdict.findings] == [rule]  # what `audit` says, with no key
    report = ingest([str(path)], tmp_path / "a")
    assert report.added == 0 and [e.rule for e in report.errors] == [rule]
    rows = query(tmp_path / "a", "SELECT code, rule, seq, verdict_json FROM errors").to_pylist()
    assert len(rows) == 1 and rows[0]["code"] == "signing" and rows[0]["rule"] == rule
    assert rows[0]["seq"] == verdict.findings[0].seq
    assert msgspec.json.decode(rows[0]["verdict_json"])["findings"][0]["rule"] == rule
    assert query(tmp_path / "a", "SELECT count(*) AS n FROM matches").to_pylist() == [{"n": 0}]


def test_ingest_names_the_rule_in_one_line_and_keeps_the_good_log(logs: Path,
                                                                 tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "cli.main", "ingest", str(logs), "--archive",
                        str(tmp_path / "a")], capture_output=True, text=True, cwd=REPO,
                       timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r
    refused = sorted(line for line in r.stdout.splitlines() if line.startswith("refused:"))
    assert len(refused) == 2
    assert "copied.blog: seq " in refused[0] and "[sign.duplicate]" in refused[0]
    assert "other-key.blog: seq " in refused[1] and "[sign.key_mismatch]" in refused[1]
    rows = query(tmp_path / "a", "SELECT signed, key_id FROM matches").to_pylist()
    assert rows == [{"signed": True, "key_id": SITE.key_id}]
