"""buraco_log: replay, audit and query Buraco match logs.

The core (cards, rules, events, melds, state, reducer, scoring, log) imports only the standard
library and msgspec; the archive and the command line live at the edge.
"""

from buraco_log.events import FORMAT_VERSION

__version__ = "0.2.0"
__all__ = ["FORMAT_VERSION", "__version__"]
