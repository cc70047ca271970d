"""One command line: `python -m cli`, help that says what docs/cli.md says, and --debug.

Each command's `--help` is read from a real subprocess (one for them all) and compared with
its section of docs/cli.md: the usage line, every option's names and every help text.
`--debug` adds a traceback before the one error line and changes nothing else (the exit status
above all).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.memory import MEM, _read_fails

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
DOCS = (ROOT / "docs" / "cli.md").read_text()


def cli(*argv: object, cwd: Path = ROOT, columns: int = 4000,
        module: str = "cli.main") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", module, *map(str, argv)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=300, check=False)


def sections() -> dict[str, str]:
    """docs/cli.md's command sections: `buraco-log rules show` -> its text."""
    parts = re.split(r"^## (buraco-log [a-z -]+)\n", DOCS, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def flat(text: str) -> str:
    """Help as words: no box drawing, one space between words."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _helps(section: str) -> list[tuple[str, str]]:
    """(names, help) of each `- `names`: help` line, the help without its trailing
    `[default: ...]`-style notes (the terminal shows those in another column)."""
    rows = []
    # the options only: not the keys of the command's JSON answer, nor a section after it
    options = re.split(r"^(?:JSON \(`-f json`\)|## )", section, maxsplit=1, flags=re.M)[0]
    for names, text in re.findall(r"^- `([^`]+)`: (.*)$", options, flags=re.M):
        rows.append((names, re.sub(r"(\s*\[[^\]]*\])+$", "", text).strip()))
    return rows


COMMANDS = sorted(sections())


def test_the_docs_list_every_command() -> None:
    assert len(COMMANDS) >= 20 and "buraco-log rules show" in COMMANDS


# Every command's --help in one process, as `buraco-log PATH --help` runs it: a process each
# took 15 s of the default run (their output is the same, byte for byte).
_ALL_HELPS = r"""
import sys
from cli import main
for path in sys.argv[1:]:
    for stream in (sys.stdout, sys.stderr):
        print("\0=== " + path, file=stream, flush=True)
    sys.argv = [*path.split(), "--help"]
    try:
        code = main._run()
    except SystemExit as exc:
        code = exc.code
    sys.stdout.flush()
    print("\0=== exit", repr(code), flush=True)
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, subprocess.CompletedProcess[str]]:
    """Each command's --help: its exit status, stdout and stderr."""
    env = {**os.environ, "COLUMNS": "4000", "PYTHONPATH": str(ROOT)}  # as cli() runs one
    env.pop("NO_COLOR", None)
    r = subprocess.run([sys.executable, "-c", _ALL_HELPS, *COMMANDS], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    outs = r.stdout.split("\0=== ")[1:]
    errs = r.stderr.split("\0=== ")[1:]
    assert len(outs) == 2 * len(COMMANDS) and len(errs) == len(COMMANDS), (r.stdout, r.stderr)
    done = {}
    for i, path in enumerate(COMMANDS):
        head, out = outs[2 * i].split("\n", 1)
        err = errs[i].split("\n", 1)[1]
        code = outs[2 * i + 1].strip().removeprefix("exit ")  # SystemExit(None) is 0
        assert head == path, (head, path)
        done[path] = subprocess.CompletedProcess(
            path, 0 if code == "None" else int(code) if code.lstrip("-").isdigit() else 1,
            out, err)
    return done


@pytest.mark.parametrize("path", COMMANDS)
def test_help_says_what_the_docs_say(path: str,
                                     helps: dict[str, subprocess.CompletedProcess[str]]) -> None:
    section = sections()[path]
    r = helps[path]
    assert r.returncode == 0 and r.stderr == "", r.stderr
    shown = flat(r.stdout)
    usage = re.search(r"```text\n(.*)\n```", section)
    assert usage is not None
    assert f"Usage: {usage.group(1)}" in shown, (usage.group(1), shown[:200])
    for names, text in _helps(section):
        for name in re.findall(r"--?[a-z][a-z-]*", names):
            assert re.search(rf"(^|[\s,]){re.escape(name)}([\s,]|$)", shown), (path, name)
        if text:
            assert flat(text) in shown, (path, names, text)
    documented = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", " ".join(n for n, _ in
                                                                        _helps(section))))
    options = r.stdout.split("Options", 1)[-1]
    offered = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", re.sub(r"[│╭╮╰╯─]", " ", options)))
    # every option the help offers is documented (help texts mention other options too)
    assert offered - {"--help"} <= documented | set(re.findall(r"--[a-z][a-z-]*", section)), \
        (path, offered - documented)


