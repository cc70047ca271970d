"""The generated files of ``schema/``: the JSON Schema of every event, written and checked.

``buraco-log schema`` writes them; a test fails when the committed copies differ.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
from pathlib import Path
from typing import Any

from buraco_log import events as ev

COMMAND = "buraco-log schema"
"""The command that regenerates the files (named by the test that checks them)."""


def render() -> dict[str, str]:
    """File name -> text of every generated schema file."""
    events = _cleaned(ev.schema())
    events["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    events["title"] = f"buraco-log event (format version {ev.FORMAT_VERSION}, binary array form)"
    return {"events.schema.json": json.dumps(events, indent=2, sort_keys=True) + "\n"}


def _cleaned(node: Any) -> Any:
    """Descriptions dedented as msgspec 0.23 does (0.18 to 0.22 kept a docstring's indent), so
    the file is the same whichever msgspec pyproject.toml allows."""
    if isinstance(node, dict):
        return {k: inspect.cleandoc(v) if k == "description" and isinstance(v, str)
                else _cleaned(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_cleaned(v) for v in node]
    return node


def stale(directory: str | os.PathLike[str]) -> list[str]:
    """Names of the generated files that are missing from ``directory`` or differ."""
    out = []
    for name, text in render().items():
        path = Path(directory) / name
        # Bytes, not text: a file that is not even UTF-8 is simply out of date.
        if not path.exists() or path.read_bytes() != text.encode("utf-8"):
            out.append(name)
    return out


def write(directory: str | os.PathLike[str]) -> list[str]:
    """Write the generated files into ``directory``; returns the names that changed."""
    changed = stale(directory)
    Path(directory).mkdir(parents=True, exist_ok=True)
    for name, text in render().items():
        if name in changed:
            _write_whole(Path(directory) / name, text)
    return changed


def _write_whole(path: Path, text: str) -> None:
    """``text`` into ``path`` whole or not at all: written beside it and renamed into place.
    Written in place, a full disk left part of the schema (and the old file lost), and the
    error named no file ("File too large"); it names ``path`` now."""
    temp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
    try:
        with open(temp, "x", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise OSError(exc.errno, exc.strerror, str(path)) from None
