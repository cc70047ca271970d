"""Fault probes, `audit --html PAGE` naming the evidence the same command reads.

`audit LOG --keys K --receipt R --html R` wrote the page over the player's receipt (exit 0),
and `--html K/site.pub` over the site's published key: the one proof against the log's keeper
gone, or every later audit refused for a key file holding a web page. The page may not be a
receipt or key being read, nor lie in a trusted keys directory (exit 2, nothing written).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from buraco_log.signing.keys import load_signer, write_key_pair
from buraco_log.signing.record import Receipt, receipt_json
from tests.signing.helpers import match, write_signed

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    signer = load_signer(write_key_pair(tmp_path / "keys", "site").private)
    receipts = write_signed(tmp_path / "m.blog", match(key_id=signer.key_id), signer,
                            receipts_at=[40])
    (tmp_path / "r40.json").write_bytes(receipt_json(Receipt.of(receipts[40], seat=1)))
    return tmp_path


def _audit(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.main", "audit", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})


def _refused(r: subprocess.CompletedProcess[str], words: str) -> None:
    assert r.returncode == 2 and r.stdout == "", r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and words in lines[0], lines


def test_the_page_may_not_replace_the_receipt_being_read(site: Path) -> None:
    before = (site / "r40.json").read_bytes()
    r = _audit(site, "m.blog", "--keys", "keys", "--receipt", "r40.json", "--html",
               "./r40.json")
    _refused(r, "r40.json: is a receipt being read (r40.json)")
    assert (site / "r40.json").read_bytes() == before


def test_the_page_may_not_replace_a_trusted_key_or_go_among_the_keys(site: Path) -> None:
    pub = (site / "keys" / "site.pub").read_bytes()
    _refused(_audit(site, "m.blog", "--keys", "keys/site.pub", "--html", "keys/site.pub"),
             "is a trusted key being read (keys/site.pub)")
    _refused(_audit(site, "m.blog", "--keys", "keys", "--html", "keys/page.html"),
             "is in the trusted keys directory keys")
    # keys named by the environment, and the JSON error object with -f json
    r = _audit(site, "m.blog", "--html", "keys/site.pub", "-f", "json", BURACO_LOG_KEYS="keys")
    assert r.returncode == 2
    assert "trusted keys directory" in json.loads(r.stdout)["error"]["message"]
    assert (site / "keys" / "site.pub").read_bytes() == pub
    assert not (site / "keys" / "page.html").exists()


def test_a_page_elsewhere_is_written(site: Path) -> None:
    r = _audit(site, "m.blog", "--keys", "keys", "--receipt", "r40.json", "--html", "page.html")
    assert r.returncode == 0, r.stderr
    assert (site / "page.html").read_text().startswith("<!DOCTYPE html>")
