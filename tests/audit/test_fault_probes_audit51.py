"""A club's year of matches holding what is no log: each entry one line naming its rule.

Before: a FIFO, a device or a file the auditor may not read said `unreadable: ...` with no
rule (a damaged header said `[log.header]`); a directory named like a log (`m12.blog/`, made by
a mistaken mkdir or an unzip) holding no log was passed over unsaid, and so was an empty
directory given beside other paths.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from buraco_log import log
from tests.log.cli_run import REPO
from tests.signing.helpers import match


def _as_other_user() -> list[str] | None:
    """The command prefix that runs as a user who cannot read a mode-0 file: none needed for
    an ordinary user; root reads every file, so setpriv to nobody; None if it cannot be."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return None if setpriv is None else [
        setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture(scope="module")
def club() -> Iterator[Path]:
    """A season directory: one good log and every kind of entry that is none, in a tree
    anyone may enter (the batch runs as another user when the tests run as root)."""
    top = Path(tempfile.mkdtemp(prefix="club51-"))
    try:
        top.chmod(0o755)
        season = top / "2026"
        season.mkdir(mode=0o755)
        log.write_log(season / "a-good.blog", match(seed="club51"))
        (season / "a-good.blog").chmod(0o644)
        os.mkfifo(season / "b-fifo.blog")  # no writer: opening it to read would block
        os.symlink("/dev/zero", season / "c-device.blog")  # never ends
        (season / "d-empty.blog").write_bytes(b"")
        with open(season / "e-sparse.blog", "wb") as f:
            f.truncate(2 << 30)  # 2 GiB of holes: no disk used
        shutil.copyfile(season / "a-good.blog", season / "f-secret.blog")
        (season / "f-secret.blog").chmod(0)  # the auditor may not read it
        (season / "m12.blog").mkdir(mode=0o755)  # a directory named like a log, holding none
        (top / "2025").mkdir(mode=0o755)  # a season with no log at all
        yield season
    finally:
        shutil.rmtree(top)


def _verdict_lines(out: str) -> dict[str, list[str]]:
    """Each verdict's lines by the file name it starts with."""
    got: dict[str, list[str]] = {}
    name = ""
    for line in out.splitlines():
        if line.startswith(os.sep):
            name = Path(line.split(":", 1)[0]).name
            got[name] = [line]
        elif name and line.startswith(" "):
            got[name].append(line)
    return got


