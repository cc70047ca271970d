"""The docs' code blocks: each page's fenced blocks, which of them run, and running one as a reader
would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\S*)[ \t]*(.*)$")
TIMEOUT = 300


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    info: str
    text: str

    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1):
            start = i
            body: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            found.append(Block(page, start + 1, m.group(1), m.group(2).strip(),
                               "\n".join(body) + "\n"))
        i += 1
    return found


FRAGMENT = re.compile(r"^# fragment:\s*\S")


def is_fragment(block: Block) -> bool:
    """A ```python block marked ``# fragment: WHY`` in its first line (not a script)."""
    first = block.text.lstrip("\n").split("\n", 1)[0]
    if first.startswith("# fragment") and not FRAGMENT.match(first):
        raise AssertionError(f"{block.where()}: a fragment says why: `# fragment: WHY`")
    return block.lang == "python" and bool(FRAGMENT.match(first))


def fold(line: str) -> str:
    return " ".join(line.split())


def line_matches(want: str, got: str) -> bool:
    """``want`` is in ``got``; a ``...`` inside ``want`` stands for any text."""
    pos = 0
    for piece in (p.strip() for p in want.split("...")):
        found = got.find(piece, pos)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


def appears_in_order(expected: list[str], actual: str) -> str | None:
    """None if every expected line (``...`` skipped) is found in order, else the first miss."""
    got = [fold(line) for line in actual.splitlines()]
    at = 0
    for line in expected:
        want = fold(line)
        if not want or want == "...":
            continue
        while at < len(got) and not line_matches(want, got[at]):
            at += 1
        if at == len(got):
            return line
        at += 1
    return None


EXIT_MARK = re.compile(r"\s#\s*exit\s+(\d+)\s*$")


# A command of README.md that exits non-zero with no ``# exit N`` yet (the lead edits README).
UNMARKED: set[str] = set()


def expected_status(command: str) -> int | None:
    """N for a command ending in ``# exit N`` (the page says what it exits), else None."""
    m = EXIT_MARK.search(command)
    return int(m.group(1)) if m else None


def console_steps(text: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, check=False)


def run_block(block: Block, work: Path) -> None:
    if block.lang == "console":
        for command, expected in console_steps(block.text):
            out = run(command, work)
            printed = out.stdout + out.stderr
            status = expected_status(command)
            if status is not None:
                assert out.returncode == status, f"{block.where()}: `{command}` exited " \
                    f"{out.returncode}, not {status}:\n{printed[-2000:]}"
            elif command not in UNMARKED:
                assert out.returncode == 0, f"{block.where()}: `{command}` exited " \
                    f"{out.returncode}:\n{printed[-2000:]}"
            missing = appears_in_order(expected, printed)
            assert missing is None, f"{block.where()}: `{command}` did not print " \
                f"{missing!r}; it printed:\n{printed[-3000:]}"
    elif block.lang == "sh" and block.info == "ci":
        ci = (ROOT / ".ci" / "run").read_text()
        for line in block.text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line.strip() in ci:
                continue  # CI runs the whole line itself
            for part in (p.strip() for p in line.split("&&")):
                if part.startswith("python3 -m pip install"):
                    assert "python3 -m pip install" in ci, f"{block.where()}: .ci/run installs " \
                        "nothing"  # this test runs in that install
                    continue
                out = run(part, work)
                assert out.returncode == 0, f"{block.where()}: `{part}` exited " \
                    f"{out.returncode}:\n{(out.stdout + out.stderr)[-2000:]}"
    elif block.lang == "sh":
        for line in block.text.splitlines():
            command = line.split(" #", 1)[0].strip()
            if command and not command.startswith("#"):
                out = run(command, work)
                assert out.returncode == 0, f"{block.where()}: `{command}` exited " \
                    f"{out.returncode}:\n{(out.stdout + out.stderr)[-2000:]}"
    elif block.lang == "python" and not is_fragment(block):
        script = work / "doc_block.py"
        script.write_text(block.text)
        out = run(f"{sys.executable} doc_block.py", work)
        assert out.returncode == 0, f"{block.where()}: the Python block failed:\n" \
            f"{(out.stdout + out.stderr)[-3000:]}"
