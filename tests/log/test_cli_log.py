"""The log commands: exit codes, one-line errors on stderr, nothing on stdout on error."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from buraco_log import jsonl, log
from cli.main import app
from tests.log.samples import sample_events, write

runner = CliRunner()


def test_verify_reports_a_sealed_log(tmp_path: Path) -> None:
    path = write(tmp_path / "a.blog", sample_events(10))
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 0
    assert "10 events" in result.stdout and "sealed" in result.stdout
    result = runner.invoke(app, ["verify", str(path), "--format", "json"])
    assert json.loads(result.stdout)["head"] == log.verify(path).head


def test_verify_calls_an_unsealed_log_unsealed(tmp_path: Path) -> None:
    path = write(tmp_path / "a.blog", sample_events(10), sealed=False)
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 0 and "unsealed" in result.stdout


def test_damage_is_one_line_on_stderr_and_exit_1(tmp_path: Path) -> None:
    path = write(tmp_path / "a.blog", sample_events(10))
    data = bytearray(path.read_bytes())
    data[300] ^= 4
    path.write_bytes(bytes(data))
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "byte " in result.stderr
    assert "Traceback" not in result.stderr


def test_repair_cuts_a_torn_tail_and_says_what(tmp_path: Path) -> None:
    path = write(tmp_path / "a.blog", sample_events(10))
    path.write_bytes(path.read_bytes()[:-3])
    result = runner.invoke(app, ["verify", str(path)])
    assert result.exit_code == 1 and "torn tail" in result.stderr
    result = runner.invoke(app, ["repair", str(path), "--dry-run"])
    assert result.exit_code == 0 and "would cut" in result.stdout
    assert log.verify(path).torn is not None
    result = runner.invoke(app, ["repair", str(path)])
    assert result.exit_code == 0 and "9 events kept" in result.stdout and ".bak" in result.stdout
    assert runner.invoke(app, ["verify", str(path)]).exit_code == 0


def test_convert_and_seal(tmp_path: Path) -> None:
    path = write(tmp_path / "a.blog", sample_events(10), sealed=False)
    out = tmp_path / "a.jsonl"
    assert (
        runner.invoke(app, ["convert", str(path), "--to", "jsonl", "-o", str(out)]).exit_code == 0
    )
    back = tmp_path / "b.blog"
    assert (
        runner.invoke(app, ["convert", str(out), "--to", "binary", "-o", str(back)]).exit_code == 0
    )
    result = runner.invoke(app, ["seal", str(back)])
    assert result.exit_code == 0 and log.verify(back).sealed
    # Without --to, the new file's name says the form.
    named = tmp_path / "c.jsonl"
    assert runner.invoke(app, ["convert", str(back), "-o", str(named)]).exit_code == 0
    assert jsonl.read_jsonl(named) == jsonl.read_jsonl(out) == log.read_events(path)
    assert runner.invoke(app, ["convert", str(named), "-o", str(tmp_path / "c.blog")]
                         ).exit_code == 0
    assert log.read_events(tmp_path / "c.blog") == log.read_events(path)
    unnamed = runner.invoke(app, ["convert", str(path), "-o", str(tmp_path / "c.txt")])
    assert unnamed.exit_code == 2 and "--to" in unnamed.stderr and not (tmp_path / "c.txt").exists()
    result = runner.invoke(app, ["convert", str(path), "--to", "jsonl", "-o", str(out)])
    assert result.exit_code == 2 and result.stdout == "" and "overwrite" in result.stderr


def test_schema_check(tmp_path: Path) -> None:
    result = runner.invoke(app, ["schema", "--dir", str(tmp_path), "--check"])
    assert result.exit_code == 1 and "buraco-log schema" in result.stderr
    assert runner.invoke(app, ["schema", "--dir", str(tmp_path)]).exit_code == 0
    assert runner.invoke(app, ["schema", "--dir", str(tmp_path), "--check"]).exit_code == 0


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["verify", str(tmp_path / "nope.blog")])
    assert result.exit_code == 2 and result.stdout == "" and "nope.blog" in result.stderr
