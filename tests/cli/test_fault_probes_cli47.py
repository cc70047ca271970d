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

import contextlib
import enum
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from cli.common import HIDDEN_ALIASES
from tests.archive.query_started import QUERY_STARTED, wait_for
from tests.cli.probes import ROOT
from tests.command_line import sigint_default

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
                          preexec_fn=sigint_default,
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
    said = err.decode().removeprefix("buraco-log: error: ").removesuffix("\n")
    assert code == 143 and said.startswith("sim: terminated (SIGTERM) while simulating 500 "
                                           "matches: "), err  # and what stays
    assert json.loads(out) == {"error": {"code": "error", "exit_status": 143,
                                         "message": said}}, out


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


# -- one set of options --------------------------------------------------------------------

PEOPLE = {"table", "text"}  # the same words for people (Format's docstring)
MORE_FORMATS = {"jsonl", "csv", "parquet", "html"}  # what a command may add to table|text|json
NO_FORMAT = {"view"}  # writes a page, prints one line about it
ENVIRONMENT = {"--archive": "BURACO_LOG_ARCHIVE"}


def _options() -> list[tuple[str, Any]]:
    """(command path, option) of every option of every command, hidden ones too."""
    import typer.main

    from cli import main

    found: list[tuple[str, Any]] = []

    def walk(command: Any, path: str) -> None:
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk(sub, f"{path} {name}".strip())
        if not hasattr(command, "commands"):
            found.extend((path, p) for p in command.params if p.param_type_name == "option"
                         and p.name != "help")

    walk(typer.main.get_command(main.app), "")
    return found


def _long(option: Any) -> str:
    return next(o for o in option.opts if o.startswith("--"))


def _choices(option: Any) -> set[str]:
    annotation = option.type_descriptor.annotation
    return {m.value for m in annotation} if isinstance(annotation, type) and issubclass(
        annotation, enum.Enum) else set()


def test_every_option_is_spelt_the_same_in_every_command() -> None:
    """One idea, one name: a long option has one short flag, names and type everywhere; a
    short flag means one option; `--format` offers table|text|json with a people's default;
    `--output` is `-o`; a command with `--at` reads a changed log with `--ignore-integrity`;
    every command but `view` answers `--format json`; `--out` is hidden where declared."""
    options = _options()
    shown: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    shorts: dict[str, set[str]] = defaultdict(set)
    kinds: dict[str, set[str]] = defaultdict(set)
    commands: dict[str, set[str]] = defaultdict(set)
    wrong: list[str] = []
    for path, option in options:
        if option.hidden:
            if _long(option) not in HIDDEN_ALIASES:
                wrong.append(f"{path} {_long(option)}: hidden, and no alias")
            continue
        name = _long(option)
        commands[path].add(name)
        names = tuple(sorted(option.opts)) + tuple(sorted(option.secondary_opts))
        shown[name].add(names)
        kinds[name].add(getattr(option.type_descriptor.annotation, "__name__", "?")
                        if name != "--format" else "Format")
        for short in (o for o in option.opts if not o.startswith("--")):
            shorts[short].add(name)
        if any(n.startswith("--no-") for n in option.opts):
            wrong.append(f"{path} {name}: a --no- option of its own, not a negative form")
        if name == "--format":
            values = _choices(option)
            if not {"json", *PEOPLE} <= values or values - {"json", *PEOPLE} - MORE_FORMATS:
                wrong.append(f"{path} --format: {sorted(values)}")
            if getattr(option.default, "value", option.default) not in PEOPLE:
                wrong.append(f"{path} --format: default {option.default}")
        if name in ENVIRONMENT and option.envvar != ENVIRONMENT[name]:
            wrong.append(f"{path} {name}: environment {option.envvar}")
    wrong += [f"{n}: spelt {sorted(s)}" for n, s in shown.items() if len(s) > 1]
    wrong += [f"{s}: stands for {sorted(n)}" for s, n in shorts.items() if len(n) > 1]
    wrong += [f"{n}: of types {sorted(k)}" for n, k in kinds.items() if len(k) > 1]
    assert {("--output", "-o")} == shown["--output"], shown["--output"]
    for path, names in commands.items():
        if "--at" in names and "--ignore-integrity" not in names:
            wrong.append(f"{path}: --at without --ignore-integrity")
        if "--format" not in names and path not in NO_FORMAT and path != "schema":
            wrong.append(f"{path}: no --format")
    assert not wrong, wrong


