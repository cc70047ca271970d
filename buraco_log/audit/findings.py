"""What every section of an audit reports: a :class:`Finding`, and events as readable objects."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from buraco_log.events import (
    AnyEvent,
)


def to_dict(event: AnyEvent) -> dict[str, Any]:
    """An event as a readable object with cards as text (the JSON Lines form)."""
    # Imported here: building the JSON Lines line decoder is slow, and a binary audit
    # (in every worker process) never needs it.
    from buraco_log.jsonl import event_to_json

    return event_to_json(event)


NO_SNAPSHOTS = 1 << 30
"""Snapshot spacing for one-pass replays that never jump."""


class Finding(msgspec.Struct, frozen=True):
    """One problem: its section, stable rule id (see ``ruleids``), where, and one line."""

    section: Literal["integrity", "provenance", "legality", "scoring", "signing", "continuation"]
    rule: str
    message: str
    seq: int | None = None
    offset: int | None = None  # byte offset in the file (integrity findings)


SECTIONS = ("integrity", "provenance", "legality", "signing", "scoring", "continuation")
"""The order of a verdict's findings, the order ``audit`` prints its sections in: the JSON
listed scoring before signing, and a published head's finding last, where the text has them
the other way round and under integrity, so the two named another finding first."""


def ordered(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """``findings`` by section (:data:`SECTIONS`), in their order within a section."""
    return tuple(sorted(findings, key=lambda f: SECTIONS.index(f.section)))
