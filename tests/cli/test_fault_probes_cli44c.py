"""Fault probes of the CLI (round 44c): one rule for a referee's `--at`, every command alike.

- A seq the log does not hold (`--at 9999`) is the caller's mistake, a usage error (2),
  whatever else the log holds: `replay`, `moves` and `view` said "past the first illegal
  event" (1) of a log with an illegal event, `explain` said 2.
- A seq the log holds past its first illegal event is a finding (1); its JSON error names the
  rule (`rule`), as every error naming one does (it had none).
- A seq before the illegal event is answered, exit 0, the illegal event noted on stderr:
  `view --at 20` exited 1 where `replay`, `moves` and `explain` exited 0 (`explain` noted
  nothing).
- A SIGHUP (the terminal hung up) to `convert`, `seal` or `repair` was said "interrupted",
  130; the other commands died of it without a word (129 from the shell only). Every command
  says "hung up (SIGHUP)" and exits 129, its clean-up run, as for Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.cli.probes import ROOT, cli_batch, one_error_line
from tests.cli.signal_inside import _SIGNAL_INSIDE, SMALL

ILLEGAL = ROOT / "examples" / "disputes" / "illegal.log"
RULE = "discard.card_not_in_hand"
COMMANDS = ("explain", "replay", "moves", "view")


def _args(command: str, at: int, out: Path) -> list[object]:
    return [command, ILLEGAL, "--at", at, *(["-o", out / f"{at}.html"] if command == "view"
                                             else [])]


def test_every_command_answers_at_the_same_way(tmp_path: Path) -> None:
    seqs = (9999, 40, 20)
    runs = [_args(c, at, tmp_path) for at in seqs for c in COMMANDS]
    runs += [[c, ILLEGAL, "--at", 40, "-f", "json"] for c in COMMANDS[:3]]
    done = cli_batch(runs, cwd=tmp_path)
    absent, past, before, js = done[0:4], done[4:8], done[8:12], done[12:]
    for d in absent:  # the caller's: 2, naming the seqs the log holds
        line = one_error_line(d, 2)
        assert str(ILLEGAL) in line and "the log has no seq 9999 (seqs 0 to 312)" in line, line
    for d in past:  # a finding: 1, naming the illegal seq and its rule
        line = one_error_line(d, 1)
        assert "40" in line and "seq 23" in line and f"[{RULE}]" in line, line
    assert not (tmp_path / "9999.html").exists() and not (tmp_path / "40.html").exists()
    for d in before:  # answered: 0, the illegal event noted (one line, first)
        assert d.returncode == 0, (d.args, d.returncode, d.stderr)
        first = d.stderr.splitlines()[0]
        assert first.startswith(f"buraco-log: note: {ILLEGAL}: seq 23 is illegal"), d.args
        assert first.endswith(f" [{RULE}]"), (d.args, first)  # where every line has its rule
        assert "Traceback" not in d.stderr and "error:" not in d.stderr, d.stderr
    assert "seq 20:" in before[0].stdout and "LEGAL" in before[0].stdout
    assert (tmp_path / "20.html").stat().st_size > 1000
    for d in js:
        error = json.loads(d.stdout)["error"]
        assert (error["exit_status"], error["seq"], error["rule"]) == (1, 40, RULE), error
        assert error["code"] == "replay", error  # added, never renamed


# -- SIGHUP: "hung up (SIGHUP)", 129, as every command says it ---------------------------------

# The signal sent once the command first calls into the library (test_fault_probes_cli44b's
# hook); SIGHUP at its default first, as a terminal's session leaves it (`nohup` ignores it,
# and an ignored one stays ignored).
_HUP_INSIDE = ("import signal\nsignal.signal(signal.SIGHUP, signal.SIG_DFL)\n"
               + _SIGNAL_INSIDE)


def test_a_hang_up_is_said_as_one_by_every_command(tmp_path: Path) -> None:
    shutil.copy(SMALL, tmp_path / "g.blog")
    for name in ("seal", "repair"):
        shutil.copy(ROOT / "examples" / "golden" / "classic.jsonl", tmp_path / f"{name}.jsonl")
    runs: list[list[object]] = [
        ["convert", "g.blog", "-o", "out.jsonl"], ["seal", "seal.jsonl"],
        ["repair", "repair.jsonl"], ["view", "g.blog", "-o", "v.html"], ["replay", "g.blog"],
        ["audit", "g.blog", "-j", 1], ["ingest", "g.blog", "-a", "arch", "-j", 1]]
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _HUP_INSIDE, "SIGHUP", *map(str, args)],
                              cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for args in runs]
    for args, proc in zip(runs, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        done = subprocess.CompletedProcess(args, proc.returncode, out, err)
        line = one_error_line(done, 129)  # was 130 "interrupted", or death without a word
        assert line.startswith("buraco-log: error: ") and "hung up (SIGHUP)" in line, (
            args, line)
        assert "interrupted" not in line and "SIGTERM" not in line, (args, line)
    now = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != "arch"}
    assert now == before  # nothing written, nothing rewritten, no temporary left
