"""The paths a user names on the command line."""

from __future__ import annotations

from pathlib import Path

import typer


def named_path(value: str) -> Path:
    """A path argument as given, refusing an empty one: an unset variable (`audit "$LOGS"`)
    was Path(""), that is ".", so `audit ""` audited every log under the current directory
    and the other commands said ".: a directory"."""
    if value == "":
        raise typer.BadParameter("an empty name (an unset variable?)")
    return Path(value)
