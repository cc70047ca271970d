"""The log modules are core: standard library and msgspec only."""

from __future__ import annotations

import subprocess
import sys


def test_the_log_modules_import_no_edge_library() -> None:
    code = (
        "import sys, buraco_log.log, buraco_log.jsonl, buraco_log.schemafile;"
        "print(sorted(m for m in ('duckdb', 'pyarrow', 'typer', 'rich', 'click') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
