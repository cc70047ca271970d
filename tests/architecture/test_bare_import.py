"""`import buraco_log` loads nothing but the package itself: no dependency, core or edge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_buraco_log_loads_no_dependency() -> None:
    code = ("import sys, buraco_log; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'msgspec', 'duckdb', "
            "'pyarrow', 'typer', 'rich', 'cryptography', 'pyspark'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True).stdout.strip()
    assert out == "[]"


def test_the_format_version_is_still_there_when_asked_for() -> None:
    import buraco_log
    from buraco_log import events

    assert buraco_log.FORMAT_VERSION == events.FORMAT_VERSION
