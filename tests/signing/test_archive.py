"""Ingest records per match whether its log is signed and by which key id; the report lists
the unsigned matches."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

pytest.importorskip("cryptography")
pytest.importorskip("duckdb")

from buraco_log import archive, log
from buraco_log.signing import keys
from tests.signing.helpers import match, write_signed

SIGNER = keys.Signer.generate()


def test_ingest_records_signed_and_key_id_and_the_report_lists_unsigned(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    signed = match("archive-signed", key_id=SIGNER.key_id)
    write_signed(logs / "signed.blog", signed, SIGNER, batch=64)
    plain = match("archive-plain")
    plain[0] = msgspec.structs.replace(plain[0], match_id="plain-1")
    log.write_log(logs / "plain.blog", plain)
    rep = archive.ingest([logs], tmp_path / "arch")
    assert not rep.errors
    rows = archive.query(tmp_path / "arch",
                         "SELECT match_id, signed, key_id FROM matches ORDER BY match_id")
    got = {r["match_id"]: (r["signed"], r["key_id"]) for r in rows.to_pylist()}
    assert got == {signed[0].match_id: (True, SIGNER.key_id), "plain-1": (False, None)}
    section = next(s for s in archive.report(tmp_path / "arch").sections
                   if s.name == "unsigned_matches")
    assert [row[0] for row in section.rows] == ["plain-1"]