def test_a_batch_names_the_rule_of_each_entry_that_is_no_log_and_goes_on(club: Path) -> None:
    as_other = _as_other_user()
    if as_other is None:
        pytest.skip("run as root, which reads any file whatever its mode, and no setpriv to "
                    "run the audit as nobody")
    empty = club.parent / "2025"
    env = dict(os.environ, PYTHONPATH=str(REPO), HOME=str(club.parent), COLUMNS="200",
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("BURACO_LOG_CONFIG", None)
    started = time.monotonic()
    p = subprocess.run([*as_other, sys.executable, "-m", "cli.main", "audit", str(club),
                        str(empty), "--jobs", "1"], capture_output=True, text=True,
                       timeout=60, cwd=REPO, env=env)  # a FIFO with no writer must not block
    assert time.monotonic() - started < 30
    # the worst entry's status: what is no log is exit 2, as that file audited alone
    assert p.returncode == 2 and "Traceback" not in p.stderr, (p.stdout, p.stderr)
    got = _verdict_lines(p.stdout)
    assert got["a-good.blog"][0].split()[1] == "OK", got["a-good.blog"]
    expected = {
        "b-fifo.blog": "unreadable [log.filetype]: not a regular file (a FIFO)",
        "c-device.blog": "unreadable [log.filetype]: not a regular file (a character device)",
        "e-sparse.blog": "[log.header]: the file header is 20 zero bytes",
        "f-secret.blog": "unreadable [log.unreadable]: Permission denied",
        "m12.blog": "unreadable [log.filetype]: a directory, not a log",
    }
    for name, said in expected.items():
        integrity = [line for line in got[name] if line.lstrip().startswith("integrity")]
        assert len(integrity) == 1 and said in integrity[0], (name, got[name])
    assert got["d-empty.blog"][0].endswith("NOT STARTED")  # a match that never started
    assert list(got) == ["a-good.blog", "b-fifo.blog", "c-device.blog", "d-empty.blog",
                         "e-sparse.blog", "f-secret.blog", "m12.blog"]  # its siblings first
    # the file the auditor may not read is counted apart, with its rule
    assert p.stdout.splitlines()[-1].endswith(
        "of which 4 are not logs and 1 is unreadable [log.unreadable]"), p.stdout
    assert f"buraco-log: note: {empty}: no logs in this directory" in p.stderr.splitlines()
    assert stat.S_IMODE((club / "f-secret.blog").stat().st_mode) == 0  # nothing changed it


# -- the referee's Python API: every code block of disputes.md and signing.md, as written ---

DOCS = REPO / "docs"


def _blocks(page: str, language: str) -> list[str]:
    """The fenced ``language`` blocks of docs/``page``, in order."""
    out, block, inside = [], [], False
    for line in (DOCS / page).read_text().splitlines():
        if not inside and line.strip() == f"```{language}":
            inside, block = True, []
        elif inside and line.strip() == "```":
            inside = False
            out.append("\n".join(block) + "\n")
        elif inside:
            block.append(line)
    assert out, f"docs/{page} has no {language} block"
    return out


def _run_block(code: str, where: Path) -> str:
    """Run ``code`` in ``where`` as a script would; what it printed."""
    out = io.StringIO()
    with contextlib.chdir(where), contextlib.redirect_stdout(out):
        exec(compile(code, "<doc block>", "exec"), {"__name__": "__doc_block__"})
    return out.getvalue()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What signing.md's Python block makes, made by running it as written: the site's key
    (as `keys new site-2026 --dir keys` writes it), signed.blog and receipt-40.json."""
    pytest.importorskip("cryptography")
    from buraco_log.signing.keys import write_key_pair

    where = tmp_path_factory.mktemp("site")
    write_key_pair(where / "keys", "site-2026")
    (code,) = _blocks("signing.md", "python")
    _run_block(code, where)
    return where


# The blocks run as written: signing.md's writes its log durably, an fsync per event.
@pytest.mark.slow
def test_signing_md_python_block_signs_a_log_whose_receipt_the_audit_checks(site: Path
                                                                             ) -> None:
    from buraco_log import audit

    options = audit.signing_options(keys=[str(site / "keys")],
                                    receipts=[str(site / "receipt-40.json")],
                                    require_signatures=True)
    v = audit.audit_log(site / "signed.blog", signing=options)
    assert v.ok and v.signing is not None, v.findings
    assert v.signing.verified and v.signing.receipts == 1
    assert v.signing.last_signed_seq == v.events - 1  # signed to its end, as the doc says


@pytest.mark.slow
def test_disputes_md_python_block_runs_as_written_against_real_logs(tmp_path: Path) -> None:
    """Its files, as the docs' runs give them: the examples and match.blog, a complete
    match."""
    (tmp_path / "examples").symlink_to(REPO / "examples")
    shutil.copyfile(REPO / "examples" / "sim" / "classic-2p-000000.blog", tmp_path / "match.blog")
    (code,) = _blocks("disputes.md", "python")
    out = _run_block(code, tmp_path).splitlines()
    assert len(out) == 6, out
    assert out[0].startswith("sim-classic-2p-") and out[0].endswith(" 1"), out[0]  # side 1 won
    assert out[1:3] == ["True []", "True None None"], out  # audited clean; seq 40 legal
    assert out[3] == "False 126 ('scores: (340, 660) vs (440, 660)',)", out[3]  # the slip
    assert "verified=True" in out[4] and "signatures=41" in out[4], out[4]
    assert out[5].startswith("False 5 [('examples/disputes/forged-deal.log', 'deal.mismatch')"), (
        out[5])


API = ("buraco_log.audit", "buraco_log.signing", "buraco_log.signing.keys",
       "buraco_log.signing.record", "buraco_log.signing.check")


def _public(module_name: str) -> Iterator[tuple[str, object]]:
    """Each public function, class and method of a module's ``__all__``."""
    import importlib
    import inspect

    module = importlib.import_module(module_name)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            yield f"{module_name}.{name}", obj
        if inspect.isclass(obj) and obj.__module__.startswith("buraco_log"):
            for attr, member in vars(obj).items():
                func = getattr(member, "__func__", member)
                if not attr.startswith("_") and inspect.isfunction(func):
                    yield f"{module_name}.{name}.{attr}", func


def test_the_referees_api_is_typed_and_documented() -> None:
    """Every public function of buraco_log.audit and buraco_log.signing has a docstring and
    annotations on every parameter and its result (mypy --strict holds the types true)."""
    import inspect

    undocumented, untyped = [], []
    for name, obj in (item for module in API for item in _public(module)):
        if not (inspect.getdoc(obj) or "").strip() or (
                inspect.isclass(obj) and obj.__doc__ is None):
            undocumented.append(name)
        if inspect.isfunction(obj):
            sig = inspect.signature(obj)
            if sig.return_annotation is inspect.Signature.empty or any(
                    p.annotation is inspect.Parameter.empty for p in sig.parameters.values()
                    if p.name not in ("self", "cls")):
                untyped.append(name)
    assert undocumented == [] and untyped == [], (undocumented, untyped)


def test_every_audit_call_the_docs_name_is_public() -> None:
    import re

    from buraco_log import audit

    for page in ("disputes.md", "signing.md"):
        named = set(re.findall(r"\baudit\.([a-z_]+)\(", (DOCS / page).read_text()))
        assert named, page
        assert named <= set(audit.__all__), (page, named - set(audit.__all__))


# Every block of the two pages in document order, in one directory, as a referee would type
# them: `$ ` lines of a console block are commands (`# exit N` their status, 0 unsaid), the
# lines after them what they print (stdout, then stderr), `...` any text or any lines; a sh
# block's commands must succeed; Python blocks run; TOML blocks are read by the settings.
# Not run: output-only blocks (no command) and text blocks of findings.
PAGES = ("signing.md", "disputes.md")


def _fences(page: str) -> Iterator[tuple[str, list[str]]]:
    block: list[str] = []
    language = None
    for line in (DOCS / page).read_text().splitlines():
        if language is None and line.startswith("```") and line.strip() != "```":
            language, block = line.strip()[3:], []
        elif language is not None and line.strip() == "```":
            yield language, block
            language = None
        elif language is not None:
            block.append(line)


def _squeezed(text: str) -> str:
    """Each line with its runs of spaces as one (a page writes a table's columns closer)."""
    return "".join(" ".join(line.split()) + "\n" for line in text.splitlines())


def _pattern(expected: list[str]) -> str:
    parts = []
    for line in _squeezed("\n".join(expected)).splitlines():
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(map(re.escape, line.split("..."))) + r"\n")
    return "".join(parts)


