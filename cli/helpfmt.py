"""How help names arguments and option values: `PATH...`, `FILE`, no `<bool>` beside a flag.

typer's rich help (0.2x) shows every option's Python type (`<bool>` beside a flag that takes no
value, `<list[Path]>`) and wraps required arguments in braces in the usage line (`{paths}...`).
People read `-o, --output FILE` and `PATHS...` in the help of the tools they know, so this module
adjusts the two display hooks once, at import. Parsing is untouched. On a typer without those
hooks nothing is changed (the help is only less tidy).

It also shows help texts as the plain text they are: typer's rich mode reads `[word]` as
markup, so "the [spark] extra" or "[audit] keys in the config file" lost the bracketed word
in `--help` while docs/cli.md (made from the same texts) kept it.
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
            name = plain_name(self)
            # a metavar that already says it is optional (`[ARCHIVE]`) is not bracketed twice
            return name if self.required or name.startswith("[") else f"[{name}]"

        def argument_type(self: Any, ctx: Any) -> str | None:
            return None  # the name column already says what it is

        argument._usage_display_name = usage_name
        if hasattr(argument, "_rich_display_name"):
            argument._rich_display_name = plain_name
        if isinstance(getattr(argument, "display_name_raw", None), property):
            # the arguments panel of typer 0.29 reads this one (it showed `paths...` where
            # the usage line and docs/cli.md say `PATHS...`); errors name `'PATH'` too
            argument.display_name_raw = property(
                lambda self: str(self.metavar or self.name or "ARG").upper())
        if hasattr(argument, "display_type_rich"):
            argument.display_type_rich = argument_type
    _plain_help_texts()


def _plain_help_texts() -> None:
    """Help texts are plain text: no rich markup read in them (`[spark]` stays)."""
    try:
        from typer import rich_utils
    except ImportError:  # pragma: no cover - rich is not installed: click's plain help
        return
    original = getattr(rich_utils, "_make_rich_text", None)
    text_class = getattr(rich_utils, "Text", None)
    highlighter = getattr(rich_utils, "highlighter", None)
    if original is None or text_class is None or highlighter is None:
        return

    def make_text(*, text: str, style: str = "", markup_mode: Any) -> Any:
        if markup_mode != "rich":
            return original(text=text, style=style, markup_mode=markup_mode)
        import inspect

        return highlighter(text_class(inspect.cleandoc(text), style=style))

    rich_utils._make_rich_text = make_text
