"""Text from a log, made safe to print on a terminal or show in a page.

Player names, match ids and notes come from the log: anyone who wrote it chose them. Printed
as they are, a control character in them (ESC sequences, a carriage return, a newline) could
rewrite the terminal's title, clear the screen or forge a line of the output, and a bidi
override could reorder what the reader sees. Each such character is shown as an escape
(``\\x1b``, ``\\u202e``) instead; every other character, accents, suits and emoji, is kept."""

from __future__ import annotations

import re
from typing import Final

UNSAFE: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0 and C1 controls, DEL (a newline too: it would forge a line)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidi marks, embeddings and overrides
    "\u2028\u2029]"  # line and paragraph separators
)


def _escape(m: re.Match[str]) -> str:
    code = ord(m[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every control, bidi and line-separator character escaped."""
    return UNSAFE.sub(_escape, text)


def terminal_safe_lines(text: str) -> str:
    """:func:`terminal_safe` for each line of ``text``, keeping its line breaks."""
    return "\n".join(terminal_safe(line) for line in text.split("\n"))
