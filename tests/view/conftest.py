"""A headless Chromium for the browser tests: one per session, from Debian's chromium and
chromium-driver. Outside CI a missing browser skips the tests; in CI (CI=true) it fails them."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if not CHROMIUM or not DRIVER:
        return "chromium and chromium-driver are not installed (apt-get install chromium " \
               "chromium-driver)"
    return None


def make_driver(width: int = 1200, height: int = 1000) -> Any:
    """A headless Chromium under selenium, with the performance (network) log on."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--no-first-run", "--disable-extensions",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--metrics-recording-only", "--no-default-browser-check",
                "--hide-scrollbars", "--force-device-scale-factor=1"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER or ""), options=opts)
    driver.set_script_timeout(300)  # a timed sweep of a long match on a busy machine
    return driver


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    why = _missing()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests must run in CI: {why}")
        pytest.skip(why)
    driver = make_driver()
    try:
        yield driver
    finally:
        driver.quit()
