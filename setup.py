"""Build script: compiles the rules engine's hot modules with mypyc when it can.

The modules stay plain, type-checked Python and run as such; compiling them with mypyc (a
build-time tool, never a runtime dependency) makes validating replay about twice as fast
(README, "Performance"). The build falls back to plain Python when mypyc or a C compiler is
missing, and ``BURACO_LOG_PURE=1`` skips compiling on purpose (development: an edited module
is used at once, with no stale compiled copy in front of it).
"""

from __future__ import annotations

import os
import shutil
import sys

from setuptools import setup
from setuptools.command.build import build

# The replay hot path. Everything else is plain Python either way.
COMPILED = ["buraco_log/melds.py", "buraco_log/scoring.py", "buraco_log/reducer.py"]


def ext_modules() -> list[object]:
    if os.environ.get("BURACO_LOG_PURE", "0") not in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("buraco_log: mypyc is not available; installing plain Python", file=sys.stderr)
        return []
    try:
        modules = mypycify(COMPILED, opt_level="3")
    except (Exception, SystemExit) as exc:  # a type error under another mypy must not block
        print(f"buraco_log: mypyc failed ({exc}); installing plain Python", file=sys.stderr)
        return []
    for ext in modules:
        ext.optional = True  # no C compiler: the plain modules are used
    return list(modules)


class FreshBuild(build):  # type: ignore[misc]  # setuptools has no type stubs here
    """Empty the build's library folders before building. setuptools ships whatever they hold,
    so after an earlier ``pip install .`` in this tree a module since deleted, or the compiled
    copy of a module no longer compiled (imported before its .py), went into the new wheel."""

    def run(self) -> None:
        base = os.path.abspath(self.build_base)
        for folder in {self.build_purelib, self.build_platlib}:
            path = os.path.abspath(folder)
            if os.path.commonpath([base, path]) == base and path != base:  # never outside it
                shutil.rmtree(path, ignore_errors=True)
        super().run()


setup(ext_modules=ext_modules(), cmdclass={"build": FreshBuild})
