"""Fault probes, `audit DIR --receipt R` where no log of the directory holds R's match.

The receipt is an error (exit 1): the match's log is missing, or cut so that no event names
its match. The table report of every other log was thrown away for it: stdout was empty, so a
referee auditing a year of logs with one player's receipt saw nothing but that line. The report
is printed first now, the error line after it on stderr; with `-f json` stdout still holds one
JSON document, the error object, with every log's verdict beside it (``verdicts``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log.signing.keys import load_signer, write_key_pair
from buraco_log.signing.record import Receipt, receipt_json
from tests.signing.helpers import match, write_signed

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("orphan")
    signer = load_signer(write_key_pair(d / "keys", "site").private)
    (d / "logs").mkdir()
    write_signed(d / "logs" / "a.blog", match("a", key_id=signer.key_id), signer)
    write_signed(d / "logs" / "b.blog", match("b", key_id=signer.key_id), signer)
    # a match whose log the site no longer has: only the player's receipt is left
    gone = write_signed(d / "gone.blog", match("gone", key_id=signer.key_id), signer,
                        receipts_at=[30])
    (d / "gone.json").write_bytes(receipt_json(Receipt.of(gone[30], seat=1)))
    return d


def _audit(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "audit", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


def test_the_report_comes_first_and_the_receipt_error_after_it(site: Path) -> None:
    r = _audit(site / "logs", "--keys", site / "keys", "--receipt", site / "gone.json")
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1] == "audited 2 logs: 2 clean, 0 with findings"
    assert f"{site / 'logs' / 'a.blog'}: OK" in r.stdout
    gone_id = match("gone")[0].match_id  # type: ignore[union-attr]
    assert r.stderr.splitlines() == [
        f"buraco-log: error: {site / 'gone.json'}: the receipt is for match {gone_id!r}, which "
        "none of the logs audited holds"]


def test_several_such_receipts_are_counted_in_the_one_line(site: Path) -> None:
    r = _audit(site / "logs", "--keys", site / "keys", "--receipt", site / "gone.json",
               "--receipt", site / "gone.json")
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1
    assert r.stderr.rstrip().endswith("(and 1 more receipt for matches no log holds)")


def test_json_output_is_still_the_one_error_object(site: Path) -> None:
    r = _audit(site / "logs", "--keys", site / "keys", "--receipt", site / "gone.json",
               "-f", "json")
    assert r.returncode == 1
    error = json.loads(r.stdout)["error"]
    assert error["exit_status"] == 1 and "none of the logs audited holds" in error["message"]


def test_a_receipt_whose_log_is_there_is_checked_clean(site: Path, tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "gone.blog").write_bytes((site / "gone.blog").read_bytes())
    r = _audit(tmp_path / "logs", "--keys", site / "keys", "--receipt", site / "gone.json")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "1 receipt checked" in r.stdout
