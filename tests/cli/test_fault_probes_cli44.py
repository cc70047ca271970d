"""Fault probes of the CLI (round 44): the user's first hour.

- `--help` in a terminal of 80 columns cut words to `…`: `audit --help` showed
  `--require-commit…`, `--no-require-c…` and `(BURACO_LOG_REQU…`, the very names a user
  types; at 40 columns `--for…`. Help now folds a long word and puts an option's `--no-` form
  under it.
- An output on a read-only file system exited 1 from `view`, `review`, `audit --html`, `demo`,
  `simulate`, `query` and `report` (`query` naming its temporary `.q.csv.PID.tmp`), 2 from
  `convert` and `keys new`, as a directory without write permission does: 2 for every one.
- `report`'s spinner read the archive's name as rich markup (`a[/b]`: an internal error;
  `club[bold]` lost its brackets) and drew braille on a terminal that is not UTF-8 (`\\u280b`).
- `keys new` refused a name that is not UTF-8 as `'k\\udcff'`; every other line says `k\\xff`.
- Progress bars had no test on a real terminal: one on a pty here.
"""

from __future__ import annotations

import functools
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.probes import ROOT, cli, cli_batch, one_error_line
from tests.command_line import sigint_default

GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"
SMALL = ROOT / "examples" / "disputes" / "fair-thirteen.log"

# Every command's help at every width, rendered by one process (a process per command and
# width was 80 starts): rich reads COLUMNS as each help makes its console. Typer builds the
# click command from the app anew for every help (half of the time here): built once, the
# same command gives the same helps.
_HELP_DRIVER = r"""
import functools, os, sys
import typer.main
from cli import main
typer.main.get_command = functools.cache(typer.main.get_command)
widths, commands = sys.argv[1].split(","), sys.argv[2:]
for width in widths:
    os.environ["COLUMNS"] = width
    for words in commands:
        sys.argv = ["buraco-log", *words.split(), "--help"]
        print(f"=== {width} {words}".rstrip(), flush=True)
        main._run()
"""
WIDTHS = (20, 40, 80, 100)


def _commands() -> list[str]:
    import typer

    from cli.docgen import _walk
    from cli.main import app

    root = typer.main.get_command(app)
    return ["", *(path.removeprefix("buraco-log ") for path, _ in _walk(root, "buraco-log"))]


