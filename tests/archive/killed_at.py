"""A command line that kills itself at the k-th call of one os function, and the check that it died
there: the one such script of the archive probes (ingest and compact)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.cli.probes import ROOT

# The CLI with os.<name> wrapped: its k-th call kills the process with SIGKILL. With k = 0
# nothing is killed and the run ends by writing ``calls N`` (how many calls it made) to stderr,
# so a sweep knows how far to go. For compact, os.replace: each file renamed into place, then
# the commit record, then the ratings; os.unlink: the replaced batches' records, then their files.
KILLER = """
import os, signal, sys
name, k, n = sys.argv[1], int(sys.argv[2]), [0]
real = getattr(os, name)
def killing(*a, **kw):
    n[0] += 1
    if n[0] == k:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*a, **kw)
setattr(os, name, killing)
if k == 0:
    import atexit
    atexit.register(lambda: sys.stderr.write(f"calls {n[0]}\\n"))
sys.argv = ["buraco-log", *sys.argv[3:]]
from cli.main import run
run()
"""


def killed(name: str, k: int, *args: object) -> None:
    r = subprocess.run([sys.executable, "-c", KILLER, name, str(k), *map(str, args)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, check=False,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == -9, r
