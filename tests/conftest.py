"""Keeps the tests that share an expensive session fixture on one worker of ``pytest -n``."""

from __future__ import annotations

import pytest

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
