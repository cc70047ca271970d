"""What one `buraco-log` command imports: it runs in a fresh interpreter, as the console script
starts it (cli.entry), and says every module in ``sys.modules`` as it ends, however it ends
(``sys.exit``, or the ``os._exit`` that ingest and an interrupt end with). Not ``-X importtime``:
a module imported through ``importlib.import_module`` (each command's module, duckdb) has no
line there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import os, sys
def said():
    with open(os.environ["IMPORTED_TO"], "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
real_exit = os._exit
def _exit(code):
    said()
    real_exit(code)
os._exit = _exit
sys.argv = ["buraco-log", *sys.argv[1:]]
from cli.entry import run
try:
    run()
finally:
    said()
"""


def imported(tmp: Path, *args: object, status: int = 0) -> set[str]:
    """The modules ``buraco-log ARGS`` imported, its exit status checked."""
    where = tmp / f"imported-{os.getpid()}-{len(list(tmp.iterdir()))}.txt"
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120, check=False,
                          stdin=subprocess.DEVNULL,
                          env=dict(os.environ, IMPORTED_TO=str(where), PYTHONPATH=str(ROOT)))
    assert done.returncode == status, (done.returncode, done.stderr[-2000:])
    return set(where.read_text().split())


def packages(modules: set[str]) -> set[str]:
    """The top-level packages among ``modules``."""
    return {m.partition(".")[0] for m in modules}
