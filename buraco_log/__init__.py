"""buraco_log: replay, audit and query Buraco match logs.

The core (cards, rules, events, melds, state, reducer, scoring, log) imports only the standard
library and msgspec; the archive and the command line live at the edge.
"""

from __future__ import annotations

__version__ = "0.2.0"
__all__ = ["FORMAT_VERSION", "__version__"]

# mypy reads any name TYPE_CHECKING as true; `typing` itself would be most of the import's time
TYPE_CHECKING = False
if TYPE_CHECKING:
    # what a type checker sees; a module __getattr__ made every name of the package Any to it,
    # so a misspelt `from buraco_log import ...` passed `mypy --strict`
    from buraco_log.events import FORMAT_VERSION
else:

    def __getattr__(name: str) -> object:
        # `import buraco_log` loads nothing: the event vocabulary (and msgspec) only when asked
        if name == "FORMAT_VERSION":
            from buraco_log.events import FORMAT_VERSION

            return FORMAT_VERSION
        raise AttributeError(f"module 'buraco_log' has no attribute {name!r}")

    def __dir__() -> list[str]:
        # what a REPL or an editor completes: the lazy names too
        return sorted({*globals(), *__all__})
