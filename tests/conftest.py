"""Keeps the tests that share an expensive session fixture on one worker of ``pytest -n`` (and
those of a module that share a module fixture), writes the project's bytecode once for the
processes the tests start, and holds the fixtures several test areas share (a read-only file
system)."""

from __future__ import annotations

import compileall
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """Under PYTHONDONTWRITEBYTECODE (set where CI is started), nothing ever writes the
    bytecode of a fresh clone's own modules, so every CLI process the tests start compiled
    buraco_log and cli from source: 0.45 s of CPU a start instead of 0.27. The controller
    writes it once (1 s; nothing when it is fresh), as an import without that setting would."""
    if sys.flags.dont_write_bytecode and not hasattr(config, "workerinput"):
        for package in ("buraco_log", "cli"):
            compileall.compile_dir(ROOT / package, quiet=2)


# Test directory -> the xdist group its tests run in (one Spark session, one browser).
_GROUPS = {"tests/spark/": "spark", "tests/view/test_browser.py": "browser"}


# First: xdist's own hook reads the xdist_group marks to name each test's group (its node
# id's @suffix), and a mark added after it is ignored (both workers started Spark).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for prefix, group in _GROUPS.items():
            if item.nodeid.startswith(prefix):
                item.add_marker(pytest.mark.xdist_group(group))
        if item.get_closest_marker("xdist_group") is None and _uses_a_module_fixture(item):
            # A module fixture is built once per worker that runs its tests: spread over both
            # workers, each built the module's archive, logs or simulation again.
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        defs[-1].scope == "module" for defs in info.name2fixturedefs.values() if defs)



@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """On a worker of ``--dist loadgroup``, a grouped test's node id must carry its group (how
    xdist sends it to the group's worker): a pytest that xdist cannot group stops the run."""
    if not session.config.getoption("loadgroup", False):
        return
    for item in session.items:
        mark = item.get_closest_marker("xdist_group")
        if mark is not None and not item.nodeid.endswith(f"@{mark.args[0]}"):
            raise pytest.UsageError(
                f"--dist loadgroup does not group {item.nodeid} with this pytest and "
                "pytest-xdist (see the pin of pytest in pyproject.toml)")


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A read-only tmpfs (even root cannot write there); skipped where mounting is refused."""
    where = tmp_path / "ro"
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "none", str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("needs root and mount (a read-only tmpfs)")
    yield where
    subprocess.run(["umount", str(where)], capture_output=True)