@functools.cache
def _all_helps() -> dict[tuple[int, str], str]:
    done = subprocess.run([sys.executable, "-c", _HELP_DRIVER, ",".join(map(str, WIDTHS)),
                           *_commands()], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and not done.stderr, done.stderr
    parts = re.split(r"^=== (\d+) ?(.*)$", done.stdout, flags=re.MULTILINE)[1:]
    return {(int(w), c): text for w, c, text in zip(parts[::3], parts[1::3], parts[2::3],
                                                     strict=True)}


def _helps(columns: int) -> dict[str, str]:
    """Each command's `--help` (and the bare tool's, under "") at ``columns`` columns."""
    return {command: text for (width, command), text in _all_helps().items()
            if width == columns}


def _names_in_help() -> dict[str, set[str]]:
    """Per command: every option name, and every environment variable its help names."""
    import typer

    from cli.docgen import _walk
    from cli.main import app

    found: dict[str, set[str]] = {}
    for path, command in _walk(typer.main.get_command(app), "buraco-log"):
        names: set[str] = set()
        for param in command.params:
            if getattr(param, "hidden", False):  # an old spelling kept out of the help
                continue
            names.update(o for o in (*param.opts, *getattr(param, "secondary_opts", []))
                         if o.startswith("--"))
            names.update(re.findall(r"BURACO_LOG_[A-Z_]+", getattr(param, "help", None) or ""))
            envvar = getattr(param, "envvar", None)
            names.update([envvar] if isinstance(envvar, str) else envvar or [])
        found[path.removeprefix("buraco-log ")] = names
    return found


@pytest.mark.parametrize("columns", [20, 40, 80])
def test_help_cuts_no_word_at_any_width(columns: int) -> None:
    helps = _helps(columns)
    assert len(helps) > 20
    widest = max(len(line) for text in helps.values() for line in text.splitlines())
    assert widest <= columns, widest  # rendered at that width (else nothing would be cut)
    cut = {command: [line for line in text.splitlines() if "…" in line]
           for command, text in helps.items()}
    assert not any(cut.values()), {c: lines[:3] for c, lines in cut.items() if lines}


def test_help_at_100_columns_shows_every_option_and_environment_variable_whole() -> None:
    helps = _helps(100)
    for command, names in _names_in_help().items():
        words = set(re.findall(r"[-\w]+", helps[command]))
        assert names - words == set(), (command, names - words)
    assert "BURACO_LOG_REQUIRE_COMMITMENT" in helps["audit"]  # it was cut, even at 100


def test_help_in_20_columns_keeps_every_option_name_whole() -> None:
    """At 20 columns rich's tables gave each cell 3 or 4 columns: `--format` was `--f` over
    `orm`, `PATHS...` was `PAT` over `HS.`, words cut into pieces (`stan` over `dard`)."""
    helps = _helps(20)
    for command, names in _names_in_help().items():
        words = set(re.findall(r"[-\w]+", helps[command]))
        whole = {n for n in names if n.startswith("--") and len(n) < 20}  # one fits a line
        assert helps[command].strip() and whole <= words, (command, whole - words)


def test_a_negative_option_is_shown_under_its_positive_one() -> None:
    lines = _helps(80)["audit"].splitlines()
    at = next(i for i, line in enumerate(lines) if "--require-commitment" in line)
    assert "--no-require-commitment" in lines[at + 1], lines[at:at + 2]


@pytest.fixture(scope="module")
def arch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive of the golden classic match, built once (in-process: faster than ingest)."""
    from buraco_log.archive import ingest

    root = tmp_path_factory.mktemp("cli44") / "arch"
    assert ingest([str(GOLDEN)], str(root)).added == 1
    return root


def test_every_output_on_a_read_only_file_system_is_a_usage_error_naming_it(
        read_only: Path, arch: Path) -> None:
    cases: list[tuple[list[object], str]] = [
        (["view", SMALL, "-o"], "v.html"),
        (["review", SMALL, "--seat", "0", "--budget", "2", "--no-progress", "-o"], "r.txt"),
        (["audit", SMALL, "--html"], "a.html"),
        (["convert", SMALL, "-o"], "c.jsonl"),
        (["demo", "--rules", "thirteen-quick", "--players", "2", "-o"], "d.blog"),
        (["query", arch, "SELECT 1 AS x", "-f", "csv", "-o"], "q.csv"),
        (["report", arch, "-o"], "r.txt"),
    ]
    done = cli_batch([[*args, read_only / name] for args, name in cases])
    for (args, name), d in zip(cases, done, strict=True):
        out = read_only / name
        line = one_error_line(d, 2)
        # the file asked for, not the temporary beside it (`query` named `.q.csv.4242.tmp`)
        assert re.search(rf"(: | ){re.escape(str(out))}: ", line), (args[0], line)
        assert "Read-only file system" in line and ".tmp" not in line, (args[0], line)
    assert list(read_only.iterdir()) == []


def test_keys_new_names_a_name_that_is_not_utf8_as_every_line_does(tmp_path: Path) -> None:
    line = one_error_line(cli("keys", "new", os.fsdecode(b"k\xff"), "-d", tmp_path), 2)
    assert line.startswith("buraco-log: error: k\\xff: a key name is a plain file name"), line
    assert list(tmp_path.iterdir()) == []


def _on_a_terminal(args: list[object], which: str, extra: dict[str, str] | None = None,
                   cwd: Path = ROOT) -> tuple[int, bytes, bytes]:
    """``buraco-log ARGS`` with ``which`` ("stdout" or "stderr") a pty, the other a pipe:
    (status, what the terminal got, what the pipe got). NO_COLOR only if ``extra`` sets it."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(PYTHONPATH=str(ROOT), COLUMNS="100", **(extra or {}))
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, which: follower}
    proc = subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, **streams)  # type: ignore[call-overload]
    os.close(follower)
    other = proc.stderr if which == "stdout" else proc.stdout
    assert other is not None
    got, rest = b"", b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader, other], [], [], 0.5)
        if other in ready:
            rest += os.read(other.fileno(), 65536)
        if leader in ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower closed: Linux says EIO
                chunk = b""
            if not chunk:
                break
            got += chunk
    rest += other.read()
    other.close()
    os.close(leader)
    return proc.wait(timeout=60), got, rest