def test_bracketed_words_in_help_texts_are_shown() -> None:
    # typer's rich help read `[spark]` and `[audit]` as markup and dropped them
    report = flat(cli("report", "--help").stdout)
    assert "(the [spark] extra and Java 17+)" in report
    audit = flat(cli("audit", "--help").stdout)
    assert "BURACO_LOG_KEYS, or [audit] keys in the config file." in audit
    assert "or  keys" not in audit and "the  extra" not in report


def test_an_optional_argument_is_bracketed_once() -> None:
    assert "Usage: buraco-log report [OPTIONS] [ARCHIVE]" in flat(cli("report", "-h").stdout)
    assert "[[" not in DOCS


def test_arguments_are_named_as_in_the_usage_line() -> None:
    shown = flat(cli("audit", "--help").stdout)
    assert "Usage: buraco-log audit [OPTIONS] PATHS..." in shown
    assert "* PATHS... Logs, or directories of logs." in shown, shown


def test_python_dash_m_cli_is_the_installed_command() -> None:
    version = cli("--version", module="cli")
    assert version.returncode == 0 and version.stdout.startswith("buraco-log "), version.stderr
    assert version.stdout == cli("--version").stdout
    shown = flat(cli("show", "-h", module="cli").stdout)
    assert "Usage: buraco-log show [OPTIONS] PATH" in shown  # not `python -m cli show`
    bad = cli("show", "--bogus", module="cli")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == ("buraco-log: usage: No such option: --bogus "
                          "(see `buraco-log show --help`)\n")


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("debug")
    data = GOOD.read_bytes()
    (d / "good.blog").write_bytes(data)
    (d / "notes.txt").write_text("not a log\n")
    (d / "torn.blog").write_bytes(data[:300])
    return d


@pytest.mark.parametrize(("argv", "status"), [
    (["show", "missing.blog"], 2),
    (["replay", "notes.txt"], 2),
    (["moves", "torn.blog"], 1),
    (["explain", "good.blog", "--at", "100000"], 2),
    (["view", "notes.txt", "-o", "page.html"], 2),
    (["review", "notes.txt", "--seat", "0"], 2),
    (["rules", "show", "no-such-preset"], 2),
    (["simulate", "--rules", "no-such-preset"], 2),
    (["show", "good.blog", "--bogus"], 2),
])
def test_debug_adds_a_traceback_and_changes_nothing_else(box: Path, argv: list[str],
                                                          status: int) -> None:
    plain = cli(*argv, cwd=box)
    debug = cli("--debug", *argv, cwd=box)
    assert plain.returncode == status and debug.returncode == status, (plain, debug)
    assert "Traceback" not in plain.stderr and len(plain.stderr.splitlines()) == 1, plain
    assert debug.stderr.startswith("Traceback (most recent call last):"), debug.stderr
    assert debug.stderr.splitlines()[-1] == plain.stderr.splitlines()[0]
    assert plain.stdout == debug.stdout == ""
    assert not (box / "page.html").exists()


def test_view_of_a_file_that_is_not_a_log_names_byte_0(box: Path) -> None:
    r = cli("view", "notes.txt", "-o", "page.html", cwd=box)
    assert r.returncode == 2
    assert r.stderr.startswith("buraco-log: error: notes.txt, byte 0: "), r.stderr


def test_a_defect_of_the_tool_is_one_line_and_debug_shows_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from cli import rules_cmd
    from cli.main import app

    def broken(name: str) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(rules_cmd, "preset", broken)
    runner = CliRunner()
    r = runner.invoke(app, ["rules", "show", "biriba"])
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.startswith("buraco-log: error: internal error: RuntimeError: boom")
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    as_json = runner.invoke(app, ["rules", "show", "biriba", "-f", "json"])
    assert as_json.exit_code == 1 and '"exit_status": 1' in as_json.stdout
    debug = runner.invoke(app, ["--debug", "rules", "show", "biriba"])
    assert debug.exit_code == 1 and "Traceback (most recent call last):" in debug.stderr
    assert 'raise RuntimeError("boom")' in debug.stderr