def test_out_is_read_as_output_by_every_command_that_writes_one(tmp_path: Path) -> None:
    """`--out` was `demo`'s and `simulate`'s alone: `convert LOG --out FILE` was "No such
    option: --out". It is a hidden alias of `--output` everywhere now."""
    runs = [["convert", SMALL, "--out", "a.jsonl"], ["convert", SMALL, "--out=b.jsonl"],
            ["simulate", "--out", "sim"], ["view", SMALL, "--out", "c.html"]]
    procs = [_start(args, tmp_path) for args in runs]
    for args, proc in zip(runs, procs, strict=True):
        code, _, err = _done(proc)
        assert code == 0, (args, err)
    assert {p.name for p in tmp_path.iterdir()} == {"a.jsonl", "b.jsonl", "sim", "c.html"}


def test_seq_is_read_as_at_by_every_command_that_takes_one(tmp_path: Path) -> None:
    """Every error line says `seq 23`; `explain LOG --seq 23` was "No such option: --seq"."""
    pairs = [(["explain", SMALL, "--seq", 7], ["explain", SMALL, "--at", 7]),
             (["moves", SMALL, "--seq=7", "-f", "json"], ["moves", SMALL, "--at", 7, "-f", "json"])]
    procs = [(_start(a, tmp_path), _start(b, tmp_path)) for a, b in pairs]
    for (alias, at), (a, b) in zip(procs, pairs, strict=True):
        said, meant = _done(alias), _done(at)
        assert said == meant and said[0] == 0 and said[1], (a, b, said)


def test_ctrl_c_as_the_start_turns_to_utf8_mode_is_one_line_and_130(tmp_path: Path) -> None:
    """The start again in UTF-8 mode (LC_ALL=C PYTHONUTF8=0) comes before any handler: a
    Ctrl-C there is said as at any other moment of the start."""
    (tmp_path / "sitecustomize.py").write_text(
        "import os\n\ndef execv(*args):\n    raise KeyboardInterrupt\n\nos.execv = execv\n")
    proc = _start(["show", SMALL], tmp_path,
                  {**ASCII, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"})
    assert _done(proc) == (130, b"", b"buraco-log: error: interrupted\n")


def test_a_query_stopped_by_ctrl_c_answers_json_on_stdout(tmp_path: Path, arch: Path) -> None:
    """`query -f json` said "query: interrupted" on stderr alone (its own clean-up line)."""
    marker = tmp_path / "opened"
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    environ.pop("BURACO_LOG_ARCHIVE", None)
    proc = subprocess.Popen([sys.executable, "-c", QUERY_STARTED, str(marker), "query", str(arch),
                             "select count(*) from range(1000000000000)", "-f", "json",
                             "--timeout", "0"], cwd=tmp_path, env=environ,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=sigint_default)
    try:
        wait_for(marker, proc)
        time.sleep(0.3)  # the count of a trillion rows has begun, and runs for minutes
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        code, out, err = _done(proc)
    finally:  # a failed test leaves no count running for minutes (nor its forked query)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert (code, err) == (130, b"buraco-log: error: query: interrupted\n"), (code, err)
    assert json.loads(out) == {"error": {"code": "error", "exit_status": 130,
                                         "message": "query: interrupted"}}, out


def test_a_preset_name_that_is_not_utf8_is_shown_one_way_in_its_line(tmp_path: Path) -> None:
    """`--rules a<0xff>` said "--rules a\\xff: unknown preset 'a\\udcff'": the one name two
    ways in one line, and a lone surrogate in the JSON error."""
    name = os.fsdecode(b"a\xff")
    procs = [_start(["simulate", "--rules", name, "-o", "x"], tmp_path),
             _start(["rules", "show", name, "-f", "json"], tmp_path)]
    (code, out, err), (jcode, jout, _) = (_done(p) for p in procs)
    assert (code, out) == (2, b"") and jcode == 2, (code, err)
    assert err.decode().startswith("buraco-log: error: --rules a\\xff: unknown preset "
                                   "'a\\xff' ("), err
    assert json.loads(jout)["error"]["message"].startswith("unknown preset 'a\\xff' ("), jout


def test_an_argument_that_is_not_utf8_is_shown_as_paths_show_it(tmp_path: Path) -> None:
    """Every value echoed in an error said a byte that is not UTF-8 as `\\udcff` (the repr of
    Python's stand-in for it), where paths and the option say `\\xff`."""
    name = os.fsdecode(b"a\xff")
    runs = [(["review", SMALL, "--seat", 0, "--budget", name], "budget 'a\\xff': "),
            (["simulate", "--bot", name, "-o", "x"], "unknown bot 'a\\xff' "),
            (["show", SMALL, "-f", name], "'a\\xff' is not one of 'table'")]
    procs = [_start(args, tmp_path) for args, _ in runs]
    for (args, words), proc in zip(runs, procs, strict=True):
        code, out, err = _done(proc)
        said = err.decode()
        assert code == 2 and out == b"" and said.count("\n") == 1, (args, said)
        assert words in said and "\\udc" not in said, (args, said)
