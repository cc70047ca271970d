"""Fault probes of the CLI (round 47): the C locale, signals and pipes, one set of options.

- Under ``LC_ALL=C PYTHONUTF8=0`` Python read the arguments as ASCII, each non-ASCII byte a
  lone surrogate: ``simulate --seed Zoë`` and ``review --seed Zoë`` were refused as "not UTF-8
  text" (they are), ``demo --seed João`` was "internal error: UnicodeEncodeError", ``query``'s
  SQL ``select 'Zoë'`` "not UTF-8 text", and `rules show` named ``'nope-\\udcc3\\udcab'``. The
  command now starts again in Python's UTF-8 mode there: the same seed gives the same bytes
  in any locale.
- ``query``'s error line under that locale, with stderr a file, was two tracebacks ("Illegal
  seek"): the supervised child's stderr, now a pipe, still held that it could seek.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.probes import ROOT

SMALL = ROOT / "examples" / "disputes" / "fair-thirteen.log"
ASCII = {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "ascii",
         "TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "20"}


def _start(args: list[object], cwd: Path, env: dict[str, str] | None = None,
           stderr: object = subprocess.PIPE) -> subprocess.Popen[bytes]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    environ.pop("BURACO_LOG_ARCHIVE", None)
    return subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=cwd,
                            env=environ, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=stderr)


def _done(proc: subprocess.Popen[bytes]) -> tuple[int, bytes, bytes]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err or b""


@pytest.fixture(scope="module")
def arch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from buraco_log.archive import ingest

    a = tmp_path_factory.mktemp("arch47") / "a"
    assert ingest([str(SMALL)], a).added == 1
    return a


def test_text_arguments_are_read_as_utf8_under_the_c_locale(tmp_path: Path, arch: Path) -> None:
    """A seed, SQL and a preset name typed in UTF-8 are that text with LC_ALL=C PYTHONUTF8=0;
    the same seed gives the same log as in a UTF-8 locale."""
    runs = {
        "sim_c": (["simulate", "--seed", "Zoë", "-o", "c"], ASCII),
        "sim_utf8": (["simulate", "--seed", "Zoë", "-o", "u"], {"LC_ALL": "C.UTF-8"}),
        "demo": (["demo", "--seed", "João", "-o", "d.blog", "-f", "json"], ASCII),
        "query": (["query", arch, "select 'Zoë 🃏' as n", "-f", "json"], ASCII),
        "rules": (["rules", "show", "nope-ë"], ASCII),
    }
    procs = {k: _start(a, tmp_path, env) for k, (a, env) in runs.items()}
    done = {k: _done(p) for k, p in procs.items()}
    for key in ("sim_c", "sim_utf8", "demo", "query"):
        assert done[key][0] == 0, (key, done[key][2])
    name = "classic-2p-000000.blog"
    assert (tmp_path / "c" / name).read_bytes() == (tmp_path / "u" / name).read_bytes()
    assert json.loads(done["demo"][1])["seed"] == "João", done["demo"][1]
    assert json.loads(done["query"][1]) == [{"n": "Zoë 🃏"}], done["query"][1]
    code, out, err = done["rules"]
    assert code == 2 and out == b"", (code, out)
    assert err.decode("utf-8").startswith("buraco-log: error: unknown preset 'nope-ë' "), err


def test_a_query_error_under_the_c_locale_into_a_file_is_one_line(tmp_path: Path,
                                                                   arch: Path) -> None:
    errors = tmp_path / "errors.txt"
    with errors.open("wb") as f:
        code, out, _ = _done(_start(["query", arch, "select * from nope"], tmp_path,
                                    ASCII, stderr=f))
    said = errors.read_text()
    assert code == 1 and out == b"", (code, said)
    assert "Traceback" not in said, said
    lines = said.splitlines()
    assert len(lines) == 1 and lines[0].startswith("buraco-log: error: query: "), lines
    assert "nope" in lines[0], lines


# -- signals -------------------------------------------------------------------------------

_IDLE_POOL = """
import os, signal, time
from buraco_log.audit.pool import worker_pool
try:
    with worker_pool(2) as pool:
        assert [f.result() for f in (pool.submit(abs, -1), pool.submit(abs, -2))] == [1, 2]
        time.sleep(0.5)  # both workers idle, waiting for work
        os.killpg(0, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole process group
        time.sleep(10)
except KeyboardInterrupt:
    print("stopped")
"""


def test_ctrl_c_reaches_idle_pool_workers_without_a_traceback() -> None:
    """`ingest -j 2` stopped by Ctrl-C printed "Process ForkProcess-1: Traceback ...
    KeyboardInterrupt" from each worker waiting for work, beside its one line."""
    done = subprocess.run([sys.executable, "-c", _IDLE_POOL], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, start_new_session=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.stdout == "stopped\n", (done.stdout, done.stderr)
    assert done.stderr == "", done.stderr


def test_a_command_stopped_mid_run_answers_json_on_stdout(tmp_path: Path) -> None:
    """`simulate -f json` (and `audit`, `show`) stopped by SIGTERM wrote nothing on stdout,
    where `review` and `ingest` wrote their JSON error: every failure is JSON there."""
    proc = _start(["simulate", "--matches", 500, "-j", 1, "-o", "sim", "-f", "json"], tmp_path)
    deadline = time.monotonic() + 60
    while not any((tmp_path / "sim").glob("*.blog")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    code, out, err = _done(proc)
    assert (code, err.decode()) == (143, "buraco-log: error: terminated (SIGTERM)\n")
    assert json.loads(out) == {"error": {"code": "error", "exit_status": 143,
                                         "message": "terminated (SIGTERM)"}}, out


# A Ctrl-C at a chosen moment of the start: KeyboardInterrupt raised by the import of a module
_INTERRUPTED_IMPORT = """
import os, sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ["INTERRUPT_AT"]:
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, Interrupt())
"""


@pytest.mark.parametrize(("module", "args", "out"), [
    ("cli.signals", ["show", SMALL], b""),
    ("cli.main", ["show", SMALL, "-f", "json"],
     b'{\n  "error": {\n    "code": "error",\n    "exit_status": 130,\n'
     b'    "message": "interrupted"\n  }\n}\n'),
])
def test_ctrl_c_at_the_start_is_one_line_and_130(tmp_path: Path, module: str,
                                                 args: list[object], out: bytes) -> None:
    """Before cli.signals was imported, Ctrl-C was a traceback and death by SIGINT; while the
    CLI was imported, `-f json` got no JSON."""
    (tmp_path / "sitecustomize.py").write_text(_INTERRUPTED_IMPORT)
    proc = _start(args, tmp_path, {"INTERRUPT_AT": module,
                                   "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"})
    assert _done(proc) == (130, out, b"buraco-log: error: interrupted\n")