def _on_terminals(*calls: tuple[Any, ...]) -> list[tuple[int, bytes, bytes]]:
    """:func:`_on_a_terminal` of each call's arguments, all started at once (a process start
    is most of each run's time), in the order given."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(lambda call: _on_a_terminal(*call), calls))


_COLOUR = re.compile(rb"\x1b\[[0-9;]*m")


def test_progress_goes_to_a_terminal_on_stderr_only_and_never_into_the_data(
        tmp_path: Path) -> None:
    def args(out: str) -> list[object]:
        return ["simulate", "--rules", "thirteen-quick", "--matches", "3", "-j", "1",
                "-o", tmp_path / out]

    # stderr a terminal; stdout a terminal, stderr a pipe; NO_COLOR
    (status, bar, data), (shown_status, shown, err), (plain_status, plain, _) = _on_terminals(
        (args("a"), "stderr"), (args("b"), "stdout"), (args("c"), "stderr", {"NO_COLOR": "1"}))
    assert status == 0 and b"simulate" in bar and b"3/3" in bar, (bar, data)
    assert b"\x1b" not in data and b"3 matches of thirteen-quick" in data, data
    # no bar anywhere, the report uncoloured on the terminal
    assert shown_status == 0 and err == b"", err
    assert b"3 matches" in shown and not _COLOUR.search(shown), shown
    # the bar is drawn without a colour
    assert plain_status == 0 and b"3/3" in plain and not _COLOUR.search(plain), plain


def test_the_report_spinner_shows_an_archive_name_as_it_is(arch: Path, tmp_path: Path) -> None:
    (tmp_path / "a[").mkdir()
    odd = tmp_path / "a[" / "b]"  # the spinner's words held `[/b]`: a MarkupError
    shutil.copytree(arch, odd)
    name = "a[/b]"  # relative: a long temporary path wraps on the terminal's line
    (status, spun, out), ascii_run = _on_terminals(
        (["report", name], "stderr", None, tmp_path),
        (["report", name], "stderr", {"PYTHONIOENCODING": "ascii"}, tmp_path))
    assert status == 0 and b"internal error" not in spun, spun
    assert f"over {name}".encode() in spun and b"Win rate" in out, spun
    status, spun, out = ascii_run
    assert status == 0 and b"over " in spun, spun
    assert b"\\u28" not in spun and all(b < 0x80 for b in spun), spun  # no braille as text


@pytest.mark.parametrize("args, command", [
    (["show", "-f"], "show"),
    (["rules", "show", "-f"], "rules show"),
    (["keys", "new", "--dir"], "keys new"),
    (["audit", "--help=1"], "audit"),
])
def test_an_option_missing_its_value_names_the_help_to_read(args: list[str],
                                                             command: str) -> None:
    """Refused before click made the command's context: the line gave no hint at all."""
    line = one_error_line(cli(*args), 2)
    assert line.startswith("buraco-log: usage: Option '"), line
    assert line.endswith(f" (see `buraco-log {command} --help`)"), line


@pytest.mark.parametrize("args", [["show", "-f.blog"], ["audit", "-q.blog"],
                                  ["audit", "-j2.blog"], ["replay", "--at", "3", "-x.blog"]])
def test_a_log_named_like_an_option_and_its_value_is_named_in_the_usage_error(
        tmp_path: Path, args: list[str]) -> None:
    """Only an unknown option (`-x.blog`) was named a file; a name that starts with a real
    option was read with its value: "'.blog' is not one of ...", "No such option: -."."""
    name = args[-1]
    shutil.copy(SMALL, tmp_path / name)
    line = one_error_line(cli(*args, cwd=tmp_path), 2)
    assert f"; {name} is a file: name it ./{name}, or put -- before it (see `" in line, line
    assert ".;" not in line, line


