"""Fault probes of signing, round 42 (second pass, helper log42b).

`signing.record.read_receipt` read a receipt without the duplicate-key check every receipt
file gets (`signing.check`'s reader), and nothing called it: a second, weaker way in is gone.
"""

from __future__ import annotations

import subprocess

from buraco_log.signing import record
from tests.log.cli_run import REPO


def test_read_receipt_is_gone_and_nothing_names_it() -> None:
    assert not hasattr(record, "read_receipt")
    assert "read_receipt" not in record.__all__
    found = subprocess.run(["git", "grep", "-l", "read_receipt", "--", "buraco_log", "cli",
                            "docs", "tests/*.md"], cwd=REPO, capture_output=True, text=True)
    assert found.returncode == 1 and found.stdout == "", found.stdout  # 1: no match
