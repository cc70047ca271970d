"""Golden outputs of `show`, `replay` and `audit` on the committed logs of tests/golden/.

The logs are inputs (``python -m tests.golden.make_logs`` writes them). When output changes
on purpose, regenerate every expected file with one command::

    UPDATE_GOLDEN=1 pytest tests/cli/test_golden.py

Logs in examples/ are covered too, once their expected outputs exist (the same command writes
them, under tests/golden/examples/).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXAMPLES = ROOT / "examples"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

# (expected file, exit status, command line run inside tests/golden/)
CASES: list[tuple[str, int, list[str]]] = [
    ("fair-thirteen.show.txt", 0, ["show", "fair-thirteen.log"]),
    ("fair-thirteen.show.json", 0, ["show", "fair-thirteen.log", "--format", "json"]),
    ("fair-thirteen.replay.txt", 0, ["replay", "fair-thirteen.log", "--hand", "1", "--turn",
                                     "4"]),
    ("fair-thirteen.replay-seat.txt", 0, ["replay", "fair-thirteen.log", "--at", "60",
                                          "--seat", "1"]),
    ("fair-thirteen.replay.json", 0, ["replay", "fair-thirteen.log", "--at", "60", "--format",
                                      "json"]),
    ("fair-thirteen.audit.txt", 0, ["audit", "fair-thirteen.log"]),
    ("burako.show.txt", 0, ["show", "burako.log"]),
    ("burako.replay.txt", 0, ["replay", "burako.log", "--at", "200"]),
    ("burako.audit.txt", 0, ["audit", "burako.log"]),
    ("illegal.audit.txt", 1, ["audit", "illegal.log"]),
    ("illegal.audit.json", 1, ["audit", "illegal.log", "--format", "json"]),
    ("illegal.explain.txt", 0, ["explain", "illegal.log", "--at", "23"]),
    ("wrong-score.audit.txt", 1, ["audit", "wrong-score.log"]),
    ("tampered.audit.txt", 1, ["audit", "tampered.log"]),
    ("forged-deal.audit.txt", 1, ["audit", "forged-deal.log"]),
    ("all.audit.txt", 1, ["audit", ".", "--quiet"]),
    ("illegal.diff.txt", 1, ["diff", "fair-thirteen.log", "illegal.log"]),
]


def _check(expected: Path, code: int, args: list[str], cwd: Path,
           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == code, result.stderr
    if UPDATE:
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_text(result.stdout)
        return
    assert expected.exists(), f"no {expected.name}: run UPDATE_GOLDEN=1 pytest {__file__}"
    assert result.stdout == expected.read_text(), (
        f"{expected.name} differs; if the change is intended run "
        "UPDATE_GOLDEN=1 pytest tests/cli/test_golden.py")


@pytest.mark.parametrize(("name", "code", "args"), CASES, ids=[c[0] for c in CASES])
def test_golden_output(name: str, code: int, args: list[str],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    _check(GOLDEN / name, code, args, GOLDEN, monkeypatch)


def _example_logs() -> list[str]:
    if not EXAMPLES.is_dir():
        return []
    from buraco_log.audit import find_logs

    return [os.path.relpath(p, EXAMPLES) for p in find_logs([EXAMPLES])]


@pytest.mark.parametrize("command", ["show", "replay", "audit"])
@pytest.mark.parametrize("log", _example_logs())
def test_golden_output_on_the_examples(log: str, command: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    expected = GOLDEN / "examples" / f"{log.replace(os.sep, '__')}.{command}.txt"
    if not expected.exists() and not UPDATE:
        pytest.skip(f"no expected output yet: UPDATE_GOLDEN=1 pytest {__file__}")
    monkeypatch.chdir(EXAMPLES)
    result = CliRunner().invoke(app, [command, log])
    if UPDATE:
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_text(result.stdout)
        return
    assert result.stdout == expected.read_text(), (
        f"{expected.name} differs; if intended run UPDATE_GOLDEN=1 pytest tests/cli/test_golden.py")
