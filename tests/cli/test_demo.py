"""`buraco-log demo`: the README's first command works on built-in defaults."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from cli.main import app


def test_demo_simulates_writes_replays_and_audits_a_match(tmp_path: Path) -> None:
    out = tmp_path / "demo.blog"
    result = CliRunner().invoke(app, ["demo", "--rules", "thirteen", "--players", "2",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert ": OK" in result.output and "legality" in result.output
    assert "winner    side" in result.output
    assert out.exists() and out.stat().st_size > 0


def test_demo_refuses_an_unknown_preset_with_one_line() -> None:
    result = CliRunner().invoke(app, ["demo", "--rules", "poker"])
    assert result.exit_code == 1
    assert "unknown preset 'poker'" in result.output


def test_usage_errors_are_one_line_on_stderr_with_exit_2() -> None:
    import subprocess

    out = subprocess.run(["buraco-log", "audit", "--format", "xml", "x.blog"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("buraco-log: usage:")
    assert "Traceback" not in out.stderr