def _shell(command: str, where: Path) -> tuple[int, str]:
    args = shlex.split(command, comments=True)
    assert args[0] == "buraco-log", command
    p = subprocess.run([sys.executable, "-m", "cli.main", *args[1:]], capture_output=True,
                       text=True, timeout=120, cwd=where,
                       env=dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200"))
    return p.returncode, p.stdout + p.stderr


@pytest.mark.slow
def test_every_block_of_signing_md_and_disputes_md_runs_as_written(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    pytest.importorskip("cryptography")
    import tomllib

    from buraco_log.audit import settings

    where = tmp_path_factory.mktemp("referee")
    (where / "examples").symlink_to(REPO / "examples")
    # the files the blocks name and no block makes: disputes.md's match (539 events), a
    # tampered copy of it, another copy, a club's directory
    shutil.copyfile(REPO / "examples" / "sim" / "classic-2p-000000.blog", where / "match.blog")
    shutil.copyfile(REPO / "examples" / "disputes" / "tampered.log", where / "tampered.blog")
    shutil.copyfile(where / "tampered.blog", where / "copy.blog")
    (where / "club").mkdir()
    shutil.copyfile(where / "match.blog", where / "club" / "m1.blog")
    ran = 0
    for page in PAGES:
        for language, lines in _fences(page):
            if language == "python":
                _run_block("\n".join(lines) + "\n", where)
            elif language == "sh":
                for command in filter(None, (line.strip() for line in lines)):
                    code, out = _shell(command, where)
                    assert code == 0, (page, command, out[-600:])
            elif language == "console":
                commands = [i for i, line in enumerate(lines) if line.startswith("$ ")]
                for at, end in zip(commands, [*commands[1:], len(lines)], strict=True):
                    command = lines[at][2:]
                    status = re.search(r"# exit (\d+)", command)
                    code, out = _shell(command, where)
                    assert code == (int(status.group(1)) if status else 0), (command, out)
                    assert re.fullmatch(_pattern(lines[at + 1:end]), _squeezed(out)), (
                        page, command, out)
            elif language == "toml":
                config = where / "config.toml"
                config.write_text("\n".join(lines) + "\n")
                read = tomllib.loads(config.read_text())["audit"]
                env = {settings.CONFIG_ENV: str(config)}
                assert set(read) <= set(settings.SETTINGS), read
                if "keys" in read:
                    assert settings.keys(environ=env).value == (read["keys"],)
                if "require_signatures" in read:
                    assert settings.require_signatures(environ=env).value is True
            else:
                continue
            ran += 1
    assert ran >= 10, ran
