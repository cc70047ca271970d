"""Fixtures for the match-log tests."""

from __future__ import annotations

import pytest

from buraco_log import events as ev
from tests.log.samples import sample_events


@pytest.fixture
def events20() -> list[ev.AnyEvent]:
    return sample_events(20)
