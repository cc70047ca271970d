"""The dealer, the bots and the simulator are core modules: no edge package gets imported."""

from __future__ import annotations

import subprocess
import sys


def test_dealer_bots_and_simulate_import_no_edge_package() -> None:
    code = (
        "import sys\n"
        "import buraco_log.dealer, buraco_log.bots, buraco_log.simulate\n"
        "print(sorted({'duckdb', 'pyarrow', 'typer', 'rich'} & set(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
