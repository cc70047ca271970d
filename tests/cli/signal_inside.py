"""A command line that signals itself the moment it first calls into the library, and the small
log it works on."""

from __future__ import annotations

from tests.cli.probes import ROOT

SMALL = ROOT / "examples" / "disputes" / "fair-thirteen.log"


# Sends the signal the moment a command, once running, first calls into the library: the
# command's own handling meets it, wherever its loop is (a timer would race the start).
_SIGNAL_INSIDE = r"""
import os, signal, sys
sig = getattr(signal, sys.argv.pop(1))
state = {"in": False}
def hook(frame, event, arg):
    name = frame.f_code.co_filename
    if event != "call":
        return
    if not state["in"]:
        state["in"] = "/cli/" in name and name.endswith("_cmd.py") and \
            frame.f_code.co_name not in ("register", "<module>")
    elif "/buraco_log/" in name:
        sys.setprofile(None)
        os.kill(os.getpid(), sig)
sys.setprofile(hook)
sys.argv[0] = "buraco-log"
from cli.entry import run
run()
"""
