"""A new user follows the pages word for word: every link between them, and every value given
to an option with a fixed set of values.

test_docs.py runs the blocks and test_fault_probes_docs44.py holds each written command to
options the tool has; nobody checked that a link (`[cli.md](cli.md#the-json-error-object)`)
leads to a page and a heading that exist, nor the values a page gives an option of choices:
review.md's synopsis offered `--format text|json|html`, and `review -f table` (the same as
text, as every command spells it) was on no page.
"""

from __future__ import annotations

import enum
import functools
import re
from pathlib import Path
from typing import Any

import typer

from cli.main import app

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")),
         *sorted((ROOT / "examples").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def _prose(page: Path) -> list[tuple[int, str]]:
    """(line number, line) of the page outside its fenced blocks."""
    out: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append((number, line))
    return out


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@functools.cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in _prose(page):
        m = HEADING.match(line)
        if m:
            slug = _slug(m.group(1))
            found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
        found.update(re.findall(r'<a (?:name|id)="([^"]+)"', line))
    return frozenset(found)


def broken_links(page: Path) -> list[str]:
    bad: list[str] = []
    for number, line in _prose(page):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, fragment = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                bad.append(f"{page.name}:{number}: {target}: no such file")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                bad.append(f"{page.name}:{number}: {target}: no such heading")
    return bad


def test_every_link_between_the_pages_leads_to_a_file_and_heading_that_exist() -> None:
    assert sum(len(LINK.findall(line)) for p in PAGES for _, line in _prose(p)) > 30
    assert [b for p in PAGES for b in broken_links(p)] == []


def test_the_link_check_catches_a_missing_page_and_heading(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Top\n\n## The JSON error object\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#the-json-error-object) [top](a.md#top) [x](https://x.org/#y)\n"
                    "[gone](c.md) [moved](a.md#the-error-object)\n```\n[in a block](d.md)\n```\n")
    assert broken_links(page) == ["b.md:2: c.md: no such file",
                                  "b.md:2: a.md#the-error-object: no such heading"]


# An option of fixed values, written as `--format a|b|c` (or `-f json`) in a command.
COMMAND = re.compile(r"buraco-log ((?:[a-z]+ )?[a-z]+)\b([^`\n]*)")
VALUES = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)[ =]\[?([a-z0-9-]+(?:\s?\\?\|\s?[a-z0-9-]+)*)")


@functools.cache
def _root() -> Any:
    return typer.main.get_command(app)


def _choices(param: Any) -> set[str] | None:
    kind = getattr(param.type_descriptor, "annotation", None)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return {str(e.value) for e in kind}
    return None


def wrong_values(text: str) -> list[str]:
    """A value the option does not take, or a list of its values with one left out."""
    bad: list[str] = []
    for m in COMMAND.finditer(text):
        command, name = _root(), "buraco-log"
        for word in m.group(1).split():
            if hasattr(command, "commands") and word in command.commands:
                command, name = command.commands[word], f"{name} {word}"
        if hasattr(command, "commands"):
            continue
        for v in VALUES.finditer(m.group(2)):
            option = v.group(1)
            values = [w.strip(" \\") for w in v.group(2).split("|")]
            params = [p for p in command.params if option in p.opts]
            choices = _choices(params[0]) if params else None
            if choices is None:
                continue  # an unknown option is test_fault_probes_docs44's; a free value
            unknown = [w for w in values if w not in choices]
            left_out = sorted(choices - set(values)) if len(values) > 1 else []
            if unknown or left_out:
                bad.append(f"{name} {option} {'|'.join(values)}: "
                           f"not taken {unknown}, left out {left_out}")
    return bad


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, line) with each indented line joined to the one before it: a
    synopsis wrapped over two lines of a block is one command."""
    out: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if out and line[:1] in (" ", "\t") and line.strip():
            out[-1] = (out[-1][0], f"{out[-1][1]} {line.strip()}")
        else:
            out.append((number, line))
    return out


def test_every_value_a_page_gives_an_option_of_choices_is_one_it_takes() -> None:
    found = [(p.name, n, b) for p in PAGES
             for n, line in logical_lines(p.read_text(encoding="utf-8"))
             for b in wrong_values(line)]
    assert found == []


def test_the_value_check_catches_a_wrong_value_and_a_short_list() -> None:
    assert wrong_values("`buraco-log review LOG --seat 0 -f json`") == []
    assert wrong_values("buraco-log review LOG [--format text|json|html|table]") == []
    assert wrong_values("buraco-log review LOG [--format text|json|html]") == [
        "buraco-log review --format text|json|html: not taken [], left out ['table']"]
    synopsis = "buraco-log review LOG --seat N\n      [--format text|json|html] [-o FILE]\n"
    assert [wrong_values(line) for _, line in logical_lines(synopsis)] == [[
        "buraco-log review --format text|json|html: not taken [], left out ['table']"]]
    assert wrong_values("`buraco-log convert LOG -o OUT --to jsnl`") == [
        "buraco-log convert --to jsnl: not taken ['jsnl'], left out []"]


def test_the_report_section_of_the_archive_page_names_every_canned_analysis_in_order() -> None:
    """A program reading `report -f json` finds each analysis by its `name`: the page listed
    seven of the eight (not `notable_matches`), and none by the name the JSON gives it."""
    from buraco_log.archive.report import CANNED

    page = (ROOT / "docs" / "archive.md").read_text(encoding="utf-8")
    report = page[page.index("\n## Report\n"):]
    named = [m for m in re.findall(r"`([a-z_]+)`", report) if m in CANNED]
    assert list(dict.fromkeys(named)) == list(CANNED)


def test_the_package_and_its_format_version_load_nothing_more_as_the_library_page_says() -> None:
    """library.md said FORMAT_VERSION loads the events and msgspec when first asked for; it is
    a plain number in the package, and reading it loads nothing (the page now says so)."""
    import subprocess
    import sys

    page = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    assert "is a plain number there" in page
    code = ("import sys, buraco_log; v = buraco_log.FORMAT_VERSION; "
            "print(v, sorted(m for m in sys.modules if m.startswith(('buraco_log', 'msgspec'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT)
    assert out.stdout.split(" ", 1)[1].strip() == "['buraco_log']"


def test_the_error_object_of_a_seq_the_log_lacks_names_the_file_its_line_names() -> None:
    """disputes.md: the error object has `path` when known. `replay`, `explain` and `moves
    --at 9999 -f json` named the file in `message` and left `path` out: a program reading many
    answers could not tell which log lacked the seq."""
    import json

    from tests.command_line import run_all

    log = ROOT / "examples" / "sim" / "classic-2p-000000.blog"
    runs = run_all(*[(cmd, log.name, "--at", "9999", "-f", "json")
                     for cmd in ("replay", "explain", "moves")], cwd=log.parent)
    for r in runs:
        assert r.code == 2, r.err
        error = json.loads(r.out)["error"]
        assert error["message"].startswith(f"{log.name}: the log has no seq 9999"), error
        assert (error.get("path"), error["seq"]) == (log.name, 9999), error
