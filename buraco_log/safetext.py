"""Text from a log, made safe to print on a terminal or show in a page.

Player names, match ids and notes come from the log: anyone who wrote it chose them. Printed
as they are, a control character in them (ESC sequences, a carriage return, a newline) could
rewrite the terminal's title, clear the screen or forge a line of the output, and a bidi
override could reorder what the reader sees. Each such character is shown as an escape
(``\\x1b``, ``\\u202e``) instead; every other character, accents, suits and emoji, is kept.
A byte of a file name that is not UTF-8 is shown ``\\xNN``, as the archive stores it."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

BEYOND_C0: Final = (
    "\x7f-\x9f"  # DEL and C1 controls
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, embeddings and overrides
    "\u2028\u2029"  # line and paragraph separators
)
"""The unsafe characters other than C0 controls (a character class's body): JSON escapes C0
in its strings itself, and its own newlines must stay."""
UNSAFE: Final = re.compile(
    "[\x00-\x1f" + BEYOND_C0 + "]"  # C0 too (a newline would forge a line)
)


def _escape(m: re.Match[str]) -> str:
    code = ord(m[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control, bidi and line-separator character escaped, and each byte
    that is not UTF-8 as :func:`bytes_escaped` shows it."""
    return UNSAFE.sub(_escape, bytes_escaped(text))


def bytes_escaped(text: str) -> str:
    """``text`` as UTF-8 can hold it. A file name that is not UTF-8 reaches Python with each
    undecodable byte as a lone surrogate (``\\udcfd``), which Arrow cannot encode and a
    terminal cannot show: each such byte is written ``\\xNN`` (any other lone surrogate
    ``\\udNNN``). The one escape of such a name: the archive's tables and refused: lines
    (``archive.schema.storable``) and every error line (:func:`terminal_safe`); an error
    line showed ``\\udcfd`` where the tables show ``\\xfd``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def lookalike(a: str, b: str) -> bool:
    """Whether two different texts may look the same to a reader: where they first part, a
    character is not printable ASCII. A name or match id from a log, changed to a lookalike
    (an accent composed or not, NFC and NFD; a zero-width character added; a Cyrillic "е" for
    a Latin "e"), read "José vs José" in a finding that said they differ: such a pair is shown
    with every character outside printable ASCII escaped (``ascii()``)."""
    if a == b:
        return False
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
              min(len(a), len(b)))
    return not all(" " <= c <= "~" for c in a[at:at + 1] + b[at:at + 1])


def apart(a: str, b: str) -> tuple[str, str]:
    """``a`` and ``b`` as a reader can tell them apart: as they are, or, when they may look
    the same (:func:`lookalike`), each character outside ASCII as an escape (``\\xe9``,
    ``\\u0435``), unquoted."""
    if not lookalike(a, b):
        return a, b
    return (a.encode("ascii", "backslashreplace").decode("ascii"),
            b.encode("ascii", "backslashreplace").decode("ascii"))


def quoted(a: str, b: str) -> tuple[str, str]:
    """Two different texts quoted as a message says them, so that a reader sees how they
    differ: ``repr``, or ``ascii`` when they may look the same (:func:`lookalike`: a receipt
    "for match 'café', not this log's 'café'" of a match id rewritten in NFD)."""
    if lookalike(a, b):
        return ascii(a), ascii(b)
    return repr(a), repr(b)


def terminal_safe_lines(text: str) -> str:
    """:func:`terminal_safe` for each line of ``text``, keeping its line breaks."""
    return "\n".join(terminal_safe(line) for line in text.split("\n"))


def columns(text: str) -> int:
    """The terminal columns ``text`` takes: a wide character (CJK, most emoji) two, a
    combining mark or a zero-width format character none."""
    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
               else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` columns (``f"{text:<{width}}"`` counts
    characters: a table of the names "Zoë" and "王芳" lost its alignment)."""
    return text + " " * max(0, width - columns(text))