def test_query_and_report_into_a_directory_are_usage_errors_as_for_every_writer(
        tmp_path: Path, arch: Path) -> None:
    """`view -o DIR` and the other writers said 2 ("is a directory; name the page's file"),
    query and report 1."""
    out = tmp_path / "out"
    out.mkdir()
    for args in (["query", arch, "SELECT 1 AS x", "-o", out], ["report", arch, "-f", "html",
                                                             "-o", out]):
        line = one_error_line(cli(*args), 2)
        assert line.endswith(f"cannot write {out}: Is a directory; nothing was written"), line
    assert list(out.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_query_given_no_sql_says_so(arch: Path, tmp_path: Path) -> None:
    """`query ARCHIVE` said "which archive? give --archive DIR" (it was given); with
    BURACO_LOG_ARCHIVE set it ran the archive's name as SQL (a Parser Error, exit 1); `query`
    alone said "Missing argument '[ARCHIVE]'"."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BURACO_LOG_ARCHIVE": str(arch)}
    for args, extra in ((["query", arch], {}), (["query", arch], env), (["query"], env)):
        done = subprocess.run([sys.executable, "-m", "cli", *map(str, args)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False,
                              env=extra or {**os.environ, "PYTHONPATH": str(ROOT)})
        line = one_error_line(done, 2)
        assert "no SQL to run: give it last" in line, (args, line)
    ran = subprocess.run([sys.executable, "-m", "cli", "query", "SELECT 7 AS n", "-f", "csv"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         check=False, env=env)
    assert (ran.returncode, ran.stdout) == (0, "n\n7\n"), ran.stderr


def _typed(args: list[object], keys: list[bytes]) -> tuple[int, bytes]:
    """``buraco-log ARGS`` on a terminal of its own (its controlling one: Ctrl-C is SIGINT),
    each of ``keys`` typed once the program waits at its prompt: (status, what it showed)."""
    import fcntl
    import termios

    leader, follower = pty.openpty()

    def own_terminal() -> None:
        sigint_default()
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "cli", *map(str, args)], cwd=ROOT, env=env,
                            stdin=follower, stdout=follower, stderr=follower,
                            preexec_fn=own_terminal)
    # The follower stays open here until the end: closed, the program's exit could hang the
    # terminal up before its last line was read (the line was lost about one run in five).
    shown = b""

    def read_until(ending: bytes, times: int = 1) -> None:
        """Read until what was shown ends with the ``times``-th ``ending``: the prompt
        before the last key stays at the end until the next one, so counting them keeps a
        key from being typed at the prompt it already answered."""
        nonlocal shown
        deadline = time.monotonic() + 60
        while not (shown.endswith(ending) and shown.count(ending) >= times) \
                and time.monotonic() < deadline:
            if select.select([leader], [], [], 0.2)[0]:
                try:
                    shown += os.read(leader, 65536)
                except OSError:
                    return

    def drain() -> None:
        nonlocal shown
        while select.select([leader], [], [], 0.5)[0]:
            shown += os.read(leader, 65536)

    for n, key in enumerate(keys, 1):
        read_until(b"q quit> ", n)
        os.write(leader, key)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        drain()
    drain()  # what it wrote last
    os.close(follower)
    os.close(leader)
    return proc.wait(timeout=60), shown


@pytest.mark.parametrize("key, status, after", [(b"\x04", 0, b""),
                                                (b"\x03", 130, b"buraco-log: error: interrupted")])
def test_ending_the_step_prompt_with_ctrl_d_or_ctrl_c_ends_its_line(
        key: bytes, status: int, after: bytes) -> None:
    """The prompt's line was left open: the shell's prompt, or "buraco-log: error:
    interrupted", was printed after "q quit> " on the same line."""
    code, shown = _typed(["replay", SMALL, "--step"], [b"n\n", key])
    assert code == status, shown[-300:]
    last = shown.rsplit(b"q quit> ", 1)[1]
    assert last.lstrip(b"^C").startswith(b"\r\n"), shown[-300:]  # the tty echoes ^C itself
    assert after in last, shown[-300:]


def test_binary_output_is_refused_on_a_terminal_and_written_into_a_pipe(arch: Path,
                                                                       tmp_path: Path) -> None:
    """`convert LOG.jsonl -o -` wrote the binary log on the screen (escape bytes among it);
    `query -f parquet -o -` was refused even into a pipe, where `-o /dev/stdout` wrote it."""
    jsonl_log = tmp_path / "m.jsonl"
    shutil.copy(GOLDEN, jsonl_log)
    cases: list[tuple[list[object], bytes]] = [
        (["convert", jsonl_log, "-o", "-"], b"standard output: is a terminal"),
        (["convert", jsonl_log, "-o", "/dev/stdout", "--to", "binary"],
         b"/dev/stdout: is a terminal"),
        (["query", arch, "SELECT 1 AS x", "-f", "parquet"],
         b"--format parquet is not written to a terminal")]
    done = _on_terminals(*((args, "stdout") for args, _ in cases))
    for (args, what), (status, shown, err) in zip(cases, done, strict=True):
        assert (status, shown) == (2, b""), (args, shown[:200])
        assert err.startswith(b"buraco-log: error: " + what) and err.count(b"\n") == 1, err
    piped = subprocess.run([sys.executable, "-m", "cli", "convert", str(jsonl_log), "-o", "-"],
                           capture_output=True, timeout=120, check=False, cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert piped.returncode == 0 and piped.stdout.startswith(b"BURACOLG"), piped.stderr


def test_a_log_named_where_an_archive_goes_is_called_a_file(tmp_path: Path) -> None:
    """`report match.blog` said "match.blog: no such archive directory": it is right there."""
    log_file = tmp_path / "match.blog"
    shutil.copy(SMALL, log_file)
    line = one_error_line(cli("report", log_file), 2)
    assert line == (f"buraco-log: error: {log_file}: is a file, not an archive directory "
                    "(`buraco-log ingest LOG -a DIR` makes one)"), line
    line = one_error_line(cli("report", tmp_path / "nothere"), 2)
    assert line.endswith("nothere: no such archive directory"), line


@pytest.mark.parametrize("args", [["show", "-"],
                                  ["convert", "-", "-o", "/dev/null", "--to", "jsonl"]])
def test_a_log_read_from_a_terminal_is_refused_at_once(args: list[object]) -> None:
    """`show -` typed by mistake waited in silence for a log nobody types (until Ctrl-D)."""
    started = time.monotonic()
    code, shown = _typed(args, [])
    assert code == 2 and time.monotonic() - started < 30, shown
    assert shown == (b"buraco-log: error: <stdin>: standard input is a terminal; give the "
                     b"log's path, or pipe the log in (- < LOG)\r\n"), shown
