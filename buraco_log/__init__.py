"""buraco_log: replay, audit and query Buraco match logs.

The core (cards, rules, events, melds, state, reducer, scoring, log) imports only the standard
library and msgspec; the archive and the command line live at the edge.
"""

from __future__ import annotations

__version__ = "0.2.0"
__all__ = ["FORMAT_VERSION", "__version__"]

FORMAT_VERSION = 2
"""Version of the event vocabulary written by this buraco_log (see CHANGELOG.md), which
:mod:`buraco_log.events` writes in every match's first record. Here, not there, so that
`import buraco_log` and `buraco-log --version` load nothing for it (events loads msgspec).

2: ``MatchStarted.key_id``, and signature records in the binary log (schema/LOG_FORMAT.md)."""
