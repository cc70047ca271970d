"""The command line's start: values converted without pydantic, to the same results.

- typer 0.29 converts every option and argument through pydantic: importing it was about a
  third of the CPU of each command's start. cli.coercion calls typer's own conversions (and
  ours, ``parser=``) directly; these tests hold its results and refusals to typer's own for
  every parameter of every command.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.probes import ROOT, cli

GOLDEN = ROOT / "examples" / "golden" / "classic.jsonl"


def _params() -> list[tuple[str, Any, Any]]:
    """(command path, click command, parameter) of every parameter of the full app."""
    import typer

    from cli import main

    found: list[tuple[str, Any, Any]] = []

    def walk(command: Any, path: str) -> None:
        found.extend((path, command, p) for p in command.params)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(typer.main.get_command(main.app), "buraco-log")
    return found


def _outcome(convert: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        return "value", convert(value, param=param, ctx=ctx)
    except Exception as exc:  # the refusal, as the user reads it
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return type(exc).__name__, message


def test_every_parameter_converts_every_kind_of_word_as_typer_does(tmp_path: Path) -> None:
    """Each value a user may type (or a default) gives the value, or the usage error with the
    message, that typer's own conversion gives."""
    from typer import _coercion

    (tmp_path / "file.jsonl").write_text("x\n", encoding="utf-8")
    words: list[Any] = ["", "x", "-", "0", "7", "-3", "007", "2000000", "1.5", "-0.25", "1e3",
                        " 5", "abc", "json", "JSON", "table", "duckdb", "out/",
                        str(tmp_path / "file.jsonl"), str(tmp_path), str(tmp_path / "gone"),
                        "2026-01-02", ("a", "b"), (str(tmp_path), "")]
    params = _params()
    assert len(params) > 100  # the whole app was walked
    direct = 0
    for path, command, param in params:
        ctx = command.context_class(command, info_name=path)
        mine = param.get_runtime_param()
        direct += type(mine).__name__ == "Direct"
        typers = _coercion.build_runtime_param(param.type_descriptor)
        multi = param.multiple or param.nargs == -1
        for word in [param.default, *words]:
            value = (word if isinstance(word, tuple) else (word,)) if multi else word
            if isinstance(value, tuple) and not multi:
                continue
            got = _outcome(mine.coerce, value, param, ctx)
            want = _outcome(typers.coerce, value, param, ctx)
            assert got == want, (path, param.name, value)
            assert type(got[1]) is type(want[1]), (path, param.name, value)
    assert direct == len(params)  # none of this app's parameters needs pydantic first


def test_a_command_that_converts_its_options_starts_without_pydantic() -> None:
    """`show LOG -f json` converts a path, a choice and defaults; pydantic (and its core) was
    imported for them at every start."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "cli", "show", str(GOLDEN), "-f", "json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("{")
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines()}
    assert not {m for m in imported if m.split(".")[0] in ("pydantic", "pydantic_core")}


@pytest.mark.parametrize(("args", "words"), [
    (["show", GOLDEN, "-f", "xml"], ("'--format' / '-f'", "'xml' is not one of 'table', 'json'")),
    (["show", ""], ("Invalid value for 'PATH': an empty name (an unset variable?)",)),
])
def test_a_refused_value_is_said_in_typers_words(args: list[object], words: tuple[str]) -> None:
    """A value the direct conversion refuses goes through typer's, which says why."""
    done = cli(*args)
    assert done.returncode == 2 and done.stdout == ""
    line, = done.stderr.splitlines()
    assert line.startswith("buraco-log: usage: Invalid value for ")
    assert all(w in line for w in words), line
