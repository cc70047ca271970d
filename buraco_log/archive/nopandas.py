"""pyarrow told, once, that a process has no pandas: what the command line's archive commands do.

pyarrow asks whether pandas is installed the first time ``pa.array`` or ``pa.scalar`` is given
anything but a numpy array (is it a pandas Series?), and to ask, it imports pandas, where the
``[spark]`` extra installed it: 0.25-0.3 s of CPU, more than the rest of a nightly ingest of a
few logs, paid by every `ingest`, `compact` and `report` process. pyarrow (26) has no switch
for it. Its shim asks once and keeps the answer, so this asks first, with pandas hidden for
the moment of the question: ``pa.array`` then never imports pandas in this process.

Only for a process whose own code makes no pandas object (the command line's; not a library
caller's, nor a Spark driver's): pyarrow would take a pandas Series given it later for a plain
sequence. Its conversions to pandas (``to_pandas``) still import pandas when called.
"""

from __future__ import annotations

import sys


class _NoPandas:
    """A finder that says pandas is not installed (a ``None`` in ``sys.modules`` would not do:
    pyarrow's compiled import takes the ``None`` for the module)."""

    @staticmethod
    def find_spec(name: str, *_: object) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("hidden from pyarrow's question", name=name)


def hide_pandas() -> bool:
    """Answer pyarrow's question "is pandas installed?" with no, before anything asks it.
    False where pandas is imported already (nothing to save, and the answer would be wrong)."""
    if "pandas" in sys.modules:
        return False
    import pyarrow as pa  # type: ignore[import-untyped]

    hider = _NoPandas()
    sys.meta_path.insert(0, hider)
    try:
        pa.array([0])  # the question: is [0] a pandas object? pyarrow imports pandas to see
    finally:
        sys.meta_path.remove(hider)  # `import pandas` works again
    return True
