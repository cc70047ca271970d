"""docs/cli.md is the command line's own description: regenerate it when a command changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_docs_cli_md_is_what_docgen_writes() -> None:
    made = subprocess.run([sys.executable, "-m", "cli.docgen"], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert made.returncode == 0, made.stderr
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert made.stdout == page, "docs/cli.md is stale: run `python -m cli.docgen > docs/cli.md`"


def test_every_command_in_the_help_has_a_section() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in ("audit", "convert", "ingest", "query", "replay", "report", "seal", "show",
                    "simulate", "verify", "view", "rules show"):
        assert f"\n## buraco-log {command}\n" in page, command
    assert "\n## buraco-log schema\n" not in page  # a developer command stays hidden
