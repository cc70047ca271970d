"""Text from a log, made safe to print on a terminal: :mod:`buraco_log.safetext`, which the
replay page uses too; and padded to a width in terminal columns, not characters."""

import unicodedata

from buraco_log.safetext import UNSAFE, terminal_safe, terminal_safe_lines

__all__ = ["UNSAFE", "columns", "pad", "terminal_safe", "terminal_safe_lines"]


def columns(text: str) -> int:
    """The terminal columns ``text`` takes: a wide character (CJK, most emoji) two, a
    combining mark or a zero-width format character none."""
    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
               else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` columns (``f"{text:<{width}}"`` counts
    characters: a table of the names "Zoë" and "王芳" lost its alignment)."""
    return text + " " * max(0, width - columns(text))
