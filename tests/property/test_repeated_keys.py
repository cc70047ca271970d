"""The quick count that lets most JSON lines skip the exact repeated-key check never lets a
line with a repeated key through (``jsonl.may_repeat_a_key`` is only a shortcut)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from buraco_log import jsonl

_KEYS = st.sampled_from(["t", "seat", "card", "a\":", "\":", "x y", "é"])
_SCALARS = st.one_of(st.integers(-5, 5), st.booleans(), st.none(),
                     st.sampled_from(["", "\":", "a\": 1", "\\", "7h", "\"", ":"]))


def _pairs_text(draw: Any, depth: int) -> str:
    """A JSON object as text whose keys may repeat (json.dumps cannot write one)."""
    keys = draw(st.lists(_KEYS, max_size=5))
    parts = []
    for key in keys:
        value = _value_text(draw, depth + 1)
        space = draw(st.sampled_from(["", " ", "\t", "\n "]))
        parts.append(f"{json.dumps(key)}{space}:{space}{value}")
    return "{" + ", ".join(parts) + "}"


def _value_text(draw: Any, depth: int) -> str:
    kind = draw(st.integers(0, 2 if depth < 3 else 0))
    if kind == 1:
        return _pairs_text(draw, depth)
    if kind == 2:
        return "[" + ", ".join(_value_text(draw, depth + 1)
                               for _ in range(draw(st.integers(0, 3)))) + "]"
    return json.dumps(draw(_SCALARS))


@st.composite
def _lines(draw: Any) -> str:
    return _pairs_text(draw, 0)


@given(_lines())
def test_a_line_the_quick_count_passes_has_no_repeated_key(line: str) -> None:
    text = line.encode()
    obj = msgspec.json.decode(text)
    if not jsonl.may_repeat_a_key(text, obj):
        assert jsonl._duplicate_key(text) is None
