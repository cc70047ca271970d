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
    assert result.exit_code == 2
    assert "unknown preset 'poker'" in result.output


def test_demo_keeps_its_log_under_a_name_it_prints_and_never_replaces_a_file(
    tmp_path: Path,
) -> None:
    import subprocess

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["buraco-log", "demo", "--rules", "classic", "--players", "2"],
                              cwd=tmp_path, capture_output=True, text=True, check=False)

    first, second = run(), run()
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.startswith("Simulated a 2-player classic match")
    assert "The log is kept at demo-classic-2p.blog" in first.stdout
    assert "The log is kept at demo-classic-2p-2.blog" in second.stdout
    assert "buraco-log replay demo-classic-2p.blog --at 40" in first.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo-classic-2p-2.blog",
                                                          "demo-classic-2p.blog"]


def test_demo_json_names_the_log_and_the_next_commands(tmp_path: Path) -> None:
    import json
    import subprocess

    out = subprocess.run(["buraco-log", "demo", "--rules", "burako", "--players", "2",
                          "-f", "json"], cwd=tmp_path, capture_output=True, text=True,
                         check=False)
    data = json.loads(out.stdout)
    assert out.returncode == 0 and data["log"] == "demo-burako-2p.blog"
    assert data["audit"]["ok"] is True and data["events"] > 0
    assert (tmp_path / data["log"]).exists()
    assert data["next"][0] == "buraco-log show demo-burako-2p.blog"


def test_usage_errors_are_one_line_on_stderr_with_exit_2() -> None:
    import subprocess

    out = subprocess.run(["buraco-log", "audit", "--format", "xml", "x.blog"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("buraco-log: usage:")
    assert "Traceback" not in out.stderr