@pytest.mark.parametrize("argv", [
    ["show", GOOD], ["verify", GOOD], ["moves", GOOD, "--at", "5"], ["rules", "list"],
    ["rules", "show", "mega"], ["replay", GOOD, "--at", "9"],
])
def test_format_text_is_format_table(argv: list[object]) -> None:
    table = cli(*argv, "-f", "table")
    text = cli(*argv, "--format", "text")
    assert table.returncode == text.returncode == 0, text.stderr
    assert table.stdout == text.stdout and text.stdout and not text.stdout.startswith("{")


def test_review_takes_table_for_text_and_jobs_0_for_one_per_cpu() -> None:
    # the golden match, a few hands: the simulated one cost each review five times the CPU
    golden = ROOT / "examples" / "golden" / "classic.jsonl"
    base = ["review", golden, "--seat", "1", "--budget", "4x2r0", "--no-progress"]
    text = cli(*base, "-f", "text")
    table = cli(*base, "-f", "table", "-j", "0")
    assert text.returncode == table.returncode == 0, table.stderr
    assert table.stdout == text.stdout and "review of seat 1" in text.stdout
    bad = cli(*base, "-j", "-1")
    assert bad.returncode == 2 and bad.stderr.startswith("buraco-log: usage: ")


FULL = Path("/dev/full")


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full")
@pytest.mark.parametrize("argv", [
    ["--help"], ["--version"], ["rules", "list", "-f", "json"], ["rules", "show", "biriba"],
    ["show", GOOD, "-f", "json"], ["moves", GOOD, "--at", "5"], ["view", GOOD, "-o", "-"],
    ["convert", GOOD, "-o", "-"],
])
def test_a_full_standard_output_is_one_line_naming_it(argv: list[object]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with FULL.open("w") as full:
        p = subprocess.run([sys.executable, "-m", "cli", *map(str, argv)], stdout=full,
                           stderr=subprocess.PIPE, text=True, env=env, timeout=300,
                           check=False)
    # -f json wrote its error object into the same full stdout: a traceback after the line
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr == "buraco-log: error: <stdout>: No space left on device\n", p.stderr


@pytest.mark.parametrize("argv", [["--help"], ["convert", GOOD, "-o", "-"],
                                  ["view", GOOD, "-o", "-"], ["rules", "show", "mega"],
                                  ["show", GOOD, "-f", "json"]])
def test_a_reader_that_goes_away_stops_the_command_quietly(argv: list[object]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    with subprocess.Popen([sys.executable, "-m", "cli", *map(str, argv)], bufsize=0,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as p:
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()  # gone before the first byte (`| head -c 0`)
        err = p.stderr.read()
        p.wait(timeout=300)
    assert err == b"", err
    # a command stops with SIGPIPE's status, and so does help (rich's printer exited 1)
    assert p.returncode == 141, p.returncode


def test_a_usage_error_raised_inside_a_command_stays_a_usage_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from cli import rules_cmd
    from cli.main import app

    def refuse(name: str) -> object:
        raise typer.BadParameter("not that one")

    monkeypatch.setattr(rules_cmd, "preset", refuse)
    r = CliRunner().invoke(app, ["rules", "show", "biriba"])
    assert r.exit_code == 2 and "internal error" not in r.output


@pytest.mark.skipif(not _read_fails(MEM), reason="no file here whose read fails")
@pytest.mark.parametrize("argv", [["replay"], ["moves"], ["verify"], ["explain", "--at", "1"],
                                  ["convert", "-o", "out.jsonl"]])
def test_a_log_whose_read_fails_is_named(argv: list[str], tmp_path: Path) -> None:
    r = cli(argv[0], MEM, *argv[1:], cwd=tmp_path)
    # it said "error: Input/output error", naming no file
    assert r.returncode != 0 and r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"buraco-log: error: {MEM}: "), r.stderr
    assert r.stderr.count("\n") == 1 and list(tmp_path.iterdir()) == []
