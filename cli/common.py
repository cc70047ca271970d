"""Shared CLI plumbing: the --debug switch, one-line errors, output formats."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import Any, Final, ParamSpec, TypeVar

import msgspec
import typer

from buraco_log.errors import BuracoLogError

P = ParamSpec("P")
R = TypeVar("R")

EXIT_OK = 0
EXIT_FINDINGS = 1  # an error in the data, or an audit with findings
EXIT_USAGE = 2  # bad arguments (typer/click's own code too)


CONTEXT: Final = {"help_option_names": ["-h", "--help"]}
"""Every typer app and group: `-h` is `--help`, as in most tools."""


class Format(StrEnum):
    table = "table"
    json = "json"


class State:
    debug = False


def fail(message: str, code: int = EXIT_FINDINGS) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise."""
    typer.echo(f"buraco-log: error: {message}", err=True)
    return typer.Exit(code)


def guarded(func: Callable[P, R]) -> Callable[P, R]:
    """Turn library errors into one line on stderr (traceback only with --debug)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, as other tools do.
            sys.stderr.close()
            raise typer.Exit(141) from None
        except BuracoLogError as exc:
            if State.debug:
                raise
            raise fail(str(exc), getattr(exc, "exit_status", EXIT_FINDINGS)) from None
        except OSError as exc:
            if State.debug:
                raise
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}") from None
        except KeyboardInterrupt:
            raise fail("interrupted", 130) from None

    return wrapper


def emit_json(data: Any) -> None:
    """Stable JSON on stdout: sorted keys, two-space indent."""
    sys.stdout.write(json.dumps(msgspec.to_builtins(data), indent=2, sort_keys=True))
    sys.stdout.write("\n")
