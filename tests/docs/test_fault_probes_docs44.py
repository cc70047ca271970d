"""Probe round 44 of the docs: what a reader types from the pages, beyond the blocks.

test_docs.py runs every ```console and ```sh block. A command written inline in the prose
(`buraco-log audit LOG --keys DIR`) or as a `$ ` line of a ```text block is run by nobody:
these tests hold each to a command and options the tool has. And docs/cli.md listed six
`--format` options and `query --threads` with no word of help (`--threads N: [default: 2]`).
"""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer

from cli.main import app

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "examples").rglob("*.md"))]
INLINE = re.compile(r"`(buraco-log [^`]+)`")
PROMPT = re.compile(r"^\$ (buraco-log .*)$", re.MULTILINE)
# Not a command: the bytes a signature covers, spelled in docs/signing.md.
NOT_COMMANDS = ("buraco-log signed head",)


@functools.cache
def _root() -> Any:
    return typer.main.get_command(app)


@functools.cache
def _written_commands() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for command in (*INLINE.findall(text), *PROMPT.findall(text)):
            if not command.startswith(NOT_COMMANDS):
                found.append((page.name, command))
    return found


def _words(command: str) -> list[str]:
    """The words of the command itself: no comment, pipe or redirection after it."""
    line = re.split(r"\s#|\s\||\s[12]?>", command)[0]
    try:
        return shlex.split(line)
    except ValueError:  # an unclosed quote in a sketch (`query ARCHIVE "SELECT ...`)
        return line.split()


def _resolve(words: list[str]) -> tuple[Any, list[str], str]:
    """(the click command the words name, the words after its name, the name)."""
    command: Any = _root()
    at, name = 1, "buraco-log"
    while at < len(words) and hasattr(command, "commands") and words[at] in command.commands:
        command, name = command.commands[words[at]], f"{name} {words[at]}"
        at += 1
    return command, words[at:], name


def _unknown(command: str) -> list[str]:
    """The words of ``command`` the tool would not take as a command or an option."""
    from cli.main import help_as_option

    words = _words(command)  # `buraco-log help CMD` is `CMD --help`, as the tool reads it
    resolved, rest, name = _resolve([*words[:1], *help_as_option(words[1:])])
    if hasattr(resolved, "commands"):  # a group: what follows must be one of its commands
        return [w for w in rest[:1] if not w.startswith("-") and w.isalpha() and w.islower()]
    options = {o for p in resolved.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
    options |= {"--help", "-h"}
    bad: list[str] = []
    for word in rest:
        if word == "--":
            break
        option = word.split("=", 1)[0]
        if not option.startswith("-") or option == "-" or option[1:2].isdigit():
            continue  # a value, a path, standard input, a negative number
        if option not in options and option[:2] not in options:  # `-j2`, `-fjson`
            bad.append(f"{name} {option}")
    return bad


def test_the_pages_write_commands_inline() -> None:
    assert len(_written_commands()) > 50  # the harvest still finds the pages' commands


@pytest.mark.parametrize("page", sorted({p for p, _ in _written_commands()}))
def test_every_command_written_in_a_page_is_one_the_tool_has(page: str) -> None:
    bad = [(command, _unknown(command)) for p, command in _written_commands() if p == page]
    assert [b for b in bad if b[1]] == []


def test_the_check_catches_a_misspelled_option_and_command() -> None:
    assert _unknown("buraco-log audit LOG --jbos 2") == ["buraco-log audit --jbos"]
    assert _unknown("buraco-log shwo LOG") == ["shwo"]
    assert _unknown("buraco-log audit LOG -j2 --no-require-commitment -- -x.blog") == []


def test_every_option_in_the_reference_says_what_it_does() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    bare = re.findall(r"^- `([^`]+)`: \[", page, flags=re.MULTILINE)
    assert bare == [], f"options with only a default, no help: {bare}"
