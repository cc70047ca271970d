"""The command line as another program's dependency: what a script, a cron job or a web
backend meets when it runs buraco-log with odd settings around it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from cli.main import app
from tests.command_line import EXE, run


@pytest.mark.parametrize("columns", ["0", "00"])
def test_help_under_a_columns_that_is_no_width_is_the_whole_help(columns: str) -> None:
    # a terminal that reports no size (COLUMNS=0): rich drew the help 0 columns wide, one
    # empty line and exit 0
    result = CliRunner().invoke(app, ["show", "--help"], env={"COLUMNS": columns})
    assert result.exit_code == 0
    assert "Usage:" in result.output and "--format" in result.output, result.output


@pytest.mark.slow
@pytest.mark.skipif(EXE is None, reason="needs the installed buraco-log")
@pytest.mark.parametrize("width", ["abc", "0", "-3"])
def test_help_under_a_terminal_width_that_is_no_width_is_the_whole_help(width: str) -> None:
    # typer reads TERMINAL_WIDTH as it loads: 'abc' was a traceback, '0' an empty help
    result = run("show", "--help", env={"TERMINAL_WIDTH": width})
    assert result.code == 0 and "Traceback" not in result.err, result.err
    assert "Usage:" in result.out and "--format" in result.out, result.out
