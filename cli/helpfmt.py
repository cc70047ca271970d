"""How help names arguments and option values: `PATH...`, `FILE`, no `<bool>` beside a flag.

typer's rich help (0.2x) shows every option's Python type (`<bool>` beside a flag that takes no
value, `<list[Path]>`) and wraps required arguments in braces in the usage line (`{paths}...`).
People read `-o, --output FILE` and `PATHS...` in the help of the tools they know, so this module
adjusts the two display hooks once, at import. Parsing is untouched. On a typer without those
hooks nothing is changed (the help is only less tidy).

It keeps every word of the help whole at any terminal width: rich cut a word longer than its
column to `…` (at 80 columns `audit --help` showed `--require-commit…` and the environment
variable `(BURACO_LOG_REQU…`), so a long word is folded onto the next line instead, and an
option's `--no-` form goes under it, in the same column, rather than in a column of its own.

It also shows help texts as the plain text they are: typer's rich mode reads `[word]` as
markup, so "the [spark] extra" or "[audit] keys in the config file" lost the bracketed word
in `--help` while docs/cli.md (made from the same texts) kept it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Iterator
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


def _no_widths_that_are_none() -> None:
    """Forget ``COLUMNS`` or ``TERMINAL_WIDTH`` set to no width (``0``, ``-3``, ``abc``): rich
    took ``COLUMNS=0`` (a terminal that reports no size, as some containers' and serial
    consoles' do) and ``TERMINAL_WIDTH=0`` as a width of 0 and printed every `--help` as one
    empty line, exit 0, and typer read ``TERMINAL_WIDTH=abc`` with int() as it loaded, a
    traceback. Without them the width is the terminal's, or 80, as for everyone else."""
    for name in ("COLUMNS", "TERMINAL_WIDTH"):
        value = os.environ.get(name)
        if value is None:
            continue
        try:
            width = int(value)
        except ValueError:
            width = 0
        if width <= 0:
            del os.environ[name]


def install() -> None:
    _no_widths_that_are_none()
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
    for name in ("TyperCommand", "TyperGroup"):
        cls = getattr(core, name, None)
        if cls is not None and hasattr(cls, "format_help"):
            cls.format_help = _narrow_plain(cls.format_help)
    _when_rich_utils_loads(_rich_patches)


NARROW = 60
"""Below this many columns help is plain text, not rich's tables: at 20 columns their cells
were 3 or 4 characters wide, and folded option names and words into pieces (``--f`` over
``orm``, ``stan`` over ``dard``)."""


def _narrow_plain(original: Callable[..., None]) -> Callable[..., None]:
    def format_help(self: Any, ctx: Any, formatter: Any) -> None:
        _no_widths_that_are_none()  # read again by rich for each help
        columns = shutil.get_terminal_size().columns  # COLUMNS first, as rich reads it
        if columns >= NARROW:
            return original(self, ctx, formatter)
        formatter.write(plain_help(self, ctx, max(columns - 1, 10)))
        return None

    return format_help


def plain_help(command: Any, ctx: Any, width: int) -> str:
    """``command``'s help as plain text in ``width`` columns: each argument and option on a
    line of its own, its help indented under it; a word is folded only where it is longer
    than a whole line."""
    import inspect
    import textwrap

    def fill(text: str, indent: str = "", hang: str = "  ") -> str:
        return textwrap.fill(" ".join(text.split()), width=width, initial_indent=indent,
                             subsequent_indent=indent or hang, break_long_words=True,
                             break_on_hyphens=False)

    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    lines = [fill(f"Usage: {usage}")]
    for paragraph in inspect.cleandoc(command.help or "").split("\n\n"):
        if paragraph.strip():
            lines += ["", fill(paragraph, hang="")]
    params = [p for p in command.get_params(ctx) if p.get_help_record(ctx) is not None]
    for title, kind in (("Arguments", "argument"), ("Options", "option")):
        records = [p.get_help_record(ctx) for p in params if p.param_type_name == kind]
        if records:
            lines += ["", f"{title}:"]
            for names, text in records:
                lines.append(fill(names))
                if text:
                    lines.append(fill(text, "    "))
    if hasattr(command, "list_commands"):
        shown = [(n, command.get_command(ctx, n)) for n in command.list_commands(ctx)]
        shown = [(n, c) for n, c in shown if c is not None and not c.hidden]
        if shown:
            lines += ["", "Commands:"]
            for name, sub in shown:
                lines += [fill(name), fill(sub.get_short_help_str(limit=200), "    ")]
    return "\n".join(lines) + "\n"


def _rich_patches() -> None:
    _plain_help_texts()
    _whole_words()


def _when_rich_utils_loads(patch: Callable[[], None]) -> None:
    """Run ``patch`` once typer loads its rich help module, which it does only to print help
    or a usage error: importing it at start (rich's markdown, pygments, tracebacks) was about
    a fifth of the CPU of every command that printed neither."""
    if _RICH_UTILS in sys.modules:
        patch()
        return
    sys.meta_path.insert(0, _AfterImport(_RICH_UTILS, patch))


_RICH_UTILS = "typer.rich_utils"


class _AfterImport:
    """A finder that finds nothing itself: it lets the others find ``name`` and runs
    ``patch`` right after the module is executed, then steps aside. (The import system asks
    only for these methods; importlib.abc, with importlib.resources and tempfile, cost a
    command's start some 3 ms.)"""

    def __init__(self, name: str, patch: Callable[[], None]) -> None:
        self.name, self.patch = name, patch

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader, patch = spec.loader, self.patch

        class Patched:
            def create_module(self, spec: Any) -> Any:
                return loader.create_module(spec)

            def exec_module(self, module: Any) -> None:
                with _rich_classes_later():
                    loader.exec_module(module)
                patch()

        spec.loader = Patched()  # type: ignore[assignment]  # a loader by its methods
        return spec


# The rich classes typer's help module imports and this help never makes: Markdown (typer's
# markdown markup mode; this app's is "rich") and Traceback (its pretty exceptions, turned off).
# Their modules load markdown-it and pygments: some 70 ms of CPU of every `--help`, 0.3 of it.
_LATER = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


class _Later(type):
    """A rich class, loaded from its module when first made or asked for anything."""

    def _real(cls) -> Any:
        return getattr(importlib.import_module(cls.__module__), cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real(), name)


@contextlib.contextmanager
def _rich_classes_later() -> Iterator[None]:
    """While typer's help module loads: its rich modules in :data:`_LATER` stand-ins whose
    class loads the real module when used, gone again once it is loaded (a later import of
    the module loads the real one)."""
    import types

    stand_ins = {}
    for module, name in _LATER.items():
        if module not in sys.modules:
            stand_in = types.ModuleType(module)
            setattr(stand_in, name, _Later(name, (), {"__module__": module}))
            stand_ins[module] = sys.modules[module] = stand_in
    try:
        yield
    finally:
        for module, stand_in in stand_ins.items():
            if sys.modules.get(module) is stand_in:
                del sys.modules[module]


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

        # folded, not cut: a word wider than its column (an environment variable's name)
        return highlighter(text_class(inspect.cleandoc(text), style=style, overflow="fold"))

    rich_utils._make_rich_text = make_text


# The cells of a row of typer's options table: [required,] long names, short names, the
# negative long names (`--no-...`), the negative short names, the value, the help.
_OPTION_ROW = 6


def _under(cell: Any, below: Any) -> Any:
    """``cell`` with ``below`` on a line of its own under it (a Text, or as it was)."""
    if not str(below) or not hasattr(cell, "append_text"):
        return cell
    joined = cell.copy()
    if str(cell):
        joined.append("\n")
    joined.append_text(below)
    return joined


def _negatives_under_names(cells: tuple[Any, ...]) -> tuple[Any, ...]:
    """An options row with its `--no-` names under the option's own: their two columns of
    their own took a third of the width at 80 columns, and cut both names to `…`."""
    first = len(cells) - _OPTION_ROW
    if first not in (0, 1):
        return cells
    names = _under(cells[first], cells[first + 2])
    shorts = _under(cells[first + 1], cells[first + 3])
    return (*cells[:first], names, shorts, *cells[first + 4:])


def _whole_words() -> None:
    """Every cell of help's tables folds a word too long for it instead of cutting it."""
    try:
        from typer import rich_utils
    except ImportError:  # pragma: no cover - rich is not installed: click's plain help
        return
    table = getattr(rich_utils, "Table", None)
    if table is None or getattr(table, "_folds", False):
        return

    class FoldingTable(table):  # type: ignore[misc, valid-type]
        _folds = True

        def add_row(self, *cells: Any, **options: Any) -> None:
            cells = _negatives_under_names(cells)
            for cell in cells:  # the help cell's parts: text, [env var], [default], [required]
                for part in getattr(cell, "renderables", ()):
                    if getattr(part, "overflow", "") is None:
                        part.overflow = "fold"
            super().add_row(*cells, **options)
            for column in self.columns:
                column.overflow = "fold"

    setattr(rich_utils, "Table", FoldingTable)  # noqa: B010 - the name typer's tables use
