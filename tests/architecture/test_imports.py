"""The core never imports the edge packages (duckdb, pyarrow, typer, rich)."""

from __future__ import annotations

import subprocess
import sys

CORE = ["cards", "rules", "events", "melds", "state", "reducer", "scoring", "moves", "log"]
# Library modules beside the core that must stay as light (the archive is the edge).
LIBRARY = ["jsonl", "dealer", "bots", "simulate", "audit", "timeline", "ruleids", "schemafile",
           "expert", "review"]


def test_importing_the_core_pulls_in_no_edge_package() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {CORE + LIBRARY!r}:\n"
        "    try:\n"
        "        importlib.import_module('buraco_log.' + m)\n"
        "    except ModuleNotFoundError as e:\n"
        "        if e.name != 'buraco_log.' + m: raise\n"
        "import buraco_log\n"
        "print(sorted({'duckdb', 'pyarrow', 'typer', 'rich'} & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
