"""`buraco-log simulate`: files, summary, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app


def test_simulate_writes_sealed_logs_and_a_json_summary(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "simulate",
            "--rules",
            "burako",
            "--players",
            "4",
            "--matches",
            "3",
            "--seed",
            "9",
            "--out",
            str(tmp_path),
            "--bot",
            "heuristic",
            "--bot",
            "random",
            "--no-progress",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["matches"] == 3 and report["bots"] == ["heuristic", "random"] * 2
    assert sum(report["wins_by_side"].values()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"burako-4p-00000{i}.blog" for i in range(3)
    ]


def test_simulate_table_output(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["simulate", "--out", str(tmp_path), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "1 match of classic, 2 players" in result.stdout


def test_an_unknown_bot_is_a_usage_error_with_nothing_on_stdout(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["simulate", "--out", str(tmp_path), "--bot", "alphago"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "unknown bot 'alphago'" in result.stderr


def test_a_player_count_the_preset_does_not_allow_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["simulate", "--rules", "mega", "--players", "3", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2  # a bad option value: a usage error
    assert result.stdout == ""
    assert "--players 3: mega is played by 2/4" in result.stderr


def test_the_files_are_the_same_bytes_with_one_or_two_jobs(tmp_path: Path) -> None:
    for jobs in ("1", "2"):
        result = CliRunner().invoke(
            app,
            [
                "simulate",
                "--rules",
                "thirteen-quick",
                "--matches",
                "4",
                "--seed",
                "j",
                "--out",
                str(tmp_path / jobs),
                "--jobs",
                jobs,
                "--no-progress",
            ],
        )
        assert result.exit_code == 0, result.output
    one = sorted((tmp_path / "1").iterdir())
    assert len(one) == 4
    for path in one:
        assert path.read_bytes() == (tmp_path / "2" / path.name).read_bytes()
