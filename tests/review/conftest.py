"""The review page's browser test shares the viewer tests' headless Chromium fixture."""

from tests.view.conftest import browser  # noqa: F401
