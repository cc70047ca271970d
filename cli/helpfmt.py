"""How help names arguments and option values: `PATH...`, `FILE`, no `<bool>` beside a flag.

typer's rich help (0.2x) shows every option's Python type (`<bool>` beside a flag that takes no
value, `<list[Path]>`) and wraps required arguments in braces in the usage line (`{paths}...`).
People read `-o, --output FILE` and `PATHS...` in the help of the tools they know, so this module
adjusts the two display hooks once, at import. Parsing is untouched. On a typer without those
hooks nothing is changed (the help is only less tidy).
"""

from __future__ import annotations

from typing import Any

_WORDS = {"path": "PATH", "int": "N", "float": "X", "str": "TEXT", "int range": "N"}


def _value_name(label: str) -> str:
    """`<path>` -> `PATH`, `<list[Path]>` -> `PATH...`, `<table|json>` stays a choice."""
    inner = label.strip("<>")
    if "|" in inner:
        return inner.removeprefix("list[").removesuffix("]")
    if inner.startswith("list["):
        return _value_name(inner[5:-1]) + "..."
    return _WORDS.get(inner.lower(), inner.upper())


def install() -> None:
    try:
        from typer import core
    except ImportError:  # pragma: no cover - typer is a dependency
        return
    option = getattr(core, "TyperOption", None)
    argument = getattr(core, "TyperArgument", None)
    if option is not None and hasattr(option, "display_type_rich"):
        original_option = option.display_type_rich

        def option_type(self: Any, ctx: Any) -> str | None:
            if getattr(self, "is_flag", False) or getattr(self, "count", False):
                return None  # a flag takes no value
            if getattr(self, "metavar", None):
                return str(self.metavar)
            shown = original_option(self, ctx)
            return None if shown is None else _value_name(str(shown).removesuffix("..."))

        option.display_type_rich = option_type
    if argument is not None and hasattr(argument, "_usage_display_name"):

        def plain_name(self: Any) -> str:
            name = str(self.metavar or self.name or "ARG").upper()
            return name + ("..." if self.nargs != 1 else "")

        def usage_name(self: Any) -> str:
            return plain_name(self) if self.required else f"[{plain_name(self)}]"

        def argument_type(self: Any, ctx: Any) -> str | None:
            return None  # the name column already says what it is

        argument._usage_display_name = usage_name
        if hasattr(argument, "_rich_display_name"):
            argument._rich_display_name = plain_name
        if hasattr(argument, "display_type_rich"):
            argument.display_type_rich = argument_type
