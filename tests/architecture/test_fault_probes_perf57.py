"""Cold start: what each command imports (an import budget, not a timing).

A referee runs `buraco-log verify m.blog` once; a web backend runs a command per request: the
start is most of what they wait for (benchmarks/bench_cli_start.py, docs/performance.md)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.architecture.imported import ROOT, imported

GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"
HAS_PANDAS = importlib.util.find_spec("pandas") is not None


@pytest.mark.slow  # 0.4 s of CPU, 1.5 s on the shared machine
@pytest.mark.skipif(not HAS_PANDAS, reason="pandas is not installed: nothing could import it")
def test_ingest_does_not_import_pandas(tmp_path: Path) -> None:
    # pyarrow imported pandas at the first pa.array of every ingest (0.25-0.3 s of CPU, more
    # than the ingest of a nightly batch of a few logs), to ask whether a list was a Series
    mods = imported(tmp_path, "ingest", GOLDEN, "-a", tmp_path / "a", "-j", "1")
    assert "buraco_log.archive.flatten" in mods  # it did build tables
    assert "pandas" not in mods


@pytest.mark.slow
@pytest.mark.skipif(not HAS_PANDAS, reason="pandas is not installed")
def test_hiding_pandas_from_pyarrow_leaves_pandas_importable() -> None:
    code = ("import importlib.util, sys\n"
            "from buraco_log.archive.nopandas import hide_pandas\n"
            "print(hide_pandas(), hide_pandas(), 'pandas' in sys.modules,\n"
            "      importlib.util.find_spec('pandas') is not None,\n"
            "      any(type(f).__name__ == '_NoPandas' for f in sys.meta_path))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True).stdout.split()
    assert out == ["True", "True", "False", "True", "False"]


@pytest.mark.slow
@pytest.mark.skipif(not HAS_PANDAS, reason="pandas is not installed")
def test_pandas_still_converts_to_and_from_arrow_after_it_was_hidden() -> None:
    # what a process that hid pandas and then imported it still has: both conversions, and
    # pyarrow's pandas detection again after the first (a bare pa.array of a Series before
    # any conversion is taken as a plain sequence: hence the command line's only)
    code = ("import pyarrow as pa\n"
            "from buraco_log.archive.nopandas import hide_pandas\n"
            "hide_pandas()\n"
            "import pandas as pd\n"
            "df = pd.DataFrame({'c': pd.Categorical(['a', 'b', 'a']), 'x': [1, 2, 3]})\n"
            "t = pa.Table.from_pandas(df)\n"
            "print(t.schema.field('c').type.value_type, t.to_pandas()['x'].sum(),\n"
            "      pa.array(df['c']).type.value_type)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True).stdout.strip()
    assert out == "string 6 string"


@pytest.mark.slow
def test_the_archive_package_loads_a_module_only_when_it_is_used() -> None:
    # `verify ARCHIVE` and `compact` read files and records: the package imported duckdb,
    # ingest (with its worker pool) and report as it started, 0.1-0.2 s of every such start
    code = ("import sys\n"
            "import buraco_log.archive.fixity, buraco_log.archive.compact\n"
            "from buraco_log import archive\n"
            "names = (archive.store.__name__, archive.TABLES[0])\n"
            "print(sorted({'duckdb', 'multiprocessing', 'buraco_log.archive.ingest',\n"
            "              'buraco_log.archive.report', 'buraco_log.archive.views'}\n"
            "             & set(sys.modules)))\n"
            "print(callable(archive.ingest), callable(archive.report))\n"
            "import buraco_log.archive.ingest, buraco_log.archive.report\n"
            "print(callable(archive.ingest), callable(archive.report), 'duckdb' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True).stdout.splitlines()
    # and the names `ingest` and `report` stay the functions, whichever loads first
    assert out == ["[]", "True True", "True True True"]


def test_version_alone_is_said_before_the_command_line_is_imported(tmp_path: Path) -> None:
    # it imported typer, msgspec and the whole option parser: 4.4x `python -c pass` for a line
    mods = imported(tmp_path, "--version")
    assert not mods & {"typer", "msgspec", "cli.main", "cli.common", "buraco_log.events"}


def _stdio_runs(argv: list[str]) -> list[tuple[int, str]]:
    """``buraco-log ARGV`` with standard output as it comes, closed (``>&-``), full, and a
    pipe whose reader is gone: each exit status, with what it wrote."""
    run = [sys.executable, "-m", "cli", *argv]
    out = []
    with subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT) as p:
        assert p.stdout is not None and p.stderr is not None
        p.stdout.close()
        out.append((p.wait(timeout=60), p.stderr.read().decode()))
    done = subprocess.run(run, cwd=ROOT, timeout=60, check=False, text=True,
                          capture_output=True)
    out.append((done.returncode, done.stdout + done.stderr))
    done = subprocess.run(run, cwd=ROOT, timeout=60, check=False, text=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          preexec_fn=lambda: os.close(1))
    out.append((done.returncode, done.stderr))
    if Path("/dev/full").exists():
        with open("/dev/full", "w") as full:
            done = subprocess.run(run, cwd=ROOT, timeout=60, check=False, text=True,
                                  stdout=full, stderr=subprocess.PIPE)
        out.append((done.returncode, done.stderr))
    return out


@pytest.mark.slow
def test_version_alone_says_its_line_and_its_failures_as_the_command_line_does() -> None:
    # `--debug --version` takes the whole command line's way: the same line, statuses, errors
    assert _stdio_runs(["--version"]) == _stdio_runs(["--debug", "--version"])


@pytest.mark.slow
def test_help_loads_rich_markdown_and_traceback_only_when_one_is_made() -> None:
    # typer's help module imports them (markdown-it, pygments: 0.3 of `--help`'s CPU) and
    # this help makes neither; a stand-in's class is still the real one when one is made
    code = ("import sys\n"
            "import cli.main\n"
            "import typer.rich_utils as ru\n"
            "print(sorted({'markdown_it', 'pygments', 'rich.markdown', 'rich.traceback'}\n"
            "             & set(sys.modules)))\n"
            "made = ru.Markdown('*x*')\n"
            "import rich.markdown\n"
            "try:\n"
            "    raise ValueError('x')\n"
            "except ValueError as e:\n"
            "    tb = ru.Traceback.from_exception(type(e), e, e.__traceback__)\n"
            "print(type(made) is rich.markdown.Markdown, type(tb).__module__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60, check=True).stdout.splitlines()
    assert out == ["[]", "True rich.traceback"]


# The import budget: of the heavy modules below, those each command may import. A command that
# imports one it does not need pays for it at every start (a module of the package: itself or
# any submodule). Every command imports typer and msgspec but `--version`.
HEAVY = ("duckdb", "pyarrow", "numpy", "pandas", "rich", "cryptography", "multiprocessing",
         "markdown_it", "pygments", "asyncio", "buraco_log.recorder",
         "buraco_log.archive", "buraco_log.archive.ingest",
         "buraco_log.archive.report", "buraco_log.view", "cli.view_cmd")
ARCHIVE = {"buraco_log.archive", "pyarrow", "numpy"}
BUDGET: dict[str, tuple[list[str], set[str]]] = {
    "show --help": (["show", "--help"], {"rich"}),
    "--help": (["--help"], {"rich", "buraco_log.view", "cli.view_cmd"}),
    "show": (["show", "{log}"], set()),
    "show -f json": (["show", "{log}", "-f", "json"], set()),
    "verify": (["verify", "{log}"], set()),
    "replay": (["replay", "{log}"], set()),
    "diff": (["diff", "{log}", "{log}"], set()),
    "explain": (["explain", "{log}", "--at", "5"], set()),
    "audit": (["audit", "{log}"], set()),
    "moves": (["moves", "{log}"], set()),
    "convert": (["convert", "{log}", "-o", "{tmp}/out.blog"], set()),
    "rules list": (["rules", "list"], set()),
    "schema": (["schema"], set()),
    "keys new": (["keys", "new", "site", "--dir", "{tmp}/keys"], {"cryptography"}),
    "view": (["view", "{log}", "-o", "{tmp}/page.html"], {"buraco_log.view", "cli.view_cmd"}),
    "ingest": (["ingest", "{log}", "-a", "{tmp}/new", "-j", "1"],
               ARCHIVE | {"multiprocessing", "buraco_log.archive.ingest"}),
    "query": (["query", "{archive}", "SELECT count(*) FROM matches"], ARCHIVE | {"duckdb"}),
    "report": (["report", "{archive}"], ARCHIVE | {"duckdb", "buraco_log.archive.report",
                                                   "buraco_log.view", "cli.view_cmd"}),
    "verify ARCHIVE": (["verify", "{archive}"], ARCHIVE),
    "compact": (["compact", "{archive}"], ARCHIVE),
}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("perf57") / "archive"
    subprocess.run([sys.executable, "-m", "cli", "ingest", str(GOLDEN), "-a", str(where),
                    "-j", "1"], cwd=ROOT, capture_output=True, timeout=120, check=True)
    return where


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BUDGET))
def test_each_command_imports_only_what_its_budget_allows(name: str, stored: Path,
                                                          tmp_path: Path) -> None:
    argv, allowed = BUDGET[name]
    args = [a.format(log=GOLDEN, tmp=tmp_path, archive=stored) for a in argv]
    runs = tmp_path / "runs"
    runs.mkdir()
    mods = imported(runs, *args)
    heavy = {h for h in HEAVY if h in mods}
    assert "typer" in mods and heavy <= allowed, sorted(heavy - allowed)
