"""Fault probes, `audit -f json` failing before or after the audit: a bad setting (environment
variable, config file that is a directory) and a receipt for a match no log holds. stdout must
hold the error object, beside one line on stderr (docs/cli.md, Conventions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples" / "sim" / "classic-2p-000000.blog"


def audit(*args: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "audit", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL, env={**os.environ, **env})


def error_of(r: subprocess.CompletedProcess[str], code: int) -> dict[str, object]:
    assert r.returncode == code and "Traceback" not in r.stderr, r.stderr[-800:]
    assert r.stderr.startswith("buraco-log: error: ") and r.stderr.count("\n") == 1, r.stderr
    error = json.loads(r.stdout)["error"]
    assert error["exit_status"] == code
    assert error["message"] in r.stderr
    return dict(error)


@pytest.mark.parametrize("env", [{"BURACO_LOG_REQUIRE_SIGNATURES": "maybe"},
                                 {"BURACO_LOG_CONFIG": "."}], ids=["env", "config-dir"])
def test_a_bad_setting_with_json_output_gives_the_error_object(env: dict[str, str]) -> None:
    """Before: stdout was empty."""
    assert error_of(audit(LOG, "-f", "json", **env), 2)["code"] == "settings.invalid"


def test_a_receipt_of_another_match_with_json_output_gives_the_error_object(
        tmp_path: Path) -> None:
    """Before: stdout was empty (the receipt is checked against the logs after the audit)."""
    pytest.importorskip("cryptography")
    from buraco_log.signing import keys
    from buraco_log.signing.record import Receipt, receipt_json
    from tests.signing.helpers import match, write_signed

    signer = keys.Signer.generate()
    logs = tmp_path / "logs"
    logs.mkdir()
    receipts = write_signed(logs / "m.blog", match(key_id=signer.key_id), signer, batch=32,
                            receipts_at=[30])
    (tmp_path / "site.pub").write_bytes(msgspec.json.encode(signer.public()))
    other = msgspec.structs.replace(Receipt.of(receipts[30], seat=0), match_id="another")
    (tmp_path / "other.json").write_bytes(receipt_json(other))
    (tmp_path / "none.toml").write_text("")
    r = audit(logs, "--keys", tmp_path / "site.pub", "--receipt", tmp_path / "other.json",
              "-f", "json", BURACO_LOG_CONFIG=str(tmp_path / "none.toml"))
    assert "none of the logs audited" in str(error_of(r, 1)["message"])
