"""buraco_log: replay, audit and query Buraco match logs.

The core (cards, rules, events, melds, state, reducer, scoring, log) imports only the standard
library and msgspec; the archive and the command line live at the edge.
"""

from typing import Any

__version__ = "0.2.0"
__all__ = ["FORMAT_VERSION", "__version__"]


def __getattr__(name: str) -> Any:
    # `import buraco_log` loads nothing: the event vocabulary (and msgspec) only when asked for
    if name == "FORMAT_VERSION":
        from buraco_log.events import FORMAT_VERSION

        return FORMAT_VERSION
    raise AttributeError(f"module 'buraco_log' has no attribute {name!r}")
