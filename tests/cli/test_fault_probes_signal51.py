"""Fault probes, command line: a SIGTERM whose KeyboardInterrupt was swallowed on its way, as
a command ends.

`report` sent SIGTERM 2.5-3 s after its start (its output written, under load) ended 0 and
said nothing, about 1 run in 70: the KeyboardInterrupt its handler raised was swallowed (by
C code that clears errors, or in a finalizer, whose "ignored" interrupt is sent again 10 ms
later, after the process had ended). A signal the command met and never said is said as the
command ends: one line, 143."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))

# A finalizer (a weakref's callback) that takes the SIGTERM as the block ends: its
# KeyboardInterrupt is "ignored" by Python and sent again a moment later.
IN_A_FINALIZER = """
import gc, os, signal, sys, weakref
from cli.signals import terminate_as_interrupt
class C: pass
def cb(_r): os.kill(os.getpid(), signal.SIGTERM); sum(range(10))
try:
    with terminate_as_interrupt() as met:
        c = C(); r = weakref.ref(c, cb); del c; gc.collect()
        END
    print("ran on")
except KeyboardInterrupt:
    print("stopped", met)
"""

# The same swallowed by the code it landed in, as C code that clears errors swallows it.
SWALLOWED = """
import os, signal
from cli.signals import terminate_as_interrupt
try:
    with terminate_as_interrupt() as met:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            sum(range(100))
        except KeyboardInterrupt:
            pass
        END
    print("ran on")
except KeyboardInterrupt:
    print("stopped", met)
"""


@pytest.mark.parametrize("code", [IN_A_FINALIZER, SWALLOWED], ids=["finalizer", "swallowed"])
@pytest.mark.parametrize("end", ["sys.exit(0)", "sys.exit(1)"])
def test_a_sigterm_lost_on_its_way_is_said_as_the_block_ends(code: str, end: str) -> None:
    run = subprocess.run([sys.executable, "-c", "import sys\n" + code.replace("END", end)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60, env=ENV)
    # [15, 15] when the finalizer's copy, sent again 10 ms later, came before the block ended
    assert run.stdout.startswith("stopped [15"), run
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr


def test_a_block_ended_by_its_own_stop_status_is_left_alone() -> None:
    """A command that said its signal and exits 143 itself: not said twice."""
    code = SWALLOWED.replace("END", "sys.exit(143)")
    run = subprocess.run([sys.executable, "-c", "import sys\n" + code], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, env=ENV)
    assert run.returncode == 143 and run.stdout == "", run


# `report` with a SIGTERM taken and swallowed once its output is written (in its note of
# unrecorded parts, which reads the archive's records).
REPORT_SWALLOWED = """
import os, signal, sys
from cli import archive_cmd
real = archive_cmd._note_unrecorded
def note(*args):
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(100))
    except KeyboardInterrupt:
        pass
    return real(*args)
archive_cmd._note_unrecorded = note
sys.argv = ["buraco-log", *sys.argv[1:]]
from ENTRY import run
run()
"""


@pytest.mark.parametrize("entry", ["cli.entry", pytest.param("cli.main", marks=pytest.mark.slow)])
def test_report_ending_with_a_swallowed_sigterm_says_it(tmp_path: Path, entry: str) -> None:
    """Before: exit 0, nothing said. ``cli.main.run`` is the command line without the start's
    own handling (``cli.entry``): it says it too."""
    arch = tmp_path / "empty"
    out = tmp_path / "r.txt"
    (tmp_path / "nothing").mkdir()  # a day without a match: the archive made, empty
    made = subprocess.run([sys.executable, "-m", "cli", "ingest", "--archive", str(arch),
                           str(tmp_path / "nothing")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    code = REPORT_SWALLOWED.replace("ENTRY", entry)
    r = subprocess.run([sys.executable, "-c", code, "report", str(arch), "--output", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=120, env=ENV)
    assert (r.returncode, r.stderr) == (143, "buraco-log: error: terminated (SIGTERM)\n")
    assert out.exists()
