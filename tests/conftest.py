"""Keeps the tests that share an expensive session fixture on one worker of ``pytest -n``."""

from __future__ import annotations

import pytest

# Test directory -> the xdist group its tests run in (one Spark session, one browser).
_GROUPS = {"tests/spark/": "spark", "tests/view/test_browser.py": "browser"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for prefix, group in _GROUPS.items():
            if item.nodeid.startswith(prefix):
                item.add_marker(pytest.mark.xdist_group(group))
