"""Fault probes of the dispute CLI and its outputs, round 41b.

- A wrong recorded score was silent in `show` and `replay` (exit 0; `show` printed "(recorded
  440/660)" beside the hand, `replay` nothing), where `audit` and `view` exit 1: a referee's
  script read them as clean. Now each difference is one stderr line (file, seq,
  [score.mismatch], the recorded and recomputed figures), exit 1, after the output; the match
  totals recorded wrong in MatchEnded too.
- An output file named as a directory (`audit --html out/`, `convert -o out/`, `demo -o out/`,
  `query`/`report -o out/`) lost its slash (typer's Path drops it) and was written as `out`.
- A Ctrl-C or SIGTERM while the CLI's modules imported was a KeyboardInterrupt traceback
  (death by SIGINT), or death by SIGTERM without a word (-15).
- Empty standard input was "file header cut short (0 of 20 bytes); delete the file" in `audit`
  and `show`.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import msgspec
import pytest

from buraco_log import audit
from buraco_log.events import MatchEnded
from tests import brokenlogs as bl
from tests.cli.probes import ROOT, cli, one_error_line
from tests.command_line import sigint_default

EXAMPLES = ROOT / "examples" / "disputes"
WRONG = EXAMPLES / "wrong-score.log"  # hand 0, side 0 recorded 440 for 340, at seq 126
CLEAN = EXAMPLES / "fair-thirteen.log"  # the same match, recorded right


# -- a wrong recorded score: show and replay exit 1, after their output


@pytest.mark.parametrize("command", ["show", "replay"])
def test_a_wrong_recorded_hand_score_is_a_finding_said_after_the_output(command: str) -> None:
    done = cli(command, WRONG)
    line = one_error_line(done, 1)
    assert line == (f"buraco-log: error: {WRONG}: seq 126: hand 0: side 0: "
                    "recorded 440, recomputed 340 (+100) [score.mismatch]")
    assert "side 0" in done.stdout  # the summary or table is printed first, whole
    clean = cli(command, CLEAN)
    assert (clean.returncode, clean.stderr) == (0, "")
    if command == "replay":  # the same table: the replay carries the recomputed score
        assert done.stdout == clean.stdout


def test_match_totals_recorded_wrong_are_a_finding_too(tmp_path: Path) -> None:
    events = audit.load(CLEAN)
    end = events[-1]
    assert isinstance(end, MatchEnded) and end.totals is not None
    wrong = (end.totals[0] + 50, *end.totals[1:])
    log = bl.write(tmp_path / "totals.log",
                   [*events[:-1], msgspec.structs.replace(end, totals=wrong)])
    for command in ("show", "replay"):
        line = one_error_line(cli(command, log), 1)
        assert f"{log}: seq {end.seq}: recorded totals {wrong}" in line, line
        assert line.endswith(" [score.mismatch]"), line
        assert f"recomputed {tuple(end.totals)}" in line
    done = cli("show", log, "-f", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["score_mismatches"] == [
        {"seq": end.seq, "rule": "score.mismatch",
         "message": f"recorded totals {wrong}, recomputed {tuple(end.totals)}"}]


def test_show_json_lists_no_mismatch_of_a_clean_log_and_one_of_the_wrong_one() -> None:
    assert json.loads(cli("show", CLEAN, "-f", "json").stdout)["score_mismatches"] == []
    done = cli("show", WRONG, "-f", "json")
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert [m["seq"] for m in json.loads(done.stdout)["score_mismatches"]] == [126]


def test_replay_before_the_end_notes_the_wrong_scores_up_to_its_table() -> None:
    before = cli("replay", WRONG, "--at", "100")  # the hand has not ended yet
    assert (before.returncode, before.stderr) == (0, "")
    after = cli("replay", WRONG, "--at", "200")
    assert after.returncode == 0, after.stderr
    assert after.stderr.startswith("buraco-log: note: ") and "seq 126: " in after.stderr
    assert after.stderr.rstrip().endswith(" [score.mismatch]") and \
        len(after.stderr.splitlines()) == 1


# -- an output named as a directory: refused, nothing written


@pytest.mark.parametrize("args", [
    ["audit", CLEAN, "--html", "out/"],
    ["audit", CLEAN, "--html", "out/.", "-f", "json"],
    ["convert", CLEAN, "-o", "out/"],
    ["convert", CLEAN, "-o", "out.jsonl/", "--to", "jsonl"],
    ["demo", "--players", "2", "-o", "out/", "--overwrite"],
    ["view", CLEAN, "-o", "out/"],
    ["query", "arch", "SELECT 1", "-o", "out/"],
    ["report", "arch", "-o", "out/."],
], ids=lambda a: " ".join(map(str, a[:1] + a[-2:])))
def test_an_output_named_as_a_directory_is_refused_and_nothing_written(
        args: list[object], tmp_path: Path) -> None:
    (tmp_path / "out").write_text("keep")  # what `out/` without its slash would replace
    done = cli(*args, cwd=tmp_path)
    line = one_error_line(done, 2)
    assert "is a directory's name (it ends in '/', '.' or '..')" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (tmp_path / "out").read_text() == "keep"
    if "json" in args:  # stdout is JSON on a usage error too
        assert json.loads(done.stdout)["error"]["exit_status"] == 2


def test_audit_html_names_a_file_and_writes_it(tmp_path: Path) -> None:
    done = cli("audit", CLEAN, "--html", tmp_path / "page.html")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "page.html").read_text().startswith("<!")


# -- an interrupt while the CLI starts up


def _handler_installed(pid: int) -> bool:
    """Whether the process catches SIGTERM (the entry module's first act)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize(("sig", "status", "said"), [
    (signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_an_interrupt_while_the_cli_imports_is_one_line(sig: signal.Signals, status: int,
                                                         said: str) -> None:
    for delay in (0.0, 0.1):  # during the imports (they take 0.3 s and more), then later
        # replay of '-' waits on standard input, which this test never closes: the signal
        # is what ends it, whenever it comes
        proc = subprocess.Popen([sys.executable, "-m", "cli", "replay", "-"], cwd=ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=sigint_default)
        deadline = time.monotonic() + 20
        while not _handler_installed(proc.pid):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert (proc.returncode, err) == (status, f"buraco-log: error: {said}\n"), delay


def test_the_console_script_entry_point_runs_the_cli() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    code = ("import sys; from importlib.metadata import EntryPoint; "
            f"sys.argv = ['buraco-log', '--version']; "
            f"EntryPoint('buraco-log', {scripts['buraco-log']!r}, 'console_scripts').load()()")
    assert EntryPoint("buraco-log", scripts["buraco-log"], "console_scripts").module == "cli.entry"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("buraco-log ")
    # the entry module installs the signal handling before the CLI's imports: it imports
    # none of them itself (the test above signals the moment its handler is seen)
    done = subprocess.run([sys.executable, "-c", "import sys, cli.entry; print(sorted("
                           "{'typer', 'cli.main', 'msgspec', 'buraco_log'} & set(sys.modules)))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout == "[]\n", done.stderr


# -- empty standard input: nothing to delete


def test_empty_standard_input_is_said_as_such_by_audit_and_show(tmp_path: Path) -> None:
    for command in ("audit", "show"):
        done = subprocess.run([sys.executable, "-m", "cli", command, "-"], cwd=ROOT, input="",
                              capture_output=True, text=True, timeout=60, check=False)
        assert (done.returncode, done.stderr) == (0, ""), command
        assert "standard input was empty (0 bytes)" in done.stdout
        assert "delete" not in done.stdout and "cut short" not in done.stdout
    empty = tmp_path / "empty.blog"
    empty.write_bytes(b"")  # an empty file is a file: its header was cut short, delete it
    done = cli("audit", empty)
    assert done.returncode == 0 and "delete the file" in done.stdout
    assert "standard input" not in done.stdout
